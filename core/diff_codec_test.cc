// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/diff_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/byte_io.h"
#include "core/sha256.h"
#include "tests/largest_alloc.h"
#include "tests/random_set.h"

namespace urlguard {
namespace {

using testing::RandomSet;

// `old` with `removals` random entries dropped and `additions` random values (not in old) added.
std::vector<uint64_t> Mutate(const std::vector<uint64_t>& old, size_t removals, size_t additions,
                             uint64_t universe, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out = old;
  std::shuffle(out.begin(), out.end(), rng);
  out.resize(out.size() - std::min(removals, out.size()));
  std::vector<uint64_t> sorted_old = old;  // already sorted
  size_t added = 0;
  std::vector<uint64_t> extra;
  while (added < additions) {
    const uint64_t v = rng() % universe;
    if (std::binary_search(sorted_old.begin(), sorted_old.end(), v)) continue;
    if (std::find(extra.begin(), extra.end(), v) != extra.end()) continue;
    extra.push_back(v);
    ++added;
  }
  out.insert(out.end(), extra.begin(), extra.end());
  std::sort(out.begin(), out.end());
  return out;
}

// Recomputes the SHA-256 trailer after a test edits the bytes before it, so the edit reaches the parser.
std::string Reseal(std::string bytes) {
  bytes.resize(bytes.size() - kDiffTrailerBytes);
  const Sha256Digest d = Sha256(bytes);
  bytes.append(reinterpret_cast<const char*>(d.data()), d.size());
  return bytes;
}

// Offset of layer record i in a diff whose list name has `name_length` bytes.
size_t RecordOffset(size_t name_length, size_t i) {
  return kDiffFixedHeaderBytes + name_length + kDiffLayerRecordBytes * i;
}

void Put64(std::string* s, size_t offset, uint64_t v) {
  StoreLE64(reinterpret_cast<uint8_t*>(&(*s)[offset]), v);
}
void Put32(std::string* s, size_t offset, uint32_t v) {
  StoreLE32(reinterpret_cast<uint8_t*>(&(*s)[offset]), v);
}

// The golden diff: two layers, a handful of entries.
Diff GoldenDiff() {
  Diff d;
  d.list_name = "phishing";
  d.from_version = 41;
  d.to_version = 42;
  LayerDiff domain;
  domain.layer = LayerKind::kDomain;
  domain.universe = 1000;
  domain.old_count = 10;
  domain.new_count = 10;
  domain.removed_positions = {1, 4, 9};
  domain.added = {7, 300, 999};
  LayerDiff ip;
  ip.layer = LayerKind::kIp;
  ip.universe = uint64_t{1} << 37;
  ip.old_count = 5;
  ip.new_count = 7;
  ip.added = {12345, 99999999};
  d.layers = {domain, ip};
  return d;
}

// Changes the on-disk format: a deliberate format change updates this string and kDiffFormatVersion.
// Annotated byte by byte in docs/diff-format.md ("Worked example").
constexpr char kGoldenHex[] =
    "5547444946460d0a"  // magic "UGDIFF\r\n"
    "01000000"          // format version 1
    "a2000000"          // header length 162 = 34 + 8 + 2 * 60
    "08"
    "7068697368696e67"  // name "phishing"
    "2900000000000000"  // from_version 41
    "2a00000000000000"  // to_version 42
    "02"                // 2 layers
    // domain record: kind 0, removed k 1, added k 8, reserved; universe 1000, old 10, new 10, removed 3,
    // added 3, removed stream 2 bytes, added stream 4 bytes
    "00"
    "01"
    "08"
    "00"
    "e803000000000000"
    "0a00000000000000"
    "0a00000000000000"
    "0300000000000000"
    "0300000000000000"
    "0200000000000000"
    "0400000000000000"
    // ip record: kind 2, removed k 0 (empty), added k 25, reserved; universe 2^37, old 5, new 7, removed 0,
    // added 2, removed stream 0 bytes, added stream 7 bytes
    "02"
    "00"
    "19"
    "00"
    "0000000020000000"
    "0500000000000000"
    "0700000000000000"
    "0000000000000000"
    "0200000000000000"
    "0000000000000000"
    "0700000000000000"
    // streams: domain removed (gaps 1 2 4, k 1), domain added (gaps 7 292 698, k 8), ip removed (empty),
    // ip added (gaps 12345 99987653, k 25)
    "6600"
    "0e22992e"
    "726000ac18b63e";
constexpr char kGoldenTrailerHex[] = "8ee680e4125c6470c216b6e46294f2487af95b452cbaa0f2e7c46a44ed85c06b";

TEST(DiffGoldenTest, EncodesToPinnedBytes) {
  const std::string bytes = EncodeDiff(GoldenDiff());
  EXPECT_EQ(ToHex(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
            std::string(kGoldenHex) + kGoldenTrailerHex);
  EXPECT_EQ(bytes.size(), 162u + 2 + 4 + 0 + 7 + 32);
}

TEST(DiffGoldenTest, DecodesPinnedBytes) {
  const std::string hex = std::string(kGoldenHex) + kGoldenTrailerHex;
  std::string bytes(hex.size() / 2, '\0');
  ASSERT_TRUE(FromHex(hex, reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()));
  Result<Diff> d = DecodeDiff(bytes);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, GoldenDiff());
}

TEST(DiffGoldenTest, AppliesToAnOldState) {
  const Diff d = GoldenDiff();
  const std::vector<uint64_t> old_domain = {3, 7 + 1, 20, 50, 51, 100, 200, 500, 800, 998};
  // Removes positions 1, 4, 9 (8, 51, 998) and adds 7, 300, 999.
  std::vector<uint64_t> out;
  ASSERT_TRUE(ApplyLayerDiff(old_domain, d.layers[0], &out).ok());
  EXPECT_EQ(out, (std::vector<uint64_t>{3, 7, 20, 50, 100, 200, 300, 500, 800, 999}));
}

// ---- round trips ---------------------------------------------------------------------------------------

TEST(DiffRoundTripTest, RandomSetsAllSizesAndUniverses) {
  const uint64_t kUniverses[] = {uint64_t{1} << 20, uint64_t{1} << 37, uint64_t{1} << 63};
  const size_t kSizes[] = {0, 1, 1000, 100000};
  uint64_t seed = 100;
  for (uint64_t universe : kUniverses) {
    for (size_t n : kSizes) {
      SCOPED_TRACE("universe " + std::to_string(universe) + " n " + std::to_string(n));
      const std::vector<uint64_t> old_set = RandomSet(n, universe, seed++);
      const std::vector<uint64_t> new_set = Mutate(old_set, n / 10 + (n > 0), n / 10 + 1, universe, seed++);
      Diff diff;
      diff.list_name = "malware";
      diff.from_version = seed;
      diff.to_version = seed + 1000;
      diff.layers.push_back(MakeLayerDiff(LayerKind::kDomain, universe, old_set, new_set));
      diff.layers.push_back(MakeLayerDiff(LayerKind::kUrl, universe, new_set, old_set));  // the reverse
      diff.layers.push_back(MakeLayerDiff(LayerKind::kIp, universe, {}, old_set));        // from empty
      ASSERT_TRUE(ValidateDiff(diff).ok()) << ValidateDiff(diff).ToString();
      EXPECT_EQ(diff.layers[0].old_count, old_set.size());
      EXPECT_EQ(diff.layers[0].new_count, new_set.size());

      const std::string bytes = EncodeDiff(diff);
      EXPECT_EQ(EncodeDiff(diff), bytes);  // deterministic
      Result<Diff> decoded = DecodeDiff(bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
      ASSERT_EQ(*decoded, diff);

      std::vector<uint64_t> out;
      ASSERT_TRUE(ApplyLayerDiff(old_set, decoded->layers[0], &out).ok());
      EXPECT_EQ(out, new_set);
      ASSERT_TRUE(ApplyLayerDiff(new_set, decoded->layers[1], &out).ok());
      EXPECT_EQ(out, old_set);
      ASSERT_TRUE(ApplyLayerDiff({}, decoded->layers[2], &out).ok());
      EXPECT_EQ(out, old_set);
      // To empty.
      const LayerDiff to_empty = MakeLayerDiff(LayerKind::kDomain, universe, old_set, {});
      ASSERT_TRUE(ApplyLayerDiff(old_set, to_empty, &out).ok());
      EXPECT_TRUE(out.empty());
    }
  }
}

TEST(DiffRoundTripTest, NoLayersAndIdenticalSets) {
  Diff diff;
  diff.list_name = "a";
  diff.from_version = 0;
  diff.to_version = 1;
  std::string bytes = EncodeDiff(diff);
  EXPECT_EQ(bytes.size(), kDiffFixedHeaderBytes + 1 + kDiffTrailerBytes);
  Result<Diff> d = DecodeDiff(bytes);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, diff);

  const std::vector<uint64_t> s = RandomSet(50, 1000, 1);
  diff.layers.push_back(MakeLayerDiff(LayerKind::kUrl, 1000, s, s));
  EXPECT_TRUE(diff.layers[0].removed_positions.empty());
  EXPECT_TRUE(diff.layers[0].added.empty());
  bytes = EncodeDiff(diff);
  d = DecodeDiff(bytes);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, diff);
}

TEST(DiffRoundTripTest, MaximalNameAndVersions) {
  Diff diff;
  diff.list_name = std::string(kMaxListNameBytes, 'z');
  diff.list_name[0] = '0';
  diff.list_name[1] = '_';
  diff.list_name[2] = '-';
  diff.from_version = ~uint64_t{0} - 1;
  diff.to_version = ~uint64_t{0};
  LayerDiff l;
  l.layer = LayerKind::kIp;
  l.universe = ~uint64_t{0};
  l.old_count = 0;
  l.new_count = 2;
  l.added = {0, ~uint64_t{0} - 1};
  diff.layers.push_back(l);
  Result<Diff> d = DecodeDiff(EncodeDiff(diff));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, diff);
}

