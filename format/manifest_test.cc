// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/manifest.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/diff_codec.h"
#include "core/snapshot.h"
#include "format/signature.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::SourcePath;
using Json = nlohmann::json;

// A manifest with every field set. Its canonical bytes are pinned in fixtures/golden/manifest_v1.json and
// their signature by fixtures/keys/test-ed25519.pem in fixtures/golden/manifest_v1.json.sig (regenerate
// both with URLGUARD_UPDATE_GOLDEN=1 only for a deliberate format change).
Manifest GoldenManifest() {
  Manifest m;
  m.list = "phishing";
  m.version = 42;
  m.created_unix = 1700000000;
  m.expires_unix = 1700086400;
  m.min_wait_seconds = 1800;
  m.emergency = false;
  m.state_sha256 = Sha256("state 42");
  m.state_bytes = 20480;
  m.entries[static_cast<size_t>(LayerKind::kDomain)] = 10;
  m.entries[static_cast<size_t>(LayerKind::kUrl)] = 3;
  m.entries[static_cast<size_t>(LayerKind::kIp)] = 7;
  m.universe[static_cast<size_t>(LayerKind::kDomain)] = 1000;
  m.universe[static_cast<size_t>(LayerKind::kUrl)] = 0;  // a Bloom layer: no fingerprint universe
  m.universe[static_cast<size_t>(LayerKind::kIp)] = uint64_t{1} << 37;
  IpPrefixLengths prefixes;
  prefixes.AddV4(24);
  prefixes.AddV4(32);
  prefixes.AddV6(64);
  m.ip_prefix_lengths = prefixes.bits;
  m.snapshot = {"phishing-42.snap.z", 9000, Sha256("snapshot 42"), 20480};
  m.diffs.push_back({40, {"phishing-40-42.diff.z", 300, Sha256("diff 40"), 290}});
  m.diffs.push_back({41, {"phishing-41-42.diff.z", 175, Sha256("diff 41"), 207}});
  return m;
}

std::string GoldenPath(const std::string& name) { return SourcePath("fixtures/golden/" + name); }

void MaybeUpdateGolden(const std::string& path, const std::string& bytes) {
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << bytes;
}

// The golden manifest as a JSON value the tests can break in specific ways.
Json GoldenJson() { return Json::parse(SerializeManifest(GoldenManifest())); }

// "/diffs/0/path" -> "diffs[0].path": how ParseManifest names fields.
std::string FieldName(const std::string& pointer) {
  std::string out;
  size_t pos = 1;
  while (pos <= pointer.size()) {
    size_t next = pointer.find('/', pos);
    if (next == std::string::npos) next = pointer.size();
    const std::string part = pointer.substr(pos, next - pos);
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
      out += "[" + part + "]";
    } else {
      if (!out.empty()) out += '.';
      out += part;
    }
    pos = next + 1;
  }
  return out;
}

// Every JSON pointer of `j` (containers and leaves), depth first.
void Pointers(const Json& j, const std::string& at, std::vector<std::string>* out) {
  if (!at.empty()) out->push_back(at);
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) Pointers(it.value(), at + "/" + it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) Pointers(j[i], at + "/" + std::to_string(i), out);
  }
}

// Parses `j` and expects kCorruption whose message names `field`.
void ExpectCorruption(const Json& j, const std::string& field, const std::string& why) {
  auto r = ParseManifest(j.dump(2));
  ASSERT_FALSE(r.ok()) << why;
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << why << ": " << r.status().ToString();
  EXPECT_NE(r.status().message().find("'" + field + "'"), std::string::npos)
      << why << ": expected the message to name '" << field << "': " << r.status().ToString();
}

TEST(Manifest, GoldenBytes) {
  const std::string bytes = SerializeManifest(GoldenManifest());
  const std::string path = GoldenPath("manifest_v1.json");
  MaybeUpdateGolden(path, bytes);
  const std::string golden = ReadFileOrDie(path);
  EXPECT_EQ(bytes, golden) << "manifest bytes changed: a format change must bump kManifestFormatVersion, "
                              "docs/manifest-format.md and this golden file";
  EXPECT_EQ(SerializeManifest(GoldenManifest()), bytes);  // deterministic
}

TEST(Manifest, GoldenSignatureVerifies) {
  // The signature file is pinned by signing/signer_test.cc (the client holds no private-key code); here the
  // client's first two steps on the golden files: verify, then parse.
  const std::string golden = ReadFileOrDie(GoldenPath("manifest_v1.json"));
  const std::string sig = ReadFileOrDie(GoldenPath("manifest_v1.json.sig"));
  auto pub = PublicKeyFromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem")));
  ASSERT_TRUE(pub.ok());
  EXPECT_TRUE(VerifyManifestSignature({*pub}, golden, sig).ok());
  std::string changed = golden;
  changed[changed.size() / 2] ^= 1;
  EXPECT_FALSE(VerifyManifestSignature({*pub}, changed, sig).ok());
  auto parsed = ParseManifest(golden);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, GoldenManifest());
}

