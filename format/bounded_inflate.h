// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Bounded decompression of downloaded update files (docs/architecture.md §5: "download with the signed size as hard
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
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "urlguard/status.h"

namespace urlguard {

// Output is produced (and checked against the cap) in pieces of at most this many bytes.
constexpr size_t kInflateChunkBytes = size_t{64} << 10;

// How InflateBounded reads its input and spends memory.
struct InflateOptions {
  // False: one complete zlib stream (RFC 1950) or one gzip member (RFC 1952), told apart by their headers;
  // any byte after its end is refused. True: gzip only, one or more members back to back (Spec, RFC 1952
  // §2.2: "A gzip file consists of a series of 'members' (compressed data sets)"), as `gzip` and `cat a.gz
  // b.gz` write them; the output is the members' outputs concatenated, and each member's CRC-32 and length
  // are checked. Feeds downloaded from the web come like that.
  bool gzip_members = false;
  // False: one pass; the output buffer grows geometrically up to the cap. True: two passes: the first only
  // counts the output (refusing anything over the cap while keeping none of it), the second fills a buffer
  // of exactly that size. Peak memory is then the output size itself, whatever the cap, at twice the CPU
  // (about 1 s per GiB): for large caps, where a refused bomb must not have allocated the cap.
  bool count_first = false;
};

// Decompresses `input` as `options` says. Returns the output, at most `max_output` bytes. Fails with:
//   kResourceExhausted  the output would be larger than max_output (detected after at most max_output + 1
//                       bytes have been produced; the result string never grows beyond max_output bytes);
//   kCorruption         bad header, bad data, bad checksum (Adler-32 / CRC-32), a stream that ends early
//                       (truncated or empty input), a preset dictionary, or any byte after the end of the
//                       stream (trailing garbage; without gzip_members also a second gzip member);
//   kInternal           zlib could not allocate its state.
// Thread-safe: no shared state.
Result<std::string> InflateBounded(std::string_view input, size_t max_output,
                                   const InflateOptions& options = {});

// InflateBounded for input that arrives in pieces (a download, as libcurl hands it over), so the compressed bytes
// are never held whole: one zlib stream or one gzip member, as InflateBounded with default options. Feed() takes
// the pieces in order; the first error sticks (later pieces are ignored; failed() tells) and Finish() returns it,
// with InflateBounded's codes and messages: what was fed must be exactly one complete stream producing at most
// `max_output` bytes. `expected_output` (a signed inflated size, when the caller knows it) sizes the output buffer
// at once, capped by max_output. Not thread-safe.
//
// With an `output` function instead, nothing is kept: each piece of output (at most kInflateChunkBytes) goes to it
// as it is produced (a file being written, so a 2.5 GB snapshot never sits in memory), still never more than
// max_output bytes in all; the first error it returns sticks like an inflate error (nothing more is inflated), and
// FinishOutput() returns it, else the byte count. Finish() is for the first form, FinishOutput() for this one.
class BoundedInflater {
 public:
  explicit BoundedInflater(size_t max_output, size_t expected_output = 0);
  BoundedInflater(size_t max_output, std::function<Status(std::string_view)> output);
  ~BoundedInflater();
  BoundedInflater(const BoundedInflater&) = delete;
  BoundedInflater& operator=(const BoundedInflater&) = delete;

  void Feed(std::string_view piece);
  bool failed() const;
  // The output; call once.
  Result<std::string> Finish();
  // The number of bytes handed to `output`, or the first error (the output's, else the inflate's); call once.
  Result<size_t> FinishOutput();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_BOUNDED_INFLATE_H_
