// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// See bit_stream.h for the bit order, the Rice code and how the parameter is chosen.
// Changes the on-disk format: bump kDiffFormatVersion (core/diff_codec.h) and the golden test.
#include "core/bit_stream.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <string>
#include <utility>

namespace urlguard {

namespace {

constexpr uint64_t LowMask(int count) { return count >= 64 ? ~uint64_t{0} : (uint64_t{1} << count) - 1; }

[[maybe_unused]] bool StrictlyIncreasing(std::span<const uint64_t> v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] <= v[i - 1]) return false;
  }
  return true;
}

}  // namespace

// ---- BitWriter ----------------------------------------------------------------------------------------

void BitWriter::WriteBits(uint64_t value, int count) {
  assert(count >= 0 && count <= 64);
  assert((value & ~LowMask(count)) == 0);
  if (count > 32) {
    WriteBits(value & 0xffffffffu, 32);
    WriteBits(value >> 32, count - 32);
    return;
  }
  // acc_bits_ < 32 and count <= 32: the shifted value fits in the 64-bit accumulator.
  acc_ |= (value & LowMask(count)) << acc_bits_;
  acc_bits_ += count;
  if (acc_bits_ >= 32) {  // a whole 32-bit word, little-endian: one append instead of one per byte
    const char word[4] = {static_cast<char>(acc_ & 0xff), static_cast<char>((acc_ >> 8) & 0xff),
                          static_cast<char>((acc_ >> 16) & 0xff), static_cast<char>((acc_ >> 24) & 0xff)};
    bytes_.append(word, 4);
    acc_ >>= 32;
    acc_bits_ -= 32;
  }
}

void BitWriter::WriteUnary(uint64_t q) {
  while (q >= 32) {
    WriteBits(0xffffffffu, 32);
    q -= 32;
  }
  // q one-bits (the low bits) then the zero-bit above them.
  WriteBits(LowMask(static_cast<int>(q)), static_cast<int>(q) + 1);
}

void BitWriter::WriteRice(uint64_t value, int k) {
  assert(k >= 0 && k <= kMaxRiceParameter);
  WriteUnary(value >> k);
  WriteBits(value & LowMask(k), k);
}

std::string BitWriter::Finish() {
  for (; acc_bits_ > 0; acc_bits_ -= 8) {  // the last byte's upper bits are zero padding
    bytes_.push_back(static_cast<char>(acc_ & 0xff));
    acc_ >>= 8;
  }
  acc_ = 0;
  acc_bits_ = 0;
  std::string out;
  out.swap(bytes_);
  return out;
}

// ---- BitReader ----------------------------------------------------------------------------------------

BitReader::BitReader(std::string_view bytes)
    : data_(reinterpret_cast<const uint8_t*>(bytes.data())), size_(bytes.size()) {}

void BitReader::Refill() {
  while (buf_bits_ <= 56 && next_byte_ < size_) {
    buf_ |= static_cast<uint64_t>(data_[next_byte_++]) << buf_bits_;
    buf_bits_ += 8;
  }
}

void BitReader::Consume(int n) {
  assert(n >= 0 && n <= buf_bits_);
  buf_ = n >= 64 ? 0 : buf_ >> n;
  buf_bits_ -= n;
}

bool BitReader::ReadBits(int count, uint64_t* value) {
  assert(count >= 0 && count <= 64);
  if (count > 56) {  // a refill guarantees only 57 buffered bits: split
    uint64_t low = 0;
    uint64_t high = 0;
    if (!ReadBits(32, &low) || !ReadBits(count - 32, &high)) return false;
    *value = low | (high << 32);
    return true;
  }
  Refill();
  if (buf_bits_ < count) return false;
  *value = buf_ & LowMask(count);
  Consume(count);
  return true;
}

bool BitReader::ReadUnary(uint64_t max_q, uint64_t* q) {
  uint64_t run = 0;  // invariant: run <= max_q
  for (;;) {
    Refill();
    if (buf_bits_ == 0) return false;  // the stream ended inside the run
    // Bits above buf_bits_ are zero, so the count of trailing ones never exceeds buf_bits_.
    const int ones = std::countr_one(buf_);
    if (static_cast<uint64_t>(ones) > max_q - run) return false;
    run += static_cast<uint64_t>(ones);
    if (ones < buf_bits_) {  // the terminating zero-bit is buffered
      Consume(ones + 1);
      *q = run;
      return true;
    }
    Consume(ones);
  }
}

bool BitReader::ReadRice(int k, uint64_t max_value, uint64_t* value) {
  assert(k >= 0 && k <= kMaxRiceParameter);
  uint64_t q = 0;
  // q <= max_value >> k guarantees q << k <= max_value: no overflow below.
  if (!ReadUnary(max_value >> k, &q)) return false;
  uint64_t r = 0;
  if (!ReadBits(k, &r)) return false;
  const uint64_t v = (q << k) | r;
  if (v > max_value) return false;
  *value = v;
  return true;
}

bool BitReader::AtCanonicalEnd() const {
  // Everything left is in buf_ only if Refill() has seen the last byte; otherwise >= 8 bits remain.
  return next_byte_ == size_ && buf_bits_ < 8 && buf_ == 0;
}

// ---- Rice coding of sorted sequences ------------------------------------------------------------------

int EstimateRiceParameter(uint64_t count, uint64_t gap_sum) {
  if (count == 0) return 0;
  const double mean = static_cast<double>(gap_sum) / static_cast<double>(count);
  const double x = mean * 0.6931471805599453;  // ln 2
  if (!(x >= 2.0)) return 0;                   // floor(log2(x)) <= 0
  const int k = static_cast<int>(std::floor(std::log2(x)));
  return k > kMaxRiceParameter ? kMaxRiceParameter : k;
}

