// SPDX-License-Identifier: Apache-2.0
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

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "format/repository_files.h"
#include "publish/lsm_state.h"
#include "publish/state_file.h"
#include "urlguard/publish.h"
#include "tests/peak_rss.h"
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
    auto names = Env::Default()->ListDir(PrivateTmpDir(repo, "phishing"));
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

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}

void WriteLines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path);
  for (const std::string& l : lines) f << l << "\n";
}

TEST(PublisherScaleTest, IncrementalVersionEqualsAFullRebuild) {
  testing::TempDir tmp("pubscale");
  SigningKey key = TestKey();
  std::string base = WriteFeed(tmp.path(), "base.txt", 60'000);
  std::vector<std::string> base_lines = Lines(base);
  // Remove every 100th line (and one entry never listed); add 700 new entries and 50 already listed.
  std::vector<std::string> removed, added, rebuilt;
  for (size_t i = 0; i < base_lines.size(); ++i) {
    if (i % 100 == 7) {
      removed.push_back(base_lines[i]);
    } else {
      rebuilt.push_back(base_lines[i]);
    }
  }
  removed.push_back("never-listed.example");
  for (int i = 0; i < 700; ++i) added.push_back("https://added" + std::to_string(i) + ".example/x");
  for (int i = 0; i < 50; ++i) added.push_back(rebuilt[static_cast<size_t>(i) * 37]);
  for (const std::string& a : added) rebuilt.push_back(a);
  const std::string add_path = tmp.path() + "/add.txt", remove_path = tmp.path() + "/remove.txt",
                    full_path = tmp.path() + "/full.txt";
  WriteLines(add_path, added);
  WriteLines(remove_path, removed);
  WriteLines(full_path, rebuilt);

  const std::string inc = tmp.path() + "/inc", full = tmp.path() + "/full";
  for (const std::string& repo : {inc, full}) {
    ASSERT_TRUE(Publish(Env::Default(), key, Options(repo, {base}, size_t{1} << 30, 1700000000)).ok());
  }
  PublishOptions io = Options(inc, {}, size_t{4} << 20, 1700003600);  // tight: spills
  io.add_inputs = {FeedSpec{FeedFormat::kPlain, "", add_path}};
  io.remove_inputs = {FeedSpec{FeedFormat::kPlain, "", remove_path}};
  auto ri = Publish(Env::Default(), key, io);
  ASSERT_TRUE(ri.ok()) << ri.status().ToString();
  auto rf = Publish(Env::Default(), key, Options(full, {full_path}, size_t{1} << 30, 1700003600));
  ASSERT_TRUE(rf.ok()) << rf.status().ToString();
  EXPECT_EQ(ri->version, 2u);
  EXPECT_EQ(rf->version, 2u);
  EXPECT_EQ(ri->input_entries, added.size() + removed.size());  // the incremental run read only the changes
  for (int li = 0; li < 3; ++li) {
    EXPECT_EQ(ri->entries[li], rf->entries[li]);
    EXPECT_EQ(ri->added[li], rf->added[li]);
    EXPECT_EQ(ri->removed[li], rf->removed[li]);
  }
  EXPECT_EQ(ri->removed[0] + ri->removed[1] + ri->removed[2], removed.size() - 1);
  EXPECT_EQ(ri->added[0] + ri->added[1] + ri->added[2], 700u);
  // The incremental run wrote only its effective change (700 new entries, the 50 already listed are no change; the
  // never-listed entry is no delete), no state file; compacting gives the full run's state file byte for byte.
  EXPECT_EQ(ri->delta_puts, 700u);
  EXPECT_EQ(ri->delta_deletes, removed.size() - 1);
  const std::string inc_private = inc + "/private/lists/phishing";
  EXPECT_TRUE(std::filesystem::exists(inc_private + "/" + StateDeltaFileName(2)));
  EXPECT_FALSE(std::filesystem::exists(inc_private + "/" + StateFileName(2)));
  EXPECT_GT(std::filesystem::file_size(inc_private + "/" + FullHashDeltaFileName(2)), 701u * 36);
  ASSERT_TRUE(CompactListState(Env::Default(), inc_private, "phishing", 2).ok());
  ExpectSameVersion(inc, full, 2);
  const std::string pub = "/public/v1/lists/phishing/";
  EXPECT_TRUE(Read(inc + pub + "diff-1-2.ugd.z") == Read(full + pub + "diff-1-2.ugd.z"));
  EXPECT_TRUE(Read(inc + "/private/seen.bin") == Read(full + "/private/seen.bin"));
  // The verify servers' full hashes too (docs/full-hash-format.md).
  const std::string ugh = "/private/lists/phishing/2.ugh";
  EXPECT_FALSE(Read(inc + ugh).empty());
  EXPECT_TRUE(Read(inc + ugh) == Read(full + ugh));

  // Two more incremental versions, the first one compacting after its commit (a threshold of one delta), the
  // second one on top of that new base: each equal to a full rebuild of the same content.
  auto step = [&](uint64_t v, const std::vector<std::string>& add, const std::vector<std::string>& remove,
                  uint32_t compact_max_deltas) {
    for (const std::string& r : remove) std::erase(rebuilt, r);
    for (const std::string& a : add) rebuilt.push_back(a);
    WriteLines(add_path, add);
    WriteLines(remove_path, remove);
    WriteLines(full_path, rebuilt);
    const int64_t now = 1700003600 + static_cast<int64_t>(v) * 60;
    PublishOptions step_o = Options(inc, {}, size_t{4} << 20, now);
    step_o.add_inputs = {FeedSpec{FeedFormat::kPlain, "", add_path}};
    step_o.remove_inputs = {FeedSpec{FeedFormat::kPlain, "", remove_path}};
    step_o.compact_max_deltas = compact_max_deltas;
    auto si = Publish(Env::Default(), key, step_o);
    ASSERT_TRUE(si.ok()) << si.status().ToString();
    auto sf = Publish(Env::Default(), key, Options(full, {full_path}, size_t{1} << 30, now));
    ASSERT_TRUE(sf.ok()) << sf.status().ToString();
    ASSERT_EQ(si->version, v);
    EXPECT_EQ(si->compacted, compact_max_deltas == 1);
    for (int li = 0; li < 3; ++li) EXPECT_EQ(si->entries[li], sf->entries[li]);
  };
  std::vector<std::string> add3, remove3, add4, remove4;
  for (size_t i = 0; i < rebuilt.size(); i += 301) remove3.push_back(rebuilt[i]);
  for (int i = 0; i < 300; ++i) add3.push_back("https://third" + std::to_string(i) + ".example/y");
  step(3, add3, remove3, /*compact_max_deltas=*/1);
  EXPECT_TRUE(std::filesystem::exists(inc_private + "/" + StateFileName(3)));
  for (int i = 0; i < 100; i += 2) remove4.push_back(add3[static_cast<size_t>(i)]);
  for (int i = 0; i < 100; ++i) add4.push_back("fourth" + std::to_string(i) + ".example");
  remove4.push_back("never-listed.example");
  step(4, add4, remove4, /*compact_max_deltas=*/0);
  EXPECT_FALSE(std::filesystem::exists(inc_private + "/" + StateFileName(4)));
  ASSERT_TRUE(CompactListState(Env::Default(), inc_private, "phishing", 4).ok());
  ExpectSameVersion(inc, full, 4);
  for (const char* d : {"diff-3-4.ugd.z", "diff-2-4.ugd.z", "diff-1-4.ugd.z"}) {
    EXPECT_TRUE(Read(inc + pub + d) == Read(full + pub + d)) << d;
  }
  EXPECT_TRUE(Read(inc + "/private/lists/phishing/4.ugh") == Read(full + "/private/lists/phishing/4.ugh"));
}

// The fixed overhead on top of the budget that docs/repository-layout.md ("Memory budget") accounts for at 1 M
// entries: process and libraries, feed blocks in flight, the seen filter, writer buffers, the full-hash index.
constexpr uint64_t kDocumentedOverheadBytes = uint64_t{64} << 20;

TEST(PublisherScaleTest, PeakMemoryStaysWithinTheBudgetPlusAFixedOverhead) {
  if (!testing::kRssMeasurable) GTEST_SKIP() << "sanitizer build: RSS measures the sanitizer's shadow memory";
  testing::TempDir tmp("pubscale");
  std::string feed = WriteFeed(tmp.path(), "feed.txt", 1'000'000);
  SigningKey key = TestKey();
  const size_t budget = size_t{32} << 20;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    // Forget the parent's peak (Linux: "5" resets VmHWM to the current RSS).
    (void)testing::ResetPeakRss();
    uint64_t before = static_cast<uint64_t>(std::max<int64_t>(0, testing::PeakRssBytes()));
    auto r = Publish(Env::Default(), key, Options(tmp.path() + "/repo", {feed}, budget, 1700000000));
    const uint64_t peak = static_cast<uint64_t>(std::max<int64_t>(0, testing::PeakRssBytes()));
    uint64_t out[3] = {r.ok() ? 1u : 0u, before, peak};
    if (r.ok()) out[0] = r->spilled_runs > 0 ? 2 : 1;
    (void)!write(fds[1], out, sizeof(out));
    _exit(0);
  }
  close(fds[1]);
  uint64_t got[3] = {0, 0, 0};
  ASSERT_EQ(read(fds[0], got, sizeof(got)), static_cast<ssize_t>(sizeof(got)));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(got[0], 2u) << "the publish failed or did not spill";
  ASSERT_GT(got[2], 0u) << "no VmHWM in /proc/self/status";
  std::printf("peak RSS %.1f MB (at start %.1f MB), budget %.1f MB, 1 M entries\n", got[2] / 1048576.0,
              got[1] / 1048576.0, budget / 1048576.0);
  EXPECT_LT(got[2], budget + kDocumentedOverheadBytes);
}

