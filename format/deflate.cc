// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/deflate.h"

#include <zlib.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace urlguard {

namespace {

[[noreturn]] void DeflateFailed(int rc) {
  std::fprintf(stderr, "urlguard: zlib deflate failed (%d): out of memory\n", rc);
  std::abort();
}

}  // namespace

std::string DeflateBytes(std::string_view data, int level) {
  assert(level == Z_DEFAULT_COMPRESSION || (level >= 0 && level <= 9));
  z_stream z{};
  int rc = deflateInit(&z, level);
  if (rc != Z_OK) DeflateFailed(rc);

  std::string out;
  // deflateBound is an upper bound for a single deflate(Z_FINISH) call: usually one allocation suffices.
  out.resize(deflateBound(&z, static_cast<uLong>(data.size())));
  size_t in_offset = 0;
  size_t out_offset = 0;
  do {
    if (z.avail_in == 0 && in_offset < data.size()) {
      const size_t piece = std::min<size_t>(data.size() - in_offset, UINT_MAX);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_offset));
      z.avail_in = static_cast<uInt>(piece);
      in_offset += piece;
    }
    if (out_offset == out.size()) out.resize(out.size() * 2 + 64);
    const size_t room = std::min<size_t>(out.size() - out_offset, UINT_MAX);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + out_offset);
    z.avail_out = static_cast<uInt>(room);
    const int flush = in_offset == data.size() ? Z_FINISH : Z_NO_FLUSH;
    rc = deflate(&z, flush);
    out_offset += room - z.avail_out;
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      deflateEnd(&z);
      DeflateFailed(rc);
    }
  } while (rc != Z_STREAM_END);
  deflateEnd(&z);
  out.resize(out_offset);
  return out;
}

}  // namespace urlguard
