// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// RollingWindowGuard: the verify API's abuse detector (docs/architecture.md §8). One blocked Bloom filter of client
// signatures per second over the last 60 seconds; a signature seen in more than `threshold` of the previous
// 59 seconds is throttled. It answers "how many distinct seconds of the last minute was this client active?"
// in constant memory whatever the number of clients, with no per-client state to evict: the price is that an
// unseen client can be counted in a second it was not active with the filters' false-positive rate p. A
// polite client is then throttled only if more than `threshold` of 59 independent false positives line up:
// for t = 30 at p = 0.001 that is C(59, 31) p^31 ~ 5e-77.
//
// Overload: a filter past its capacity degrades fast (sized for 10 000 at p = 0.001: 0.0092 at 1.5x, 0.037 at
// 2x, 0.18 at 3x, 0.97 at 10x, per BlockedBloomFalsePositiveRate), and at 10x every client would look like a
// hammer. So a bucket stops taking new signatures once it holds kRollingWindowOverloadFactor x capacity
// distinct ones (a signature already in it is not inserted again, so a hammering client does not fill it):
// the guard fails open for the surplus clients of that second (counted by unrecorded()) and never lets p
// exceed ~0.04, where wrongly throttling a client takes 31 false positives of 59 (1e-34) at t = 30. Keep
// `threshold` well above 59 p; at t = 5 the same bound is 3e-3.
//
// Time is whole seconds passed in by the caller (tests are deterministic; the server passes a monotonic
// clock). Bucket i holds second s where i = s mod 60 and remembers s; a bucket is cleared when a later second
// reuses it, so long gaps need no sweeping (a stale bucket is simply never counted). A request for a second
// older than the newest one seen (threads race, or a clock steps back) counts in its own second when that
// second is still inside the window (less than 60 s behind the newest); a step back of 60 s or more clears
// the whole window and starts over at the new time: the guard forgets (fails open) and never throttles
// anybody wrongly.
//
// Memory: 60 filters sized for `signatures_per_second` distinct signatures each at `fp_rate`: with the
// defaults (10 000 per second, p = 0.001) 60 x 19 KiB = 1.1 MiB. A check hashes the signature (SHA-256) and
// probes 59 filters, one cache line each: measured 2.4 us per Check with all 60 buckets at capacity, and a
// measured false-positive rate of 0.00101 per bucket (expected 0.00097).
//
// Requests per second. The window above counts SECONDS of activity, so a burst of thousands of requests in
// one second counts once. So the guard also counts requests of the current second in a count-min sketch
// (kRateSketchRows rows of kRateSketchWidth 32-bit counters, 1 MiB, cleared when the second changes; Cormode
// & Muthukrishnan 2005, with conservative update): a signature with more than `max_requests_per_second`
// requests in the current second is throttled with Retry-After 1. The sketch only over-counts: with N
// requests in a second each row adds about N / 65536 foreign requests, and the estimate is the minimum over
// 4 rows (at N = 100 000: under 2 extra requests). A request for a second older than the sketch's counts in
// the current sketch (threads race by a second at most).
//
// Memo. A busy client sends many requests per second, and each would probe the same 59 filters to the same
// answer: the previous seconds' buckets do not change while the second lasts. So the guard remembers, per
// key, the count of the previous 59 seconds (and which of them hit) for the current second, in a small
// direct-mapped table (kSeenMemoSlots entries). It is exact: every event that could change a remembered count
// (a bucket cleared for a new second, a request recorded in a second older than the newest, a window reset)
// bumps an epoch that invalidates the whole table (in practice once per second, when the new second's bucket
// is cleared). Measured in bench/verify_load_bench (callgrind, one client address): CheckKey went from 10.4 k to
// 0.9 k instructions per request. A client's first request in a second still probes all 59 filters.
//
// Thread safety: Check() may be called from any thread; mutex_ guards the buckets, their seconds and the
// newest second. Everything else is immutable after construction.
#ifndef URLGUARD_CORE_ROLLING_WINDOW_H_
#define URLGUARD_CORE_ROLLING_WINDOW_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/blocked_bloom.h"
#include "core/thread_annotations.h"

