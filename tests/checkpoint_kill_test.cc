// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// A manifest format 2 checkpoint (publish/publisher.h MakeCheckpoint, docs/versions.md §5) killed -9 at every one
// of its fault points (platform/fault_point.h; the list is docs/versions.md §5a) leaves a repository that
//   (a) still serves the old state: the public manifest verifies, and a client at every earlier version reaches
//       exactly the content (the range diffs the manifest names, applied as a client does, and the signed digest;
//       and real clients, sync/updater.h SyncList over loopback HTTP, one installed at each earlier version);
//   (b) publishes the next incremental version, which clients reach;
//   (c) makes the next checkpoint, which the version after it adopts and through which clients reach the content;
//   (d) holds no temporary file and no file nothing names once that version has pruned.
// The same for a version killed while it prunes after adopting a checkpoint, and for a checkpoint during which a
// version is published beside it (no lock keeps them apart: docs/versions.md §7a), killed or not.
//
// The kill runs in a child made by fork(): the armed point raises SIGKILL there, as in publish/lsm_state_test.cc.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/byte_io.h"
#include "core/diff_codec.h"
#include "core/set_digest.h"
#include "core/snapshot.h"
#include "format/bounded_inflate.h"
#include "format/manifest.h"
#include "format/repository_files.h"
#include "format/signature.h"
#include "publish/key_record.h"
#include "publish/publisher.h"
#include "signing/signer.h"
#include "sync/fetcher.h"
#include "sync/store.h"
#include "sync/updater.h"
#include "tests/test_util.h"
#include "url/entry.h"
#include "urlguard/env.h"

namespace urlguard {
namespace {

using Sets = std::array<std::set<uint64_t>, kLayerKindCount>;
constexpr char kList[] = "phishing";

std::string Read(const std::string& path) { return testing::ReadFileOrDie(path); }

void WriteLines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path);
  for (const std::string& l : lines) f << l << "\n";
}

// How a child ended: the signal that killed it, or 1000 + its exit status.
int RunChild(const char* armed_point, const std::function<bool()>& body) {
  pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (armed_point != nullptr) setenv("URLGUARD_FAULT_KILL", armed_point, 1);
    _exit(body() ? 0 : 1);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return -1;
  return WIFSIGNALED(status) ? WTERMSIG(status) : 1000 + WEXITSTATUS(status);
}

// Runs `hook` once, just before the first rename onto a file named `trigger`: a version published at that moment
// of a checkpoint, its temporary file written and not yet renamed.
class HookEnv : public EnvWrapper {
 public:
  HookEnv(std::string trigger, std::function<void()> hook)
      : EnvWrapper(Env::Default()), trigger_(std::move(trigger)), hook_(std::move(hook)) {}
  Status RenameFile(const std::string& from, const std::string& to) override {
    if (hook_ && std::filesystem::path(to).filename() == trigger_) {
      auto hook = std::move(hook_);
      hook_ = nullptr;
      hook();
    }
    return EnvWrapper::RenameFile(from, to);
  }

 private:
  std::string trigger_;
  std::function<void()> hook_;
};

// One repository and what its clients must hold at each version.
class Scenario {
 public:
  Scenario() {
    repo_ = tmp_.path() + "/repo";
    public_ = repo_ + "/public/v1/lists/phishing/";
    private_ = repo_ + "/private/lists/phishing/";
    // The public tree on loopback, for the real clients (sync/updater.h SyncList).
    std::filesystem::create_directories(repo_ + "/public");
    server_.set_mount_point("/", repo_ + "/public");
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~Scenario() {
    server_.stop();
    thread_.join();
  }

  static std::string Entry(int i) {
    switch (i % 3) {
      case 0: return "d" + std::to_string(i) + ".example";
      case 1: return "https://s" + std::to_string(i) + ".example/p";
      default: return "10.2." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256);
    }
  }

  PublishOptions Base() {
    PublishOptions o;
    o.repo_dir = repo_;
    o.list = kList;
    o.manifest_format = kManifestFormat2;
    o.now_unix = now_ += 60;
    o.memory_budget = size_t{8} << 20;
    o.checkpoint_changes = uint64_t{1} << 40;  // checkpoints only where the test makes them
    return o;
  }

