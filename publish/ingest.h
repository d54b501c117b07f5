// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Ingest: reads feeds in blocks and turns every entry into a KeyRecord (and, for domains and ip ranges, a
// ClearRecord for the DNS export) on several threads, into external sorters, so the publisher's memory does
// not grow with its input (docs/feeds.md, "Streaming").
//
// Line formats (plain, openphish, hosts, abp, drop-txt; gzip or not) are read in blocks of
// IngestOptions::block_bytes cut at line ends: memory is a few blocks whatever the file size. CSV and JSON
// feeds (a quoted field or an array element may span lines) are read whole, capped at kMaxFeedBytes as before.
// One reader thread cuts blocks; `threads` workers parse, canonicalize and hash them. The result does not depend
// on the thread count: records are sorted afterwards, and problems are kept by (feed, line) order.
//
// Thread safety: IngestFeeds is one call at a time per sorter; it runs its own threads.
#ifndef URLGUARD_PUBLISH_INGEST_H_
#define URLGUARD_PUBLISH_INGEST_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "url/entry.h"
#include "core/thread_annotations.h"
#include "format/full_hash_file.h"
#include "platform/env.h"
#include "publish/external_sort.h"
#include "feeds/feed_check.h"
#include "feeds/feeds.h"
#include "publish/key_record.h"
#include "urlguard/status.h"

namespace urlguard {

// Threat names a run may use: the full-hash file's cap.
constexpr size_t kMaxThreatNames = kMaxFullHashThreats;
// Default block of a streamed feed.
constexpr size_t kDefaultIngestBlockBytes = size_t{1} << 20;

// A domain-layer name or an ip-layer range in clear, for the DNS export (publish/entry_list.h). Fixed size so it
// can go through ExternalSorter; text is zero-padded (a canonical host is at most 253 bytes, a range 43).
struct ClearRecord {
  uint8_t kind = 0;  // 0 domain, 1 ip
  uint8_t length = 0;
  char text[254] = {};
  std::string_view view() const { return std::string_view(text, length); }
};
static_assert(sizeof(ClearRecord) == 256);
struct ClearLess {
  bool operator()(const ClearRecord& a, const ClearRecord& b) const {
    if (a.kind != b.kind) return a.kind < b.kind;
    return std::memcmp(a.text, b.text, sizeof(a.text)) < 0;
  }
};
struct ClearSame {
  bool operator()(const ClearRecord& a, const ClearRecord& b) const {
    return a.kind == b.kind && std::memcmp(a.text, b.text, sizeof(a.text)) == 0;
  }
};

using KeySorter = ExternalSorter<KeyRecord, ByLayerKey, SameEntry>;
using ShaSorter = ExternalSorter<KeyRecord, BySha, SameEntry>;
using ClearSorter = ExternalSorter<ClearRecord, ClearLess, ClearSame>;

// Threat names to 16-bit ids, in order of first use (ids are renumbered by name when a state file is written).
// Thread-safe.
class ThreatTable {
 public:
  // The id of `name` (a valid threat name), adding it when new. kResourceExhausted beyond kMaxThreatNames.
  Result<uint16_t> Intern(const std::string& name) EXCLUDES(mutex_);
  std::vector<std::string> names() const EXCLUDES(mutex_);

 private:
  mutable Mutex mutex_;
  std::vector<std::string> names_ GUARDED_BY(mutex_);
  std::map<std::string, uint16_t> ids_ GUARDED_BY(mutex_);
};

struct IngestOptions {
  int threads = 2;
  size_t block_bytes = kDefaultIngestBlockBytes;
  std::string default_threat;  // for entries whose feed names none (or an invalid name)
  uint64_t first_feed_index = 0;  // MakeSeq's feed index of the first feed
  size_t max_problems = 200;      // problems kept (the first by feed, then line); all are counted
};

struct IngestReport {
  uint64_t lines = 0;
  uint64_t entries = 0;   // values the feed parsers produced
  uint64_t rejected = 0;  // bad lines plus values that are no URL, domain or address
  std::vector<FeedProblem> problems;
  // Per feed, in the order given: what its content amounted to (feeds/feed_check.h; IngestFeeds fills it).
  std::vector<FeedContentStats> feeds;
};

// Reads every feed, adding one KeyRecord per valid entry to `keys` (writers 0..threads-1) and, when `clear` is
// not null, one ClearRecord per domain or ip entry. Fails when a feed cannot be read or is unusable as a whole
// (ParseFeed's failures), or a sorter fails to spill; a bad line is only counted and reported.
// One entry's records: its KeyRecord into `keys` and, for a domain or IP entry, its name in clear into `clear`
// (may be null), both through sorter writer `writer`. `threat_name` must be a valid threat name. IngestFeeds uses
// it for every parsed entry; a publisher whose entries come from elsewhere (a version store) uses it directly.
Status AddEntryRecord(const EntryKey& key, const std::string& threat_name, uint64_t seq, int writer,
                      ThreatTable* threats, KeySorter* keys, ClearSorter* clear);

Status IngestFeeds(Env* env, const std::vector<FeedSpec>& feeds, const IngestOptions& options, ThreatTable* threats,
                   KeySorter* keys, ClearSorter* clear, IngestReport* report,
                   const std::function<void(uint64_t)>& progress = nullptr);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_INGEST_H_