TEST(Manifest, CanonicalFormIsSortedTwoSpaceJson) {
  const std::string bytes = SerializeManifest(GoldenManifest());
  // The canonical form is exactly what nlohmann's dump(2) makes of it (members sorted by name).
  EXPECT_EQ(Json::parse(bytes).dump(2) + "\n", bytes);
  EXPECT_EQ(bytes.rfind("{\n  \"created_unix\": 1700000000,\n  \"diffs\": [\n    {\n", 0), 0u) << bytes;
  EXPECT_NE(bytes.find("\"state_sha256\": \"" + ToHex(Sha256("state 42")) + "\""), std::string::npos);
  EXPECT_NE(bytes.find("\"ip\": 137438953472"), std::string::npos);
  Manifest no_diffs = GoldenManifest();
  no_diffs.diffs.clear();
  no_diffs.emergency = true;
  const std::string b2 = SerializeManifest(no_diffs);
  EXPECT_NE(b2.find("\"diffs\": [],\n"), std::string::npos) << b2;
  EXPECT_NE(b2.find("\"emergency\": true,\n"), std::string::npos) << b2;
  EXPECT_EQ(Json::parse(b2).dump(2) + "\n", b2);
  auto back = ParseManifest(b2);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, no_diffs);
}

TEST(Manifest, RoundTripsExtremeValues) {
  Manifest m = GoldenManifest();
  m.version = UINT64_MAX;
  m.created_unix = 1;
  m.expires_unix = INT64_MAX;
  m.min_wait_seconds = kMaxManifestMinWaitSeconds;
  m.state_bytes = kMaxSnapshotBytes;
  m.snapshot.size = kMaxSnapshotBytes;
  m.snapshot.inflated_size = kMaxSnapshotBytes;
  m.universe = {UINT64_MAX, UINT64_MAX, 0};
  m.entries = {UINT64_MAX, 0, UINT64_MAX};
  m.snapshot.path = std::string(kMaxManifestPathBytes, 'a');
  IpPrefixLengths all;
  for (int len = 0; len <= 32; ++len) all.AddV4(len);
  for (int len = 0; len <= 128; ++len) all.AddV6(len);
  m.ip_prefix_lengths = all.bits;
  m.diffs = {{1, {"a", kMaxDiffBytes, Sha256("x"), kMaxDiffBytes}}, {UINT64_MAX - 1, {"b.c-d_e", 1, {}, 1}}};
  ASSERT_TRUE(ValidateManifest(m).ok()) << ValidateManifest(m).ToString();
  auto back = ParseManifest(SerializeManifest(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, m);
}

TEST(Manifest, AcceptsAnyFormattingAndIgnoresUnknownMembers) {
  auto bom = ParseManifest("\xEF\xBB\xBF" + SerializeManifest(GoldenManifest()));  // a UTF-8 BOM is skipped
  ASSERT_TRUE(bom.ok()) << bom.status().ToString();
  EXPECT_EQ(*bom, GoldenManifest());
  Json j = GoldenJson();
  auto compact = ParseManifest(j.dump());
  ASSERT_TRUE(compact.ok()) << compact.status().ToString();
  EXPECT_EQ(*compact, GoldenManifest());

  j["future_field"] = {{"anything", {1, 2.5, "x", nullptr}}};
  j["snapshot"]["compression"] = "zlib";
  j["diffs"][0]["signature_hint"] = 7;
  j["entries"]["asn"] = 5;
  auto extended = ParseManifest(j.dump(4));
  ASSERT_TRUE(extended.ok()) << extended.status().ToString();
  EXPECT_EQ(*extended, GoldenManifest());

  // Member order does not matter to the parser (the canonical writer sorts).
  const std::string reordered =
      "{\"version\":42," + j.dump().substr(1, j.dump().find("\"version\"") - 1) + "\"zzz\":0}";
  auto r = ParseManifest(reordered);
  ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << reordered;
  EXPECT_EQ(*r, GoldenManifest());
}

TEST(Manifest, EveryMissingFieldIsNamed) {
  const Json golden = GoldenJson();
  std::vector<std::string> pointers;
  Pointers(golden, "", &pointers);
  ASSERT_GT(pointers.size(), 30u);
  for (const std::string& p : pointers) {
    const std::string name = FieldName(p);
    if (p == "/diffs/0" || p == "/diffs/1") continue;  // removing an array element is not a missing field
    Json j = golden;
    j.at(Json::json_pointer(p).parent_pointer()).erase(Json::json_pointer(p).back());
    ExpectCorruption(j, name, "without " + p);
  }
}

TEST(Manifest, EveryIllTypedFieldIsNamed) {
  const Json golden = GoldenJson();
  std::vector<std::string> pointers;
  Pointers(golden, "", &pointers);
  for (const std::string& p : pointers) {
    const Json& original = golden.at(Json::json_pointer(p));
    std::vector<Json> wrong = {nullptr, Json::array(), Json::object(), 1.5};
    if (!original.is_string()) wrong.push_back("1");
    if (!original.is_boolean()) wrong.push_back(true);
    if (original.is_string() || original.is_boolean()) wrong.push_back(1);
    if (original.is_number_unsigned()) {
      wrong.push_back(-1);
      wrong.push_back(1.0);                                  // a float, even when integral
      wrong.push_back(Json::parse("18446744073709551616"));  // 2^64: not an integer of any width
    }
    if (original.is_object() || original.is_array()) wrong = {nullptr, 1, "x", true};
    if (p == "/diffs") wrong.push_back(Json::object());
    if (p == "/diffs/0" || p == "/diffs/1") wrong.push_back(Json::array());
    for (const Json& w : wrong) {
      Json j = golden;
      j[Json::json_pointer(p)] = w;
      ExpectCorruption(j, FieldName(p), p + " = " + w.dump());
    }
  }
}

TEST(Manifest, OutOfRangeFieldsAreNamed) {
  struct Case {
    const char* pointer;
    Json value;
  };
  const std::vector<Case> cases = {
      {"/format", 0},
      {"/format", 3},
      {"/format", 4294967296ull},  // over uint32
      {"/list", ""},
      {"/list", "Phishing"},
      {"/list", "phish/ing"},
      {"/list", std::string(65, 'a')},
      {"/version", 0},
      {"/created_unix", 0},
      {"/created_unix", -5},
      {"/created_unix", 9223372036854775808ull},  // over int64
      {"/expires_unix", 1700000000},              // == created
      {"/expires_unix", 1600000000},              // before created
      {"/min_wait_seconds", kMaxManifestMinWaitSeconds + 1},
      {"/min_wait_seconds", 4294967296ull},
      {"/state_bytes", 0},
      {"/state_bytes", kMaxSnapshotBytes + 1},
      {"/state_sha256", ToHex(Sha256("x")).substr(2)},
      {"/state_sha256", ToHex(Sha256("x")) + "00"},
      {"/state_sha256", "A" + ToHex(Sha256("x")).substr(1)},  // upper case
      {"/state_sha256", "g" + ToHex(Sha256("x")).substr(1)},
      {"/ip_prefix_lengths", std::string(62, '0') + "01"},          // bit 248: above IPv6 /128
      {"/ip_prefix_lengths", "0000000002" + std::string(54, '0')},  // bit 33: no IPv4 /33
      {"/ip_prefix_lengths", std::string(62, '0')},
      {"/ip_prefix_lengths", std::string(63, '0') + "F"},
      {"/entries/domain", 1001},  // > universe.domain
      {"/entries/ip", (uint64_t{1} << 37) + 1},
      {"/snapshot/size", 0},
      {"/snapshot/size", kMaxSnapshotBytes + 1},
      {"/snapshot/inflated_size", 0},
      {"/snapshot/inflated_size", 20481},  // != state_bytes
      {"/snapshot/sha256", ""},
      {"/diffs/0/from_version", 0},
      {"/diffs/0/from_version", 42},  // == version
      {"/diffs/0/from_version", 43},
      {"/diffs/1/from_version", 40},  // duplicate
      {"/diffs/1/from_version", 39},  // not ascending
      {"/diffs/0/size", 0},
      {"/diffs/0/size", uint64_t{kMaxDiffBytes} + 1},
      {"/diffs/1/inflated_size", 0},
      {"/diffs/1/inflated_size", uint64_t{kMaxDiffBytes} + 1},
      {"/diffs/1/sha256", "zz"},
  };
  for (const Case& c : cases) {
    Json j = GoldenJson();
    j[Json::json_pointer(c.pointer)] = c.value;
    ExpectCorruption(j, FieldName(c.pointer), std::string(c.pointer) + " = " + c.value.dump());
  }
  // An unsupported format is named as such, before any other field is looked at.
  Json j = Json{{"format", 3}};
  auto r = ParseManifest(j.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unsupported manifest format 3"), std::string::npos)
      << r.status().ToString();
}

TEST(Manifest, PathsCannotLeaveTheManifestDirectory) {
  const std::vector<std::string> bad = {"../x",
                                        "/etc/passwd",
                                        "a/b",
                                        "..",
                                        ".",
                                        ".hidden",
                                        "a..b",
                                        "x/../y",
                                        "A.bin",
                                        "a\\b",
                                        "",
                                        "a b",
                                        "%2e%2e",
                                        "caf\xc3\xa9",
                                        "a\nb",
                                        std::string(kMaxManifestPathBytes + 1, 'a'),
                                        std::string("a\0b", 3)};
  for (const std::string& path : bad) {
    EXPECT_FALSE(IsValidManifestPath(path)) << path;
    for (const char* pointer : {"/snapshot/path", "/diffs/0/path"}) {
      Json j = GoldenJson();
      j[Json::json_pointer(pointer)] = path;
      ExpectCorruption(j, FieldName(pointer),
                       std::string(pointer) + " = " + j[Json::json_pointer(pointer)].dump());
    }
  }
  for (const char* good : {"a", "phishing-42.snap.z", "x.y", "0", "a-b_c.d", "a.", "a.b.c"}) {
    EXPECT_TRUE(IsValidManifestPath(good)) << good;
  }
}

TEST(Manifest, SizeCaps) {
  const std::string golden = SerializeManifest(GoldenManifest());
  // Trailing whitespace is valid JSON: exactly at the cap is accepted, one byte more is refused unparsed.
  std::string at_cap = golden + std::string(kMaxManifestBytes - golden.size(), ' ');
  EXPECT_TRUE(ParseManifest(at_cap).ok());
  auto over = ParseManifest(at_cap + " ");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);

  Json j = GoldenJson();
  j["version"] = 1000;
  Json diffs = Json::array();
  for (uint64_t v = 1; v <= kMaxManifestDiffs; ++v) {
    diffs.push_back({{"from_version", v},
                     {"path", "d" + std::to_string(v)},
                     {"size", 1},
                     {"sha256", ToHex(Sha256(std::to_string(v)))},
                     {"inflated_size", 1}});
  }
  j["diffs"] = diffs;
  auto at_diff_cap = ParseManifest(j.dump());
  ASSERT_TRUE(at_diff_cap.ok()) << at_diff_cap.status().ToString();
  EXPECT_EQ(at_diff_cap->diffs.size(), kMaxManifestDiffs);
  EXPECT_EQ(ParseManifest(SerializeManifest(*at_diff_cap)).value(), *at_diff_cap);
  j["diffs"].push_back({{"from_version", 999},
                        {"path", "x"},
                        {"size", 1},
                        {"sha256", ToHex(Sha256(""))},
                        {"inflated_size", 1}});
  auto too_many = ParseManifest(j.dump());
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), StatusCode::kResourceExhausted) << too_many.status().ToString();

  Manifest m = GoldenManifest();
  m.version = 1000;
  for (uint64_t v = 100; v < 100 + kMaxManifestDiffs + 1; ++v) m.diffs.push_back({v, {"x", 1, {}, 1}});
  EXPECT_EQ(ValidateManifest(m).code(), StatusCode::kResourceExhausted);
}

