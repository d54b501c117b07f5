// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/full_hash_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "core/byte_io.h"
#include "platform/env.h"
#include "platform/fault_injection_env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

struct Rec {
  Sha256Digest sha;
  LayerKind layer;
  uint16_t threat;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Owns aligned bytes and the view into them.
struct Opened {
  std::vector<uint64_t> words;
  Result<FullHashFileView> view = Status::Internal("unset");
};
std::unique_ptr<Opened> OpenBytes(const std::string& bytes, bool verify) {
  auto o = std::make_unique<Opened>();
  o->words.resize(bytes.size() / 8 + 1);
  std::memcpy(o->words.data(), bytes.data(), bytes.size());
  o->view = FullHashFileView::Open(reinterpret_cast<const uint8_t*>(o->words.data()), bytes.size(), verify);
  return o;
}

Status WriteFile(Env* env, const std::string& path, const std::vector<Rec>& recs,
                 const std::vector<std::string>& threats, uint64_t expected, uint64_t version = 7) {
  auto w = FullHashFileWriter::Create(env, path, "golden", version, threats, expected);
  if (!w.ok()) return w.status();
  for (const Rec& r : recs) URLGUARD_RETURN_IF_ERROR(w->Add(r.sha, r.layer, r.threat));
  return w->Finish();
}

// Golden content: three records, two sharing a 4-byte prefix and one sharing a full hash with another layer.
std::vector<Rec> GoldenRecords() {
  std::vector<Rec> recs;
  for (const char* s : {"evil.example/", "bad.example/path", "10.0.0.1/"}) {
    recs.push_back({Sha256(s), LayerKind::kUrl, 0});
  }
  recs[0].layer = LayerKind::kDomain;
  recs[2].layer = LayerKind::kIp;
  recs[2].threat = 1;
  Rec twin = recs[1];  // same prefix as recs[1], later in order
  twin.sha[31] ^= 0xff;
  twin.threat = 1;
  recs.push_back(twin);
  Rec other_layer = recs[0];  // same hash as recs[0], greater layer
  other_layer.layer = LayerKind::kUrl;
  recs.push_back(other_layer);
  std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) {
    const int c = std::memcmp(a.sha.data(), b.sha.data(), 32);
    return c != 0 ? c < 0 : a.layer < b.layer;
  });
  return recs;
}

class FullHashFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("full_hash_file");
    path_ = JoinPath(dir_, "7.ugh");
  }
  std::string dir_;
  std::string path_;
};

TEST_F(FullHashFileTest, GoldenBytes) {
  ASSERT_TRUE(WriteFile(Env::Default(), path_, GoldenRecords(), {"phishing", "malware"}, 5).ok());
  const std::string built = ReadAll(path_);
  const std::string golden_path = std::string(URLGUARD_SOURCE_DIR) + "/fixtures/golden/full_hash_v1.ugh";
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(golden_path, std::ios::binary) << built;
  const std::string golden = ReadAll(golden_path);
  ASSERT_FALSE(golden.empty()) << "missing " << golden_path;
  EXPECT_EQ(built, golden)
      << "full-hash file bytes changed: a format change must bump kFullHashFormatVersion, "
         "docs/full-hash-format.md and this golden file";
  // Pinned layout facts from docs/full-hash-format.md.
  ASSERT_EQ(golden.size(), 128 + 24 + 5 * 36 + (256 + 1) * 4 + 32 + 32);
  EXPECT_EQ(golden.substr(0, 8), std::string("UGHASH\x1a\n", 8));
  EXPECT_EQ(golden.substr(64, 6), "golden");
  EXPECT_EQ(golden.substr(128, 9), "\x08phishing");
}

