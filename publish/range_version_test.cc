// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Manifest format 2 end to end at the publisher (docs/versions.md): a full version is a checkpoint; incremental
// versions write only their change, and their range diffs bring a client from ANY earlier version since the
// checkpoint (or, through the checkpoint's own diffs, before it) to exactly the fingerprint sets of the content,
// whose set digest the manifest signs; checkpoints made beside publishing are adopted; a kill before the
// checkpoint record leaves the old checkpoint in use.
#include "publish/range_version.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "core/byte_io.h"
#include "core/diff_codec.h"
#include "core/set_digest.h"
#include "core/snapshot.h"
#include "format/bounded_inflate.h"
#include "format/repository_files.h"
#include "publish/key_record.h"
#include "publish/publisher.h"
#include "publish/state_delta.h"
#include "tests/test_util.h"
#include "url/entry.h"
#include "urlguard/publish.h"

namespace urlguard {
namespace {

using Sets = std::array<std::set<uint64_t>, kLayerKindCount>;

void WriteLines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream f(path);
  for (const std::string& l : lines) f << l << "\n";
}

std::string Read(const std::string& path) { return testing::ReadFileOrDie(path); }

Manifest ReadManifest(const std::string& repo) {
  auto m = ParseManifest(Read(repo + "/public/v1/lists/phishing/manifest.json"));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *m : Manifest{};
}

// The fingerprint sets a client must hold for `content` under the manifest's universes.
Sets Expected(const std::set<std::string>& content, const Manifest& m) {
  Sets s;
  for (const std::string& e : content) {
    auto k = EntryKeyFor(e);
    EXPECT_TRUE(k.ok()) << e;
    const int li = static_cast<int>(k->layer);
    EXPECT_NE(m.universe[li], 0u);
    s[li].insert(MulHi64(LocalKeyFor(k->expression, Sha256(k->expression)), m.universe[li]));
  }
  return s;
}

Sets FromSnapshot(const std::string& repo, const Manifest& m) {
  auto z = Read(repo + "/public/v1/lists/phishing/" + m.checkpoint.snapshot.path);
  auto bytes = InflateBounded(z, m.checkpoint.state_bytes);
  EXPECT_TRUE(bytes.ok());
  auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size(), true);
  EXPECT_TRUE(view.ok());
  EXPECT_EQ(view->checksum(), m.checkpoint.state_sha256);
  Sets s;
  for (int li = 0; li < kLayerKindCount; ++li) {
    const LayerView* l = view->layer(static_cast<LayerKind>(li));
    if (l == nullptr) continue;
    std::vector<uint64_t> fps;
    l->fingerprints.Decode(&fps);
    s[li].insert(fps.begin(), fps.end());
  }
  return s;
}

// `caps`: what the reader takes (the publisher's value cap for a member of `diffs`, RangeDiffCapsFor for a large
// diff), so a diff over what its list promises fails here.
Sets Apply(Sets s, const std::string& repo, const ManifestDiff& d, const RangeDiffCaps& caps = {}) {
  auto z = Read(repo + "/public/v1/lists/phishing/" + d.file.path);
  EXPECT_EQ(Sha256(z), d.file.sha256);
  auto bytes = InflateBounded(z, d.file.inflated_size);
  EXPECT_TRUE(bytes.ok());
  auto diff = DecodeRangeDiff(*bytes, caps);
  EXPECT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(diff->from_version, d.from_version);
  for (const RangeLayerDiff& l : diff->layers) {
    auto& set = s[static_cast<int>(l.layer)];
    for (uint64_t f : l.absent) set.erase(f);
    for (uint64_t f : l.present) set.insert(f);
    EXPECT_EQ(set.size(), l.new_count);
  }
  return s;
}

Sha256Digest DigestOf(const Sets& s, const Manifest& m) {
  SetDigestInput in;
  for (int li = 0; li < kLayerKindCount; ++li) {
    in.universe[li] = m.universe[li];
    for (uint64_t f : s[li]) AddToSetSum(&in.layers[li], static_cast<LayerKind>(li), f);
  }
  return SetDigest(in);
}

class Format2Test : public ::testing::Test {
 protected:
  void SetUp() override { repo_ = tmp_.path() + "/repo"; }

