// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The feeds file of `urlguard-publish update` (docs/feeds-file.md): which feeds to fetch, from where, in which
// format, into which list, and the limits that decide whether a download counts. A small INI-like text read by a
// strict parser: every key is known, every value is checked, every section and key appears once, and any
// mistake is an error naming the line. An operator's typo must stop the run, never silently publish a list
// built with a default they did not mean.
//
// Thread safety: pure functions.
#ifndef URLGUARD_FEEDS_FEEDS_FILE_H_
#define URLGUARD_FEEDS_FEEDS_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "feeds/feeds.h"
#include "urlguard/publish.h"
#include "urlguard/status.h"

namespace urlguard {

// Caps on the feeds file itself (it is operator input, but still bytes from outside).
inline constexpr size_t kMaxFeedsFileBytes = size_t{1} << 20;
inline constexpr size_t kMaxFeedsFileLineBytes = 4096;
inline constexpr size_t kMaxFeedsPerFile = 1000;

// Defaults (docs/feeds-file.md §3). Changing one changes what operators get without asking: document it.
inline constexpr double kDefaultFeedMaxShrink = 0.2;
// The guard's defaults are the public ones of `publish` (include/urlguard/publish.h): one rule for both commands.
inline constexpr double kDefaultFeedMaxRejectedFraction = kDefaultInputMaxRejectedFraction;
inline constexpr uint64_t kDefaultFeedMaxBytes = uint64_t{256} << 20;
inline constexpr int64_t kDefaultFeedConnectTimeoutSeconds = 30;
inline constexpr int64_t kDefaultFeedTimeoutSeconds = 300;
inline constexpr int64_t kDefaultListGraceSeconds = 6 * 3600;
inline constexpr double kDefaultListMaxRemoval = kDefaultPublishMaxRemoval;
inline constexpr int64_t kDefaultListExpiresInSeconds = 24 * 3600;
inline constexpr uint32_t kDefaultListKeep = 5;

// One [feed NAME] section.
struct FeedConfig {
  std::string name;        // [a-z0-9_-], 1-64 bytes; names REPO/private/feeds/NAME/
  uint64_t line = 0;       // where the section starts (for messages)
  std::string url;         // http:// or https://, or empty when `path` is set
  std::string path;        // a local file, or empty when `url` is set
  FeedSpec spec;           // format and CSV column (spec.path unused)
  std::string list;        // the list the feed's entries go to
  std::string threat;      // for entries whose feed names none; empty: the list's threat
  double max_shrink = kDefaultFeedMaxShrink;                    // 0 .. 1
  double max_rejected_fraction = kDefaultFeedMaxRejectedFraction;  // 0 .. 1
  uint64_t max_bytes = kDefaultFeedMaxBytes;                    // 1 .. kMaxFeedBytes
  int64_t connect_timeout_seconds = kDefaultFeedConnectTimeoutSeconds;
  int64_t timeout_seconds = kDefaultFeedTimeoutSeconds;
};

// One [list NAME] section (optional: a list its feeds name gets the defaults).
struct FeedListConfig {
  std::string name;
  std::string threat;      // default threat for the list's entries; empty: the list name
  int64_t grace_seconds = kDefaultListGraceSeconds;     // 0 .. 30 days
  double max_removal = kDefaultListMaxRemoval;          // 0 .. 1: share of the list one version may remove
  int64_t expires_in_seconds = kDefaultListExpiresInSeconds;
  uint32_t keep = kDefaultListKeep;
};

struct FeedsFile {
  std::vector<FeedConfig> feeds;      // in file order
  std::vector<FeedListConfig> lists;  // every list a feed names, in order of first mention (defaults filled)

  const FeedListConfig* FindList(std::string_view name) const;
  const FeedConfig* FindFeed(std::string_view name) const;
};

// Parses a feeds file. kInvalidArgument "line N: ..." for anything the spec does not allow: unknown sections or
// keys, a key twice, a section twice, a feed without a list or without exactly one of url/path, values out of
// range, bytes that are not printable ASCII (a tab counts as a space), a line over kMaxFeedsFileLineBytes, more
// than kMaxFeedsPerFile feeds; "no feeds" for a file without one. kResourceExhausted over kMaxFeedsFileBytes.
Result<FeedsFile> ParseFeedsFile(std::string_view text);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEEDS_FILE_H_
