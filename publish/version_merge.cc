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

namespace version_merge_internal {

template <typename Record, typename Sorter>
template <typename NextOld, typename Compare>
Status ThreeWayMerge<Record, Sorter>::AdvanceOld(const NextOld& next_old, const Compare& compare) {
  have_old_ = false;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, next_old(&old_rec_));
    if (!has) return Status::Ok();
    int c = 1;
    while (have_removed_ && (c = compare(removed_rec_, old_rec_)) < 0) {
      URLGUARD_ASSIGN_OR_RETURN(have_removed_, removed_->Next(&removed_rec_));
    }
    if (have_removed_ && c == 0) continue;  // removed
    have_old_ = true;
    return Status::Ok();
  }
}

template <typename Record, typename Sorter>
template <typename NextOld, typename Compare>
Result<bool> ThreeWayMerge<Record, Sorter>::Next(Record* out, const NextOld& next_old,
                                                 const Compare& compare) {
  if (!started_) {
    started_ = true;
    if (removed_ != nullptr) {
      URLGUARD_ASSIGN_OR_RETURN(have_removed_, removed_->Next(&removed_rec_));
    }
    URLGUARD_ASSIGN_OR_RETURN(have_added_, added_->Next(&added_rec_));
    URLGUARD_RETURN_IF_ERROR(AdvanceOld(next_old, compare));
  }
  if (!have_old_ && !have_added_) return false;
  // An entry both in the previous version and added keeps the added record (c == 0 takes `added`).
  const int c = !have_old_ ? 1 : !have_added_ ? -1 : compare(old_rec_, added_rec_);
  if (c < 0) {
    *out = old_rec_;
    URLGUARD_RETURN_IF_ERROR(AdvanceOld(next_old, compare));
  } else {
    *out = added_rec_;
    URLGUARD_ASSIGN_OR_RETURN(have_added_, added_->Next(&added_rec_));
    if (c == 0) URLGUARD_RETURN_IF_ERROR(AdvanceOld(next_old, compare));
  }
  return true;
}

}  // namespace version_merge_internal

Result<bool> VersionMerge::NextOld(KeyRecord* out) {
  if (old_ == nullptr) return false;
  URLGUARD_ASSIGN_OR_RETURN(bool has, old_->Next(out));
  if (!has) return false;
  if (out->threat >= old_to_union_.size()) return Status::Corruption("state record with a bad threat id");
  out->threat = old_to_union_[out->threat];
  return true;
}

Result<bool> VersionMerge::Next(KeyRecord* out) {
  return merge_.Next(out, [this](KeyRecord* r) { return NextOld(r); }, CompareEntry);
}

Result<bool> ClearVersionMerge::NextOld(ClearRecord* out) {
  if (old_ == nullptr) return false;
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

Result<bool> ClearVersionMerge::Next(ClearRecord* out) {
  return merge_.Next(out, [this](ClearRecord* r) { return NextOld(r); }, CompareClear);
}

}  // namespace urlguard