  Manifest Live() {
    auto m = ParseManifest(Read(public_ + "manifest.json"));
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : Manifest{};
  }

  // The options of the next incremental version: `n` entries added, `n` removed; the expected content follows.
  PublishOptions Prepare(int n) {
    std::vector<std::string> add, remove;
    for (int i = 0; i < n; ++i) add.push_back(Entry(next_++));
    for (int i = 0; i < n && !content_.empty(); ++i) {
      auto it = content_.begin();
      std::advance(it, static_cast<long>(rng_() % content_.size()));
      remove.push_back(*it);
      content_.erase(it);
    }
    for (const std::string& a : add) content_.insert(a);
    const std::string tag = std::to_string(next_);
    WriteLines(tmp_.path() + "/add" + tag, add);
    WriteLines(tmp_.path() + "/remove" + tag, remove);
    PublishOptions o = Base();
    o.add_inputs = {FeedSpec{FeedFormat::kPlain, "", tmp_.path() + "/add" + tag}};
    o.remove_inputs = {FeedSpec{FeedFormat::kPlain, "", tmp_.path() + "/remove" + tag}};
    return o;
  }

  void Step(int n) {
    auto r = Publish(Env::Default(), key_, Prepare(n));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    Record();
  }

  void Record() {
    Manifest m = Live();
    Sets s;
    for (const std::string& e : content_) {
      auto k = EntryKeyFor(e);
      ASSERT_TRUE(k.ok()) << e;
      const int li = static_cast<int>(k->layer);
      ASSERT_NE(m.universe[li], 0u);
      s[li].insert(MulHi64(LocalKeyFor(k->expression, Sha256(k->expression)), m.universe[li]));
    }
    history_[m.version] = s;
    // A real client installed at this version (its data directory kept as it is, copied for each check).
    const std::string dir = tmp_.path() + "/client-" + std::to_string(m.version);
    SyncOutcome o = SyncClient(dir);
    ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << o.error.ToString();
    ASSERT_EQ(o.to_version, m.version);
    clients_[m.version] = dir;
  }

  SyncOutcome SyncClient(const std::string& dir, Sets* installed = nullptr) {
    SyncOutcome failed;
    auto fetcher = NewCurlFetcher(FetcherOptions());
    auto store = Store::Open(Env::Default(), dir);
    if (!fetcher.ok() || !store.ok()) {
      failed.error = !fetcher.ok() ? fetcher.status() : store.status();
      return failed;
    }
    UpdaterOptions options;
    options.server_base_url = "http://127.0.0.1:" + std::to_string(port_);
    options.trusted_keys = {key_.public_key()};
    SyncOutcome o = SyncList(**fetcher, **store, options, kList, "", now_ + 10);
    if (installed != nullptr) {
      const InstalledList* in = (*store)->state().FindInstalled(kList);
      if (in != nullptr) *installed = SnapshotSets(Read((*store)->PathOf(*in)));
    }
    return o;
  }

