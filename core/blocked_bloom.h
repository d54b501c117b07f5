// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Blocked Bloom filter (Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom Filters", 2007):
// every key sets k bits inside one 512-bit block (one cache line), so a probe costs one cache miss whatever k
// is. Classic sizing: m = -n ln p / (ln 2)^2 bits, k = (m/n) ln 2. Confining the bits to a block raises the
// false-positive rate a little above the classic formula (blocks receive a Poisson number of keys), which
// ExpectedFalsePositiveRate() accounts for and bench/lookup_bench measures.
//
// Roles (docs/architecture.md §4): the baseline the fingerprint array must beat on the same data, a layer structure
// for lists that are never diffed, and the dynamic "seen before?" and rolling-window filters (inserts only).
//
// Keys are uniformly random 64-bit values (the first 8 bytes of a SHA-256 digest, big-endian): the high bits
// choose the block (multiply-shift), and a splitmix64 finalizer of the key drives double hashing of the
// in-block bit positions. 64 bits leave a collision floor of n / 2^64, far below any useful rate.
//
// Two forms share the bit layout: BlockedBloomView reads a serialized body from a mapping; BlockedBloom owns
// its bits and can insert. Thread safety: views and const methods are safe from any thread; Insert() needs
// external synchronization.
//
// Changes the on-disk format: bump kSnapshotFormatVersion (core/snapshot.h) and the golden test.
#ifndef URLGUARD_CORE_BLOCKED_BLOOM_H_
#define URLGUARD_CORE_BLOCKED_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "urlguard/status.h"

namespace urlguard {

constexpr size_t kBloomBlockBytes = 64;
constexpr size_t kBloomHeaderBytes = 32;
constexpr uint32_t kMaxBloomHashes = 16;
constexpr uint64_t kMaxBloomBlocks = uint64_t{1} << 32;  // 256 GiB: far above any real list

struct BloomSizing {
  uint64_t blocks;   // number of 512-bit blocks
  uint32_t hashes;   // k
  double bits_per_entry;
  double expected_fp_rate;  // with the blocking penalty
};

// Sizes a blocked Bloom filter for `n` keys at false-positive rate `p` (0 < p < 1) with the classic formulas.
// The blocking penalty makes the real rate (expected_fp_rate) somewhat higher than p.
BloomSizing SizeBlockedBloom(uint64_t n, double p);
// The smallest blocked Bloom filter (searching block count and k around the classic sizing) whose expected
// rate, blocking penalty included, is at most p. This is what list builders use.
BloomSizing SizeBlockedBloomForTarget(uint64_t n, double p);
// The expected false-positive rate of `blocks` blocks with `hashes` bits per key after `n` inserts.
double BlockedBloomFalsePositiveRate(uint64_t n, uint64_t blocks, uint32_t hashes);

namespace internal {
// Shared by the view and the owning filter.
bool BloomBlockHas(const uint8_t* block, uint64_t key, uint32_t hashes);
void BloomBlockSet(uint8_t* block, uint64_t key, uint32_t hashes);
}  // namespace internal

class BlockedBloomView {
 public:
  BlockedBloomView() = default;
  // Validates a body (header + blocks) of `size` bytes. kCorruption with the reason otherwise.
  static Result<BlockedBloomView> Open(const uint8_t* data, size_t size);

  bool MayContain(uint64_t key) const;
  void Prefetch(uint64_t key) const;
  uint64_t blocks() const { return blocks_; }
  uint32_t hashes() const { return hashes_; }
  uint64_t inserted() const { return inserted_; }

 private:
  uint64_t blocks_ = 0;
  uint32_t hashes_ = 0;
  uint64_t inserted_ = 0;
  const uint8_t* bits_ = nullptr;
};

class BlockedBloom {
 public:
  BlockedBloom(uint64_t blocks, uint32_t hashes);  // blocks >= 1, 1 <= hashes <= kMaxBloomHashes
  // Sized by SizeBlockedBloomForTarget: meets `p` with the blocking penalty included.
  static BlockedBloom ForCapacity(uint64_t n, double p);

  void Insert(uint64_t key);
  bool MayContain(uint64_t key) const;
  // Starts loading `key`'s block into the cache (a hint only): a caller with many keys prefetches a few ahead.
  void Prefetch(uint64_t key) const;
  void Clear();
  uint64_t blocks() const { return blocks_; }
  uint32_t hashes() const { return hashes_; }
  uint64_t inserted() const { return inserted_; }
  size_t byte_size() const { return bits_.size(); }

  // The serialized body: header (blocks u64, hashes u32, reserved u32, inserted u64, reserved u64) + blocks.
  std::string Serialize() const;
  // Restores a filter from Serialize() bytes (validated like BlockedBloomView::Open).
  static Result<BlockedBloom> Deserialize(std::string_view bytes);

 private:
  uint64_t blocks_;
  uint32_t hashes_;
  uint64_t inserted_ = 0;
  std::vector<uint8_t> bits_;
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_BLOCKED_BLOOM_H_
