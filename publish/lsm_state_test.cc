// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/lsm_state.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <tuple>

#include "core/byte_io.h"
#include "format/repository_files.h"
#include "platform/fault_injection_env.h"
#include "publish/state_file.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

constexpr char kList[] = "phishing";
const std::vector<std::string> kNames = {"malware", "phishing", "scam", "unwanted"};

// The brute-force model: entry (layer, key, sha) -> (threat name, ipv6, prefix length).
using EntryKey = std::tuple<uint8_t, uint64_t, std::array<uint8_t, 32>>;
struct Value {
  std::string threat;
  uint8_t ipv6 = 0, prefix = 0;
  bool operator==(const Value&) const = default;
};
using Model = std::map<EntryKey, Value>;

EntryKey KeyOf(const KeyRecord& r) {
  std::array<uint8_t, 32> sha;
  std::memcpy(sha.data(), r.sha256, 32);
  return {r.layer, r.key, sha};
}
KeyRecord RecordOf(const EntryKey& k, uint16_t threat, const Value& v) {
  KeyRecord r;
  r.layer = std::get<0>(k);
  r.key = std::get<1>(k);
  std::memcpy(r.sha256, std::get<2>(k).data(), 32);
  r.threat = threat;
  r.ipv6 = v.ipv6;
  r.prefix_length = v.prefix;
  return r;
}

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  // A new entry; one in eight shares the key of an earlier one (a local-key collision: same key, other sha).
  EntryKey NewEntry() {
    std::array<uint8_t, 32> sha;
    for (auto& b : sha) b = static_cast<uint8_t>(rng_());
    uint64_t key = rng_();
    if (!keys_.empty() && rng_() % 8 == 0) key = keys_[rng_() % keys_.size()];
    keys_.push_back(key);
    return {static_cast<uint8_t>(rng_() % 3), key, sha};
  }
  Value NewValue(uint8_t layer) {
    Value v;
    v.threat = kNames[rng_() % kNames.size()];
    if (layer == 2) {
      v.ipv6 = static_cast<uint8_t>(rng_() % 2);
      v.prefix = static_cast<uint8_t>(rng_() % 33);
    }
    return v;
  }
  uint64_t Next() { return rng_(); }

 private:
  std::mt19937_64 rng_;
  std::vector<uint64_t> keys_;
};

