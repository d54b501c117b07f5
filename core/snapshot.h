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
#include "core/layer_kind.h"
#include "core/list_name.h"
#include "core/sha256.h"
#include "urlguard/status.h"

namespace urlguard {

constexpr uint32_t kSnapshotFormatVersion = 1;
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
  std::vector<LayerContent> layers;  // at most one per LayerKind, any order (written sorted by kind)
};

// Serializes `content`. Fails with kInvalidArgument for a bad list name, duplicate layers, unsorted
// fingerprints or a too-large result.
Result<std::string> BuildSnapshot(const SnapshotContent& content);

// ---- The header and layer table, shared by BuildSnapshot and SnapshotWriter (core/snapshot_writer.h) ----
// Both writers call BuildSnapshotHead, so the bytes before the first body exist in one place only.

// The header fields that are not derived from the layers.
struct SnapshotHeaderFields {
  std::string_view list_name;
  uint64_t version = 0;
  int64_t created_unix = 0;
};

// One layer table entry, before offsets are known.
struct SnapshotTableEntry {
  LayerKind kind = LayerKind::kDomain;
  FilterKind filter = FilterKind::kFingerprintArray;
  uint64_t body_bytes = 0;
  uint64_t entries = 0;
  IpPrefixLengths ip_prefixes;
};

// Everything of a snapshot's layout that follows from its header fields and its layers' body sizes.
struct SnapshotHead {
  std::string bytes;                  // header, list name and layer table: the file's first bytes
  std::vector<uint64_t> body_offsets;  // per table entry, each a multiple of 64
  uint64_t file_size = 0;             // including the trailing SHA-256
};

// Lays out a snapshot of `layers` (sorted by kind) and serializes its head. kInvalidArgument for a bad list
// name, no layer or more than kMaxSnapshotLayers, layers not in ascending kind order or repeated ("duplicate
// layer"), IP prefix lengths on a non-ip layer or invalid ones; kResourceExhausted over kMaxSnapshotBytes.
Result<SnapshotHead> BuildSnapshotHead(const SnapshotHeaderFields& header,
                                       const std::vector<SnapshotTableEntry>& layers);

// One layer of an open snapshot. Cheap to copy; points into the mapping.
struct LayerView {
  LayerKind kind = LayerKind::kDomain;
  FilterKind filter = FilterKind::kFingerprintArray;
  uint64_t entries = 0;
  uint64_t body_bytes = 0;
  IpPrefixLengths ip_prefixes;
  FingerprintSetView fingerprints;  // valid when filter == kFingerprintArray
  BlockedBloomView bloom;           // valid when filter == kBlockedBloom

  bool MayContain(const Sha256Digest& key) const {
    return filter == FilterKind::kFingerprintArray ? fingerprints.MayContain(DigestPrefix64(key))
                                                    : bloom.MayContain(DigestPrefix64(key));
  }
  void Prefetch(const Sha256Digest& key) const {
    if (filter == FilterKind::kFingerprintArray) {
      fingerprints.Prefetch(fingerprints.FingerprintOf(DigestPrefix64(key)));
    } else {
      bloom.Prefetch(DigestPrefix64(key));
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
  LayerView layers_[kMaxSnapshotLayers];
  bool has_layer_[kMaxSnapshotLayers] = {false, false, false};
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_SNAPSHOT_H_
