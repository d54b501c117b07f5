// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseEntryList (publish/entry_list.h) and the RPZ rendering behind it
// (publish/rpz_export.h): arbitrary bytes must never crash the parser; a list it accepts must serialize and
// parse back to the same list (sorted, unique), and render as a zone whose trigger count adds up to what went in.
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
  std::fprintf(stderr, "entry_list_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto list = urlguard::ParseEntryList(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!list.ok()) return 0;
  auto again = urlguard::ParseEntryList(urlguard::SerializeEntryList(*list));
  if (!again.ok()) Fail("a serialized list does not parse");
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  if (again->domains != sorted(list->domains) || again->ip_ranges != sorted(list->ip_ranges) ||
      again->version != list->version || again->url_entries != list->url_entries || again->list != list->list) {
    Fail("round trip changed the list");
  }
  urlguard::RpzZoneOptions options;
  options.origin = "fuzz.rpz.urlguard.";
  urlguard::RpzZoneStats stats;
  auto zone = urlguard::RenderRpzZone(*again, options, &stats);
  if (!zone.ok()) Fail("a parsed list does not render");
  if (stats.domains + stats.ip_ranges + stats.unexpressible_left_out != again->domains.size() + again->ip_ranges.size()) {
    Fail("zone counts do not add up");
  }
  return 0;
}
