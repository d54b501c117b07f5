// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/state_file.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "tests/test_util.h"

namespace urlguard {
namespace {

KeyRecord Rec(LayerKind layer, const std::string& expression, uint16_t threat, bool ipv6 = false, int prefix = 0) {
  KeyRecord r;
  Sha256Digest d = Sha256(expression);
  std::memcpy(r.sha256, d.data(), 32);
  r.key = LocalKeyFor(expression, d);
  r.layer = static_cast<uint8_t>(layer);
  r.ipv6 = ipv6;
  r.prefix_length = static_cast<uint8_t>(prefix);
  r.threat = threat;
  return r;
}

std::vector<KeyRecord> Sorted(std::vector<KeyRecord> v) {
  std::sort(v.begin(), v.end(), ByLayerKey());
  return v;
}

std::string WriteState(const std::string& path, const std::vector<KeyRecord>& records) {
  auto w = StateFileWriter::Create(Env::Default(), path, "phishing", 7, {"malware", "phishing"});
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  for (const KeyRecord& r : records) EXPECT_TRUE((*w)->Add(r).ok());
  EXPECT_TRUE((*w)->Finish().ok());
  return testing::ReadFileOrDie(path);
}

std::vector<KeyRecord> Fixture() {
  return Sorted({Rec(LayerKind::kDomain, "evil.example/", 1), Rec(LayerKind::kUrl, "evil.example/login", 1),
                 Rec(LayerKind::kIp, "203.0.113.0/24", 0, false, 24)});
}

TEST(StateFileTest, GoldenBytes) {
  testing::TempDir tmp("state");
  std::string bytes = WriteState(tmp.path() + "/7.state", Fixture());
  const std::string golden = testing::SourcePath("fixtures/golden/state_v1.ugst");
  // URLGUARD_UPDATE_GOLDEN=1 only for a deliberate format change (and bump kStateFormatVersion).
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(golden, std::ios::binary) << bytes;
  EXPECT_TRUE(bytes == testing::ReadFileOrDie(golden)) << "state file format changed";
}

TEST(StateFileTest, RoundTripsAndRefusesCorruption) {
  testing::TempDir tmp("state");
  const std::string path = tmp.path() + "/7.state";
  std::vector<KeyRecord> in = Fixture();
  std::string bytes = WriteState(path, in);
  auto r = StateFileReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->version(), 7u);
  EXPECT_EQ((*r)->list(), "phishing");
  EXPECT_EQ((*r)->threats(), (std::vector<std::string>{"malware", "phishing"}));
  EXPECT_EQ((*r)->records(), 3u);
  KeyRecord rec;
  for (const KeyRecord& want : in) {
    auto has = (*r)->Next(&rec);
    ASSERT_TRUE(has.ok() && *has);
    EXPECT_EQ(std::memcmp(&rec, &want, sizeof(rec)), 0);
  }
  auto end = (*r)->Next(&rec);
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_FALSE(*end);

  // One flipped bit in a record: the checksum refuses the file at its end.
  bytes[bytes.size() - 60] ^= 1;
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), path, bytes).ok());
  auto bad = StateFileReader::Open(path);
  ASSERT_TRUE(bad.ok());
  Status s;
  for (;;) {
    auto has = (*bad)->Next(&rec);
    if (!has.ok()) {
      s = has.status();
      break;
    }
    if (!*has) break;
  }
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  // Truncated: refused at open.
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), path, bytes.substr(0, bytes.size() - 5)).ok());
  EXPECT_EQ(StateFileReader::Open(path).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace urlguard
