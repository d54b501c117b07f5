// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/rolling_window.h"

#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace urlguard {
namespace {

RollingWindowOptions WithThreshold(int threshold, uint64_t signatures_per_second = 1000,
                                   double fp_rate = 0.001) {
  RollingWindowOptions o;
  o.threshold = threshold;
  o.signatures_per_second = signatures_per_second;
  o.fp_rate = fp_rate;
  return o;
}

TEST(RollingWindowGuard, HammeringClientIsThrottledAfterThresholdSeconds) {
  for (int threshold : {0, 1, 5, 30, 58}) {
    RollingWindowGuard guard(WithThreshold(threshold));
    const int64_t start = 1700000000;
    int64_t first_throttled = -1;
    for (int64_t t = start; t < start + 120 && first_throttled < 0; ++t) {
      for (int i = 0; i < 3; ++i) {  // three requests per second
        RollingWindowDecision d = guard.Check("203.0.113.7\nhammer/1.0", t);
        EXPECT_EQ(d.seen_seconds, std::min<int64_t>(t - start, 59)) << "t=" << t - start;
        if (d.throttled && first_throttled < 0) first_throttled = t;
      }
    }
    // Active in seconds start .. start + threshold, throttled in the next one.
    EXPECT_EQ(first_throttled, start + threshold + 1) << "threshold " << threshold;
  }
  // 59 and more: never.
  RollingWindowGuard never(WithThreshold(59));
  for (int64_t t = 0; t < 200; ++t) EXPECT_FALSE(never.Check("x", t).throttled);
}

TEST(RollingWindowGuard, PoliteClientIsNeverThrottled) {
  // One request every 30 s: at most one earlier second inside any 59-second window.
  RollingWindowGuard guard(WithThreshold(1));
  for (int64_t t = 0; t < 24 * 3600; t += 30) {
    RollingWindowDecision d = guard.Check("198.51.100.2\npolite/2.0", t);
    ASSERT_FALSE(d.throttled) << "t=" << t;
    EXPECT_EQ(d.seen_seconds, t == 0 ? 0 : 1);
  }
  // The same pattern is caught by a threshold of 0: the test can fail.
  RollingWindowGuard strict(WithThreshold(0));
  EXPECT_FALSE(strict.Check("198.51.100.2\npolite/2.0", 0).throttled);
  EXPECT_TRUE(strict.Check("198.51.100.2\npolite/2.0", 30).throttled);
}

TEST(RollingWindowGuard, OtherClientsAreUnaffected) {
  RollingWindowGuard guard(WithThreshold(5));
  for (int64_t t = 0; t < 20; ++t) {
    for (int i = 0; i < 50; ++i) guard.Check("203.0.113.7\nhammer/1.0", t);
  }
  EXPECT_TRUE(guard.Check("203.0.113.7\nhammer/1.0", 20).throttled);
  // Same address, another User-Agent; another address, same User-Agent: separate signatures.
  for (int64_t t = 20; t < 23; ++t) {
    RollingWindowDecision a = guard.Check("203.0.113.7\nbrowser/3.0", t);
    RollingWindowDecision b = guard.Check("203.0.113.8\nhammer/1.0", t);
    EXPECT_FALSE(a.throttled);
    EXPECT_FALSE(b.throttled);
    EXPECT_EQ(a.seen_seconds, t - 20);
    EXPECT_EQ(b.seen_seconds, t - 20);
  }
  EXPECT_TRUE(guard.Check("203.0.113.7\nhammer/1.0", 23).throttled);
}

// Replays a continuous hammer at seconds [0, last] into a fresh guard.
void Hammer(RollingWindowGuard& guard, int64_t last) {
  for (int64_t t = 0; t <= last; ++t) guard.Check("hammer", t);
}

TEST(RollingWindowGuard, AllowedAgainAfterSilenceAndRetryAfterIsExact) {
  const int threshold = 30;
  RollingWindowGuard guard(WithThreshold(threshold));
  Hammer(guard, 98);
  RollingWindowDecision last = guard.Check("hammer", 99);
  ASSERT_TRUE(last.throttled);
  // Every second of the window holds the client: a request d seconds later sees 60 - d of them.
  EXPECT_EQ(last.retry_after_seconds, kRollingWindowSeconds - threshold);

  // After 60 s of silence everything is forgotten.
  RollingWindowDecision later = guard.Check("hammer", 99 + 60);
  EXPECT_FALSE(later.throttled);
  EXPECT_EQ(later.seen_seconds, 0);

  // Exactly at Retry-After the client is allowed, one second earlier it is not.
  for (int64_t delay : {int64_t{last.retry_after_seconds}, int64_t{last.retry_after_seconds} - 1}) {
    RollingWindowGuard replay(WithThreshold(threshold));
    Hammer(replay, 99);
    EXPECT_EQ(replay.Check("hammer", 99 + delay).throttled, delay < last.retry_after_seconds) << delay;
  }

  // A client active in only some seconds: its Retry-After follows the seconds it was really seen.
  RollingWindowGuard sparse(WithThreshold(3));
  for (int64_t t : {0, 10, 20, 30}) EXPECT_FALSE(sparse.Check("s", t).throttled);
  RollingWindowDecision d = sparse.Check("s", 40);  // seen at 0, 10, 20, 30: 4 > 3
  ASSERT_TRUE(d.throttled);
  // A request at 40 + d sees the seconds in [d - 19, 39 + d]: {10, 20, 30, 40} (4) up to d = 29, {20, 30, 40}
  // from d = 30.
  EXPECT_EQ(d.retry_after_seconds, 30);
  RollingWindowGuard sparse_replay(WithThreshold(3));
  for (int64_t t : {0, 10, 20, 30, 40}) sparse_replay.Check("s", t);
  EXPECT_FALSE(sparse_replay.Check("s", 70).throttled);
  RollingWindowGuard sparse_early(WithThreshold(3));
  for (int64_t t : {0, 10, 20, 30, 40}) sparse_early.Check("s", t);
  EXPECT_TRUE(sparse_early.Check("s", 69).throttled);
}

TEST(RollingWindowGuard, LongGapsAndClockSteps) {
  RollingWindowGuard guard(WithThreshold(10));
  // Negative seconds and the wrap through zero work like any other.
  for (int64_t t = -30; t <= 10; ++t) guard.Check("c", t);
  EXPECT_TRUE(guard.Check("c", 11).throttled);

  // A long gap: stale buckets are never counted, whatever second maps to them.
  RollingWindowDecision d = guard.Check("c", 11 + 60 * 1000);
  EXPECT_FALSE(d.throttled);
  EXPECT_EQ(d.seen_seconds, 0);

  // A late request (threads race, small clock step back) counts in its own second.
  RollingWindowGuard late(WithThreshold(30));
  for (int64_t t = 2000; t <= 2020; ++t) late.Check("c", t);
  d = late.Check("c", 2010);
  EXPECT_EQ(d.seen_seconds, 10);  // 2000 .. 2009
  d = late.Check("c", 2021);
  EXPECT_EQ(d.seen_seconds, 21);  // 2000 .. 2020, the late request did not add a second

  // A step back of a whole window or more starts over: no history, nobody throttled.
  RollingWindowGuard stepped(WithThreshold(5));
  for (int64_t t = 5000; t <= 5010; ++t) stepped.Check("c", t);
  ASSERT_TRUE(stepped.Check("c", 5011).throttled);
  d = stepped.Check("c", 5011 - 60);
  EXPECT_FALSE(d.throttled);
  EXPECT_EQ(d.seen_seconds, 0);
  // ... and when the clock comes back, the old seconds are gone too.
  d = stepped.Check("c", 5012);
  EXPECT_EQ(d.seen_seconds, 0);
  // A step back of 59 s is still inside the window: no reset.
  RollingWindowGuard small_step(WithThreshold(5));
  for (int64_t t = 100; t <= 110; ++t) small_step.Check("c", t);
  EXPECT_EQ(small_step.Check("c", 110 - 59).seen_seconds, 0);  // 51: nothing before it
  EXPECT_EQ(small_step.Check("c", 111).seen_seconds, 11);      // 100 .. 110 kept; 51 is outside [52, 110]
}

TEST(RollingWindowGuard, FalsePositiveRateAtCapacityStaysLow) {
  const RollingWindowOptions options = WithThreshold(30, 10000, 0.001);
  RollingWindowGuard guard(options);
  EXPECT_LE(guard.expected_fp_rate(), 0.001);
  EXPECT_LT(guard.memory_bytes(), size_t{2} << 20);  // the header's 1.1 MiB

  std::mt19937_64 rng(424242);
  auto random_signature = [&] { return std::to_string(rng()) + "\nua/" + std::to_string(rng() % 100); };
  std::vector<std::string> clients(options.signatures_per_second);
  for (auto& c : clients) {
    c = random_signature();
    guard.Check(c, 0);
  }
  // No false negatives: every client of second 0 is seen from second 1.
  for (const auto& c : clients) ASSERT_EQ(guard.Check(c, 1).seen_seconds, 1);
  // Fresh signatures at second 2: seconds 0 and 1 each hold 10 000 signatures; any hit is a false positive.
  const int probes = 200000;
  int false_hits = 0;
  for (int i = 0; i < probes; ++i) false_hits += guard.Check(random_signature(), 2).seen_seconds;
  const double trials = 2.0 * probes;
  const double expected = guard.expected_fp_rate() * trials;
  // Binomial: mean <= 400, standard deviation <= 20. Five standard deviations above the sizing target.
  EXPECT_LE(false_hits, expected + 5 * std::sqrt(expected) + 1) << "measured rate " << false_hits / trials;
  EXPECT_GT(false_hits, 0) << "a working Bloom filter at capacity has some false positives";
}

TEST(RollingWindowGuard, OverloadedSecondFailsOpenInsteadOfFlaggingEveryone) {
  const RollingWindowOptions options = WithThreshold(30, 100, 0.001);
  RollingWindowGuard guard(options);
  // A hammer repeating one signature does not fill the bucket...
  for (int i = 0; i < 10000; ++i) guard.Check("hammer", 0);
  for (int i = 0; i < 150; ++i) guard.Check("client-" + std::to_string(i), 0);
  EXPECT_EQ(guard.unrecorded(), 0u);
  // ... but 10x its capacity of distinct signatures does: the surplus is not recorded.
  for (int i = 150; i < 1000; ++i) guard.Check("client-" + std::to_string(i), 0);
  const uint64_t cap = options.signatures_per_second * kRollingWindowOverloadFactor;
  EXPECT_LE(guard.unrecorded(), 1000 + 1 - cap);
  EXPECT_GE(guard.unrecorded(),
            1000 + 1 - cap - 50);  // a few new ones look present already (false positives)
  // The bucket's false-positive rate stays at its 2x-capacity value instead of approaching 1.
  const BloomSizing sizing = SizeBlockedBloomForTarget(options.signatures_per_second, options.fp_rate);
  const double bound = BlockedBloomFalsePositiveRate(cap, sizing.blocks, sizing.hashes);
  const int probes = 20000;
  int hits = 0;
  for (int i = 0; i < probes; ++i) hits += guard.Check("probe-" + std::to_string(i), 1).seen_seconds;
  EXPECT_LE(hits, bound * probes + 5 * std::sqrt(bound * probes)) << "rate " << double(hits) / probes;
  EXPECT_LT(bound, 0.05);
}

// The memo (see the header) must never change a decision: the same requests through a guard with and without
// it, with clients that repeat within a second, requests for older seconds (threads racing), and clock steps.
TEST(RollingWindowGuard, MemoNeverChangesADecision) {
  for (const uint32_t rate : {0u, 50u}) {
    RollingWindowOptions options = WithThreshold(3);
    options.signatures_per_second = 64;  // small filters: false positives and the overload cap both occur
    options.max_requests_per_second = rate;
    RollingWindowOptions plain_options = options;
    plain_options.memoize = false;
    RollingWindowGuard memo(options), plain(plain_options);
    std::mt19937_64 rng(2026);
    int64_t now = 1000;
    int throttled = 0;
    for (int i = 0; i < 200000; ++i) {
      const uint64_t r = rng();
      if (r % 100 == 0) ++now;                                // time passes
      if (r % 100000 == 1) now += 61 + static_cast<int64_t>(rng() % 200);  // a long gap
      if (r % 100000 == 2) now -= 70;                         // a step back of more than the window
      int64_t at = now;
      if (r % 17 == 3) at -= static_cast<int64_t>(rng() % 5);  // a racing request for a recent second
      const uint64_t key = (r >> 20) % 300;                    // 300 clients, so keys repeat within seconds
      const RollingWindowDecision a = memo.CheckKey(key * 0x9e3779b97f4a7c15ULL, at);
      const RollingWindowDecision b = plain.CheckKey(key * 0x9e3779b97f4a7c15ULL, at);
      ASSERT_EQ(a.throttled, b.throttled) << i;
      ASSERT_EQ(a.seen_seconds, b.seen_seconds) << i;
      ASSERT_EQ(a.retry_after_seconds, b.retry_after_seconds) << i;
      ASSERT_EQ(a.requests_this_second, b.requests_this_second) << i;
      throttled += a.throttled ? 1 : 0;
    }
    EXPECT_EQ(memo.unrecorded(), plain.unrecorded());
    EXPECT_GT(throttled, 0);  // the sequence exercises the throttled path (retry_after from the memo)
  }
}

TEST(RollingWindowGuard, ConcurrentClientsEachSeeTheirOwnHistory) {
  RollingWindowGuard guard(WithThreshold(30));
  constexpr int kThreads = 4;
  std::barrier sync(kThreads);
  std::vector<int> first_throttled(kThreads, -1);
  std::vector<int> wrong_counts(kThreads, 0);
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id) {
    threads.emplace_back([&, id] {
      const std::string signature = "10.0.0." + std::to_string(id) + "\nworker";
      for (int t = 0; t < 70; ++t) {
        sync.arrive_and_wait();  // all threads in the same second
        for (int i = 0; i < 20; ++i) {
          RollingWindowDecision d = guard.Check(signature, t);
          if (d.seen_seconds != std::min(t, 59)) ++wrong_counts[id];
          if (d.throttled && first_throttled[id] < 0) first_throttled[id] = t;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int id = 0; id < kThreads; ++id) {
    EXPECT_EQ(wrong_counts[id], 0) << id;
    EXPECT_EQ(first_throttled[id], 31) << id;
  }
}

}  // namespace
}  // namespace urlguard

namespace urlguard {
namespace {

TEST(RollingWindowRateTest, ThrottlesABurstWithinOneSecondAndForgetsItTheNextSecond) {
  RollingWindowOptions options = WithThreshold(30);
  options.max_requests_per_second = 100;
  RollingWindowGuard guard(options);
  for (int i = 1; i <= 100; ++i) {
    const RollingWindowDecision d = guard.Check("4:burst", 500);
    ASSERT_FALSE(d.throttled) << i;
    EXPECT_EQ(d.requests_this_second, static_cast<uint32_t>(i));
  }
  RollingWindowDecision d = guard.Check("4:burst", 500);
  EXPECT_TRUE(d.throttled);
  EXPECT_TRUE(d.rate_limited);
  EXPECT_EQ(d.retry_after_seconds, 1);
  // Another client in the same second is not affected; the burster is allowed again the next second.
  EXPECT_FALSE(guard.Check("4:other", 500).throttled);
  d = guard.Check("4:burst", 501);
  EXPECT_FALSE(d.throttled);
  EXPECT_EQ(d.requests_this_second, 1u);
}

TEST(RollingWindowRateTest, OffByDefault) {
  RollingWindowGuard guard(WithThreshold(30));  // and no max_requests_per_second
  for (int i = 0; i < 1000; ++i) ASSERT_FALSE(guard.Check("4:x", 7).throttled);
}

}  // namespace
}  // namespace urlguard
