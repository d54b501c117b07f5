// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/bit_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace urlguard {
namespace {

std::string Bytes(std::initializer_list<uint8_t> b) { return std::string(b.begin(), b.end()); }

// A sorted set of `n` distinct values in [0, bound), deterministic for a seed.
std::vector<uint64_t> RandomSortedSet(size_t n, uint64_t bound, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<uint64_t> s;
  while (s.size() < n) s.insert(bound == 0 ? 0 : rng() % bound);
  return std::vector<uint64_t>(s.begin(), s.end());
}

// The obvious reference: cost of k computed straight from the definition.
uint64_t SlowCost(const std::vector<uint64_t>& v, int k) {
  uint64_t bits = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const uint64_t gap = i == 0 ? v[0] : v[i] - v[i - 1] - 1;
    bits += (gap >> k) + 1 + static_cast<uint64_t>(k);
  }
  return bits;
}

TEST(BitWriterTest, LsbFirstBitOrder) {
  BitWriter w;
  w.WriteBits(1, 1);       // bit 0 of byte 0
  w.WriteBits(0, 2);       // bits 1-2
  w.WriteBits(0x1f, 5);    // bits 3-7
  w.WriteBits(0xabc, 12);  // byte 1 = 0xbc, low nibble of byte 2 = 0xa
  EXPECT_EQ(w.bit_count(), 20u);
  EXPECT_EQ(w.Finish(), Bytes({0xf9, 0xbc, 0x0a}));
}

TEST(BitWriterTest, SixtyFourBitValues) {
  BitWriter w;
  w.WriteBits(1, 3);
  w.WriteBits(0x0123456789abcdefull, 64);
  w.WriteBits(~uint64_t{0}, 64);
  const std::string bytes = w.Finish();
  ASSERT_EQ(bytes.size(), 17u);
  BitReader r(bytes);
  uint64_t v = 0;
  ASSERT_TRUE(r.ReadBits(3, &v));
  EXPECT_EQ(v, 1u);
  ASSERT_TRUE(r.ReadBits(64, &v));
  EXPECT_EQ(v, 0x0123456789abcdefull);
  ASSERT_TRUE(r.ReadBits(64, &v));
  EXPECT_EQ(v, ~uint64_t{0});
  EXPECT_TRUE(r.AtCanonicalEnd());
}

TEST(BitWriterTest, UnaryAndRiceLayout) {
  // Rice(13, k=2): q = 3 -> 1,1,1,0 then r = 1 -> 1,0: bits (LSB first) 1110 10 -> 0b010111 = 0x17.
  BitWriter w;
  w.WriteRice(13, 2);
  EXPECT_EQ(w.bit_count(), 6u);
  EXPECT_EQ(w.Finish(), Bytes({0x17}));
  // A long unary run crosses several 32-bit chunks: 70 ones, then the zero.
  w.WriteUnary(70);
  EXPECT_EQ(w.bit_count(), 71u);
  EXPECT_EQ(w.Finish(), Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f}));
}

TEST(BitWriterTest, MatchesABitAtATimeReference) {
  // The writer flushes 32-bit words; the bytes must be those of appending one bit at a time, LSB first, for
  // any mix of widths, at every length (bit_count() included) and after Finish pads the last byte.
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    BitWriter w;
    std::vector<bool> bits;
    const int ops = static_cast<int>(rng() % 64);
    for (int i = 0; i < ops; ++i) {
      const int count = static_cast<int>(rng() % 65);
      const uint64_t value = count == 64 ? rng() : rng() & ((uint64_t{1} << count) - 1);
      switch (rng() % 3) {
        case 0:
          w.WriteBits(value, count);
          for (int b = 0; b < count; ++b) bits.push_back(((value >> b) & 1) != 0);
          break;
        case 1: {
          const uint64_t q = rng() % 80;
          w.WriteUnary(q);
          bits.insert(bits.end(), q, true);
          bits.push_back(false);
          break;
        }
        default: {
          const int k = static_cast<int>(rng() % (kMaxRiceParameter + 1));
          const uint64_t v = (rng() % 100) << k | (rng() & ((uint64_t{1} << k) - 1));
          w.WriteRice(v, k);
          bits.insert(bits.end(), v >> k, true);
          bits.push_back(false);
          for (int b = 0; b < k; ++b) bits.push_back(((v >> b) & 1) != 0);
          break;
        }
      }
      ASSERT_EQ(w.bit_count(), bits.size());
    }
    std::string want((bits.size() + 7) / 8, '\0');
    for (size_t i = 0; i < bits.size(); ++i) {
      if (bits[i]) want[i / 8] = static_cast<char>(want[i / 8] | (1 << (i % 8)));
    }
    EXPECT_EQ(w.Finish(), want) << "trial " << trial;
    EXPECT_EQ(w.bit_count(), 0u);
  }
}

