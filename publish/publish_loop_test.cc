// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// RunPublishLoop (publish/publish_loop.cc) in process, on a real repository and real files: cycles turn change
// files into versions with the right content, a spool left mid-claim or mid-finish by a crash is completed
// without losing or doubling a change, a refused file goes to rejected/ while the rest publishes, no change makes
// no version (until the refresh is due), the after-commit hook runs off the loop's thread. The kill -9 of the
// real binary at the fault points is tests/publish_loop_e2e_test.sh.
#include "publish/publish_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "format/repository_files.h"
#include "publish/publisher.h"
#include "tests/test_util.h"
#include "urlguard/checker.h"
#include "urlguard/publish.h"

namespace urlguard {
namespace {

TEST(SpoolNames, ChangeFilesAndMarkers) {
  EXPECT_TRUE(IsSpoolChangeFileName("feed-1.add"));
  EXPECT_TRUE(IsSpoolChangeFileName("x.remove"));
  EXPECT_FALSE(IsSpoolChangeFileName(".add"));
  EXPECT_FALSE(IsSpoolChangeFileName(".x.add"));        // someone's temporary
  EXPECT_FALSE(IsSpoolChangeFileName("x.add.tmp"));
  EXPECT_FALSE(IsSpoolChangeFileName("x.remove.part"));
  EXPECT_FALSE(IsSpoolChangeFileName("target-3"));
  EXPECT_TRUE(IsSpoolAddFileName("x.add"));
  EXPECT_FALSE(IsSpoolAddFileName("x.remove"));

  EXPECT_EQ(ClaimMarkerName(42), "target-42");
  EXPECT_EQ(ParseClaimMarkerName("target-42"), 42u);
  EXPECT_EQ(ParseClaimMarkerName("target-18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"target-", "target-0", "target-01", "target-18446744073709551616", "target-1x", "x-1",
                          "target--1", "target-99999999999999999999"}) {
    EXPECT_FALSE(ParseClaimMarkerName(bad).has_value()) << bad;
  }
}

TEST(ParseCommittedVersion, ReadsAManifestAndANewerFormatsTopLevelMembers) {
  // A format 1 manifest as the publisher writes it, from a real publication below; here the fallback alone: a
  // manifest ParseManifest refuses (a newer format) still tells its version, and nested members do not count.
  const std::string newer =
      "{\n  \"checkpoint\": {\n    \"version\": 7\n  },\n  \"created_unix\": 1700000000,\n"
      "  \"format\": 99,\n  \"version\": 12\n}\n";
  auto v = ParseCommittedVersion(newer);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->version, 12u);
  EXPECT_EQ(v->created_unix, 1700000000);
  for (const char* bad : {"", "{}", "{\n  \"format\": 99,\n  \"version\": 0,\n  \"created_unix\": 1\n}\n",
                          "{\n  \"checkpoint\": {\n    \"version\": 7,\n    \"created_unix\": 1\n  }\n}\n",
                          "{\n  \"version\": 99999999999999999999,\n  \"created_unix\": 1\n}\n",
                          "{\n  \"version\": 3\n}\n"}) {
    EXPECT_FALSE(ParseCommittedVersion(bad).ok()) << bad;
  }
}

TEST(Cadence, TheFirstSlotIsOnTheCommittedVersionsCadence) {
  const int64_t c = 1700000000;
  EXPECT_EQ(SecondsToCadenceSlot(c, c, 60), 0);
  EXPECT_EQ(SecondsToCadenceSlot(c + 1, c, 60), 59);
  EXPECT_EQ(SecondsToCadenceSlot(c + 17, c, 60), 43);
  EXPECT_EQ(SecondsToCadenceSlot(c + 60, c, 60), 0);
  EXPECT_EQ(SecondsToCadenceSlot(c + 86400 + 7, c, 60), 53);  // a day later: still on it
  EXPECT_EQ(SecondsToCadenceSlot(c - 7, c, 60), 7);           // a clock that went back: the slot ahead
  EXPECT_EQ(SecondsToCadenceSlot(c - 3600 - 7, c, 60), 7);
  EXPECT_EQ(SecondsToCadenceSlot(c + 5, c, 1), 0);
  EXPECT_EQ(SecondsToCadenceSlot(c + 5, c, 1800), 1795);
  // No clock says these: start at once.
  EXPECT_EQ(SecondsToCadenceSlot(c, -1, 60), 0);
  EXPECT_EQ(SecondsToCadenceSlot(c, INT64_MAX, 60), 0);
  EXPECT_EQ(SecondsToCadenceSlot(INT64_MIN, c, 60), 0);
  EXPECT_EQ(SecondsToCadenceSlot(c, c, 0), 0);
  for (int64_t now : {int64_t{0}, c - 1, c + 59, (int64_t{1} << 40) - 1}) {
    const int64_t w = SecondsToCadenceSlot(now, c, 60);
    EXPECT_GE(w, 0);
    EXPECT_LT(w, 60);
    EXPECT_EQ((now + w - c) % 60, 0) << now;
  }
}

TEST(SpoolNames, UnusedNameKeepsTheSuffix) {
  testing::TempDir dir("publish_loop_names");
  Env* env = Env::Default();
  EXPECT_EQ(UnusedNameIn(env, dir.path(), "a.add"), "a.add");
  testing::WriteFileOrDie(dir.Join("a.add"), "x\n");
  EXPECT_EQ(UnusedNameIn(env, dir.path(), "a.add"), "a-2.add");
  testing::WriteFileOrDie(dir.Join("a-2.add"), "x\n");
  EXPECT_EQ(UnusedNameIn(env, dir.path(), "a.add"), "a-3.add");
}

TEST(AfterCommitThread, RunsOffTheCallersThreadAndCoalesces) {
  std::atomic<bool> release{false};
  std::atomic<int> started{0};
  {
    AfterCommitThread t([&] {
      ++started;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    t.Trigger();
    while (started == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // The hook is blocked; Trigger() must not be.
    t.Trigger();
    t.Trigger();
    t.Trigger();
    EXPECT_EQ(t.runs(), 0u);
    release = true;
  }  // destruction waits for the pending run
  EXPECT_EQ(started, 2);  // the first run, then one for the three triggers that came while it ran
}

// A repository with a first version of "phishing", and a spool.
class PublishLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto keys = GenerateKeyPair(dir_.Join("keys"));
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    key_ = keys->private_key_path;
    testing::WriteFileOrDie(dir_.Join("base.txt"), "base1.example\nbase2.example\nbase3.example\n");
    ListPublishOptions p = PublishOptionsBase();
    p.inputs = {"plain:" + dir_.Join("base.txt")};
    auto r = PublishList(p);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->version, 1u);
  }

  ListPublishOptions PublishOptionsBase() {
    ListPublishOptions p;
    p.repo_dir = dir_.Join("repo");
    p.private_key_path = key_;
    p.list = "phishing";
    return p;
  }

  PublishLoopOptions LoopOptions() {
    PublishLoopOptions o;
    o.publish = PublishOptionsBase();
    o.spool_dir = spool();
    o.every_seconds = 1;
    o.min_every_seconds = 1;
    o.wait = [](int64_t) { return false; };  // no sleeping in tests: max_cycles stops the loop
    o.on_version = [this](const PublishLoopVersion& v) { versions_.push_back(v); };
    o.on_rejected = [this](const PublishLoopRejection& r) { rejections_.push_back(r); };
    o.on_error = [this](const Status& s) { errors_.push_back(s.ToString()); };
    return o;
  }

  std::string spool() { return dir_.Join("spool"); }
  // As an ingestor does: write elsewhere, rename in.
  void Drop(const std::string& name, const std::string& text) {
    ASSERT_TRUE(Env::Default()->CreateDirs(SpoolIncomingDir(spool())).ok());
    const std::string tmp = dir_.Join("tmp." + name);
    testing::WriteFileOrDie(tmp, text);
    ASSERT_TRUE(Env::Default()->RenameFile(tmp, JoinPath(SpoolIncomingDir(spool()), name)).ok());
  }
  uint64_t Committed() {
    auto c = ReadCommittedVersion(Env::Default(), dir_.Join("repo"), "phishing");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? c->version : 0;
  }
  // Is `host` in version V of the list (its private snapshot)?
  bool Listed(uint64_t version, const std::string& host) {
    const std::string path =
        JoinPath(PrivateListDir(dir_.Join("repo"), "phishing"), PrivateSnapshotFileName(version));
    auto checker = Checker::Open({path});
    EXPECT_TRUE(checker.ok()) << path << ": " << checker.status().ToString();
    if (!checker.ok()) return false;
    return (*checker)->Check("http://" + host + "/").kind != VerdictKind::kSafe;
  }
  std::vector<std::string> Files(const std::string& dir) {
    auto names = Env::Default()->ListDir(dir);
    return names.ok() ? *names : std::vector<std::string>{};
  }

  testing::TempDir dir_{"publish_loop"};
  std::string key_;
  std::vector<PublishLoopVersion> versions_;
  std::vector<PublishLoopRejection> rejections_;
  std::vector<std::string> errors_;
};

TEST_F(PublishLoopTest, TwoCyclesPublishTwoVersions) {
  Drop("a.add", "new1.example\nnew2.example\n");
  Drop("b.remove", "base1.example\n");
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 2;
  int waits = 0;
  o.wait = [&](int64_t ms) {
    EXPECT_LE(ms, 1000);
    if (++waits == 1) Drop("c.add", "new3.example\n");  // arrives while the loop waits
    return false;
  };
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(errors_.empty()) << errors_[0];
  EXPECT_EQ(r->cycles, 2u);
  EXPECT_EQ(r->versions, 2u);
  EXPECT_EQ(r->files, 3u);
  ASSERT_EQ(versions_.size(), 2u);
  EXPECT_EQ(versions_[0].report.version, 2u);
  EXPECT_EQ(versions_[0].files, 2u);
  EXPECT_FALSE(versions_[0].recovered);
  EXPECT_FALSE(versions_[0].refresh);
  EXPECT_GE(versions_[0].ingest_to_commit_seconds, 0.0);
  EXPECT_EQ(versions_[1].report.version, 3u);
  EXPECT_EQ(versions_[1].files, 1u);
  EXPECT_EQ(Committed(), 3u);

  EXPECT_FALSE(Listed(2, "base1.example"));
  EXPECT_TRUE(Listed(2, "base2.example"));
  EXPECT_TRUE(Listed(2, "new1.example"));
  EXPECT_TRUE(Listed(2, "new2.example"));
  EXPECT_FALSE(Listed(2, "new3.example"));
  EXPECT_TRUE(Listed(3, "new3.example"));
  EXPECT_TRUE(Listed(3, "new1.example"));
  EXPECT_EQ(versions_[1].report.entries[static_cast<int>(Layer::kDomain)], 5u);

  EXPECT_EQ(Files(SpoolDoneDir(spool())), (std::vector<std::string>{"a.add", "b.remove", "c.add"}));
  EXPECT_TRUE(Files(SpoolClaimedDir(spool())).empty());
  EXPECT_TRUE(Files(SpoolIncomingDir(spool())).empty());
  // Every version tells clients the loop's cadence.
  const std::string manifest =
      testing::ReadFileOrDie(JoinPath(PublicListDir(dir_.Join("repo"), "phishing"), kManifestFileName));
  EXPECT_NE(manifest.find("\"min_wait_seconds\": 1,"), std::string::npos) << manifest;
  auto parsed = ParseCommittedVersion(manifest);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->version, 3u);
}