// ---- size: the formula of docs/architecture.md §5 (math, not timing) -------------------------------------------

TEST(DiffSizeTest, WithinFivePercentOfFormula) {
  const size_t n = 1000000;
  const uint64_t universe = uint64_t{n} << 14;
  const size_t changes_each = 2500;
  const std::vector<uint64_t> old_set = RandomSet(n, universe, 2024);
  const std::vector<uint64_t> new_set = Mutate(old_set, changes_each, changes_each, universe, 2025);
  Diff diff;
  diff.list_name = "phishing";
  diff.from_version = 1;
  diff.to_version = 2;
  diff.layers.push_back(MakeLayerDiff(LayerKind::kUrl, universe, old_set, new_set));
  ASSERT_EQ(diff.layers[0].added.size(), changes_each);
  ASSERT_EQ(diff.layers[0].removed_positions.size(), changes_each);
  const std::string bytes = EncodeDiff(diff);

  const double added_bits = changes_each * (std::log2(static_cast<double>(universe) / changes_each) + 1.5);
  const double removed_bits = changes_each * (std::log2(static_cast<double>(n) / changes_each) + 1.5);
  const double formula_bytes = (added_bits + removed_bits) / 8;
  const double actual = static_cast<double>(bytes.size());  // the whole file: header and trailer included
  EXPECT_LT(std::abs(actual - formula_bytes) / formula_bytes, 0.05)
      << "encoded " << actual << " bytes, formula " << formula_bytes;
  EXPECT_LT(actual / (2 * changes_each), 2.5);  // the budget: bytes per changed entry
}

// ---- corruption ------------------------------------------------------------------------------------------

TEST(DiffCorruptionTest, EveryTruncationFails) {
  const std::string bytes = EncodeDiff(GoldenDiff());
  for (size_t len = 0; len < bytes.size(); ++len) {
    Result<Diff> d = DecodeDiff(std::string_view(bytes).substr(0, len));
    ASSERT_FALSE(d.ok()) << len;
    EXPECT_EQ(d.status().code(), StatusCode::kCorruption) << len;
  }
  EXPECT_FALSE(DecodeDiff(bytes + '\0').ok());  // an extra byte too
}

TEST(DiffCorruptionTest, EveryBitFlipFails) {
  const std::string bytes = EncodeDiff(GoldenDiff());
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::string flipped = bytes;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    Result<Diff> d = DecodeDiff(flipped);
    ASSERT_FALSE(d.ok()) << "bit " << bit;
    EXPECT_EQ(d.status().code(), StatusCode::kCorruption) << bit;
  }
}

TEST(DiffCorruptionTest, TinyInputsAndWrongFiles) {
  for (size_t len : {0, 1, 8, 20, 66}) {
    Result<Diff> d = DecodeDiff(std::string(len, '\0'));
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.status().code(), StatusCode::kCorruption);
  }
  std::string bytes = EncodeDiff(GoldenDiff());
  bytes[0] = 'X';
  EXPECT_NE(DecodeDiff(bytes).status().message().find("bad magic"), std::string::npos);
  bytes = EncodeDiff(GoldenDiff());
  Put32(&bytes, 8, 2);
  EXPECT_NE(DecodeDiff(Reseal(bytes)).status().message().find("unsupported format version 2"),
            std::string::npos);
  bytes = EncodeDiff(GoldenDiff());
  bytes[50] ^= 1;
  EXPECT_NE(DecodeDiff(bytes).status().message().find("SHA-256"), std::string::npos);
}

TEST(DiffCorruptionTest, OversizeInputIsRefusedByTheCap) {
  const std::string big(kMaxDiffBytes + 1, '\0');
  Result<Diff> d = DecodeDiff(big);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kResourceExhausted);
}

// One field overwritten in the golden diff: `width` bytes (1, 4 or 8) little-endian at `offset`.
struct FieldEdit {
  size_t offset;
  int width;
  uint64_t value;
};

// A set of edits behind a valid (recomputed) checksum, and the rejection it must cause.
struct RejectCase {
  std::vector<FieldEdit> edits;
  const char* needle;  // part of the expected message
  StatusCode code = StatusCode::kCorruption;
};

