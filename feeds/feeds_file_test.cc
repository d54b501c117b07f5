// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feeds_file.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace urlguard {
namespace {

// The documented example (docs/feeds-file.md §2): every key, parsed as the spec says. A change to the grammar
// or a default must be deliberate.
TEST(FeedsFile, GoldenExample) {
  auto f = ParseFeedsFile(testing::ReadFileOrDie(testing::SourcePath("fixtures/golden/feeds_file_v1.conf")));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->feeds.size(), 3u);
  const FeedConfig& a = f->feeds[0];
  EXPECT_EQ(a.name, "openphish");
  EXPECT_EQ(a.url, "https://openphish.com/feed.txt");
  EXPECT_EQ(a.spec.format, FeedFormat::kOpenphish);
  EXPECT_EQ(a.list, "phishing");
  EXPECT_DOUBLE_EQ(a.max_shrink, 0.3);
  EXPECT_DOUBLE_EQ(a.max_rejected_fraction, 0.05);
  EXPECT_EQ(a.max_bytes, uint64_t{64} << 20);
  EXPECT_EQ(a.connect_timeout_seconds, 10);
  EXPECT_EQ(a.timeout_seconds, 120);
  const FeedConfig& b = f->feeds[1];
  EXPECT_EQ(b.spec.format, FeedFormat::kUrlhausCsv);
  EXPECT_EQ(b.threat, "malware_download");
  EXPECT_DOUBLE_EQ(b.max_shrink, kDefaultFeedMaxShrink);
  EXPECT_DOUBLE_EQ(b.max_rejected_fraction, kDefaultFeedMaxRejectedFraction);
  EXPECT_EQ(b.max_bytes, kDefaultFeedMaxBytes);
  EXPECT_EQ(b.timeout_seconds, kDefaultFeedTimeoutSeconds);
  const FeedConfig& c = f->feeds[2];
  EXPECT_EQ(c.path, "/etc/urlguard/feeds/local.txt");
  EXPECT_TRUE(c.url.empty());
  EXPECT_EQ(c.spec.format, FeedFormat::kCsv);
  EXPECT_EQ(c.spec.csv_column, "url");
  ASSERT_EQ(f->lists.size(), 2u);
  const FeedListConfig* p = f->FindList("phishing");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->grace_seconds, 12 * 3600);
  EXPECT_DOUBLE_EQ(p->max_removal, 0.05);
  EXPECT_EQ(p->expires_in_seconds, 2 * 86400);
  EXPECT_EQ(p->keep, 3u);
  const FeedListConfig* m = f->FindList("malware");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->grace_seconds, kDefaultListGraceSeconds);
  EXPECT_DOUBLE_EQ(m->max_removal, kDefaultListMaxRemoval);
}

TEST(FeedsFile, DocumentedDefaults) {
  EXPECT_DOUBLE_EQ(kDefaultFeedMaxShrink, 0.2);
  EXPECT_EQ(kDefaultListGraceSeconds, 6 * 3600);
  EXPECT_DOUBLE_EQ(kDefaultListMaxRemoval, 0.1);
}

TEST(FeedsFile, GraceZeroAndCrLf) {
  auto f = ParseFeedsFile("[feed a]\r\npath = x\r\nlist = l\r\n[list l]\r\ngrace = 0\r\n");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->lists[0].grace_seconds, 0);
}

// Every mistake stops the run with the line that holds it.
TEST(FeedsFile, RefusesMistakes) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "no feeds"},
      {"# only a comment\n", "no feeds"},
      {"url = https://x/\n", "line 1: url outside"},
      {"[feed a]\nurl = https://x/\nlist = l\nlsit = m\n", "line 4: unknown feed key lsit"},
      {"[feed a]\nurl = https://x/\nurl = https://y/\nlist = l\n", "line 3: url given twice"},
      {"[feed a]\nurl = https://x/\nlist = l\n[feed a]\n", "line 4: feed a defined twice"},
      {"[feed a]\nurl = ftp://x/\nlist = l\n", "line 2: url must start with http"},
      {"[feed a]\nurl = https://x/\n", "no list"},
      {"[feed a]\nurl = https://x/\npath = /y\nlist = l\n", "exactly one of url and path"},
      {"[feed a]\nlist = l\n", "exactly one of url and path"},
      {"[feed A]\nurl = https://x/\nlist = l\n", "line 1: section names"},
      {"[feeds a]\n", "line 1: unknown section kind"},
      {"[feed a]\nurl = https://x/\nlist = l\nmax_shrink = 1.5\n", "line 4: bad max_shrink"},
      {"[feed a]\nurl = https://x/\nlist = l\nmax_shrink = -0.1\n", "line 4: bad max_shrink"},
      {"[feed a]\nurl = https://x/\nlist = l\nformat = hostss\n", "line 4: bad format"},
      {"[feed a]\nurl = https://x/\nlist = l\nformat = csv\n", "line 4: bad format"},
      {"[feed a]\nurl = https://x/\nlist = l\ntimeout = 2h\n", "line 4: bad timeout"},
      {"[feed a]\nurl = https://x/\nlist = l\nmax_bytes = 2G\n", "line 4: bad max_bytes"},
      {"[feed a]\nurl = https://x/\nlist = l\nmax_bytes = 17179869185G\n", "line 4: bad max_bytes"},  // 2^64 + 1G
      {"[feed a]\nurl = https://x/\nlist = l\nthreat =\n", "line 4: threat has no value"},
      {"[feed a]\nurl = https://x/\nlist = l\n[list m]\n", "[list m] has no feed"},
      {"[feed a]\nurl = https://x/\nlist = l\n[list l]\ngrace = 31d\n", "line 5: bad grace"},
      {"[feed a]\nurl = https://x/\nlist = l\n[list l]\nkeep = 65\n", "line 5: bad keep"},
      {"[feed a]\nurl = https://x/\xc3\xa9\nlist = l\n", "line 2: not printable ASCII"},
      {"[feed a]\nurl https://x/\n", "line 2: expected KEY = VALUE"},
  };
  for (const auto& c : cases) {
    auto f = ParseFeedsFile(c.text);
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(f.status().message().find(c.message), std::string::npos) << c.text << " -> " << f.status().ToString();
  }
  EXPECT_EQ(ParseFeedsFile(std::string(kMaxFeedsFileBytes + 1, '#')).status().code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(ParseFeedsFile("[feed a]\npath = " + std::string(kMaxFeedsFileLineBytes, 'x') + "\nlist = l\n").ok());
}

}  // namespace
}  // namespace urlguard