namespace urlguard {

// The window: the current second and the 59 before it.
constexpr int kRollingWindowSeconds = 60;
// Cap on the per-second capacity a guard may be sized for (about 110 MiB of filters at p = 0.001).
constexpr uint64_t kMaxRollingWindowSignaturesPerSecond = uint64_t{1} << 20;
// A bucket takes at most this many times its capacity of distinct signatures (see "Overload" above).
constexpr uint64_t kRollingWindowOverloadFactor = 2;
// The per-second request counter (see "Requests per second" above).
constexpr int kRateSketchRows = 4;
constexpr size_t kRateSketchWidth = size_t{1} << 16;  // a row index is 16 bits of the signature key
// Entries of the per-second memo (see "Memo" above); a power of two.
constexpr size_t kSeenMemoSlots = 1024;
static_assert(kRollingWindowSeconds <= 64, "SeenMemo::hit_ages holds one bit per age of the window");
static_assert((kSeenMemoSlots & (kSeenMemoSlots - 1)) == 0, "memo slots are indexed by a mask");

struct RollingWindowOptions {
  // Throttled when seen in more than this many of the previous 59 seconds. 0 throttles a client's second
  // active second; 59 or more never throttles.
  int threshold = 30;
  // Distinct signatures each one-second filter is sized for (1 .. kMaxRollingWindowSignaturesPerSecond).
  uint64_t signatures_per_second = 10000;
  // False-positive rate of each filter at that load (0 < fp_rate < 1).
  double fp_rate = 0.001;
  // Throttled for the rest of the second after this many requests in it; 0: no per-second limit (and no
  // sketch memory).
  uint32_t max_requests_per_second = 0;
  // Remember each key's count of the previous seconds for the rest of the second (see "Memo" above). Only
  // tests turn it off, to compare decisions with and without it.
  bool memoize = true;
};

struct RollingWindowDecision {
  bool throttled = false;
  // Of the previous 59 seconds, how many hold this signature (false positives included).
  int seen_seconds = 0;
  // Requests of this signature in the current second, this one included (an upper bound: the sketch only
  // over-counts); 0 when max_requests_per_second is 0.
  uint32_t requests_this_second = 0;
  // Throttled because of requests_this_second (Retry-After 1), possibly besides the window.
  bool rate_limited = false;
  // When throttled: seconds the client must stay silent before a request is allowed again (1..60), counting
  // this request. 0 when not throttled.
  int retry_after_seconds = 0;
};

class RollingWindowGuard {
 public:
  // Options outside the documented ranges are bugs (assert); callers validate user input first.
  explicit RollingWindowGuard(const RollingWindowOptions& options);

  RollingWindowGuard(const RollingWindowGuard&) = delete;
  RollingWindowGuard& operator=(const RollingWindowGuard&) = delete;

  // Records one request of `signature` (a client address key, never a client-chosen header) at
  // `now_seconds` and decides whether to throttle it. Every request is recorded, throttled ones too (a client that keeps hammering
  // stays throttled), except a new signature in a bucket already holding its overload cap (see the top).
  RollingWindowDecision Check(std::string_view signature, int64_t now_seconds);
  // The same for a precomputed key (SignatureKey).
  RollingWindowDecision CheckKey(uint64_t key, int64_t now_seconds);

  // The filter key of a signature: the first 8 bytes of its SHA-256, big-endian (DigestPrefix64).
  static uint64_t SignatureKey(std::string_view signature);

  int threshold() const { return threshold_; }
  // Bytes of filter memory (all 60 buckets).
  size_t memory_bytes() const;
  // The expected false-positive rate of one bucket holding `signatures_per_second` signatures.
  double expected_fp_rate() const { return expected_fp_rate_; }
  // Requests whose signature was not recorded because their second's bucket was at its overload cap.
  uint64_t unrecorded() const;

 private:
  const int threshold_;
  const double expected_fp_rate_;
  const uint64_t bucket_cap_;  // distinct signatures a bucket takes at most
  const uint32_t max_requests_per_second_;

  mutable Mutex mutex_;
  std::vector<BlockedBloom> buckets_ GUARDED_BY(mutex_);  // index: second mod 60
  // bucket_second_[b]: the second bucket b holds; bucket_used_[b] false: b held no second since a reset.
  std::array<int64_t, kRollingWindowSeconds> bucket_second_ GUARDED_BY(mutex_){};
  std::array<bool, kRollingWindowSeconds> bucket_used_ GUARDED_BY(mutex_){};
  int64_t newest_second_ GUARDED_BY(mutex_) = 0;
  bool started_ GUARDED_BY(mutex_) = false;
  uint64_t unrecorded_ GUARDED_BY(mutex_) = 0;
  // kRateSketchRows x kRateSketchWidth; empty when the limit is off.
  std::vector<uint32_t> rate_sketch_ GUARDED_BY(mutex_);
  int64_t rate_second_ GUARDED_BY(mutex_) = 0;  // the second rate_sketch_ counts

  struct SeenMemo {
    uint64_t key = 0;
    uint64_t epoch = 0;     // valid only while it equals memo_epoch_
    int64_t second = 0;     // the second the count was taken in
    uint64_t hit_ages = 0;  // bit a: second - a holds the key (a = 1..59)
    int seen = 0;           // the count of the previous 59 seconds (popcount of hit_ages)
  };
  const bool memoize_;
  std::vector<SeenMemo> memo_ GUARDED_BY(mutex_);  // kSeenMemoSlots, indexed by key; empty when off
  uint64_t memo_epoch_ GUARDED_BY(mutex_) = 1;     // entries start at epoch 0: invalid
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_ROLLING_WINDOW_H_
