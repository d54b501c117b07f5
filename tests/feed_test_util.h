// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Feed bodies shared by the feed tests (feeds/feeds_test.cc, publish/feed_update_test.cc,
// tests/feed_update_test.cc, tests/publish_guard_test.cc): a plain feed of generated domains, and gzip.
#ifndef URLGUARD_TESTS_FEED_TEST_UTIL_H_
#define URLGUARD_TESTS_FEED_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <string_view>

namespace urlguard::testing {

// A plain feed of `n` domains, "dFROM.example" .. "d(FROM+n-1).example", one a line.
inline std::string Domains(int n, int from = 0) {
  std::string s;
  for (int i = from; i < from + n; ++i) s += "d" + std::to_string(i) + ".example\n";
  return s;
}

// `data` as one gzip member (RFC 1952), as an upstream or a --input file would send it.
inline std::string Gzip(std::string_view data) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_FEED_TEST_UTIL_H_
