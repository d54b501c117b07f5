// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/full_hash_delta.h"

#include <gtest/gtest.h>

#include <random>

#include "core/sha256.h"
#include "format/full_hash_file.h"
#include "publish/state_delta.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

TEST(FullHashDeltaTest, NamesParse) {
  EXPECT_EQ(FullHashDeltaFileName(17), "17.ughd");
  EXPECT_EQ(ParseFullHashDeltaFileName("17.ughd"), 17u);
  for (const char* bad : {"", ".ughd", "x.ughd", "1.ugh", "1.ughd.tmp", "10000000000000000000.ughd"}) {
    EXPECT_FALSE(ParseFullHashDeltaFileName(bad).has_value()) << bad;
  }
}

// The delta's layout is a full-hash file's (docs/full-hash-format.md) but for the magic, base_version and the op
// byte: turned back into a .ugh (those bytes reset, the checksum recomputed), format/full_hash_file's own reader
// must accept it with every content check, and see each record where the delta put it.
TEST(FullHashDeltaTest, LayoutIsAFullHashFilesWithOpsAndABaseVersion) {
  testing::TempDir tmp("ughd");
  std::mt19937_64 rng(5);
  std::vector<KeyRecord> changes;
  for (int i = 0; i < 3000; ++i) {
    KeyRecord r;
    Sha256Digest d = Sha256("entry" + std::to_string(i));
    std::memcpy(r.sha256, d.data(), 32);
    r.layer = static_cast<uint8_t>(rng() % 3);
    const bool put = rng() % 3 != 0;
    r.reserved = static_cast<uint8_t>(put ? DeltaOp::kPut : DeltaOp::kDelete);
    r.threat = put ? static_cast<uint16_t>(rng() % 2) : 0;
    changes.push_back(r);
  }
  const std::string path = tmp.path() + "/9.ughd";
  ASSERT_TRUE(WriteFullHashDelta(Env::Default(), path, "phishing", 9, 8, {"malware", "phishing"}, changes).ok());
  std::string bytes = testing::ReadFileOrDie(path);
  ASSERT_GT(bytes.size(), 200u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("UGHDELT\n"));
  uint64_t base = 0;
  std::memcpy(&base, bytes.data() + 32, 8);
  EXPECT_EQ(base, 8u);
  std::string ugh = bytes;
  std::memcpy(ugh.data(), kFullHashMagic, 8);
  std::memset(ugh.data() + 32, 0, 8);
  uint32_t table_bytes;
  std::memcpy(&table_bytes, ugh.data() + 28, 4);
  const size_t records_at = 128 + table_bytes;
  size_t deletes = 0;
  for (size_t i = 0; i < changes.size(); ++i) {
    deletes += ugh[records_at + i * 36 + 33] == 1;
    ugh[records_at + i * 36 + 33] = 0;
  }
  Sha256Digest d = Sha256(std::string_view(ugh).substr(0, ugh.size() - 32));
  ugh.replace(ugh.size() - 32, 32, reinterpret_cast<const char*>(d.data()), 32);
  auto view = FullHashFileView::Open(reinterpret_cast<const uint8_t*>(ugh.data()), ugh.size(), true);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->records(), changes.size());
  EXPECT_EQ(view->version(), 9u);
  size_t want_deletes = 0;
  for (const KeyRecord& r : changes) want_deletes += r.reserved == static_cast<uint8_t>(DeltaOp::kDelete);
  EXPECT_EQ(deletes, want_deletes);
  std::vector<FullHashMatch> found;
  for (const KeyRecord& r : changes) {
    found.clear();
    view->LookupPrefix(static_cast<uint32_t>(ShaOrderPrefix(r.sha256) >> 32), &found);
    bool seen = false;
    for (const FullHashMatch& m : found) {
      seen |= std::memcmp(m.sha256.data(), r.sha256, 32) == 0 && static_cast<uint8_t>(m.layer) == r.layer;
    }
    EXPECT_TRUE(seen);
  }
  // An empty change is a valid (empty) delta.
  ASSERT_TRUE(WriteFullHashDelta(Env::Default(), path, "phishing", 10, 9, {}, {}).ok());
}

}  // namespace
}  // namespace urlguard