TEST_F(PublishLoopTest, NoChangeNoVersion) {
  Drop("x.add.tmp", "half-written.example\n");  // an ingestor's temporary: not a change file yet
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 3;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->versions, 0u);
  EXPECT_EQ(Committed(), 1u);
  EXPECT_TRUE(Files(SpoolClaimedDir(spool())).empty());
  EXPECT_EQ(Files(SpoolIncomingDir(spool())), std::vector<std::string>{"x.add.tmp"});
}

// The clock moves past refresh_after: a version with no change keeps the manifest from expiring.
class ClockEnv : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  int64_t NowUnixSeconds() override { return target()->NowUnixSeconds() + offset.load(); }
  std::atomic<int64_t> offset{0};
};

TEST_F(PublishLoopTest, RefreshesBeforeExpiry) {
  ClockEnv env;
  PublishLoopOptions o = LoopOptions();
  o.publish.env = &env;
  o.refresh_after_seconds = 3600;
  o.max_cycles = 3;
  int waits = 0;
  o.wait = [&](int64_t) {
    if (++waits == 1) env.offset = 3700;  // after cycle 1 (no refresh yet), an hour and more later
    return false;
  };
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(errors_.empty()) << errors_[0];
  ASSERT_EQ(versions_.size(), 1u);  // cycle 2 refreshes; cycle 3 finds the new version young
  EXPECT_TRUE(versions_[0].refresh);
  EXPECT_EQ(versions_[0].report.version, 2u);
  EXPECT_EQ(Committed(), 2u);
  EXPECT_TRUE(Listed(2, "base1.example"));
  EXPECT_EQ(versions_[0].report.entries[static_cast<int>(Layer::kDomain)], 3u);
}

