// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The set digest: a digest of a list's fingerprint sets that manifest format 2 signs (docs/manifest-format.md,
// "Format 2"), computable incrementally.
//
// Why not the snapshot's SHA-256: with range diffs (core/diff_codec.h, version 2) a client reaches version V
// from many different versions, and the publisher writes a snapshot only at checkpoints; it cannot afford to
// hash the whole state (O(N)) at every minute-version. A multiset hash does not need to: each layer keeps the
// count of its fingerprints and the sum (mod 2^64) of a 64-bit hash of each; adding or removing a fingerprint
// costs one hash and one addition, in any order. The client computes the same sums while its merged
// fingerprints stream out, and the manifest's signature covers SHA-256 over the three (universe, count, sum)
// triples. The sum is not collision resistant against someone who can choose fingerprints freely (the
// signature on the diff files' SHA-256 is what authenticates the bytes); it catches a wrong merge: a client
// whose state differs from the publisher's by any set of fingerprints has a different sum except with
// probability about 2^-64 for a non-adversarial difference.
//
// Changes the manifest format: the element hash, its seed and the digest's byte string are pinned by
// core/set_digest_test.cc.
#ifndef URLGUARD_CORE_SET_DIGEST_H_
#define URLGUARD_CORE_SET_DIGEST_H_

#include <array>
#include <cstdint>

#include "core/layer_kind.h"
#include "core/sha256.h"

namespace urlguard {

// The count and the hash sum of one layer's fingerprint set. Empty layer: {0, 0}.
struct LayerSetSum {
  uint64_t count = 0;
  uint64_t sum = 0;  // sum of SetElementHash(layer, fp) over the set, mod 2^64

  bool operator==(const LayerSetSum&) const = default;
};

// Seed of SetElementHash: "ugset" followed by three zero bytes, OR-ed with the layer kind.
constexpr uint64_t kSetElementSeed = 0x7567736574000000ull;

// XXH3_64bits_withSeed(the 8 little-endian bytes of fp, seed = kSetElementSeed | kind). Thread-safe, pure.
uint64_t SetElementHash(LayerKind layer, uint64_t fp);

// Adding fingerprint fp to layer k: count += 1, sum += SetElementHash(k, fp); removing: count -= 1,
// sum -= SetElementHash(k, fp) (both mod 2^64). The caller guarantees set semantics (adds a value absent,
// removes a value present).
inline void AddToSetSum(LayerSetSum* s, LayerKind layer, uint64_t fp) {
  s->count += 1;
  s->sum += SetElementHash(layer, fp);
}
inline void RemoveFromSetSum(LayerSetSum* s, LayerKind layer, uint64_t fp) {
  s->count -= 1;
  s->sum -= SetElementHash(layer, fp);
}

// The sums and universes of all three layers, indexed by LayerKind value. A layer a list does not have is
// {count 0, sum 0} with universe 0 (as the snapshot records it).
struct SetDigestInput {
  std::array<LayerSetSum, kLayerKindCount> layers{};
  std::array<uint64_t, kLayerKindCount> universe{};

  bool operator==(const SetDigestInput&) const = default;
};

// SHA-256("urlguard set digest v1" 0x00 || for kind 0..2: u8 kind, u64 universe, u64 count, u64 sum), the
// integers little-endian: 23 + 3 * 25 = 98 bytes hashed. Thread-safe, pure.
Sha256Digest SetDigest(const SetDigestInput& in);

class SnapshotView;
// The digest's inputs of a snapshot: per fingerprint-array layer its universe and sums, a linear pass over the
// fingerprints. A Bloom-filter layer (no fingerprint set) and an absent one count as {0, 0} with universe 0. What
// the client checks a rebuilt snapshot with and what a checkpoint signs (docs/versions.md).
SetDigestInput SetDigestInputOf(const SnapshotView& snapshot);

}  // namespace urlguard

#endif  // URLGUARD_CORE_SET_DIGEST_H_
