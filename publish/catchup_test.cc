// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.

#include "publish/catchup.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <set>

#include "core/sha256.h"

namespace urlguard {
namespace {

// t(A) over (A, V] for counts of versions lo+1..V.
double T(uint64_t lo, const std::vector<uint64_t>& counts, uint64_t a) {
  double s = 0;
  for (uint64_t v = a + 1; v <= lo + counts.size(); ++v) s += static_cast<double>(counts[v - lo - 1]);
  return s;
}

TEST(PlanAnchors, EveryClientHasAnAnchorWithinTheRatio) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const uint64_t lo = rng() % 50;
    std::vector<uint64_t> counts(1 + rng() % 300);
    for (uint64_t& c : counts) c = rng() % 4 == 0 ? 0 : rng() % 1000;  // idle versions too
    const double ratio = round % 2 == 0 ? 1.3 : 2.0;
    std::vector<uint64_t> anchors = PlanAnchors(lo, counts, ratio);
    const uint64_t v = lo + counts.size();
    ASSERT_FALSE(anchors.empty());
    EXPECT_EQ(anchors.front(), lo);
    EXPECT_EQ(anchors.back(), v - 1);
    EXPECT_TRUE(std::is_sorted(anchors.begin(), anchors.end()));
    for (uint64_t f = lo; f < v; ++f) {
      auto it = std::upper_bound(anchors.begin(), anchors.end(), f);
      ASSERT_NE(it, anchors.begin());
      const uint64_t a = *(it - 1);
      EXPECT_LE(T(lo, counts, a), ratio * T(lo, counts, f) + 1e-9) << "F " << f << " anchor " << a;
    }
  }
}

TEST(PlanAnchors, SteadyChangesNeedLogarithmicallyManyAnchors) {
  std::vector<uint64_t> counts(1440, 84000);  // a day of minute versions at 1,400 changes a second
  std::vector<uint64_t> anchors = PlanAnchors(0, counts, 1.3);
  // Geometric spacing: about log(1440) / log(1.3) ~ 28, plus the first few single steps.
  EXPECT_LE(anchors.size(), 40u);
  EXPECT_GE(anchors.size(), 20u);
  EXPECT_EQ(PlanAnchors(5, {}, 1.3).size(), 0u);
  EXPECT_EQ(PlanAnchors(5, std::vector<uint64_t>{3}, 1.3), std::vector<uint64_t>{5});
}

using Sets = std::array<std::set<uint64_t>, kLayerKindCount>;

std::array<LayerSetSum, kLayerKindCount> SumsOf(const Sets& s) {
  std::array<LayerSetSum, kLayerKindCount> out{};
  for (int l = 0; l < kLayerKindCount; ++l) {
    for (uint64_t f : s[l]) {
      ++out[l].count;
      out[l].sum += SetElementHash(static_cast<LayerKind>(l), f);
    }
  }
  return out;
}

// The client's side of a range diff: (old \ absent) ∪ present, per layer.
Sets ApplyRange(Sets old, const RangeDiff& d) {
  for (const RangeLayerDiff& l : d.layers) {
    auto& s = old[static_cast<int>(l.layer)];
    for (uint64_t f : l.absent) s.erase(f);
    for (uint64_t f : l.present) s.insert(f);
  }
  return old;
}

