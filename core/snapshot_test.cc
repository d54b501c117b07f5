// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/snapshot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "core/byte_io.h"

namespace urlguard {
namespace {

// A small snapshot with all three layers and both filter kinds. Its bytes are pinned in
// fixtures/golden/snapshot_v2.ugs (XXH3 keys, the default) and fixtures/golden/snapshot_v1.ugs (SHA-256 keys)
// (regenerate with URLGUARD_UPDATE_GOLDEN=1 only for a deliberate format change).
SnapshotContent GoldenContent(KeyHashKind key_hash = KeyHashKind::kXxh3) {
  SnapshotContent c;
  c.key_hash = key_hash;
  c.list_name = "golden";
  c.version = 7;
  c.created_unix = 1700000000;
  LayerContent domain;
  domain.kind = LayerKind::kDomain;
  domain.universe = 1000;
  domain.fingerprints = {1, 5, 900};
  LayerContent url;
  url.kind = LayerKind::kUrl;
  url.filter = FilterKind::kBlockedBloom;
  BlockedBloom bloom(2, 3);
  for (uint64_t k : {11ull, 22ull, 33ull}) bloom.Insert(k);
  url.bloom_body = bloom.Serialize();
  url.entries = 3;
  LayerContent ip;
  ip.kind = LayerKind::kIp;
  ip.universe = uint64_t{1} << 40;
  ip.fingerprints = {12345, 99999999};
  ip.ip_prefixes.AddV4(24);
  ip.ip_prefixes.AddV4(32);
  ip.ip_prefixes.AddV6(64);
  c.layers = {ip, url, domain};  // any order: written sorted by kind
  return c;
}

struct Aligned {
  std::vector<uint64_t> words;
  size_t size;
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(words.data()); }
};
Aligned Align(const std::string& s) {
  Aligned a{std::vector<uint64_t>((s.size() + 7) / 8 + 1), s.size()};
  std::memcpy(a.words.data(), s.data(), s.size());
  return a;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ExpectGolden(KeyHashKind kind, const char* file) {
  auto built = BuildSnapshot(GoldenContent(kind));
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const std::string path = std::string(URLGUARD_SOURCE_DIR) + "/fixtures/golden/" + file;
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << *built;
  }
  std::string golden = ReadAll(path);
  ASSERT_FALSE(golden.empty()) << "missing " << path;
  EXPECT_EQ(*built, golden) << "snapshot bytes changed: a format change must bump kSnapshotFormatVersion, "
                               "docs/snapshot-format.md and this golden file";
  // Deterministic: the same content gives the same bytes.
  EXPECT_EQ(*built, *BuildSnapshot(GoldenContent(kind)));
  Aligned a = Align(golden);
  auto v = SnapshotView::Open(a.data(), a.size, /*verify_checksum=*/true);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->key_hash(), kind);
}

TEST(Snapshot, GoldenBytesVersion2) { ExpectGolden(KeyHashKind::kXxh3, "snapshot_v2.ugs"); }

// Version 1 files (SHA-256 keys) are still read, and written byte for byte as before version 2 existed: a client
// that applies a diff to a version 1 list must rebuild the publisher's exact bytes.
TEST(Snapshot, GoldenBytesVersion1) { ExpectGolden(KeyHashKind::kSha256Prefix, "snapshot_v1.ugs"); }

TEST(Snapshot, HeaderNamesTheKeyHash) {
  std::string v2 = *BuildSnapshot(GoldenContent(KeyHashKind::kXxh3));
  std::string v1 = *BuildSnapshot(GoldenContent(KeyHashKind::kSha256Prefix));
  EXPECT_EQ(LoadLE32(reinterpret_cast<const uint8_t*>(&v2[8])), 2u);
  EXPECT_EQ(LoadLE64(reinterpret_cast<const uint8_t*>(&v2[48])), 1u);
  EXPECT_EQ(LoadLE32(reinterpret_cast<const uint8_t*>(&v1[8])), 1u);
  EXPECT_EQ(LoadLE64(reinterpret_cast<const uint8_t*>(&v1[48])), 0u);
  // The two differ only in those two fields and the trailing checksum.
  ASSERT_EQ(v1.size(), v2.size());
  for (size_t i = 0; i < v1.size() - 32; ++i) {
    if ((i >= 8 && i < 12) || (i >= 48 && i < 56)) continue;
    EXPECT_EQ(v1[i], v2[i]) << i;
  }
  auto open = [](const std::string& s) {
    Aligned a = Align(s);
    return SnapshotView::Open(a.data(), a.size, /*verify_checksum=*/false).status();
  };
  // Unknown key hash kinds are refused, not read with the wrong hash (which would miss every entry).
  for (uint64_t kind : {uint64_t{0}, uint64_t{2}, uint64_t{255}, uint64_t{1} << 32}) {
    std::string bad = v2;
    StoreLE64(reinterpret_cast<uint8_t*>(&bad[48]), kind);
    Status s = open(bad);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << kind;
    EXPECT_NE(s.message().find("key hash"), std::string::npos) << s.message();
  }
  // Version 1 has no key hash field: the reserved word must stay zero.
  std::string bad = v1;
  StoreLE64(reinterpret_cast<uint8_t*>(&bad[48]), 1);
  EXPECT_EQ(open(bad).code(), StatusCode::kCorruption);
}