  // Version 1, a full version in format 2 (a checkpoint): 3000 entries, of every layer unless !with_ip.
  void Start(bool with_ip = true) {
    for (int i = 0; i < 3000; ++i) {
      if (with_ip || i % 3 != 2) content_.insert(Entry(i));
    }
    WriteLines(tmp_.path() + "/full.txt", {content_.begin(), content_.end()});
    PublishOptions o = Base();
    o.inputs = {FeedSpec{FeedFormat::kPlain, "", tmp_.path() + "/full.txt"}};
    auto r = Publish(Env::Default(), key_, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    Record();
  }

  static std::string Entry(int i) {
    switch (i % 3) {
      case 0: return "d" + std::to_string(i) + ".example";
      case 1: return "https://s" + std::to_string(i) + ".example/p";
      default: return "10.1." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256);
    }
  }

  PublishOptions Base() {
    PublishOptions o;
    o.repo_dir = repo_;
    o.list = "phishing";
    o.manifest_format = kManifestFormat2;
    o.now_unix = now_ += 60;
    o.memory_budget = size_t{8} << 20;
    o.checkpoint_changes = uint64_t{1} << 40;  // checkpoints only where a test makes them
    o.range_diff_value_cap = range_diff_value_cap_;
    return o;
  }

  // One incremental version: `n` new entries, `n` removed ones (and an entry never listed, a no-op).
  Result<PublishReport> Step(int n, uint64_t checkpoint_changes = uint64_t{1} << 40,
                             std::vector<std::string> add = {}) {
    std::vector<std::string> remove;
    for (int i = 0; i < n; ++i) add.push_back(Entry(next_++));
    for (int i = 0; i < n && !content_.empty(); ++i) {
      auto it = content_.begin();
      std::advance(it, static_cast<long>(rng_() % content_.size()));
      remove.push_back(*it);
      content_.erase(it);
    }
    remove.push_back("never-listed.example");
    for (const std::string& a : add) content_.insert(a);
    WriteLines(tmp_.path() + "/add.txt", add);
    WriteLines(tmp_.path() + "/remove.txt", remove);
    PublishOptions o = Base();
    o.add_inputs = {FeedSpec{FeedFormat::kPlain, "", tmp_.path() + "/add.txt"}};
    o.remove_inputs = {FeedSpec{FeedFormat::kPlain, "", tmp_.path() + "/remove.txt"}};
    o.checkpoint_changes = checkpoint_changes;
    o.checkpoint_inline = checkpoint_inline_;
    auto r = Publish(Env::Default(), key_, o);
    if (r.ok()) Record();
    return r;
  }

  void Record() {
    Manifest m = ReadManifest(repo_);
    history_[m.version] = Expected(content_, m);
  }

  // Every client at a version still offered reaches the newest one through the manifest's diffs (one hop, or
  // two through the checkpoint), and the result is the content's fingerprint sets and the signed digest.
  void ExpectEveryClientCatchesUp() {
    Manifest m = ReadManifest(repo_);
    ASSERT_EQ(m.format, kManifestFormat2);
    const Sets& want = history_.at(m.version);
    EXPECT_EQ(DigestOf(want, m), m.state_digest);
    // A new client: the checkpoint snapshot, then the diff from the checkpoint.
    Sets fresh = FromSnapshot(repo_, m);
    if (m.checkpoint.version < m.version) {
      const ManifestDiff* d = FindRangeDiff(m, m.version, m.checkpoint.version);
      ASSERT_NE(d, nullptr);
      fresh = Apply(fresh, repo_, *d, CapsFor(m, *d));
    }
    EXPECT_EQ(fresh, want);
    for (const auto& [f, state] : history_) {
      if (f >= m.version) continue;
      Sets s = state;
      if (f >= m.checkpoint.version) {
        const ManifestDiff* d = FindRangeDiff(m, m.version, f);
        ASSERT_NE(d, nullptr) << "client at " << f;
        EXPECT_LE(d->from_version, f);
        s = Apply(s, repo_, *d, CapsFor(m, *d));
      } else {
        const ManifestDiff* hop = FindRangeDiff(m, m.checkpoint.version, f);
        if (hop == nullptr) continue;  // beyond the archive: the snapshot
        s = Apply(s, repo_, *hop, CapsFor(m, *hop));
        if (m.checkpoint.version < m.version) {
          const ManifestDiff* second = FindRangeDiff(m, m.version, m.checkpoint.version);
          s = Apply(s, repo_, *second, CapsFor(m, *second));
        }
      }
      EXPECT_EQ(s, want) << "client at " << f << " -> " << m.version;
    }
  }

  // A reader's caps for `d`: a member of `diffs` holds at most the publisher's value cap a stream (what every
  // reader takes, lowered by the tests), a large diff what the manifest lets it hold.
  RangeDiffCaps CapsFor(const Manifest& m, const ManifestDiff& d) const {
    RangeDiffCaps caps = RangeDiffCapsFor(m, d);
    if (caps.max_values == kMaxDiffEntries) caps.max_values = range_diff_value_cap_;
    return caps;
  }