TEST(Manifest, RefusesNonJsonAndAmbiguousJson) {
  const std::string golden = SerializeManifest(GoldenManifest());
  std::string dup_top = golden;
  dup_top.replace(dup_top.find("  \"version\": 42"), 15, "  \"version\": 1,\n  \"version\": 42");
  std::string dup_nested = golden;
  dup_nested.replace(dup_nested.find("\"size\": 9000"), 12, "\"size\": 1, \"size\": 9000");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"whitespace", "   \n"},
      {"array", "[1, 2]"},
      {"string", "\"manifest\""},
      {"null", "null"},
      {"truncated", golden.substr(0, golden.size() / 2)},
      {"trailing garbage", golden + "x"},
      {"two documents", golden + golden},
      {"comment", "/* c */" + golden},
      {"NUL byte", golden.substr(0, 10) + std::string(1, '\0') + golden.substr(10)},
      {"invalid UTF-8", "{\"list\": \"\xff\"}"},
      {"duplicate top-level member", dup_top},
      {"duplicate nested member", dup_nested},
      {"deep nesting", std::string(60000, '[')},
      {"deep nesting, closed", std::string(30000, '[') + std::string(30000, ']')},
  };
  for (const auto& [name, bytes] : bad) {
    auto r = ParseManifest(bytes);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << name << ": " << r.status().ToString();
  }
  auto r = ParseManifest(dup_top);
  EXPECT_NE(r.status().message().find("duplicate member \"version\""), std::string::npos)
      << r.status().ToString();
}

