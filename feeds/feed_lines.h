// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The line family of feed formats (docs/feeds.md): plain, openphish, hosts, ABP and Spamhaus DROP text, one
// record per line; and the line reader they (and format detection) share.
#ifndef URLGUARD_FEEDS_FEED_LINES_H_
#define URLGUARD_FEEDS_FEED_LINES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "feeds/feed_sink.h"
#include "feeds/feeds.h"
#include "urlguard/status.h"

namespace urlguard {

// Cuts bytes into lines; "\n" and "\r\n" both end a line, and the last line needs no terminator.
class LineReader {
 public:
  explicit LineReader(std::string_view data) : data_(data) {}

  bool Next(std::string_view* line, uint64_t* number) {
    if (pos_ >= data_.size()) return false;
    size_t end = data_.find('\n', pos_);
    size_t next = end == std::string_view::npos ? data_.size() : end + 1;
    if (end == std::string_view::npos) end = data_.size();
    std::string_view text = data_.substr(pos_, end - pos_);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    pos_ = next;
    *line = text;
    *number = ++line_;
    return true;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  uint64_t line_ = 0;
};

// Calls fn(line, number) for each line within kMaxFeedLineBytes; longer lines are errors.
template <typename Fn>
void ForEachFeedLine(std::string_view data, FeedSink* sink, Fn&& fn) {
  LineReader reader(data);
  std::string_view line;
  uint64_t number = 0;
  while (reader.Next(&line, &number)) {
    if (line.size() > kMaxFeedLineBytes) {
      sink->Error(number, "line is longer than " + std::to_string(kMaxFeedLineBytes) + " bytes");
      continue;
    }
    fn(line, number);
  }
}

// Parses `data` in one of the line formats (kPlain, kOpenphish, kHosts, kAbp, kDropTxt). Line formats
// never fail as a whole: every problem is one line's.
void ParseLineFeed(FeedFormat format, std::string_view data, FeedSink* sink);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_LINES_H_