namespace {

// sum over the gaps of (g >> k), in 128 bits (cannot overflow: the gaps sum to less than 2^64).
unsigned __int128 QuotientSum(std::span<const uint64_t> sorted, int k) {
  unsigned __int128 sum = 0;
  uint64_t next_min = 0;  // x_{i-1} + 1, and 0 for the first value
  for (uint64_t x : sorted) {
    sum += (x - next_min) >> k;
    next_min = x + 1;
  }
  return sum;
}

unsigned __int128 Cost(std::span<const uint64_t> sorted, int k) {
  return QuotientSum(sorted, k) +
         static_cast<unsigned __int128>(sorted.size()) * static_cast<unsigned>(k + 1);
}

}  // namespace

uint64_t RiceSortedCostBits(std::span<const uint64_t> sorted, int k) {
  assert(k >= 0 && k <= kMaxRiceParameter);
  assert(StrictlyIncreasing(sorted));
  const unsigned __int128 c = Cost(sorted, k);
  return c > ~uint64_t{0} ? ~uint64_t{0} : static_cast<uint64_t>(c);
}

int OptimalRiceParameter(std::span<const uint64_t> sorted) {
  assert(StrictlyIncreasing(sorted));
  if (sorted.empty()) return 0;
  // Sum of the gaps = last - (n - 1): x_{n-1} = sum of (g_i + 1) minus 1.
  const uint64_t gap_sum = sorted.back() - (sorted.size() - 1);
  int k = EstimateRiceParameter(sorted.size(), gap_sum);
  // f is convex (see bit_stream.h): walk to the smallest minimiser.
  unsigned __int128 fk = Cost(sorted, k);
  bool moved_down = false;
  while (k > 0) {
    const unsigned __int128 f_below = Cost(sorted, k - 1);
    if (f_below > fk) break;
    --k;
    fk = f_below;
    moved_down = true;
  }
  if (!moved_down) {
    while (k < kMaxRiceParameter) {
      const unsigned __int128 f_above = Cost(sorted, k + 1);
      if (f_above >= fk) break;
      ++k;
      fk = f_above;
    }
  }
  return k;
}

void RiceEncodeSorted(std::span<const uint64_t> sorted, int k, BitWriter* writer) {
  assert(k >= 0 && k <= kMaxRiceParameter);
  assert(StrictlyIncreasing(sorted));
  uint64_t next_min = 0;
  for (uint64_t x : sorted) {
    writer->WriteRice(x - next_min, k);
    next_min = x + 1;
  }
}

std::string RiceEncodeSorted(std::span<const uint64_t> sorted, int k) {
  BitWriter writer;
  RiceEncodeSorted(sorted, k, &writer);
  return writer.Finish();
}

RiceSortedReader::RiceSortedReader(std::string_view bytes, int k, uint64_t count, uint64_t bound)
    : reader_(bytes), k_(k), count_(count), bound_(bound) {
  if (k < 0 || k > kMaxRiceParameter) {
    Fail("rice parameter " + std::to_string(k) + " is above " + std::to_string(kMaxRiceParameter));
    return;
  }
  if (count > bound) {
    Fail(std::to_string(count) + " distinct values cannot all be below " + std::to_string(bound));
    return;
  }
  // Each value takes at least k + 1 bits: a count the bytes cannot hold is refused before anyone allocates.
  const unsigned __int128 min_bits = static_cast<unsigned __int128>(count) * static_cast<unsigned>(k + 1);
  const unsigned __int128 have_bits = static_cast<unsigned __int128>(bytes.size()) * 8;
  if (min_bits > have_bits) {
    Fail(std::to_string(count) + " values with rice parameter " + std::to_string(k) + " need at least " +
         std::to_string(static_cast<uint64_t>(min_bits)) + " bits, the stream has " + std::to_string(bytes.size()) +
         " bytes");
  }
}

bool RiceSortedReader::Fail(std::string message) {
  status_ = Status::Corruption(std::move(message));
  done_ = true;
  return false;
}

bool RiceSortedReader::Next(uint64_t* x) {
  if (done_) return false;
  if (index_ == count_) {
    done_ = true;
    if (!reader_.AtCanonicalEnd()) {
      return Fail("rice stream: " + std::to_string(reader_.bits_remaining()) +
                  " bits after the last value (expected only zero padding to a byte boundary)");
    }
    return false;
  }
  // The previous value may have been bound - 1, leaving no room for this one.
  if (next_min_ >= bound_) {
    return Fail("rice stream: value " + std::to_string(index_) + " would be >= the bound " + std::to_string(bound_));
  }
  uint64_t gap = 0;
  if (!reader_.ReadRice(k_, bound_ - 1 - next_min_, &gap)) {
    return Fail("rice stream: value " + std::to_string(index_) + " of " + std::to_string(count_) +
                (reader_.bits_remaining() == 0 ? " runs past the end of the stream"
                                               : " is truncated or >= the bound " + std::to_string(bound_)));
  }
  *x = next_min_ + gap;  // <= bound - 1: no overflow
  next_min_ = *x + 1;
  ++index_;
  return true;
}

Status RiceDecodeSorted(std::string_view bytes, int k, uint64_t count, uint64_t bound,
                        std::vector<uint64_t>* out) {
  out->clear();
  RiceSortedReader reader(bytes, k, count, bound);
  if (!reader.status().ok()) return reader.status();
  out->reserve(count);
  uint64_t x = 0;
  while (reader.Next(&x)) out->push_back(x);
  if (!reader.status().ok()) {
    out->clear();
    return reader.status();
  }
  return Status::Ok();
}

}  // namespace urlguard
