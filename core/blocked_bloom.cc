// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/blocked_bloom.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "core/byte_io.h"

namespace urlguard {
namespace internal {

// splitmix64's finalizer: a bijection whose output bits each depend on all input bits.
static uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// In-block bit positions: k independent 9-bit values, seven from each 64-bit mix of the key. (Double hashing,
// bit_i = a + i*b mod 512, was measured here at 1.8x the expected false-positive rate for k = 10: 512 positions
// leave too little room for its correlations.)
template <typename Fn>
inline void ForEachBit(uint64_t key, uint32_t hashes, Fn&& fn) {
  uint64_t m = 0;
  for (uint32_t i = 0; i < hashes; ++i) {
    if (i % 7 == 0) m = Mix(key + 0x9e3779b97f4a7c15ull * (i / 7 + 1));
    if (!fn(static_cast<uint32_t>(m & 511))) return;
    m >>= 9;
  }
}

bool BloomBlockHas(const uint8_t* block, uint64_t key, uint32_t hashes) {
  bool all = true;
  ForEachBit(key, hashes, [&](uint32_t bit) {
    all = block[bit >> 3] & (1u << (bit & 7));
    return all;
  });
  return all;
}

void BloomBlockSet(uint8_t* block, uint64_t key, uint32_t hashes) {
  ForEachBit(key, hashes, [&](uint32_t bit) {
    block[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
    return true;
  });
}

}  // namespace internal

double BlockedBloomFalsePositiveRate(uint64_t n, uint64_t blocks, uint32_t hashes) {
  if (blocks == 0) return 1.0;
  // Keys per block ~ Poisson(lambda); inside a block with j keys the classic formula holds with m = 512. The
  // Poisson terms are computed in log space (exp(-lambda) underflows for heavily loaded filters), over
  // lambda +- 12 standard deviations.
  const double lambda = static_cast<double>(n) / static_cast<double>(blocks);
  if (lambda == 0) return 0.0;
  const double spread = 12 * std::sqrt(lambda) + 20;
  const int lo = static_cast<int>(std::max(0.0, lambda - spread));
  const int hi = static_cast<int>(lambda + spread);
  double total = 0;
  for (int j = lo; j <= hi; ++j) {
    double log_p = -lambda + j * std::log(lambda) - std::lgamma(j + 1.0);
    double inner = std::pow(1.0 - std::exp(-static_cast<double>(hashes) * j / 512.0), hashes);
    total += std::exp(log_p) * inner;
  }
  return std::min(1.0, total);
}

BloomSizing SizeBlockedBloom(uint64_t n, double p) {
  n = std::max<uint64_t>(n, 1);
  const double ln2 = std::log(2.0);
  double m = -static_cast<double>(n) * std::log(p) / (ln2 * ln2);  // Spec (classic): m = -n ln p / (ln 2)^2
  double k = m / static_cast<double>(n) * ln2;                     // Spec (classic): k = (m/n) ln 2
  BloomSizing s;
  s.hashes = static_cast<uint32_t>(std::clamp(std::lround(k), 1l, static_cast<long>(kMaxBloomHashes)));
  s.blocks = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(m / 512.0)));
  s.bits_per_entry = static_cast<double>(s.blocks * 512) / static_cast<double>(n);
  s.expected_fp_rate = BlockedBloomFalsePositiveRate(n, s.blocks, s.hashes);
  return s;
}

BloomSizing SizeBlockedBloomForTarget(uint64_t n, double p) {
  n = std::max<uint64_t>(n, 1);
  BloomSizing base = SizeBlockedBloom(n, p);
  BloomSizing best = base;
  best.blocks = 0;
  for (uint32_t k = base.hashes > 2 ? base.hashes - 2 : 1; k <= std::min(kMaxBloomHashes, base.hashes + 3); ++k) {
    // Grow the block count by 1% steps until the blocked rate meets the target.
    uint64_t blocks = base.blocks;
    for (int step = 0; step < 200; ++step) {
      double rate = BlockedBloomFalsePositiveRate(n, blocks, k);
      if (rate <= p) {
        if (best.blocks == 0 || blocks < best.blocks) {
          best.blocks = blocks;
          best.hashes = k;
          best.expected_fp_rate = rate;
        }
        break;
      }
      blocks = std::max(blocks + 1, blocks + blocks / 100);
    }
  }
  if (best.blocks == 0) return base;  // target unreachable within the search: fall back to classic sizing
  best.bits_per_entry = static_cast<double>(best.blocks * 512) / static_cast<double>(n);
  return best;
}