void ExpectAllRejected(const std::vector<RejectCase>& cases) {
  const std::string good = EncodeDiff(GoldenDiff());
  for (const RejectCase& c : cases) {
    std::string b = good;
    for (const FieldEdit& e : c.edits) {
      if (e.width == 1) b[e.offset] = static_cast<char>(e.value);
      if (e.width == 4) Put32(&b, e.offset, static_cast<uint32_t>(e.value));
      if (e.width == 8) Put64(&b, e.offset, e.value);
    }
    Result<Diff> d = DecodeDiff(Reseal(b));
    ASSERT_FALSE(d.ok()) << "accepted an edit expected to fail with: " << c.needle;
    EXPECT_EQ(d.status().code(), c.code) << d.status().ToString();
    EXPECT_NE(d.status().message().find(c.needle), std::string::npos) << d.status().ToString();
  }
}

constexpr size_t kName = 8;  // "phishing"
constexpr uint64_t kAllOnes = ~uint64_t{0};

TEST(DiffCorruptionTest, HeaderFieldsBehindAValidChecksum) {
  const size_t r0 = RecordOffset(kName, 0);
  const size_t r1 = RecordOffset(kName, 1);
  ExpectAllRejected({
      {{{12, 4, 161}}, "header length 161"},
      {{{12, 4, 100000}}, "exceeds"},
      {{{16, 1, 0}}, "list name length 0"},
      {{{16, 1, 65}}, "list name length 65"},
      {{{17, 1, 'P'}}, "outside [a-z0-9_-]"},
      {{{18, 1, '.'}}, "outside [a-z0-9_-]"},
      {{{17 + kName, 8, 42}}, "from_version 42 is not < to_version 42"},
      {{{33 + kName, 1, 4}}, "4 layers"},
      {{{33 + kName, 1, 1}}, "header length 162 != 102"},
      {{{r0, 1, 3}}, "invalid layer kind 3"},
      {{{r1, 1, 0}}, "ascending"},
      {{{r0, 1, 2}}, "ascending"},
      {{{r0 + 1, 1, 64}}, "rice parameter"},
      {{{r1 + 2, 1, 200}}, "rice parameter"},
      {{{r0 + 3, 1, 1}}, "reserved"},
      {{{r0 + 4, 8, 9}}, "old count 10 exceeds the universe 9"},
      {{{r0 + 20, 8, 11}}, "new count 11 != old count 10"},
      {{{r1 + 4, 8, 6}}, "new count 7 exceeds the universe 6"},
      {{{r0 + 12, 8, 2}}, "3 removals from only 2"},
      {{{r0 + 28, 8, kMaxDiffEntries + 1}}, "exceed the cap", StatusCode::kResourceExhausted},
      {{{r1 + 36, 8, kAllOnes}}, "exceed the cap", StatusCode::kResourceExhausted},
      // old - removed + added cannot overflow into a match: counts at the top of u64.
      {{{r1 + 4, 8, kAllOnes}, {r1 + 12, 8, kAllOnes}}, "new count 7 != old count"},
      // Stream lengths.
      {{{r0 + 44, 8, 1000}}, "runs past the end"},
      {{{r1 + 52, 8, kAllOnes}}, "runs past the end"},
      {{{r1 + 52, 8, 6}}, "1 unexpected bytes"},
      {{{r0 + 44, 8, 0}, {r0 + 52, 8, 4}}, "empty sequence"},
      {{{r1 + 44, 8, 1}, {r1 + 52, 8, 6}}, "empty sequence"},
  });
}

TEST(DiffCorruptionTest, StreamContentsBehindAValidChecksum) {
  const size_t r0 = RecordOffset(kName, 0);
  ExpectAllRejected({
      // The domain removals decode to positions 1, 4, 9: with old_count 9 (new_count 9), 9 is out of range.
      {{{r0 + 12, 8, 9}, {r0 + 20, 8, 9}}, "removed positions"},
      // Universe 999 excludes the added 999.
      {{{r0 + 4, 8, 999}}, "added fingerprints"},
      // Another rice parameter reads the same bits differently and does not end cleanly.
      {{{r0 + 2, 1, 6}}, "added fingerprints"},
      // Fewer values than the stream holds: bits are left over.
      {{{r0 + 36, 8, 2}, {r0 + 20, 8, 9}}, "after the last value"},
  });
}

TEST(DiffCorruptionTest, HugeCountsInATinyFileDoNotAllocate) {
  // A 20-byte stream claiming 16 M additions: refused before any large allocation.
  Diff diff = GoldenDiff();
  diff.layers.resize(1);
  std::string b = EncodeDiff(diff);
  const size_t r0 = RecordOffset(8, 0);
  Put64(&b, r0 + 4, ~uint64_t{0});               // universe
  Put64(&b, r0 + 36, kMaxDiffEntries);           // added count at the cap
  Put64(&b, r0 + 20, 10 - 3 + kMaxDiffEntries);  // new count consistent with it
  b = Reseal(b);
  size_t largest = 0;
  Result<Diff> d = testing::TrackLargestAllocation(&largest, [&] { return DecodeDiff(b); });
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kCorruption);
  EXPECT_NE(d.status().message().find("need at least"), std::string::npos) << d.status().ToString();
  EXPECT_LT(largest, size_t{4096});
}

TEST(DiffCorruptionTest, RandomGarbageBehindAValidChecksumNeverCrashes) {
  // Random headers with a valid magic, version and trailer: exercise every check without a crash.
  const std::string good = EncodeDiff(GoldenDiff());
  std::mt19937_64 rng(77);
  int accepted = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string b = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = 12 + rng() % (b.size() - 12 - kDiffTrailerBytes);
      b[at] = static_cast<char>(rng());
    }
    Result<Diff> d = DecodeDiff(Reseal(b));
    if (d.ok()) {
      ++accepted;
      ASSERT_TRUE(ValidateDiff(*d).ok()) << ValidateDiff(*d).ToString();
      Result<Diff> again = DecodeDiff(EncodeDiff(*d));
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(*again, *d);
    }
  }
  EXPECT_LT(accepted, 20000);
}

// ---- ApplyLayerDiff and ValidateDiff failures
// ----------------------------------------------------------------

TEST(ApplyLayerDiffTest, RejectsEveryInconsistency) {
  const std::vector<uint64_t> old_set = {10, 20, 30, 40};
  LayerDiff base;
  base.layer = LayerKind::kUrl;
  base.universe = 100;
  base.old_count = 4;
  base.new_count = 4;
  base.removed_positions = {1};
  base.added = {25};
  std::vector<uint64_t> out;
  ASSERT_TRUE(ApplyLayerDiff(old_set, base, &out).ok());
  EXPECT_EQ(out, (std::vector<uint64_t>{10, 25, 30, 40}));

  auto expect_fail = [&](const std::vector<uint64_t>& old, const LayerDiff& d, const std::string& needle) {
    std::vector<uint64_t> o = {1, 2, 3};
    Status s = ApplyLayerDiff(old, d, &o);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << needle;
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.ToString();
    EXPECT_TRUE(o.empty());
  };
  // Each edit of `base` that makes it inconsistent with old_set, and the message that names the problem.
  const std::vector<std::pair<std::string, std::function<void(LayerDiff*)>>> bad_edits = {
      {"the state has 4 entries", [](LayerDiff* d) { d->old_count = 5; }},
      {"out of range", [](LayerDiff* d) { d->removed_positions = {4}; }},
      {"not strictly increasing",
       [](LayerDiff* d) {
         d->removed_positions = {2, 1};
         d->new_count = 3;
       }},
      {">= the universe", [](LayerDiff* d) { d->added = {100}; }},
      {"not strictly increasing",
       [](LayerDiff* d) {
         d->added = {26, 25};
         d->new_count = 5;
       }},
      {"already present", [](LayerDiff* d) { d->added = {30}; }},
      {"the result would have 4 entries", [](LayerDiff* d) { d->new_count = 5; }},
  };
  for (const auto& [needle, edit] : bad_edits) {
    LayerDiff d = base;
    edit(&d);
    expect_fail(old_set, d, needle);
  }
  expect_fail({10, 30, 20, 40}, base, "the state is not strictly increasing");
  expect_fail({10, 20, 30, 140}, base, "the state holds fingerprint 140");

  // Re-adding a value whose old position is removed is allowed.
  LayerDiff d = base;
  d.added = {20};
  ASSERT_TRUE(ApplyLayerDiff(old_set, d, &out).ok());
  EXPECT_EQ(out, old_set);
}

