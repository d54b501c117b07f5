// Copyright urlguard authors.
//
// Bounded decompression of downloaded update files (ARCHITECTURE §5: "download with the signed size as hard
// cap -> check SHA-256 -> bounded inflate").
//
// A few hundred kilobytes of deflate can expand to gigabytes (a "decompression bomb": deflate reaches about
// 1032:1 on runs of one byte). The signed manifest bounds the compressed size; this bounds the output: it
// inflates chunk by chunk and stops with kResourceExhausted as soon as the output would exceed the cap. No
// allocation is larger than the cap: the output buffer grows geometrically up to exactly the cap, next to
// one chunk (kInflateChunkBytes) and zlib's state (~40 KiB with its 32 KiB window), whatever the input.
// (While the buffer grows, the previous one, at most half as large, is briefly alive too.)
#ifndef URLGUARD_FORMAT_BOUNDED_INFLATE_H_
#define URLGUARD_FORMAT_BOUNDED_INFLATE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "urlguard/status.h"

namespace urlguard {

// Output is produced (and checked against the cap) in pieces of at most this many bytes.
constexpr size_t kInflateChunkBytes = size_t{64} << 10;

// Decompresses one complete zlib stream (RFC 1950) or one gzip member (RFC 1952), told apart by their
// headers. Returns the output, at most `max_output` bytes. Fails with:
//   kResourceExhausted  the output would exceed max_output (detected after at most max_output + 1 bytes
//                       have been produced; the result string never grows beyond max_output bytes);
//   kCorruption         bad header, bad data, bad checksum (Adler-32 / CRC-32), a stream that ends early
//                       (truncated or empty input), a preset dictionary, or any byte after the end of the
//                       stream (trailing garbage, including a second gzip member);
//   kInternal           zlib could not allocate its state.
// Thread-safe: no shared state.
Result<std::string> InflateBounded(std::string_view zlib_or_gzip_bytes, size_t max_output);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_BOUNDED_INFLATE_H_
