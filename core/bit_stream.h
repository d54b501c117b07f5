// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// BitWriter / BitReader and Golomb-Rice coding of strictly increasing sequences: the entropy coder of the
// diff format (docs/diff-format.md).
//
// Bit order: LSB-first. Bit i of a stream is bit (i % 8) of byte i / 8 (bit 0 = least significant), so the
// first bit written is the lowest bit of the first byte; a multi-bit field is written least significant bit
// first. This is the order of DEFLATE and of Safe Browsing v4's Rice-delta encoding, and it lets the reader
// take 64 bits at a time from a little-endian buffer and find a unary run with one count-trailing-ones.
//
// Rice code with parameter k (0..63) of a value v: the quotient q = v >> k in unary — q one-bits followed by
// one zero-bit — then the remainder v & (2^k - 1) in k bits, LSB first (the Safe Browsing v4 layout). It
// costs q + 1 + k bits.
//
// A strictly increasing sequence x_0 < x_1 < ... is coded as its gaps g_0 = x_0, g_i = x_i - x_{i-1} - 1
// (the "- 1" uses the fact that entries are unique), each Rice coded with one parameter k, no first value
// stored apart. For n values spread uniformly over [0, U) the gaps are close to geometric with mean U / n,
// and Rice coding with the best k costs about log2(U / n) + 1.5 bits per value (the entropy is log2(e * U /
// n) = log2(U / n) + 1.44).
//
// Choosing k: OptimalRiceParameter() returns the k with the exactly smallest total cost, ties to the smaller
// k. The cost f(k) = sum_i (g_i >> k) + n * (k + 1) is convex in k (f(k+1) - f(k) = n - sum_i ceil((g_i >> k)
// / 2) and each term of the sum shrinks as k grows), so the search starts from the textbook estimate k0 =
// max(0, floor(log2(mean_gap * ln 2))) and walks downhill: usually two or three passes over the gaps.
//
// Untrusted input: every read is bounds-checked (a read past the end fails, it never reads beyond the
// buffer); a unary run is capped by the largest value the caller still accepts, so garbage of all one-bits
// fails as soon as the run is too long; values are overflow-checked against the caller's bound. The
// reader needs no allocation; RiceDecodeSorted() allocates `count` values only after checking that the stream
// is long enough to hold them (each value takes at least k + 1 bits).
//
// Changes the on-disk format: bump kDiffFormatVersion (core/diff_codec.h) and the golden test.
#ifndef URLGUARD_CORE_BIT_STREAM_H_
#define URLGUARD_CORE_BIT_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// The largest Rice parameter: a remainder has at most 63 bits, a quotient at least one.
constexpr int kMaxRiceParameter = 63;

// Appends bits LSB-first to a growing byte string. Not thread-safe (one writer per thread).
class BitWriter {
 public:
  BitWriter() = default;

  // Appends the low `count` bits of `value`, least significant first. Precondition (asserted): 0 <= count
  // <= 64 and value < 2^count.
  void WriteBits(uint64_t value, int count);
  // Appends q one-bits then a zero-bit. Costs q + 1 bits: the caller keeps q sensible.
  void WriteUnary(uint64_t q);
  // Appends the Rice code of `value` with parameter k (precondition, asserted: 0 <= k <= kMaxRiceParameter).
  void WriteRice(uint64_t value, int k);

  // Bits written so far.
  uint64_t bit_count() const { return bytes_.size() * 8 + static_cast<uint64_t>(acc_bits_); }

  // Pads with zero-bits to a byte boundary and returns the bytes (ceil(bit_count() / 8) of them). The
  // writer is empty afterwards and may be reused.
  std::string Finish();

 private:
  std::string bytes_;  // whole bytes written
  uint64_t acc_ = 0;   // pending bits, the oldest at bit 0; bits at and above acc_bits_ are zero
  int acc_bits_ = 0;   // number of pending bits, < 32 between calls (flushed a 32-bit word at a time: a byte
                      // per push_back was most of a range diff's Rice coding)
};

// Reads bits LSB-first from a byte string it does not own (`bytes` must outlive the reader). Every read is
// bounds-checked: a failed read returns false, after which the reader's position is unspecified (stop
// using it). Not thread-safe.
class BitReader {
 public:
  explicit BitReader(std::string_view bytes);

