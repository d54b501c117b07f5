// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/fingerprint_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "core/byte_io.h"
#include "tests/random_set.h"

namespace urlguard {
namespace {

using testing::RandomSet;

struct Built {
  std::vector<uint64_t> storage;  // 8-byte aligned copy of the body
  FingerprintSetView view;
};

Built Open(const std::string& body) {
  Built b;
  b.storage.resize((body.size() + 7) / 8);
  std::memcpy(b.storage.data(), body.data(), body.size());
  auto v = FingerprintSetView::Open(reinterpret_cast<const uint8_t*>(b.storage.data()), body.size());
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  if (v.ok()) b.view = *v;
  return b;
}

TEST(FingerprintSet, EmptySet) {
  Built b = Open(BuildFingerprintSet({}, 1000));
  EXPECT_EQ(b.view.size(), 0u);
  for (uint64_t fp = 0; fp < 1000; ++fp) EXPECT_FALSE(b.view.ContainsFingerprint(fp));
}

TEST(FingerprintSet, ContainsExactlyItsMembersSmallUniverse) {
  // Small universe: check every value, members and non-members (exact structure, no false positives on fps).
  for (uint64_t universe : {1ull, 2ull, 7ull, 100ull, 1000ull, 5000ull}) {
    for (uint64_t n : {1ull, 3ull, 50ull}) {
      if (n > universe) continue;
      auto fps = RandomSet(n, universe, universe * 31 + n);
      Built b = Open(BuildFingerprintSet(fps, universe));
      std::set<uint64_t> members(fps.begin(), fps.end());
      for (uint64_t fp = 0; fp < universe; ++fp) {
        ASSERT_EQ(b.view.ContainsFingerprint(fp), members.count(fp) == 1) << "U=" << universe << " fp=" << fp;
      }
      EXPECT_FALSE(b.view.ContainsFingerprint(universe));
    }
  }
}

TEST(FingerprintSet, DenseBucketsAndFullUniverse) {
  // Every value of the universe present: buckets are full, remainder width may be 0.
  std::vector<uint64_t> all(4096);
  for (uint64_t i = 0; i < all.size(); ++i) all[i] = i;
  Built b = Open(BuildFingerprintSet(all, all.size()));
  for (uint64_t fp = 0; fp < all.size(); ++fp) ASSERT_TRUE(b.view.ContainsFingerprint(fp));
  // Clustered values: many entries in one bucket, spanning several unary words.
  std::vector<uint64_t> cluster;
  for (uint64_t i = 0; i < 300; ++i) cluster.push_back((uint64_t{1} << 40) + i);
  Built c = Open(BuildFingerprintSet(cluster, uint64_t{1} << 41));
  for (uint64_t v : cluster) ASSERT_TRUE(c.view.ContainsFingerprint(v));
  EXPECT_FALSE(c.view.ContainsFingerprint((uint64_t{1} << 40) + 300));
  EXPECT_FALSE(c.view.ContainsFingerprint((uint64_t{1} << 40) - 1));
}

TEST(FingerprintSet, LargeRandomSetDecodeAndMembership) {
  const uint64_t n = 200000;
  const uint64_t universe = n * 20000 + 17;  // not a power of two
  auto fps = RandomSet(n, universe, 42);
  Built b = Open(BuildFingerprintSet(fps, universe));
  for (uint64_t v : fps) ASSERT_TRUE(b.view.ContainsFingerprint(v));
  std::vector<uint64_t> decoded;
  b.view.Decode(&decoded);
  EXPECT_EQ(decoded, fps);
  // Non-members: the fingerprint structure is exact, so no false positive at all on fingerprints.
  std::mt19937_64 rng(7);
  std::set<uint64_t> members(fps.begin(), fps.end());
  for (int i = 0; i < 200000; ++i) {
    uint64_t fp = rng() % universe;
    ASSERT_EQ(b.view.ContainsFingerprint(fp), members.count(fp) == 1);
  }
}

TEST(FingerprintSet, FalsePositiveRateOfKeysMatchesNOverU) {
  // Keys (64-bit hashes) not in the set hit with probability n/U. Fixed seed; bound = mean + 5 sigma.
  const uint64_t n = 100000;
  const uint64_t universe = n * 1000;  // eps = 1e-3
  std::mt19937_64 rng(99);
  std::vector<uint64_t> keys(n);
  for (auto& k : keys) k = rng();
  std::vector<uint64_t> fps;
  for (uint64_t k : keys) fps.push_back(MulHi64(k, universe));
  std::sort(fps.begin(), fps.end());
  fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
  Built b = Open(BuildFingerprintSet(fps, universe));
  for (uint64_t k : keys) ASSERT_TRUE(b.view.MayContain(k));
  const int probes = 1000000;
  int hits = 0;
  for (int i = 0; i < probes; ++i) hits += b.view.MayContain(rng());
  double expected = probes * static_cast<double>(fps.size()) / universe;  // 1000
  EXPECT_LT(hits, expected + 5 * std::sqrt(expected));
  EXPECT_GT(hits, expected - 5 * std::sqrt(expected));
}

TEST(FingerprintSet, SizeIsNearTheEliasFanoBound) {
  const uint64_t n = 100000;
  for (double log_ratio : {8.0, 13.0, 15.5, 20.0}) {
    uint64_t universe = static_cast<uint64_t>(n * std::pow(2.0, log_ratio));
    auto fps = RandomSet(n, universe, static_cast<uint64_t>(log_ratio * 10));
    std::string body = BuildFingerprintSet(fps, universe);
    double bits = body.size() * 8.0 / n;
    // Math, not timing: within [log2(U/n) + 1.44, log2(U/n) + 2.8] bits per entry.
    EXPECT_GT(bits, log_ratio + 1.44) << log_ratio;
    EXPECT_LT(bits, log_ratio + 2.8) << log_ratio;
    EXPECT_NEAR(FingerprintSetBitsPerEntry(n, universe), bits, 0.01);
  }
}

TEST(FingerprintSet, OpenRejectsMalformedBodies) {
  auto fps = RandomSet(1000, 1 << 24, 5);
  std::string body = BuildFingerprintSet(fps, 1 << 24);
  auto open = [](const std::string& b) {
    std::vector<uint64_t> storage((b.size() + 7) / 8 + 1);
    std::memcpy(storage.data(), b.data(), b.size());
    return FingerprintSetView::Open(reinterpret_cast<const uint8_t*>(storage.data()), b.size()).status();
  };
  ASSERT_TRUE(open(body).ok());
  EXPECT_EQ(open(body.substr(0, 20)).code(), StatusCode::kCorruption);            // short header
  EXPECT_EQ(open(body.substr(0, body.size() - 8)).code(), StatusCode::kCorruption);  // truncated
  EXPECT_EQ(open(body + std::string(8, '\0')).code(), StatusCode::kCorruption);      // extended
  std::string bad = body;
  StoreLE32(reinterpret_cast<uint8_t*>(&bad[24]), 64);  // remainder width
  EXPECT_EQ(open(bad).code(), StatusCode::kCorruption);
  bad = body;
  StoreLE64(reinterpret_cast<uint8_t*>(&bad[8]), 999);  // entry count
  EXPECT_EQ(open(bad).code(), StatusCode::kCorruption);
  bad = body;
  StoreLE32(reinterpret_cast<uint8_t*>(&bad[kFingerprintSetHeaderBytes + 4]), 0xffffffffu);  // sample
  EXPECT_EQ(open(bad).code(), StatusCode::kCorruption);
}

// Prefetch() guesses where a probe's remainders are without reading the unary words. Every hinted address
// must lie in the body, and the guess must cover the bucket's place (the line of its first remainder and the
// unary word that closes it) for nearly every probe, or a batch of probes waits on a second miss each.
TEST(FingerprintSet, PrefetchHintsInsideTheBodyAndCoverTheProbe) {
  for (const uint64_t n : {0ull, 1ull, 300ull, 200000ull}) {
    const uint64_t universe = std::max<uint64_t>(n, 1) * 8500;  // r = 13, about one entry per bucket
    auto fps = RandomSet(n, universe, 5);
    Built b = Open(BuildFingerprintSet(fps, universe));
    const auto* base = reinterpret_cast<const uint8_t*>(b.storage.data());
    const size_t size = b.storage.size() * 8;
    const uint32_t r = b.view.remainder_bits();
    const uint64_t samples = LoadLE64(base + 32);
    const uint8_t* unary = base + kFingerprintSetHeaderBytes + (samples * 4 + 7) / 8 * 8;
    const uint8_t* remainders = unary + LoadLE64(base + 40) * 8;
    auto line = [](const uint8_t* p) { return reinterpret_cast<uintptr_t>(p) / 64; };
    std::mt19937_64 rng(17);
    uint64_t covered = 0, probes = 0;
    for (int i = 0; i < 20000; ++i) {
      const uint64_t fp = i < 64 ? universe - 1 - static_cast<uint64_t>(i) : rng() % universe;
      const uint8_t* a[FingerprintSetView::kMaxPrefetchAddresses];
      const size_t k = b.view.PrefetchAddresses(fp, a);
      ASSERT_LE(k, FingerprintSetView::kMaxPrefetchAddresses);
      for (size_t j = 0; j < k; ++j) {
        ASSERT_GE(a[j], base);
        ASSERT_LT(a[j], base + size);
      }
      if (n < 1000 || k < 4) continue;
      // Where the probe really reads: the first entry of fp's bucket, and the unary bit closing the bucket.
      const uint64_t bucket = fp >> r;
      const uint64_t entry = static_cast<uint64_t>(
          std::lower_bound(fps.begin(), fps.end(), bucket << r) - fps.begin());
      const uint8_t* rem = remainders + entry * r / 8;
      const uint8_t* close = unary + (entry + bucket) / 64 * 8;
      const bool rem_ok = line(rem) == line(a[2]) || line(rem) == line(a[3]);
      const bool unary_ok = line(close) == line(a[0]) || line(close) == line(a[1]);
      ++probes;
      covered += rem_ok && unary_ok;
    }
    if (probes > 0) {
      EXPECT_GT(static_cast<double>(covered) / static_cast<double>(probes), 0.95) << "n " << n;
    }
    for (uint64_t fp : fps) {
      b.view.Prefetch(fp);
      ASSERT_TRUE(b.view.ContainsFingerprint(fp));
    }
  }
}

TEST(FingerprintSet, GarbageThatPassesOpenNeverReadsOutOfBounds) {
  // Scramble the unary and remainder words while keeping samples and popcount valid-looking: probes must stay
  // inside the buffer (ASan checks this build) and simply answer.
  auto fps = RandomSet(5000, 5000ull << 14, 11);
  std::string body = BuildFingerprintSet(fps, 5000ull << 14);
  std::mt19937_64 rng(3);
  size_t samples = LoadLE64(reinterpret_cast<const uint8_t*>(body.data()) + 32);
  size_t unary_start = kFingerprintSetHeaderBytes + (samples * 4 + 7) / 8 * 8;
  for (int round = 0; round < 20; ++round) {
    std::string b = body;
    // Swap random bit pairs in the unary stream (keeps the popcount).
    uint64_t unary_words = LoadLE64(reinterpret_cast<const uint8_t*>(b.data()) + 40);
    for (int i = 0; i < 200; ++i) {
      size_t x = unary_start + (rng() % (unary_words * 8));
      size_t y = unary_start + (rng() % (unary_words * 8));
      std::swap(b[x], b[y]);
    }
    Built bb;
    bb.storage.resize((b.size() + 7) / 8);
    std::memcpy(bb.storage.data(), b.data(), b.size());
    auto v = FingerprintSetView::Open(reinterpret_cast<const uint8_t*>(bb.storage.data()), b.size());
    if (!v.ok()) continue;
    for (int i = 0; i < 20000; ++i) {
      const uint64_t fp = rng() % (5000ull << 14);
      v->Prefetch(fp);
      (void)v->ContainsFingerprint(fp);
    }
  }
}

}  // namespace
}  // namespace urlguard
