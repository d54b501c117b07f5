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
// fixtures/golden/snapshot_v1.ugs (regenerate with URLGUARD_UPDATE_GOLDEN=1 only for a deliberate format change).
SnapshotContent GoldenContent() {
  SnapshotContent c;
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

TEST(Snapshot, GoldenBytes) {
  auto built = BuildSnapshot(GoldenContent());
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  const std::string path = std::string(URLGUARD_SOURCE_DIR) + "/fixtures/golden/snapshot_v1.ugs";
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << *built;
  }
  std::string golden = ReadAll(path);
  ASSERT_FALSE(golden.empty()) << "missing " << path;
  EXPECT_EQ(*built, golden) << "snapshot bytes changed: a format change must bump kSnapshotFormatVersion, "
                               "docs/snapshot-format.md and this golden file";
  // Deterministic: the same content gives the same bytes.
  EXPECT_EQ(*built, *BuildSnapshot(GoldenContent()));
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
  StoreLE32(reinterpret_cast<uint8_t*>(&future[8]), 2);
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
