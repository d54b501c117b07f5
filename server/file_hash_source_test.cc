// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/file_hash_source.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>

#include "platform/env.h"
#include "format/full_hash_file.h"
#include "http/prometheus.h"
#include "publish/full_hash_list.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

class FileHashSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { lists_ = testing::ScratchDir("file_hash_source"); }

  void Publish(const std::string& list, uint64_t version, const std::vector<std::string>& expressions,
               const std::string& threat = "phishing") {
    ASSERT_TRUE(Env::Default()->CreateDirs(JoinPath(lists_, list)).ok());
    std::vector<FullHashRecord> records;
    for (const std::string& e : expressions) records.push_back({Sha256(e), list, LayerKind::kUrl, threat});
    ASSERT_TRUE(WriteFullHashList(Env::Default(), Path(list, version), list, version, &records).ok());
  }
  std::string Path(const std::string& list, uint64_t version) {
    return JoinPath(JoinPath(lists_, list), FullHashFileName(version));
  }
  // The lists that answer for `expression`'s prefix.
  std::vector<std::string> Answer(const VerifyHashSource& source, const std::string& expression) {
    const Sha256Digest h = Sha256(expression);
    const uint32_t prefix[] = {DigestPrefix32(h), DigestPrefix32(h)};  // duplicates count once
    VerifyLookup out;
    EXPECT_TRUE(source.Lookup(prefix, &out).ok());
    std::vector<std::string> lists;
    for (const VerifyRecord& r : out.records) {
      EXPECT_EQ(r.sha256, h);
      lists.emplace_back(r.list);
    }
    return lists;
  }

  std::string lists_;
};

TEST_F(FileHashSourceTest, AnswersFromTheNewestVersionOfEachList) {
  Publish("phishing", 1, {"old.example/"});
  Publish("phishing", 2, {"evil.example/", "both.example/"});
  Publish("malware", 5, {"both.example/"}, "malware");
  auto source = FileHashSource::Open(Env::Default(), lists_);
  const auto loaded = source->Loaded();
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].list, "malware");
  EXPECT_EQ(loaded[1].version, 2u);
  EXPECT_EQ(loaded[1].records, 2u);
  EXPECT_EQ(Answer(*source, "evil.example/"), std::vector<std::string>{"phishing"});
  EXPECT_TRUE(Answer(*source, "old.example/").empty());
  EXPECT_EQ(Answer(*source, "both.example/"), (std::vector<std::string>{"malware", "phishing"}));
}

TEST_F(FileHashSourceTest, RefreshSwapsInNewVersionsAndDropsWithdrawnLists) {
  Publish("phishing", 1, {"evil.example/"});
  auto source = FileHashSource::Open(Env::Default(), lists_);
  VerifyLookup held;  // a lookup in flight keeps its version alive across the swap
  const uint32_t prefix[] = {DigestPrefix32(Sha256("evil.example/"))};
  ASSERT_TRUE(source->Lookup(prefix, &held).ok());
  ASSERT_EQ(held.records.size(), 1u);
  ASSERT_EQ(held.versions.size(), 1u);  // the versions the lookup used, for the answer's "lists"
  EXPECT_EQ(held.versions[0].list, "phishing");
  EXPECT_EQ(held.versions[0].version, 1u);

  Publish("phishing", 2, {"new.example/"});
  ASSERT_TRUE(Env::Default()->RemoveFile(Path("phishing", 1)).ok());
  EXPECT_TRUE(Answer(*source, "new.example/").empty());  // not before Refresh()
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(Answer(*source, "new.example/"), std::vector<std::string>{"phishing"});
  EXPECT_TRUE(Answer(*source, "evil.example/").empty());
  EXPECT_EQ(held.records[0].list, "phishing");  // still readable: pinned
  EXPECT_EQ(held.records[0].threat, "phishing");
  EXPECT_EQ(held.versions[0].version, 1u);
  VerifyLookup now;
  ASSERT_TRUE(source->Lookup(prefix, &now).ok());
  EXPECT_TRUE(now.records.empty());
  ASSERT_EQ(now.versions.size(), 1u);  // named even without a match
  EXPECT_EQ(now.versions[0].list, "phishing");
  EXPECT_EQ(now.versions[0].version, 2u);

  ASSERT_TRUE(Env::Default()->RemoveFile(Path("phishing", 2)).ok());
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_TRUE(source->Loaded().empty());
}

