// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Snapshot: one list's full state in one file, used straight from a read-only mapping. docs/snapshot-format.md
// specifies every byte; core/snapshot_test.cc pins them with a golden file.
//
// The bytes are a deterministic function of (list name, version, created time, and per layer: kind, filter,
// universe or Bloom geometry, IP prefix lengths, contents). So a client that applies a diff and rebuilds the
// snapshot gets the publisher's exact bytes, and the trailing SHA-256 — the "state hash" a manifest signs —
// proves it applied the diff correctly.
//
// Opening is O(index): it checks the magic, version, every offset and length once, and each layer's own
// invariants (fingerprint_set.h, blocked_bloom.h). The full-content SHA-256 (about 12 ms for 20 MB with
// SHA-NI) is optional at open: installers verify it before a file becomes live, and files are never written
// in place afterwards (docs/architecture.md §7).
//
// Two format versions are read and written; they differ only in the key hash (core/key_hash.h) named by the
// header: version 1 keys are SHA-256 prefixes, version 2 keys are XXH3-64 (the default for new lists). A
// client keeps reading and diff-updating a version 1 list until its publisher sends a version 2 snapshot.
//
// Changes the on-disk format: bump kSnapshotFormatVersion, docs/snapshot-format.md and the golden test.
#ifndef URLGUARD_CORE_SNAPSHOT_H_
#define URLGUARD_CORE_SNAPSHOT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/blocked_bloom.h"
#include "core/fingerprint_set.h"
#include "core/key_hash.h"
#include "core/layer_kind.h"
#include "core/list_name.h"
#include "core/sha256.h"
#include "urlguard/status.h"

namespace urlguard {

// The version BuildSnapshot writes for kXxh3 keys. Version 1 (kSnapshotFormatVersionSha256Keys) is written for
// kSha256Prefix keys, byte for byte as before version 2 existed, so diffs to old lists still rebuild the
// publisher's exact bytes.
constexpr uint32_t kSnapshotFormatVersion = 2;
constexpr uint32_t kSnapshotFormatVersionSha256Keys = 1;
inline constexpr char kSnapshotMagic[8] = {'U', 'G', 'S', 'N', 'A', 'P', '\x1a', '\n'};
constexpr size_t kSnapshotHeaderBytes = 64;
constexpr size_t kSnapshotLayerEntryBytes = 64;
constexpr size_t kMaxSnapshotLayers = 3;
constexpr uint64_t kMaxSnapshotBytes = uint64_t{4} << 30;  // 4 GiB

enum class FilterKind : uint8_t { kFingerprintArray = 1, kBlockedBloom = 2 };

const char* FilterKindName(FilterKind kind);  // "fingerprint-array", "blocked-bloom"

// The IP prefix lengths present in an ip layer: bit L for IPv4 /L (0-32), bit 64+L for IPv6 /L (0-128).
struct IpPrefixLengths {
  std::array<uint8_t, 32> bits{};
  void AddV4(int len) { Set(len); }
  void AddV6(int len) { Set(64 + len); }
  bool HasV4(int len) const { return Get(len); }
  bool HasV6(int len) const { return Get(64 + len); }
  bool Empty() const;
  bool Valid() const;  // no bits set at 33-63 or above 192