TEST(Snapshot, OpenReadsBackEveryField) {
  auto built = BuildSnapshot(GoldenContent());
  ASSERT_TRUE(built.ok());
  Aligned a = Align(*built);
  auto v = SnapshotView::Open(a.data(), a.size, /*verify_checksum=*/true);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->list_name(), "golden");
  EXPECT_EQ(v->version(), 7u);
  EXPECT_EQ(v->created_unix(), 1700000000);
  EXPECT_EQ(v->total_entries(), 8u);
  ASSERT_NE(v->layer(LayerKind::kDomain), nullptr);
  ASSERT_NE(v->layer(LayerKind::kUrl), nullptr);
  ASSERT_NE(v->layer(LayerKind::kIp), nullptr);
  const LayerView& d = *v->layer(LayerKind::kDomain);
  EXPECT_EQ(d.filter, FilterKind::kFingerprintArray);
  EXPECT_TRUE(d.fingerprints.ContainsFingerprint(900));
  EXPECT_FALSE(d.fingerprints.ContainsFingerprint(901));
  const LayerView& u = *v->layer(LayerKind::kUrl);
  EXPECT_EQ(u.filter, FilterKind::kBlockedBloom);
  EXPECT_TRUE(u.bloom.MayContain(22));
  const LayerView& ip = *v->layer(LayerKind::kIp);
  EXPECT_TRUE(ip.ip_prefixes.HasV4(24));
  EXPECT_TRUE(ip.ip_prefixes.HasV4(32));
  EXPECT_FALSE(ip.ip_prefixes.HasV4(16));
  EXPECT_TRUE(ip.ip_prefixes.HasV6(64));
  EXPECT_EQ(v->checksum(), Sha256(built->data(), built->size() - 32));
}

TEST(Snapshot, RefusesForeignTruncatedAndCorruptFiles) {
  std::string good = *BuildSnapshot(GoldenContent());
  auto open = [](const std::string& s, bool verify = true) {
    Aligned a = Align(s);
    return SnapshotView::Open(a.data(), a.size, verify).status();
  };
  ASSERT_TRUE(open(good).ok());
  // Foreign file.
  Status s = open(std::string(200, 'x'));
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("magic"), std::string::npos) << s.message();
  // Truncated at every length.
  for (size_t len = 0; len < good.size(); len += 7) {
    EXPECT_FALSE(open(good.substr(0, len)).ok()) << len;
  }
  s = open(good.substr(0, good.size() - 1));
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
  // Newer format version.
  std::string future = good;
  StoreLE32(reinterpret_cast<uint8_t*>(&future[8]), kSnapshotFormatVersion + 1);
  s = open(future);
  EXPECT_NE(s.message().find("format version"), std::string::npos) << s.message();
  // A flipped bit anywhere is refused with checksum verification on (structure checks may catch it first).
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x10;
    EXPECT_FALSE(open(bad).ok()) << "flip at byte " << i;
  }
  // Without verification a flip inside a body passes structure checks: that is what verify_checksum is for.
  std::string body_flip = good;
  body_flip[good.size() - 40] ^= 0x01;
  Aligned a = Align(body_flip);
  auto v = SnapshotView::Open(a.data(), a.size, false);
  if (v.ok()) {
    EXPECT_FALSE(v->VerifyChecksum().ok());
  }
}

TEST(Snapshot, BuildRejectsBadContent) {
  SnapshotContent c = GoldenContent();
  c.list_name = "Bad Name";
  EXPECT_EQ(BuildSnapshot(c).status().code(), StatusCode::kInvalidArgument);
  c = GoldenContent();
  c.layers.push_back(c.layers[0]);
  EXPECT_FALSE(BuildSnapshot(c).ok());  // duplicate layer (and more than 3)
  c = GoldenContent();
  c.layers[2].fingerprints = {5, 1};
  EXPECT_FALSE(BuildSnapshot(c).ok());  // unsorted
  c = GoldenContent();
  c.layers[2].fingerprints = {1000};
  EXPECT_FALSE(BuildSnapshot(c).ok());  // not below the universe
  c = GoldenContent();
  c.layers[2].ip_prefixes.AddV4(8);
  EXPECT_FALSE(BuildSnapshot(c).ok());  // prefix lengths on a domain layer
  c = GoldenContent();
  c.layers.clear();
  EXPECT_FALSE(BuildSnapshot(c).ok());
}

TEST(Snapshot, ListNames) {
  EXPECT_TRUE(IsValidListName("phishing"));
  EXPECT_TRUE(IsValidListName("my_list-2"));
  EXPECT_FALSE(IsValidListName(""));
  EXPECT_FALSE(IsValidListName("Phishing"));
  EXPECT_FALSE(IsValidListName("a/b"));
  EXPECT_FALSE(IsValidListName(std::string(65, 'a')));
}

}  // namespace
}  // namespace urlguard
