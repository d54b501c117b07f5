// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/feed_update.h"

#include <gtest/gtest.h>

#include "tests/feed_test_util.h"

namespace urlguard {
namespace {

using testing::Domains;
using testing::Gzip;

CheckedFeed Read(const std::string& body) {
  FeedSpec spec;
  spec.format = FeedFormat::kPlain;
  auto f = ReadFeedBody(spec, "feed.txt", body, kMaxFeedBytes);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : CheckedFeed{};
}

TEST(FeedChecks, ReadsEntriesAndCountsRejected) {
  CheckedFeed f = Read("# comment\nevil.example\nhttp://bad.example/x\nnot a value\n10.0.0.0/8\n");
  EXPECT_EQ(f.entries.size(), 3u);
  EXPECT_EQ(f.rejected, 1u);
  CheckedFeed g = Read(Gzip(Domains(50)));
  EXPECT_EQ(g.entries.size(), 50u);
  FeedSpec spec;
  EXPECT_FALSE(ReadFeedBody(spec, "x", Gzip(Domains(50)).substr(0, 30), kMaxFeedBytes).ok());  // truncated gzip
  EXPECT_EQ(ReadFeedBody(spec, "x", Gzip(Domains(5000)), 1000).status().code(), StatusCode::kResourceExhausted);
}

TEST(FeedChecks, LooksLikeHtml) {
  EXPECT_TRUE(LooksLikeHtml("<!DOCTYPE html>\n<html><body>403</body></html>"));
  EXPECT_TRUE(LooksLikeHtml("a.example\nb.example\n  <HTML>\n<title>Error</title>"));
  EXPECT_TRUE(LooksLikeHtml("<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code></Error>"));
  EXPECT_TRUE(LooksLikeHtml("\xEF\xBB\xBF<html>"));
  EXPECT_TRUE(LooksLikeHtml(Domains(5000) + "</div></body>\n"));  // far past the start
  EXPECT_FALSE(LooksLikeHtml("a.example\nhttp://b.example/?q=<title>x</title>\n"));  // markup inside a URL
  EXPECT_FALSE(LooksLikeHtml(Domains(100)));
  EXPECT_FALSE(LooksLikeHtml("a.example\n< 3\n"));
}

TEST(FeedChecks, Checks) {
  FeedConfig c;  // defaults: max_shrink 0.2, max_rejected_fraction 0.25
  EXPECT_EQ(CheckFeedDownload(Read(Domains(1000)), c, 0), "");
  EXPECT_EQ(CheckFeedDownload(Read(Domains(1000)), c, 1000), "");
  EXPECT_EQ(CheckFeedDownload(Read(Domains(800)), c, 1000), "");  // exactly 20% smaller
  EXPECT_NE(CheckFeedDownload(Read(Domains(799)), c, 1000).find("shrank from 1000 to 799"), std::string::npos);
  EXPECT_NE(CheckFeedDownload(Read(Domains(100)), c, 1000).find("shrank"), std::string::npos);
  EXPECT_EQ(CheckFeedDownload(Read(""), c, 1000), "empty download");
  EXPECT_NE(CheckFeedDownload(Read("# only comments\n"), c, 0).find("no entries"), std::string::npos);
  EXPECT_NE(CheckFeedDownload(Read(Domains(3) + "<html><body>Forbidden</body></html>\n"), c, 1000).find("HTML"),
            std::string::npos);
  // Mostly rejected: 2 entries, 3 junk lines.
  EXPECT_NE(CheckFeedDownload(Read("a.example\nb.example\njunk\nmore junk\nstill\n"), c, 0).find("rejected"),
            std::string::npos);
  c.max_shrink = 0.95;
  EXPECT_EQ(CheckFeedDownload(Read(Domains(100)), c, 1000), "");
}

ListRecord Record(std::initializer_list<std::pair<std::string, int64_t>> entries) {
  ListRecord r;
  r.list = "l";
  for (const auto& [v, since] : entries) r.entries[v] = {since, ""};
  return r;
}

TEST(FeedChecks, GraceKeepsMissingEntriesUntilItEnds) {
  const ListRecord before = Record({{"a.example", 0}, {"b.example", 0}, {"c.example", 0}});
  const std::map<std::string, std::string> present = {{"a.example", ""}, {"b.example", ""}};
  uint64_t removed, held, in_grace;
  ListRecord r1 = ApplyGrace(before, present, 1000, 3600, 1.0, false, &removed, &held, &in_grace);
  ASSERT_EQ(r1.entries.size(), 3u);  // c went missing at 1000: kept
  EXPECT_EQ(r1.entries["c.example"].absent_since_unix, 1000);
  EXPECT_EQ(in_grace, 1u);
  EXPECT_EQ(removed, 0u);
  ListRecord r2 = ApplyGrace(r1, present, 1000 + 3599, 3600, 1.0, false, &removed, &held, &in_grace);
  EXPECT_EQ(r2.entries.size(), 3u);
  EXPECT_EQ(r2.entries["c.example"].absent_since_unix, 1000);  // the clock is not restarted
  ListRecord r3 = ApplyGrace(r2, present, 1000 + 3600, 3600, 1.0, false, &removed, &held, &in_grace);
  EXPECT_EQ(r3.entries.size(), 2u);
  EXPECT_EQ(removed, 1u);
  // Back in a feed before the grace ended: present again, the clock cleared.
  ListRecord r4 = ApplyGrace(r1, {{"a.example", ""}, {"c.example", ""}}, 2000, 3600, 1.0, false, &removed, &held,
                             &in_grace);
  EXPECT_EQ(r4.entries["c.example"].absent_since_unix, 0);
  EXPECT_EQ(r4.entries["b.example"].absent_since_unix, 2000);
  // Grace 0: gone at once.
  ListRecord r5 = ApplyGrace(before, present, 1000, 0, 1.0, false, &removed, &held, &in_grace);
  EXPECT_EQ(r5.entries.size(), 2u);
}

TEST(FeedChecks, RemovalCapHoldsLargeRemovals) {
  ListRecord before;
  before.list = "l";
  for (int i = 0; i < 100; ++i) before.entries["d" + std::to_string(i) + ".example"] = {1, ""};
  std::map<std::string, std::string> present;
  for (int i = 0; i < 85; ++i) present["d" + std::to_string(i) + ".example"] = "";
  uint64_t removed, held, in_grace;
  ListRecord r = ApplyGrace(before, present, 100000, 3600, 0.1, false, &removed, &held, &in_grace);
  EXPECT_EQ(r.entries.size(), 100u);  // 15 > 10% of 100: all held
  EXPECT_EQ(held, 15u);
  EXPECT_EQ(removed, 0u);
  r = ApplyGrace(before, present, 100000, 3600, 0.1, true, &removed, &held, &in_grace);
  EXPECT_EQ(r.entries.size(), 85u);
  EXPECT_EQ(removed, 15u);
  for (int i = 85; i < 90; ++i) present["d" + std::to_string(i) + ".example"] = "";
  r = ApplyGrace(before, present, 100000, 3600, 0.1, false, &removed, &held, &in_grace);
  EXPECT_EQ(r.entries.size(), 90u);  // exactly 10%: allowed
  EXPECT_EQ(removed, 10u);
}

}  // namespace
}  // namespace urlguard
