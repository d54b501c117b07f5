// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/bounded_inflate.h"

#include <zlib.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <memory>

namespace urlguard {

namespace {

// windowBits 15 + 32: a 32 KiB window, and zlib detects the zlib or gzip header by itself.
constexpr int kWindowBitsAutoDetect = 15 + 32;
// windowBits 15 + 16: a 32 KiB window, gzip wrapper only.
constexpr int kWindowBitsGzip = 15 + 16;

// Ends the inflate stream when it goes out of scope.
struct InflateGuard {
  z_stream* z;
  ~InflateGuard() { inflateEnd(z); }
};

std::string ZlibMessage(const z_stream& z, int rc) {
  std::string m = z.msg != nullptr ? z.msg : "";
  if (m.empty()) m = "zlib error " + std::to_string(rc);
  return m;
}

bool StartsWithGzipMagic(std::string_view s) {
  return s.size() >= 2 && static_cast<unsigned char>(s[0]) == 0x1f &&
         static_cast<unsigned char>(s[1]) == 0x8b;
}

// Where one pass puts its output.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void Append(const char* data, size_t n) = 0;
};

// Keeps nothing: the counting pass.
class NullSink final : public Sink {
 public:
  void Append(const char* /*data*/, size_t /*n*/) override {}
};

// Appends to a string that already has its exact final capacity.
class ExactSink final : public Sink {
 public:
  explicit ExactSink(std::string* out) : out_(out) {}
  void Append(const char* data, size_t n) override { out_->append(data, n); }

 private:
  std::string* out_;
};

// Appends `n` bytes to *out (out->size() + n <= cap), growing its capacity geometrically but never beyond
// `cap`. std::string::reserve on a non-empty string may round a request up to twice the old capacity, so
// the growth goes through a fresh string, whose reserve is exact (for requests of at least 30 bytes).
class GrowingSink final : public Sink {
 public:
  GrowingSink(std::string* out, size_t cap) : out_(out), cap_(cap) {}
  void Append(const char* data, size_t n) override {
    const size_t need = out_->size() + n;
    if (need > out_->capacity()) {
      const size_t doubled = out_->capacity() > cap_ / 2 ? cap_ : out_->capacity() * 2;
      std::string bigger;
      bigger.reserve(std::max(need, doubled));
      bigger.append(*out_);
      out_->swap(bigger);
    }
    out_->append(data, n);
  }

 private:
  std::string* out_;
  const size_t cap_;
};

// One inflation pass over `input` into `sink`. Returns the number of bytes produced (<= max_output).
Result<size_t> InflatePass(std::string_view input, size_t max_output, bool gzip_members, Sink* sink) {
  z_stream z{};
  if (inflateInit2(&z, gzip_members ? kWindowBitsGzip : kWindowBitsAutoDetect) != Z_OK) {
    return Status::Internal("inflate: zlib could not initialize");
  }
  InflateGuard guard{&z};

  // Produce at most cap + 1 bytes in total: one byte past the cap proves the output is too large.
  const size_t chunk_size =
      std::min(kInflateChunkBytes, max_output == SIZE_MAX ? max_output : max_output + 1);
  std::unique_ptr<char[]> chunk(new char[chunk_size]);
  size_t produced_total = 0;
  size_t input_offset = 0;

  for (;;) {
    if (z.avail_in == 0 && input_offset < input.size()) {
      // avail_in is 32-bit: feed large inputs in pieces.
      const size_t piece = std::min<size_t>(input.size() - input_offset, UINT_MAX);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data() + input_offset));
      z.avail_in = static_cast<uInt>(piece);
      input_offset += piece;
    }
    const size_t room = max_output - produced_total;
    const size_t want = std::min(chunk_size, room == SIZE_MAX ? room : room + 1);
    z.next_out = reinterpret_cast<Bytef*>(chunk.get());
    z.avail_out = static_cast<uInt>(want);
    const int rc = inflate(&z, Z_NO_FLUSH);
    const size_t produced = want - z.avail_out;
    if (produced > room) {
      return Status::ResourceExhausted("inflate: output larger than " + std::to_string(max_output) +
                                       " bytes (the cap)");
    }
    sink->Append(chunk.get(), produced);
    produced_total += produced;

    switch (rc) {
      case Z_STREAM_END: {
        const size_t remaining = z.avail_in + (input.size() - input_offset);
        if (remaining == 0) return produced_total;
        // The unfed input follows z.next_in contiguously.
        if (gzip_members && StartsWithGzipMagic(input.substr(input.size() - remaining))) {
          if (inflateReset(&z) != Z_OK) return Status::Internal("inflate: inflateReset failed");
          continue;
        }
        return Status::Corruption("inflate: " + std::to_string(remaining) +
                                  " bytes of trailing garbage after the end of the stream");
      }
      case Z_OK:
        break;
      case Z_BUF_ERROR:
        // No progress possible: with output room left, that means the input ran out mid-stream.
        if (z.avail_in == 0 && input_offset == input.size()) {
          return Status::Corruption("inflate: truncated stream (input ended before the end of the stream)");
        }
        break;
      case Z_NEED_DICT:
        return Status::Corruption("inflate: stream needs a preset dictionary");
      case Z_DATA_ERROR:
        return Status::Corruption("inflate: " + ZlibMessage(z, rc));
      case Z_MEM_ERROR:
        return Status::Internal("inflate: zlib out of memory");
      default:
        return Status::Internal("inflate: " + ZlibMessage(z, rc));
    }
    if (produced == 0 && z.avail_in == 0 && input_offset == input.size()) {
      // Z_OK without output and without input left: zlib has consumed everything and wants more.
      return Status::Corruption("inflate: truncated stream (input ended before the end of the stream)");
    }
  }
}

}  // namespace

Result<std::string> InflateBounded(std::string_view input, size_t max_output, const InflateOptions& options) {
  std::string out;
  if (options.count_first) {
    NullSink counter;
    URLGUARD_ASSIGN_OR_RETURN(size_t size, InflatePass(input, max_output, options.gzip_members, &counter));
    out.reserve(size);
    ExactSink exact(&out);
    URLGUARD_ASSIGN_OR_RETURN(size_t filled, InflatePass(input, size, options.gzip_members, &exact));
    assert(filled == size);
    (void)filled;
    return out;
  }
  GrowingSink growing(&out, max_output);
  URLGUARD_RETURN_IF_ERROR(InflatePass(input, max_output, options.gzip_members, &growing).status());
  return out;
}

}  // namespace urlguard
