// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the per-feed state files of `urlguard-publish update` (feeds/feed_state.h,
// docs/feeds-file.md §5): the feed metadata (REPO/private/feeds/NAME/meta) and the list record
// (REPO/private/feed-lists/LIST.record). The first byte picks the parser; the rest is the file. Arbitrary bytes
// give a value or a clean error; a value that parses serializes back to exactly the input (the formats are
// canonical, so a file is never silently rewritten into something else).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "feeds/feed_state.h"

namespace {
void Check(bool condition) {
  if (!condition) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 1) {
    auto m = urlguard::ParseFeedMeta(text);
    if (m.ok()) Check(urlguard::SerializeFeedMeta(*m) == text);
  } else {
    auto r = urlguard::ParseListRecord(text);
    if (r.ok()) Check(urlguard::SerializeListRecord(*r) == text);
  }
  return 0;
}