TEST(Manifest, DeeplyNestedUnknownMemberIsHarmless) {
  // 20 000 levels inside an ignored member: parsed and destroyed without deep recursion.
  Json j = GoldenJson();
  std::string doc = j.dump();
  doc.insert(1, "\"deep\":" + std::string(20000, '[') + std::string(20000, ']') + ",");
  ASSERT_LE(doc.size(), kMaxManifestBytes);
  auto r = ParseManifest(doc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, GoldenManifest());
}

TEST(Manifest, ValidateNamesFieldsOfStructs) {
  Manifest m = GoldenManifest();
  EXPECT_TRUE(ValidateManifest(m).ok());
  m.diffs[1].file.path = "../etc";
  Status s = ValidateManifest(m);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("'diffs[1].path'"), std::string::npos) << s.ToString();
  m = GoldenManifest();
  m.format = 3;
  EXPECT_NE(ValidateManifest(m).message().find("'format'"), std::string::npos);
}

TEST(ManifestDeathTest, SerializingAnInvalidManifestAborts) {
  Manifest m = GoldenManifest();
  m.list = "Bad Name";
  EXPECT_DEATH((void)SerializeManifest(m), "SerializeManifest of an invalid manifest");
}

TEST(Manifest, FindDiff) {
  const Manifest m = GoldenManifest();
  ASSERT_NE(FindManifestDiff(m, 41), nullptr);
  EXPECT_EQ(FindManifestDiff(m, 41)->file.path, "phishing-41-42.diff.z");
  EXPECT_EQ(FindManifestDiff(m, 40)->file.size, 300u);
  EXPECT_EQ(FindManifestDiff(m, 39), nullptr);
  EXPECT_EQ(FindManifestDiff(m, 42), nullptr);
}

