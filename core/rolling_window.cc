// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/rolling_window.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

#include "core/sha256.h"

namespace urlguard {
namespace {

// The bucket of second `s`: s mod 60, also for negative seconds.
int BucketOf(int64_t s) {
  const int64_t m = s % kRollingWindowSeconds;
  return static_cast<int>(m < 0 ? m + kRollingWindowSeconds : m);
}

BloomSizing SizingFor(const RollingWindowOptions& options) {
  assert(options.threshold >= 0);
  assert(options.signatures_per_second >= 1 &&
         options.signatures_per_second <= kMaxRollingWindowSignaturesPerSecond);
  assert(options.fp_rate > 0 && options.fp_rate < 1);
  return SizeBlockedBloomForTarget(options.signatures_per_second, options.fp_rate);
}

}  // namespace

RollingWindowGuard::RollingWindowGuard(const RollingWindowOptions& options)
    : threshold_(options.threshold),
      expected_fp_rate_(SizingFor(options).expected_fp_rate),
      bucket_cap_(options.signatures_per_second * kRollingWindowOverloadFactor),
      max_requests_per_second_(options.max_requests_per_second),
      memoize_(options.memoize) {
  if (memoize_) memo_.resize(kSeenMemoSlots);
  if (max_requests_per_second_ > 0) rate_sketch_.assign(kRateSketchRows * kRateSketchWidth, 0);
  const BloomSizing sizing = SizingFor(options);
  buckets_.reserve(kRollingWindowSeconds);
  for (int i = 0; i < kRollingWindowSeconds; ++i) buckets_.emplace_back(sizing.blocks, sizing.hashes);
}

uint64_t RollingWindowGuard::SignatureKey(std::string_view signature) {
  return DigestPrefix64(Sha256(signature));
}

size_t RollingWindowGuard::memory_bytes() const {
  MutexLock lock(&mutex_);
  size_t total = 0;
  for (const BlockedBloom& b : buckets_) total += b.byte_size();
  return total;
}

uint64_t RollingWindowGuard::unrecorded() const {
  MutexLock lock(&mutex_);
  return unrecorded_;
}

RollingWindowDecision RollingWindowGuard::Check(std::string_view signature, int64_t now_seconds) {
  return CheckKey(SignatureKey(signature), now_seconds);
}

RollingWindowDecision RollingWindowGuard::CheckKey(uint64_t key, int64_t now_seconds) {
  MutexLock lock(&mutex_);

  // Advance time. A step back of a whole window or more starts over (see the header).
  if (!started_ || now_seconds <= newest_second_ - kRollingWindowSeconds) {
    ++memo_epoch_;
    bucket_used_.fill(false);
    newest_second_ = now_seconds;
    started_ = true;
  } else if (now_seconds > newest_second_) {
    newest_second_ = now_seconds;
  }
  // The current second's bucket: reuse it when it already holds this second, clear it otherwise. It can only
  // hold an older second here (a newer one would be 60 s or more ahead of now, which reset the window above).
  const int current = BucketOf(now_seconds);
  if (!bucket_used_[current] || bucket_second_[current] != now_seconds) {
    assert(!bucket_used_[current] || bucket_second_[current] < now_seconds);
    ++memo_epoch_;  // a bucket changes its second: counts taken before may change
    buckets_[current].Clear();
    bucket_second_[current] = now_seconds;
    bucket_used_[current] = true;
  }

  // Count the previous 59 seconds holding the key. hit_at_age[a]: second now - a holds it (a = 0 is this
  // request's own second).
  std::array<bool, kRollingWindowSeconds> hit_at_age{};
  int seen = 0;
  SeenMemo* memo = memoize_ ? &memo_[key & (kSeenMemoSlots - 1)] : nullptr;
  if (memo != nullptr && memo->epoch == memo_epoch_ && memo->key == key && memo->second == now_seconds) {
    seen = memo->seen;
    for (int age = 1; age < kRollingWindowSeconds; ++age) hit_at_age[age] = (memo->hit_ages >> age) & 1;
  } else {
    uint64_t hit_ages = 0;
    for (int age = 1; age < kRollingWindowSeconds; ++age) {
      const int64_t second = now_seconds - age;
      const int b = BucketOf(second);
      if (bucket_used_[b] && bucket_second_[b] == second && buckets_[b].MayContain(key)) {
        hit_at_age[age] = true;
        hit_ages |= uint64_t{1} << age;
        ++seen;
      }
    }
    if (memo != nullptr) *memo = {key, memo_epoch_, now_seconds, hit_ages, seen};
  }
  // Insert only new signatures, so that inserted() counts distinct ones (a hammer does not fill the bucket).
  BlockedBloom& bucket = buckets_[current];
  if (!bucket.MayContain(key)) {
    if (bucket.inserted() < bucket_cap_) {
      bucket.Insert(key);
      // A second older than the newest changed: counts remembered in later seconds may include it.
      if (now_seconds < newest_second_) ++memo_epoch_;
    } else {
      ++unrecorded_;  // fail open for this client in this second
    }
  }
  hit_at_age[0] = true;

  RollingWindowDecision decision;
  decision.seen_seconds = seen;
  decision.throttled = seen > threshold_;
  if (!rate_sketch_.empty()) {
    if (now_seconds > rate_second_) {
      std::fill(rate_sketch_.begin(), rate_sketch_.end(), 0);
      rate_second_ = now_seconds;
    }
    // Conservative update: raise only the counters at the current minimum.
    uint32_t* cells[kRateSketchRows];
    uint32_t estimate = UINT32_MAX;
    for (int r = 0; r < kRateSketchRows; ++r) {
      const size_t column = static_cast<size_t>((key >> (16 * r)) & (kRateSketchWidth - 1));
      cells[r] = &rate_sketch_[static_cast<size_t>(r) * kRateSketchWidth + column];
      estimate = std::min(estimate, *cells[r]);
    }
    if (estimate < UINT32_MAX) ++estimate;
    for (uint32_t* cell : cells) *cell = std::max(*cell, estimate);
    decision.requests_this_second = estimate;
    decision.rate_limited = estimate > max_requests_per_second_;
  }
  if (decision.rate_limited && !decision.throttled) {
    decision.throttled = true;
    decision.retry_after_seconds = 1;
  } else if (decision.throttled) {
    // If the client stays silent, a request d seconds from now sees the seconds of age <= 59 - d (ages
    // relative to now). Find the smallest d whose count is within the threshold; d = 60 always is (count 0).
    std::array<int, kRollingWindowSeconds> hits_up_to_age{};
    int running = 0;
    for (int age = 0; age < kRollingWindowSeconds; ++age) {
      running += hit_at_age[age] ? 1 : 0;
      hits_up_to_age[age] = running;
    }
    int d = 1;
    while (d < kRollingWindowSeconds && hits_up_to_age[kRollingWindowSeconds - 1 - d] > threshold_) ++d;
    decision.retry_after_seconds = d;
  }
  return decision;
}

}  // namespace urlguard