TEST(BitReaderTest, ReadPastEndFails) {
  const std::string bytes = Bytes({0xff, 0x01});
  BitReader r(bytes);
  uint64_t v = 0;
  ASSERT_TRUE(r.ReadBits(9, &v));
  EXPECT_EQ(v, 0x1ffu);
  EXPECT_EQ(r.bits_remaining(), 7u);
  EXPECT_FALSE(r.ReadBits(8, &v));
  BitReader empty("");
  EXPECT_TRUE(empty.ReadBits(0, &v));
  EXPECT_FALSE(empty.ReadBits(1, &v));
  EXPECT_TRUE(empty.AtCanonicalEnd());
}

TEST(BitReaderTest, UnaryStopsAtCapAndAtEnd) {
  const std::string ones(1000, '\xff');
  uint64_t q = 0;
  {
    BitReader r(ones);  // no terminating zero anywhere
    EXPECT_FALSE(r.ReadUnary(~uint64_t{0}, &q));
  }
  {
    BitReader r(ones);  // the cap is hit long before the end: the reader must stop early
    EXPECT_FALSE(r.ReadUnary(100, &q));
    EXPECT_GE(r.bits_remaining(), 8000u - 100 - 64);
  }
  std::string run = ones;
  run.push_back('\x00');  // 8000 ones then a zero
  {
    BitReader r(run);
    ASSERT_TRUE(r.ReadUnary(8000, &q));
    EXPECT_EQ(q, 8000u);
  }
  {
    BitReader r(run);
    EXPECT_FALSE(r.ReadUnary(7999, &q));
  }
}

TEST(BitReaderTest, RiceRespectsMaxValue) {
  BitWriter w;
  w.WriteRice(1000, 4);
  const std::string bytes = w.Finish();
  uint64_t v = 0;
  {
    BitReader r(bytes);
    ASSERT_TRUE(r.ReadRice(4, 1000, &v));
    EXPECT_EQ(v, 1000u);
  }
  {
    BitReader r(bytes);  // same quotient (62), remainder pushes it over 999
    EXPECT_FALSE(r.ReadRice(4, 999, &v));
  }
  {
    BitReader r(bytes);  // quotient alone exceeds
    EXPECT_FALSE(r.ReadRice(4, 900, &v));
  }
}

TEST(BitReaderTest, CanonicalEndRejectsNonZeroPaddingAndExtraBytes) {
  {
    const std::string bytes = Bytes({0x01});
    BitReader r(bytes);
    uint64_t v;
    ASSERT_TRUE(r.ReadBits(1, &v));
    EXPECT_TRUE(r.AtCanonicalEnd());
  }
  {
    const std::string bytes = Bytes({0x03});  // padding bit 1 is set
    BitReader r(bytes);
    uint64_t v;
    ASSERT_TRUE(r.ReadBits(1, &v));
    EXPECT_FALSE(r.AtCanonicalEnd());
  }
  {
    const std::string bytes = Bytes({0x01, 0x00});  // a whole extra zero byte
    BitReader r(bytes);
    uint64_t v;
    ASSERT_TRUE(r.ReadBits(1, &v));
    EXPECT_FALSE(r.AtCanonicalEnd());
  }
}

