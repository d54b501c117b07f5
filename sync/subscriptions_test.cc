// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync/subscriptions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::ScratchDir;
using ::urlguard::testing::SourcePath;

// The golden file's subscriptions (fixtures/golden/subscriptions_v1.txt).
std::vector<Subscription> GoldenSubscriptions() {
  return {{"malware", SubscriptionOrigin::kIndex},
          {"phishing", SubscriptionOrigin::kList},
          {"social-engineering_2", SubscriptionOrigin::kIndex}};
}

TEST(Subscriptions, GoldenBytes) {
  // Changes the file format: bump kSubscriptionsFormatVersion and update docs/data-dir.md §8.
  const std::string golden = ReadFileOrDie(SourcePath("fixtures/golden/subscriptions_v1.txt"));
  std::vector<Subscription> unsorted = GoldenSubscriptions();
  std::swap(unsorted[0], unsorted[2]);
  auto bytes = SerializeSubscriptions(unsorted);  // sorted on the way
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, golden);
  auto parsed = ParseSubscriptions(golden);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, GoldenSubscriptions());
  // Nothing subscribed is the header alone.
  EXPECT_EQ(*SerializeSubscriptions({}), "urlguard subscriptions 1\n");
  EXPECT_TRUE(ParseSubscriptions("urlguard subscriptions 1\n")->empty());
}

TEST(Subscriptions, RefusesEveryMalformedFile) {
  const std::string h = "urlguard subscriptions 1\n";
  const std::vector<std::string> bad = {
      "",                                             // empty
      "urlguard subscriptions 2\n",                   // another format
      "urlguard subscriptions 1",                     // no final newline
      h + "list phishing",                            // no final newline
      h + "list phishing\r\n",                        // carriage return: not a list name
      h + "feed phishing\n",                          // unknown origin
      h + "list  phishing\n",                         // two spaces
      h + "list Phishing\n",                          // invalid name
      h + "list \n",                                  // empty name
      h + "list phishing\nlist phishing\n",           // twice
      h + "list phishing\nindex malware\n",           // not ascending
      h + "\n",                                       // empty line
  };
  for (const std::string& b : bad) {
    auto parsed = ParseSubscriptions(b);
    EXPECT_EQ(parsed.status().code(), StatusCode::kCorruption) << "'" << b << "'";
    EXPECT_FALSE(parsed.status().message().empty());
  }
  EXPECT_EQ(ParseSubscriptions(h + "list x\r\n").status().message(), "subscriptions line 2: not a valid list name");
  // One list more than kMaxLists, and a file over the byte cap.
  std::string many = h;
  for (size_t i = 0; i <= kMaxLists; ++i) many += "list l" + std::to_string(1000 + i) + "\n";
  EXPECT_EQ(ParseSubscriptions(many).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ParseSubscriptions(std::string(kMaxSubscriptionsBytes + 1, 'x')).status().code(),
            StatusCode::kResourceExhausted);
  // The writer refuses what the reader would.
  std::vector<Subscription> too_many;
  for (size_t i = 0; i <= kMaxLists; ++i) too_many.push_back({"l" + std::to_string(1000 + i), SubscriptionOrigin::kList});
  EXPECT_EQ(SerializeSubscriptions(too_many).status().code(), StatusCode::kInvalidArgument);
  too_many.resize(kMaxLists);
  auto largest = SerializeSubscriptions(too_many);
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(ParseSubscriptions(*largest)->size(), kMaxLists);
  EXPECT_EQ(SerializeSubscriptions({{"a", SubscriptionOrigin::kList}, {"a", SubscriptionOrigin::kIndex}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SerializeSubscriptions({{"A", SubscriptionOrigin::kList}}).status().code(), StatusCode::kInvalidArgument);
}

TEST(Subscriptions, LargestFileFitsTheCap) {
  std::vector<Subscription> largest;
  for (size_t i = 0; i < kMaxLists; ++i) {
    std::string name = std::to_string(1000 + i);
    name.resize(kMaxListNameBytes, 'x');
    largest.push_back({name, SubscriptionOrigin::kIndex});
  }
  auto bytes = SerializeSubscriptions(largest);
  ASSERT_TRUE(bytes.ok());
  EXPECT_LE(bytes->size(), kMaxSubscriptionsBytes);
  EXPECT_EQ(*ParseSubscriptions(*bytes), largest);
}

TEST(Subscriptions, WriteThenReadAndAMissingFileIsNotFound) {
  Env* env = Env::Default();
  const std::string dir = ScratchDir("subscriptions_test");
  EXPECT_EQ(ReadSubscriptions(env, dir).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(WriteSubscriptions(env, dir, GoldenSubscriptions()).ok());
  EXPECT_EQ(ReadFileOrDie(JoinPath(dir, "subscriptions")),
            ReadFileOrDie(SourcePath("fixtures/golden/subscriptions_v1.txt")));
  auto read = ReadSubscriptions(env, dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, GoldenSubscriptions());
  EXPECT_EQ(SubscribedNames(*read), (std::vector<std::string>{"malware", "phishing", "social-engineering_2"}));
}

}  // namespace
}  // namespace urlguard
