// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/key_hash.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

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