TEST(EpochMap, RangeDiffsBringEveryEarlierStateToTheNewest) {
  std::mt19937_64 rng(11);
  const uint64_t universe = 400;
  Sets state;
  for (int l = 0; l < kLayerKindCount; ++l) {
    for (int i = 0; i < 60; ++i) state[l].insert(rng() % universe);
  }
  const uint64_t checkpoint = 10;
  std::map<uint64_t, Sets> history{{checkpoint, state}};
  EpochMap map(checkpoint, SumsOf(state));
  for (uint64_t v = checkpoint + 1; v <= checkpoint + 40; ++v) {
    std::vector<TouchedFingerprint> touched;
    Sets next = state;
    for (int l = 0; l < kLayerKindCount; ++l) {
      std::set<uint64_t> picks;
      for (int i = 0, n = static_cast<int>(rng() % 12); i < n; ++i) picks.insert(rng() % universe);
      for (uint64_t f : picks) {
        bool before = state[l].count(f) != 0;
        bool after = rng() % 2 == 0;  // sometimes unchanged: a key of a shared fingerprint came and went
        if (after) {
          next[l].insert(f);
        } else {
          next[l].erase(f);
        }
        touched.push_back({static_cast<LayerKind>(l), f, before, after});
      }
    }
    ASSERT_TRUE(map.Apply(v, touched).ok());
    state = next;
    history[v] = state;
    EXPECT_EQ(map.sums(), SumsOf(state)) << "version " << v;

    RangeDiffTarget target;
    target.list = "phishing";
    target.version = v;
    for (int l = 0; l < kLayerKindCount; ++l) {
      target.universe[l] = universe;
      target.count[l] = state[l].size();
    }
    // Any client from the checkpoint on reaches v with the diff from its best anchor, and with any diff from
    // an earlier version too (set semantics).
    std::vector<uint64_t> anchors = map.Anchors(1.3);
    // One pass for many ranges (what a version writes) equals one filter pass per range.
    std::vector<uint64_t> every;
    for (uint64_t f = checkpoint; f < v; ++f) every.push_back(f);
    for (const std::vector<uint64_t>& froms : {anchors, every}) {
      std::vector<RangeDiff> all = map.Diffs(target, froms);
      ASSERT_EQ(all.size(), froms.size());
      for (size_t i = 0; i < froms.size(); ++i)
        EXPECT_EQ(all[i], map.Diff(target, froms[i])) << "from " << froms[i];
    }
    for (uint64_t f = checkpoint; f < v; ++f) {
      uint64_t a = *(std::upper_bound(anchors.begin(), anchors.end(), f) - 1);
      RangeDiff d = map.Diff(target, a);
      ASSERT_TRUE(ValidateRangeDiff(d).ok()) << ValidateRangeDiff(d).ToString();
      EXPECT_EQ(ApplyRange(history[f], d), state) << "from " << f << " via " << a << " to " << v;
    }
  }
  // Rebase: forget the epoch's first half; diffs from the new checkpoint still work.
  map.Rebase(checkpoint + 20);
  EXPECT_EQ(map.checkpoint(), checkpoint + 20);
  EXPECT_EQ(map.touched_counts().size(), 20u);
  RangeDiffTarget target;
  target.list = "phishing";
  target.version = map.version();
  for (int l = 0; l < kLayerKindCount; ++l) {
    target.universe[l] = universe;
    target.count[l] = state[l].size();
  }
  for (uint64_t f = map.checkpoint(); f < map.version(); ++f) {
    EXPECT_EQ(ApplyRange(history[f], map.Diff(target, map.checkpoint())), state);
  }
}

TEST(EpochMap, ConcatenatedArchiveServesClientsOfEarlierEpochs) {
  std::mt19937_64 rng(5);
  const uint64_t universe = 300;
  Sets state;
  for (int i = 0; i < 50; ++i) state[0].insert(rng() % universe);
  std::map<uint64_t, Sets> history{{0, state}};
  auto version = [&](EpochMap* m, uint64_t v) {
    std::vector<TouchedFingerprint> touched;
    for (uint64_t f = 0; f < universe; ++f) {
      if (rng() % 20 != 0) continue;
      bool before = state[0].count(f) != 0;
      bool after = rng() % 2 == 0;
      if (after) state[0].insert(f); else state[0].erase(f);
      touched.push_back({LayerKind::kDomain, f, before, after});
    }
    ASSERT_TRUE(m->Apply(v, touched).ok());
    history[v] = state;
  };
  EpochMap first(0, SumsOf(state));
  for (uint64_t v = 1; v <= 10; ++v) version(&first, v);
  EpochMap second(10, first.sums());
  for (uint64_t v = 11; v <= 25; ++v) version(&second, v);
  auto archive = EpochMap::Concatenate(first, second);
  ASSERT_TRUE(archive.ok());
  EXPECT_FALSE(EpochMap::Concatenate(second, first).ok());
  RangeDiffTarget target;
  target.list = "phishing";
  target.version = 25;
  target.universe[0] = universe;
  target.count[0] = state[0].size();
  for (uint64_t f = 0; f < 25; ++f) {
    EXPECT_EQ(ApplyRange(history[f], archive->Diff(target, f)), state) << "from " << f;
  }
  const uint64_t all = archive->TouchedSince(0);
  archive->TrimToTouched(all / 2);
  EXPECT_LE(archive->TouchedSince(archive->checkpoint()), all / 2);
  EXPECT_GT(archive->checkpoint(), 0u);
  for (uint64_t f = archive->checkpoint(); f < 25; ++f) {
    EXPECT_EQ(ApplyRange(history[f], archive->Diff(target, f)), state) << "from " << f;
  }
}