// ---- Format 2 ------------------------------------------------------------------------------------------

// A format 2 manifest with every field set: version 47, checkpoint 44, to-current diffs from 44, 45, 46 and
// to-checkpoint diffs from 40 and 42. Pinned in fixtures/golden/manifest_v2.json (+ .sig, made with the test
// key by MakeManifestSignatureFile in signing/signer.h; regenerate both only for a deliberate format change).
Manifest GoldenManifest2() {
  Manifest m;
  m.format = kManifestFormat2;
  m.list = "phishing";
  m.version = 47;
  m.created_unix = 1700000300;
  m.expires_unix = 1700086700;
  m.min_wait_seconds = 60;
  m.entries = {10, 3, 7};
  m.universe = {1000, 0, uint64_t{1} << 37};
  IpPrefixLengths prefixes;
  prefixes.AddV4(24);
  prefixes.AddV4(32);
  prefixes.AddV6(64);
  m.ip_prefix_lengths = prefixes.bits;
  m.state_digest = Sha256("set digest 47");
  m.checkpoint.version = 44;
  m.checkpoint.snapshot = {"phishing-44.snap.z", 9000, Sha256("snapshot 44"), 20480};
  m.checkpoint.state_sha256 = Sha256("state 44");
  m.checkpoint.state_bytes = 20480;
  m.diffs.push_back({40, {"phishing-40-44.rdiff.z", 400, Sha256("rdiff 40 44"), 380}, 44});
  m.diffs.push_back({42, {"phishing-42-44.rdiff.z", 250, Sha256("rdiff 42 44"), 230}, 44});
  m.diffs.push_back({44, {"phishing-44-47.rdiff.z", 300, Sha256("rdiff 44 47"), 290}, 47});
  m.diffs.push_back({45, {"phishing-45-47.rdiff.z", 200, Sha256("rdiff 45 47"), 190}, 47});
  m.diffs.push_back({46, {"phishing-46-47.rdiff.z", 120, Sha256("rdiff 46 47"), 110}, 47});
  return m;
}

Json GoldenJson2() { return Json::parse(SerializeManifest(GoldenManifest2())); }

TEST(Manifest2, GoldenBytes) {
  const std::string bytes = SerializeManifest(GoldenManifest2());
  const std::string path = GoldenPath("manifest_v2.json");
  MaybeUpdateGolden(path, bytes);
  EXPECT_EQ(bytes, ReadFileOrDie(path)) << "format 2 manifest bytes changed: a deliberate format change only";
  // The canonical form is sorted two-space JSON, as format 1's.
  EXPECT_EQ(Json::parse(bytes).dump(2) + "\n", bytes);
}

TEST(Manifest2, GoldenSignatureVerifiesAndParses) {
  const std::string golden = ReadFileOrDie(GoldenPath("manifest_v2.json"));
  const std::string sig = ReadFileOrDie(GoldenPath("manifest_v2.json.sig"));
  auto pub = PublicKeyFromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem")));
  ASSERT_TRUE(pub.ok());
  EXPECT_TRUE(VerifyManifestSignature({*pub}, golden, sig).ok());
  auto parsed = ParseManifest(golden);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, GoldenManifest2());
  // The format 1 members stay at their defaults, so a format 1 code path cannot mistake them for V's.
  EXPECT_EQ(parsed->state_bytes, 0u);
  EXPECT_EQ(parsed->snapshot, ManifestFile{});
}