TEST(PublisherScaleTest, CompactListFoldsTheDeltasOfTheCommittedVersion) {
  testing::TempDir tmp("pubscale");
  SigningKey key = TestKey();
  const std::string repo = tmp.path() + "/repo", priv = repo + "/private/lists/phishing/";
  ASSERT_TRUE(Publish(Env::Default(), key, Options(repo, {WriteFeed(tmp.path(), "base.txt", 2000)}, size_t{1} << 30,
                                                   1700000000)).ok());
  for (int v = 2; v <= 3; ++v) {
    PublishOptions o = Options(repo, {}, size_t{1} << 30, 1700000000 + v * 60);
    o.add_inputs = {FeedSpec{FeedFormat::kPlain, "", WriteFeed(tmp.path(), "add.txt", 10, v)}};
    ASSERT_TRUE(Publish(Env::Default(), key, o).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(priv + StateFileName(3)));
  auto r = CompactList(repo, "phishing", /*keep_deltas=*/1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 3u);
  EXPECT_EQ(r->base_version, 1u);
  EXPECT_TRUE(r->compacted);
  EXPECT_TRUE(std::filesystem::exists(priv + StateFileName(3)));
  EXPECT_FALSE(std::filesystem::exists(priv + StateFileName(1)));       // superseded
  EXPECT_FALSE(std::filesystem::exists(priv + StateDeltaFileName(2)));  // past the retention of one version
  EXPECT_TRUE(std::filesystem::exists(priv + StateDeltaFileName(3)));
  auto again = CompactList(repo, "phishing");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->compacted);
  // The next incremental version builds on the new base.
  PublishOptions o = Options(repo, {}, size_t{1} << 30, 1700000000 + 4 * 60);
  o.remove_inputs = {FeedSpec{FeedFormat::kPlain, "", WriteFeed(tmp.path(), "add.txt", 10, 3)}};
  auto r4 = Publish(Env::Default(), key, o);
  ASSERT_TRUE(r4.ok()) << r4.status().ToString();
  EXPECT_EQ(r4->delta_deletes, 10u);
  EXPECT_EQ(CompactList(repo, "nope").status().code(), StatusCode::kNotFound);
}