  static Sets SnapshotSets(const std::string& bytes) {
    Sets s;
    auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), true);
    EXPECT_TRUE(view.ok());
    if (!view.ok()) return s;
    for (int li = 0; li < kLayerKindCount; ++li) {
      const LayerView* l = view->layer(static_cast<LayerKind>(li));
      if (l == nullptr) continue;
      std::vector<uint64_t> fps;
      l->fingerprints.Decode(&fps);
      s[li].insert(fps.begin(), fps.end());
    }
    return s;
  }

  // Every real client installed at an earlier version (a copy of its data directory) syncs to the live version
  // and holds exactly its content.
  void ExpectRealClientsCatchUp() {
    Manifest m = Live();
    for (const auto& [f, dir] : clients_) {
      if (f >= m.version) continue;
      const std::string copy = tmp_.path() + "/copy-" + std::to_string(++copies_);
      std::filesystem::copy(dir, copy, std::filesystem::copy_options::recursive);
      Sets installed;
      SyncOutcome o = SyncClient(copy, &installed);
      EXPECT_EQ(o.kind, SyncOutcome::kUpdated) << "client at " << f << ": " << o.error.ToString() << " / "
                                               << o.diff_error.ToString();
      EXPECT_EQ(o.to_version, m.version) << "client at " << f;
      EXPECT_EQ(installed, history_.at(m.version)) << "client at " << f;
    }
  }

  // Version 1 in full (a checkpoint), 2-3, a checkpoint at 3 that version 4 adopts, then 5 and 6. Versions 3 and 4
  // change most of the list, so (3, 6] is an anchor of both the live manifest and a checkpoint at 6, and is larger
  // than the snapshot (the checkpoint leaves it out of its to-checkpoint diffs).
  void Build() {
    for (int i = 0; i < 300; ++i) content_.insert(Entry(i));
    WriteLines(tmp_.path() + "/full.txt", {content_.begin(), content_.end()});
    PublishOptions o = Base();
    o.inputs = {FeedSpec{FeedFormat::kPlain, "", tmp_.path() + "/full.txt"}};
    auto r = Publish(Env::Default(), key_, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    Record();
    ASSERT_NO_FATAL_FAILURE(Step(20));
    ASSERT_NO_FATAL_FAILURE(Step(200));
    ASSERT_TRUE(MakeCheckpoint(Env::Default(), Base(), 3).ok());
    ASSERT_NO_FATAL_FAILURE(Step(200));
    ASSERT_EQ(Live().checkpoint.version, 3u);
    ASSERT_NO_FATAL_FAILURE(Step(5));
    ASSERT_NO_FATAL_FAILURE(Step(5));
    ASSERT_EQ(Live().version, 6u);
  }

  Sets FromSnapshot(const Manifest& m) {
    Sets s;
    auto z = Read(public_ + m.checkpoint.snapshot.path);
    EXPECT_EQ(Sha256(z), m.checkpoint.snapshot.sha256);
    auto bytes = InflateBounded(z, m.checkpoint.state_bytes);
    EXPECT_TRUE(bytes.ok());
    if (!bytes.ok()) return s;
    auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(), true);
    EXPECT_TRUE(view.ok());
    if (!view.ok()) return s;
    EXPECT_EQ(view->checksum(), m.checkpoint.state_sha256);
    for (int li = 0; li < kLayerKindCount; ++li) {
      const LayerView* l = view->layer(static_cast<LayerKind>(li));
      if (l == nullptr) continue;
      std::vector<uint64_t> fps;
      l->fingerprints.Decode(&fps);
      s[li].insert(fps.begin(), fps.end());
    }
    return s;
  }

  // Applies one range diff as a client does; a missing or changed file fails the test.
  Sets Apply(Sets s, const ManifestDiff& d) {
    const std::string path = public_ + d.file.path;
    EXPECT_TRUE(std::filesystem::exists(path)) << d.file.path << " is named by the manifest but gone";
    if (!std::filesystem::exists(path)) return {};
    auto z = Read(path);
    EXPECT_EQ(Sha256(z), d.file.sha256) << d.file.path;
    auto bytes = InflateBounded(z, d.file.inflated_size);
    EXPECT_TRUE(bytes.ok());
    if (!bytes.ok()) return {};
    auto diff = DecodeRangeDiff(*bytes);
    EXPECT_TRUE(diff.ok()) << diff.status().ToString();
    if (!diff.ok()) return {};
    EXPECT_EQ(diff->from_version, d.from_version);
    for (const RangeLayerDiff& l : diff->layers) {
      auto& set = s[static_cast<int>(l.layer)];
      for (uint64_t f : l.absent) set.erase(f);
      for (uint64_t f : l.present) set.insert(f);
      EXPECT_EQ(set.size(), l.new_count) << d.file.path;
    }
    return s;
  }

  // (a) The manifest verifies; a new client (snapshot + diff) and a client at every earlier version (one hop, or
  // two through the checkpoint) reach exactly the content, and its fingerprints give the signed digest.
  void ExpectServed(bool real_clients = true) {
    const std::string manifest = Read(public_ + "manifest.json");
    EXPECT_TRUE(VerifyManifestSignature({key_.public_key()}, manifest, Read(public_ + "manifest.sig")).ok());
    Manifest m = Live();
    ASSERT_EQ(m.format, kManifestFormat2);
    ASSERT_EQ(history_.count(m.version), 1u);
    const Sets& want = history_.at(m.version);
    SetDigestInput in;
    for (int li = 0; li < kLayerKindCount; ++li) {
      in.universe[li] = m.universe[li];
      for (uint64_t f : want[li]) AddToSetSum(&in.layers[li], static_cast<LayerKind>(li), f);
    }
    EXPECT_EQ(SetDigest(in), m.state_digest);
    Sets fresh = FromSnapshot(m);
    if (m.checkpoint.version < m.version) {
      const ManifestDiff* d = FindRangeDiff(m, m.version, m.checkpoint.version);
      ASSERT_NE(d, nullptr);
      fresh = Apply(fresh, *d);
    }
    EXPECT_EQ(fresh, want) << "a new client at " << m.version;
    for (const auto& [f, state] : history_) {
      if (f >= m.version) continue;
      Sets s = state;
      if (f >= m.checkpoint.version) {
        const ManifestDiff* d = FindRangeDiff(m, m.version, f);
        ASSERT_NE(d, nullptr) << "client at " << f;
        s = Apply(s, *d);
      } else {
        const ManifestDiff* hop = FindRangeDiff(m, m.checkpoint.version, f);
        if (hop == nullptr) continue;  // beyond the archive: the snapshot
        s = Apply(s, *hop);
        if (m.checkpoint.version < m.version) s = Apply(s, *FindRangeDiff(m, m.version, m.checkpoint.version));
      }
      EXPECT_EQ(s, want) << "client at " << f << " -> " << m.version;
    }
    if (real_clients) ExpectRealClientsCatchUp();
  }

  // (d) After a version that adopted a checkpoint pruned: no temporary file anywhere, every public file named by
  // the live or the previous manifest, every private file one the list's files name.
  void ExpectNoStrays(const Manifest& previous) {
    Manifest m = Live();
    std::set<std::string> named = {"manifest.json", "manifest.sig", RpzFileName(kList)};
    for (const Manifest* x : {static_cast<const Manifest*>(&m), &previous}) {
      named.insert(x->checkpoint.snapshot.path);
      for (const ManifestDiff& d : x->diffs) named.insert(d.file.path);
    }
    for (const auto& e : std::filesystem::directory_iterator(public_)) {
      const std::string n = e.path().filename();
      EXPECT_EQ(named.count(n), 1u) << "public file nothing names: " << n;
    }
    for (const auto& e : std::filesystem::directory_iterator(private_)) {
      const std::string n = e.path().filename();
      EXPECT_EQ(n.find(".tmp"), std::string::npos) << "stray temporary file: " << n;
      if (n == "publish.lock") continue;
      std::optional<uint64_t> v;
      for (auto parse : {ParseStateFileName, ParseStateDeltaFileName, ParseFullHashFileName, ParseFullHashDeltaFileName,
                         ParsePrivateSnapshotFileName, ParseEpochMapFileName, ParseArchiveFileName,
                         ParseCheckpointRecordFileName, ParseEntryListFileName, ParseEntryListDeltaFileName}) {
        if (!v) {
          v = parse(n);
        }
      }
      EXPECT_TRUE(v.has_value()) << "unknown private file: " << n;
      // What a killed checkpoint between the adopted one and now wrote is gone.
      if (v) {
        EXPECT_GE(*v, m.checkpoint.version) << n;
      }
    }
    const auto tmp = repo_ + "/private/tmp/phishing";
    if (std::filesystem::exists(tmp)) {
      EXPECT_TRUE(std::filesystem::is_empty(tmp));
    }
  }

  // (b)-(d) after a kill: the next version (naming `expect_checkpoint`), a checkpoint at it, the version that
  // adopts that one, and the prune after it.
  void ExpectRecovers(uint64_t expect_checkpoint) {
    ASSERT_NO_FATAL_FAILURE(Step(10));
    const uint64_t v = Live().version;
    EXPECT_EQ(Live().checkpoint.version, expect_checkpoint);
    ASSERT_NO_FATAL_FAILURE(ExpectServed(/*real_clients=*/false));  // they sync after the kill and at the end
    Status made = MakeCheckpoint(Env::Default(), Base(), v);
    ASSERT_TRUE(made.ok()) << made.ToString();
    const Manifest before = Live();
    ASSERT_NO_FATAL_FAILURE(Step(10));
    EXPECT_EQ(Live().checkpoint.version, v);
    ASSERT_NO_FATAL_FAILURE(ExpectServed());
    ASSERT_NO_FATAL_FAILURE(ExpectNoStrays(before));
  }

  testing::TempDir tmp_{"ckptkill"};
  SigningKey key_ = std::move(SigningKey::Generate()).value();
  std::string repo_, public_, private_;
  std::set<std::string> content_;
  std::map<uint64_t, Sets> history_;
  std::map<uint64_t, std::string> clients_;  // version -> a real client's data directory installed at it
  int copies_ = 0;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mt19937_64 rng_{17};
  int next_ = 100000;
  int64_t now_ = 1700000000;
};

