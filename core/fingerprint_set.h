// SPDX-License-Identifier: Apache-2.0
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
// (bench/lookup_bench measures both).
//
// A probe: one read in the sample array (78 k entries for 10 M keys: stays in cache), a select over the unary
// words of one block (usually one or two words), and a read of at most a few remainders (one cache miss).
// Prefetch() issues the unary and remainder lines early, both from the sample (the remainders' place is
// interpolated, not read from the unary words), so a batch of probes overlaps all its misses.
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

// The sizes of a body: its header fields, all known from (n, universe) before any fingerprint is seen. The
// view reads them from a body, the encoder is given them.
struct FingerprintSetGeometry {
  uint64_t universe = 1;
  uint64_t n = 0;
  uint64_t buckets = 0;
  uint32_t r = 0;
  uint64_t sample_count = 0;
  uint64_t unary_words = 0;
  uint64_t remainder_words = 0;

  // Bytes of the samples region including its padding to 8.
  uint64_t samples_bytes() const { return (sample_count * 4 + 7) / 8 * 8; }
  uint64_t body_bytes() const {
    return kFingerprintSetHeaderBytes + samples_bytes() + (unary_words + remainder_words) * 8;
  }
};

// The builder's choice for n fingerprints in `universe` (>= 1; n <= kMaxLayerEntries, asserted).
FingerprintSetGeometry FingerprintSetGeometryFor(uint64_t n, uint64_t universe);

// A read-only view over a body. Cheap to copy; does not own the bytes, which must outlive it.
// Thread-safe: all methods are const and touch no shared mutable state.
class FingerprintSetView {
 public:
  FingerprintSetView() = default;

  // Validates `size` bytes at `data` (8-byte aligned) as a body. kCorruption with the reason otherwise.
  static Result<FingerprintSetView> Open(const uint8_t* data, size_t size);

  uint64_t universe() const { return g_.universe; }
  uint64_t size() const { return g_.n; }
  uint32_t remainder_bits() const { return g_.r; }

  // The fingerprint of a key whose first 8 bytes, big-endian, are h.
  uint64_t FingerprintOf(uint64_t h) const;
  bool ContainsFingerprint(uint64_t fp) const;
  bool MayContain(uint64_t h) const { return ContainsFingerprint(FingerprintOf(h)); }
  // Hints the CPU to load what ContainsFingerprint(fp) will read: the unary words and the remainders, both
  // located from the block's sample alone (no wait on another miss), so a batch of probes costs about one
  // memory latency.
  void Prefetch(uint64_t fp) const {
    const uint8_t* addresses[kMaxPrefetchAddresses];
    const size_t n = PrefetchAddresses(fp, addresses);
    for (size_t i = 0; i < n; ++i) __builtin_prefetch(addresses[i]);
  }
  // Hints the one line Prefetch(fp) itself must read first: the block's sample. Issued for a whole batch of
  // probes before their Prefetch() calls, so those do not each wait on a sample miss (the samples of a 10 M
  // layer are ~300 KB: they do not all stay in cache between lookups).
  void PrefetchSample(uint64_t fp) const {
    const uint64_t block = (fp >> g_.r) >> 7;  // one sample per 2^7 buckets (kSampleShift)
    if (block + 1 < g_.sample_count) __builtin_prefetch(samples_ + block * 4);
  }
  // The addresses Prefetch(fp) hints, all inside the body (tests and benches check where they land).
  static constexpr size_t kMaxPrefetchAddresses = 4;
  size_t PrefetchAddresses(uint64_t fp, const uint8_t* out[kMaxPrefetchAddresses]) const;

  // Decodes every fingerprint in ascending order into `out` (cleared first). Linear time.
  void Decode(std::vector<uint64_t>* out) const;

