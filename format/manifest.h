// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The update manifest: one small JSON document per list naming its current version, freshness, the state
// the client must end up with, and the files to download (docs/architecture.md §5; every field, limit and byte of
// the canonical form is specified in docs/manifest-format.md).
//
// Order matters: a client verifies the detached signature over the raw manifest bytes first
// (format/signature.h VerifyManifestSignature) and only then calls ParseManifest(). The parser still treats
// its input as hostile (signed bytes can come from a buggy publisher, and the fuzzer feeds it anything): it
// never throws, never crashes, and refuses anything it does not fully understand except unknown object
// members, which are ignored so that a later publisher can add fields without breaking older clients.
//
// Two formats share the Manifest value: format 1 (a snapshot of the version itself plus version 1 diffs, each
// from one exact version) and format 2 (design of issue 17: a checkpoint snapshot, range diffs that apply to
// any version in a range, and the set digest of the version). A client reads both; ParseManifest() fills the
// members of the format it read and leaves the other format's members at their defaults.
//
// Changes the manifest format: bump the format number, docs/manifest-format.md and the golden tests
// (fixtures/golden/manifest_v1.json, manifest_v2.json).
#ifndef URLGUARD_FORMAT_MANIFEST_H_
#define URLGUARD_FORMAT_MANIFEST_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/diff_codec.h"
#include "core/layer_kind.h"
#include "core/set_digest.h"
#include "core/sha256.h"
#include "urlguard/status.h"

namespace urlguard {

// Format 1: what Manifest{} holds by default and what a publisher writes unless told otherwise.
constexpr uint32_t kManifestFormatVersion = 1;
// Format 2: checkpoint snapshot + range diffs + set digest (docs/manifest-format.md, "Format 2").
constexpr uint32_t kManifestFormat2 = 2;

// Caps on manifests from outside (a value over a cap is refused).
constexpr size_t kMaxManifestBytes = size_t{64} << 10;  // the whole document (kResourceExhausted)
constexpr size_t kMaxManifestDiffs = 64;                // entries of "diffs", format 1 (kResourceExhausted)
constexpr size_t kMaxManifestDiffsFormat2 = 128;        // entries of "diffs", format 2 (kResourceExhausted)
constexpr size_t kMaxManifestLargeDiffs = 32;           // entries of "large_diffs", format 2 (kResourceExhausted)
constexpr size_t kMaxManifestPathBytes = 128;           // a file name
// The largest accepted "min_wait_seconds": the 24 h ceiling of the client's failure backoff
// (docs/architecture.md §5). A larger value would let one bad manifest silence a client for longer.
constexpr uint32_t kMaxManifestMinWaitSeconds = 24 * 60 * 60;
// The longest a manifest may live: expires_unix - created_unix <= this (7 days). A publisher re-signs a
// manifest at least this often (urlguard-publish defaults to 24 h).
constexpr int64_t kMaxManifestLifetimeSeconds = 7 * 86400;
// How far a manifest's created_unix may lie ahead of the client's trusted time (clock skew between the
// publisher and the client).
constexpr int64_t kMaxManifestCreatedAheadSeconds = 86400;
// File size caps: snapshots kMaxSnapshotBytes (core/snapshot.h, 4 GiB), diffs kMaxDiffBytes
// (core/diff_codec.h, 64 MiB), both for the downloaded and for the inflated size.

// A file the client may download. Paths are names relative to the manifest's own URL / directory.
struct ManifestFile {
  std::string path;            // 1..kMaxManifestPathBytes of [a-z0-9._-], not starting with '.', no ".."
  uint64_t size = 0;           // bytes served (zlib-compressed): the download's hard cap; >= 1
  Sha256Digest sha256{};       // SHA-256 of those served bytes
  uint64_t inflated_size = 0;  // bytes after inflating: the InflateBounded() cap; >= 1

  bool operator==(const ManifestFile&) const = default;
};

// Format 1: a version 1 diff from an older version to Manifest::version.
// Format 2: a range diff (diff format version 2, core/diff_codec.h) (from_version, to_version], which applies
// to a client at any version F with from_version <= F <= to_version. to_version is Manifest::version
// ("to-current") or checkpoint.version < Manifest::version ("to-checkpoint": the first hop of a client behind
// the checkpoint).
struct ManifestDiff {
  uint64_t from_version = 0;  // 1 <= from_version < to_version (format 1: < Manifest::version)
  ManifestFile file;          // sizes <= kMaxDiffBytes
  // Format 2: the version the diff produces. Format 1: 0 (implicitly Manifest::version; Validate also
  // accepts Manifest::version, the serializer does not write it and the parser leaves 0).
  uint64_t to_version = 0;

  bool operator==(const ManifestDiff&) const = default;
};

// Format 2: the newest checkpoint, a version whose full snapshot is published.
struct ManifestCheckpoint {
  uint64_t version = 0;          // C, 1 <= C <= Manifest::version
  ManifestFile snapshot;         // the zlib snapshot of C; inflated_size == state_bytes
  Sha256Digest state_sha256{};   // SnapshotView::checksum() of C's snapshot file
  uint64_t state_bytes = 0;      // its size: 1..kMaxSnapshotBytes