TEST(PublisherScaleTest, IncrementalNeedsAPreviousVersion) {
  testing::TempDir tmp("pubscale");
  SigningKey key = TestKey();
  std::string add = WriteFeed(tmp.path(), "add.txt", 10);
  PublishOptions o = Options(tmp.path() + "/repo", {}, size_t{1} << 30, 1700000000);
  o.add_inputs = {FeedSpec{FeedFormat::kPlain, "", add}};
  EXPECT_EQ(Publish(Env::Default(), key, o).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace urlguard

namespace urlguard {
namespace {

// The guard's input check reads a streamed feed block by block: an error page far past the first block is found,
// the counts are the feed's own, and nothing is written for the refused version (docs/feeds.md, "The publication
// guard").
TEST(Publisher, GuardFindsAnErrorPagePastTheFirstBlock) {
  testing::TempDir tmp("pubguard");
  const std::string path = tmp.path() + "/feed.txt";
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "d" + std::to_string(i) + ".example\n";
  testing::WriteFileOrDie(path, text + "<html><body>502 Bad Gateway</body></html>\n");
  SigningKey key = TestKey();
  PublishOptions o = Options(tmp.path() + "/repo", {path}, size_t{1} << 30, 1700000000);
  o.block_bytes = 1000;  // many blocks; the page is in the last one
  o.check_inputs = true;
  PublishRefusal refusal = PublishRefusal::kNone;
  o.refusal = &refusal;
  auto r = Publish(Env::Default(), key, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refusal, PublishRefusal::kInputRefused);
  EXPECT_NE(
      r.status().message().find(path + ": refused: looks like an HTML page, not a feed (5000 entries, 1 rejected"),
      std::string::npos)
      << r.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/repo/public/v1/lists/phishing/manifest.json"));
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/repo/private/lists/phishing/1.ugs"));
  // Taken on purpose: published, the page's line rejected.
  o.accepted_inputs = {path};
  auto accepted = Publish(Env::Default(), key, o);
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_EQ(refusal, PublishRefusal::kNone);
  EXPECT_EQ(accepted->rejected, 1u);
}

}  // namespace
}  // namespace urlguard
