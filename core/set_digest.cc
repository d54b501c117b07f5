// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/set_digest.h"

// Header-only use of Debian's libxxhash-dev, as core/key_hash.cc (the 8-byte input path inlines).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <string>

#include "core/byte_io.h"
#include "core/fingerprint_set.h"
#include "core/snapshot.h"

static_assert(XXH_VERSION_NUMBER >= 800, "XXH3's output is frozen from xxHash 0.8.0 on");

namespace urlguard {

uint64_t SetElementHash(LayerKind layer, uint64_t fp) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(fp >> (8 * i));
  return XXH3_64bits_withSeed(bytes, sizeof(bytes), kSetElementSeed | static_cast<uint64_t>(layer));
}

Sha256Digest SetDigest(const SetDigestInput& in) {
  // Spec (manifest-format.md, state_digest): the domain string, its NUL, then per kind 0..2 the triple.
  static constexpr char kDomain[] = "urlguard set digest v1";  // sizeof includes the 0x00
  std::string buf(kDomain, sizeof(kDomain));
  for (int k = 0; k < kLayerKindCount; ++k) {
    buf.push_back(static_cast<char>(k));
    AppendLE64(&buf, in.universe[k]);
    AppendLE64(&buf, in.layers[k].count);
    AppendLE64(&buf, in.layers[k].sum);
  }
  return Sha256(buf);
}

SetDigestInput SetDigestInputOf(const SnapshotView& snapshot) {
  SetDigestInput in;
  for (int li = 0; li < kLayerKindCount; ++li) {
    const LayerKind kind = static_cast<LayerKind>(li);
    const LayerView* layer = snapshot.layer(kind);
    if (layer == nullptr || layer->filter != FilterKind::kFingerprintArray) continue;
    in.universe[li] = layer->fingerprints.universe();
    FingerprintSetCursor cursor(layer->fingerprints);
    uint64_t fp = 0;
    while (cursor.Next(&fp)) AddToSetSum(&in.layers[li], kind, fp);
  }
  return in;
}

}  // namespace urlguard
