// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/fingerprint_set.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>

#include "core/byte_io.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace urlguard {
namespace {

constexpr uint32_t kSampleShift = 7;  // one u32 sample per 128 buckets

struct Params {
  uint32_t r;
  uint64_t buckets;
};

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

uint64_t BodyBits(uint64_t n, uint64_t buckets, uint32_t r) {
  uint64_t samples = (buckets >> kSampleShift) + 2;
  return n * r + (n + buckets) + samples * 32;
}

// Chooses r (and so Q = ceil(U / 2^r)) minimising the body size.
Params ChooseParams(uint64_t n, uint64_t universe) {
  if (n == 0) return {63, CeilDiv(universe, uint64_t{1} << 63)};  // empty: one or two empty buckets
  double ratio = static_cast<double>(universe) / static_cast<double>(n);
  int base = ratio < 2 ? 0 : static_cast<int>(std::floor(std::log2(ratio)));
  Params best{0, 0};
  uint64_t best_bits = UINT64_MAX;
  for (int r = std::max(0, base - 1); r <= std::min(63, base + 2); ++r) {
    uint64_t buckets = CeilDiv(universe, uint64_t{1} << r);
    if (buckets > (uint64_t{1} << 40)) continue;  // absurd universes: keep the unary stream bounded
    uint64_t bits = BodyBits(n, buckets, static_cast<uint32_t>(r));
    if (bits < best_bits) {
      best_bits = bits;
      best = {static_cast<uint32_t>(r), buckets};
    }
  }
  assert(best.buckets > 0);
  return best;
}

// The 56-byte body header (docs/snapshot-format.md): BuildFingerprintSet and the streaming encoder write the
// same one.
void AppendHeader(const FingerprintSetGeometry& g, std::string* out) {
  AppendLE64(out, g.universe);
  AppendLE64(out, g.n);
  AppendLE64(out, g.buckets);
  AppendLE32(out, g.r);
  AppendLE32(out, kSampleShift);
  AppendLE64(out, g.sample_count);
  AppendLE64(out, g.unary_words);
  AppendLE64(out, g.remainder_words);
}

class BitAppender {
 public:
  explicit BitAppender(std::vector<uint64_t>* words) : words_(words) {}
  void Put(uint64_t value, uint32_t bits) {  // bits <= 64, value < 2^bits
    if (bits == 0) return;
    uint32_t off = static_cast<uint32_t>(pos_ & 63);
    size_t idx = pos_ >> 6;
    if (idx >= words_->size()) words_->push_back(0);
    (*words_)[idx] |= value << off;
    if (off + bits > 64) {
      words_->push_back(value >> (64 - off));
    }
    pos_ += bits;
  }
  void PutOnes(uint64_t count) {
    while (count >= 32) {
      Put(0xffffffffu, 32);
      count -= 32;
    }
    if (count > 0) Put((uint64_t{1} << count) - 1, static_cast<uint32_t>(count));
  }
  uint64_t pos() const { return pos_; }

 private:
  std::vector<uint64_t>* words_;
  uint64_t pos_ = 0;
};

// Position (0-63) of the k-th (0-based) set bit of x; x must have more than k set bits.
// Portable version: find the byte by popcounts, then the bit inside it.
inline uint32_t SelectInWordPortable(uint64_t x, uint32_t k) {
  for (uint32_t byte = 0; byte < 8; ++byte) {
    uint32_t c = static_cast<uint32_t>(std::popcount((x >> (byte * 8)) & 0xff));
    if (k < c) {
      uint64_t b = (x >> (byte * 8)) & 0xff;
      for (uint32_t i = 0; i < k; ++i) b &= b - 1;
      return byte * 8 + static_cast<uint32_t>(std::countr_zero(b));
    }
    k -= c;
  }
  return 64;
}

#if defined(__x86_64__)
// PDEP deposits 1 << k onto the k-th set bit of x: select in one instruction where BMI2 exists (measured:
// probe 66 ns -> see docs/performance.md). Chosen once at run time so the library still runs on any x86-64.
__attribute__((target("bmi2"))) inline uint32_t SelectInWordBmi2(uint64_t x, uint32_t k) {
  return static_cast<uint32_t>(std::countr_zero(_pdep_u64(uint64_t{1} << k, x)));
}
const bool kHasBmi2 = __builtin_cpu_supports("bmi2");
inline uint32_t SelectInWord(uint64_t x, uint32_t k) {
  return kHasBmi2 ? SelectInWordBmi2(x, k) : SelectInWordPortable(x, k);
}
#else
inline uint32_t SelectInWord(uint64_t x, uint32_t k) { return SelectInWordPortable(x, k); }
#endif

}  // namespace