TEST_F(FullHashFileTest, OpenReadsBackEveryField) {
  const auto recs = GoldenRecords();
  ASSERT_TRUE(WriteFile(Env::Default(), path_, recs, {"phishing", "malware"}, 5).ok());
  auto o = OpenBytes(ReadAll(path_), /*verify=*/true);
  ASSERT_TRUE(o->view.ok()) << o->view.status().ToString();
  const FullHashFileView& v = *o->view;
  EXPECT_EQ(v.list_name(), "golden");
  EXPECT_EQ(v.version(), 7u);
  EXPECT_EQ(v.records(), 5u);
  EXPECT_EQ(v.bucket_bits(), kMinFullHashBucketBits);
  ASSERT_EQ(v.threat_names().size(), 2u);
  EXPECT_EQ(v.threat_names()[1], "malware");
  for (size_t i = 0; i < recs.size(); ++i) {
    const FullHashMatch m = v.RecordAt(i);
    EXPECT_EQ(m.sha256, recs[i].sha);
    EXPECT_EQ(m.layer, recs[i].layer);
    EXPECT_EQ(m.threat, recs[i].threat == 0 ? "phishing" : "malware");
  }
  std::vector<FullHashMatch> out;
  EXPECT_EQ(v.LookupPrefix(DigestPrefix32(Sha256("bad.example/path")), &out), 2u);  // the twin shares it
  EXPECT_EQ(v.LookupPrefix(DigestPrefix32(Sha256("evil.example/")), &out), 2u);     // domain and url layer
  EXPECT_EQ(out.size(), 4u);
  EXPECT_EQ(out[2].layer, LayerKind::kDomain);
  EXPECT_EQ(out[3].layer, LayerKind::kUrl);
  EXPECT_EQ(v.LookupPrefix(DigestPrefix32(Sha256("clean.example/")), &out), 0u);
}

// The bucket index against a linear scan, for many sizes and bucket widths, including empty buckets, full
// buckets and prefixes at the bucket edges.
TEST_F(FullHashFileTest, LookupMatchesLinearScan) {
  std::mt19937_64 rng(42);
  for (uint64_t n : {0ull, 1ull, 100ull, 5000ull}) {
    for (uint64_t expected : {uint64_t{1}, n, n * 64}) {
      std::vector<Rec> recs;
      for (uint64_t i = 0; i < n; ++i) {
        Rec r{};
        for (auto& b : r.sha) b = static_cast<uint8_t>(rng());
        if (i % 7 == 0) r.sha[0] = r.sha[1] = r.sha[2] = 0;   // crowd one bucket
        if (i % 11 == 0) std::memset(r.sha.data(), 0xff, 4);  // the last prefix
        r.layer = static_cast<LayerKind>(rng() % 3);
        r.threat = static_cast<uint16_t>(rng() % 3);
        recs.push_back(r);
      }
      std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) {
        const int c = std::memcmp(a.sha.data(), b.sha.data(), 32);
        return c != 0 ? c < 0 : a.layer < b.layer;
      });
      recs.erase(std::unique(recs.begin(), recs.end(),
                             [](const Rec& a, const Rec& b) { return a.sha == b.sha && a.layer == b.layer; }),
                 recs.end());
      ASSERT_TRUE(WriteFile(Env::Default(), path_, recs, {"a", "b", "c"}, expected).ok());
      auto o = OpenBytes(ReadAll(path_), true);
      ASSERT_TRUE(o->view.ok()) << o->view.status().ToString();
      std::vector<uint32_t> probes = {0, 0xffffffffu, 0x00000001u, 0x80000000u};
      for (const Rec& r : recs) probes.push_back(DigestPrefix32(r.sha));
      for (int i = 0; i < 200; ++i) probes.push_back(static_cast<uint32_t>(rng()));
      for (uint32_t p : probes) {
        std::vector<FullHashMatch> got;
        o->view->LookupPrefix(p, &got);
        std::vector<Sha256Digest> want;
        for (const Rec& r : recs) {
          if (DigestPrefix32(r.sha) == p) want.push_back(r.sha);
        }
        ASSERT_EQ(got.size(), want.size()) << "n=" << n << " prefix=" << p;
        for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k].sha256, want[k]);
      }
    }
  }
}

TEST_F(FullHashFileTest, BucketBitsFollowTheExpectedCount) {
  EXPECT_EQ(FullHashBucketBitsFor(0), kMinFullHashBucketBits);
  EXPECT_EQ(FullHashBucketBitsFor(300), kMinFullHashBucketBits);
  EXPECT_EQ(FullHashBucketBitsFor(1000000), 19u);  // 2^19 buckets: ~1.9 records each
  EXPECT_EQ(FullHashBucketBitsFor(uint64_t{1} << 40), kMaxFullHashBucketBits);
}

