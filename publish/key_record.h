// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// KeyRecord: one entry of a list as the publisher sorts, spills and merges it, in a fixed 56 bytes (a string-free
// record is what lets the publisher hold a budget: docs/repository-layout.md, "memory budget"). Two orders:
// ByLayerKey (layer, local key, SHA-256), the snapshot's and the private state file's; BySha (SHA-256, layer),
// the full-hash file's. The same entry (layer and SHA-256) listed twice is one record: the one from the later
// input position (`seq`) wins, so a threat name given again later replaces the earlier one.
//
// Spill run files hold these records back to back in host byte order (little-endian on every supported
// platform; static_assert below); they are scratch files that never outlive a run.
#ifndef URLGUARD_PUBLISH_KEY_RECORD_H_
#define URLGUARD_PUBLISH_KEY_RECORD_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/key_hash.h"
#include "core/layer_kind.h"
#include "core/sha256.h"

namespace urlguard {

static_assert(std::endian::native == std::endian::little, "spill files are little-endian records");

struct KeyRecord {
  uint64_t key = 0;         // the layer's local key (LocalKeyFor)
  uint8_t sha256[32] = {};  // SHA-256 of the entry's expression (url/entry.h)
  uint64_t seq = 0;         // input position, feed index << 40 | line; larger wins among duplicates
  uint8_t layer = 0;        // LayerKind
  uint8_t ipv6 = 0;         // ip layer: 1 for an IPv6 range
  uint8_t prefix_length = 0;  // ip layer: 0-32 or 0-128
  uint8_t reserved = 0;
  uint16_t threat = 0;      // index into the run's threat table
  uint16_t reserved2 = 0;
};
static_assert(sizeof(KeyRecord) == 56, "KeyRecord is a spill format: 56 bytes");

// The key hash of the snapshots the publisher writes (core/key_hash.h): snapshot format 2.
constexpr KeyHashKind kPublisherKeyHash = KeyHashKind::kXxh3;

// The local key of an entry: what the snapshot's filters are built from. Every place the publisher computes a
// local key calls this one function.
inline uint64_t LocalKeyFor(std::string_view expression, const Sha256Digest& sha256) {
  (void)sha256;
  return KeyHash(kPublisherKeyHash, expression);
}

// Sequence numbers: the feed's index in the run (0-based; incremental runs put added feeds after the state) and
// the 1-based line.
constexpr int kSeqLineBits = 40;
inline uint64_t MakeSeq(uint64_t feed_index, uint64_t line) { return (feed_index << kSeqLineBits) | line; }

// (layer, key, sha256) ascending, then seq descending: the preferred duplicate first.
struct ByLayerKey {
  bool operator()(const KeyRecord& a, const KeyRecord& b) const {
    if (a.layer != b.layer) return a.layer < b.layer;
    if (a.key != b.key) return a.key < b.key;
    int c = std::memcmp(a.sha256, b.sha256, 32);
    if (c != 0) return c < 0;
    if (a.seq != b.seq) return a.seq > b.seq;
    return a.threat < b.threat;
  }
};
// ByLayerKey without the input position: the entry's place in the order (-1, 0 or 1), for walking two sorted
// streams of entries side by side (publish/version_merge.h, the publisher's removal count).
inline int CompareEntry(const KeyRecord& a, const KeyRecord& b) {
  if (a.layer != b.layer) return a.layer < b.layer ? -1 : 1;
  if (a.key != b.key) return a.key < b.key ? -1 : 1;
  return std::memcmp(a.sha256, b.sha256, 32);
}
// The first 8 bytes of a digest as a big-endian number: comparing these orders digests as memcmp does, and they
// differ for all but about n^2 / 2^65 pairs, so a sort rarely needs the full memcmp (a call per comparison
// otherwise: the larger part of sorting by SHA-256 under callgrind).
inline uint64_t ShaOrderPrefix(const uint8_t* sha256) {
  uint64_t v;
  std::memcpy(&v, sha256, 8);
  return __builtin_bswap64(v);
}

// (sha256, layer) ascending: the full-hash file's order. Records are unique by then.
struct BySha {
  bool operator()(const KeyRecord& a, const KeyRecord& b) const {
    const uint64_t pa = ShaOrderPrefix(a.sha256), pb = ShaOrderPrefix(b.sha256);
    if (pa != pb) return pa < pb;
    int c = std::memcmp(a.sha256, b.sha256, 32);
    if (c != 0) return c < 0;
    return a.layer < b.layer;
  }
};
// The same entry: same layer and SHA-256.
struct SameEntry {
  bool operator()(const KeyRecord& a, const KeyRecord& b) const {
    return a.layer == b.layer && std::memcmp(a.sha256, b.sha256, 32) == 0;
  }
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_KEY_RECORD_H_