// Both clocks the loop reads, moved by the test only: the loop's waits and the versions' own time.
class FakeClockEnv : public EnvWrapper {
 public:
  explicit FakeClockEnv(int64_t wall) : EnvWrapper(Env::Default()), wall0(wall) {}
  int64_t NowUnixSeconds() override { return wall0 + static_cast<int64_t>(mono.load() / 1000000000u) + step.load(); }
  uint64_t NowMonotonicNanos() override { return mono.load(); }
  void Advance(int64_t ms) { mono += static_cast<uint64_t>(ms) * 1000000u; }
  const int64_t wall0;
  std::atomic<uint64_t> mono{1000000000u};  // the wall clock is 1 s past wall0 at the start
  std::atomic<int64_t> step{0};             // a wall-clock step (NTP), the monotonic clock unmoved
};

// A loop restarted 17 s after the committed version waits for that version's cadence, stamps each version with
// its slot's second, skips the slot a long version ran past, and follows a stepped wall clock from the step on.
TEST_F(PublishLoopTest, KeepsTheCommittedVersionsCadence) {
  auto committed = ReadCommittedVersion(Env::Default(), dir_.Join("repo"), "phishing");
  ASSERT_TRUE(committed.ok());
  const int64_t c = committed->created_unix;
  FakeClockEnv env(c + 16);  // c + 17 with the first second
  PublishLoopOptions o = LoopOptions();
  o.publish.env = &env;
  o.every_seconds = 60;
  o.max_cycles = 4;
  std::vector<std::pair<int64_t, int64_t>> starts;
  o.on_start = [&](int64_t at, int64_t wait_s) { starts.emplace_back(at, wait_s); };
  std::vector<int64_t> waits;
  o.wait = [&](int64_t ms) {
    waits.push_back(ms);
    env.Advance(ms);
    Drop("w" + std::to_string(waits.size()) + ".add", "new" + std::to_string(waits.size()) + ".example\n");
    if (waits.size() == 3) env.step = 1000;  // before cycle 3
    return false;
  };
  std::vector<int64_t> created;  // each committed version's created_unix
  o.on_version = [&](const PublishLoopVersion& v) {
    versions_.push_back(v);
    auto m = ReadCommittedVersion(Env::Default(), dir_.Join("repo"), "phishing");
    created.push_back(m.ok() && m->version == v.report.version ? m->created_unix : -1);
    if (versions_.size() == 1) env.Advance(70000);  // version 2 takes 70 s: past the next slot
  };
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(errors_.empty()) << errors_[0];
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0], std::make_pair(c + 60, int64_t{43}));
  EXPECT_EQ(waits, (std::vector<int64_t>{
                       43000,   // to c + 60
                       50000,   // version 2 ran to c + 130: slot c + 120 skipped, on to c + 180
                       60000,   // to c + 240 (where the wall clock then reads c + 1240)
                       60000}));
  EXPECT_EQ(r->skipped_slots, 1u);
  EXPECT_EQ(r->versions, 4u);
  EXPECT_EQ(created, (std::vector<int64_t>{c + 60, c + 180, c + 1240, c + 1300}));
  EXPECT_EQ(Committed(), 5u);
}

