// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// End to end through the real components: entries -> ListBuilder -> snapshot file on disk -> mmap -> Checker.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "core/snapshot.h"
#include "platform/env.h"
#include "publish/list_builder.h"
#include "tests/test_util.h"
#include "urlguard/checker.h"

namespace urlguard {
namespace {

std::string BuildList(const std::string& dir, const std::string& name, const std::vector<std::string>& entries,
                      FilterKind filter = FilterKind::kFingerprintArray, double fp_rate = 0.001) {
  ListBuilder b;
  for (const std::string& e : entries) EXPECT_TRUE(b.Add(e).ok()) << e;
  BuildOptions o;
  o.list_name = name;
  o.version = 5;
  o.created_unix = 1700000000;
  o.fp_rate = fp_rate;
  o.filter = filter;
  LayerBuildStats stats[3];
  auto content = b.Finish(o, stats);
  EXPECT_TRUE(content.ok()) << content.status().ToString();
  auto bytes = BuildSnapshot(*content);
  EXPECT_TRUE(bytes.ok());
  std::string path = dir + "/" + name + ".ugs";
  EXPECT_TRUE(WriteFileAtomic(Env::Default(), path, *bytes).ok());
  return path;
}

class CheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("checker");
    phishing_ = BuildList(dir_, "phishing",
                          {"evil.example", "http://secure-bank.example/login.php", "shop.example/checkout/?step=pay",
                           "http://203.0.113.50/paypal/", "deep.a.b.c.example/x/y/z.html"});
    malware_ = BuildList(dir_, "malware", {"198.51.100.0/24", "192.0.2.77", "2001:db8:bad::/48",
                                           "http://downloads.example/setup.exe", "updates.example/flash/"});
    auto c = Checker::Open({phishing_, malware_});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    checker_ = std::move(c).value();
  }

  void ExpectHit(const std::string& url, const std::string& list, Layer layer, const std::string& expression) {
    Verdict v = checker_->Check(url);
    ASSERT_EQ(v.kind, VerdictKind::kHit) << url;
    bool found = false;
    for (const Match& m : v.matches) {
      found |= m.list == list && m.layer == layer && m.expression == expression;
    }
    EXPECT_TRUE(found) << url << " did not match " << list << "/" << LayerName(layer) << "/" << expression;
  }

  std::string dir_, phishing_, malware_;
  std::unique_ptr<Checker> checker_;
};

TEST_F(CheckerTest, EverySpellingOfAListedUrlIsFound) {
  // Zero false negatives: every spelling that canonicalizes to a listed URL hits.
  const char* spellings[] = {
      "http://secure-bank.example/login.php",
      "HTTP://SECURE-BANK.EXAMPLE/login.php",
      "http://secure-bank.example:8080/login.php",
      "https://user:pass@secure-bank.example/login.php",
      "http://secure-bank.example./login.php",
      "http://secure-bank.example/login.php#top",
      "http://secure-bank.example/./a/../login.php",
      "http://secure-bank.example//login.php",
      "http://secure-bank.example/%6C%6F%67%69%6E.php",
      "http://secure-bank.example/%256C%256F%2567in.php",
      "http://secure\t-bank.example/log\nin.php",
      "  http://secure-bank.example/login.php  ",
      "secure-bank.example/login.php",
      "http://secure-bank.example/login.php?session=123",
      "http://%73ecure-bank.example/login.php",
      "http://..secure-bank.example../login.php",
  };
  for (const char* s : spellings) ExpectHit(s, "phishing", Layer::kUrl, "secure-bank.example/login.php");
  ExpectHit("http://a.b.c.evil.example/anything/at/all?x=1", "phishing", Layer::kDomain, "evil.example/");
  ExpectHit("http://shop.example/checkout/?step=pay", "phishing", Layer::kUrl, "shop.example/checkout/?step=pay");
  ExpectHit("http://203.0.113.50/paypal/login", "phishing", Layer::kUrl, "203.0.113.50/paypal/");
  ExpectHit("http://3405803826/paypal/login", "phishing", Layer::kUrl, "203.0.113.50/paypal/");  // decimal IP
  ExpectHit("http://0xcb.0x00.0x71.0x32/paypal/", "phishing", Layer::kUrl, "203.0.113.50/paypal/");
  ExpectHit("http://deep.a.b.c.example/x/y/z.html", "phishing", Layer::kUrl, "deep.a.b.c.example/x/y/z.html");
  ExpectHit("http://198.51.100.200/", "malware", Layer::kIp, "198.51.100.0/24");
  ExpectHit("http://0300.0.02.0115/x", "malware", Layer::kIp, "192.0.2.77/32");  // octal
}