TEST(Manifest2, FormatOneStaysAsItWas) {
  // A format 1 manifest parses with no format 2 member set, and format 1's golden is unchanged (GoldenBytes).
  auto parsed = ParseManifest(SerializeManifest(GoldenManifest()));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->checkpoint, ManifestCheckpoint{});
  EXPECT_EQ(parsed->state_digest, Sha256Digest{});
  for (const ManifestDiff& d : parsed->diffs) EXPECT_EQ(d.to_version, 0u);
  // Format 2 members in a format 1 value are a bug of the writer.
  Manifest m = GoldenManifest();
  m.checkpoint.version = 1;
  EXPECT_EQ(ValidateManifest(m).code(), StatusCode::kCorruption);
  m = GoldenManifest();
  m.diffs[0].to_version = 41;
  EXPECT_NE(ValidateManifest(m).message().find("diffs[0].to_version"), std::string::npos);
  m.diffs[0].to_version = 42;  // the manifest's version: accepted (not written)
  EXPECT_TRUE(ValidateManifest(m).ok());
  // Format 1 members in a format 2 value likewise.
  m = GoldenManifest2();
  m.state_bytes = 5;
  EXPECT_EQ(ValidateManifest(m).code(), StatusCode::kCorruption);
}

TEST(Manifest2, EveryMissingFieldIsNamed) {
  const Json golden = GoldenJson2();
  std::vector<std::string> pointers;
  Pointers(golden, "", &pointers);
  for (const std::string& p : pointers) {
    if (p == "/format") continue;
    Json j = golden;
    const size_t slash = p.rfind('/');
    Json& parent = slash == 0 ? j : j[Json::json_pointer(p.substr(0, slash))];
    const std::string last = p.substr(slash + 1);
    if (parent.is_array()) continue;  // removing an array element is not a missing member
    parent.erase(last);
    auto r = ParseManifest(j.dump(2));
    ASSERT_FALSE(r.ok()) << "accepted without " << p;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << p;
  }
}

TEST(Manifest2, RulesOfTheDiffList) {
  struct Case {
    const char* why;
    std::function<void(Manifest*)> edit;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"checkpoint 0", [](Manifest* m) { m->checkpoint.version = 0; }, "checkpoint.version"},
      {"checkpoint after the version", [](Manifest* m) { m->checkpoint.version = 48; }, "checkpoint.version"},
      {"checkpoint state_bytes 0", [](Manifest* m) { m->checkpoint.state_bytes = 0; }, "checkpoint.state_bytes"},
      {"checkpoint inflated size", [](Manifest* m) { m->checkpoint.snapshot.inflated_size = 1; },
       "checkpoint.snapshot.inflated_size"},
      {"checkpoint snapshot path", [](Manifest* m) { m->checkpoint.snapshot.path = "../x"; },
       "checkpoint.snapshot.path"},
      {"to_version elsewhere", [](Manifest* m) { m->diffs[1].to_version = 45; }, "diffs[1].to_version"},
      {"from 0", [](Manifest* m) { m->diffs[0].from_version = 0; }, "diffs[0].from_version"},
      {"from == to", [](Manifest* m) { m->diffs[1].from_version = 44; }, "diffs[1].from_version"},
      {"to-current from before the checkpoint", [](Manifest* m) { m->diffs[2].from_version = 43; },
       "diffs[2].from_version"},
      {"unsorted", [](Manifest* m) { std::swap(m->diffs[3], m->diffs[4]); }, "diffs[4].from_version"},
      {"unsorted by to_version", [](Manifest* m) { std::swap(m->diffs[1], m->diffs[2]); },
       "diffs[2].from_version"},
      {"duplicate", [](Manifest* m) { m->diffs[4] = m->diffs[3]; }, "diffs[4].from_version"},
      {"no diff from the checkpoint", [](Manifest* m) { m->diffs.erase(m->diffs.begin() + 2); }, "diffs"},
      {"diff too large", [](Manifest* m) { m->diffs[0].file.size = kMaxDiffBytes + 1; }, "diffs[0].size"},
  };
  for (const Case& c : cases) {
    Manifest m = GoldenManifest2();
    c.edit(&m);
    const Status s = ValidateManifest(m);
    ASSERT_FALSE(s.ok()) << c.why;
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << c.why;
    EXPECT_NE(s.message().find("'" + std::string(c.field) + "'"), std::string::npos) << c.why << ": " << s.ToString();
    // The parser applies the same rules to the JSON (the serializer refuses an invalid value, so edit JSON).
  }
  // Through the parser: the same rules on edited JSON.
  Json j = GoldenJson2();
  j["diffs"][2]["from_version"] = 43;
  ExpectCorruption(j, "diffs[2].from_version", "to-current diff before the checkpoint");
  j = GoldenJson2();
  j["checkpoint"]["version"] = 48;
  ExpectCorruption(j, "checkpoint.version", "checkpoint after the version");
  j = GoldenJson2();
  j["state_digest"] = "00";
  ExpectCorruption(j, "state_digest", "short digest");
  j = GoldenJson2();
  j["diffs"][0]["to_version"] = "44";
  ExpectCorruption(j, "diffs[0].to_version", "string to_version");

  // A checkpoint at the version itself: every diff leads to it, any from_version below it.
  Manifest at = GoldenManifest2();
  at.checkpoint.version = 47;
  at.diffs = {{40, {"a.z", 1, {}, 1}, 47}, {46, {"b.z", 1, {}, 1}, 47}};
  EXPECT_TRUE(ValidateManifest(at).ok()) << ValidateManifest(at).ToString();
  at.diffs.clear();  // a fresh checkpoint with no diffs at all is valid too
  EXPECT_TRUE(ValidateManifest(at).ok());
}