TEST_F(PublishLoopTest, RefusedFileIsRejectedAndTheRestPublishes) {
  Drop("good.add", "good.example\n");
  Drop("page.add", "<html><body>502 Bad Gateway</body></html>\n");
  Drop("empty.remove", "");
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 1;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(errors_.empty()) << errors_[0];
  EXPECT_EQ(r->rejected_files, 2u);
  ASSERT_EQ(versions_.size(), 1u);
  EXPECT_EQ(versions_[0].files, 1u);
  EXPECT_TRUE(Listed(2, "good.example"));
  EXPECT_EQ(Files(SpoolRejectedDir(spool())),
            (std::vector<std::string>{"empty.remove", "empty.remove.why", "page.add", "page.add.why"}));
  const std::string why = testing::ReadFileOrDie(JoinPath(SpoolRejectedDir(spool()), "page.add.why"));
  EXPECT_NE(why.find("HTML"), std::string::npos) << why;
  ASSERT_EQ(rejections_.size(), 2u);
  EXPECT_EQ(Files(SpoolDoneDir(spool())), std::vector<std::string>{"good.add"});
}

TEST_F(PublishLoopTest, UnreadableFeedIsRejected) {
  Drop("good.add", "good.example\n");
  Drop("broken.add", std::string("\x1f\x8b\x08\x00garbage", 12));  // gzip magic, then no gzip stream
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 1;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(errors_.empty()) << errors_[0];
  EXPECT_EQ(r->rejected_files, 1u);
  EXPECT_EQ(r->versions, 1u);
  EXPECT_TRUE(Listed(2, "good.example"));
  EXPECT_EQ(Files(SpoolRejectedDir(spool())), (std::vector<std::string>{"broken.add", "broken.add.why"}));
}