  testing::TempDir tmp_{"format2"};
  SigningKey key_ = std::move(SigningKey::Generate()).value();
  std::string repo_;
  std::set<std::string> content_;
  std::map<uint64_t, Sets> history_;
  std::mt19937_64 rng_{3};
  int next_ = 100000;
  int64_t now_ = 1700000000;
  bool checkpoint_inline_ = true;
  uint64_t range_diff_value_cap_ = kMaxDiffEntries;
};

TEST_F(Format2Test, AFullVersionIsACheckpoint) {
  Start();
  Manifest m = ReadManifest(repo_);
  EXPECT_EQ(m.version, 1u);
  EXPECT_EQ(m.checkpoint.version, 1u);
  EXPECT_TRUE(m.diffs.empty());
  const std::string priv = repo_ + "/private/lists/phishing/";
  EXPECT_TRUE(std::filesystem::exists(priv + CheckpointRecordFileName(1)));
  EXPECT_TRUE(std::filesystem::exists(priv + EpochMapFileName(1)));
  ExpectEveryClientCatchesUp();
}

TEST_F(Format2Test, IncrementalVersionsWriteOnlyTheirChangeAndEveryClientCatchesUp) {
  Start();
  for (int v = 2; v <= 12; ++v) {
    auto r = Step(20 + v);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->version, static_cast<uint64_t>(v));
    EXPECT_EQ(r->checkpoint, 1u);
    EXPECT_EQ(r->delta_puts, static_cast<uint64_t>(20 + v));
    EXPECT_EQ(r->delta_deletes, static_cast<uint64_t>(20 + v));
    // No snapshot, no state file, no whole full-hash file for the version: only deltas.
    const std::string priv = repo_ + "/private/lists/phishing/";
    EXPECT_FALSE(std::filesystem::exists(priv + PrivateSnapshotFileName(r->version)));
    EXPECT_FALSE(std::filesystem::exists(priv + StateFileName(r->version)));
    EXPECT_FALSE(std::filesystem::exists(priv + FullHashFileName(r->version)));
    EXPECT_TRUE(std::filesystem::exists(priv + StateDeltaFileName(r->version)));
    EXPECT_TRUE(std::filesystem::exists(priv + FullHashDeltaFileName(r->version)));
    ExpectEveryClientCatchesUp();
  }
  // Anchors are geometric: far fewer diffs than versions once the epoch is long.
  EXPECT_LT(ReadManifest(repo_).diffs.size(), 11u);
}

