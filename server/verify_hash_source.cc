// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/verify_hash_source.h"

#include <algorithm>
#include <cstring>

namespace urlguard {

Result<size_t> UniquePrefixes(std::span<const uint32_t> prefixes, uint32_t* unique) {
  if (prefixes.size() > kMaxLookupPrefixes) {
    return Status::InvalidArgument("more than " + std::to_string(kMaxLookupPrefixes) + " prefixes");
  }
  std::copy(prefixes.begin(), prefixes.end(), unique);
  std::sort(unique, unique + prefixes.size());
  return static_cast<size_t>(std::unique(unique, unique + prefixes.size()) - unique);
}

void SortVerifyRecords(std::vector<VerifyRecord>* records) {
  std::sort(records->begin(), records->end(), [](const VerifyRecord& a, const VerifyRecord& b) {
    const int c = std::memcmp(a.sha256.data(), b.sha256.data(), a.sha256.size());
    if (c != 0) return c < 0;
    if (a.list != b.list) return a.list < b.list;
    return a.layer < b.layer;
  });
}

}  // namespace urlguard