TEST_F(PublishLoopTest, AcceptTakesARefusedFile) {
  Drop("empty.remove", "");
  PublishLoopOptions o = LoopOptions();
  o.publish.accept = {"empty.remove"};
  o.max_cycles = 1;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rejected_files, 0u);
  EXPECT_EQ(r->versions, 1u);
}

TEST_F(PublishLoopTest, OnlyRefusedFilesMakeNoVersion) {
  Drop("page.add", "<html>x</html>\n");
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 1;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->versions, 0u);
  EXPECT_EQ(r->rejected_files, 1u);
  EXPECT_EQ(Committed(), 1u);
  EXPECT_TRUE(Files(SpoolClaimedDir(spool())).empty());  // no marker left behind
}

// A crash after the claim and before the commit (the state the loop left): the batch is published at the start,
// once, together with what arrived meanwhile.
TEST_F(PublishLoopTest, ClaimedBatchNotCommittedIsPublishedAgain) {
  Env* env = Env::Default();
  const std::string claimed = SpoolClaimedDir(spool());
  ASSERT_TRUE(env->CreateDirs(claimed).ok());
  testing::WriteFileOrDie(JoinPath(claimed, ClaimMarkerName(2)), "");
  testing::WriteFileOrDie(JoinPath(claimed, "early.add"), "early.example\n");
  testing::WriteFileOrDie(JoinPath(claimed, "early.remove"), "base2.example\n");
  Drop("late.add", "late.example\n");
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 2;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(errors_.empty()) << errors_[0];
  ASSERT_EQ(versions_.size(), 1u);
  EXPECT_TRUE(versions_[0].recovered);
  EXPECT_EQ(versions_[0].files, 3u);
  EXPECT_EQ(Committed(), 2u);
  EXPECT_TRUE(Listed(2, "early.example"));
  EXPECT_TRUE(Listed(2, "late.example"));
  EXPECT_FALSE(Listed(2, "base2.example"));
  EXPECT_TRUE(Files(claimed).empty());
  EXPECT_EQ(Files(SpoolDoneDir(spool())), (std::vector<std::string>{"early.add", "early.remove", "late.add"}));
}

