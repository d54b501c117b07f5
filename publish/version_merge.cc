// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/version_merge.h"

#include <cstring>

namespace urlguard {
namespace {

int CompareClear(const ClearRecord& a, const ClearRecord& b) {
  if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
  return std::memcmp(a.text, b.text, sizeof(a.text));
}

}  // namespace

Result<bool> VersionMerge::AdvanceOld() {
  have_old_ = false;
  if (old_ == nullptr) return false;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, old_->Next(&old_rec_));
    if (!has) return false;
    if (old_rec_.threat >= old_to_union_.size()) return Status::Corruption("state record with a bad threat id");
    old_rec_.threat = old_to_union_[old_rec_.threat];
    int c = 1;
    while (have_removed_ && (c = CompareEntry(removed_rec_, old_rec_)) < 0) {
      URLGUARD_ASSIGN_OR_RETURN(have_removed_, removed_->Next(&removed_rec_));
    }
    if (have_removed_ && c == 0) continue;  // removed
    have_old_ = true;
    return true;
  }
}

Result<bool> VersionMerge::Next(KeyRecord* out) {
  if (!started_) {
    started_ = true;
    if (removed_ != nullptr) {
      URLGUARD_ASSIGN_OR_RETURN(have_removed_, removed_->Next(&removed_rec_));
    }
    URLGUARD_ASSIGN_OR_RETURN(have_added_, added_->Next(&added_rec_));
    URLGUARD_RETURN_IF_ERROR(AdvanceOld().status());
  }
  if (!have_old_ && !have_added_) return false;
  int c = !have_old_ ? 1 : !have_added_ ? -1 : CompareEntry(old_rec_, added_rec_);
  if (c < 0) {
    *out = old_rec_;
    URLGUARD_RETURN_IF_ERROR(AdvanceOld().status());
  } else {
    *out = added_rec_;
    URLGUARD_ASSIGN_OR_RETURN(have_added_, added_->Next(&added_rec_));
    if (c == 0) URLGUARD_RETURN_IF_ERROR(AdvanceOld().status());
  }
  return true;
}

Result<bool> ClearVersionMerge::NextOldRaw(ClearRecord* out) {
  bool ip = false;
  URLGUARD_ASSIGN_OR_RETURN(bool has, old_->Next(&ip, &scratch_));
  if (!has) return false;
  if (scratch_.size() > sizeof(out->text)) return Status::Corruption("entry list value longer than 254 bytes");
  *out = ClearRecord{};
  out->kind = ip ? 1 : 0;
  out->length = static_cast<uint8_t>(scratch_.size());
  std::memcpy(out->text, scratch_.data(), scratch_.size());
  return true;
}

Result<bool> ClearVersionMerge::AdvanceOld() {
  have_old_ = false;
  if (old_ == nullptr) return false;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, NextOldRaw(&old_rec_));
    if (!has) return false;
    int c = 1;
    while (have_removed_ && (c = CompareClear(removed_rec_, old_rec_)) < 0) {
      URLGUARD_ASSIGN_OR_RETURN(have_removed_, removed_->Next(&removed_rec_));
    }
    if (have_removed_ && c == 0) continue;
    have_old_ = true;
    return true;
  }
}

Result<bool> ClearVersionMerge::Next(ClearRecord* out) {
  if (!started_) {
    started_ = true;
    if (removed_ != nullptr) {
      URLGUARD_ASSIGN_OR_RETURN(have_removed_, removed_->Next(&removed_rec_));
    }
    URLGUARD_ASSIGN_OR_RETURN(have_added_, added_->Next(&added_rec_));
    URLGUARD_RETURN_IF_ERROR(AdvanceOld().status());
  }
  if (!have_old_ && !have_added_) return false;
  int c = !have_old_ ? 1 : !have_added_ ? -1 : CompareClear(old_rec_, added_rec_);
  if (c < 0) {
    *out = old_rec_;
    URLGUARD_RETURN_IF_ERROR(AdvanceOld().status());
  } else {
    *out = added_rec_;
    URLGUARD_ASSIGN_OR_RETURN(have_added_, added_->Next(&added_rec_));
    if (c == 0) URLGUARD_RETURN_IF_ERROR(AdvanceOld().status());
  }
  return true;
}

}  // namespace urlguard
