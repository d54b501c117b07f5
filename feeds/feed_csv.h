// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The CSV family of feed formats (docs/feeds.md): generic CSV with a named or numbered column, PhishTank's
// CSV dump and URLhaus' CSV dump. Each returns a Status for whole-input failures (see ParseFeed in feeds.h)
// and reports per-record problems to the sink.
#ifndef URLGUARD_FEEDS_FEED_CSV_H_
#define URLGUARD_FEEDS_FEED_CSV_H_

#include <cstddef>
#include <string_view>

#include "feeds/feed_sink.h"
#include "urlguard/status.h"

namespace urlguard {

// `column` is a header name (matched ignoring case and blanks) or a 1-based number. kInvalidArgument for a
// column number out of range, no column, or a header without the named column.
Status ParseGenericCsv(std::string_view data, std::string_view column, FeedSink* sink);
// kCorruption when the header has no "url" column, or there is no header.
Status ParsePhishtankCsv(std::string_view data, FeedSink* sink);
// Never fails as a whole: without a header comment, the default URLhaus columns are used.
Status ParseUrlhausCsv(std::string_view data, FeedSink* sink);

// A "1-based column number" spelled in decimal (values above kMaxFeedLineBytes saturate there). False when
// `text` is not all digits.
bool ParseCsvColumnNumber(std::string_view text, size_t* number);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_CSV_H_