 private:
  void Set(int i) { bits[static_cast<size_t>(i) >> 3] |= static_cast<uint8_t>(1u << (i & 7)); }
  bool Get(int i) const { return bits[static_cast<size_t>(i) >> 3] >> (i & 7) & 1; }
};

// What BuildSnapshot needs for one layer.
struct LayerContent {
  LayerKind kind = LayerKind::kDomain;
  FilterKind filter = FilterKind::kFingerprintArray;
  uint64_t universe = 1;                // fingerprint arrays
  std::vector<uint64_t> fingerprints;   // fingerprint arrays: sorted, unique, < universe
  std::string bloom_body;               // blocked Bloom: BlockedBloom::Serialize()
  uint64_t entries = 0;                 // keys inserted (= fingerprints.size() for arrays)
  IpPrefixLengths ip_prefixes;          // ip layers only
};

struct SnapshotContent {
  std::string list_name;
  uint64_t version = 0;
  int64_t created_unix = 0;
  // How the layers' keys were hashed: decides the format version (1 for kSha256Prefix, 2 for kXxh3).
  KeyHashKind key_hash = KeyHashKind::kXxh3;
  std::vector<LayerContent> layers;  // at most one per LayerKind, any order (written sorted by kind)
};

// Serializes `content`. Fails with kInvalidArgument for a bad list name, duplicate layers, unsorted
// fingerprints or a too-large result.
Result<std::string> BuildSnapshot(const SnapshotContent& content);

// ---- the head of a snapshot, for writers that stream the bodies (core/snapshot_writer.h) --------------

// What the header and layer table say about one layer.
struct SnapshotLayerHead {
  LayerKind kind = LayerKind::kDomain;
  FilterKind filter = FilterKind::kFingerprintArray;
  uint64_t body_length = 0;  // bytes of the body (BuildFingerprintSet() or a Bloom body)
  uint64_t entries = 0;      // the layer table's entry count (fingerprints for arrays, inserted keys for Bloom)
  IpPrefixLengths ip_prefixes;
};

struct SnapshotHead {
  std::string_view list_name;
  uint64_t version = 0;
  int64_t created_unix = 0;
  KeyHashKind key_hash = KeyHashKind::kXxh3;
  std::vector<SnapshotLayerHead> layers;  // 1 to 3, strictly ascending kind
};

// Where the parts of a snapshot with that head go.
struct SnapshotLayout {
  std::vector<uint64_t> body_offsets;  // per layer (head order): 64-byte aligned start of its body
  uint64_t file_size = 0;              // including the 32-byte trailing SHA-256
};

// The one serializer of the header, list name and layer table (BuildSnapshot uses it; so must any other
// writer, so that they write the same bytes). Appends those bytes to *out (nothing else: the caller
// writes zero padding up to each body offset, the bodies, and the SHA-256 of everything before it).
// kInvalidArgument for a bad list name, layer count, order or IP prefix bitmap; kResourceExhausted when
// the file would exceed kMaxSnapshotBytes.
Status SerializeSnapshotHead(const SnapshotHead& head, std::string* out, SnapshotLayout* layout);

// The header fields a streaming writer (core/snapshot_writer.h) takes; the layers come from its specs.
struct SnapshotHeaderFields {
  std::string_view list_name;
  uint64_t version = 0;
  int64_t created_unix = 0;
  KeyHashKind key_hash = KeyHashKind::kXxh3;
};

// One layer of an open snapshot. Cheap to copy; points into the mapping.
struct LayerView {
  LayerKind kind = LayerKind::kDomain;
  FilterKind filter = FilterKind::kFingerprintArray;
  uint64_t entries = 0;
  uint64_t body_bytes = 0;
  IpPrefixLengths ip_prefixes;
  FingerprintSetView fingerprints;  // valid when filter == kFingerprintArray
  BlockedBloomView bloom;           // valid when filter == kBlockedBloom

  // `h` is the key hash of an expression, of the snapshot's KeyHashKind.
  bool MayContain(uint64_t h) const {
    return filter == FilterKind::kFingerprintArray ? fingerprints.MayContain(h) : bloom.MayContain(h);
  }
  void Prefetch(uint64_t h) const {
    if (filter == FilterKind::kFingerprintArray) {
      fingerprints.Prefetch(fingerprints.FingerprintOf(h));
    } else {
      bloom.Prefetch(h);
    }
  }
};

// A validated read-only view of snapshot bytes. Does not own them. Thread-safe (immutable).
class SnapshotView {
 public:
  SnapshotView() = default;

  // Validates `size` bytes at `data` (8-byte aligned). kCorruption naming the first problem found: foreign
  // file (magic), unsupported format version, truncated or extended file (size recorded in the header),
  // a bad offset, length or layer invariant, or — with verify_checksum — a content checksum mismatch.
  static Result<SnapshotView> Open(const uint8_t* data, size_t size, bool verify_checksum);

  std::string_view list_name() const { return list_name_; }
  uint64_t version() const { return version_; }
  int64_t created_unix() const { return created_; }
  uint64_t total_entries() const { return total_entries_; }
  // How this list's keys are hashed (format version 1: kSha256Prefix, version 2: kXxh3). A diff never
  // crosses kinds: the publisher sends a snapshot when the kind changes.
  KeyHashKind key_hash() const { return key_hash_; }
  uint32_t format_version() const { return key_hash_ == KeyHashKind::kXxh3 ? kSnapshotFormatVersion
                                                                           : kSnapshotFormatVersionSha256Keys; }
  size_t byte_size() const { return size_; }
  // The stored trailing SHA-256 (the state hash).
  Sha256Digest checksum() const;
  // Recomputes the SHA-256 of the content and compares it with the trailer.
  Status VerifyChecksum() const;

  // The layer of that kind, or nullptr when the list has none.
  const LayerView* layer(LayerKind kind) const {
    return has_layer_[static_cast<size_t>(kind)] ? &layers_[static_cast<size_t>(kind)] : nullptr;
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string_view list_name_;
  uint64_t version_ = 0;
  int64_t created_ = 0;
  uint64_t total_entries_ = 0;
  KeyHashKind key_hash_ = KeyHashKind::kXxh3;
  LayerView layers_[kMaxSnapshotLayers];
  bool has_layer_[kMaxSnapshotLayers] = {false, false, false};
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_SNAPSHOT_H_