TEST_F(FullHashFileTest, WriterRefusesDisorderDuplicatesAndBadIds) {
  const auto recs = GoldenRecords();
  {
    auto w = FullHashFileWriter::Create(Env::Default(), path_, "golden", 1, {"phishing"}, 5);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Add(recs[1].sha, recs[1].layer, 0).ok());
    EXPECT_EQ(w->Add(recs[0].sha, recs[0].layer, 0).code(), StatusCode::kInvalidArgument);
    EXPECT_FALSE(w->Finish().ok());  // unusable after a failure
    auto dup = FullHashFileWriter::Create(Env::Default(), path_, "golden", 1, {"phishing"}, 5);
    ASSERT_TRUE(dup.ok());
    ASSERT_TRUE(dup->Add(recs[0].sha, recs[0].layer, 0).ok());
    EXPECT_EQ(dup->Add(recs[0].sha, recs[0].layer, 0).code(), StatusCode::kInvalidArgument);
    auto bad = FullHashFileWriter::Create(Env::Default(), path_, "golden", 1, {"phishing"}, 5);
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->Add(recs[0].sha, recs[0].layer, 1).code(), StatusCode::kInvalidArgument);
    auto layer = FullHashFileWriter::Create(Env::Default(), path_, "golden", 1, {"phishing"}, 5);
    ASSERT_TRUE(layer.ok());
    EXPECT_EQ(layer->Add(recs[0].sha, static_cast<LayerKind>(3), 0).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(FullHashFileWriter::Create(Env::Default(), path_, "Bad List", 1, {"x"}, 1).status().code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(FullHashFileWriter::Create(Env::Default(), path_, "l", 1, {"x", "x"}, 1).status().code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(FullHashFileWriter::Create(Env::Default(), path_, "l", 1, {"Upper"}, 1).status().code(),
              StatusCode::kInvalidArgument);
  }
  // None of the abandoned writers left its file or temporary file behind.
  EXPECT_FALSE(Env::Default()->FileExists(path_));
  EXPECT_FALSE(Env::Default()->FileExists(path_ + ".tmp"));
}

TEST_F(FullHashFileTest, FailedWriteLeavesNoFile) {
  FaultInjectionEnv env(Env::Default());
  env.SetDiskSpace(60000);  // runs out inside the records (3000 * 36 bytes)
  std::vector<Rec> recs;
  for (int i = 0; i < 3000; ++i) recs.push_back({Sha256(std::to_string(i)), LayerKind::kUrl, 0});
  std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) { return a.sha < b.sha; });
  EXPECT_FALSE(WriteFile(&env, path_, recs, {"x"}, recs.size()).ok());
  EXPECT_FALSE(Env::Default()->FileExists(path_));
  EXPECT_FALSE(Env::Default()->FileExists(path_ + ".tmp"));
}

// Every single-byte change is refused by a verifying open; and no change makes a non-verifying open or a
// lookup read out of bounds (ASan checks that in the sanitizer build).
TEST_F(FullHashFileTest, EveryByteFlipIsCaught) {
  ASSERT_TRUE(WriteFile(Env::Default(), path_, GoldenRecords(), {"phishing", "malware"}, 5).ok());
  const std::string good = ReadAll(path_);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x41);
    auto o = OpenBytes(bad, /*verify=*/true);
    EXPECT_EQ(o->view.status().code(), StatusCode::kCorruption) << "byte " << i;
    auto fast = OpenBytes(bad, /*verify=*/false);
    if (fast->view.ok()) {
      std::vector<FullHashMatch> out;
      for (uint32_t p : {0u, 0xffffffffu, DigestPrefix32(Sha256("evil.example/"))})
        fast->view->LookupPrefix(p, &out);
    }
  }
  for (size_t cut : {size_t{0}, size_t{10}, good.size() / 2, good.size() - 1}) {
    EXPECT_EQ(OpenBytes(good.substr(0, cut), false)->view.status().code(), StatusCode::kCorruption);
  }
  EXPECT_EQ(OpenBytes(good + std::string(8, '\0'), false)->view.status().code(), StatusCode::kCorruption);
}

// ---- delta files (V.ughd) -----------------------------------------------------------------------------

// Golden delta content: version 8 on top of 7, the golden records with the 2nd and 4th turned into deletes.
Status WriteGoldenDelta(Env* env, const std::string& path) {
  auto w = FullHashFileWriter::CreateDelta(env, path, "golden", 8, 7, {"phishing", "malware"}, 5);
  if (!w.ok()) return w.status();
  const auto recs = GoldenRecords();
  for (size_t i = 0; i < recs.size(); ++i) {
    URLGUARD_RETURN_IF_ERROR(w->AddDelta(recs[i].sha, recs[i].layer, recs[i].threat, i % 2 == 1));
  }
  return w->Finish();
}

