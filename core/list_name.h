// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// List names appear in file names, URLs and every file format, so they are restricted to 1-64 bytes of
// [a-z0-9_-]. Changes the on-disk formats: the snapshot and diff readers refuse other names.
#ifndef URLGUARD_CORE_LIST_NAME_H_
#define URLGUARD_CORE_LIST_NAME_H_

#include <cstddef>
#include <string_view>

namespace urlguard {

constexpr size_t kMaxListNameBytes = 64;

// The most lists one client keeps, and so the most any of its files or the list index may name: the data
// directory's D/current (kMaxStoreLists), the sync state (kMaxSyncStateLists), the subscriptions
// (sync/subscriptions.h) and the server's signed list index (kMaxListIndexLists). One number, so that nothing a
// client accepts is cut on the way: an index naming more lists is refused whole (docs/list-index.md §4).
// Changes the formats' caps: docs/list-index.md, docs/data-dir.md, docs/sync-protocol.md.
constexpr size_t kMaxLists = 256;

// True for 1-64 bytes of [a-z0-9_-].
constexpr bool IsValidListName(std::string_view name) {
  if (name.empty() || name.size() > kMaxListNameBytes) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Threat types ("phishing", "malware", ...) travel in the hash store, the verify API and the result cache with the
// same rules as list names.
constexpr size_t kMaxThreatNameBytes = 64;
constexpr bool IsValidThreatName(std::string_view threat) { return IsValidListName(threat); }

}  // namespace urlguard

#endif  // URLGUARD_CORE_LIST_NAME_H_
