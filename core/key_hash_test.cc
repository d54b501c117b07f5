// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/key_hash.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/sha256.h"

namespace urlguard {
namespace {

// The key hash is part of the snapshot format (version 2): these values are pinned so that a change of
// library, seed or input bytes cannot pass unnoticed. They are XXH3_64bits_withSeed(expression, 0x75726c6775617264)
// as computed by Debian's shared libxxhash 0.8.1 (python3 ctypes: CDLL("libxxhash.so.0").XXH3_64bits_withSeed),
// independently of the inlined copy core/key_hash.cc compiles.
TEST(KeyHash, Xxh3ValuesArePinned) {
  EXPECT_EQ(Xxh3Key(""), 0x8868cbc0b55efd0cull);
  EXPECT_EQ(Xxh3Key("evil.example/"), 0x80018a7bf46b0e51ull);
  EXPECT_EQ(Xxh3Key("evil.example/login.php?x=1"), 0x723e9703898b2e85ull);
  EXPECT_EQ(Xxh3Key("203.0.113.0/24"), 0xb45dbdfacad3281bull);
  // Long expressions take XXH3's other code paths (129-240 bytes, and over 240).
  EXPECT_EQ(Xxh3Key(std::string(200, 'a')), 0xe7b33015d7a22607ull);
  EXPECT_EQ(Xxh3Key(std::string(1000, 'b')), 0x61cf2e195dbe8749ull);
}

TEST(KeyHash, KindsAndNames) {
  EXPECT_EQ(KeyHash(KeyHashKind::kXxh3, "a.example/"), Xxh3Key("a.example/"));
  EXPECT_EQ(KeyHash(KeyHashKind::kSha256Prefix, "a.example/"), DigestPrefix64(Sha256("a.example/")));
  EXPECT_STREQ(KeyHashKindName(KeyHashKind::kXxh3), "xxh3-64");
  EXPECT_STREQ(KeyHashKindName(KeyHashKind::kSha256Prefix), "sha256-prefix");
}

// The batch form gives exactly Xxh3Key of each substring (and so the pinned values above), for every length
// class of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, over 240 bytes).
TEST(KeyHash, SubstringBatchEqualsOneByOne) {
  std::string buffer;
  for (int i = 0; i < 600; ++i) buffer.push_back(static_cast<char>('a' + i * 7 % 26));
  std::vector<uint32_t> begin, end;
  for (uint32_t b : {0u, 1u, 5u, 77u}) {
    for (uint32_t len : {0u, 1u, 3u, 4u, 8u, 9u, 16u, 17u, 100u, 128u, 129u, 240u, 241u, 500u}) {
      begin.push_back(b);
      end.push_back(b + len);
    }
  }
  std::vector<uint64_t> keys(begin.size(), 0);
  Xxh3KeysOfSubstrings(buffer.data(), begin.data(), end.data(), begin.size(), keys.data());
  for (size_t i = 0; i < begin.size(); ++i) {
    EXPECT_EQ(keys[i], Xxh3Key(std::string_view(buffer).substr(begin[i], end[i] - begin[i]))) << i;
  }
  const uint32_t b0 = 0, e0 = 26;
  const std::string doc = "evil.example/login.php?x=1";
  uint64_t one = 0;
  Xxh3KeysOfSubstrings(doc.data(), &b0, &e0, 1, &one);
  EXPECT_EQ(one, 0x723e9703898b2e85ull);
}

// Fingerprints take the high bits of h * U: a sanity check that the seeded hash spreads short, similar
// expressions over the whole 64-bit range (no collisions among 100 k, top byte takes all 256 values).
TEST(KeyHash, SpreadsSimilarExpressions) {
  std::set<uint64_t> seen;
  std::set<uint8_t> top;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t h = Xxh3Key("host" + std::to_string(i) + ".example/");
    seen.insert(h);
    top.insert(static_cast<uint8_t>(h >> 56));
  }
  EXPECT_EQ(seen.size(), 100000u);
  EXPECT_EQ(top.size(), 256u);
}

}  // namespace
}  // namespace urlguard