TEST(Manifest2, DiffCap) {
  Manifest m = GoldenManifest2();
  m.diffs.clear();
  m.version = 1000;
  m.checkpoint.version = 1000 - kMaxManifestDiffsFormat2 - 1;
  for (uint64_t a = m.checkpoint.version; a < m.version; ++a) {
    m.diffs.push_back({a, {"d-" + std::to_string(a) + ".z", 100, {}, 100}, m.version});
  }
  EXPECT_EQ(ValidateManifest(m).code(), StatusCode::kResourceExhausted);
  m.diffs.pop_back();
  EXPECT_TRUE(ValidateManifest(m).ok());
  const std::string bytes = SerializeManifest(m);
  EXPECT_LE(bytes.size(), kMaxManifestBytes) << "a full format 2 manifest fits the manifest cap";
  auto parsed = ParseManifest(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, m);
}

TEST(Manifest2, FindRangeDiffTakesTheLargestStartNotAfterTheClient) {
  const Manifest m = GoldenManifest2();
  auto from = [&](uint64_t to, uint64_t f) -> int64_t {
    const ManifestDiff* d = FindRangeDiff(m, to, f);
    return d == nullptr ? -1 : static_cast<int64_t>(d->from_version);
  };
  EXPECT_EQ(from(47, 44), 44);
  EXPECT_EQ(from(47, 45), 45);
  EXPECT_EQ(from(47, 46), 46);
  EXPECT_EQ(from(47, 47), 46);  // F == V is handled before (nothing to do); the rule still holds
  EXPECT_EQ(from(47, 43), -1);  // behind the checkpoint: the to-checkpoint hop first
  EXPECT_EQ(from(44, 43), 42);
  EXPECT_EQ(from(44, 41), 40);
  EXPECT_EQ(from(44, 39), -1);  // never a diff with A > F
  EXPECT_EQ(from(44, 45), -1);  // past the diff's end
  EXPECT_EQ(FindManifestDiff(m, 44), nullptr);  // a range diff is never offered as a version 1 diff
  EXPECT_EQ(FindRangeDiff(GoldenManifest(), 42, 41), nullptr);
}

// ---- Format 2 large diffs (docs/manifest-format.md §8.5) ----------------------------------------------------

// The golden format 2 manifest with two large to-checkpoint diffs, from 30 and 35 (over kMaxDiffBytes, smaller
// than the checkpoint snapshot). Pinned in fixtures/golden/manifest_v2_large.json.
Manifest GoldenManifest2Large() {
  Manifest m = GoldenManifest2();
  m.checkpoint.snapshot = {"phishing-44.snap.z", uint64_t{212} << 20, Sha256("snapshot 44"), uint64_t{212} << 20};
  m.checkpoint.state_bytes = uint64_t{212} << 20;
  m.large_diffs.push_back({30, {"phishing-30-44.rdiff.z", uint64_t{180} << 20, Sha256("rdiff 30 44"),
                                (uint64_t{180} << 20) - 4096}, 44});
  m.large_diffs.push_back({35, {"phishing-35-44.rdiff.z", uint64_t{90} << 20, Sha256("rdiff 35 44"),
                                (uint64_t{90} << 20) - 2048}, 44});
  return m;
}

TEST(Manifest2Large, GoldenBytes) {
  const std::string bytes = SerializeManifest(GoldenManifest2Large());
  const std::string path = GoldenPath("manifest_v2_large.json");
  MaybeUpdateGolden(path, bytes);
  EXPECT_EQ(bytes, ReadFileOrDie(path)) << "format 2 manifest bytes changed: a deliberate format change only";
  EXPECT_EQ(Json::parse(bytes).dump(2) + "\n", bytes);
  auto parsed = ParseManifest(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, GoldenManifest2Large());
  // Without large diffs the member is not written: manifest_v2.json's bytes stay what they were.
  EXPECT_EQ(Json::parse(SerializeManifest(GoldenManifest2())).count("large_diffs"), 0u);
}

