// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseEntryListDelta (publish/entry_list.h): arbitrary bytes must never crash the parser; a
// delta it accepts must serialize back to the very same bytes (the format has one spelling per delta: sorted,
// unique, canonical numbers), and its added and removed names must be disjoint.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "publish/entry_list.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "entry_list_delta_fuzz: %s\n", what);
  std::abort();
}

bool Disjoint(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const std::string& x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto delta = urlguard::ParseEntryListDelta(bytes);
  if (!delta.ok()) return 0;
  if (delta->version < 2) Fail("accepted a delta of version 0 or 1");
  if (!Disjoint(delta->added_domains, delta->removed_domains) ||
      !Disjoint(delta->added_ip_ranges, delta->removed_ip_ranges)) {
    Fail("a name both added and removed");
  }
  if (urlguard::SerializeEntryListDelta(*delta) != bytes) Fail("an accepted delta does not serialize to its bytes");
  return 0;
}