TEST(ValidateDiffTest, RejectsInvalidDiffs) {
  EXPECT_TRUE(ValidateDiff(GoldenDiff()).ok());
  Diff d = GoldenDiff();
  d.list_name = "";
  EXPECT_EQ(ValidateDiff(d).code(), StatusCode::kInvalidArgument);
  d = GoldenDiff();
  d.list_name = "Phishing";
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.list_name = std::string(kMaxListNameBytes + 1, 'a');
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.to_version = d.from_version;
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  std::swap(d.layers[0], d.layers[1]);
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.layers[1].layer = LayerKind::kDomain;
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.layers.push_back(d.layers[0]);
  d.layers.push_back(d.layers[0]);
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.layers[0].removed_positions = {1, 1, 9};
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.layers[0].removed_positions = {1, 4, 10};
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.layers[0].added = {7, 300, 1000};
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.layers[0].new_count = 11;
  EXPECT_FALSE(ValidateDiff(d).ok());
  d = GoldenDiff();
  d.layers[0].layer = static_cast<LayerKind>(7);
  EXPECT_FALSE(ValidateDiff(d).ok());
}

TEST(EncodeDiffDeathTest, InvalidDiffAborts) {
  Diff d = GoldenDiff();
  d.layers[0].added = {300, 7, 999};
  EXPECT_DEATH((void)EncodeDiff(d), "invalid diff");
}

TEST(IsValidListNameTest, Charset) {
  EXPECT_TRUE(IsValidListName("phishing"));
  EXPECT_TRUE(IsValidListName("a-b_c9"));
  EXPECT_FALSE(IsValidListName(""));
  EXPECT_FALSE(IsValidListName("a b"));
  EXPECT_FALSE(IsValidListName("a/b"));
  EXPECT_FALSE(IsValidListName(std::string("a\0b", 3)));
  EXPECT_TRUE(IsValidListName(std::string(64, 'x')));
  EXPECT_FALSE(IsValidListName(std::string(65, 'x')));
}

// ---- MergeLayerDiff (streaming) against ApplyLayerDiff (reference)
// ----------------------------------------------------------------

TEST(MergeLayerDiffTest, AgreesWithTheReferenceOnRandomAndBrokenInputs) {
  std::mt19937_64 rng(1124);
  int failures = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const uint64_t universe = 1 + rng() % (trial % 3 == 0 ? 50 : 100000);
    auto random_set = [&](size_t n) {
      std::set<uint64_t> s;
      for (size_t i = 0; i < n; ++i) s.insert(rng() % universe);
      return std::vector<uint64_t>(s.begin(), s.end());
    };
    std::vector<uint64_t> old_set = random_set(rng() % 200);
    std::vector<uint64_t> new_set = random_set(rng() % 200);
    LayerDiff d = MakeLayerDiff(LayerKind::kUrl, universe, old_set, new_set);
    // Break it now and then, the ways a bad diff or a bad state can be.
    const uint64_t edit = rng() % 8;
    switch (edit) {
      case 0:
        if (!d.added.empty()) d.added[rng() % d.added.size()] = old_set.empty() ? 0 : old_set[rng() % old_set.size()];
        break;
      case 1:
        if (!d.removed_positions.empty()) d.removed_positions.back() = d.old_count;
        break;
      case 2:
        ++d.new_count;
        break;
      case 3:
        if (old_set.size() > 1) std::swap(old_set[0], old_set[1]);
        break;
      case 4:
        if (!old_set.empty()) old_set.back() = universe;
        break;
      default:
        break;
    }
    std::vector<uint64_t> reference;
    const Status ref = ApplyLayerDiff(old_set, d, &reference);
    std::vector<uint64_t> streamed;
    size_t next = 0;
    const Status got = MergeLayerDiff(
        d, old_set.size(),
        [&](uint64_t* v) {
          if (next == old_set.size()) return false;
          *v = old_set[next++];
          return true;
        },
        [&](uint64_t v) {
          streamed.push_back(v);
          return Status::Ok();
        });
    ASSERT_EQ(ref.ok(), got.ok()) << "trial " << trial << ": " << ref.ToString() << " vs " << got.ToString();
    if (ref.ok()) {
      EXPECT_EQ(streamed, reference) << "trial " << trial;
      if (edit > 4) {
        EXPECT_EQ(streamed, new_set) << "trial " << trial;
      }
    } else {
      ++failures;
      EXPECT_EQ(got.code(), StatusCode::kCorruption) << got.ToString();
    }
  }
  EXPECT_GT(failures, 300);  // the broken cases were exercised
}

TEST(MergeLayerDiffTest, StopsAtTheFirstEmitError) {
  LayerDiff d = MakeLayerDiff(LayerKind::kDomain, 100, {1, 2, 3}, {1, 2, 3, 4});
  const std::vector<uint64_t> old_set = {1, 2, 3};
  size_t next = 0;
  int emitted = 0;
  Status s = MergeLayerDiff(
      d, 3,
      [&](uint64_t* v) {
        if (next == old_set.size()) return false;
        *v = old_set[next++];
        return true;
      },
      [&](uint64_t) { return ++emitted == 2 ? Status::ResourceExhausted("disk full") : Status::Ok(); });
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(emitted, 2);
  // A state shorter than it claims.
  next = 1;
  s = MergeLayerDiff(
      d, 3,
      [&](uint64_t* v) {
        if (next == old_set.size()) return false;
        *v = old_set[next++];
        return true;
      },
      [](uint64_t) { return Status::Ok(); });
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("ended after 2 of 3"), std::string::npos) << s.ToString();
}


// ---- Version 2: range diffs ------------------------------------------------------------------------------

