// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the threat-feed parsers (feeds/feeds.h): every format's parser, auto-detection,
// feed-argument parsing and gzip inflation on arbitrary bytes must never crash, hang, leak or trip a
// sanitizer, and must keep their contracts (entries carry lines within the input, problems stay under the
// cap, a failed parse leaves the outputs as they were).
//
// Build (links -lz): clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. -Iinclude
//   fuzz/feeds_fuzz.cc feeds/feeds.cc core/status.cc platform/env_posix.cc -lz
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "feeds/feeds.h"

namespace {

// Small enough that the fuzzer explores inflation past the cap quickly.
constexpr size_t kFuzzInflateCap = size_t{1} << 20;

void Check(bool condition) {
  if (!condition) std::abort();
}

void ParseOne(const urlguard::FeedSpec& spec, std::string_view data) {
  std::vector<urlguard::FeedEntry> entries = {{"sentinel.example", "", 1}};
  std::vector<urlguard::FeedProblem> problems;
  urlguard::FeedStats stats;
  urlguard::Status status = urlguard::ParseFeed(spec, data, &entries, &problems, &stats);
  Check(!entries.empty() && entries[0].value == "sentinel.example");
  if (!status.ok()) {
    Check(entries.size() == 1 && problems.empty() && stats.entries == 0 && stats.errors == 0);
    return;
  }
  Check(stats.entries == entries.size() - 1);
  Check(problems.size() <= urlguard::kMaxFeedProblems && problems.size() <= stats.errors);
  Check(stats.format != urlguard::FeedFormat::kAuto);
  for (size_t i = 1; i < entries.size(); ++i) {
    Check(entries[i].line >= 1 && entries[i].line <= stats.lines);
    Check(!entries[i].value.empty() && entries[i].value.size() <= urlguard::kMaxFeedValueBytes);
  }
  for (const urlguard::FeedProblem& p : problems) Check(p.line >= 1 && p.line <= stats.lines);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const std::string_view data(reinterpret_cast<const char*>(bytes), size);
  using urlguard::FeedFormat;
  for (FeedFormat format : {FeedFormat::kAuto, FeedFormat::kPlain, FeedFormat::kHosts, FeedFormat::kAbp,
                            FeedFormat::kPhishtankCsv, FeedFormat::kPhishtankJson, FeedFormat::kUrlhausCsv,
                            FeedFormat::kOpenphish, FeedFormat::kDropJson, FeedFormat::kDropTxt}) {
    ParseOne(urlguard::FeedSpec{format, "", "fuzz.txt"}, data);
  }
  ParseOne(urlguard::FeedSpec{FeedFormat::kCsv, "url", "fuzz.csv"}, data);
  ParseOne(urlguard::FeedSpec{FeedFormat::kCsv, "2", "fuzz.csv"}, data);

  // Detection with a path taken from the input's first line.
  const std::string_view first_line = data.substr(0, data.find('\n'));
  urlguard::FeedFormat detected = urlguard::DetectFeedFormat(first_line, data);
  Check(detected != FeedFormat::kAuto && detected != FeedFormat::kCsv);

  urlguard::Result<urlguard::FeedSpec> spec = urlguard::ParseFeedSpec(first_line);
  if (spec.ok()) Check(!spec->path.empty());

  urlguard::Result<std::string> inflated = urlguard::InflateBounded(data, kFuzzInflateCap, urlguard::kFeedInflateOptions);
  if (inflated.ok()) {
    Check(inflated->size() <= kFuzzInflateCap);
    ParseOne(urlguard::FeedSpec{FeedFormat::kAuto, "", "fuzz.gz"}, *inflated);
  }
  return 0;
}
