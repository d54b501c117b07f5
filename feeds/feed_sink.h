// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Where a feed parser's results go: entries that pass CheckFeedValue(), problems (at most kMaxFeedProblems
// kept, all counted) and the counters of FeedStats. Every format parser writes through one FeedSink.
#ifndef URLGUARD_FEEDS_FEED_SINK_H_
#define URLGUARD_FEEDS_FEED_SINK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "feeds/feed_values.h"
#include "feeds/feeds.h"

namespace urlguard {

// One per ParseFeed() call; the vectors and stats it writes to must outlive it. Not thread-safe.
class FeedSink {
 public:
  FeedSink(const FeedSpec& spec, std::vector<FeedEntry>* entries, std::vector<FeedProblem>* problems,
           FeedStats* stats)
      : file_(spec.path.empty() ? "<input>" : spec.path),
        entries_(entries),
        problems_(problems),
        stats_(stats) {}

  // Validates `value` (CheckFeedValue) and appends it, or records why not.
  void Add(std::string_view value, std::string_view threat, uint64_t line) {
    std::string why = CheckFeedValue(value);
    if (!why.empty()) {
      Error(line, std::move(why));
      return;
    }
    entries_->push_back(FeedEntry{std::string(value), std::string(threat), line});
    ++stats_->entries;
  }

  void Error(uint64_t line, std::string message) {
    ++stats_->errors;
    if (recorded_ < kMaxFeedProblems) {
      problems_->push_back(FeedProblem{file_, line, std::move(message)});
      ++recorded_;
    }
  }

  void Comment() { ++stats_->comments; }
  void Skip() { ++stats_->skipped; }
  void Unsupported() { ++stats_->unsupported; }

 private:
  std::string file_;
  std::vector<FeedEntry>* entries_;
  std::vector<FeedProblem>* problems_;
  FeedStats* stats_;
  size_t recorded_ = 0;
};

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_SINK_H_