namespace range {

// A chain of versions 0..n: a random start, then at each version `per_version` random fingerprints of the universe
// toggled (added or removed). Touched(a, v) is every fingerprint a version in (a, v] touched.
struct VersionChain {
  VersionChain(uint64_t seed, uint64_t universe_, size_t start, int versions, int per_version) : universe(universe_) {
    std::mt19937_64 rng(seed);
    states = {RandomSet(rng, start, universe)};
    touched = {{}};
    for (int v = 1; v <= versions; ++v) {
      std::set<uint64_t> s(states.back().begin(), states.back().end());
      std::set<uint64_t> t;
      for (int i = 0; i < per_version; ++i) {
        const uint64_t f = rng() % universe;
        t.insert(f);
        if (s.count(f) != 0) {
          s.erase(f);
        } else {
          s.insert(f);
        }
      }
      states.emplace_back(s.begin(), s.end());
      touched.push_back(t);
    }
  }
  std::set<uint64_t> Touched(size_t a, size_t v) const {
    std::set<uint64_t> t;
    for (size_t x = a + 1; x <= v; ++x) t.insert(touched[x].begin(), touched[x].end());
    return t;
  }
  // The range layer (a, v] of `layer`.
  RangeLayerDiff Layer(size_t a, size_t v, LayerKind layer) const {
    const std::set<uint64_t> t = Touched(a, v);
    return MakeRangeLayerDiff(layer, universe, {t.begin(), t.end()}, states[v]);
  }

  uint64_t universe;
  std::vector<std::vector<uint64_t>> states;
  std::vector<std::set<uint64_t>> touched;
};

// The golden range diff (40, 45]: domain touched {5, 7, 300, 999}, of which 7 and 999 are present at 45;
// url touched {12345}, present.
RangeDiff GoldenRangeDiff() {
  RangeDiff d;
  d.list_name = "phishing";
  d.from_version = 40;
  d.to_version = 45;
  RangeLayerDiff domain;
  domain.layer = LayerKind::kDomain;
  domain.universe = 1000;
  domain.new_count = 6;
  domain.absent = {5, 300};
  domain.present = {7, 999};
  RangeLayerDiff url;
  url.layer = LayerKind::kUrl;
  url.universe = uint64_t{1} << 37;
  url.new_count = 3;
  url.present = {12345};
  d.layers = {domain, url};
  return d;
}

// Changes the on-disk format: a deliberate change updates this string. Annotated byte by byte in
// docs/diff-format.md ("Version 2: range diffs", worked example).
constexpr char kRangeGoldenHex[] =
    "5547444946460d0a"  // magic "UGDIFF\r\n"
    "02000000"          // format version 2
    "a2000000"          // header length 162 = 34 + 8 + 2 * 60
    "08"
    "7068697368696e67"  // name "phishing"
    "2800000000000000"  // from_version 40
    "2d00000000000000"  // to_version 45
    "02"                // 2 layers
    // domain record: kind 0, absent k 6, present k 8, reserved; universe 1000, new 6, absent 2, present 2,
    // absent stream 3 bytes, present stream 3 bytes, reserved u64
    "00"
    "06"
    "08"
    "00"
    "e803000000000000"
    "0600000000000000"
    "0200000000000000"
    "0200000000000000"
    "0300000000000000"
    "0300000000000000"
    "0000000000000000"
    // url record: kind 1, absent k 0 (empty), present k 13, reserved; universe 2^37, new 3, absent 0,
    // present 1, absent stream 0 bytes, present stream 2 bytes, reserved u64
    "01"
    "00"
    "0d"
    "00"
    "0000000020000000"
    "0300000000000000"
    "0000000000000000"
    "0100000000000000"
    "0000000000000000"
    "0200000000000000"
    "0000000000000000"
    // streams: domain absent (gaps 5 294, k 6), domain present (gaps 7 991, k 8), url absent (empty),
    // url present (gap 12345, k 13)
    "8a6702"
    "0eee1b"
    "e540";
constexpr char kRangeGoldenTrailerHex[] = "752b82f9562f9a2271805222b0df2c9ab472775bf6e4a0880b8e9e18acc8ab9c";

std::string Hex(const std::string& b) { return ToHex(reinterpret_cast<const uint8_t*>(b.data()), b.size()); }

TEST(RangeDiffGoldenTest, EncodesToPinnedBytes) {
  const std::string bytes = EncodeRangeDiff(GoldenRangeDiff());
  EXPECT_EQ(Hex(bytes), std::string(kRangeGoldenHex) + kRangeGoldenTrailerHex);
}

TEST(RangeDiffGoldenTest, DecodesPinnedBytes) {
  const std::string hex = std::string(kRangeGoldenHex) + kRangeGoldenTrailerHex;
  std::string bytes(hex.size() / 2, '\0');
  ASSERT_TRUE(FromHex(hex, reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()));
  Result<RangeDiff> d = DecodeRangeDiff(bytes);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, GoldenRangeDiff());
}

TEST(RangeDiffGoldenTest, AppliesToEveryStateBetweenItsEnds) {
  // Domain states at two versions in [40, 45]: both give the same result.
  const RangeLayerDiff d = GoldenRangeDiff().layers[0];
  const std::vector<uint64_t> want = {3, 7, 20, 50, 100, 999};
  for (const std::vector<uint64_t>& old_state : {std::vector<uint64_t>{3, 5, 20, 50, 100, 300},
                                                  std::vector<uint64_t>{3, 7, 20, 50, 100},
                                                  std::vector<uint64_t>{3, 5, 7, 20, 50, 100, 999}}) {
    std::vector<uint64_t> out;
    const Status s = ApplyRangeLayerDiff(old_state, d, &out);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(out, want);
  }
}

TEST(RangeDiffVersionTest, EachDecoderRefusesTheOtherVersion) {
  Result<Diff> v1 = DecodeDiff(EncodeRangeDiff(GoldenRangeDiff()));
  ASSERT_FALSE(v1.ok());
  EXPECT_EQ(v1.status().code(), StatusCode::kCorruption);
  EXPECT_NE(v1.status().message().find("unsupported format version 2"), std::string::npos);
  Result<RangeDiff> v2 = DecodeRangeDiff(EncodeDiff(GoldenDiff()));
  ASSERT_FALSE(v2.ok());
  EXPECT_EQ(v2.status().code(), StatusCode::kCorruption);
  EXPECT_NE(v2.status().message().find("unsupported format version 1"), std::string::npos);
}

// A chain of versions: at each, a random part of the universe is touched (added or removed). For every pair
// A < V and every F in [A, V], the range diff (A, V] built from the touched union turns state F into state V,
// through the encoder and the decoder.
TEST(RangeDiffRoundTripTest, AnyStateInTheRangeReachesTheTarget) {
  const VersionChain chain(1717, 1 << 12, 300, 8, 40);
  const std::vector<std::vector<uint64_t>>& states = chain.states;
  for (size_t a = 0; a < states.size(); ++a) {
    for (size_t v = a + 1; v < states.size(); ++v) {
      const std::set<uint64_t> t = chain.Touched(a, v);
      RangeDiff diff;
      diff.list_name = "chain";
      diff.from_version = a;
      diff.to_version = v;
      diff.layers = {chain.Layer(a, v, LayerKind::kUrl)};
      ASSERT_TRUE(ValidateRangeDiff(diff).ok());
      Result<RangeDiff> decoded = DecodeRangeDiff(EncodeRangeDiff(diff));
      ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
      ASSERT_EQ(*decoded, diff);
      for (size_t f = a; f <= v; ++f) {
        std::vector<uint64_t> out;
        ASSERT_TRUE(ApplyRangeLayerDiff(states[f], decoded->layers[0], &out).ok()) << a << " " << f << " " << v;
        EXPECT_EQ(out, states[v]) << a << " " << f << " " << v;
      }
      // A state older than A is not covered: unless the changes before A happen to cancel, the count check
      // refuses it (it is never silently accepted as V for a state that differs in an untouched value).
      if (a > 0) {
        std::vector<uint64_t> out;
        const Status s = ApplyRangeLayerDiff(states[a - 1], decoded->layers[0], &out);
        if (s.ok()) {
          std::set<uint64_t> diffset;
          std::set_symmetric_difference(states[a - 1].begin(), states[a - 1].end(), states[a].begin(),
                                        states[a].end(), std::inserter(diffset, diffset.end()));
          for (uint64_t x : diffset) EXPECT_NE(t.count(x), 0u) << "an untouched difference went unnoticed";
        }
      }
    }
  }
}