std::vector<std::string> UsedThreats(const Model& m) {
  std::vector<std::string> t;
  for (const auto& [k, v] : m) t.push_back(v.threat);
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

uint16_t IdOf(const std::vector<std::string>& table, const std::string& name) {
  return static_cast<uint16_t>(std::lower_bound(table.begin(), table.end(), name) - table.begin());
}

// The state file a full publish writes for `m` (sorted used names; ByLayerKey records).
void WriteBase(const std::string& path, uint64_t version, const Model& m) {
  const std::vector<std::string> threats = UsedThreats(m);
  auto w = StateFileWriter::Create(Env::Default(), path, kList, version, threats);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (const auto& [k, v] : m) ASSERT_TRUE((*w)->Add(RecordOf(k, IdOf(threats, v.threat), v)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
}

// One version's effective change: puts (new or re-threatened) and deletes, applied to `m` and written as V.delta.
void WriteVersion(const std::string& dir, uint64_t version, Gen* gen, Model* m, int adds, int changes, int deletes) {
  std::map<EntryKey, std::optional<Value>> change;
  for (int i = 0; i < adds; ++i) {
    EntryKey k = gen->NewEntry();
    change[k] = gen->NewValue(std::get<0>(k));
  }
  std::vector<EntryKey> keys;
  for (const auto& [k, v] : *m) keys.push_back(k);
  for (int i = 0; i < changes && !keys.empty(); ++i) {
    const EntryKey& k = keys[gen->Next() % keys.size()];
    Value v = m->at(k);
    v.threat = v.threat == "scam" ? "malware" : "scam";
    change[k] = v;
  }
  for (int i = 0; i < deletes && !keys.empty(); ++i) change[keys[gen->Next() % keys.size()]] = std::nullopt;
  std::vector<std::string> threats;
  for (const auto& [k, v] : change) {
    if (v) threats.push_back(v->threat);
  }
  std::sort(threats.begin(), threats.end());
  threats.erase(std::unique(threats.begin(), threats.end()), threats.end());
  auto w = StateDeltaWriter::Create(Env::Default(), JoinPath(dir, StateDeltaFileName(version)), kList, version,
                                    threats);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (const auto& [k, v] : change) {
    if (v) {
      ASSERT_TRUE((*w)->Add(RecordOf(k, IdOf(threats, v->threat), *v), DeltaOp::kPut).ok());
      (*m)[k] = *v;
    } else {
      ASSERT_TRUE((*w)->Add(RecordOf(k, 0, Value{}), DeltaOp::kDelete).ok());
      m->erase(k);
    }
  }
  ASSERT_TRUE((*w)->Finish().ok());
}

Model Contents(const LsmState& s) {
  Model out;
  Status st = s.ForEach([&](const KeyRecord& r) {
    EXPECT_TRUE(out.empty() || out.rbegin()->first < KeyOf(r)) << "out of order";
    out[KeyOf(r)] = Value{s.threats()[r.threat], r.ipv6, r.prefix_length};
    return Status::Ok();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

void ExpectMatches(const LsmState& s, const Model& m, Gen* gen) {
  EXPECT_EQ(Contents(s), m);
  for (const auto& [k, v] : m) {
    auto f = s.Find(std::get<0>(k), std::get<1>(k), std::get<2>(k).data());
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(s.threats()[f->threat], v.threat);
    EXPECT_EQ(f->ipv6, v.ipv6);
    EXPECT_EQ(f->prefix_length, v.prefix);
  }
  for (int i = 0; i < 100; ++i) {
    EntryKey k = gen->NewEntry();
    EXPECT_FALSE(s.Find(std::get<0>(k), std::get<1>(k), std::get<2>(k).data()).has_value());
  }
  // Fingerprint ranges under a small universe (about one entry per range), the last one reaching 2^64 - 1.
  const uint64_t universe = 1000;
  for (int i = 0; i < 300; ++i) {
    const uint8_t layer = static_cast<uint8_t>(i % 3);
    const uint64_t fp = i < 3 ? universe - 1 : gen->Next() % universe;
    KeyRange r = KeyRangeOfFingerprint(fp, universe);
    std::vector<EntryKey> want, got;
    for (const auto& [k, v] : m) {
      if (std::get<0>(k) == layer && MulHi64(std::get<1>(k), universe) == fp) want.push_back(k);
    }
    ASSERT_TRUE(s.ForEachInKeyRange(layer, r.first, r.last, [&](const KeyRecord& rec) {
                   got.push_back(KeyOf(rec));
                   return Status::Ok();
                 }).ok());
    EXPECT_EQ(got, want) << "layer " << int(layer) << " fingerprint " << fp;
    EXPECT_EQ(s.AnyInKeyRange(layer, r.first, r.last), !want.empty());
  }
  // FindInKeyRange: Find and the range's count in one search, for listed entries and for absent ones; with a
  // finger, in ascending order (the model's) and out of order (another SHA-256 of the same key may sort below the
  // entry; the absent entries below come at random).
  std::map<std::pair<uint8_t, uint64_t>, uint64_t> per_fingerprint;
  for (const auto& [k, v] : m) ++per_fingerprint[{std::get<0>(k), MulHi64(std::get<1>(k), universe)}];
  LsmState::Finger finger;
  size_t asked = 0;
  for (const auto& [k, v] : m) {
    if (asked++ % 3 != 0) continue;
    const uint8_t layer = std::get<0>(k);
    const KeyRange r = KeyRangeOfFingerprint(MulHi64(std::get<1>(k), universe), universe);
    uint64_t in_range = 99;
    auto f = s.FindInKeyRange(layer, std::get<1>(k), std::get<2>(k).data(), r.first, r.last, &in_range, &finger);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    ASSERT_TRUE(f->has_value());
    EXPECT_EQ(s.threats()[(*f)->threat], v.threat);
    EXPECT_EQ((*f)->reserved, 0);
    EXPECT_EQ(in_range, (per_fingerprint[{layer, MulHi64(std::get<1>(k), universe)}]));
    // Another entry of the same key (another SHA-256): absent, the same count.
    std::array<uint8_t, 32> other = std::get<2>(k);
    other[31] ^= 0x5a;
    f = s.FindInKeyRange(layer, std::get<1>(k), other.data(), r.first, r.last, &in_range, &finger);
    ASSERT_TRUE(f.ok());
    EXPECT_FALSE(f->has_value());
    EXPECT_EQ(in_range, (per_fingerprint[{layer, MulHi64(std::get<1>(k), universe)}]));
  }
  for (int i = 0; i < 100; ++i) {
    EntryKey k = gen->NewEntry();
    const uint8_t layer = std::get<0>(k);
    const uint64_t fp = MulHi64(std::get<1>(k), universe);
    const KeyRange r = KeyRangeOfFingerprint(fp, universe);
    uint64_t in_range = 99;
    auto f = s.FindInKeyRange(layer, std::get<1>(k), std::get<2>(k).data(), r.first, r.last, &in_range, &finger);
    ASSERT_TRUE(f.ok());
    EXPECT_FALSE(f->has_value());
    auto it = per_fingerprint.find({layer, fp});
    EXPECT_EQ(in_range, it == per_fingerprint.end() ? 0 : it->second);
  }
}

TEST(KeyRangeTest, CoversExactlyTheKeysOfAFingerprint) {
  for (uint64_t u : {uint64_t{1}, uint64_t{3}, uint64_t{1000}, uint64_t{1} << 40, UINT64_MAX}) {
    for (uint64_t f : {uint64_t{0}, u / 2, u - 1}) {
      KeyRange r = KeyRangeOfFingerprint(f, u);
      EXPECT_EQ(MulHi64(r.first, u), f);
      EXPECT_EQ(MulHi64(r.last, u), f);
      if (r.first > 0) {
        EXPECT_EQ(MulHi64(r.first - 1, u), f - 1);
      }
      if (r.last < UINT64_MAX) {
        EXPECT_EQ(MulHi64(r.last + 1, u), f + 1);
      }
      if (f == u - 1) {
        EXPECT_EQ(r.last, UINT64_MAX);
      }
    }
  }
}

struct Fixture {
  testing::TempDir tmp{"lsm"};
  std::string dir;
  Gen gen{17};
  Model model;
  std::map<uint64_t, Model> at;  // the model at each version
  Fixture() {
    dir = tmp.path() + "/list";
    EXPECT_TRUE(Env::Default()->CreateDirs(dir, true).ok());
  }
  void Build(int base_entries, uint64_t last_version) {
    for (int i = 0; i < base_entries; ++i) {
      EntryKey k = gen.NewEntry();
      model[k] = gen.NewValue(std::get<0>(k));
    }
    WriteBase(JoinPath(dir, StateFileName(1)), 1, model);
    at[1] = model;
    for (uint64_t v = 2; v <= last_version; ++v) {
      // Version 5 changes nothing: its delta is empty.
      if (v == 5) {
        WriteVersion(dir, v, &gen, &model, 0, 0, 0);
      } else {
        WriteVersion(dir, v, &gen, &model, 40, 15, 25);
      }
      at[v] = model;
    }
  }
};

TEST(ListStateTest, LookupsMatchABruteForceModel) {
  Fixture f;
  f.Build(2000, 12);
  for (uint64_t v = 1; v <= 12; ++v) {
    auto s = LsmState::Open(Env::Default(), f.dir, kList, v);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ((*s)->base_version(), 1u);
    EXPECT_EQ((*s)->version(), v);
    EXPECT_EQ((*s)->delta_count(), v - 1);
    ExpectMatches(**s, f.at[v], &f.gen);
  }
}

// The lookups interpolate on the assumption that keys are uniform; keys that are not (clustered in a few narrow
// stretches, many sharing a key) must still be found exactly, by the bounded interpolation and bisection.
TEST(ListStateTest, LookupsMatchForKeysThatAreNotUniform) {
  testing::TempDir dir{"lsm"};
  std::mt19937_64 rng(7);
  Model m;
  for (int i = 0; i < 30000; ++i) {
    std::array<uint8_t, 32> sha;
    for (auto& b : sha) b = static_cast<uint8_t>(rng());
    const uint64_t cluster = (rng() % 4) << 62 | (rng() % 3);             // 12 narrow stretches
    const uint64_t key = i % 5 == 0 ? cluster : cluster + (rng() % 64);  // a fifth share their stretch's first key
    const uint8_t layer = static_cast<uint8_t>(i % 3 == 0 ? 0 : 1);        // layer 2 stays empty
    m[{layer, key, sha}] = Value{kNames[rng() % kNames.size()], 0, 0};
  }
  WriteBase(JoinPath(dir.path(), StateFileName(1)), 1, m);
  auto s = LsmState::Open(Env::Default(), dir.path(), kList, 1);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Gen gen(8);
  ExpectMatches(**s, m, &gen);
  // Every key's range in every layer, against the model.
  for (const auto& [k, v] : m) {
    const uint64_t key = std::get<1>(k);
    for (uint8_t layer = 0; layer < 3; ++layer) {
      size_t want = 0, got = 0;
      for (auto it = m.lower_bound({layer, key, {}}); it != m.end() && std::get<0>(it->first) == layer &&
                                                      std::get<1>(it->first) == key;
           ++it) {
        ++want;
      }
      ASSERT_TRUE((*s)->ForEachInKeyRange(layer, key, key, [&](const KeyRecord&) {
                         ++got;
                         return Status::Ok();
                       }).ok());
      ASSERT_EQ(got, want) << "layer " << int(layer) << " key " << key;
    }
  }
}

// PrefetchLookups runs every key's interpolation search in lockstep and reads their pages ahead: it must end
// (clustered keys included), skip what the overlay answers, ask for a few pages per key rather than the layer, and
// change no answer.
TEST(ListStateTest, PrefetchedLookupsAskForFewPagesAndChangeNoAnswer) {
  Fixture f;
  f.Build(20000, 3);  // a base of 20 k entries and two deltas on it
  auto s = LsmState::Open(Env::Default(), f.dir, kList, 3);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<LsmState::LookupKey> keys;
  uint64_t added_by_deltas = 0;  // their keys are in the overlay: no search
  for (const auto& [k, v] : f.at[3]) {
    keys.push_back({std::get<0>(k), std::get<1>(k)});
    added_by_deltas += f.at[1].count(k) == 0 ? 1 : 0;
  }
  ASSERT_GT(added_by_deltas, 0u);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 5000; ++i) keys.push_back({static_cast<uint8_t>(rng() % 3), rng()});  // mostly absent
  keys.push_back({7, 1});  // a layer past the last: nothing to search
  const LsmState::PrefetchStats stats = (*s)->PrefetchLookups(keys, LsmState::Readahead::kAlways);
  EXPECT_GT(stats.searched, keys.size() / 2);
  EXPECT_LE(stats.searched, keys.size() - 1 - added_by_deltas);
  EXPECT_GE(stats.pages, 1u);
  // A 20 k-record base is about 235 pages: each search narrows to a few of them.
  EXPECT_LE(stats.pages, 12 * stats.searched);
  ExpectMatches(**s, f.at[3], &f.gen);
  // Clustered keys: the bisection after kMaxInterpolations rounds ends the lockstep too.
  testing::TempDir dir{"lsm-prefetch"};
  Model m;
  std::vector<LsmState::LookupKey> clustered;
  for (int i = 0; i < 5000; ++i) {
    std::array<uint8_t, 32> sha;
    for (auto& b : sha) b = static_cast<uint8_t>(rng());
    const uint64_t key = (rng() % 4) << 62 | (rng() % 64);
    m[{1, key, sha}] = Value{kNames[0], 0, 0};
    clustered.push_back({1, key});
  }
  WriteBase(JoinPath(dir.path(), StateFileName(1)), 1, m);
  auto c = LsmState::Open(Env::Default(), dir.path(), kList, 1);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const LsmState::PrefetchStats cs = (*c)->PrefetchLookups(clustered, LsmState::Readahead::kAlways);
  EXPECT_EQ(cs.searched, clustered.size());
  EXPECT_LE(cs.pages, 12 * cs.searched);
  Gen gen(3);
  ExpectMatches(**c, m, &gen);
}

TEST(ListStateTest, CompactionWritesWhatAFullPublishWrites) {
  Fixture f;
  f.Build(3000, 9);
  ASSERT_TRUE(CompactListState(Env::Default(), f.dir, kList, 9).ok());
  WriteBase(f.tmp.path() + "/full.state", 9, f.at[9]);
  EXPECT_TRUE(testing::ReadFileOrDie(JoinPath(f.dir, StateFileName(9))) ==
              testing::ReadFileOrDie(f.tmp.path() + "/full.state"))
      << "compacted base differs from a full write of the same content";
  // The new base is chosen; versions before it still open from the old one while it is kept.
  auto s = LsmState::Open(Env::Default(), f.dir, kList, 9);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->base_version(), 9u);
  EXPECT_EQ(Contents(**s), f.at[9]);
  auto old = LsmState::Open(Env::Default(), f.dir, kList, 6);
  ASSERT_TRUE(old.ok());
  EXPECT_EQ((*old)->base_version(), 1u);
  // Compacting again is a no-op; more versions on top of the new base.
  ASSERT_TRUE(CompactListState(Env::Default(), f.dir, kList, 9).ok());
  for (uint64_t v = 10; v <= 12; ++v) {
    WriteVersion(f.dir, v, &f.gen, &f.model, 30, 10, 20);
    f.at[v] = f.model;
  }
  // Pruning keeps the deltas from 7 on and drops the old base.
  ASSERT_TRUE(PruneListState(Env::Default(), f.dir, kList, 12, 7).ok());
  EXPECT_FALSE(Env::Default()->FileExists(JoinPath(f.dir, StateFileName(1))));
  EXPECT_FALSE(Env::Default()->FileExists(JoinPath(f.dir, StateDeltaFileName(6))));
  EXPECT_TRUE(Env::Default()->FileExists(JoinPath(f.dir, StateDeltaFileName(7))));
  auto now = LsmState::Open(Env::Default(), f.dir, kList, 12);
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ((*now)->base_version(), 9u);
  ExpectMatches(**now, f.at[12], &f.gen);
  // A version whose base is gone cannot be opened.
  EXPECT_EQ(LsmState::Open(Env::Default(), f.dir, kList, 6).status().code(), StatusCode::kFailedPrecondition);
}

TEST(ListStateTest, AMissingDeltaSaysRunAFullPublish) {
  Fixture f;
  f.Build(100, 6);
  ASSERT_TRUE(Env::Default()->RemoveFile(JoinPath(f.dir, StateDeltaFileName(4))).ok());
  auto s = LsmState::Open(Env::Default(), f.dir, kList, 6);
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("4.delta"), std::string::npos) << s.status().ToString();
  EXPECT_NE(s.status().message().find("run a full publish"), std::string::npos);
  EXPECT_TRUE(LsmState::Open(Env::Default(), f.dir, kList, 3).ok());
  // No base at all.
  EXPECT_EQ(LsmState::Open(Env::Default(), f.tmp.path(), kList, 3).status().code(),
            StatusCode::kFailedPrecondition);
  // A delta of another version under this name is refused.
  ASSERT_TRUE(Env::Default()->RenameFile(JoinPath(f.dir, StateDeltaFileName(5)),
                                         JoinPath(f.dir, StateDeltaFileName(4))).ok());
  EXPECT_EQ(LsmState::Open(Env::Default(), f.dir, kList, 4).status().code(), StatusCode::kCorruption);
}

TEST(ListStateTest, ADamagedBaseIsRefusedByAFullWalk) {
  Fixture f;
  f.Build(500, 3);
  const std::string base = JoinPath(f.dir, StateFileName(1));
  std::string bytes = testing::ReadFileOrDie(base);
  bytes[bytes.size() - 100] ^= 1;
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), base, bytes).ok());
  auto s = LsmState::Open(Env::Default(), f.dir, kList, 3);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->ForEach([](const KeyRecord&) { return Status::Ok(); }).code(), StatusCode::kCorruption);
  EXPECT_EQ(CompactListState(Env::Default(), f.dir, kList, 3).code(), StatusCode::kCorruption);
  EXPECT_FALSE(Env::Default()->FileExists(JoinPath(f.dir, StateFileName(3))));
  EXPECT_FALSE(Env::Default()->FileExists(JoinPath(f.dir, StateFileName(3) + ".tmp")));
}