Result<BlockedBloomView> BlockedBloomView::Open(const uint8_t* data, size_t size) {
  if (size < kBloomHeaderBytes) return Status::Corruption("bloom: body too short");
  BlockedBloomView v;
  v.blocks_ = LoadLE64(data);
  v.hashes_ = LoadLE32(data + 8);
  v.inserted_ = LoadLE64(data + 16);
  if (v.blocks_ == 0 || v.blocks_ > kMaxBloomBlocks) return Status::Corruption("bloom: bad block count");
  if (v.hashes_ == 0 || v.hashes_ > kMaxBloomHashes) return Status::Corruption("bloom: bad hash count");
  if (size != kBloomHeaderBytes + v.blocks_ * kBloomBlockBytes) {
    return Status::Corruption("bloom: body is " + std::to_string(size) + " bytes, header implies " +
                              std::to_string(kBloomHeaderBytes + v.blocks_ * kBloomBlockBytes));
  }
  v.bits_ = data + kBloomHeaderBytes;
  return v;
}

bool BlockedBloomView::MayContain(uint64_t key) const {
  const uint8_t* block = bits_ + MulHi64(key, blocks_) * kBloomBlockBytes;
  return internal::BloomBlockHas(block, key, hashes_);
}

void BlockedBloomView::Prefetch(uint64_t key) const {
  __builtin_prefetch(bits_ + MulHi64(key, blocks_) * kBloomBlockBytes);
}

BlockedBloom::BlockedBloom(uint64_t blocks, uint32_t hashes)
    : blocks_(blocks), hashes_(hashes), bits_(blocks * kBloomBlockBytes, 0) {
  assert(blocks >= 1 && blocks <= kMaxBloomBlocks);
  assert(hashes >= 1 && hashes <= kMaxBloomHashes);
}

BlockedBloom BlockedBloom::ForCapacity(uint64_t n, double p) {
  BloomSizing s = SizeBlockedBloomForTarget(n, p);
  return BlockedBloom(s.blocks, s.hashes);
}

void BlockedBloom::Insert(uint64_t key) {
  uint8_t* block = bits_.data() + MulHi64(key, blocks_) * kBloomBlockBytes;
  internal::BloomBlockSet(block, key, hashes_);
  ++inserted_;
}

bool BlockedBloom::MayContain(uint64_t key) const {
  const uint8_t* block = bits_.data() + MulHi64(key, blocks_) * kBloomBlockBytes;
  return internal::BloomBlockHas(block, key, hashes_);
}

void BlockedBloom::Prefetch(uint64_t key) const {
  __builtin_prefetch(bits_.data() + MulHi64(key, blocks_) * kBloomBlockBytes);
}

void BlockedBloom::Clear() {
  std::fill(bits_.begin(), bits_.end(), 0);
  inserted_ = 0;
}

std::string BlockedBloom::Serialize() const {
  std::string out;
  out.reserve(kBloomHeaderBytes + bits_.size());
  AppendLE64(&out, blocks_);
  AppendLE32(&out, hashes_);
  AppendLE32(&out, 0);
  AppendLE64(&out, inserted_);
  AppendLE64(&out, 0);
  out.append(reinterpret_cast<const char*>(bits_.data()), bits_.size());
  return out;
}

Result<BlockedBloom> BlockedBloom::Deserialize(std::string_view bytes) {
  auto view = BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!view.ok()) return view.status();
  BlockedBloom f(view->blocks(), view->hashes());
  std::memcpy(f.bits_.data(), bytes.data() + kBloomHeaderBytes, f.bits_.size());
  f.inserted_ = view->inserted();
  return f;
}

}  // namespace urlguard