TEST_F(FileHashSourceTest, ABadFileNeverAnswersAndTheOldVersionKeepsServing) {
  Publish("phishing", 1, {"evil.example/"});
  auto source = FileHashSource::Open(Env::Default(), lists_);
  Publish("phishing", 2, {"new.example/"});
  {
    // One flipped record byte: only the full check (checksum) sees it.
    std::fstream f(Path("phishing", 2), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(128 + 16 + 5);
    f.put('\x55');
  }
  const Status s = source->Refresh();
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("2.ugh"), std::string::npos);
  EXPECT_EQ(Answer(*source, "evil.example/"), std::vector<std::string>{"phishing"});
  EXPECT_TRUE(Answer(*source, "new.example/").empty());
  EXPECT_TRUE(source->Refresh().ok());  // checked once, then skipped

  // A file whose header names another list or version than its path is refused too.
  Publish("phishing", 3, {"three.example/"});
  ASSERT_TRUE(Env::Default()->RenameFile(Path("phishing", 3), Path("phishing", 4)).ok());
  EXPECT_EQ(source->Refresh().code(), StatusCode::kCorruption);
  EXPECT_EQ(source->Loaded().at(0).version, 1u);
}

TEST_F(FileHashSourceTest, StartsEmptyAndRefusesOversizedLookups) {
  auto source = FileHashSource::Open(Env::Default(), JoinPath(lists_, "missing"));
  EXPECT_TRUE(source->Loaded().empty());
  EXPECT_TRUE(Answer(*source, "evil.example/").empty());
  std::vector<uint32_t> many(kMaxLookupPrefixes + 1, 7);
  VerifyLookup out;
  EXPECT_EQ(source->Lookup(many, &out).code(), StatusCode::kInvalidArgument);
}

// ---- base + deltas (issue 17) ---------------------------------------------------------------------------

// A full-hash key and the brute-force model of a list version: key -> threat.
using Key = std::pair<Sha256Digest, LayerKind>;
using Model = std::map<Key, std::string>;
const std::vector<std::string> kThreats = {"malware", "phishing", "unwanted"};

// An Env that records which files are mapped, to prove what a refresh reads.
class MapRecordingEnv : public EnvWrapper {
 public:
  explicit MapRecordingEnv(Env* target) : EnvWrapper(target) {}
  Result<std::unique_ptr<MappedFile>> MapReadOnly(const std::string& path) override {
    MutexLock lock(&mutex_);
    mapped_.push_back(path.substr(path.find_last_of('/') + 1));
    return EnvWrapper::MapReadOnly(path);
  }
  std::vector<std::string> Take() {
    MutexLock lock(&mutex_);
    return std::exchange(mapped_, {});
  }

 private:
  Mutex mutex_;
  std::vector<std::string> mapped_ GUARDED_BY(mutex_);
};

class FileHashDeltaTest : public FileHashSourceTest {
 protected:
  std::string Dir() { return JoinPath(lists_, "l"); }
  std::string BasePath(uint64_t v) { return JoinPath(Dir(), FullHashFileName(v)); }
  std::string DeltaPath(uint64_t v) { return JoinPath(Dir(), FullHashDeltaFileName(v)); }