double FingerprintSetBitsPerEntry(uint64_t n, uint64_t universe) {
  if (n == 0) return 0;
  Params p = ChooseParams(n, universe);
  return static_cast<double>(BodyBits(n, p.buckets, p.r) + kFingerprintSetHeaderBytes * 8) /
         static_cast<double>(n);
}

std::string BuildFingerprintSet(const std::vector<uint64_t>& fps, uint64_t universe) {
  const uint64_t n = fps.size();
  const FingerprintSetGeometry g = FingerprintSetGeometryFor(n, universe);  // asserts universe and n
  const uint64_t samples = g.sample_count;  // one per 128 buckets + a final sample equal to n

  std::vector<uint64_t> unary;
  std::vector<uint64_t> rems;
  BitAppender unary_bits(&unary);
  BitAppender rem_bits(&rems);
  std::vector<uint32_t> sample_values;
  sample_values.reserve(samples);
  const uint64_t rem_mask = g.r == 0 ? 0 : (g.r == 64 ? ~uint64_t{0} : (uint64_t{1} << g.r) - 1);

  uint64_t i = 0;
  for (uint64_t bucket = 0; bucket < g.buckets; ++bucket) {
    if ((bucket & ((uint64_t{1} << kSampleShift) - 1)) == 0) {
      sample_values.push_back(static_cast<uint32_t>(i));
    }
    uint64_t start = i;
    while (i < n && (fps[i] >> g.r) == bucket) {
      assert(fps[i] < universe);
      assert(i == 0 || fps[i] > fps[i - 1]);
      rem_bits.Put(fps[i] & rem_mask, g.r);
      ++i;
    }
    unary_bits.PutOnes(i - start);
    unary_bits.Put(0, 1);
  }
  assert(i == n);
  while (sample_values.size() < samples) sample_values.push_back(static_cast<uint32_t>(n));
  unary.resize(g.unary_words, 0);
  rems.resize(g.remainder_words, 0);

  std::string out;
  out.reserve(g.body_bytes());
  AppendHeader(g, &out);
  assert(out.size() == kFingerprintSetHeaderBytes);
  for (uint32_t s : sample_values) AppendLE32(&out, s);
  PadTo(&out, 8);
  for (uint64_t w : unary) AppendLE64(&out, w);
  for (uint64_t w : rems) AppendLE64(&out, w);
  return out;
}

Result<FingerprintSetView> FingerprintSetView::Open(const uint8_t* data, size_t size) {
  if (size < kFingerprintSetHeaderBytes) return Status::Corruption("fingerprint set: body too short");
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0) {
    return Status::Corruption("fingerprint set: body not 8-byte aligned");
  }
  FingerprintSetView v;
  FingerprintSetGeometry& g = v.g_;
  g.universe = LoadLE64(data);
  g.n = LoadLE64(data + 8);
  g.buckets = LoadLE64(data + 16);
  g.r = LoadLE32(data + 24);
  const uint32_t sample_shift = LoadLE32(data + 28);
  g.sample_count = LoadLE64(data + 32);
  g.unary_words = LoadLE64(data + 40);
  g.remainder_words = LoadLE64(data + 48);

  if (g.universe == 0) return Status::Corruption("fingerprint set: zero universe");
  if (g.n > kMaxLayerEntries) return Status::Corruption("fingerprint set: too many entries");
  if (g.r > 63) return Status::Corruption("fingerprint set: remainder width over 63 bits");
  if (sample_shift != kSampleShift) return Status::Corruption("fingerprint set: unknown sample spacing");
  if (g.buckets == 0 || g.buckets > (uint64_t{1} << 40) ||
      g.buckets != CeilDiv(g.universe, uint64_t{1} << g.r)) {
    return Status::Corruption("fingerprint set: bucket count does not match universe and remainder width");
  }
  if (g.sample_count != (g.buckets >> kSampleShift) + 2) {
    return Status::Corruption("fingerprint set: wrong sample count");
  }
  if (g.unary_words != CeilDiv(g.n + g.buckets, 64)) {
    return Status::Corruption("fingerprint set: wrong unary length");
  }
  if (g.remainder_words != CeilDiv(g.n * g.r, 64) + 1) {
    return Status::Corruption("fingerprint set: wrong remainder length");
  }
  const uint64_t need = g.body_bytes();
  if (need != size) {
    return Status::Corruption("fingerprint set: body is " + std::to_string(size) + " bytes, header implies " +
                              std::to_string(need));
  }
  v.samples_ = data + kFingerprintSetHeaderBytes;
  v.unary_ = v.samples_ + g.samples_bytes();
  v.remainders_ = v.unary_ + g.unary_words * 8;

  // Samples: start at 0, never decrease, end at n. This is what bounds every probe.
  uint32_t prev = 0;
  if (LoadLE32(v.samples_) != 0) return Status::Corruption("fingerprint set: first sample not 0");
  for (uint64_t i = 1; i < g.sample_count; ++i) {
    uint32_t s = LoadLE32(v.samples_ + i * 4);
    if (s < prev) return Status::Corruption("fingerprint set: samples decrease");
    prev = s;
  }
  if (prev != g.n) return Status::Corruption("fingerprint set: last sample is not the entry count");
  uint64_t ones = 0;
  for (uint64_t i = 0; i < g.unary_words; ++i) ones += std::popcount(LoadLE64(v.unary_ + i * 8));
  if (ones != g.n) return Status::Corruption("fingerprint set: unary stream does not hold n entries");
  return v;
}

