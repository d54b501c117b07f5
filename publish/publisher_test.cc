// Copyright urlguard authors.
//
// The publisher at scale, in small: a publish that spills under a tight memory budget gives byte-identical files to
// one that fits in memory; a bad line is reported with its line number across feed blocks; a publisher killed
// while spilling leaves the previous version serving and no stray files after its next run.
#include "publish/publisher.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "publish/state_file.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

// Deterministic feed of `n` entries: URLs, domains and addresses, with some duplicates.
std::string WriteFeed(const std::string& dir, const std::string& name, uint64_t n, uint64_t salt = 0) {
  std::string path = dir + "/" + name;
  std::ofstream f(path);
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t x = (i * 2654435761u + salt) % (n * 4 + 7);
    switch (i % 8) {
      case 0: f << "d" << x << ".example\n"; break;
      case 1: f << "10." << (x >> 16 & 255) << "." << (x >> 8 & 255) << "." << (x & 255) << "\n"; break;
      case 2: f << "http://h" << (x % 997) << ".example/p/" << i << "\n"; break;  // repeats across i
      default: f << "https://site" << x << ".example/a/b?q=" << (x % 13) << "\n"; break;
    }
  }
  return path;
}

PublishOptions Options(const std::string& repo, std::vector<std::string> feeds, size_t budget, int64_t now) {
  PublishOptions o;
  o.repo_dir = repo;
  o.list = "phishing";
  for (const std::string& f : feeds) o.inputs.push_back(FeedSpec{FeedFormat::kPlain, "", f});
  o.now_unix = now;
  o.memory_budget = budget;
  return o;
}

std::string Read(const std::string& path) { return testing::ReadFileOrDie(path); }

// Every file a version consists of, public and private (the SQLite store is compared by content elsewhere).
void ExpectSameVersion(const std::string& a, const std::string& b, uint64_t v) {
  const std::string pub = "/public/v1/lists/phishing/";
  const std::string priv = "/private/lists/phishing/";
  for (const std::string& name : {pub + "manifest.json", pub + "manifest.sig",
                                  pub + "snapshot-" + std::to_string(v) + ".ugs.z",
                                  priv + std::to_string(v) + ".ugs", priv + std::to_string(v) + ".entries",
                                  priv + StateFileName(v)}) {
    EXPECT_TRUE(Read(a + name) == Read(b + name)) << name << " differs";
  }
}

SigningKey TestKey() { return std::move(SigningKey::Generate()).value(); }

TEST(PublisherScaleTest, SpillingUnderATightBudgetIsByteIdenticalToInMemory) {
  testing::TempDir tmp("pubscale");
  std::string feed = WriteFeed(tmp.path(), "feed.txt", 1'000'000);
  SigningKey key = TestKey();
  const std::string big = tmp.path() + "/big", small = tmp.path() + "/small";
  auto r1 = Publish(Env::Default(), key, Options(big, {feed}, size_t{4} << 30, 1700000000));
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->spilled_runs, 0u);
  auto r2 = Publish(Env::Default(), key, Options(small, {feed}, size_t{16} << 20, 1700000000));
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_GT(r2->spilled_runs, 2u);
  EXPECT_EQ(r1->input_entries, 1'000'000u);
  for (int li = 0; li < 3; ++li) EXPECT_EQ(r1->entries[li], r2->entries[li]);
  ExpectSameVersion(big, small, 1);
  // Nothing left in the scratch directory.
  auto left = Env::Default()->ListDir(small + "/private/tmp");
  EXPECT_TRUE(!left.ok() || left->empty());
}

TEST(PublisherScaleTest, ThreadCountDoesNotChangeTheOutput) {
  testing::TempDir tmp("pubscale");
  std::string feed = WriteFeed(tmp.path(), "feed.txt", 50'000);
  SigningKey key = TestKey();
  PublishOptions one = Options(tmp.path() + "/one", {feed}, size_t{1} << 30, 1700000000);
  one.threads = 1;
  one.block_bytes = 4096;
  PublishOptions two = Options(tmp.path() + "/two", {feed}, size_t{1} << 30, 1700000000);
  two.threads = 2;
  two.block_bytes = 4096;
  ASSERT_TRUE(Publish(Env::Default(), key, one).ok());
  ASSERT_TRUE(Publish(Env::Default(), key, two).ok());
  ExpectSameVersion(tmp.path() + "/one", tmp.path() + "/two", 1);
}

TEST(PublisherScaleTest, BadLinesAreReportedWithTheirLineAcrossBlocks) {
  testing::TempDir tmp("pubscale");
  std::string path = tmp.path() + "/feed.txt";
  {
    std::ofstream f(path);
    for (int i = 1; i <= 5000; ++i) {
      if (i == 1234 || i == 4321) {
        f << "http://[::1/\n";  // not a URL
      } else {
        f << "d" << i << ".example\n";
      }
    }
  }
  SigningKey key = TestKey();
  PublishOptions o = Options(tmp.path() + "/repo", {path}, size_t{1} << 30, 1700000000);
  o.block_bytes = 1000;  // many blocks
  auto r = Publish(Env::Default(), key, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->input_lines, 5000u);
  EXPECT_EQ(r->rejected, 2u);
  ASSERT_EQ(r->problems.size(), 2u);
  EXPECT_EQ(r->problems[0].line, 1234u);
  EXPECT_EQ(r->problems[1].line, 4321u);
  EXPECT_EQ(r->entries[0], 4998u);
}

TEST(PublisherScaleTest, KilledWhileSpillingLeavesThePreviousVersionAndNoStrayFiles) {
  testing::TempDir tmp("pubscale");
  SigningKey key = TestKey();
  const std::string repo = tmp.path() + "/repo";
  std::string small = WriteFeed(tmp.path(), "small.txt", 1000);
  ASSERT_TRUE(Publish(Env::Default(), key, Options(repo, {small}, size_t{16} << 20, 1700000000)).ok());
  const std::string manifest = Read(repo + "/public/v1/lists/phishing/manifest.json");
  std::string big = WriteFeed(tmp.path(), "big.txt", 1'500'000, 99);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto r = Publish(Env::Default(), key, Options(repo, {big}, size_t{4} << 20, 1700003600));
    _exit(r.ok() ? 0 : 1);
  }
  // Wait until the child has spilled a run, then kill it.
  bool spilled = false;
  for (int i = 0; i < 6000 && !spilled; ++i) {
    auto names = Env::Default()->ListDir(repo + "/private/tmp");
    if (names.ok()) {
      for (const std::string& n : *names) spilled |= n.size() > 4 && n.substr(n.size() - 4) == ".run";
    }
    if (!spilled) usleep(5000);
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(spilled) << "the child never spilled";
  ASSERT_TRUE(WIFSIGNALED(status));
  // The previous version still serves.
  EXPECT_EQ(Read(repo + "/public/v1/lists/phishing/manifest.json"), manifest);
  EXPECT_FALSE(Env::Default()->ListDir(repo + "/private/tmp")->empty());  // the killed run's leftovers

  auto next = Publish(Env::Default(), key, Options(repo, {small}, size_t{16} << 20, 1700007200));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->version, 2u);
  auto left = Env::Default()->ListDir(repo + "/private/tmp");
  EXPECT_TRUE(!left.ok() || left->empty());
}

}  // namespace
}  // namespace urlguard