// A crash after the commit and before the files moved on: they go to done/ and make no second version.
TEST_F(PublishLoopTest, ClaimedBatchAlreadyCommittedIsFinished) {
  Env* env = Env::Default();
  const std::string claimed = SpoolClaimedDir(spool());
  ASSERT_TRUE(env->CreateDirs(claimed).ok());
  testing::WriteFileOrDie(JoinPath(claimed, ClaimMarkerName(1)), "");  // version 1 is committed
  testing::WriteFileOrDie(JoinPath(claimed, "x.add"), "base1.example\n");
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 1;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->versions, 0u);
  EXPECT_EQ(Committed(), 1u);
  EXPECT_TRUE(Files(claimed).empty());
  EXPECT_EQ(Files(SpoolDoneDir(spool())), std::vector<std::string>{"x.add"});
}

TEST_F(PublishLoopTest, AfterCommitHookRuns) {
  Drop("a.add", "a.example\n");
  std::atomic<int> runs{0};
  std::atomic<std::thread::id> hook_thread{};
  PublishLoopOptions o = LoopOptions();
  o.after_commit = [&] {
    hook_thread = std::this_thread::get_id();
    ++runs;
  };
  o.max_cycles = 1;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(runs, 1);  // joined before RunPublishLoop returned
  EXPECT_NE(hook_thread.load(), std::this_thread::get_id());
}

TEST_F(PublishLoopTest, DonePrunedToTheNewest) {
  const std::string done = SpoolDoneDir(spool());
  ASSERT_TRUE(Env::Default()->CreateDirs(done).ok());
  for (size_t i = 0; i < kPublishLoopDoneKept + 5; ++i) {
    const std::string path = JoinPath(done, "old" + std::to_string(i) + ".add");
    testing::WriteFileOrDie(path, "x.example\n");
    // An hour old: the order is by modification time (whole seconds), not by the names.
    std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  }
  Drop("new.add", "new.example\n");
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 1;
  auto r = RunPublishLoop(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto names = Files(done);
  EXPECT_EQ(names.size(), kPublishLoopDoneKept);
  EXPECT_NE(std::find(names.begin(), names.end(), "new.add"), names.end());
}

TEST_F(PublishLoopTest, RefusesBadOptionsAndASecondLoop) {
  PublishLoopOptions o = LoopOptions();
  o.max_cycles = 1;
  o.every_seconds = 59;
  o.min_every_seconds = 60;
  EXPECT_EQ(RunPublishLoop(o).status().code(), StatusCode::kInvalidArgument);
  o = LoopOptions();
  o.max_cycles = 1;
  o.publish.add = {"x.add"};
  EXPECT_EQ(RunPublishLoop(o).status().code(), StatusCode::kInvalidArgument);
  o = LoopOptions();
  o.max_cycles = 1;
  o.publish.state = "postgresql://localhost/x";
  EXPECT_EQ(RunPublishLoop(o).status().code(), StatusCode::kInvalidArgument);
  o = LoopOptions();
  o.max_cycles = 1;
  o.publish.list = "never-published";
  EXPECT_EQ(RunPublishLoop(o).status().code(), StatusCode::kFailedPrecondition);

  o = LoopOptions();
  o.max_cycles = 1;
  ASSERT_TRUE(Env::Default()->CreateDirs(spool()).ok());
  auto held = Env::Default()->LockFile(SpoolLockPath(spool()));
  ASSERT_TRUE(held.ok());
  auto r = RunPublishLoop(o);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("another loop"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace urlguard
