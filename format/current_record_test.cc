// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// D/current's bytes: the golden file, round trips, and every flipped bit, truncation and bad field refused.
#include "format/current_record.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/byte_io.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::SourcePath;

// ---- D/current format ---------------------------------------------------------------------------------

StoreState GoldenState() {
  StoreState st;
  st.generation = 42;
  ListState malware;
  malware.list = "malware";
  malware.high_water_version = 9;
  malware.high_water_manifest_sha256 = Sha256("malware manifest 9");
  // Dropped (its file was corrupt): no installed version, the high-water mark kept.
  st.lists.push_back(malware);
  ListState phishing;
  phishing.list = "phishing";
  phishing.high_water_version = 17;
  phishing.high_water_manifest_sha256 = Sha256("phishing manifest 17");
  InstalledList in;
  in.list = "phishing";
  in.version = 17;
  in.file = InstalledFileName("phishing", 17);
  in.state_sha256 = Sha256("phishing state 17");
  in.manifest_sha256 = phishing.high_water_manifest_sha256;
  in.created_unix = 1700000000;
  in.expires_unix = 1700086400;
  in.emergency = true;
  in.min_wait_seconds = 1800;
  in.entries = {1000, 250, 12};
  phishing.installed = in;
  st.lists.push_back(phishing);
  return st;
}

// Recomputes the trailing SHA-256 after a test edited the bytes, so that field checks are reached.
void Reseal(std::string* bytes) {
  Sha256Digest d = Sha256(bytes->data(), bytes->size() - 32);
  std::memcpy(bytes->data() + bytes->size() - 32, d.data(), 32);
}

TEST(StoreFormat, GoldenBytes) {
  // fixtures/golden/current_v1.bin pins the D/current format (docs/data-dir.md). Regenerate with
  // URLGUARD_UPDATE_GOLDEN=1 only for a deliberate format change (and bump kCurrentFormatVersion).
  const std::string bytes = SerializeStoreState(GoldenState());
  const std::string path = SourcePath("fixtures/golden/current_v1.bin");
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << bytes;
  const std::string golden = ReadFileOrDie(path);
  EXPECT_EQ(bytes, golden)
      << "D/current bytes changed: bump kCurrentFormatVersion, docs/data-dir.md, the golden";
  ASSERT_EQ(golden.size(), kCurrentHeaderBytes + 2 * kCurrentRecordBytes + kCurrentTrailerBytes);
  auto parsed = ParseStoreState(golden);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, GoldenState());
  // Spot checks of the documented offsets.
  const auto* p = reinterpret_cast<const uint8_t*>(golden.data());
  EXPECT_EQ(std::string(golden.data(), 8), std::string("UGCURR\x1a\n", 8));
  EXPECT_EQ(LoadLE32(p + 8), 1u);
  EXPECT_EQ(LoadLE32(p + 12), 2u);
  EXPECT_EQ(LoadLE64(p + 16), 42u);
  EXPECT_EQ(LoadLE64(p + 24), golden.size());
  const uint8_t* r0 = p + 32;
  EXPECT_EQ(r0[0], 7);  // "malware"
  EXPECT_EQ(r0[1], 0);  // not installed
  EXPECT_EQ(LoadLE64(r0 + 72), 9u);
  const uint8_t* r1 = p + 32 + 256;
  EXPECT_EQ(r1[1], 3);  // installed | emergency
  EXPECT_EQ(LoadLE32(r1 + 4), 1800u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(r1 + 8), 8), "phishing");
  EXPECT_EQ(LoadLE64(r1 + 112), 17u);
  EXPECT_EQ(LoadLE64(r1 + 128), 1700086400u);
  EXPECT_EQ(LoadLE64(r1 + 152), 12u);
}

TEST(StoreFormat, RoundTripsEmptyAndFullStates) {
  StoreState empty;
  auto e = ParseStoreState(SerializeStoreState(empty));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e, empty);
  StoreState full;
  full.generation = ~uint64_t{0};
  for (size_t i = 0; i < kMaxStoreLists; ++i) {
    ListState l;
    char name[16];
    std::snprintf(name, sizeof name, "list-%03zu", i);
    l.list = name;
    l.high_water_version = i + 1;
    full.lists.push_back(l);
  }
  std::string bytes = SerializeStoreState(full);
  EXPECT_EQ(bytes.size(), kMaxCurrentBytes);
  auto f = ParseStoreState(bytes);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f, full);
  EXPECT_EQ(ParseStoreState(bytes + std::string(256, '\0')).status().code(), StatusCode::kResourceExhausted);
}

TEST(StoreFormat, RefusesEveryFlipTruncationAndBadField) {
  const std::string good = SerializeStoreState(GoldenState());
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x01;
    auto r = ParseStoreState(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << "flip at " << i;
  }
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_FALSE(ParseStoreState(good.substr(0, len)).ok()) << len;
  }
  EXPECT_FALSE(ParseStoreState(good + "x").ok());

  // Edits with a valid checksum reach the field checks; each names its problem.
  struct Case {
    size_t offset;
    uint8_t value;
    const char* message;
  };
  const size_t r1 = 32 + 256;  // the installed record
  const Case cases[] = {
      {0, 'X', "magic"},
      {8, 2, "format version"},
      {12, 3, "size"},
      {32 + 0, 0, "name length"},
      {32 + 0, 65, "name length"},
      {32 + 8, 'A', "list name"},
      {32 + 20, 'x', "padding"},
      {32 + 1, 4, "flags"},
      {32 + 1, 2, "without an installed version"},
      {32 + 112, 1, "without an installed version"},
      {32 + 2, 1, "reserved"},
      {r1 + 230, 1, "reserved"},
      {r1 + 8, 'a', "sorted"},
      {r1 + 112, 18, "high-water"},
      {r1 + 112, 0, "high-water"},
  };
  for (const Case& c : cases) {
    std::string bad = good;
    bad[c.offset] = static_cast<char>(c.value);
    Reseal(&bad);
    auto r = ParseStoreState(bad);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
  }
  std::string other_manifest = good;
  other_manifest[r1 + 192] ^= 0xff;
  Reseal(&other_manifest);
  EXPECT_NE(ParseStoreState(other_manifest).status().message().find("other manifest bytes"),
            std::string::npos);
  // High-water version 0.
  std::string zero_hw = good;
  StoreLE64(reinterpret_cast<uint8_t*>(&zero_hw[32 + 72]), 0);
  Reseal(&zero_hw);
  EXPECT_NE(ParseStoreState(zero_hw).status().message().find("high-water version 0"), std::string::npos);
}

TEST(StoreFormat, ValidateNamesTheProblem) {
  EXPECT_TRUE(ValidateStoreState(GoldenState()).ok());
  auto check = [](StoreState st, const char* message) {
    Status s = ValidateStoreState(st);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << message;
    EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
  };
  StoreState st = GoldenState();
  std::swap(st.lists[0], st.lists[1]);
  check(st, "sorted");
  st = GoldenState();
  st.lists[0].list = "Bad";
  check(st, "name");
  st = GoldenState();
  st.lists[1].installed->file = "lists/phishing/../x";
  check(st, "file must be");
  st = GoldenState();
  st.lists[1].installed->version = 18;
  check(st, "installed version");
  st = GoldenState();
  st.lists[1].installed->list = "other";
  check(st, "another list");
  st = GoldenState();
  st.lists[0].high_water_version = 0;
  check(st, "high-water version 0");
  EXPECT_DEATH(SerializeStoreState(st), "invalid state");
}

}  // namespace
}  // namespace urlguard