#if defined(URLGUARD_FAULT_POINTS)

// Every step of MakeCheckpoint, in order; then the to-checkpoint diffs (as many as it writes).
const char* const kCheckpointPoints[] = {
    "publish.compact.opened",
    "publish.compact.writing",
    "publish.compact.before-rename",
    "publish.compact.after-rename",
    "publish.checkpoint.after-state-base",
    "publish.checkpoint.after-full-hash-base",
    "publish.checkpoint.after-entry-list",
    "publish.checkpoint.after-private-snapshot",
    "publish.checkpoint.after-snapshot",
    "publish.checkpoint.after-archive",
    "publish.checkpoint.after-seen",
    "publish.checkpoint.before-record",
    "publish.checkpoint.before-record-rename",
    "publish.checkpoint.after-record-rename",
};

TEST(CheckpointKillTest, KilledAtEveryStepTheRepositoryKeepsServingAndRecovers) {
  for (const char* point : kCheckpointPoints) {
    SCOPED_TRACE(point);
    Scenario t;  // a fresh repository per point
    ASSERT_NO_FATAL_FAILURE(t.Build());
    const std::string manifest = Read(t.public_ + "manifest.json");
    PublishOptions o = t.Base();
    ASSERT_EQ(RunChild(point, [&] { return MakeCheckpoint(Env::Default(), o, 6).ok(); }), SIGKILL)
        << "the point was not reached";
    EXPECT_EQ(Read(t.public_ + "manifest.json"), manifest);
    ASSERT_NO_FATAL_FAILURE(t.ExpectServed());
    // Only a renamed record makes the checkpoint: the next version adopts it exactly then.
    const bool made = std::string(point) == "publish.checkpoint.after-record-rename";
    ASSERT_NO_FATAL_FAILURE(t.ExpectRecovers(made ? 6 : 3));
  }
}

