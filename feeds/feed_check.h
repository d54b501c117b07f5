// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The checks that decide whether a feed's content may count, shared by `urlguard-publish update` (a download,
// docs/feeds-file.md §4.2) and `urlguard-publish publish` / `ingest` (an --input file, docs/feeds.md, "The
// publication guard"), and the removal cap of a full version (docs/feeds.md, "The publication guard"). Why: a
// feed that breaks upstream sends a 200 with an HTML page, an empty file or a sliver of the list; signed as
// the list's whole content, it withdraws every client's protection at the next sync (issue 19). One set of
// rules, so the two commands cannot drift apart.
//
// Thread safety: pure functions.
#ifndef URLGUARD_FEEDS_FEED_CHECK_H_
#define URLGUARD_FEEDS_FEED_CHECK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// A version may always remove this many entries, whatever the share (docs/feeds.md, "The publication guard"):
// a tiny list is not blocked by its own curation. Above it, the share decides.
inline constexpr uint64_t kMinCappedRemoval = 100;

// True when the text is an HTML (or XML) page rather than a feed: a line (anywhere) whose first non-blank
// byte is
// '<' followed by a letter, '!', '?' or '/'. No feed format has such a line; every error page has one. Works
// on any run of whole lines (a streamed block of a feed gives the same answer as the whole text).
bool LooksLikeHtml(std::string_view text);

// What a feed's content amounted to.
struct FeedContentStats {
  uint64_t bytes = 0;     // of the text (after gzip)
  uint64_t entries = 0;   // values that are a URL, domain or address
  uint64_t rejected = 0;  // lines the parser rejected + values that are no URL, domain or address
  bool looks_like_html = false;
};

// Checks 3-5 of docs/feeds-file.md §4.2, in that order: not empty, at least one entry, not HTML, rejected
// lines at most `max_rejected_fraction` of rejected + entries. Empty when the content counts, else the reason
// (a phrase: "looks like an HTML page, not a feed").
std::string CheckFeedContent(const FeedContentStats& stats, double max_rejected_fraction);

// The guard's check of one input file of `urlguard-publish publish` or `ingest` (docs/feeds.md, "The
// publication guard"): Ok when CheckFeedContent passes or `accepted`, else kFailedPrecondition "PATH:
// refused: REASON; ...".
Status CheckInputFile(const std::string& path, const FeedContentStats& stats, double max_rejected_fraction,
                      bool accepted);

// The input paths `accept` names among the feed arguments `inputs` ("[FORMAT:]PATH"): an entry may be an
// argument as given or its path. kInvalidArgument "--accept X: not one of the inputs" for any other.
Result<std::vector<std::string>> ResolveAcceptedInputs(const std::vector<std::string>& accept,
                                                       const std::vector<std::string>& inputs);

// The removal cap (docs/feeds.md, "The publication guard"): empty when a version that removes `removed` of
// the previous version's `previous` entries may be published under `max_removal` (a share, 0 .. 1), else the
// reason with the counts. Allowed: removed <= kMinCappedRemoval, or removed <= max_removal x previous.
std::string CheckRemoval(uint64_t removed, uint64_t previous, double max_removal);

// CheckRemoval as the refusal of `list` version `version`: Ok when allowed, else kFailedPrecondition "LIST version
// V refused: it would remove ...; --allow-large-removal or --max-removal FRACTION publishes it".
Status CheckVersionRemoval(const std::string& list, uint64_t version, uint64_t removed, uint64_t previous,
                           double max_removal);

// "25%": a share as a rounded percentage, for messages.
std::string Percent(double share);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_CHECK_H_