TEST_F(Format2Test, TouchedFingerprintsFromTheStateBeforeEqualThoseFromBothStates) {
  // A version derives the presence after it from the state before and its change (no second LsmState::Open).
  // Tiny universes make many entries share a fingerprint: a fingerprint whose change only deletes stays
  // present when the state before holds another of its entries.
  Start();
  for (int v = 2; v <= 6; ++v) ASSERT_TRUE(Step(40).ok());
  const std::string priv = repo_ + "/private/lists/phishing";
  size_t shared_kept = 0;
  for (uint64_t v = 2; v <= 6; ++v) {
    auto before = LsmState::Open(Env::Default(), priv, "phishing", v - 1);
    auto after = LsmState::Open(Env::Default(), priv, "phishing", v);
    ASSERT_TRUE(before.ok() && after.ok());
    auto delta = ReadStateDelta(priv + "/" + StateDeltaFileName(v), "phishing", v);
    ASSERT_TRUE(delta.ok()) << delta.status().ToString();
    for (uint64_t u : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{7}, uint64_t{64}, uint64_t{1} << 40}) {
      const std::array<uint64_t, kLayerKindCount> universe = {u, u, u};
      auto both = TouchedFingerprintsOf(**before, **after, delta->records, universe);
      auto one = TouchedFingerprintsOf(**before, delta->records, universe);
      ASSERT_TRUE(both.ok() && one.ok());
      EXPECT_EQ(*one, *both) << "version " << v << " universe " << u;
      for (const TouchedFingerprint& t : *one) shared_kept += t.before && t.after ? 1 : 0;
    }
  }
  EXPECT_GT(shared_kept, 0u);  // the case the count handles did occur
  // A record that is neither put nor delete is refused.
  auto before = LsmState::Open(Env::Default(), priv, "phishing", 6);
  ASSERT_TRUE(before.ok());
  KeyRecord bad;
  bad.layer = 0;
  bad.key = 12345;
  bad.reserved = 7;
  auto refused = TouchedFingerprintsOf(**before, std::span<const KeyRecord>(&bad, 1), {64, 64, 64});
  EXPECT_EQ(refused.status().code(), StatusCode::kCorruption);
  // From counts (what a version passes, LsmState::FindInKeyRange's): one per record, and a range cannot lose more
  // entries than it held.
  KeyRecord del = bad;
  del.reserved = static_cast<uint8_t>(DeltaOp::kDelete);
  const uint64_t none = 0, one = 1;
  EXPECT_EQ(TouchedFingerprintsOf(std::span<const KeyRecord>(&del, 1), {}, {64, 64, 64}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(TouchedFingerprintsOf(std::span<const KeyRecord>(&del, 1), std::span<const uint64_t>(&none, 1),
                                  {64, 64, 64}).status().code(),
            StatusCode::kCorruption);
  auto gone = TouchedFingerprintsOf(std::span<const KeyRecord>(&del, 1), std::span<const uint64_t>(&one, 1),
                                    {64, 64, 64});
  ASSERT_TRUE(gone.ok());
  ASSERT_EQ(gone->size(), 1u);
  EXPECT_TRUE((*gone)[0].before);
  EXPECT_FALSE((*gone)[0].after);
}

// The version that adopts a checkpoint moves the bases it supersedes into the trash (a rename: unlinking gigabytes
// made it wait seconds at 100 M); the next checkpoint pass unlinks them. Without a trash directory (a file is in
// its place) they are unlinked as before, and the version still commits.
TEST_F(Format2Test, SupersededBasesGoToTheTrashAndTheNextCheckpointPassEmptiesIt) {
  namespace fs = std::filesystem;
  Start();
  for (int v = 2; v <= 4; ++v) ASSERT_TRUE(Step(30).ok());
  PublishOptions o = Base();
  ASSERT_TRUE(MakeCheckpoint(Env::Default(), o, 4).ok());
  const std::string priv = repo_ + "/private/lists/phishing/";
  const std::string trash = PrivateTrashDir(repo_, "phishing") + "/";
  EXPECT_FALSE(fs::exists(trash));
  ASSERT_TRUE(Step(30).ok());  // version 5 adopts checkpoint 4
  ASSERT_EQ(ReadManifest(repo_).checkpoint.version, 4u);
  for (const std::string& n : {StateFileName(1), FullHashFileName(1), PrivateSnapshotFileName(1)}) {
    EXPECT_FALSE(fs::exists(priv + n)) << n;
    EXPECT_TRUE(fs::exists(trash + "private." + n)) << n;
  }
  ExpectEveryClientCatchesUp();
  // A pass with nothing due empties it.
  uint64_t at = 5;
  auto due = MakeCheckpointIfDue(Env::Default(), Base(), &at);
  ASSERT_TRUE(due.ok()) << due.status().ToString();
  EXPECT_FALSE(*due);
  EXPECT_TRUE(fs::is_empty(trash));
  EXPECT_TRUE(EmptyTrash(Env::Default(), repo_, "phishing").ok());
  // No trash directory can be made: the next adoption unlinks the superseded bases itself.
  fs::remove_all(PrivateTrashDir(repo_, "phishing"));
  {
    std::ofstream blocker(PrivateTrashDir(repo_, "phishing"));
    blocker << "not a directory";
  }
  ASSERT_TRUE(Step(30).ok());
  Status made = MakeCheckpoint(Env::Default(), Base(), 6);  // the trash cannot be emptied: no matter
  ASSERT_TRUE(made.ok()) << made.ToString();
  auto r = Step(30);  // version 7 adopts checkpoint 6 and prunes checkpoint 4's bases
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(ReadManifest(repo_).checkpoint.version, 6u);
  for (const std::string& n : {StateFileName(4), FullHashFileName(4), PrivateSnapshotFileName(4)}) {
    EXPECT_FALSE(fs::exists(priv + n)) << n;
  }
  EXPECT_TRUE(fs::is_regular_file(PrivateTrashDir(repo_, "phishing")));
  ExpectEveryClientCatchesUp();
}

TEST_F(Format2Test, CheckpointsMadeBesidePublishingAreAdoptedAndServeClientsBehindThem) {
  Start();
  for (int v = 2; v <= 5; ++v) ASSERT_TRUE(Step(30).ok());
  PublishOptions o = Base();
  ASSERT_TRUE(MakeCheckpoint(Env::Default(), o, 5).ok());
  ASSERT_TRUE(MakeCheckpoint(Env::Default(), o, 5).ok());  // idempotent
  // Version 5's manifest still names checkpoint 1; version 6 adopts 5.
  EXPECT_EQ(ReadManifest(repo_).checkpoint.version, 1u);
  auto r = Step(30);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Manifest m = ReadManifest(repo_);
  EXPECT_EQ(m.checkpoint.version, 5u);
  bool has_hop = false;
  for (const ManifestDiff& d : m.diffs) has_hop |= d.to_version == 5;
  EXPECT_TRUE(has_hop) << "clients behind the checkpoint get a first hop";
  ExpectEveryClientCatchesUp();
  // The new bases equal what a full publish of the same content writes (state) and hold the same hashes.
  const std::string priv = repo_ + "/private/lists/phishing/";
  EXPECT_TRUE(std::filesystem::exists(priv + StateFileName(5)));
  EXPECT_TRUE(std::filesystem::exists(priv + FullHashFileName(5)));
  // An inline checkpoint when the touched fingerprints pass the threshold; then more versions and a second
  // checkpoint whose archive reaches back across the first.
  r = Step(30, /*checkpoint_changes=*/10);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->checkpointed);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Step(25).ok());
  m = ReadManifest(repo_);
  EXPECT_EQ(m.checkpoint.version, 7u);
  ExpectEveryClientCatchesUp();
}

