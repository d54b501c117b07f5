// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/bounded_inflate.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/largest_alloc.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::Compressible;
using ::urlguard::testing::RandomBytes;

// Compresses with zlib directly (the publisher's DeflateBytes lives in publish/, above sync/).
// window_bits 15: zlib format; 31: gzip; -15: raw deflate.
std::string Compress(std::string_view data, int window_bits, int level = 6) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(InflateBoundedTest, RoundTripsZlibAndGzip) {
  for (const std::string& data :
       {std::string(), std::string("x"), RandomBytes(100000, 1), Compressible(3 << 20)}) {
    for (int window_bits : {15, 31}) {
      const std::string packed = Compress(data, window_bits);
      Result<std::string> out = InflateBounded(packed, data.size());
      ASSERT_TRUE(out.ok()) << out.status().ToString() << " size " << data.size() << " wb " << window_bits;
      EXPECT_EQ(*out, data);
      // Never grown past the cap (an empty std::string already holds 15 bytes, the first growth 30).
      EXPECT_LE(out->capacity(), std::max<size_t>(data.size(), 30));
    }
  }
}

TEST(InflateBoundedTest, CapIsExact) {
  const std::string data = Compressible(200000);
  const std::string packed = Compress(data, 15);
  EXPECT_TRUE(InflateBounded(packed, data.size()).ok());
  EXPECT_TRUE(InflateBounded(packed, data.size() + 1).ok());
  Result<std::string> r = InflateBounded(packed, data.size() - 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(InflateBounded(packed, 0).status().code(), StatusCode::kResourceExhausted);
  // An empty payload fits a zero cap; a one-byte payload does not.
  EXPECT_TRUE(InflateBounded(Compress("", 15), 0).ok());
  EXPECT_EQ(InflateBounded(Compress("a", 15), 0).status().code(), StatusCode::kResourceExhausted);
}

TEST(InflateBoundedTest, EveryTruncationIsCorruption) {
  const std::string packed = Compress(Compressible(5000), 15);
  for (size_t len = 0; len < packed.size(); ++len) {
    Result<std::string> r = InflateBounded(std::string_view(packed).substr(0, len), 1 << 20);
    ASSERT_FALSE(r.ok()) << len;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << len << " " << r.status().ToString();
  }
  const std::string gz = Compress(Compressible(5000), 31);
  for (size_t len = 0; len < gz.size(); ++len) {
    Result<std::string> r = InflateBounded(std::string_view(gz).substr(0, len), 1 << 20);
    ASSERT_FALSE(r.ok()) << len;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << len;
  }
}

TEST(InflateBoundedTest, TrailingGarbageIsCorruption) {
  const std::string packed = Compress("payload", 15);
  Result<std::string> r = InflateBounded(packed + '\0', 1000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("trailing garbage"), std::string::npos);
  // A second gzip member counts as trailing data too.
  const std::string gz = Compress("payload", 31);
  r = InflateBounded(gz + gz, 1000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
}

// BoundedInflater fed in pieces of any size gives what InflateBounded gives for the whole input: the same bytes,
// or the same error (code and message), and an error sticks.
TEST(BoundedInflaterTest, PiecesOfAnySizeGiveWhatTheWholeInputGives) {
  auto in_pieces = [](std::string_view input, size_t piece, size_t cap, size_t expected) {
    BoundedInflater inflater(cap, expected);
    for (size_t at = 0; at < input.size(); at += piece) inflater.Feed(input.substr(at, piece));
    return inflater.Finish();
  };
  const std::string data = RandomBytes(70000, 7) + Compressible(200000);
  std::vector<std::pair<std::string, size_t>> cases;  // input, cap
  for (int window_bits : {15, 31}) {
    const std::string packed = Compress(data, window_bits);
    cases.push_back({packed, data.size()});
    cases.push_back({packed, data.size() - 1});                  // over the cap
    cases.push_back({packed.substr(0, packed.size() - 1), data.size()});  // truncated
    cases.push_back({packed.substr(0, packed.size() / 2), data.size()});
    cases.push_back({packed + "xyz", data.size()});               // trailing garbage
    cases.push_back({packed + packed, 2 * data.size()});          // a second stream is garbage here
    std::string damaged = packed;
    damaged[packed.size() / 3] = static_cast<char>(damaged[packed.size() / 3] ^ 0x55);
    cases.push_back({damaged, data.size()});
  }
  cases.push_back({"", 100});
  cases.push_back({Compress("", 15), 0});
  for (const auto& [input, cap] : cases) {
    const Result<std::string> whole = InflateBounded(input, cap);
    for (size_t piece : {size_t{1}, size_t{2}, size_t{7}, size_t{4096}, size_t{65536}, input.size() + 1}) {
      if (piece == 1 && input.size() > 20000) continue;  // byte by byte only for the short ones
      for (size_t expected : {size_t{0}, cap}) {
        const Result<std::string> got = in_pieces(input, piece, cap, expected);
        ASSERT_EQ(got.ok(), whole.ok()) << "piece " << piece << ": " << got.status().ToString() << " / "
                                        << whole.status().ToString();
        if (whole.ok()) {
          EXPECT_EQ(*got, *whole);
        } else {
          EXPECT_EQ(got.status().code(), whole.status().code()) << piece;
          EXPECT_EQ(got.status().message(), whole.status().message()) << piece;
        }
      }
      // The same through an output function: the same bytes, handed over in chunks, never more than the cap.
      std::string handed;
      size_t largest = 0;
      BoundedInflater to_output(cap, [&](std::string_view out) {
        handed.append(out);
        largest = std::max(largest, out.size());
        return Status::Ok();
      });
      for (size_t at = 0; at < input.size(); at += piece) to_output.Feed(std::string_view(input).substr(at, piece));
      const Result<size_t> n = to_output.FinishOutput();
      ASSERT_EQ(n.ok(), whole.ok()) << "piece " << piece << ": " << n.status().ToString();
      EXPECT_LE(handed.size(), cap);
      EXPECT_LE(largest, kInflateChunkBytes);
      if (whole.ok()) {
        EXPECT_EQ(*n, whole->size());
        EXPECT_EQ(handed, *whole);
      } else {
        EXPECT_EQ(n.status().code(), whole.status().code()) << piece;
        EXPECT_EQ(n.status().message(), whole.status().message()) << piece;
      }
    }
  }
  // After an error, more input changes nothing.
  BoundedInflater inflater(10, 0);
  inflater.Feed(Compress(data, 15));
  EXPECT_TRUE(inflater.failed());
  inflater.Feed("more");
  EXPECT_EQ(inflater.Finish().status().code(), StatusCode::kResourceExhausted);
}

// The output function's first error (a full disk while a snapshot is written) is what FinishOutput returns, even
// for a stream that is also damaged later; nothing is inflated or handed over after it.
TEST(BoundedInflaterTest, TheOutputsErrorSticks) {
  const std::string data = RandomBytes(300000, 11);
  std::string packed = Compress(data, 15);
  packed[packed.size() - 10] = static_cast<char>(packed[packed.size() - 10] ^ 0x55);  // damaged near its end
  int calls = 0;
  BoundedInflater inflater(data.size(), [&](std::string_view) {
    return ++calls == 2 ? Status::IoError("write: no space left on device") : Status::Ok();
  });
  for (size_t at = 0; at < packed.size(); at += 1000) inflater.Feed(std::string_view(packed).substr(at, 1000));
  EXPECT_TRUE(inflater.failed());
  EXPECT_EQ(calls, 2);
  const Result<size_t> n = inflater.FinishOutput();
  EXPECT_EQ(n.status().code(), StatusCode::kIoError);
  EXPECT_EQ(n.status().message(), "write: no space left on device");
}

// Spec (RFC 1952 §2.2): "A gzip file consists of a series of 'members'". `cat a.gz b.gz` is one file.
TEST(InflateBoundedTest, GzipMembersOptionReadsEveryMember) {
  const InflateOptions members{.gzip_members = true};
  const std::string first = "first member\n";
  const std::string second = Compressible(100000);  // spans several output chunks
  const std::string two = Compress(first, 31) + Compress(second, 31);
  for (bool count_first : {false, true}) {
    SCOPED_TRACE(count_first);
    InflateOptions o = members;
    o.count_first = count_first;
    Result<std::string> r = InflateBounded(two, 1 << 20, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, first + second);
    // The cap counts the output of all members together.
    EXPECT_TRUE(InflateBounded(two, first.size() + second.size(), o).ok());
    r = InflateBounded(two, first.size() + second.size() - 1, o);
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
    // An empty member, and three members.
    r = InflateBounded(Compress("", 31) + two + Compress("x", 31), 1 << 20, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(*r, first + second + "x");
    // Each member is checked: a truncated second member, a bad CRC in it, garbage after the last one.
    std::string bad_crc = two;
    bad_crc[bad_crc.size() - 5] ^= 1;
    EXPECT_EQ(InflateBounded(bad_crc, 1 << 20, o).status().code(), StatusCode::kCorruption);
    EXPECT_EQ(InflateBounded(two.substr(0, two.size() - 3), 1 << 20, o).status().code(),
              StatusCode::kCorruption);
    EXPECT_EQ(InflateBounded(two + "junk", 1 << 20, o).status().code(), StatusCode::kCorruption);
    EXPECT_EQ(InflateBounded(two + "\x1f", 1 << 20, o).status().code(), StatusCode::kCorruption);
    // gzip only: a zlib stream is refused.
    EXPECT_EQ(InflateBounded(Compress(first, 15), 1 << 20, o).status().code(), StatusCode::kCorruption);
  }
  // Without the option the second member is trailing garbage (TrailingGarbageIsCorruption).
  EXPECT_EQ(InflateBounded(two, 1 << 20).status().code(), StatusCode::kCorruption);
}

TEST(InflateBoundedTest, CountFirstAllocatesTheExactSize) {
  const std::string data = Compressible(300000);
  const std::string packed = Compress(data, 15);
  Result<std::string> r = InflateBounded(packed, size_t{1} << 30, InflateOptions{.count_first = true});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, data);
  // Exact: the buffer was reserved at the output size, not grown towards the (large) cap.
  EXPECT_LT(r->capacity(), data.size() + 64);
  EXPECT_EQ(InflateBounded(packed, data.size() - 1, InflateOptions{.count_first = true}).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(InflateBoundedTest, BadStreamsAreCorruption) {
  const std::string data = Compressible(10000);
  // Checksum: flip a bit of the Adler-32 (zlib) and of the CRC-32 (gzip).
  std::string packed = Compress(data, 15);
  packed.back() ^= 1;
  EXPECT_EQ(InflateBounded(packed, 1 << 20).status().code(), StatusCode::kCorruption);
  std::string gz = Compress(data, 31);
  gz[gz.size() - 8] ^= 1;
  EXPECT_EQ(InflateBounded(gz, 1 << 20).status().code(), StatusCode::kCorruption);
  // Raw deflate (no header), garbage and an empty input.
  EXPECT_EQ(InflateBounded(Compress(data, -15), 1 << 20).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(InflateBounded(RandomBytes(1000, 3), 1 << 20).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(InflateBounded("", 1 << 20).status().code(), StatusCode::kCorruption);
  // A stream that needs a preset dictionary.
  z_stream z{};
  ASSERT_EQ(deflateInit(&z, 6), Z_OK);
  const char dict[] = "evil.example";
  ASSERT_EQ(deflateSetDictionary(&z, reinterpret_cast<const Bytef*>(dict), sizeof(dict) - 1), Z_OK);
  std::string with_dict(1000, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = 100;
  z.next_out = reinterpret_cast<Bytef*>(with_dict.data());
  z.avail_out = static_cast<uInt>(with_dict.size());
  ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  with_dict.resize(z.total_out);
  deflateEnd(&z);
  Result<std::string> r = InflateBounded(with_dict, 1 << 20);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("dictionary"), std::string::npos);
  // Random garbage with a valid zlib header: never a crash, never an ok result past the cap.
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string junk = "\x78\x9c" + RandomBytes(rng() % 200, rng());
    Result<std::string> j = InflateBounded(junk, 4096);
    if (j.ok()) {
      EXPECT_LE(j->size(), 4096u);
    }
  }
}

// Runs one deflate() call over `in` with `flush` and returns what it wrote.
std::string DeflateStep(z_stream* z, const std::string& in, int flush) {
  std::string out;
  std::string buf(1 << 16, '\0');
  z->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z->avail_in = static_cast<uInt>(in.size());
  int rc;
  do {
    z->next_out = reinterpret_cast<Bytef*>(buf.data());
    z->avail_out = static_cast<uInt>(buf.size());
    rc = deflate(z, flush);
    EXPECT_NE(rc, Z_STREAM_ERROR);
    out.append(buf.data(), buf.size() - z->avail_out);
  } while (z->avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
  return out;
}

// `pieces` MiB of zeros as one valid zlib stream of about pieces KB, without compressing them all (that
// takes seconds per GiB): after a Z_FULL_FLUSH the compressor starts afresh, so every piece after the first
// compresses to the same bytes. Those are repeated, and the Adler-32 trailer is recomputed for the whole
// output with adler32_combine.
std::string ZeroBomb(size_t pieces) {
  const std::string zeros(size_t{1} << 20, '\0');
  z_stream z{};
  EXPECT_EQ(deflateInit(&z, 9), Z_OK);
  const std::string first = DeflateStep(&z, zeros, Z_FULL_FLUSH);  // zlib header + piece 1
  const std::string second = DeflateStep(&z, zeros, Z_FULL_FLUSH);
  const std::string third = DeflateStep(&z, zeros, Z_FULL_FLUSH);
  std::string tail = DeflateStep(&z, "", Z_FINISH);  // final empty block + Adler-32 (of 3 pieces)
  deflateEnd(&z);
  EXPECT_EQ(second, third);  // the premise of the repetition
  EXPECT_GE(tail.size(), 4u);
  std::string bomb = first;
  for (size_t i = 1; i < pieces; ++i) bomb += second;
  const uLong piece_adler = adler32(adler32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(zeros.data()),
                                    static_cast<uInt>(zeros.size()));
  uLong total = piece_adler;
  for (size_t i = 1; i < pieces; ++i)
    total = adler32_combine(total, piece_adler, static_cast<z_off_t>(zeros.size()));
  for (int i = 0; i < 4; ++i) tail[tail.size() - 4 + i] = static_cast<char>((total >> (24 - 8 * i)) & 0xff);
  return bomb + tail;
}

TEST(InflateBoundedTest, ZeroBombConstructionIsAValidStream) {
  // The construction below, checked end to end at a size that is cheap to inflate fully.
  const std::string small = ZeroBomb(5);
  Result<std::string> r = InflateBounded(small, size_t{5} << 20);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, std::string(size_t{5} << 20, '\0'));
}

TEST(InflateBoundedTest, DecompressionBombIsRefusedAtTheCap) {
  // 1 GiB of zeros in about 1 MB (deflate's expansion limit is ~1032:1).
  const std::string bomb = ZeroBomb(1024);
  ASSERT_LT(bomb.size(), size_t{2} << 20);

  constexpr size_t kCap = size_t{64} << 20;
  size_t largest = 0;
  Result<std::string> r =
      testing::TrackLargestAllocation(&largest, [&] { return InflateBounded(bomb, kCap); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  // Memory: the output string (at most the cap, plus its terminator) and one chunk.
  EXPECT_LE(largest, kCap + 1);
  EXPECT_GT(largest, kCap / 2);  // the tracker did see the output buffer
}

}  // namespace
}  // namespace urlguard