TEST(RangeDiffRoundTripTest, EmptyAndLargeUniverses) {
  RangeDiff d;
  d.list_name = "x";
  d.from_version = 0;
  d.to_version = ~uint64_t{0};
  Result<RangeDiff> r = DecodeRangeDiff(EncodeRangeDiff(d));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, d);
  RangeLayerDiff ip;
  ip.layer = LayerKind::kIp;
  ip.universe = uint64_t{1} << 63;
  ip.absent = RandomSet(5000, ip.universe, 3);
  ip.present = {ip.universe - 1};
  ip.new_count = 1000000;
  if (std::binary_search(ip.absent.begin(), ip.absent.end(), ip.universe - 1)) ip.absent.pop_back();
  d.layers = {ip};
  r = DecodeRangeDiff(EncodeRangeDiff(d));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, d);
}

TEST(RangeDiffCorruptionTest, EveryTruncationAndBitFlipFails) {
  const std::string bytes = EncodeRangeDiff(GoldenRangeDiff());
  for (size_t len = 0; len < bytes.size(); ++len) {
    Result<RangeDiff> d = DecodeRangeDiff(std::string_view(bytes).substr(0, len));
    ASSERT_FALSE(d.ok()) << len;
    EXPECT_EQ(d.status().code(), StatusCode::kCorruption) << len;
  }
  EXPECT_FALSE(DecodeRangeDiff(bytes + '\0').ok());
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::string flipped = bytes;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    Result<RangeDiff> d = DecodeRangeDiff(flipped);
    ASSERT_FALSE(d.ok()) << "bit " << bit;
    EXPECT_EQ(d.status().code(), StatusCode::kCorruption) << bit;
  }
  const std::string big(kMaxDiffBytes + 1, '\0');
  EXPECT_EQ(DecodeRangeDiff(big).status().code(), StatusCode::kResourceExhausted);
}

// The caps a reader gives DecodeRangeDiff (a large diff's, from the signed manifest) replace the defaults both
// ways: a diff over them is kResourceExhausted before anything is allocated, one within them decodes, and
// EncodeRangeDiff takes the same caps.
TEST(RangeDiffCodec, CapsAreTheReadersToSet) {
  RangeDiff d = GoldenRangeDiff();
  size_t most = 0;
  for (const RangeLayerDiff& l : d.layers) most = std::max({most, l.absent.size(), l.present.size()});
  ASSERT_GE(most, 2u);
  const std::string bytes = EncodeRangeDiff(d);
  Result<RangeDiff> tight = DecodeRangeDiff(bytes, {kMaxDiffBytes, most - 1});
  ASSERT_FALSE(tight.ok());
  EXPECT_EQ(tight.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(tight.status().message().find("exceed the cap of " + std::to_string(most - 1)), std::string::npos)
      << tight.status().ToString();
  EXPECT_TRUE(DecodeRangeDiff(bytes, {kMaxDiffBytes, most}).ok());
  EXPECT_EQ(DecodeRangeDiff(bytes, {bytes.size() - 1, most}).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ValidateRangeDiff(d, {kMaxDiffBytes, most - 1}).code(), StatusCode::kInvalidArgument);
  // Over the default value cap, within a large diff's: a stream of kMaxDiffEntries + 1 values.
  RangeDiff big;
  big.list_name = "phishing";
  big.from_version = 1;
  big.to_version = 2;
  RangeLayerDiff l;
  l.layer = LayerKind::kDomain;
  l.universe = (kMaxDiffEntries + 1) * 4;
  for (uint64_t i = 0; i <= kMaxDiffEntries; ++i) l.absent.push_back(i * 4);
  big.layers.push_back(std::move(l));
  EXPECT_EQ(ValidateRangeDiff(big).code(), StatusCode::kInvalidArgument);
  const RangeDiffCaps large{kMaxDiffBytes * 2, kMaxDiffEntries + 1};
  const std::string big_bytes = EncodeRangeDiff(big, large);
  EXPECT_EQ(DecodeRangeDiff(big_bytes).status().code(), StatusCode::kResourceExhausted);
  Result<RangeDiff> decoded = DecodeRangeDiff(big_bytes, large);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, big);
}

void ExpectRangeRejected(const std::vector<RejectCase>& cases) {
  const std::string good = EncodeRangeDiff(GoldenRangeDiff());
  for (const RejectCase& c : cases) {
    std::string b = good;
    for (const FieldEdit& e : c.edits) {
      if (e.width == 1) b[e.offset] = static_cast<char>(e.value);
      if (e.width == 4) Put32(&b, e.offset, static_cast<uint32_t>(e.value));
      if (e.width == 8) Put64(&b, e.offset, e.value);
    }
    Result<RangeDiff> d = DecodeRangeDiff(Reseal(b));
    ASSERT_FALSE(d.ok()) << "accepted an edit expected to fail with: " << c.needle;
    EXPECT_EQ(d.status().code(), c.code) << d.status().ToString();
    EXPECT_NE(d.status().message().find(c.needle), std::string::npos) << c.needle << ": " << d.status().ToString();
  }
}

TEST(RangeDiffCorruptionTest, FieldsBehindAValidChecksum) {
  const size_t r0 = RecordOffset(kName, 0);
  const size_t r1 = RecordOffset(kName, 1);
  ExpectRangeRejected({
      {{{12, 4, 161}}, "header length 161"},
      {{{16, 1, 0}}, "list name length 0"},
      {{{17, 1, 'P'}}, "outside [a-z0-9_-]"},
      {{{17 + kName, 8, 45}}, "from_version 45 is not < to_version 45"},
      {{{33 + kName, 1, 4}}, "4 layers"},
      {{{33 + kName, 1, 1}}, "header length 162 != 102"},
      {{{r0, 1, 3}}, "invalid layer kind 3"},
      {{{r1, 1, 0}}, "ascending"},
      {{{r0 + 1, 1, 64}}, "rice parameter"},
      {{{r0 + 3, 1, 1}}, "reserved"},
      {{{r0 + 52, 8, 1}}, "reserved"},
      {{{r0 + 12, 8, 1001}}, "new count 1001 exceeds the universe 1000"},
      {{{r0 + 12, 8, 1}}, "2 present values but a new count of only 1"},
      {{{r0 + 4, 8, 3}, {r0 + 12, 8, 3}}, "exceed the universe 3"},
      {{{r0 + 20, 8, kMaxDiffEntries + 1}}, "exceed the cap", StatusCode::kResourceExhausted},
      {{{r1 + 28, 8, kAllOnes}}, "exceed the cap", StatusCode::kResourceExhausted},
      {{{r0 + 36, 8, 1000}}, "runs past the end"},
      {{{r1 + 44, 8, kAllOnes}}, "runs past the end"},
      {{{r1 + 36, 8, 1}, {r1 + 44, 8, 0}}, "empty sequence"},
      // Stream contents: universe 999 excludes the present 999; fewer values than the stream holds.
      {{{r0 + 4, 8, 999}, {r0 + 12, 8, 6}}, "present fingerprints"},
      {{{r0 + 20, 8, 1}}, "after the last value"},
  });
}