uint64_t FingerprintSetView::FingerprintOf(uint64_t h) const { return MulHi64(h, g_.universe); }

size_t FingerprintSetView::PrefetchAddresses(uint64_t fp, const uint8_t* out[kMaxPrefetchAddresses]) const {
  // A probe reads three places, each found from the one before: the block's sample (in cache: 4 bytes per
  // 128 buckets), the unary words from the block's start to the bucket, and the bucket's remainders. Waiting
  // for the unary words to learn where the remainders are would make the prefetch cost a memory latency of
  // its own, so both are prefetched from the sample alone: the bucket's first entry is interpolated between
  // the block's two samples (entries spread evenly over buckets: for ~1 entry per bucket the estimate is off by
  // under 6 entries, one standard deviation, at mid-block). The line holding the estimate, and its neighbour
  // when the estimate is within kSlack bytes of a line boundary, cover the bucket's remainders almost always;
  // a miss costs one memory latency in ContainsFingerprint, never a wrong answer.
  const uint64_t bucket = fp >> g_.r;
  const uint64_t block = bucket >> kSampleShift;
  if (block + 1 >= g_.sample_count) return 0;
  const uint64_t first = LoadLE32(samples_ + block * 4);
  const uint64_t limit = LoadLE32(samples_ + (block + 1) * 4);
  if (limit < first) return 0;  // malformed (Open rejects it): nothing worth loading
  const uint64_t within = bucket & ((uint64_t{1} << kSampleShift) - 1);
  const uint64_t before = ((limit - first) * within) >> kSampleShift;  // estimated entries of earlier buckets
  const uint64_t begin_bit = first + (block << kSampleShift);
  const uint64_t last_word = g_.unary_words - 1;
  const uint64_t bucket_bit = begin_bit + before + within;
  out[0] = unary_ + std::min(begin_bit >> 6, last_word) * 8;
  out[1] = unary_ + std::min((bucket_bit + 8) >> 6, last_word) * 8;
  if (g_.r == 0) return 2;
  constexpr uint64_t kSlack = 24;  // bytes: ~2 standard deviations of the estimate at r = 13, plus an entry
  const uint64_t byte = ((first + before) * g_.r) >> 3;
  const uint64_t last_byte = g_.remainder_words * 8 - 1;
  out[2] = remainders_ + std::min(byte > kSlack ? byte - kSlack : 0, last_byte);
  out[3] = remainders_ + std::min(byte + kSlack + 8, last_byte);
  return 4;
}

