// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/set_digest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace urlguard {
namespace {

// The element hash and the digest are part of manifest format 2: pinned. The values were computed
// independently of this code by python3 with Debian's shared libxxhash 0.8.1
// (ctypes: CDLL("libxxhash.so.0").XXH3_64bits_withSeed(struct.pack("<Q", fp), 8, 0x7567736574000000 | kind))
// and hashlib.sha256 over the 98-byte string of docs/manifest-format.md.
TEST(SetDigest, ElementHashIsPinned) {
  EXPECT_EQ(SetElementHash(LayerKind::kDomain, 0), 0xb8ebd4649b458890ull);
  EXPECT_EQ(SetElementHash(LayerKind::kUrl, 12345), 0xcfebe4e6377251a4ull);
  EXPECT_EQ(SetElementHash(LayerKind::kIp, (uint64_t{1} << 40) - 1), 0xbf8c38bc7fdca4f4ull);
}

TEST(SetDigest, DigestIsPinned) {
  SetDigestInput in;
  in.universe = {uint64_t{1} << 20, uint64_t{1} << 24, 0};
  for (uint64_t f : {3, 17, 1000}) AddToSetSum(&in.layers[0], LayerKind::kDomain, f);
  AddToSetSum(&in.layers[1], LayerKind::kUrl, 5);
  EXPECT_EQ(ToHex(SetDigest(in)), "bc44466e4ff409a17bf9ebdd874ac12b062d074583f4d671aac8e39e8c5718a5");
}

TEST(SetDigest, EveryFieldCounts) {
  SetDigestInput base;
  base.universe = {100, 200, 300};
  AddToSetSum(&base.layers[1], LayerKind::kUrl, 7);
  const Sha256Digest d = SetDigest(base);
  for (int k = 0; k < kLayerKindCount; ++k) {
    SetDigestInput a = base;
    a.universe[k] += 1;
    EXPECT_NE(SetDigest(a), d);
    SetDigestInput b = base;
    b.layers[k].count += 1;
    EXPECT_NE(SetDigest(b), d);
    SetDigestInput c = base;
    c.layers[k].sum += 1;
    EXPECT_NE(SetDigest(c), d);
  }
  // The same fingerprint in another layer hashes differently (the kind is in the seed).
  EXPECT_NE(SetElementHash(LayerKind::kDomain, 7), SetElementHash(LayerKind::kUrl, 7));
}

// Incremental maintenance: any interleaving of adds and removes that ends in the same set gives the sums
// computed from scratch over that set.
TEST(SetDigest, IncrementalEqualsFromScratch) {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 20; ++round) {
    std::set<uint64_t> set;
    LayerSetSum running;
    for (int op = 0; op < 2000; ++op) {
      const uint64_t f = rng() % 500;
      if (set.count(f) != 0) {
        set.erase(f);
        RemoveFromSetSum(&running, LayerKind::kUrl, f);
      } else {
        set.insert(f);
        AddToSetSum(&running, LayerKind::kUrl, f);
      }
    }
    std::vector<uint64_t> shuffled(set.begin(), set.end());
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    LayerSetSum scratch;
    for (uint64_t f : shuffled) AddToSetSum(&scratch, LayerKind::kUrl, f);
    EXPECT_EQ(running, scratch);
    EXPECT_EQ(running.count, set.size());
  }
}

}  // namespace
}  // namespace urlguard