TEST(RiceTest, GoldenSequenceBits) {
  // Values 3, 5, 12 -> gaps 3, 1, 6. k = 1: 3 -> q1 r1: "10"+"1"; 1 -> q0 r1: "0"+"1"; 6 -> q3 r0:
  // "1110"+"0". Bit string in write order: 1 0 1 0 1 1 1 1 0 0 -> byte 0 = 0b11110101 = 0xf5, byte 1 = 0b00 =
  // 0x00.
  const std::vector<uint64_t> v = {3, 5, 12};
  EXPECT_EQ(RiceEncodeSorted(v, 1), Bytes({0xf5, 0x00}));
  EXPECT_EQ(RiceSortedCostBits(v, 1), 10u);
  std::vector<uint64_t> out;
  ASSERT_TRUE(RiceDecodeSorted(Bytes({0xf5, 0x00}), 1, 3, 13, &out).ok());
  EXPECT_EQ(out, v);
  // The same bytes with a bound that excludes 12 fail.
  EXPECT_EQ(RiceDecodeSorted(Bytes({0xf5, 0x00}), 1, 3, 12, &out).code(), StatusCode::kCorruption);
  EXPECT_TRUE(out.empty());
}

TEST(RiceTest, EstimateMatchesFormula) {
  EXPECT_EQ(EstimateRiceParameter(0, 0), 0);
  EXPECT_EQ(EstimateRiceParameter(10, 0), 0);
  EXPECT_EQ(EstimateRiceParameter(1, 2), 0);     // 2 ln2 = 1.39 -> log2 < 1
  EXPECT_EQ(EstimateRiceParameter(1, 3), 1);     // 2.08 -> 1
  EXPECT_EQ(EstimateRiceParameter(1, 1024), 9);  // 709.8 -> 9.47
  EXPECT_EQ(EstimateRiceParameter(1, ~uint64_t{0}), 63);
  EXPECT_EQ(EstimateRiceParameter(1000, 1000u << 20), 19);  // 2^20 ln2 -> 19.47
}

TEST(RiceTest, OptimalParameterEqualsBruteForce) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 300;
    const int log_bound = static_cast<int>(rng() % 64);
    const uint64_t bound = std::max<uint64_t>(n, log_bound == 63 ? ~uint64_t{0} : uint64_t{1} << log_bound);
    std::vector<uint64_t> v = RandomSortedSet(n, bound, rng());
    if (trial % 5 == 0) {  // skewed: one huge gap among tiny ones
      for (auto& x : v) x /= 1024;
      v.erase(std::unique(v.begin(), v.end()), v.end());
      v.push_back(~uint64_t{0} - 1);
    }
    int best_k = 0;
    uint64_t best = ~uint64_t{0};
    for (int k = 0; k <= kMaxRiceParameter; ++k) {
      const uint64_t c = RiceSortedCostBits(v, k);
      if (c < best) {
        best = c;
        best_k = k;
      }
    }
    ASSERT_EQ(OptimalRiceParameter(v), best_k) << "trial " << trial;
  }
  EXPECT_EQ(OptimalRiceParameter(std::vector<uint64_t>{}), 0);
}

TEST(RiceTest, CostMatchesSlowReferenceAndEncodedLength) {
  const std::vector<uint64_t> v = RandomSortedSet(5000, uint64_t{1} << 37, 11);
  for (int k : {0, 10, 25, 26, 40, 63}) {
    if (k == 0) continue;  // k = 0 with 2^25-sized gaps would write ~2^37 bits
    const uint64_t bits = RiceSortedCostBits(v, k);
    EXPECT_EQ(bits, SlowCost(v, k));
    EXPECT_EQ(RiceEncodeSorted(v, k).size(), (bits + 7) / 8);
  }
}