// After a crash of a compaction to version 8: the state at 8 opens and equals the model, pruning leaves no stray
// file, and compacting again gives the full-publish bytes.
void ExpectRecovered(Fixture& f) {
  auto s = LsmState::Open(Env::Default(), f.dir, kList, 8);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Contents(**s), f.at[8]);
  s->reset();
  ASSERT_TRUE(PruneListState(Env::Default(), f.dir, kList, 8, 1).ok());
  auto names = Env::Default()->ListDir(f.dir);
  ASSERT_TRUE(names.ok());
  for (const std::string& n : *names) {
    EXPECT_EQ(n.find(".tmp"), std::string::npos) << n;
  }
  ASSERT_TRUE(CompactListState(Env::Default(), f.dir, kList, 8).ok());
  WriteBase(f.tmp.path() + "/full.state", 8, f.at[8]);
  EXPECT_TRUE(testing::ReadFileOrDie(JoinPath(f.dir, StateFileName(8))) ==
              testing::ReadFileOrDie(f.tmp.path() + "/full.state"));
}

TEST(ListStateTest, CompactionCrashedAtEveryStepLeavesAConsistentState) {
  int steps = 0;
  {
    Fixture f;
    f.Build(400, 8);
    FaultInjectionEnv env;
    ASSERT_TRUE(CompactListState(&env, f.dir, kList, 8).ok());
    steps = env.steps();
  }
  ASSERT_GT(steps, 3);  // create, appends, sync, close, rename, sync dir
  for (int step = 1; step <= steps; ++step) {
    SCOPED_TRACE("crash at step " + std::to_string(step));
    Fixture f;
    f.Build(400, 8);
    FaultInjectionEnv env;
    env.CrashAtStep(step);
    EXPECT_FALSE(CompactListState(&env, f.dir, kList, 8).ok());
    env.PowerLoss();
    ExpectRecovered(f);
  }
}

TEST(ListStateTest, CompactionKilledAtEveryFaultPointLeavesAConsistentState) {
#if !defined(URLGUARD_FAULT_POINTS)
  GTEST_SKIP() << "built without fault points";
#else
  for (const char* point : {"publish.compact.opened", "publish.compact.writing", "publish.compact.before-rename",
                            "publish.compact.after-rename"}) {
    SCOPED_TRACE(point);
    Fixture f;
    f.Build(400, 8);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      setenv("URLGUARD_FAULT_KILL", point, 1);
      Status s = CompactListState(Env::Default(), f.dir, kList, 8);
      _exit(s.ok() ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the point was not reached";
    ExpectRecovered(f);
  }
#endif
}

}  // namespace
}  // namespace urlguard