TEST_F(CheckerTest, CleanUrlsAreSafeAndOrderIsIrrelevant) {
  for (const char* s : {"http://www.example.com/", "http://secure-bank.example/", "http://evil.example.com/",
                        "http://notevil.example/", "http://shop.example/checkout/?step=other",
                        "http://198.51.101.1/", "http://[2001:db8:bae::1]/"}) {
    Verdict v = checker_->Check(s);
    EXPECT_EQ(v.kind, VerdictKind::kSafe) << s;
    EXPECT_TRUE(v.matches.empty());
  }
}

TEST_F(CheckerTest, InvalidInputIsNeverAMatch) {
  for (const char* s : {"", "javascript:alert(1)", "mailto:a@evil.example", "http://", "/relative/path",
                        "data:text/html,evil.example"}) {
    Verdict v = checker_->Check(s);
    EXPECT_EQ(v.kind, VerdictKind::kInvalid) << s;
    EXPECT_FALSE(v.error.empty());
  }
  EXPECT_EQ(checker_->Check(std::string(9000, 'a')).kind, VerdictKind::kInvalid);
}

TEST_F(CheckerTest, HostAndIpLookups) {
  EXPECT_EQ(checker_->CheckHost("evil.example").kind, VerdictKind::kHit);
  EXPECT_EQ(checker_->CheckHost("mail.evil.example").kind, VerdictKind::kHit);
  EXPECT_EQ(checker_->CheckHost("example").kind, VerdictKind::kSafe);
  EXPECT_EQ(checker_->CheckHost("evil.example/path").kind, VerdictKind::kInvalid);
  EXPECT_EQ(checker_->CheckIp("198.51.100.9").kind, VerdictKind::kHit);
  EXPECT_EQ(checker_->CheckIp("192.0.2.77").kind, VerdictKind::kHit);
  EXPECT_EQ(checker_->CheckIp("192.0.2.78").kind, VerdictKind::kSafe);
  EXPECT_EQ(checker_->CheckIp("2001:db8:bad:1::5").kind, VerdictKind::kHit);
  EXPECT_EQ(checker_->CheckIp("[2001:db8:bad::5]").kind, VerdictKind::kHit);
  EXPECT_EQ(checker_->CheckIp("2001:db8:bae::5").kind, VerdictKind::kSafe);
  EXPECT_EQ(checker_->CheckIp("not-an-ip").kind, VerdictKind::kInvalid);
  EXPECT_EQ(checker_->CheckIp("198.51.100.0/24").kind, VerdictKind::kInvalid);
}

TEST_F(CheckerTest, BatchAgreesWithSingleLookups) {
  std::vector<std::string> urls = {"http://evil.example/", "http://www.example.com/", "javascript:x",
                                   "http://198.51.100.1/", "http://secure-bank.example/login.php"};
  for (int i = 0; i < 40; ++i) urls.push_back("http://host" + std::to_string(i) + ".example/p?i=" + std::to_string(i));
  std::vector<std::string_view> views(urls.begin(), urls.end());
  std::vector<Verdict> out;
  checker_->CheckBatch(views, &out);
  ASSERT_EQ(out.size(), urls.size());
  for (size_t i = 0; i < urls.size(); ++i) {
    Verdict single = checker_->Check(urls[i]);
    EXPECT_EQ(out[i].kind, single.kind) << urls[i];
    EXPECT_EQ(out[i].matches.size(), single.matches.size()) << urls[i];
  }
}

TEST_F(CheckerTest, ListsDescribeWhatIsOpen) {
  auto lists = checker_->Lists();
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0].name, "phishing");
  EXPECT_EQ(lists[0].version, 5u);
  EXPECT_EQ(lists[0].entries, 5u);
  EXPECT_EQ(lists[1].layer_entries[static_cast<int>(Layer::kIp)], 3u);
  EXPECT_EQ(lists[1].layer_filter[static_cast<int>(Layer::kIp)], "fingerprint-array");
  EXPECT_EQ(lists[0].sha256_hex.size(), 64u);
}