TEST(RiceTest, RoundTripRandomSets) {
  const uint64_t kBounds[] = {1,           2, 1000, uint64_t{1} << 20, uint64_t{1} << 37, uint64_t{1} << 63,
                              ~uint64_t{0}};
  uint64_t seed = 1;
  for (uint64_t bound : kBounds) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{1000}}) {
      if (n > bound) continue;
      const std::vector<uint64_t> v = RandomSortedSet(n, bound, seed++);
      const int k = OptimalRiceParameter(v);
      const std::string bytes = RiceEncodeSorted(v, k);
      std::vector<uint64_t> out = {42};
      ASSERT_TRUE(RiceDecodeSorted(bytes, k, n, bound, &out).ok()) << bound << " " << n;
      EXPECT_EQ(out, v);
    }
  }
}

TEST(RiceTest, ExtremeValues) {
  // The largest values a bound of 2^64 - 1 admits, and a dense prefix.
  const std::vector<uint64_t> v = {0, 1, 2, ~uint64_t{0} - 2, ~uint64_t{0} - 1};
  for (int k : {48, 62, 63}) {
    const std::string bytes = RiceEncodeSorted(v, k);
    std::vector<uint64_t> out;
    ASSERT_TRUE(RiceDecodeSorted(bytes, k, v.size(), ~uint64_t{0}, &out).ok()) << k;
    EXPECT_EQ(out, v);
    // One less in the bound makes the last value out of range.
    EXPECT_FALSE(RiceDecodeSorted(bytes, k, v.size(), ~uint64_t{0} - 1, &out).ok());
  }
  // A full universe: every value of [0, 8).
  const std::vector<uint64_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<uint64_t> out;
  ASSERT_TRUE(RiceDecodeSorted(RiceEncodeSorted(all, 0), 0, 8, 8, &out).ok());
  EXPECT_EQ(out, all);
  // Nine values cannot fit below 8, whatever the bytes say.
  EXPECT_FALSE(RiceDecodeSorted(std::string(2, '\0'), 0, 9, 8, &out).ok());
}

TEST(RiceTest, RejectsBadParameterAndImpossibleCounts) {
  std::vector<uint64_t> out;
  Status s = RiceDecodeSorted("", 64, 0, 10, &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("rice parameter"), std::string::npos);
  // 16 M values with k = 20 from 10 bytes: refused before allocating.
  s = RiceDecodeSorted(std::string(10, '\0'), 20, uint64_t{16} << 20, uint64_t{1} << 50, &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("need at least"), std::string::npos);
  EXPECT_EQ(out.capacity(), 0u);
  // Huge count against huge k: no overflow in the size check.
  s = RiceDecodeSorted(std::string(10, '\0'), 63, ~uint64_t{0}, ~uint64_t{0}, &out);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
}

TEST(RiceTest, RejectsTruncationTrailingBitsAndGarbage) {
  const std::vector<uint64_t> v = RandomSortedSet(200, 1u << 30, 3);
  const int k = OptimalRiceParameter(v);
  const std::string bytes = RiceEncodeSorted(v, k);
  std::vector<uint64_t> out;
  for (size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_FALSE(RiceDecodeSorted(bytes.substr(0, len), k, v.size(), 1u << 30, &out).ok()) << len;
  }
  // Asking for one value fewer leaves a whole value unread.
  EXPECT_FALSE(RiceDecodeSorted(bytes, k, v.size() - 1, 1u << 30, &out).ok());
  // An extra byte after the stream.
  EXPECT_FALSE(RiceDecodeSorted(bytes + '\0', k, v.size(), 1u << 30, &out).ok());
  // Garbage: all ones (a run that never ends) and random bytes — errors or values, never a crash.
  EXPECT_FALSE(RiceDecodeSorted(std::string(4096, '\xff'), 0, 100, ~uint64_t{0}, &out).ok());
  std::mt19937_64 rng(5);
  int decoded_nonempty = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string garbage(rng() % 64, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    const int gk = static_cast<int>(rng() % 64);
    const uint64_t count = rng() % 40;
    const uint64_t bound = rng() >> (rng() % 64);
    Status s = RiceDecodeSorted(garbage, gk, count, bound, &out);
    if (s.ok()) {
      ASSERT_EQ(out.size(), count);
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_LT(out[i], bound);
        if (i > 0) {
          ASSERT_LT(out[i - 1], out[i]);
        }
      }
      if (count > 0) ++decoded_nonempty;
      // A successful decode is canonical: re-encoding gives the same bytes.
      EXPECT_EQ(RiceEncodeSorted(out, gk), garbage);
    }
  }
  EXPECT_GT(decoded_nonempty, 0);  // the loop did reach the canonical-encoding check
}

