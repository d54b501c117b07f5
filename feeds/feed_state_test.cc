// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feed_state.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "tests/test_util.h"

namespace urlguard {
namespace {

FeedMeta SampleMeta() {
  FeedMeta m;
  m.etag = "\"5f3c-61a2\"";
  m.last_modified = "Tue, 24 Nov 2026 10:00:00 GMT";
  m.last_success_unix = 1795600000;
  m.last_attempt_unix = 1795603600;
  m.entries = 1000;
  m.rejected = 2;
  m.bytes = 12893;
  m.consecutive_failures = 1;
  m.quarantined = true;
  m.reason = "looks like an HTML page, not a feed";
  m.quarantine_path = "/srv/urlguard/repo/private/feeds/openphish/quarantine/1795603600.body";
  return m;
}

ListRecord SampleRecord() {
  ListRecord r;
  r.list = "phishing";
  r.entries["10.0.0.0/8"] = {0, ""};
  r.entries["evil.example"] = {0, "phishing"};
  r.entries["http://bad.example/login.php"] = {1795600000, "malware_download"};
  return r;
}

// Pins the metadata format (docs/feeds-file.md §5): files operators have on disk must keep reading.
TEST(FeedState, MetaGolden) {
  const std::string bytes = SerializeFeedMeta(SampleMeta());
  const std::string golden = testing::SourcePath("fixtures/golden/feed_meta_v1.txt");
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(golden, std::ios::binary) << bytes;
  EXPECT_EQ(bytes, testing::ReadFileOrDie(golden)) << "feed metadata format changed";
  auto back = ParseFeedMeta(testing::ReadFileOrDie(golden));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, SampleMeta());
}

TEST(FeedState, ListRecordGolden) {
  const std::string bytes = SerializeListRecord(SampleRecord());
  const std::string golden = testing::SourcePath("fixtures/golden/feed_list_record_v1.txt");
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(golden, std::ios::binary) << bytes;
  EXPECT_EQ(bytes, testing::ReadFileOrDie(golden)) << "list record format changed";
  auto back = ParseListRecord(testing::ReadFileOrDie(golden));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, SampleRecord());
}

TEST(FeedState, MetaFieldsMadePrintable) {
  FeedMeta m;
  m.etag = std::string("a\nb\x01", 4);
  m.reason = "x\r\ny";
  auto back = ParseFeedMeta(SerializeFeedMeta(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->etag, "a?b?");
  EXPECT_EQ(back->reason, "x??y");
}

// A damaged file is an error naming the line, never half-read.
TEST(FeedState, DamageRefused) {
  const std::string good = SerializeFeedMeta(SampleMeta());
  EXPECT_FALSE(ParseFeedMeta(good.substr(0, good.size() - 1)).ok());           // no final newline
  EXPECT_FALSE(ParseFeedMeta(good + "x\n").ok());                               // bytes after end
  std::string swapped = good;
  swapped.replace(swapped.find("entries 1000"), 12, "entries 10x0");
  auto s = ParseFeedMeta(swapped);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorruption);
  EXPECT_NE(s.status().message().find("line 6"), std::string::npos) << s.status().ToString();
  std::string q = good;
  q.replace(q.find("quarantined 1"), 13, "quarantined 2");
  EXPECT_FALSE(ParseFeedMeta(q).ok());

  const std::string rec = SerializeListRecord(SampleRecord());
  EXPECT_FALSE(ParseListRecord(rec.substr(0, rec.find("end"))).ok());          // cut
  std::string count = rec;
  count.replace(count.find("end 3"), 5, "end 2");
  EXPECT_FALSE(ParseListRecord(count).ok());
  // Out of order (or duplicate) values.
  EXPECT_FALSE(ParseListRecord("urlguard-feed-list 1\nlist l\ne 0 - b.example\ne 0 - a.example\nend 2\n").ok());
  EXPECT_FALSE(ParseListRecord("urlguard-feed-list 1\nlist l\ne 0 - a.example\ne 0 - a.example\nend 2\n").ok());
  EXPECT_FALSE(ParseListRecord("urlguard-feed-list 1\nlist l\ne 0 Bad a.example\nend 1\n").ok());
  EXPECT_FALSE(ParseListRecord("urlguard-feed-list 1\nlist l\ne 0 - a b\nend 1\n").ok());
  EXPECT_TRUE(ParseListRecord("urlguard-feed-list 1\nlist l\nend 0\n").ok());
}

}  // namespace
}  // namespace urlguard