bool FingerprintSetView::ContainsFingerprint(uint64_t fp) const {
  if (g_.n == 0 || fp >= g_.universe) return false;
  const uint64_t bucket = fp >> g_.r;
  const uint64_t block = bucket >> kSampleShift;
  const uint32_t within = static_cast<uint32_t>(bucket & ((uint64_t{1} << kSampleShift) - 1));
  const uint64_t first = LoadLE32(samples_ + block * 4);
  const uint64_t limit = LoadLE32(samples_ + (block + 1) * 4);  // entries of this block end before it
  // Bits of this block in the unary stream: [begin, end).
  const uint64_t begin = first + (block << kSampleShift);
  const uint64_t stream_bits = g_.unary_words * 64;
  const uint64_t end = std::min(stream_bits, limit + ((block + 1) << kSampleShift));

  // Skip `within` zeros (closed buckets) from `begin`.
  uint64_t pos = begin;
  uint32_t zeros_left = within;
  while (zeros_left > 0) {
    if (pos >= end) return false;  // malformed block: treat as absent
    uint64_t word_index = pos >> 6;
    uint32_t off = static_cast<uint32_t>(pos & 63);
    // The stream's zero bits from `pos` on, as ones; the shift brings in zeros above them.
    uint64_t zeros = ~LoadLE64(unary_ + word_index * 8) >> off;
    uint32_t avail = 64 - off;
    uint32_t count = static_cast<uint32_t>(std::popcount(zeros));
    if (count >= zeros_left) {
      pos += SelectInWord(zeros, zeros_left - 1) + 1;
      zeros_left = 0;
    } else {
      zeros_left -= count;
      pos += avail;
    }
  }
  // Entries of earlier buckets in this block = bits consumed minus zeros consumed.
  uint64_t entry = first + (pos - begin) - within;
  // Count the ones of this bucket (its size).
  uint64_t count = 0;
  for (;;) {
    if (pos >= end) return false;
    uint64_t word_index = pos >> 6;
    uint32_t off = static_cast<uint32_t>(pos & 63);
    uint64_t bits = LoadLE64(unary_ + word_index * 8) >> off;
    uint32_t run = static_cast<uint32_t>(std::countr_one(bits));
    uint32_t avail = 64 - off;
    if (run < avail) {
      count += run;
      break;
    }
    count += avail;
    pos += avail;
  }
  if (entry + count > limit) return false;  // malformed: more ones than the samples allow
  const uint64_t rem = fp & ((uint64_t{1} << g_.r) - 1);
  if (g_.r == 0) return count > 0;
  const uint64_t mask = (uint64_t{1} << g_.r) - 1;
  for (uint64_t e = entry; e < entry + count; ++e) {
    uint64_t bit = e * g_.r;
    uint64_t w = bit >> 6;
    uint32_t off = static_cast<uint32_t>(bit & 63);
    uint64_t lo = LoadLE64(remainders_ + w * 8) >> off;
    if (off + g_.r > 64) lo |= LoadLE64(remainders_ + (w + 1) * 8) << (64 - off);
    uint64_t value = lo & mask;
    if (value == rem) return true;
    if (value > rem) return false;  // sorted within the bucket
  }
  return false;
}

void FingerprintSetView::Decode(std::vector<uint64_t>* out) const {
  out->clear();
  out->reserve(g_.n);
  uint64_t bucket = 0;
  uint64_t entry = 0;
  const uint64_t mask = g_.r == 0 ? 0 : (uint64_t{1} << g_.r) - 1;
  const uint64_t total_bits = g_.n + g_.buckets;
  for (uint64_t pos = 0; pos < total_bits && entry < g_.n; ++pos) {
    bool one = (LoadLE64(unary_ + (pos >> 6) * 8) >> (pos & 63)) & 1;
    if (!one) {
      ++bucket;
      continue;
    }
    uint64_t value = 0;
    if (g_.r > 0) {
      uint64_t bit = entry * g_.r;
      uint64_t w = bit >> 6;
      uint32_t off = static_cast<uint32_t>(bit & 63);
      uint64_t lo = LoadLE64(remainders_ + w * 8) >> off;
      if (off + g_.r > 64) lo |= LoadLE64(remainders_ + (w + 1) * 8) << (64 - off);
      value = lo & mask;
    }
    out->push_back((bucket << g_.r) | value);
    ++entry;
  }
}

// ---- Streaming build and decode ---------------------------------------------------------------------------

FingerprintSetGeometry FingerprintSetGeometryFor(uint64_t n, uint64_t universe) {
  assert(universe >= 1);
  assert(n <= kMaxLayerEntries);
  const Params p = ChooseParams(n, universe);
  FingerprintSetGeometry g;
  g.universe = universe;
  g.n = n;
  g.buckets = p.buckets;
  g.r = p.r;
  g.sample_count = (p.buckets >> kSampleShift) + 2;
  g.unary_words = CeilDiv(n + p.buckets, 64);
  g.remainder_words = CeilDiv(n * p.r, 64) + 1;  // + 1: a two-word read is always in bounds
  return g;
}

FingerprintSetEncoder::FingerprintSetEncoder(const FingerprintSetGeometry& geometry)
    : g_(geometry), rem_mask_(geometry.r == 0 ? 0 : (uint64_t{1} << geometry.r) - 1) {
  AppendLE32(&samples_, 0);  // bucket 0 starts at entry 0
  samples_out_ = 1;
}

std::string FingerprintSetEncoder::Header() const {
  std::string out;
  AppendHeader(g_, &out);
  assert(out.size() == kFingerprintSetHeaderBytes);
  return out;
}

