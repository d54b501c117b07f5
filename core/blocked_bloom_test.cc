// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/blocked_bloom.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace urlguard {
namespace {

TEST(BlockedBloom, ClassicSizingFormulas) {
  // m = -n ln p / (ln 2)^2 = 9.585 bits per key at p = 1%; k = (m/n) ln 2 = 6.64 -> 7.
  BloomSizing s = SizeBlockedBloom(1000000, 0.01);
  EXPECT_EQ(s.hashes, 7u);
  EXPECT_NEAR(s.bits_per_entry, 9.585, 0.01);
  EXPECT_GT(s.expected_fp_rate, 0.01);  // blocking costs a little
  EXPECT_LT(s.expected_fp_rate, 0.013);
}

TEST(BlockedBloom, ExpectedRateStaysAProbabilityUnderHeavyLoad) {
  // 744 and 800 keys per block once gave 1.29 and 0 (exp(-lambda) underflow): must be in [0, 1] and rising.
  double prev = 0;
  for (uint64_t per_block : {1ull, 50ull, 200ull, 512ull, 744ull, 800ull, 5000ull}) {
    double r = BlockedBloomFalsePositiveRate(per_block * 100, 100, 7);
    EXPECT_GE(r, prev) << per_block;
    EXPECT_LE(r, 1.0) << per_block;
    prev = r;
  }
  EXPECT_GT(prev, 0.99);
}

TEST(BlockedBloom, SizingForTargetIncludesTheBlockingPenalty) {
  for (double p : {0.01, 0.001, 1e-4}) {
    BloomSizing s = SizeBlockedBloomForTarget(1000000, p);
    EXPECT_LE(s.expected_fp_rate, p);
    EXPECT_GT(s.bits_per_entry, SizeBlockedBloom(1000000, p).bits_per_entry);  // pays for the penalty
    EXPECT_LT(s.bits_per_entry, SizeBlockedBloom(1000000, p).bits_per_entry * 1.4);
  }
}

TEST(BlockedBloom, NoFalseNegativesAndMeasuredRateNearExpected) {
  const uint64_t n = 200000;
  BlockedBloom f = BlockedBloom::ForCapacity(n, 0.001);
  std::mt19937_64 rng(1234);
  std::vector<uint64_t> keys(n);
  for (auto& k : keys) {
    k = rng();
    f.Insert(k);
  }
  for (uint64_t k : keys) ASSERT_TRUE(f.MayContain(k));
  const int probes = 2000000;
  int fp = 0;
  for (int i = 0; i < probes; ++i) fp += f.MayContain(rng());
  double expected = BlockedBloomFalsePositiveRate(n, f.blocks(), f.hashes()) * probes;
  EXPECT_LT(fp, expected + 5 * std::sqrt(expected));
  EXPECT_GT(fp, expected - 5 * std::sqrt(expected));
}

TEST(BlockedBloom, SerializeRoundTripAndViewAgree) {
  BlockedBloom f(100, 6);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 500; ++i) f.Insert(rng());
  std::string body = f.Serialize();
  auto g = BlockedBloom::Deserialize(body);
  ASSERT_TRUE(g.ok());
  std::vector<uint64_t> aligned((body.size() + 7) / 8);
  std::memcpy(aligned.data(), body.data(), body.size());
  auto v = BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(aligned.data()), body.size());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->inserted(), 500u);
  std::mt19937_64 probe(6);
  for (int i = 0; i < 10000; ++i) {
    uint64_t k = probe();
    ASSERT_EQ(f.MayContain(k), g->MayContain(k));
    ASSERT_EQ(f.MayContain(k), v->MayContain(k));
  }
}

TEST(BlockedBloom, OpenRejectsMalformedBodies) {
  std::string body = BlockedBloom(4, 3).Serialize();
  EXPECT_FALSE(BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(body.data()), 10).ok());
  EXPECT_FALSE(BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(body.data()), body.size() - 1).ok());
  std::string bad = body;
  bad[8] = 0;  // zero hashes
  EXPECT_FALSE(BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(bad.data()), bad.size()).ok());
  bad = body;
  bad[8] = 17;  // over kMaxBloomHashes
  EXPECT_FALSE(BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(bad.data()), bad.size()).ok());
  EXPECT_FALSE(BlockedBloom::Deserialize(body.substr(0, 40)).ok());
}

TEST(BlockedBloom, ClearForgetsEverything) {
  BlockedBloom f(10, 4);
  f.Insert(42);
  EXPECT_TRUE(f.MayContain(42));
  f.Clear();
  EXPECT_FALSE(f.MayContain(42));
  EXPECT_EQ(f.inserted(), 0u);
}

}  // namespace
}  // namespace urlguard
