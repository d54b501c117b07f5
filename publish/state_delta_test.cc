// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/state_delta.h"

#include <gtest/gtest.h>

#include <algorithm>
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

struct Op {
  KeyRecord r;
  DeltaOp op;
};

// The golden delta: a put in every layer and a delete (version 8 of the list the state golden is version 7 of).
std::vector<Op> Fixture() {
  std::vector<Op> ops = {{Rec(LayerKind::kDomain, "new.example/", 0), DeltaOp::kPut},
                         {Rec(LayerKind::kUrl, "evil.example/login", 0), DeltaOp::kDelete},
                         {Rec(LayerKind::kUrl, "evil.example/pay", 1), DeltaOp::kPut},
                         {Rec(LayerKind::kIp, "2001:db8::/32", 0, true, 32), DeltaOp::kPut}};
  std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return CompareEntry(a.r, b.r) < 0; });
  return ops;
}

std::string WriteDelta(const std::string& path, const std::vector<Op>& ops) {
  auto w = StateDeltaWriter::Create(Env::Default(), path, "phishing", 8, {"malware", "phishing"});
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  for (const Op& o : ops) EXPECT_TRUE((*w)->Add(o.r, o.op).ok());
  EXPECT_TRUE((*w)->Finish().ok());
  return testing::ReadFileOrDie(path);
}

Status ReadAll(const std::string& path, std::vector<Op>* out) {
  URLGUARD_ASSIGN_OR_RETURN(auto r, StateDeltaReader::Open(path));
  for (;;) {
    Op o;
    URLGUARD_ASSIGN_OR_RETURN(bool has, r->Next(&o.r, &o.op));
    if (!has) return Status::Ok();
    if (out != nullptr) out->push_back(o);
  }
}

TEST(StateDeltaTest, GoldenBytes) {
  testing::TempDir tmp("delta");
  std::string bytes = WriteDelta(tmp.path() + "/8.delta", Fixture());
  const std::string golden = testing::SourcePath("fixtures/golden/state_delta_v1.ugsd");
  // URLGUARD_UPDATE_GOLDEN=1 only for a deliberate format change (and bump kStateDeltaFormatVersion).
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(golden, std::ios::binary) << bytes;
  EXPECT_TRUE(bytes == testing::ReadFileOrDie(golden)) << "state delta format changed";
  // The layout the doc states: magic, version 1, and byte 43 of each record is the op.
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("UGDELTA\n"));
}

TEST(StateDeltaTest, RoundTrips) {
  testing::TempDir tmp("delta");
  const std::string path = tmp.path() + "/8.delta";
  std::vector<Op> in = Fixture();
  WriteDelta(path, in);
  auto r = StateDeltaReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->version(), 8u);
  EXPECT_EQ((*r)->list(), "phishing");
  EXPECT_EQ((*r)->threats(), (std::vector<std::string>{"malware", "phishing"}));
  EXPECT_EQ((*r)->records(), in.size());
  std::vector<Op> out;
  ASSERT_TRUE(ReadAll(path, &out).ok());
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(CompareEntry(out[i].r, in[i].r), 0);
    EXPECT_EQ(out[i].op, in[i].op);
    EXPECT_EQ(out[i].r.threat, in[i].op == DeltaOp::kPut ? in[i].r.threat : 0);
    EXPECT_EQ(out[i].r.ipv6, in[i].r.ipv6);
    EXPECT_EQ(out[i].r.prefix_length, in[i].r.prefix_length);
  }
  auto whole = ReadStateDelta(path, "phishing", 8);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->records.size(), in.size());
  EXPECT_EQ(whole->records[1].reserved, static_cast<uint8_t>(out[1].op));
  // The wrong version or list is refused: a renamed file never passes as another version's change.
  EXPECT_EQ(ReadStateDelta(path, "phishing", 9).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(ReadStateDelta(path, "malware", 8).status().code(), StatusCode::kCorruption);
}

TEST(StateDeltaTest, EmptyDeltaIsAVersionWithoutChange) {
  testing::TempDir tmp("delta");
  const std::string path = tmp.path() + "/9.delta";
  std::string bytes = WriteDelta(path, {});
  auto d = ReadStateDelta(path, "phishing", 8);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->records.empty());
}

TEST(StateDeltaTest, WriterRefusesOutOfOrderDuplicatesAndBadThreats) {
  testing::TempDir tmp("delta");
  std::vector<Op> in = Fixture();
  auto w = StateDeltaWriter::Create(Env::Default(), tmp.path() + "/8.delta", "phishing", 8, {"malware"});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Add(in[1].r, DeltaOp::kDelete).ok());
  EXPECT_EQ((*w)->Add(in[1].r, DeltaOp::kDelete).code(), StatusCode::kInvalidArgument);  // twice
  EXPECT_EQ((*w)->Add(in[0].r, DeltaOp::kDelete).code(), StatusCode::kInvalidArgument);  // backwards
  KeyRecord bad = in[3].r;
  bad.threat = 1;  // the table holds one name
  EXPECT_EQ((*w)->Add(bad, DeltaOp::kPut).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StateDeltaWriter::Create(Env::Default(), tmp.path() + "/x.delta", "Bad List", 8, {}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(StateDeltaTest, RefusesCorruption) {
  testing::TempDir tmp("delta");
  const std::string path = tmp.path() + "/8.delta";
  const std::string good = WriteDelta(path, Fixture());
  auto expect_refused = [&](std::string bytes, const char* what) {
    ASSERT_TRUE(WriteFileAtomic(Env::Default(), path, bytes).ok());
    EXPECT_EQ(ReadAll(path, nullptr).code(), StatusCode::kCorruption) << what;
  };
  const size_t records_at = good.size() - 40 - 4 * 48;
  std::string b = good;
  b[good.size() - 60] ^= 1;
  expect_refused(b, "a flipped bit in a record");
  b = good;
  b[good.size() - 1] ^= 1;
  expect_refused(b, "a flipped bit in the checksum");
  expect_refused(good.substr(0, good.size() - 5), "truncated");
  expect_refused(good + std::string(48, '\0'), "a record more than the count");
  b = good;
  b[0] = 'X';
  expect_refused(b, "bad magic");
  b = good;
  b[8] = 2;
  expect_refused(b, "format version 2");
  b = good;
  b[records_at + 43] = 3;
  expect_refused(b, "op 3");
  b = good;
  // Records swapped: the checksum is rewritten so that only the order check can refuse it.
  std::string r0 = good.substr(records_at, 48), r1 = good.substr(records_at + 48, 48);
  b.replace(records_at, 48, r1);
  b.replace(records_at + 48, 48, r0);
  Sha256Digest d = Sha256(std::string_view(b).substr(0, b.size() - 32));
  b.replace(b.size() - 32, 32, reinterpret_cast<const char*>(d.data()), 32);
  expect_refused(b, "records out of order");
  EXPECT_EQ(StateDeltaReader::Open(tmp.path() + "/missing.delta").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace urlguard