// `urlguard-publish compact` run again at once: the same version's checkpoint over the killed one's files.
TEST(CheckpointKillTest, KilledAtEveryStepThenMadeAgainAtTheSameVersion) {
  for (const char* point : kCheckpointPoints) {
    SCOPED_TRACE(point);
    Scenario t;
    ASSERT_NO_FATAL_FAILURE(t.Build());
    PublishOptions o = t.Base();
    ASSERT_EQ(RunChild(point, [&] { return MakeCheckpoint(Env::Default(), o, 6).ok(); }), SIGKILL);
    Status made = MakeCheckpoint(Env::Default(), t.Base(), 6);
    ASSERT_TRUE(made.ok()) << made.ToString();
    ASSERT_NO_FATAL_FAILURE(t.ExpectServed());
    ASSERT_NO_FATAL_FAILURE(t.ExpectRecovers(6));
  }
}

TEST(CheckpointKillTest, KilledAfterEachToCheckpointDiff) {
  int reached = 0;
  for (int n = 1;; ++n) {
    const std::string point = "publish.checkpoint.after-diff-" + std::to_string(n);
    SCOPED_TRACE(point);
    Scenario t;
    ASSERT_NO_FATAL_FAILURE(t.Build());
    PublishOptions o = t.Base();
    const int end = RunChild(point.c_str(), [&] { return MakeCheckpoint(Env::Default(), o, 6).ok(); });
    if (end == 1000) break;  // completed: it writes fewer diffs
    ASSERT_EQ(end, SIGKILL);
    ++reached;
    ASSERT_NO_FATAL_FAILURE(t.ExpectServed());
    ASSERT_NO_FATAL_FAILURE(t.ExpectRecovers(3));
  }
  EXPECT_GE(reached, 2) << "the fixture is meant to make several to-checkpoint diffs";
}