TEST_F(FullHashFileTest, DeltaGoldenBytes) {
  const std::string path = JoinPath(dir_, "8.ughd");
  ASSERT_TRUE(WriteGoldenDelta(Env::Default(), path).ok());
  const std::string built = ReadAll(path);
  const std::string golden_path = std::string(URLGUARD_SOURCE_DIR) + "/fixtures/golden/full_hash_delta_v1.ughd";
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(golden_path, std::ios::binary) << built;
  const std::string golden = ReadAll(golden_path);
  ASSERT_FALSE(golden.empty()) << "missing " << golden_path;
  EXPECT_EQ(built, golden) << "full-hash delta file bytes changed: a format change must bump "
                              "kFullHashFormatVersion, docs/full-hash-format.md and this golden file";
  // Pinned layout facts from docs/full-hash-format.md, "Delta files".
  ASSERT_EQ(golden.size(), 128 + 24 + 5 * 36 + (256 + 1) * 4 + 32 + 32);
  EXPECT_EQ(golden.substr(0, 8), std::string("UGHDELT\n", 8));
  EXPECT_EQ(LoadLE64(reinterpret_cast<const uint8_t*>(golden.data()) + 16), 8u);  // version
  EXPECT_EQ(LoadLE64(reinterpret_cast<const uint8_t*>(golden.data()) + 32), 7u);  // base_version
  const auto* rec = reinterpret_cast<const uint8_t*>(golden.data()) + 128 + 24;
  EXPECT_EQ(rec[33], 0);                       // record 0: put
  EXPECT_EQ(rec[36 + 33], 1);                  // record 1: delete
  EXPECT_EQ(LoadLE16(rec + 36 + 34), 0u);      // a delete's threat id is 0
}

TEST_F(FullHashFileTest, DeltaOpenReadsBackOpsAndBase) {
  const std::string path = JoinPath(dir_, "8.ughd");
  ASSERT_TRUE(WriteGoldenDelta(Env::Default(), path).ok());
  auto o = OpenBytes(ReadAll(path), /*verify=*/true);
  ASSERT_TRUE(o->view.ok()) << o->view.status().ToString();
  const FullHashFileView& v = *o->view;
  EXPECT_TRUE(v.is_delta());
  EXPECT_EQ(v.version(), 8u);
  EXPECT_EQ(v.base_version(), 7u);
  const auto recs = GoldenRecords();
  for (size_t i = 0; i < recs.size(); ++i) {
    const FullHashMatch m = v.RecordAt(i);
    EXPECT_EQ(m.sha256, recs[i].sha);
    EXPECT_EQ(m.deleted, i % 2 == 1) << i;
    if (m.deleted) EXPECT_EQ(m.threat, "");
    else EXPECT_EQ(m.threat, recs[i].threat == 0 ? "phishing" : "malware");
  }
  // Lookups return deletes too, flagged.
  for (size_t i = 0; i < recs.size(); ++i) {
    std::vector<FullHashMatch> out;
    v.LookupPrefix(DigestPrefix32(recs[i].sha), &out);
    bool seen = false;
    for (const FullHashMatch& m : out) {
      if (m.sha256 == recs[i].sha && m.layer == recs[i].layer) {
        seen = true;
        EXPECT_EQ(m.deleted, i % 2 == 1);
      }
    }
    EXPECT_TRUE(seen) << i;
  }
  // A base file reads as one: not a delta, no deletes.
  ASSERT_TRUE(WriteFile(Env::Default(), path_, recs, {"phishing", "malware"}, 5).ok());
  auto b = OpenBytes(ReadAll(path_), true);
  ASSERT_TRUE(b->view.ok());
  EXPECT_FALSE(b->view->is_delta());
  EXPECT_EQ(b->view->base_version(), 0u);
  for (uint64_t i = 0; i < b->view->records(); ++i) EXPECT_FALSE(b->view->RecordAt(i).deleted);
}

