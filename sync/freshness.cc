// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync/freshness.h"

#include <algorithm>

namespace urlguard {

const char* StaleReasonName(StaleReason reason) {
  switch (reason) {
    case StaleReason::kNone:
      return "";
    case StaleReason::kNotInstalled:
      return "not_installed";
    case StaleReason::kDamaged:
      return "damaged";
    case StaleReason::kExpired:
      return "expired";
  }
  return "not_installed";
}

std::vector<StaleList> StaleLists(const StoreState& state, const std::vector<std::string>& subscribed,
                                  int64_t now_unix) {
  std::vector<StaleList> out;
  for (const ListState& l : state.lists) {
    if (!l.installed.has_value()) {
      out.push_back(StaleList{l.list, StaleReason::kDamaged, 0});
    } else if (now_unix >= l.installed->expires_unix) {
      out.push_back(StaleList{l.list, StaleReason::kExpired, l.installed->expires_unix});
    }
  }
  for (const std::string& name : subscribed) {
    if (state.Find(name) != nullptr) continue;
    const bool listed = std::any_of(out.begin(), out.end(), [&](const StaleList& s) { return s.list == name; });
    if (!listed) out.push_back(StaleList{name, StaleReason::kNotInstalled, 0});
  }
  if (state.lists.empty() && subscribed.empty()) out.push_back(StaleList{"", StaleReason::kNotInstalled, 0});
  std::sort(out.begin(), out.end(), [](const StaleList& a, const StaleList& b) { return a.list < b.list; });
  return out;
}

bool AnyListStale(const StoreState& state, const std::vector<std::string>& subscribed, int64_t now_unix) {
  if (state.lists.empty()) return true;
  for (const ListState& l : state.lists) {
    if (!l.installed.has_value() || now_unix >= l.installed->expires_unix) return true;
  }
  for (const std::string& name : subscribed) {
    if (state.Find(name) == nullptr) return true;
  }
  return false;
}

std::string DescribeStaleLists(const std::vector<StaleList>& stale) {
  std::string out;
  for (const StaleList& s : stale) {
    if (!out.empty()) out += "; ";
    out += s.list.empty() ? std::string("no list installed") : s.list + ": " + StaleReasonName(s.reason);
    if (s.reason == StaleReason::kExpired) out += " at " + std::to_string(s.expires_unix);
  }
  return out;
}

Status CheckManifestLifetime(int64_t created_unix, int64_t expires_unix, int64_t trusted_now_unix) {
  // Both are >= 1 and created < expires (ParseManifest), so the difference cannot overflow.
  if (expires_unix - created_unix > kMaxManifestLifetimeSeconds) {
    return Status::FailedPrecondition("manifest lifetime " + std::to_string(expires_unix - created_unix) +
                                      " s exceeds the bound of " + std::to_string(kMaxManifestLifetimeSeconds) +
                                      " s (created " + std::to_string(created_unix) + ", expires " +
                                      std::to_string(expires_unix) + ")");
  }
  if (trusted_now_unix <= INT64_MAX - kMaxManifestCreatedAheadSeconds &&
      created_unix > trusted_now_unix + kMaxManifestCreatedAheadSeconds) {
    return Status::FailedPrecondition("manifest created at " + std::to_string(created_unix) +
                                      ", more than " + std::to_string(kMaxManifestCreatedAheadSeconds) +
                                      " s after now (" + std::to_string(trusted_now_unix) + ")");
  }
  return Status::Ok();
}

}  // namespace urlguard