  // Reads `count` bits (0..64, asserted) into *value, the first bit read being the least significant.
  // False when fewer than `count` bits remain.
  bool ReadBits(int count, uint64_t* value);
  // Reads a unary number (one-bits up to a zero-bit) into *q. False when the stream ends before the
  // zero-bit or when the run exceeds `max_q`; in that case it stops reading after at most max_q + 64 bits.
  bool ReadUnary(uint64_t max_q, uint64_t* q);
  // Reads a Rice code with parameter k (0..kMaxRiceParameter, asserted) into *value. False when the stream
  // ends early or the value would exceed `max_value` (detected from the quotient before the remainder
  // is read, so no arithmetic overflows).
  bool ReadRice(int k, uint64_t max_value, uint64_t* value);

  // Bits not read yet.
  uint64_t bits_remaining() const { return (size_ - next_byte_) * 8 + static_cast<uint64_t>(buf_bits_); }
  // True when fewer than 8 bits remain and all of them are zero: the end of a stream written by
  // BitWriter::Finish().
  bool AtCanonicalEnd() const;

 private:
  void Refill();
  void Consume(int n);

  const uint8_t* data_;
  size_t size_;
  size_t next_byte_ = 0;  // next byte to move into buf_
  uint64_t buf_ = 0;      // buffered bits, the next one at bit 0; bits at and above buf_bits_ are zero
  int buf_bits_ = 0;
};

// ---- Rice coding of strictly increasing sequences ------------------------------------------------------

// The textbook parameter for `count` gaps summing to `gap_sum`: max(0, floor(log2(mean_gap * ln 2))),
// clamped to kMaxRiceParameter; 0 when count == 0.
int EstimateRiceParameter(uint64_t count, uint64_t gap_sum);

// Total bits of the Rice coding of the gaps of `sorted` with parameter k, saturated at UINT64_MAX.
// Precondition (asserted in debug builds): strictly increasing; 0 <= k <= kMaxRiceParameter.
uint64_t RiceSortedCostBits(std::span<const uint64_t> sorted, int k);

// The k minimising RiceSortedCostBits(sorted, k) (the smallest such k on ties); 0 for an empty sequence.
// Precondition: strictly increasing.
int OptimalRiceParameter(std::span<const uint64_t> sorted);

// Appends the gaps of `sorted` (g_0 = x_0, g_i = x_i - x_{i-1} - 1) Rice coded with parameter k to *writer.
// Precondition (asserted): strictly increasing, 0 <= k <= kMaxRiceParameter. The output has
// RiceSortedCostBits(sorted, k) bits: pass OptimalRiceParameter(sorted) unless you mean otherwise.
void RiceEncodeSorted(std::span<const uint64_t> sorted, int k, BitWriter* writer);
// The same into a fresh, zero-padded byte string.
std::string RiceEncodeSorted(std::span<const uint64_t> sorted, int k);

// Decodes exactly `count` values from `bytes` (a stream written by RiceEncodeSorted + Finish) into *out
// (replaced). Every value must be < `bound`; the values come out strictly increasing by construction.
// Returns kCorruption (with a message naming the failing value's index) when k > kMaxRiceParameter, when the
// stream cannot hold `count` values (checked before *out is allocated), when it ends early, when a value
// reaches `bound`, or when anything but zero padding (fewer than 8 bits) follows the last value.
Status RiceDecodeSorted(std::string_view bytes, int k, uint64_t count, uint64_t bound,
                        std::vector<uint64_t>* out);

// RiceDecodeSorted one value at a time, with its checks and messages (RiceDecodeSorted is written with it): for
// a sequence a reader merges once and need not hold, 8 bytes a value decoded against a few bits coded (a
// catch-up diff of a 100 M-entry list holds tens of millions). `bytes` must outlive the reader. Not thread-safe.
class RiceSortedReader {
 public:
  // The empty sequence.
  RiceSortedReader() : reader_(std::string_view()) {}
  // Checks k, count against bound and count against the stream's length at once (status()).
  RiceSortedReader(std::string_view bytes, int k, uint64_t count, uint64_t bound);

  // The next value into *x. False after the last one, having checked that only zero padding follows it, or at
  // the first error, which status() then holds; false from then on.
  bool Next(uint64_t* x);
  const Status& status() const { return status_; }
  // Values not read yet.
  uint64_t remaining() const { return count_ - index_; }

 private:
  bool Fail(std::string message);

  BitReader reader_;
  int k_ = 0;
  uint64_t count_ = 0;
  uint64_t bound_ = 0;
  uint64_t index_ = 0;
  uint64_t next_min_ = 0;  // the smallest value allowed next
  bool done_ = false;
  Status status_;
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_BIT_STREAM_H_