  void WriteBase(uint64_t version, const Model& m) {
    ASSERT_TRUE(Env::Default()->CreateDirs(Dir()).ok());
    auto w = FullHashFileWriter::Create(Env::Default(), BasePath(version), "l", version, kThreats, m.size());
    ASSERT_TRUE(w.ok());
    for (const auto& [k, t] : m) ASSERT_TRUE(w->Add(k.first, k.second, ThreatId(t)).ok());
    ASSERT_TRUE(w->Finish().ok());
  }
  // `change`: key -> new threat, or nullopt for a delete. Applies it to *model.
  void WriteDelta(uint64_t version, const std::map<Key, std::optional<std::string>>& change, Model* model,
                  uint64_t base_version = 0) {
    auto w = FullHashFileWriter::CreateDelta(Env::Default(), DeltaPath(version), "l", version,
                                             base_version == 0 ? version - 1 : base_version, kThreats,
                                             change.size());
    ASSERT_TRUE(w.ok());
    for (const auto& [k, t] : change) {
      ASSERT_TRUE(w->AddDelta(k.first, k.second, t ? ThreatId(*t) : 0, !t.has_value()).ok());
      if (model == nullptr) continue;
      if (t) (*model)[k] = *t;
      else model->erase(k);
    }
    ASSERT_TRUE(w->Finish().ok());
  }
  static uint16_t ThreatId(const std::string& t) {
    return static_cast<uint16_t>(std::find(kThreats.begin(), kThreats.end(), t) - kThreats.begin());
  }
  // Every record the source returns for `prefixes`, as a model.
  static Model Ask(const VerifyHashSource& source, const std::vector<uint32_t>& prefixes) {
    Model got;
    VerifyLookup out;
    EXPECT_TRUE(source.Lookup(prefixes, &out).ok());
    for (size_t i = 1; i < out.records.size(); ++i) {  // in (sha256, list, layer) order, no duplicates
      const VerifyRecord& a = out.records[i - 1];
      const VerifyRecord& b = out.records[i];
      EXPECT_TRUE(a.sha256 < b.sha256 || (a.sha256 == b.sha256 && a.layer < b.layer));
    }
    for (const VerifyRecord& r : out.records) got[{r.sha256, r.layer}] = std::string(r.threat);
    return got;
  }
  // The source answers exactly like `model` for every key ever used and some random prefixes (in batches
  // of up to 30 prefixes, as the verify API sends).
  static void ExpectEqualsModel(const VerifyHashSource& source, const Model& model,
                                const std::vector<Key>& universe, std::mt19937_64& rng) {
    std::vector<uint32_t> prefixes;
    for (const Key& k : universe) prefixes.push_back(DigestPrefix32(k.first));
    for (int i = 0; i < 50; ++i) prefixes.push_back(static_cast<uint32_t>(rng()));
    std::shuffle(prefixes.begin(), prefixes.end(), rng);
    for (size_t at = 0; at < prefixes.size(); at += 30) {
      const std::vector<uint32_t> batch(prefixes.begin() + at,
                                        prefixes.begin() + std::min(prefixes.size(), at + 30));
      Model want;
      for (const auto& [k, t] : model) {
        if (std::find(batch.begin(), batch.end(), DigestPrefix32(k.first)) != batch.end()) want[k] = t;
      }
      ASSERT_EQ(Ask(source, batch), want);
    }
  }
  // Random keys; one in four shares its 4-byte prefix with another (the merge of base and overlay inside one
  // prefix), one in eight shares its whole hash with another layer.
  static std::vector<Key> Universe(std::mt19937_64& rng, size_t n) {
    std::vector<Key> keys;
    while (keys.size() < n) {
      Key k{};
      for (auto& b : k.first) b = static_cast<uint8_t>(rng());
      k.second = static_cast<LayerKind>(rng() % 3);
      if (!keys.empty() && rng() % 4 == 0) std::memcpy(k.first.data(), keys[rng() % keys.size()].first.data(), 4);
      if (!keys.empty() && rng() % 8 == 0) {
        k = keys[rng() % keys.size()];
        k.second = static_cast<LayerKind>((static_cast<int>(k.second) + 1) % 3);
      }
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
    return keys;
  }
};

// Lookups equal a brute-force model over a base and random deltas: puts of new keys, deletes, re-puts with
// another threat, deletes of keys the base never held, keys deleted and put again, empty deltas.
TEST_F(FileHashDeltaTest, LookupsEqualTheModelOverBaseAndRandomDeltas) {
  std::mt19937_64 rng(17);
  const std::vector<Key> universe = Universe(rng, 600);
  Model model;
  for (size_t i = 0; i < 300; ++i) model[universe[i]] = kThreats[rng() % 3];
  WriteBase(1, model);
  auto source = FileHashSource::Open(Env::Default(), lists_);
  ExpectEqualsModel(*source, model, universe, rng);
  for (uint64_t v = 2; v <= 25; ++v) {
    std::map<Key, std::optional<std::string>> change;
    const size_t n = v % 7 == 0 ? 0 : rng() % 60;  // some versions change nothing
    for (size_t i = 0; i < n; ++i) {
      const Key& k = universe[rng() % universe.size()];
      if (rng() % 3 == 0) change[k] = std::nullopt;
      else change[k] = kThreats[rng() % 3];
    }
    WriteDelta(v, change, &model);
    ASSERT_TRUE(source->Refresh().ok());
    const auto loaded = source->Loaded();
    ASSERT_EQ(loaded.size(), 1u);
    EXPECT_EQ(loaded[0].version, v);
    EXPECT_EQ(loaded[0].deltas, v - 1);
    EXPECT_EQ(loaded[0].records, model.size());
    ExpectEqualsModel(*source, model, universe, rng);
  }
  // A fresh source loads the same chain at once.
  auto again = FileHashSource::Open(Env::Default(), lists_);
  EXPECT_EQ(again->Loaded().at(0).version, 25u);
  ExpectEqualsModel(*again, model, universe, rng);
}

// A new delta is picked up by mapping that delta alone: the base is not read again.
TEST_F(FileHashDeltaTest, PicksUpANewDeltaWithoutReadingTheBase) {
  std::mt19937_64 rng(3);
  const std::vector<Key> universe = Universe(rng, 40);
  Model model;
  for (size_t i = 0; i < 20; ++i) model[universe[i]] = "phishing";
  WriteBase(1, model);
  MapRecordingEnv env(Env::Default());
  auto source = FileHashSource::Open(&env, lists_);
  EXPECT_EQ(env.Take(), std::vector<std::string>{"1.ugh"});
  WriteDelta(2, {{universe[30], "malware"}, {universe[0], std::nullopt}}, &model);
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(env.Take(), std::vector<std::string>{"2.ughd"});
  EXPECT_EQ(source->Loaded().at(0).version, 2u);
  ExpectEqualsModel(*source, model, universe, rng);
  ASSERT_TRUE(source->Refresh().ok());  // nothing new: nothing mapped
  EXPECT_TRUE(env.Take().empty());
  // The metrics name the version and the deltas.
  PrometheusText text;
  source->AppendMetrics(&text);
  EXPECT_NE(text.text().find("urlguard_server_loaded_version{list=\"l\"} 2"), std::string::npos) << text.text();
  EXPECT_NE(text.text().find("urlguard_server_loaded_deltas{list=\"l\"} 1"), std::string::npos);
  EXPECT_NE(text.text().find("urlguard_server_overlay_records{list=\"l\"} 2"), std::string::npos);
}

// "Never answer for a version not fully loaded": a delta being written, a missing one, a corrupt one, one
// naming another base: the list keeps answering for its last complete version.
TEST_F(FileHashDeltaTest, NeverAnswersForAVersionNotFullyLoaded) {
  std::mt19937_64 rng(5);
  const std::vector<Key> universe = Universe(rng, 40);
  Model model;
  model[universe[0]] = "phishing";
  WriteBase(1, model);
  auto source = FileHashSource::Open(Env::Default(), lists_);
  const Model at1 = model;

  // Being written: only its temporary file exists.
  auto w = FullHashFileWriter::CreateDelta(Env::Default(), DeltaPath(2), "l", 2, 1, kThreats, 1);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->Add(universe[1].first, universe[1].second, 0).ok());
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 1u);
  ExpectEqualsModel(*source, at1, universe, rng);
  ASSERT_TRUE(w->Finish().ok());
  model[universe[1]] = "malware";
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 2u);
  const Model at2 = model;

  // Missing: 4 without 3. Reported once; 3 arriving later completes the chain.
  Model later = model;
  later[universe[3]] = "unwanted";
  WriteDelta(4, {{universe[3], "unwanted"}}, nullptr);
  Status s = source->Refresh();
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("3.ughd"), std::string::npos);
  EXPECT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 2u);
  ExpectEqualsModel(*source, at2, universe, rng);
  WriteDelta(3, {{universe[2], "phishing"}}, &model);
  model[universe[3]] = "unwanted";
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 4u);
  EXPECT_EQ(source->Loaded().at(0).deltas, 3u);
  ExpectEqualsModel(*source, model, universe, rng);
  const Model at4 = model;

  // Corrupt: one record byte flipped (only the checksum sees it). Rejected once, never read again; the list
  // stays at 4, and delta 6 after it does not help.
  WriteDelta(5, {{universe[5], "phishing"}}, nullptr);
  {
    std::fstream f(DeltaPath(5), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(128 + 24 + 5);
    f.put('\x55');
  }
  WriteDelta(6, {{universe[6], "phishing"}}, nullptr);
  s = source->Refresh();
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("5.ughd"), std::string::npos);
  EXPECT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 4u);
  ExpectEqualsModel(*source, at4, universe, rng);
  PrometheusText text;
  source->AppendMetrics(&text);
  EXPECT_NE(text.text().find("urlguard_server_hash_files_rejected_total 1"), std::string::npos) << text.text();

  // A base past the gap (a compaction or full publish at 6) serves again, loaded at once.
  Model at6 = at4;
  at6[universe[5]] = "phishing";
  at6[universe[6]] = "phishing";
  WriteBase(6, at6);
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 6u);
  EXPECT_EQ(source->Loaded().at(0).deltas, 0u);
  ExpectEqualsModel(*source, at6, universe, rng);

  // A base file under a delta's name, then (after a new base at 8) a delta naming another base version: both
  // refused, the list stays at its last complete version.
  WriteBase(100, at6);
  ASSERT_TRUE(Env::Default()->RenameFile(BasePath(100), DeltaPath(7)).ok());
  EXPECT_EQ(source->Refresh().code(), StatusCode::kCorruption);
  EXPECT_EQ(source->Loaded().at(0).version, 6u);
  WriteBase(8, at6);
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 8u);
  WriteDelta(9, {{universe[7], "phishing"}}, nullptr, /*base_version=*/7);
  EXPECT_EQ(source->Refresh().code(), StatusCode::kCorruption);
  EXPECT_EQ(source->Loaded().at(0).version, 8u);
  ExpectEqualsModel(*source, at6, universe, rng);
}