TEST_F(Format2Test, AKilledCheckpointLeavesTheOldOneInUse) {
  Start();
  for (int v = 2; v <= 4; ++v) ASSERT_TRUE(Step(30).ok());
  // A checkpoint that never wrote its record (killed before it): its other files are there, unused.
  PublishOptions o = Base();
  ASSERT_TRUE(MakeCheckpoint(Env::Default(), o, 4).ok());
  std::filesystem::remove(repo_ + "/private/lists/phishing/" + CheckpointRecordFileName(4));
  auto r = Step(30);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadManifest(repo_).checkpoint.version, 1u);
  ExpectEveryClientCatchesUp();
  // Made again later, it is adopted.
  ASSERT_TRUE(MakeCheckpoint(Env::Default(), o, 5).ok());
  ASSERT_TRUE(Step(10).ok());
  EXPECT_EQ(ReadManifest(repo_).checkpoint.version, 5u);
  ExpectEveryClientCatchesUp();
}

TEST_F(Format2Test, ALayerEmptyAtTheCheckpointTakesItsFirstEntries) {
  Start(/*with_ip=*/false);
  EXPECT_EQ(ReadManifest(repo_).universe[static_cast<int>(LayerKind::kIp)], 0u);
  auto r = Step(10, uint64_t{1} << 40, {"192.0.2.7", "198.51.100.0/24"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Manifest m = ReadManifest(repo_);
  EXPECT_NE(m.universe[static_cast<int>(LayerKind::kIp)], 0u);
  EXPECT_GE(m.entries[static_cast<int>(LayerKind::kIp)], 2u);  // and the IPs among the 10 new entries
  ExpectEveryClientCatchesUp();
  // A checkpoint keeps that universe; a later version empties the layer again: universe 0 in its manifest.
  ASSERT_TRUE(MakeCheckpoint(Env::Default(), Base(), m.version).ok());
  ASSERT_TRUE(Step(5).ok());
  ExpectEveryClientCatchesUp();
}

TEST_F(Format2Test, AFullVersionAfterIncrementalOnesFollowsTheCommittedVersion) {
  Start();
  for (int v = 2; v <= 4; ++v) ASSERT_TRUE(Step(20).ok());
  // Only checkpoint 1 has a private snapshot copy; the committed version is 4.
  WriteLines(tmp_.path() + "/full.txt", {content_.begin(), content_.end()});
  PublishOptions o = Base();
  o.inputs = {FeedSpec{FeedFormat::kPlain, "", tmp_.path() + "/full.txt"}};
  auto r = Publish(Env::Default(), key_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 5u);
  Record();
  Manifest m = ReadManifest(repo_);
  EXPECT_EQ(m.checkpoint.version, 5u);
  ExpectEveryClientCatchesUp();
  ASSERT_TRUE(Step(10).ok());
  EXPECT_EQ(ReadManifest(repo_).version, 6u);
  ExpectEveryClientCatchesUp();
}

// `publish --no-checkpoint` from a timer, and `compact --if-due` beside it: the version only says a checkpoint is
// due; CheckpointListIfDue makes it by the same rule, the next version adopts it, and clients behind it catch up.
TEST_F(Format2Test, ACheckpointLeftToCompactIfDueIsMadeThereAndAdopted) {
  Start();
  checkpoint_inline_ = false;
  auto r = Step(30, /*checkpoint_changes=*/10);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->checkpointed);
  EXPECT_TRUE(r->checkpoint_due);
  const uint64_t due_at = r->version;
  auto none = CheckpointListIfDue(repo_, "phishing", /*checkpoint_changes=*/uint64_t{1} << 40);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->compacted);  // not due by a higher threshold (and under 64 Ki touched)
  auto made = CheckpointListIfDue(repo_, "phishing", /*checkpoint_changes=*/10);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_TRUE(made->compacted);
  EXPECT_EQ(made->version, due_at);
  EXPECT_EQ(made->base_version, ReadManifest(repo_).checkpoint.version);  // the one the manifest still names
  auto again = CheckpointListIfDue(repo_, "phishing", /*checkpoint_changes=*/10);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->compacted);  // nothing touched since
  r = Step(5);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->checkpoint_due);
  EXPECT_EQ(ReadManifest(repo_).checkpoint.version, due_at);
  ExpectEveryClientCatchesUp();

  // A format 1 list has no checkpoints.
  testing::TempDir other("format2-if-due");
  WriteLines(other.path() + "/full.txt", {"a.example"});
  PublishOptions o;
  o.repo_dir = other.path() + "/repo";
  o.list = "phishing";
  o.inputs = {FeedSpec{FeedFormat::kPlain, "", other.path() + "/full.txt"}};
  ASSERT_TRUE(Publish(Env::Default(), key_, o).ok());
  EXPECT_EQ(CheckpointListIfDue(o.repo_dir, "phishing").status().code(), StatusCode::kFailedPrecondition);
}