TEST(RangeDiffCorruptionTest, AbsentAndPresentMustBeDisjoint) {
  RangeDiff d = GoldenRangeDiff();
  d.layers[0].present = {5, 999};  // 5 is absent too
  EXPECT_EQ(ValidateRangeDiff(d).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ValidateRangeDiff(d).message().find("both absent and present"), std::string::npos);
  // Behind a valid checksum: encode a valid one with the same stream shape, then swap the streams' meaning.
  RangeDiff ok = GoldenRangeDiff();
  ok.layers[0].present = {6, 999};
  std::string b = EncodeRangeDiff(ok);
  // Re-encode the present stream as {5, 999} with the same k: build it from a diff whose absent is that.
  RangeDiff other = GoldenRangeDiff();
  other.layers[0].absent = {5, 999};
  other.layers[0].present = {7, 998};
  const std::string ob = EncodeRangeDiff(other);
  // Both diffs have domain streams of the same lengths? Only then is the splice meaningful.
  const size_t r0 = RecordOffset(kName, 0);
  if (LoadLE64(reinterpret_cast<const uint8_t*>(ob.data()) + r0 + 36) ==
          LoadLE64(reinterpret_cast<const uint8_t*>(b.data()) + r0 + 44) &&
      ob[r0 + 1] == b[r0 + 2]) {
    const size_t stream0 = RecordOffset(kName, 2);
    const uint64_t absent_bytes = LoadLE64(reinterpret_cast<const uint8_t*>(b.data()) + r0 + 36);
    const uint64_t len = LoadLE64(reinterpret_cast<const uint8_t*>(b.data()) + r0 + 44);
    b.replace(stream0 + absent_bytes, len, ob.substr(stream0, len));
    Result<RangeDiff> r = DecodeRangeDiff(Reseal(b));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("both absent and present"), std::string::npos) << r.status().ToString();
  } else {
    ADD_FAILURE() << "the splice needs equal stream shapes; adjust the values";
  }
}

TEST(RangeDiffCorruptionTest, HugeCountsInATinyFileDoNotAllocate) {
  RangeDiff diff = GoldenRangeDiff();
  diff.layers.resize(1);
  std::string b = EncodeRangeDiff(diff);
  const size_t r0 = RecordOffset(8, 0);
  Put64(&b, r0 + 4, ~uint64_t{0});      // universe
  Put64(&b, r0 + 12, kMaxDiffEntries);  // new count
  Put64(&b, r0 + 28, kMaxDiffEntries);  // present count at the cap
  b = Reseal(b);
  size_t largest = 0;
  Result<RangeDiff> d = testing::TrackLargestAllocation(&largest, [&] { return DecodeRangeDiff(b); });
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kCorruption);
  EXPECT_LT(largest, size_t{4096});
}

TEST(RangeDiffCorruptionTest, RandomGarbageBehindAValidChecksumNeverCrashes) {
  const std::string good = EncodeRangeDiff(GoldenRangeDiff());
  std::mt19937_64 rng(78);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string b = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = 12 + rng() % (b.size() - 12 - kDiffTrailerBytes);
      b[at] = static_cast<char>(rng());
    }
    Result<RangeDiff> d = DecodeRangeDiff(Reseal(b));
    if (d.ok()) {
      ASSERT_TRUE(ValidateRangeDiff(*d).ok()) << ValidateRangeDiff(*d).ToString();
      Result<RangeDiff> again = DecodeRangeDiff(EncodeRangeDiff(*d));
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(*again, *d);
    }
  }
}

TEST(MergeRangeLayerDiffTest, RejectsBadStatesAndWrongCounts) {
  const RangeLayerDiff d = GoldenRangeDiff().layers[0];
  std::vector<uint64_t> out;
  // Wrong count: a state that is not at a version in [40, 45] (holds an extra untouched value).
  Status s = ApplyRangeLayerDiff({3, 5, 20, 50, 100, 300, 400}, d, &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("the result has 7 entries, the diff says 6"), std::string::npos) << s.ToString();
  EXPECT_TRUE(out.empty());
  s = ApplyRangeLayerDiff({3, 20, 20}, d, &out);
  EXPECT_NE(s.message().find("not strictly increasing"), std::string::npos) << s.ToString();
  s = ApplyRangeLayerDiff({3, 1000}, d, &out);
  EXPECT_NE(s.message().find(">= the universe"), std::string::npos) << s.ToString();
  RangeLayerDiff bad = d;
  bad.absent = {300, 5};
  EXPECT_NE(ApplyRangeLayerDiff({}, bad, &out).message().find("absent not strictly increasing"), std::string::npos);
  // emit's first error stops the merge.
  size_t calls = 0;
  size_t i = 0;
  const std::vector<uint64_t> old_state = {3, 5, 20, 50, 100, 300};
  s = MergeRangeLayerDiff(
      d,
      [&](uint64_t* v) {
        if (i == old_state.size()) return false;
        *v = old_state[i++];
        return true;
      },
      [&](uint64_t) { return ++calls == 2 ? Status::IoError("disk full") : Status::Ok(); });
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(calls, 2u);
}

// ParseRangeDiff checks what DecodeRangeDiff checks without holding the values: it accepts the same bytes, its
// streams decode to the same values, and it refuses every truncation, bit flip and garbage that DecodeRangeDiff
// refuses, with the same code.
TEST(ParseRangeDiffTest, AcceptsAndRefusesWhatDecodeDoes) {
  const VersionChain chain(991, 1 << 12, 300, 8, 40);
  for (size_t a = 0; a < 7; ++a) {
    RangeDiff diff;
    diff.list_name = "chain";
    diff.from_version = a;
    diff.to_version = 8;
    diff.layers = {chain.Layer(a, 8, LayerKind::kDomain), chain.Layer(0, 8 - a, LayerKind::kUrl)};
    const std::string bytes = EncodeRangeDiff(diff);
    Result<RangeDiffStreams> parsed = ParseRangeDiff(bytes);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->list_name, diff.list_name);
    EXPECT_EQ(parsed->from_version, a);
    EXPECT_EQ(parsed->to_version, 8u);
    ASSERT_EQ(parsed->layers.size(), diff.layers.size());
    for (size_t i = 0; i < diff.layers.size(); ++i) {
      const RangeLayerStreams& l = parsed->layers[i];
      EXPECT_EQ(l.layer, diff.layers[i].layer);
      EXPECT_EQ(l.universe, diff.layers[i].universe);
      EXPECT_EQ(l.new_count, diff.layers[i].new_count);
      std::vector<uint64_t> absent;
      std::vector<uint64_t> present;
      uint64_t x = 0;
      for (RiceSortedReader r = l.absent(); r.Next(&x);) absent.push_back(x);
      for (RiceSortedReader r = l.present(); r.Next(&x);) present.push_back(x);
      EXPECT_EQ(absent, diff.layers[i].absent);
      EXPECT_EQ(present, diff.layers[i].present);
    }
  }
  const std::string golden = EncodeRangeDiff(GoldenRangeDiff());
  for (size_t len = 0; len < golden.size(); ++len) {
    EXPECT_EQ(ParseRangeDiff(std::string_view(golden).substr(0, len)).status().code(), StatusCode::kCorruption);
  }
  for (size_t bit = 0; bit < golden.size() * 8; ++bit) {
    std::string flipped = golden;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_FALSE(ParseRangeDiff(flipped).ok()) << bit;
  }
  std::mt19937_64 rng(79);
  int both_ok = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string b = golden;
    for (int e = 0, edits = 1 + static_cast<int>(rng() % 4); e < edits; ++e) {
      b[12 + rng() % (b.size() - 12 - kDiffTrailerBytes)] = static_cast<char>(rng());
    }
    b = Reseal(b);
    Result<RangeDiff> decoded = DecodeRangeDiff(b);
    Result<RangeDiffStreams> parsed = ParseRangeDiff(b);
    ASSERT_EQ(parsed.ok(), decoded.ok()) << (decoded.ok() ? parsed.status() : decoded.status()).ToString();
    if (!decoded.ok()) {
      EXPECT_EQ(parsed.status().code(), decoded.status().code()) << decoded.status().ToString();
    } else {
      ++both_ok;
    }
  }
  EXPECT_GT(both_ok, 0);
}