// After a compaction (a new base at or below the served version) the new base is validated in the
// background and swapped in once it reaches the served version; answers never change across the swap, and
// the old files can then be removed.
TEST_F(FileHashDeltaTest, ACompactedBaseIsSwappedInWhenItCatchesUp) {
  std::mt19937_64 rng(9);
  const std::vector<Key> universe = Universe(rng, 200);
  Model model;
  for (size_t i = 0; i < 100; ++i) model[universe[i]] = kThreats[i % 3];
  WriteBase(1, model);
  auto source = FileHashSource::Open(Env::Default(), lists_);
  for (uint64_t v = 2; v <= 4; ++v) {
    WriteDelta(v, {{universe[100 + v], "phishing"}, {universe[v], std::nullopt}}, &model);
  }
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).deltas, 3u);
  WriteBase(3, [&] {  // the compaction of versions 1..3
    Model at3 = model;
    at3.erase(universe[104]);
    at3[universe[4]] = kThreats[4 % 3];
    return at3;
  }());
  ASSERT_TRUE(source->Refresh().ok());  // starts the background load; still serving 1 + 3 deltas
  EXPECT_EQ(source->Loaded().at(0).version, 4u);
  source->WaitForBackgroundLoad();
  WriteDelta(5, {{universe[150], "malware"}}, &model);
  ASSERT_TRUE(source->Refresh().ok());  // takes the new base, extends both chains to 5, swaps
  auto loaded = source->Loaded().at(0);
  EXPECT_EQ(loaded.version, 5u);
  EXPECT_EQ(loaded.deltas, 2u);  // base 3 + deltas 4, 5
  EXPECT_EQ(loaded.records, model.size());
  ExpectEqualsModel(*source, model, universe, rng);
  // The publisher removes the old base and the deltas it no longer needs: nothing changes.
  ASSERT_TRUE(Env::Default()->RemoveFile(BasePath(1)).ok());
  ASSERT_TRUE(Env::Default()->RemoveFile(DeltaPath(2)).ok());
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 5u);
  ExpectEqualsModel(*source, model, universe, rng);
  // A corrupt compacted base is rejected in the background; the served chain goes on.
  WriteBase(5, model);
  {
    std::fstream f(BasePath(5), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(128 + 24 + 40);
    f.put('\x55');
  }
  ASSERT_TRUE(source->Refresh().ok());
  source->WaitForBackgroundLoad();
  WriteDelta(6, {{universe[151], "malware"}}, &model);
  const Status s = source->Refresh();
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("5.ugh"), std::string::npos);
  EXPECT_EQ(source->Loaded().at(0).version, 6u);
  EXPECT_EQ(source->Loaded().at(0).deltas, 3u);
  ExpectEqualsModel(*source, model, universe, rng);
}

