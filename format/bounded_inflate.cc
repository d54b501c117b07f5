// Copyright urlguard authors.
#include "format/bounded_inflate.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <memory>

namespace urlguard {

namespace {

// windowBits 15 + 32: a 32 KiB window, and zlib detects the zlib or gzip header by itself.
constexpr int kWindowBitsAutoDetect = 15 + 32;

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

// Appends `n` bytes to *out (out->size() + n <= cap), growing its capacity geometrically but never beyond
// `cap`. std::string::reserve on a non-empty string may round a request up to twice the old capacity, so
// the growth goes through a fresh string, whose reserve is exact (for requests of at least 30 bytes).
void AppendCapped(std::string* out, const char* data, size_t n, size_t cap) {
  const size_t need = out->size() + n;
  if (need > out->capacity()) {
    const size_t doubled = out->capacity() > cap / 2 ? cap : out->capacity() * 2;
    std::string bigger;
    bigger.reserve(std::max(need, doubled));
    bigger.append(*out);
    out->swap(bigger);
  }
  out->append(data, n);
}

}  // namespace

Result<std::string> InflateBounded(std::string_view input, size_t max_output) {
  z_stream z{};
  if (inflateInit2(&z, kWindowBitsAutoDetect) != Z_OK) {
    return Status::Internal("inflate: zlib could not initialize");
  }
  InflateGuard guard{&z};

  // Produce at most cap + 1 bytes in total: one byte past the cap proves the output is too large.
  const size_t chunk_size =
      std::min(kInflateChunkBytes, max_output == SIZE_MAX ? max_output : max_output + 1);
  std::unique_ptr<char[]> chunk(new char[chunk_size]);
  std::string out;
  size_t input_offset = 0;

  for (;;) {
    if (z.avail_in == 0 && input_offset < input.size()) {
      // avail_in is 32-bit: feed large inputs in pieces.
      const size_t piece = std::min<size_t>(input.size() - input_offset, UINT_MAX);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data() + input_offset));
      z.avail_in = static_cast<uInt>(piece);
      input_offset += piece;
    }
    const size_t room = max_output - out.size();  // out.size() <= max_output always
    const size_t want = std::min(chunk_size, room == SIZE_MAX ? room : room + 1);
    z.next_out = reinterpret_cast<Bytef*>(chunk.get());
    z.avail_out = static_cast<uInt>(want);
    const int rc = inflate(&z, Z_NO_FLUSH);
    const size_t produced = want - z.avail_out;
    if (produced > room) {
      return Status::ResourceExhausted("inflate: output exceeds the cap of " + std::to_string(max_output) +
                                       " bytes");
    }
    AppendCapped(&out, chunk.get(), produced, max_output);

    switch (rc) {
      case Z_STREAM_END:
        if (z.avail_in != 0 || input_offset != input.size()) {
          return Status::Corruption("inflate: " + std::to_string(z.avail_in + (input.size() - input_offset)) +
                                    " bytes of trailing garbage after the end of the stream");
        }
        return out;
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

}  // namespace urlguard
