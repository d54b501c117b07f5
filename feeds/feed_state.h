// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The per-feed and per-list state of `urlguard-publish update`, kept in the repository's private area
// (docs/feeds-file.md §5, docs/repository-layout.md):
//
//   REPO/private/feeds/NAME/meta          FeedMeta: validators, last success, counts, quarantine (text, below)
//   REPO/private/feeds/NAME/good          the feed's last good copy (inflated text): what keeps counting
//   REPO/private/feeds/NAME/quarantine/   downloads that failed the checks, T.body (T: unix time), newest 5
//   REPO/private/feed-lists/LIST.record   ListRecord: every entry the list's last update published, with the
//                                         time it went missing from every feed (the grace clock)
//
// Both files are text, one item a line, written whole and atomically (temporary file, fsync, rename) and read by
// strict parsers (fuzz/feed_state_fuzz.cc): a damaged file is kCorruption naming the line, never half-read.
// Changing either format changes files operators have on disk: bump the version line and the golden tests
// (fixtures/golden/feed_meta_v1.txt, fixtures/golden/feed_list_record_v1.txt).
//
// Thread safety: pure functions.
#ifndef URLGUARD_FEEDS_FEED_STATE_H_
#define URLGUARD_FEEDS_FEED_STATE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "urlguard/status.h"

namespace urlguard {

// Longest string field of a FeedMeta (ETag, Last-Modified, reason, path).
inline constexpr size_t kMaxFeedMetaFieldBytes = 1024;
inline constexpr size_t kMaxFeedMetaBytes = 16 * 1024;

struct FeedMeta {
  std::string etag;             // validators of the last good download (empty: none)
  std::string last_modified;
  int64_t last_success_unix = 0;  // last run whose download counted (or was unchanged); 0: never
  int64_t last_attempt_unix = 0;
  uint64_t entries = 0;           // entries of the last good copy
  uint64_t rejected = 0;          // rejected lines of the last download (good or not)
  uint64_t bytes = 0;             // bytes of the last download
  uint64_t consecutive_failures = 0;
  bool quarantined = false;       // the last download did not count
  std::string reason;             // why (empty when not quarantined)
  std::string quarantine_path;    // where its bytes are (empty when none arrived)

  bool operator==(const FeedMeta&) const = default;
};

// The text form. String fields are made printable first (bytes outside 0x20-0x7e become '?') and cut at
// kMaxFeedMetaFieldBytes.
std::string SerializeFeedMeta(const FeedMeta& meta);
// kCorruption "feed meta line N: ..." for anything but exactly what SerializeFeedMeta writes.
Result<FeedMeta> ParseFeedMeta(std::string_view text);

// One entry a list's last update published.
struct ListRecordEntry {
  int64_t absent_since_unix = 0;  // 0: listed by a feed; else when it went missing from every feed
  std::string threat;             // a valid threat name, or empty (the list's default)
  bool operator==(const ListRecordEntry&) const = default;
};

struct ListRecord {
  std::string list;
  std::map<std::string, ListRecordEntry> entries;  // by value as a feed wrote it
  bool operator==(const ListRecord&) const = default;
};

// Largest list record UpdateFeeds reads (one line per entry the list published or holds in grace).
inline constexpr size_t kMaxListRecordBytes = size_t{4} << 30;

std::string SerializeListRecord(const ListRecord& record);
// kCorruption "list record line N: ..." for anything but what SerializeListRecord writes (values unique and
// ascending, values without bytes <= 0x20 or 0x7f, at most kMaxFeedValueBytes, threats valid, the count right).
Result<ListRecord> ParseListRecord(std::string_view text);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_STATE_H_