TEST_F(CheckerTest, ManyThreadsLookUpAtOnce) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        if (checker_->Check("http://x" + std::to_string(i) + ".evil.example/").kind != VerdictKind::kHit) ++wrong;
        if (checker_->Check("http://y" + std::to_string(i * 8 + t) + ".clean.example/").kind == VerdictKind::kInvalid) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CheckerOpen, RefusesBadFilesWithClearErrors) {
  std::string dir = testing::ScratchDir("checker-open");
  std::string good = BuildList(dir, "good", {"evil.example"});
  std::string bytes = testing::ReadFileOrDie(good);

  auto missing = Checker::Open({dir + "/missing.ugs"});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  testing::WriteFileOrDie(dir + "/foreign.ugs", "<html>not a snapshot</html>" + std::string(100, ' '));
  auto foreign = Checker::Open({dir + "/foreign.ugs"});
  EXPECT_EQ(foreign.status().code(), StatusCode::kCorruption);
  EXPECT_NE(foreign.status().message().find("foreign.ugs"), std::string::npos);

  testing::WriteFileOrDie(dir + "/truncated.ugs", bytes.substr(0, bytes.size() / 2));
  auto truncated = Checker::Open({dir + "/truncated.ugs"});
  EXPECT_EQ(truncated.status().code(), StatusCode::kCorruption);
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos) << truncated.status().message();

  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  testing::WriteFileOrDie(dir + "/flipped.ugs", flipped);
  EXPECT_EQ(Checker::Open({dir + "/flipped.ugs"}).status().code(), StatusCode::kCorruption);

  testing::WriteFileOrDie(dir + "/empty.ugs", "");
  EXPECT_FALSE(Checker::Open({dir + "/empty.ugs"}).ok());

  EXPECT_EQ(Checker::Open({good, good}).status().code(), StatusCode::kInvalidArgument);  // same list twice
  EXPECT_FALSE(Checker::Open({}).ok());
  EXPECT_TRUE(Checker::Open({good}).ok());
}

TEST(CheckerOpen, OpenDirectoryFindsSnapshots) {
  std::string dir = testing::ScratchDir("checker-dir");
  EXPECT_EQ(Checker::OpenDirectory(dir).status().code(), StatusCode::kNotFound);
  BuildList(dir, "a", {"a.example"});
  BuildList(dir, "b", {"b.example"});
  auto c = Checker::OpenDirectory(dir);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->Lists().size(), 2u);
  EXPECT_EQ((*c)->Check("http://b.example/").kind, VerdictKind::kHit);
}

// The measured per-URL false-positive rate stays under the configured target, for both filter kinds, on URLs
// of the shape the sizing assumes (2 whole-host and 4 other expressions: within kExpected*Probes).
// Fixed seeds; the bound is the target plus 4 standard deviations of a binomial at that rate.
TEST(CheckerFalsePositives, PerUrlRateMeetsTheTarget) {
  std::string dir = testing::ScratchDir("checker-fp");
  std::mt19937_64 rng(2024);
  std::vector<std::string> entries;
  for (int i = 0; i < 60000; ++i) {
    std::string host = "h" + std::to_string(rng() % 100000000) + ".listed.example";
    entries.push_back(i % 2 ? host : host + "/p" + std::to_string(i) + ".html");
  }
  for (FilterKind filter : {FilterKind::kFingerprintArray, FilterKind::kBlockedBloom}) {
    std::string path = BuildList(dir, filter == FilterKind::kBlockedBloom ? "bloom" : "fa", entries, filter, 0.01);
    auto c = Checker::Open({path});
    ASSERT_TRUE(c.ok());
    for (int i = 0; i < 2000; ++i) ASSERT_EQ((*c)->Check(entries[i]).kind, VerdictKind::kHit) << entries[i];
    const int n = 100000;
    int hits = 0;
    for (int i = 0; i < n; ++i) {
      std::string url = "http://www.c" + std::to_string(rng() % 1000000) + "-clean.example/page" +
                        std::to_string(i) + ".html?q=" + std::to_string(i);
      hits += (*c)->Check(url).kind == VerdictKind::kHit;
    }
    double rate = static_cast<double>(hits) / n;
    double bound = 0.01 + 4 * std::sqrt(0.01 * 0.99 / n);
    EXPECT_LT(rate, bound) << FilterKindName(filter) << " per-URL false-positive rate " << rate;
    EXPECT_GT(hits, 0) << "no false positive at all: the measurement would not see a regression";
  }
}

}  // namespace
}  // namespace urlguard
