// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `urlguard-publish update` (include/urlguard/publish.h UpdateFeeds; docs/feeds-file.md): fetch every feed,
// decide whether each download counts, keep the last good copies, and publish the lists from them with a grace
// period before an entry leaves. The pieces a test wants to reach alone are here: reading a feed body into
// checked entries, the checks, and the grace step.
//
// Why a download can be refused (each a sentence in the run's report, docs/feeds-file.md §4): an upstream that
// breaks does not send an error a program can see; it sends a 200 with an HTML login page, a truncated dump, an
// empty file or a sliver of the list. Each of those, taken as the feed's whole content, would make the next
// version withdraw protection from every client. So a download counts only when it arrived whole, parses mostly
// into entries, is not HTML, and did not shrink by more than the feed's max_shrink since its last good copy.
// Otherwise the bytes go to quarantine and the previous good copy keeps counting.
//
// Thread safety: pure functions, except that UpdateFeeds holds REPO/private/feeds/update.lock.
#ifndef URLGUARD_PUBLISH_FEED_UPDATE_H_
#define URLGUARD_PUBLISH_FEED_UPDATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "feeds/feed_check.h"  // LooksLikeHtml, CheckFeedContent: shared with publish and ingest
#include "feeds/feed_state.h"
#include "feeds/feeds.h"
#include "feeds/feeds_file.h"
#include "urlguard/status.h"

namespace urlguard {

// Quarantined downloads kept per feed (older ones are deleted).
inline constexpr size_t kMaxQuarantinedDownloads = 5;

// A feed body turned into entries that the list builder will take.
struct CheckedFeed {
  std::vector<std::pair<std::string, std::string>> entries;  // (value, threat from the feed or empty)
  uint64_t lines = 0;
  uint64_t rejected = 0;  // lines the parser rejected + values that are no URL, domain or address
  std::string text;       // the inflated body
};

// Inflates `body` when it is gzip (capped at `max_bytes`), parses it in `spec`'s format (`name` for messages and
// format detection) and keeps the values EntryKeyFor accepts. Fails only when the body is unusable as a whole
// (ParseFeed's failures, a corrupt or oversized gzip stream).
Result<CheckedFeed> ReadFeedBody(const FeedSpec& spec, const std::string& name, std::string_view body,
                                 size_t max_bytes);

// The checks of docs/feeds-file.md §4 on a download that arrived whole. Empty when it counts, else the reason.
// `previous_entries`: the entries of the feed's good copy (0 when it has none: no shrink check).
std::string CheckFeedDownload(const CheckedFeed& feed, const FeedConfig& config, uint64_t previous_entries);

// The grace step (docs/feeds-file.md §6) for one list: `present` (value -> threat) is what the feeds list now;
// `record` what the last update published. Returns the new record: present entries (absent_since 0), plus
// missing ones whose absence started less than `grace_seconds` before `now` (absent_since kept, or `now` when
// they just went missing). Entries whose grace ended are dropped, unless dropping them would remove more than
// `max_removal` of the record's entries and `allow_large_removal` is false: then every one of them is kept
// (counted in *held). *removed counts what left.
ListRecord ApplyGrace(const ListRecord& record, const std::map<std::string, std::string>& present, int64_t now,
                      int64_t grace_seconds, double max_removal, bool allow_large_removal, uint64_t* removed,
                      uint64_t* held, uint64_t* in_grace);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_FEED_UPDATE_H_
