// Copyright urlguard authors.
//
// FingerprintSet: the default filter structure of a layer — a sorted, bucket-indexed array of fingerprints,
// used straight from a read-only mapping (docs/architecture.md §4).
//
// The structure. Each key (SHA-256 of an expression) becomes a fingerprint fp = floor(h * U / 2^64), where h is
// the key's first 8 bytes (big-endian) and U, the layer's "universe", is chosen by the publisher from the list
// size and the false-positive target: a probe for a key not in the set hits with probability n / U. U need not
// be a power of two, so the false-positive target is met without rounding up to the next whole bit (that
// rounding alone costs 0.5 bit per entry on average). The sorted fingerprints are split into a quotient
// (bucket = fp >> r) and an r-bit remainder:
//   - the remainders, packed at r bits each, in order;
//   - the bucket sizes in unary (one 1-bit per entry, then a 0-bit closing each bucket): n + Q bits for Q buckets;
//   - a sample every 2^s buckets (s = 7): the index of that bucket's first entry, as u32. The sampled bucket's
//     place in the unary stream is derivable (first entry + bucket number), so no second index is needed.
// This is Elias-Fano coding with a select sample. It is exact on fingerprints, so it doubles as the list state
// that diffs apply to. Cost per entry: r + 1 + Q/n * (1 + 32/128) bits, and r = log2(U/Q); the builder picks r
// (hence Q) minimising it, which lands at 2.2 to 2.5 bits over log2(U/n) — the information-theoretic limit for
// a sorted set is log2(U/n) + 1.44. A blocked Bloom filter at the same false-positive rate costs
// 1.44 * log2(U/n) + ~1 bits, so for the usual log2(U/n) ~ 13-15 this is 5-7 bits per entry smaller
// (bench/filter_bench measures both).
//
// A probe: one read in the sample array (78 k entries for 10 M keys: stays in cache), a select over the unary
// words of one block (usually one or two words), and a read of at most a few remainders (one cache miss).
// Prefetch() issues the last one early so a batch of probes overlaps its misses.
//
// Safety: Open() checks every length against the buffer once, the samples for monotonicity and the total
// popcount of the unary stream; probes clamp every index to the block the samples allow, so arbitrary bytes
// (that passed Open) can give wrong answers but never read out of bounds. Content integrity is the snapshot
// checksum's job.
//
// Changes the on-disk format: bump kSnapshotFormatVersion (core/snapshot.h) and the golden test.
#ifndef URLGUARD_CORE_FINGERPRINT_SET_H_
#define URLGUARD_CORE_FINGERPRINT_SET_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// At most this many fingerprints in one layer (samples are u32).
constexpr uint64_t kMaxLayerEntries = 1ull << 31;
// Fixed size of the body header, before the samples.
constexpr size_t kFingerprintSetHeaderBytes = 56;

// Bits per entry of a FingerprintSet holding n fingerprints in universe U (the builder's choice of r).
double FingerprintSetBitsPerEntry(uint64_t n, uint64_t universe);

// Serializes sorted, unique fingerprints, each < universe, into a body (see docs/snapshot-format.md).
// Precondition (asserted): sorted, unique, in range, n <= kMaxLayerEntries, universe >= 1.
std::string BuildFingerprintSet(const std::vector<uint64_t>& sorted_fingerprints, uint64_t universe);

// A read-only view over a body. Cheap to copy; does not own the bytes, which must outlive it.
// Thread-safe: all methods are const and touch no shared mutable state.
class FingerprintSetView {
 public:
  FingerprintSetView() = default;

  // Validates `size` bytes at `data` (8-byte aligned) as a body. kCorruption with the reason otherwise.
  static Result<FingerprintSetView> Open(const uint8_t* data, size_t size);

  uint64_t universe() const { return universe_; }
  uint64_t size() const { return n_; }
  uint32_t remainder_bits() const { return r_; }

  // The fingerprint of a key whose first 8 bytes, big-endian, are h.
  uint64_t FingerprintOf(uint64_t h) const;
  bool ContainsFingerprint(uint64_t fp) const;
  bool MayContain(uint64_t h) const { return ContainsFingerprint(FingerprintOf(h)); }
  // Hints the CPU to load what ContainsFingerprint(fp) will read.
  void Prefetch(uint64_t fp) const;

  // Decodes every fingerprint in ascending order into `out` (cleared first). Linear time.
  void Decode(std::vector<uint64_t>* out) const;

 private:
  uint64_t universe_ = 1;
  uint64_t n_ = 0;
  uint64_t buckets_ = 0;
  uint32_t r_ = 0;
  uint32_t sample_shift_ = 7;
  uint64_t sample_count_ = 0;
  uint64_t unary_words_ = 0;
  const uint8_t* samples_ = nullptr;  // u32 LE each
  const uint8_t* unary_ = nullptr;    // u64 LE words, bit i of the stream = word i/64, bit i%64
  const uint8_t* remainders_ = nullptr;  // u64 LE words, remainder j at bits [j*r, j*r + r)
  uint64_t remainder_words_ = 0;
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_FINGERPRINT_SET_H_