// A checkpoint pass beside publishing that versions overtake between its read of the manifest and its read of
// the version's epoch map (each version keeps the newest two; at 100 M, two back-to-back versions committed while
// `compact --if-due` unlinked the trash's superseded bases, and the pass failed with kNotFound). The pass moves to
// the newest committed version; `compact` as well.
TEST_F(Format2Test, ACheckpointPassOvertakenByVersionsMovesToTheNewestOne) {
  // Two versions committed right after the pass's first read of the manifest.
  class OvertakingEnv : public EnvWrapper {
   public:
    explicit OvertakingEnv(std::function<void()> overtake) : EnvWrapper(Env::Default()), overtake_(std::move(overtake)) {}
    Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
      Result<std::string> r = EnvWrapper::ReadFile(path, max_bytes);
      if (overtake_ && path.size() >= 13 && path.compare(path.size() - 13, 13, "manifest.json") == 0) {
        auto overtake = std::move(overtake_);
        overtake_ = nullptr;
        overtake();
      }
      return r;
    }

   private:
    std::function<void()> overtake_;
  };
  Start();
  checkpoint_inline_ = false;
  ASSERT_TRUE(Step(30, /*checkpoint_changes=*/10).ok());
  const uint64_t read_at = ReadManifest(repo_).version;
  uint64_t newest = 0;
  OvertakingEnv env([&] {
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(Step(30, /*checkpoint_changes=*/10).ok());
    newest = ReadManifest(repo_).version;
  });
  auto made = CheckpointListIfDue(repo_, "phishing", /*checkpoint_changes=*/10, /*fp_rate=*/0.001, &env);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_EQ(newest, read_at + 2);
  EXPECT_FALSE(std::filesystem::exists(repo_ + "/private/lists/phishing/" + EpochMapFileName(read_at)));
  EXPECT_TRUE(made->compacted);
  EXPECT_EQ(made->version, newest);
  ASSERT_TRUE(Step(5).ok());
  EXPECT_EQ(ReadManifest(repo_).checkpoint.version, newest);
  ExpectEveryClientCatchesUp();

  // `compact` too.
  ASSERT_TRUE(Step(30).ok());
  const uint64_t compact_read_at = ReadManifest(repo_).version;
  OvertakingEnv env2([&] {
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(Step(30).ok());
    newest = ReadManifest(repo_).version;
  });
  auto compacted = CompactList(repo_, "phishing", /*keep_deltas=*/1440, &env2);
  ASSERT_TRUE(compacted.ok()) << compacted.status().ToString();
  ASSERT_EQ(newest, compact_read_at + 2);
  EXPECT_TRUE(compacted->compacted);
  EXPECT_EQ(compacted->version, newest);
  ASSERT_TRUE(Step(5).ok());
  EXPECT_EQ(ReadManifest(repo_).checkpoint.version, newest);
  ExpectEveryClientCatchesUp();
}