void FingerprintSetEncoder::AdvanceTo(uint64_t b) {
  if (b <= bucket_) return;
  // Samples for the buckets in (bucket_, b] that start a block (and exist).
  constexpr uint64_t kBlock = uint64_t{1} << kSampleShift;
  for (uint64_t c = (bucket_ / kBlock + 1) * kBlock; c <= b && c < g_.buckets; c += kBlock) {
    AppendLE32(&samples_, static_cast<uint32_t>(added_));
    ++samples_out_;
  }
  // One closing 0-bit per bucket left behind: zeros need no writing, only skipping.
  uint64_t zeros = b - bucket_;
  while (zeros > 0) {
    const uint64_t room = 64 - unary_fill_;
    if (zeros < room) {
      unary_fill_ += static_cast<uint32_t>(zeros);
      break;
    }
    zeros -= room;
    AppendLE64(&unary_out_, unary_word_);
    ++unary_words_out_;
    unary_word_ = 0;
    unary_fill_ = 0;
  }
  bucket_ = b;
}

bool FingerprintSetEncoder::Add(uint64_t fp) {
  if (added_ == g_.n || fp >= g_.universe || (added_ > 0 && fp <= last_)) return false;
  AdvanceTo(fp >> g_.r);
  unary_word_ |= uint64_t{1} << unary_fill_;
  if (++unary_fill_ == 64) {
    AppendLE64(&unary_out_, unary_word_);
    ++unary_words_out_;
    unary_word_ = 0;
    unary_fill_ = 0;
  }
  if (g_.r > 0) {
    const uint64_t v = fp & rem_mask_;
    rem_word_ |= v << rem_fill_;
    if (rem_fill_ + g_.r >= 64) {
      AppendLE64(&rem_out_, rem_word_);
      ++rem_words_out_;
      rem_word_ = rem_fill_ == 0 ? 0 : v >> (64 - rem_fill_);
      rem_fill_ = rem_fill_ + g_.r - 64;
    } else {
      rem_fill_ += g_.r;
    }
  }
  ++added_;
  last_ = fp;
  return true;
}

bool FingerprintSetEncoder::Finish() {
  if (added_ != g_.n) return false;
  AdvanceTo(g_.buckets);
  if (unary_fill_ > 0) {
    AppendLE64(&unary_out_, unary_word_);
    ++unary_words_out_;
    unary_fill_ = 0;
  }
  assert(unary_words_out_ == g_.unary_words);
  while (samples_out_ < g_.sample_count) {
    AppendLE32(&samples_, static_cast<uint32_t>(g_.n));
    ++samples_out_;
  }
  if (g_.sample_count % 2 != 0) AppendLE32(&samples_, 0);  // pad8
  if (rem_fill_ > 0) {
    AppendLE64(&rem_out_, rem_word_);
    ++rem_words_out_;
    rem_fill_ = 0;
  }
  while (rem_words_out_ < g_.remainder_words) {
    AppendLE64(&rem_out_, 0);
    ++rem_words_out_;
  }
  return true;
}

FingerprintSetCursor::FingerprintSetCursor(const FingerprintSetView& view) : v_(view) {}

bool FingerprintSetCursor::Next(uint64_t* fp) {
  if (entry_ >= v_.g_.n) return false;
  while (word_ == 0) {
    bucket_ += left_;  // the rest of the word is zeros: closed buckets
    if (word_index_ >= v_.g_.unary_words) return false;
    word_ = LoadLE64(v_.unary_ + word_index_ * 8);
    left_ = 64;
    ++word_index_;
  }
  const uint32_t zeros = static_cast<uint32_t>(std::countr_zero(word_));
  bucket_ += zeros;
  const uint32_t used = zeros + 1;
  word_ = used == 64 ? 0 : word_ >> used;
  left_ -= used;
  uint64_t value = 0;
  const uint32_t r = v_.g_.r;
  if (r > 0) {
    const uint64_t w = rem_bit_ >> 6;
    const uint32_t off = static_cast<uint32_t>(rem_bit_ & 63);
    uint64_t lo = LoadLE64(v_.remainders_ + w * 8) >> off;
    if (off + r > 64) lo |= LoadLE64(v_.remainders_ + (w + 1) * 8) << (64 - off);
    value = lo & ((uint64_t{1} << r) - 1);
    rem_bit_ += r;
  }
  *fp = (bucket_ << r) | value;
  ++entry_;
  return true;
}

FingerprintSetCursor::Span FingerprintSetCursor::UnaryDone() const {
  return {v_.unary_, static_cast<size_t>(word_index_ > 0 ? (word_index_ - 1) * 8 : 0)};
}

FingerprintSetCursor::Span FingerprintSetCursor::RemaindersDone() const {
  return {v_.remainders_, static_cast<size_t>((rem_bit_ >> 6) * 8)};
}

}  // namespace urlguard