// What a reader before large diffs does with the golden: it ignores the unknown member and finds a valid
// manifest whose far clients take the checkpoint snapshot.
TEST(Manifest2Large, AnOldReaderSeesAValidManifestWithoutThem) {
  Json j = Json::parse(SerializeManifest(GoldenManifest2Large()));
  j.erase("large_diffs");
  auto old_view = ParseManifest(j.dump(2));
  ASSERT_TRUE(old_view.ok()) << old_view.status().ToString();
  EXPECT_TRUE(old_view->large_diffs.empty());
  EXPECT_EQ(FindRangeDiff(*old_view, 44, 36), nullptr);
  // A new reader takes them: the largest start not after the client, over both lists.
  const Manifest m = GoldenManifest2Large();
  EXPECT_EQ(FindRangeDiff(m, 44, 36)->from_version, 35u);
  EXPECT_EQ(FindRangeDiff(m, 44, 34)->from_version, 30u);
  EXPECT_EQ(FindRangeDiff(m, 44, 41)->from_version, 40u);  // a regular diff when there is a nearer one
  EXPECT_EQ(FindRangeDiff(m, 44, 29), nullptr);
}

TEST(Manifest2Large, CapsFollowTheList) {
  const Manifest m = GoldenManifest2Large();
  const RangeDiffCaps regular = RangeDiffCapsFor(m, m.diffs[0]);
  EXPECT_EQ(regular.max_bytes, kMaxDiffBytes);
  EXPECT_EQ(regular.max_values, kMaxDiffEntries);
  const RangeDiffCaps large = RangeDiffCapsFor(m, m.large_diffs[0]);
  EXPECT_EQ(large.max_bytes, m.large_diffs[0].file.inflated_size);
  EXPECT_EQ(large.max_values, kMaxDiffEntries + 2 * (10 + 3 + 7));
  Manifest huge = m;
  huge.entries = {uint64_t{100} << 20, 0, 0};
  EXPECT_EQ(LargeRangeDiffValueCap(huge), kMaxDiffEntries + (uint64_t{200} << 20));
  huge.entries = {UINT64_MAX, UINT64_MAX, 1};  // saturates, never wraps
  EXPECT_EQ(LargeRangeDiffValueCap(huge), UINT64_MAX);
  // A ManifestDiff that is a copy, not an element of large_diffs, gets the regular caps.
  const ManifestDiff copy = m.large_diffs[0];
  EXPECT_EQ(RangeDiffCapsFor(m, copy).max_values, kMaxDiffEntries);
}

TEST(Manifest2Large, Rules) {
  struct Case {
    const char* why;
    std::function<void(Manifest*)> edit;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"as large as the snapshot", [](Manifest* m) { m->large_diffs[1].file.size = m->checkpoint.snapshot.size; },
       "large_diffs[1].size"},
      {"over the snapshot cap", [](Manifest* m) { m->large_diffs[0].file.inflated_size = kMaxSnapshotBytes + 1; },
       "large_diffs[0].inflated_size"},
      {"the range of a regular diff", [](Manifest* m) { m->large_diffs[1].from_version = 40; }, "large_diffs[1]"},
      {"unsorted", [](Manifest* m) { std::swap(m->large_diffs[0], m->large_diffs[1]); },
       "large_diffs[1].from_version"},
      {"to_version elsewhere", [](Manifest* m) { m->large_diffs[0].to_version = 45; }, "large_diffs[0].to_version"},
      {"to-current from before the checkpoint",
       [](Manifest* m) {
         m->large_diffs[1].to_version = 47;
         m->large_diffs[1].from_version = 43;
       },
       "large_diffs[1].from_version"},
      {"bad path", [](Manifest* m) { m->large_diffs[0].file.path = "../x"; }, "large_diffs[0].path"},
  };
  for (const Case& c : cases) {
    Manifest m = GoldenManifest2Large();
    c.edit(&m);
    const Status s = ValidateManifest(m);
    ASSERT_FALSE(s.ok()) << c.why;
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << c.why;
    EXPECT_NE(s.message().find("'" + std::string(c.field) + "'"), std::string::npos) << c.why << ": " << s.ToString();
  }
  // Through the parser: a member that is not an array, and too many of them.
  Json j = Json::parse(SerializeManifest(GoldenManifest2Large()));
  j["large_diffs"] = "none";
  ExpectCorruption(j, "large_diffs", "not an array");
  Manifest many = GoldenManifest2Large();
  many.large_diffs.clear();
  for (uint64_t a = 1; a <= kMaxManifestLargeDiffs + 1; ++a) {
    many.large_diffs.push_back({a, {"l-" + std::to_string(a) + ".z", kMaxDiffBytes + 1, {}, kMaxDiffBytes + 1}, 44});
  }
  EXPECT_EQ(ValidateManifest(many).code(), StatusCode::kResourceExhausted);
  many.large_diffs.pop_back();
  EXPECT_TRUE(ValidateManifest(many).ok()) << ValidateManifest(many).ToString();
  const std::string bytes = SerializeManifest(many);
  EXPECT_LE(bytes.size(), kMaxManifestBytes);
  j = Json::parse(bytes);
  j["large_diffs"].push_back(j["large_diffs"][0]);
  auto r = ParseManifest(j.dump(2));
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace urlguard
