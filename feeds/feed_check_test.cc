// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feed_check.h"

#include <gtest/gtest.h>

namespace urlguard {
namespace {

FeedContentStats Stats(uint64_t entries, uint64_t rejected, bool html = false) {
  FeedContentStats s;
  s.bytes = 100;
  s.entries = entries;
  s.rejected = rejected;
  s.looks_like_html = html;
  return s;
}

TEST(FeedCheck, ContentRules) {
  EXPECT_EQ(CheckFeedContent(Stats(1000, 0), 0.25), "");
  EXPECT_EQ(CheckFeedContent(Stats(3, 1), 0.25), "");  // exactly 25%: counts
  FeedContentStats empty;
  EXPECT_EQ(CheckFeedContent(empty, 0.25), "empty");
  EXPECT_EQ(CheckFeedContent(Stats(3, 2, /*html=*/true), 0.25), "looks like an HTML page, not a feed");
  EXPECT_EQ(CheckFeedContent(Stats(0, 4), 0.25), "no entries (4 rejected lines)");
  EXPECT_EQ(CheckFeedContent(Stats(2, 3), 0.25),
            "3 of 5 lines rejected (60%, more than max_rejected_fraction 25%)");
}

TEST(FeedCheck, InputFileRefusedUnlessAccepted) {
  Status s = CheckInputFile("feeds/x.txt", Stats(3, 2, true), 0.25, /*accepted=*/false);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("feeds/x.txt: refused: looks like an HTML page"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("--accept feeds/x.txt"), std::string::npos) << s.ToString();
  EXPECT_TRUE(CheckInputFile("feeds/x.txt", Stats(3, 2, true), 0.25, /*accepted=*/true).ok());
}

// The rule of docs/feeds.md, "The publication guard": at most 100 entries always, else at most the share.
TEST(FeedCheck, RemovalCapAndItsFloor) {
  EXPECT_EQ(CheckRemoval(0, 0, 0.1), "");
  EXPECT_EQ(CheckRemoval(100, 100, 0.1), "");     // a tiny list may be emptied
  EXPECT_EQ(CheckRemoval(100, 1000, 0.1), "");    // exactly 10%
  EXPECT_EQ(CheckRemoval(500, 100000, 0.1), "");  // 0.5%
  EXPECT_EQ(CheckRemoval(101, 150, 0.1),
            "would remove 101 of the previous version's 150 entries (67%, more than the cap of 10%)");
  EXPECT_NE(CheckRemoval(997, 1000, 0.1), "");  // issue 19
  EXPECT_EQ(CheckRemoval(997, 1000, 1.0), "");
}

TEST(FeedCheck, AcceptNamesAnInputByArgumentOrPath) {
  auto paths = ResolveAcceptedInputs({"a.txt", "plain:b.txt"}, {"hosts:a.txt", "plain:b.txt"});
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  EXPECT_EQ(*paths, (std::vector<std::string>{"a.txt", "b.txt"}));
  auto wrong = ResolveAcceptedInputs({"c.txt"}, {"a.txt"});
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace urlguard