// RiceSortedReader, which RiceDecodeSorted is written with, gives the values one at a time and fails where the
// stream does, with the same status and nothing after it; a reader asked for more stays at its end.
TEST(RiceSortedReaderTest, YieldsTheValuesAndStopsAtTheFirstFault) {
  const std::vector<uint64_t> v = RandomSortedSet(300, 1u << 28, 11);
  const int k = OptimalRiceParameter(v);
  const std::string bytes = RiceEncodeSorted(v, k);
  RiceSortedReader reader(bytes, k, v.size(), 1u << 28);
  std::vector<uint64_t> got;
  uint64_t x = 0;
  EXPECT_EQ(reader.remaining(), v.size());
  while (reader.Next(&x)) got.push_back(x);
  EXPECT_TRUE(reader.status().ok()) << reader.status().ToString();
  EXPECT_EQ(got, v);
  EXPECT_EQ(reader.remaining(), 0u);
  EXPECT_FALSE(reader.Next(&x));
  EXPECT_TRUE(RiceSortedReader().status().ok());
  EXPECT_FALSE(RiceSortedReader().Next(&x));

  std::vector<uint64_t> out;
  auto expect_same_fault = [&](std::string_view b, uint64_t count, uint64_t bound) {
    const Status whole = RiceDecodeSorted(b, k, count, bound, &out);
    ASSERT_FALSE(whole.ok());
    RiceSortedReader r(b, k, count, bound);
    uint64_t read = 0;
    uint64_t y = 0;
    while (r.Next(&y)) {
      ASSERT_LT(read, count);
      ASSERT_EQ(y, v[read]) << "a value before the fault differs";
      ++read;
    }
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_EQ(r.status().message(), whole.message());
    EXPECT_FALSE(r.Next(&y));
  };
  for (size_t len = 0; len < bytes.size(); len += 7) expect_same_fault(std::string_view(bytes).substr(0, len), v.size(), 1u << 28);
  expect_same_fault(bytes, v.size() - 1, 1u << 28);        // a value left unread before the end
  expect_same_fault(bytes + '\x01', v.size(), 1u << 28);   // bits after the last value
  expect_same_fault(bytes, v.size(), v[200]);              // a value at the bound
  expect_same_fault(std::string(4, '\0'), 1000, 1u << 28);  // a count the bytes cannot hold
}

TEST(RiceTest, CostPerEntryNearEntropyForUniformSets) {
  // n values uniform in [0, U): about log2(U / n) + 1.5 bits each (the entropy is log2(U / n) + 1.44).
  const size_t n = 100000;
  const uint64_t universe = uint64_t{1} << 40;
  const std::vector<uint64_t> v = RandomSortedSet(n, universe, 9);
  const int k = OptimalRiceParameter(v);
  const double bits_per_entry = static_cast<double>(RiceSortedCostBits(v, k)) / n;
  const double log_ratio = std::log2(static_cast<double>(universe) / n);
  EXPECT_GT(bits_per_entry, log_ratio + 1.44 - 0.01);  // cannot beat the entropy (within sampling noise)
  EXPECT_LT(bits_per_entry, log_ratio + 1.6);
}

}  // namespace
}  // namespace urlguard