// A delta that only deletes needs no threat names; an empty delta (a version without change) is valid.
TEST_F(FullHashFileTest, DeltaOfDeletesOnlyAndEmptyDelta) {
  const std::string path = JoinPath(dir_, "9.ughd");
  const auto recs = GoldenRecords();
  {
    auto w = FullHashFileWriter::CreateDelta(Env::Default(), path, "golden", 9, 8, {}, 2);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->AddDelta(recs[0].sha, recs[0].layer, 77, /*deleted=*/true).ok());  // threat id ignored
    EXPECT_EQ(w->AddDelta(recs[1].sha, recs[1].layer, 0, false).code(), StatusCode::kInvalidArgument);
  }
  {
    auto w = FullHashFileWriter::CreateDelta(Env::Default(), path, "golden", 9, 8, {}, 2);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->AddDelta(recs[0].sha, recs[0].layer, 77, /*deleted=*/true).ok());
    ASSERT_TRUE(w->Finish().ok());
    auto o = OpenBytes(ReadAll(path), true);
    ASSERT_TRUE(o->view.ok()) << o->view.status().ToString();
    EXPECT_EQ(o->view->records(), 1u);
    EXPECT_TRUE(o->view->RecordAt(0).deleted);
  }
  {
    auto w = FullHashFileWriter::CreateDelta(Env::Default(), path, "golden", 10, 9, {"phishing"}, 0);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Finish().ok());
    auto o = OpenBytes(ReadAll(path), true);
    ASSERT_TRUE(o->view.ok()) << o->view.status().ToString();
    EXPECT_EQ(o->view->records(), 0u);
    EXPECT_EQ(o->view->base_version(), 9u);
  }
}

TEST_F(FullHashFileTest, DeltaWriterRefusals) {
  const auto recs = GoldenRecords();
  const std::string path = JoinPath(dir_, "8.ughd");
  for (uint64_t base : {uint64_t{8}, uint64_t{9}}) {
    EXPECT_EQ(FullHashFileWriter::CreateDelta(Env::Default(), path, "golden", 8, base, {"x"}, 1).status().code(),
              StatusCode::kInvalidArgument);
  }
  auto base = FullHashFileWriter::Create(Env::Default(), path_, "golden", 7, {"phishing"}, 5);
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->AddDelta(recs[0].sha, recs[0].layer, 0, /*deleted=*/true).code(),
            StatusCode::kInvalidArgument);
  auto d = FullHashFileWriter::CreateDelta(Env::Default(), path, "golden", 8, 7, {"phishing"}, 5);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->is_delta());
  ASSERT_TRUE(d->AddDelta(recs[1].sha, recs[1].layer, 0, true).ok());
  // Order is by (sha256, layer) whatever the op: the same key twice is refused.
  EXPECT_EQ(d->AddDelta(recs[1].sha, recs[1].layer, 0, false).code(), StatusCode::kInvalidArgument);
}

// Every single-byte change of a delta is refused by a verifying open (the checksum covers all; the op and base
// version checks are what a non-verifying open relies on), and lookups on a non-verified one stay in bounds.
TEST_F(FullHashFileTest, DeltaEveryByteFlipIsCaught) {
  const std::string path = JoinPath(dir_, "8.ughd");
  ASSERT_TRUE(WriteGoldenDelta(Env::Default(), path).ok());
  const std::string good = ReadAll(path);
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x41);
    EXPECT_EQ(OpenBytes(bad, /*verify=*/true)->view.status().code(), StatusCode::kCorruption) << "byte " << i;
    auto fast = OpenBytes(bad, /*verify=*/false);
    if (fast->view.ok()) {
      std::vector<FullHashMatch> out;
      for (uint32_t p : {0u, 0xffffffffu, DigestPrefix32(Sha256("evil.example/"))})
        fast->view->LookupPrefix(p, &out);
    }
  }
  // Structural checks even without verify_contents: a base version not below the version is refused.
  std::string bad = good;
  StoreLE64(reinterpret_cast<uint8_t*>(bad.data()) + 32, 8);
  EXPECT_EQ(OpenBytes(bad, false)->view.status().code(), StatusCode::kCorruption);
  // A base file whose reserved byte 33 says "delete" is refused by a verifying open.
  ASSERT_TRUE(WriteFile(Env::Default(), path_, GoldenRecords(), {"phishing", "malware"}, 5).ok());
  std::string base = ReadAll(path_);
  base[128 + 24 + 33] = 1;
  EXPECT_EQ(OpenBytes(base, true)->view.status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace urlguard