// A version whose changes since the checkpoint no range diff can carry (a batch of millions of entries against
// kMaxDiffEntries values a stream; here 100) used to stop the publisher (EncodeRangeDiff aborts on a diff no
// reader takes) or fail on every retry. It becomes a checkpoint itself, before its commit, also where checkpoints
// are otherwise left to `compact --if-due`; the versions after it follow from it.
TEST_F(Format2Test, AVersionNoDiffFromItsCheckpointCanCarryBecomesACheckpoint) {
  Start();
  for (int v = 2; v <= 4; ++v) ASSERT_TRUE(Step(30).ok());
  range_diff_value_cap_ = 100;
  checkpoint_inline_ = false;
  auto r = Step(600);  // about 200 added and 200 removed fingerprints a layer
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->checkpointed);
  EXPECT_EQ(r->checkpoint, 5u);
  Manifest m = ReadManifest(repo_);
  EXPECT_EQ(m.version, 5u);
  EXPECT_EQ(m.checkpoint.version, 5u);
  EXPECT_TRUE(std::filesystem::exists(repo_ + "/private/lists/phishing/" + CheckpointRecordFileName(5)));
  EXPECT_TRUE(std::filesystem::exists(repo_ + "/public/v1/lists/phishing/" + m.checkpoint.snapshot.path));
  for (const ManifestDiff& d : m.diffs) EXPECT_EQ(d.to_version, 5u);  // none reaches back across version 5
  // The diffs over the cap that are still smaller than the snapshot are large diffs (§8.5), for readers that take
  // them; the rest of the clients take the snapshot.
  ASSERT_FALSE(m.large_diffs.empty());
  for (const ManifestDiff& d : m.large_diffs) {
    EXPECT_EQ(d.to_version, 5u);
    EXPECT_LT(d.file.size, m.checkpoint.snapshot.size);
  }
  ExpectEveryClientCatchesUp();
  // A reader from before large diffs sees a valid manifest without them.
  Manifest old_reader = m;
  old_reader.large_diffs.clear();
  EXPECT_TRUE(ValidateManifest(old_reader).ok());
  // The next versions are incremental from it.
  for (int v = 6; v <= 7; ++v) {
    r = Step(20);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->checkpointed);
  }
  m = ReadManifest(repo_);
  EXPECT_EQ(m.checkpoint.version, 5u);
  ASSERT_NE(FindRangeDiff(m, 7, 5), nullptr);
  ExpectEveryClientCatchesUp();
}

// A client behind the checkpoint whose first hop holds more than readers take in `diffs` (here 100 values a
// stream; 16 Mi in production, which a client away a few hours from a 100 M list needs) takes a large diff and the
// diff from the checkpoint, not the checkpoint snapshot; the versions after the checkpoint keep naming it, and the
// prune keeps its file.
TEST_F(Format2Test, ClientsBehindTheCheckpointTakeALargeDiffNotTheSnapshot) {
  range_diff_value_cap_ = 50;
  Start();
  // About 10 absent and 10 present values a layer each version; a checkpoint every third version keeps each
  // epoch's diffs under the cap, while the archive at 9 reaches back to version 1 over 8 versions.
  for (int v = 2; v <= 9; ++v) {
    auto r = Step(30, v % 3 == 0 ? 1 : uint64_t{1} << 40);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_LT(r->checkpoint, static_cast<uint64_t>(v));  // no version had to become a checkpoint itself
  }
  ASSERT_TRUE(Step(20).ok());
  Manifest m = ReadManifest(repo_);
  ASSERT_EQ(m.version, 10u);
  ASSERT_EQ(m.checkpoint.version, 9u);
  ASSERT_FALSE(m.large_diffs.empty());
  const ManifestDiff* far = FindRangeDiff(m, 9, 1);
  ASSERT_NE(far, nullptr);
  EXPECT_EQ(RangeDiffCapsFor(m, *far).max_values, LargeRangeDiffValueCap(m));  // it is a large diff
  EXPECT_TRUE(std::filesystem::exists(repo_ + "/public/v1/lists/phishing/" + far->file.path));
  EXPECT_LT(far->file.size + FindRangeDiff(m, 10, 9)->file.size, m.checkpoint.snapshot.size);
  // What a reader of `diffs` alone takes would refuse it.
  auto far_bytes =
      InflateBounded(Read(repo_ + "/public/v1/lists/phishing/" + far->file.path), far->file.inflated_size);
  ASSERT_TRUE(far_bytes.ok());
  EXPECT_EQ(DecodeRangeDiff(*far_bytes, {kMaxDiffBytes, 50}).status().code(), StatusCode::kResourceExhausted);
  // A nearer client's first hop stays a regular diff.
  const ManifestDiff* near = FindRangeDiff(m, 9, 8);
  ASSERT_NE(near, nullptr);
  EXPECT_EQ(RangeDiffCapsFor(m, *near).max_values, kMaxDiffEntries);
  ExpectEveryClientCatchesUp();
}