// The overlay cap: a delta that would take a list's overlay past it is not loaded (the list stays at its
// version, reported at every refresh, the file not rejected); a new base past it serves again.
TEST_F(FileHashDeltaTest, TheOverlayCapStopsAListUntilANewBase) {
  std::mt19937_64 rng(11);
  const std::vector<Key> universe = Universe(rng, 20);
  Model model;
  model[universe[0]] = "phishing";
  WriteBase(1, model);
  auto source = FileHashSource::Open(Env::Default(), lists_, /*max_overlay_records=*/3);
  WriteDelta(2, {{universe[1], "phishing"}, {universe[2], "malware"}}, &model);
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(source->Loaded().at(0).version, 2u);
  const Model at2 = model;
  WriteDelta(3, {{universe[3], "phishing"}, {universe[4], "malware"}}, &model);
  for (int i = 0; i < 2; ++i) {
    const Status s = source->Refresh();
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
    EXPECT_NE(s.message().find("3.ughd"), std::string::npos);
    EXPECT_EQ(source->Loaded().at(0).version, 2u);
    ExpectEqualsModel(*source, at2, universe, rng);
  }
  WriteBase(3, model);
  (void)source->Refresh();  // still reports the cap for the old chain, then loads the base
  EXPECT_EQ(source->Loaded().at(0).version, 3u);
  EXPECT_EQ(source->Loaded().at(0).deltas, 0u);
  EXPECT_TRUE(source->Refresh().ok());
  ExpectEqualsModel(*source, model, universe, rng);
}

}  // namespace
}  // namespace urlguard
