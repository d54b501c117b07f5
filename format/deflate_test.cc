// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/deflate.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::Compressible;
using ::urlguard::testing::RandomBytes;

// Inflates with zlib's one-shot uncompress() (the client's bounded inflate lives in sync/, beside publish/).
std::string Uncompress(const std::string& packed, size_t size) {
  std::string out(size, '\0');
  uLongf out_len = static_cast<uLongf>(size);
  const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &out_len,
                            reinterpret_cast<const Bytef*>(packed.data()), static_cast<uLong>(packed.size()));
  EXPECT_EQ(rc, Z_OK);
  EXPECT_EQ(out_len, size);
  return out;
}

TEST(DeflateBytesTest, RoundTripsAtEveryLevel) {
  for (const std::string& data :
       {std::string(), std::string("a"), RandomBytes(70000, 1), Compressible(1 << 20)}) {
    for (int level : {Z_DEFAULT_COMPRESSION, 0, 1, 6, 9}) {
      const std::string packed = DeflateBytes(data, level);
      ASSERT_GE(packed.size(), 2u + 4u);  // zlib header and Adler-32 trailer
      EXPECT_EQ(static_cast<uint8_t>(packed[0]), 0x78) << "zlib header, 32 KiB window";
      EXPECT_EQ(Uncompress(packed, data.size()), data) << "level " << level << " size " << data.size();
    }
  }
}

TEST(DeflateBytesTest, CompressesAndIsDeterministic) {
  const std::string data = Compressible(1 << 20);
  const std::string best = DeflateBytes(data, 9);
  EXPECT_LT(best.size(), data.size() / 5);
  EXPECT_EQ(DeflateBytes(data, 9), best);
  EXPECT_GE(DeflateBytes(data, 0).size(), data.size());  // level 0 stores
  // Incompressible data grows only by the framing.
  const std::string noise = RandomBytes(100000, 2);
  EXPECT_LT(DeflateBytes(noise, 9).size(), noise.size() + noise.size() / 100 + 64);
}

}  // namespace
}  // namespace urlguard