TEST(RangeDiffFileTest, ADiffNoReaderTakesIsRefusedAsAValueAndNotWritten) {
  testing::TempDir tmp("range-diff-cap");
  RangeDiff d;
  d.list_name = "phishing";
  d.from_version = 3;
  d.to_version = 9;
  RangeLayerDiff l;
  l.layer = LayerKind::kUrl;
  l.universe = 1000;
  l.present = {1, 5, 7, 9};
  l.absent = {2, 3};
  l.new_count = 10;
  d.layers.push_back(l);
  auto refused = WriteRangeDiffFile(Env::Default(), tmp.path(), d, /*value_cap=*/3);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("4 url values in one stream"), std::string::npos)
      << refused.status().message();
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/" + RangeDiffFileName(3, 9)));
  auto written = WriteRangeDiffFile(Env::Default(), tmp.path(), d, /*value_cap=*/4);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_TRUE(std::filesystem::exists(tmp.path() + "/" + RangeDiffFileName(3, 9)));
}

TEST_F(Format2Test, AnIncrementalVersionNeedsAFormat2Predecessor) {
  testing::TempDir other("format2-v1");
  WriteLines(other.path() + "/full.txt", {"a.example", "b.example"});
  PublishOptions o;
  o.repo_dir = other.path() + "/repo";
  o.list = "phishing";
  o.inputs = {FeedSpec{FeedFormat::kPlain, "", other.path() + "/full.txt"}};
  ASSERT_TRUE(Publish(Env::Default(), key_, o).ok());
  WriteLines(other.path() + "/add.txt", {"c.example"});
  o.inputs.clear();
  o.add_inputs = {FeedSpec{FeedFormat::kPlain, "", other.path() + "/add.txt"}};
  o.manifest_format = kManifestFormat2;
  auto r = Publish(Env::Default(), key_, o);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--manifest-format 2"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace urlguard

namespace urlguard {
namespace {

// `n` fingerprints of layer 0 from `first` on, each added (absent before, present after).
std::vector<TouchedFingerprint> Added(uint64_t first, uint64_t n) {
  std::vector<TouchedFingerprint> t(n);
  for (uint64_t i = 0; i < n; ++i) t[i] = {LayerKind::kDomain, first + i, false, true};
  return t;
}

// A checkpoint is due past checkpoint_changes, or past an eighth of the list (never below 64 Ki touched): the second
// bound keeps what a client far behind downloads (the checkpoint's snapshot plus the range diff from it) near the
// snapshot for lists small next to checkpoint_changes.
TEST(CheckpointDueTest, FollowsTheChangesOrAnEighthOfTheList) {
  std::array<LayerSetSum, kLayerKindCount> sums{};
  sums[0].count = 1'000'000;
  EpochMap big(10, sums);
  ASSERT_TRUE(big.Apply(11, Added(0, 100'000)).ok());  // 1.1 M listed: an eighth is 137.5 k
  EXPECT_FALSE(CheckpointDue(big, 10, uint64_t{1} << 20));
  EXPECT_TRUE(CheckpointDue(big, 10, 99'999));  // the configured bound
  ASSERT_TRUE(big.Apply(12, Added(100'000, 50'000)).ok());  // 150 k touched, 1.15 M listed: an eighth is 143.75 k
  EXPECT_TRUE(CheckpointDue(big, 10, uint64_t{1} << 20));
  EXPECT_FALSE(CheckpointDue(big, 11, uint64_t{1} << 20));  // since checkpoint 11: 50 k

  sums[0].count = 1000;  // a small list: the floor
  EpochMap small(10, sums);
  ASSERT_TRUE(small.Apply(11, Added(0, 65'536)).ok());
  EXPECT_FALSE(CheckpointDue(small, 10, uint64_t{1} << 20));
  ASSERT_TRUE(small.Apply(12, Added(65'536, 1)).ok());
  EXPECT_TRUE(CheckpointDue(small, 10, uint64_t{1} << 20));
}

}  // namespace
}  // namespace urlguard
