// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feed_check.h"

#include "core/ascii.h"
#include "feeds/feeds.h"

namespace urlguard {
namespace {

double Share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

std::string Percent(double f) { return std::to_string(static_cast<int>(f * 100.0 + 0.5)) + "%"; }

bool LooksLikeHtml(std::string_view text) {
  // No feed format has a line that starts with markup; every HTML or XML error page has one (a minified page
  // is one such line). A '<' inside a line (a URL's query) does not count.
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    size_t i = pos;
    while (i < end && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\f')) ++i;
    // A UTF-8 byte-order mark before the page.
    if (i == 0 && text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    if (i + 1 < end && text[i] == '<') {
      const char c = text[i + 1];
      if (IsAsciiAlpha(c) || c == '!' || c == '?' || c == '/') return true;
    }
    pos = end + 1;
  }
  return false;
}

std::string CheckFeedContent(const FeedContentStats& s, double max_rejected_fraction) {
  if (s.bytes == 0) return "empty";
  if (s.looks_like_html) return "looks like an HTML page, not a feed";
  if (s.entries == 0) return "no entries (" + std::to_string(s.rejected) + " rejected lines)";
  const double rejected = Share(s.rejected, s.rejected + s.entries);
  if (rejected > max_rejected_fraction) {
    return std::to_string(s.rejected) + " of " + std::to_string(s.rejected + s.entries) +
           " lines rejected (" + Percent(rejected) + ", more than max_rejected_fraction " +
           Percent(max_rejected_fraction) + ")";
  }
  return {};
}

Status CheckInputFile(const std::string& path, const FeedContentStats& stats, double max_rejected_fraction,
                      bool accepted) {
  if (accepted) return Status::Ok();
  std::string why = CheckFeedContent(stats, max_rejected_fraction);
  if (why.empty()) return Status::Ok();
  return Status::FailedPrecondition(path + ": refused: " + why + " (" + std::to_string(stats.entries) +
                                    " entries, " + std::to_string(stats.rejected) +
                                    " rejected lines); if it really is the feed, --accept " + path +
                                    " takes it on purpose");
}

Result<std::vector<std::string>> ResolveAcceptedInputs(const std::vector<std::string>& accept,
                                                       const std::vector<std::string>& inputs) {
  std::vector<std::string> paths;
  for (const std::string& a : accept) {
    bool found = false;
    for (const std::string& in : inputs) {
      auto spec = ParseFeedSpec(in);
      if (spec.ok() && (a == in || a == spec->path)) {
        paths.push_back(spec->path);
        found = true;
        break;
      }
    }
    if (!found) return Status::InvalidArgument("--accept " + a + ": not one of the inputs");
  }
  return paths;
}

std::string CheckRemoval(uint64_t removed, uint64_t previous, double max_removal) {
  if (removed <= kMinCappedRemoval) return {};
  if (static_cast<double>(removed) <= max_removal * static_cast<double>(previous)) return {};
  return "would remove " + std::to_string(removed) + " of the previous version's " +
         std::to_string(previous) + " entries (" + Percent(Share(removed, previous)) +
         ", more than the cap of " + Percent(max_removal) + ")";
}

Status CheckVersionRemoval(const std::string& list, uint64_t version, uint64_t removed, uint64_t previous,
                           double max_removal) {
  const std::string why = CheckRemoval(removed, previous, max_removal);
  if (why.empty()) return Status::Ok();
  return Status::FailedPrecondition(list + " version " + std::to_string(version) + " refused: it " + why +
                                    "; --allow-large-removal or --max-removal FRACTION publishes it");
}

}  // namespace urlguard