TEST(CheckpointKillTest, AVersionKilledWhilePruningAfterAdoptingACheckpoint) {
  Scenario t;
  ASSERT_NO_FATAL_FAILURE(t.Build());
  ASSERT_TRUE(MakeCheckpoint(Env::Default(), t.Base(), 6).ok());
  PublishOptions o = t.Prepare(10);
  ASSERT_EQ(RunChild("publish.prune.after-first-removal", [&] { return Publish(Env::Default(), t.key_, o).ok(); }),
            SIGKILL);
  // The version was committed before its prune: clients have it.
  ASSERT_EQ(t.Live().version, 7u);
  EXPECT_EQ(t.Live().checkpoint.version, 6u);
  ASSERT_NO_FATAL_FAILURE(t.Record());
  ASSERT_NO_FATAL_FAILURE(t.ExpectServed());
  ASSERT_NO_FATAL_FAILURE(t.ExpectRecovers(6));
}

// A version published beside the checkpoint, at the moment the checkpoint has written a file whole but not yet
// renamed it (each base, the private and the public snapshot, the archive); then the checkpoint goes on, killed
// before its record or not.
TEST(CheckpointKillTest, AVersionPublishedBesideACheckpoint) {
  for (const char* armed : {"publish.checkpoint.before-record-rename", static_cast<const char*>(nullptr)}) {
    for (const std::string& trigger : {StateFileName(6), FullHashFileName(6), PrivateSnapshotFileName(6),
                                       SnapshotFileName(6), ArchiveFileName(6)}) {
      SCOPED_TRACE(std::string(armed != nullptr ? armed : "not killed") + ", a version before " + trigger);
      Scenario t;
      ASSERT_NO_FATAL_FAILURE(t.Build());
      PublishOptions next = t.Prepare(10);
      PublishOptions o = t.Base();
      const int end = RunChild(armed, [&] {
        bool published = false;
        HookEnv env(trigger, [&] { published = Publish(Env::Default(), t.key_, next).ok(); });
        Status s = MakeCheckpoint(&env, o, 6);
        if (!s.ok()) fprintf(stderr, "checkpoint: %s\n", s.ToString().c_str());
        return published && s.ok();
      });
      ASSERT_EQ(end, armed != nullptr ? SIGKILL : 1000);
      ASSERT_EQ(t.Live().version, 7u) << "the version beside it was not published";
      EXPECT_EQ(t.Live().checkpoint.version, 3u);
      ASSERT_NO_FATAL_FAILURE(t.Record());
      ASSERT_NO_FATAL_FAILURE(t.ExpectServed());
      if (armed == nullptr) {  // the checkpoint at 6 exists: version 8 adopts it
        ASSERT_NO_FATAL_FAILURE(t.Step(10));
        EXPECT_EQ(t.Live().checkpoint.version, 6u);
        ASSERT_NO_FATAL_FAILURE(t.ExpectServed());
        ASSERT_NO_FATAL_FAILURE(t.ExpectRecovers(6));
      } else {
        ASSERT_NO_FATAL_FAILURE(t.ExpectRecovers(3));
      }
    }
  }
}

#else

TEST(CheckpointKillTest, KilledAtEveryStepTheRepositoryKeepsServingAndRecovers) {
  GTEST_SKIP() << "built with -DURLGUARD_FAULT_POINTS=OFF: MakeCheckpoint has no fault point to die at";
}

#endif  // URLGUARD_FAULT_POINTS

// Without a kill: the checkpoint at the committed version, with range diffs too large for the snapshot, leaves
// every file the live manifest names in place (a to-checkpoint diff (A, X] has the name of the live manifest's
// to-current diff (A, X] when X is the committed version).
TEST(CheckpointKillTest, ACheckpointAtTheCommittedVersionKeepsTheLiveManifestsFiles) {
  Scenario t;
  ASSERT_NO_FATAL_FAILURE(t.Build());
  ASSERT_TRUE(MakeCheckpoint(Env::Default(), t.Base(), 6).ok());
  ASSERT_NO_FATAL_FAILURE(t.ExpectServed());
  ASSERT_NO_FATAL_FAILURE(t.ExpectRecovers(6));
}

}  // namespace
}  // namespace urlguard
