// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseRpzAllowlist (publish/rpz_export.h): arbitrary bytes must never crash the parser;
// an allowlist it accepts is sorted and unique, renders into a zone (or is refused as a whole with
// kInvalidArgument, for a name too long under the origin), and the zone's counts add up: every listed entry is
// written, left out as unexpressible, or left out because the allowlist covers it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "publish/entry_list.h"
#include "publish/rpz_export.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "rpz_allowlist_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto allow = urlguard::ParseRpzAllowlist(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!allow.ok()) return 0;
  for (const auto* v : {&allow->domains, &allow->ip_ranges}) {
    if (!std::is_sorted(v->begin(), v->end()) || std::adjacent_find(v->begin(), v->end()) != v->end()) {
      Fail("allowlist not sorted and unique");
    }
  }
  urlguard::EntryList list;
  list.list = "fuzz";
  list.version = 1;
  list.domains = {"evil.example", "www.evil.example", "a.b.c.example"};
  list.ip_ranges = {"198.51.100.0/24", "2001:db8::/32", "203.0.113.7/32"};
  urlguard::RpzZoneOptions options;
  options.origin = "fuzz.rpz.urlguard.";
  options.action = urlguard::RpzAction::kNull;
  options.allowlist = *allow;
  urlguard::RpzZoneStats stats;
  auto zone = urlguard::RenderRpzZone(list, options, &stats);
  if (!zone.ok()) {
    if (zone.status().code() != urlguard::StatusCode::kInvalidArgument) Fail("unexpected render failure");
    return 0;
  }
  if (stats.domains + stats.ip_ranges + stats.unexpressible_left_out + stats.allowed_left_out != 6) {
    Fail("zone counts do not add up");
  }
  if (stats.passthru != allow->domains.size() + allow->ip_ranges.size()) Fail("passthru count");
  return 0;
}