// Append (the checkpoint's in-place archive) equals Concatenate followed by TrimToTouched, for every window: one
// that keeps both maps, one that starts inside the older map, inside the newer one, and an empty one.
TEST(EpochMap, AppendInPlaceEqualsConcatenateThenTrim) {
  std::mt19937_64 rng(11);
  const uint64_t universe = 400;
  std::array<std::set<uint64_t>, 2> state;  // domain and url
  auto version = [&](EpochMap* m, uint64_t v) {
    std::vector<TouchedFingerprint> touched;
    for (int layer = 0; layer < 2; ++layer) {
      for (uint64_t f = 0; f < universe; ++f) {
        if (rng() % 15 != 0) continue;
        const bool before = state[layer].count(f) != 0;
        const bool after = rng() % 2 == 0;
        if (after) state[layer].insert(f); else state[layer].erase(f);
        touched.push_back({static_cast<LayerKind>(layer), f, before, after});
      }
    }
    ASSERT_TRUE(m->Apply(v, touched).ok());
  };
  EpochMap first(0, {});
  for (uint64_t v = 1; v <= 12; ++v) version(&first, v);
  EpochMap second(12, first.sums());
  for (uint64_t v = 13; v <= 20; ++v) version(&second, v);
  auto whole = EpochMap::Concatenate(first, second);
  ASSERT_TRUE(whole.ok());
  const uint64_t all = whole->TouchedSince(0);
  const uint64_t in_second = second.TouchedSince(12);
  for (uint64_t max : {all, all - 1, (all + in_second) / 2, in_second, in_second / 2, uint64_t{0}}) {
    EpochMap expected = *whole;
    expected.TrimToTouched(max);
    EpochMap got = first;
    ASSERT_TRUE(got.Append(second, max).ok()) << max;
    EXPECT_EQ(got.checkpoint(), expected.checkpoint()) << max;
    EXPECT_EQ(got.version(), 20u);
    EXPECT_EQ(got.entries(), expected.entries()) << max;
    EXPECT_EQ(got.touched_counts(), expected.touched_counts()) << max;
    EXPECT_EQ(got.sums(), second.sums());
  }
  EpochMap unchanged = second;
  EXPECT_EQ(unchanged.Append(first).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unchanged.entries(), second.entries());
  EXPECT_EQ(unchanged.version(), second.version());
}

TEST(EpochMap, RefusesOutOfOrderVersionsAndContradictions) {
  EpochMap map(3, {});
  std::vector<TouchedFingerprint> t = {{LayerKind::kDomain, 5, false, true}};
  EXPECT_FALSE(map.Apply(5, t).ok());
  ASSERT_TRUE(map.Apply(4, t).ok());
  // The map knows 5 is present now: a version claiming it was absent before is a bug upstream.
  EXPECT_FALSE(map.Apply(5, t).ok());
  std::vector<TouchedFingerprint> unsorted = {{LayerKind::kUrl, 9, false, true}, {LayerKind::kDomain, 1, false, true}};
  EXPECT_FALSE(map.Apply(5, unsorted).ok());
  std::vector<TouchedFingerprint> underflow = {{LayerKind::kIp, 1, true, false}};
  EXPECT_FALSE(map.Apply(5, underflow).ok());
  EXPECT_EQ(map.version(), 4u);
}

TEST(EpochMap, ARefusedVersionLeavesTheMapAsItWas) {
  // Apply checks everything before it merges (in place when the vector has room: Decode's `room`): a
  // contradiction found late in the list must not leave the earlier fingerprints merged.
  EpochMap map(3, {LayerSetSum{2, 0}, {}, {}});
  std::vector<TouchedFingerprint> t = {{LayerKind::kDomain, 5, false, true},
                                       {LayerKind::kDomain, 9, true, true}};
  ASSERT_TRUE(map.Apply(4, t).ok());
  for (size_t room : {size_t{0}, size_t{100}}) {
    auto decoded = EpochMap::Decode(map.Encode("phishing"), "phishing", room);
    ASSERT_TRUE(decoded.ok());
    EpochMap m = std::move(decoded).value();
    const std::vector<EpochEntry> entries = m.entries();
    const auto sums = m.sums();
    std::vector<TouchedFingerprint> late = {{LayerKind::kDomain, 1, false, true},    // fine
                                            {LayerKind::kDomain, 7, false, true},    // fine
                                            {LayerKind::kDomain, 9, false, false}};  // the map says present
    EXPECT_EQ(m.Apply(5, late).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(m.entries(), entries);
    EXPECT_EQ(m.sums(), sums);
    EXPECT_EQ(m.version(), 4u);
    // And an accepted one merges new, known and trailing fingerprints in order.
    std::vector<TouchedFingerprint> ok = {{LayerKind::kDomain, 1, false, true},
                                          {LayerKind::kDomain, 9, true, false},
                                          {LayerKind::kUrl, 2, false, true}};
    ASSERT_TRUE(m.Apply(5, ok).ok());
    const std::vector<EpochEntry> want = {{1, 5, LayerKind::kDomain, true},
                                          {5, 4, LayerKind::kDomain, true},
                                          {9, 5, LayerKind::kDomain, false},
                                          {2, 5, LayerKind::kUrl, true}};
    EXPECT_EQ(m.entries(), want) << "room " << room;
  }
}

// Pins the file format (docs/versions.md "Epoch map file").
TEST(EpochMap, GoldenBytes) {
  EpochMap map(41, {LayerSetSum{10, 0x1111}, LayerSetSum{0, 0}, LayerSetSum{2, 0x2222}});
  std::vector<TouchedFingerprint> t = {{LayerKind::kDomain, 7, false, true}, {LayerKind::kIp, 300, false, false}};
  ASSERT_TRUE(map.Apply(42, t).ok());
  std::string bytes = map.Encode("phishing");
  const std::string hex_prefix =
      "554745504f43480a"                  // "UGEPOCH\n"
      "01000000"                          // format 1
      "08" "7068697368696e67"             // name
      "2900000000000000"                  // checkpoint 41
      "2a00000000000000";                 // version 42
  EXPECT_EQ(ToHex(reinterpret_cast<const uint8_t*>(bytes.data()), hex_prefix.size() / 2), hex_prefix);
  // 8 + 4 + 9 + 16 + 48 sums + 8 + 1 count + 8 + 2 records + 32 trailer.
  EXPECT_EQ(bytes.size(), 8u + 4 + 9 + 16 + 48 + 8 + 8 + 8 + 2 * kEpochMapRecordBytes + 32);
  auto back = EpochMap::Decode(bytes, "phishing");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->entries(), map.entries());
  EXPECT_EQ(back->sums(), map.sums());
  EXPECT_EQ(back->touched_counts(), map.touched_counts());
  EXPECT_EQ(back->sums()[0].count, 11u);
  EXPECT_EQ(back->sums()[0].sum, 0x1111 + SetElementHash(LayerKind::kDomain, 7));

  EXPECT_FALSE(EpochMap::Decode(bytes, "malware").ok());
  for (size_t cut : {size_t{0}, size_t{20}, bytes.size() - 1}) {
    EXPECT_FALSE(EpochMap::Decode(bytes.substr(0, cut), "phishing").ok());
  }
  std::string flipped = bytes;
  flipped[60] ^= 1;
  EXPECT_FALSE(EpochMap::Decode(flipped, "phishing").ok());
}