 private:
  FingerprintSetGeometry g_;          // as the body's header says (Open checked it against the body's length)
  const uint8_t* samples_ = nullptr;  // u32 LE each
  const uint8_t* unary_ = nullptr;    // u64 LE words, bit i of the stream = word i/64, bit i%64
  const uint8_t* remainders_ = nullptr;  // u64 LE words, remainder j at bits [j*r, j*r + r)

  friend class FingerprintSetCursor;  // the streaming decoder below
};

// ---- Streaming build and decode ---------------------------------------------------------------------------
// For sets too large to hold decoded (a client applying a diff to a 100 M-entry list, a publisher merging
// spilled runs): the encoder takes fingerprints one at a time and emits the body's regions as they fill, the
// cursor walks a mapped body in order. Both produce or read exactly the bytes BuildFingerprintSet writes
// (core/snapshot_writer_test.cc compares them), with memory independent of n.

// Encodes one body in a single pass. The body is: Header() | samples (+ pad) | unary words | remainder
// words; each region's finished bytes are appended to the string its accessor returns, in order, and the
// caller may take them away (clear the string) at any time, so memory stays at what the caller lets pile up.
// Not thread-safe.
class FingerprintSetEncoder {
 public:
  explicit FingerprintSetEncoder(const FingerprintSetGeometry& geometry);

  // The 56-byte body header.
  std::string Header() const;
  // Adds the next fingerprint. False (and nothing changes) when it is not above the previous one, not
  // below the universe, or one more than geometry.n.
  bool Add(uint64_t fp);
  // Completes every region. False when fewer than geometry.n fingerprints were added.
  bool Finish();

  uint64_t added() const { return added_; }
  std::string* samples() { return &samples_; }        // u32 LE each; Finish() adds the padding
  std::string* unary() { return &unary_out_; }        // u64 LE words
  std::string* remainders() { return &rem_out_; }     // u64 LE words

 private:
  // Moves the unary stream to the start of bucket `b` (closing the buckets before it, sampling on the way).
  void AdvanceTo(uint64_t b);

  FingerprintSetGeometry g_;
  uint64_t rem_mask_;
  uint64_t added_ = 0;
  uint64_t last_ = 0;
  uint64_t bucket_ = 0;  // the bucket the unary stream is in (its closing 0-bit not yet written)
  uint64_t unary_word_ = 0;
  uint32_t unary_fill_ = 0;  // bits used in unary_word_
  uint64_t rem_word_ = 0;
  uint32_t rem_fill_ = 0;
  uint64_t samples_out_ = 0;
  uint64_t unary_words_out_ = 0;
  uint64_t rem_words_out_ = 0;
  std::string samples_, unary_out_, rem_out_;
};

// Decodes a body's fingerprints in ascending order without materialising them: two sequential scans (unary
// and remainders), O(1) memory. The view's bytes must outlive the cursor. Not thread-safe.
class FingerprintSetCursor {
 public:
  explicit FingerprintSetCursor(const FingerprintSetView& view);

  // The next fingerprint in *fp; false when all view.size() have been returned. A body that passed
  // FingerprintSetView::Open never makes this read out of bounds (the unary popcount was checked).
  bool Next(uint64_t* fp);
  uint64_t position() const { return entry_; }  // fingerprints returned so far

  // The bytes of the body this cursor has finished reading (unary and remainder prefixes), for callers that
  // hand them back to the kernel (madvise) while streaming through a large mapping.
  struct Span {
    const uint8_t* data;
    size_t size;
  };
  Span UnaryDone() const;
  Span RemaindersDone() const;

 private:
  FingerprintSetView v_;
  uint64_t entry_ = 0;
  uint64_t bucket_ = 0;
  uint64_t word_index_ = 0;  // the unary word loaded in word_
  uint64_t word_ = 0;        // its bits not yet consumed, shifted down to bit 0
  uint32_t left_ = 0;        // how many bits of word_ are not yet consumed
  uint64_t rem_bit_ = 0;     // stream bit of the next remainder
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_FINGERPRINT_SET_H_