// The merge from a layer's streams is the merge from its decoded values: same output for every state the diff
// applies to, same refusals; and a stream that changed after it was parsed ends in an error, not a crash.
TEST(RangeLayerMergerTest, StreamsMergeAsTheDecodedLayerDoes) {
  const VersionChain versions(78, 1 << 11, 300, 8, 40);
  auto merge = [](const auto& layer, const std::vector<uint64_t>& old, std::vector<uint64_t>* out) {
    size_t i = 0;
    out->clear();
    return MergeRangeLayerDiff(
        layer,
        [&](uint64_t* v) {
          if (i == old.size()) return false;
          *v = old[i++];
          return true;
        },
        [&](uint64_t v) {
          out->push_back(v);
          return Status::Ok();
        });
  };
  for (size_t a = 0; a < 8; ++a) {
    RangeDiff diff;
    diff.list_name = "chain";
    diff.from_version = a;
    diff.to_version = 8;
    diff.layers = {versions.Layer(a, 8, LayerKind::kUrl)};
    const std::string bytes = EncodeRangeDiff(diff);
    Result<RangeDiffStreams> parsed = ParseRangeDiff(bytes);
    ASSERT_TRUE(parsed.ok());
    for (size_t f = 0; f <= 8; ++f) {
      std::vector<uint64_t> from_values;
      std::vector<uint64_t> from_streams;
      const Status sv = merge(diff.layers[0], versions.states[f], &from_values);
      const Status ss = merge(parsed->layers[0], versions.states[f], &from_streams);
      ASSERT_EQ(ss.ok(), sv.ok()) << a << " " << f << " " << ss.ToString() << " / " << sv.ToString();
      EXPECT_EQ(ss.message(), sv.message());
      if (sv.ok()) {
        EXPECT_EQ(from_streams, from_values);
        if (f >= a) {
          EXPECT_EQ(from_streams, versions.states[8]);
        }
      }
    }
    // The bytes under the parsed streams cut short afterwards: the merge reports it.
    RangeLayerStreams broken = parsed->layers[0];
    if (broken.present_count > 1) {
      broken.present_stream.remove_suffix(1);
      std::vector<uint64_t> out;
      const Status s = merge(broken, versions.states[a], &out);
      EXPECT_EQ(s.code(), StatusCode::kCorruption);
      EXPECT_NE(s.message().find("apply range diff to layer url: rice stream"), std::string::npos) << s.ToString();
    }
  }
}

TEST(ComposeRangeDiffsTest, TwoHopsEqualOneDiffOverTheWholeRange) {
  const VersionChain chain(4242, 1 << 10, 200, 6, 30);
  const uint64_t universe = chain.universe;
  auto range = [&](size_t a, size_t v) {
    RangeDiff d;
    d.list_name = "chain";
    d.from_version = a;
    d.to_version = v;
    d.layers = {chain.Layer(a, v, LayerKind::kDomain)};
    return d;
  };
  for (size_t a = 0; a < 5; ++a) {
    for (size_t c = a + 1; c < 6; ++c) {
      Result<RangeDiff> composed = ComposeRangeDiffs(range(a, c), range(c, 6));
      ASSERT_TRUE(composed.ok()) << composed.status().ToString();
      ASSERT_TRUE(ValidateRangeDiff(*composed).ok());
      EXPECT_EQ(*composed, range(a, 6)) << a << " " << c;
    }
  }
  EXPECT_FALSE(ComposeRangeDiffs(range(0, 2), range(3, 6)).ok());
  RangeDiff other_universe = range(2, 6);
  other_universe.layers[0].universe = universe * 2;
  EXPECT_FALSE(ComposeRangeDiffs(range(0, 2), other_universe).ok());
}

// Two hops chained through RangeLayerMerger (old at F -> C -> V, what a client two hops behind streams) give the
// state at V for every F in [A, C], as applying them one after the other does; a wrong first hop reports its own
// error at the end of the chain.
TEST(RangeLayerMergerTest, TwoChainedHopsGiveTheStateAtTheEnd) {
  const VersionChain versions(77, 1 << 11, 300, 8, 40);
  const std::vector<std::vector<uint64_t>>& states = versions.states;
  auto range = [&](size_t a, size_t v) { return versions.Layer(a, v, LayerKind::kUrl); };
  auto chain = [](const std::vector<uint64_t>& old, const RangeLayerDiff& first, const RangeLayerDiff& second,
                  std::vector<uint64_t>* out) {
    size_t i = 0;
    auto next_old = [&](uint64_t* v) {
      if (i == old.size()) return false;
      *v = old[i++];
      return true;
    };
    RangeLayerMerger<decltype(next_old)&> hop1(first, next_old);
    out->clear();
    Status s = MergeRangeLayerDiff(second, [&](uint64_t* v) { return hop1.Next(v); },
                                   [&](uint64_t v) {
                                     out->push_back(v);
                                     return Status::Ok();
                                   });
    return hop1.status().ok() ? s : hop1.status();
  };
  for (size_t a = 0; a < 7; ++a) {
    for (size_t c = a + 1; c < 8; ++c) {
      for (size_t f = a; f <= c; ++f) {
        std::vector<uint64_t> got;
        ASSERT_TRUE(chain(states[f], range(a, c), range(c, 8), &got).ok()) << a << " " << c << " " << f;
        EXPECT_EQ(got, states[8]) << "from " << f << " through (" << a << ", " << c << "]";
      }
    }
  }
  // A first hop whose count is wrong: its error, not the second hop's.
  RangeLayerDiff bad = range(1, 4);
  bad.new_count += 1;
  std::vector<uint64_t> got;
  Status s = chain(states[2], bad, range(4, 8), &got);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("the diff says " + std::to_string(bad.new_count)), std::string::npos) << s.ToString();
}

}  // namespace range

}  // namespace
}  // namespace urlguard
