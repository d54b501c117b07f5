// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the feeds file of `urlguard-publish update` (feeds/feeds_file.h, docs/feeds-file.md):
// arbitrary bytes give a parsed file or a clean error, never a crash or a hang; what parses keeps the spec's
// contracts (every feed has a list and exactly one of url/path, every fraction in [0, 1], every list a feed
// names is present once, feed names unique).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#include "feeds/feeds_file.h"

namespace {
void Check(bool condition) {
  if (!condition) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = urlguard::ParseFeedsFile(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!f.ok()) return 0;
  Check(!f->feeds.empty() && f->feeds.size() <= urlguard::kMaxFeedsPerFile);
  std::set<std::string> names;
  for (const urlguard::FeedConfig& feed : f->feeds) {
    Check(names.insert(feed.name).second);
    Check(!feed.list.empty());
    Check(feed.url.empty() != feed.path.empty());
    Check(feed.max_shrink >= 0.0 && feed.max_shrink <= 1.0);
    Check(feed.max_rejected_fraction >= 0.0 && feed.max_rejected_fraction <= 1.0);
    Check(feed.max_bytes >= 1 && feed.max_bytes <= urlguard::kMaxFeedBytes);
    Check(f->FindList(feed.list) != nullptr);
  }
  for (const urlguard::FeedListConfig& l : f->lists) Check(l.max_removal >= 0.0 && l.max_removal <= 1.0);
  return 0;
}