  bool operator==(const ManifestCheckpoint&) const = default;
};

// One list's manifest (docs/manifest-format.md §2 and "Format 2"). A plain value; the rules in the comments
// are what ValidateManifest() checks. Members marked "format 1" must keep their defaults in a format 2
// manifest and the reverse.
struct Manifest {
  uint32_t format = kManifestFormatVersion;  // kManifestFormatVersion (1) or kManifestFormat2
  std::string list;                          // IsValidListName (core/list_name.h)
  uint64_t version = 0;                      // >= 1; strictly increasing across a list's manifests
  int64_t created_unix = 0;                  // >= 1
  int64_t expires_unix = 0;                  // > created_unix; afterwards the list is stale
  uint32_t min_wait_seconds = 0;  // the server's minimum polling interval, <= kMaxManifestMinWaitSeconds
  bool emergency = false;         // policy: treat local hits as malicious without asking the verify API
  Sha256Digest state_sha256{};    // format 1: SnapshotView::checksum() of the resulting snapshot file
  uint64_t state_bytes = 0;       // format 1: size of that snapshot file: 1..kMaxSnapshotBytes
  std::array<uint64_t, kLayerKindCount> entries{};   // entries per layer, indexed by LayerKind
  std::array<uint64_t, kLayerKindCount> universe{};  // fingerprint universe per layer (0 = no fingerprint
                                                     // array for that layer); entries <= universe when != 0
  // The IP prefix lengths of the resulting snapshot's ip layer (core/snapshot.h IpPrefixLengths::bits: bit L
  // for IPv4 /L, bit 64+L for IPv6 /L). A diff carries fingerprints only, so a client rebuilding the state
  // from a diff takes this bitmap from here. IpPrefixLengths::Valid() must hold; all zero without ip layer.
  std::array<uint8_t, 32> ip_prefix_lengths{};
  ManifestFile snapshot;            // format 1: the full state; inflated_size == state_bytes
  // Format 1: at most kMaxManifestDiffs, from_version strictly ascending.
  // Format 2: at most kMaxManifestDiffsFormat2, sorted by (to_version, from_version) strictly ascending; each
  // to_version is `version` or checkpoint.version; a to-current diff (to_version == version) has
  // from_version >= checkpoint.version unless checkpoint.version == version; when checkpoint.version <
  // version the diff (checkpoint.version, version] is present.
  std::vector<ManifestDiff> diffs;
  // Format 2: SetDigest (core/set_digest.h) of this version's fingerprint sets.
  Sha256Digest state_digest{};
  // Format 2: the newest checkpoint.
  ManifestCheckpoint checkpoint;
  // Format 2, optional ("large_diffs", docs/manifest-format.md §8.5): range diffs over the caps every reader
  // takes (a file over kMaxDiffBytes, or a layer stream over kMaxDiffEntries values), for readers that take a
  // large diff with the caps RangeDiffCapsFor gives. Readers before it ignore the member (an unknown member)
  // and take the checkpoint snapshot instead. At most kMaxManifestLargeDiffs, the rules of `diffs` on versions
  // and order, no (from_version, to_version) that `diffs` also has, and each file smaller than the checkpoint
  // snapshot (sizes <= kMaxSnapshotBytes). Serialized only when not empty.
  std::vector<ManifestDiff> large_diffs;

  bool operator==(const Manifest&) const = default;
};

// Checks every rule above. kCorruption "manifest field '<name>': <problem>" naming the first violation
// (field names as in the JSON: "snapshot.path", "diffs[2].from_version", "entries.ip"), or
// kResourceExhausted for more than kMaxManifestDiffs diffs. Thread-safe.
Status ValidateManifest(const Manifest& manifest);

// The canonical bytes (docs/manifest-format.md §3): UTF-8 JSON, object members sorted by name, two-space
// indentation, integers in plain decimal, no floats, a final "\n". Deterministic: equal manifests give equal
// bytes. Precondition: ValidateManifest(manifest).ok(); violating it is a bug and aborts the process in
// every build type (a publisher must never sign a manifest its clients would refuse). Thread-safe.
std::string SerializeManifest(const Manifest& manifest);

// Parses manifest bytes from outside (call VerifyManifestSignature first). Fails with kResourceExhausted
// for more than kMaxManifestBytes bytes or kMaxManifestDiffs diffs, and kCorruption naming the problem for
// anything else: not JSON, a duplicate member name, a missing, ill-typed or out-of-range field, or any rule
// of ValidateManifest(). Accepts any JSON formatting (not only the canonical one) and ignores unknown
// members. Never throws. Thread-safe.
Result<Manifest> ParseManifest(std::string_view bytes);

// Format 1: the diff from `from_version`, or nullptr when the manifest offers none. (Format 2: nullptr.)
const ManifestDiff* FindManifestDiff(const Manifest& manifest, uint64_t from_version);

// Format 2: the range diff to `to_version` with the largest from_version <= client_version, provided
// client_version <= to_version, from `diffs` and `large_diffs`; nullptr when there is none (or the manifest is
// format 1).
const ManifestDiff* FindRangeDiff(const Manifest& manifest, uint64_t to_version, uint64_t client_version);

// The caps to read the range diff `diff` (an element of manifest.diffs or manifest.large_diffs) with: the
// defaults for `diffs`; for a large diff its signed inflated size and LargeRangeDiffValueCap(manifest).
RangeDiffCaps RangeDiffCapsFor(const Manifest& manifest, const ManifestDiff& diff);

// The values a layer stream of a large diff may hold: kMaxDiffEntries + 2 x the manifest's entries (summed over
// the layers, saturating). A range diff's present values are at most its new count and its absent values the
// client's own fingerprints it removes plus values it already lacks; a diff holding more than twice the list
// would be larger than the list's snapshot, which the publisher offers instead. A publisher writes a large diff
// only when each stream is within kMaxDiffEntries + the entries of its target version (publish/publisher.cc),
// which leaves room for a list that shrinks between the checkpoint and a version naming its diffs.
uint64_t LargeRangeDiffValueCap(const Manifest& manifest);

// True for a name allowed in ManifestFile::path: 1..kMaxManifestPathBytes bytes of [a-z0-9._-], not
// starting with '.', without "..". A path can therefore never leave the manifest's directory.
bool IsValidManifestPath(std::string_view path);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_MANIFEST_H_