// EncodeTo hands out Encode's bytes in pieces, and stops at its output's first error; Decode tells done_with of
// every byte of the file, each pass in order and in pieces of about kEpochDecodePieceBytes, and decodes the same
// map. A map of 3 M entries is a 72 MB file: two pieces.
TEST(EpochMap, EncodesInPiecesAndTellsWhatItDecodedIsDone) {
  EpochMap map(10, {});
  std::vector<TouchedFingerprint> t;
  const uint64_t n = 3'000'000;
  t.reserve(n);
  for (uint64_t i = 0; i < n; ++i) t.push_back({LayerKind::kUrl, i * 7 + 1, false, true});
  ASSERT_TRUE(map.Apply(11, t).ok());
  const std::string whole = map.Encode("phishing");
  ASSERT_GT(whole.size(), kEpochDecodePieceBytes);

  std::string pieced;
  size_t pieces = 0;
  Status s = map.EncodeTo("phishing", [&](std::string_view piece) {
    EXPECT_LE(piece.size(), kEpochEncodePieceBytes + kEpochMapRecordBytes);
    pieced.append(piece);
    ++pieces;
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(pieced, whole);
  EXPECT_GT(pieces, whole.size() / (kEpochEncodePieceBytes + kEpochMapRecordBytes));
  size_t calls = 0;
  s = map.EncodeTo("phishing", [&](std::string_view) {
    return ++calls == 3 ? Status::IoError("disk full") : Status::Ok();
  });
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(calls, 3u);

  std::vector<std::pair<size_t, size_t>> told;
  auto back = EpochMap::Decode(whole, "phishing", 0, [&](size_t offset, size_t length) {
    told.emplace_back(offset, length);
  });
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->entries(), map.entries());
  // Two passes (the checksum's, then the entries'), each from 0 in order without gaps; the first stops at the
  // trailer, the second ends at the file's end.
  size_t pass = 0, next = 0;
  for (const auto& [offset, length] : told) {
    if (offset == 0 && next != 0) {
      EXPECT_EQ(next, whole.size() - 32) << "the checksum pass covers all but the trailer";
      ++pass;
      next = 0;
    }
    EXPECT_EQ(offset, next);
    EXPECT_GT(length, 0u);
    EXPECT_LE(length, kEpochDecodePieceBytes + kEpochMapRecordBytes);
    next = offset + length;
  }
  EXPECT_EQ(pass, 1u);
  EXPECT_EQ(next, whole.size());
  // A damaged file is refused whatever done_with is given.
  std::string flipped = whole;
  flipped[whole.size() / 2] ^= 1;
  EXPECT_EQ(EpochMap::Decode(flipped, "phishing", 0, [](size_t, size_t) {}).status().code(),
            StatusCode::kCorruption);
}

}  // namespace
}  // namespace urlguard
