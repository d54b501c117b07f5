// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Catch-up for clients of manifest format 2 (docs/versions.md): which range diffs a version publishes, and what
// they hold, in time that follows what changed since the list's checkpoint rather than the list.
//
// A range diff (A, V] (core/diff_codec.h, format 2) carries the final presence at V of every fingerprint a
// version in (A, V] touched, so it applies to a client at any F in [A, V]. A client downloads the diff with the
// largest A <= F: it pays for the fingerprints touched in (A, F] twice, so the anchors A are spaced so that
// this waste stays under a ratio r of what it needed anyway (PlanAnchors).
//
// The epoch map is what the diffs are cut from: every fingerprint touched after the checkpoint C, with the last
// version that touched it and whether it is present now, sorted by (layer, fingerprint). A version updates it
// with its own touched fingerprints (a merge: O(map + changes)), and the range diff from A is the map's entries
// last touched after A, already in order. It also carries the set digest's sums (core/set_digest.h), kept
// current the same way, so no version re-reads the list to sign its state.
//
// File: REPO/private/lists/LIST/V.epoch (docs/versions.md "Epoch map file"; pinned by catchup_test.cc GoldenBytes).
// Changes the on-disk format: bump kEpochMapFormatVersion, the doc and the golden test.
#ifndef URLGUARD_PUBLISH_CATCHUP_H_
#define URLGUARD_PUBLISH_CATCHUP_H_

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/diff_codec.h"
#include "core/layer_kind.h"
#include "core/set_digest.h"
#include "urlguard/status.h"

namespace urlguard {

constexpr uint32_t kEpochMapFormatVersion = 1;
inline constexpr char kEpochMapMagic[8] = {'U', 'G', 'E', 'P', 'O', 'C', 'H', '\n'};
constexpr size_t kEpochMapRecordBytes = 24;
// A map holds at most this many fingerprints (the checkpoint policy keeps it far smaller): a file claiming more
// is refused before anything is allocated.
constexpr uint64_t kMaxEpochMapEntries = uint64_t{1} << 31;
// Versions one epoch may span (the per-version touched counts are kept for the anchor plan).
constexpr uint64_t kMaxEpochVersions = uint64_t{1} << 20;
// The pieces EncodeTo hands out and Decode reads between two done_with calls.
constexpr size_t kEpochEncodePieceBytes = size_t{1} << 20;
constexpr size_t kEpochDecodePieceBytes = size_t{64} << 20;

// One fingerprint a version touched: present before it (in V - 1) and after it (in V).
struct TouchedFingerprint {
  LayerKind layer = LayerKind::kDomain;
  uint64_t fingerprint = 0;
  bool before = false;
  bool after = false;

  bool operator==(const TouchedFingerprint&) const = default;
};

// The anchors of a version V: `counts[i]` is the number of fingerprints version `lo + 1 + i` touched (so V =
// lo + counts.size() >= lo + 1). Returns A values in [lo, V - 1], ascending, always with lo and V - 1, such that
// every client F in [lo, V - 1] has an anchor A <= F with t(A) <= ratio * t(F), where t(X) is the sum of counts
// over (X, V]. Greedy from V - 1 down: each next anchor is the smallest A >= lo with t(A) <= ratio * t(prev - 1).
// `ratio` >= 1 (1 gives every version).
std::vector<uint64_t> PlanAnchors(uint64_t lo, std::span<const uint64_t> counts, double ratio);

struct EpochEntry {
  uint64_t fingerprint = 0;
  uint64_t last_version = 0;  // the newest version that touched it
  LayerKind layer = LayerKind::kDomain;
  bool present = false;  // in the map's version

  bool operator==(const EpochEntry&) const = default;
};

// What a version's range diffs need besides the map: the list and, per layer, the universe and the count at V
// (0 universe: no fingerprint array there).
struct RangeDiffTarget {
  std::string list;
  uint64_t version = 0;
  std::array<uint64_t, kLayerKindCount> universe{};
  std::array<uint64_t, kLayerKindCount> count{};
};

class EpochMap {
 public:
  EpochMap() = default;
  // An empty map at checkpoint `checkpoint` (its version too), with the checkpoint state's digest sums.
  EpochMap(uint64_t checkpoint, const std::array<LayerSetSum, kLayerKindCount>& sums)
      : checkpoint_(checkpoint), version_(checkpoint), sums_(sums) {}

  // Records version `version` (== version() + 1): `touched` sorted by (layer, fingerprint), each once.
  // Fingerprints whose presence changed move the digest sums. kInvalidArgument for a version out of order, an
  // unsorted list, or a `before` that disagrees with the map (a fingerprint the map says is present, or
  // absent); the map is unchanged then.
  Status Apply(uint64_t version, std::span<const TouchedFingerprint> touched);

  // Moves the checkpoint to `checkpoint` (checkpoint() <= it <= version()): forgets what was last touched at or
  // before it. The sums stay those of version().
  void Rebase(uint64_t checkpoint);

  // `older` followed by `newer` (older.version() == newer.checkpoint()): the map of every fingerprint touched
  // over (older.checkpoint(), newer.version()], newer's entries replacing older's (an entry's presence is its
  // presence after its last touch, so an older entry not touched again is still true at newer's version). What a
  // checkpoint keeps as its catch-up archive (made with Append, in place; this copying form is its reference in
  // the tests). kInvalidArgument when the two do not meet.
  static Result<EpochMap> Concatenate(const EpochMap& older, const EpochMap& newer);

  // Concatenate in place (this map is the older one), keeping the retention window TrimToTouched(max_touched)
  // gives over both maps: entries outside it are dropped before the merge, so the memory is the entries kept plus
  // newer's (decode the older map with `room` >= newer's entries and nothing is reallocated). What a checkpoint
  // makes its catch-up archive with: the archive of a 100 M list can hold 60 M entries (720 MB), and a copy
  // would double that. kInvalidArgument when the two do not meet, kResourceExhausted over the caps; the map is
  // unchanged then.
  Status Append(const EpochMap& newer, uint64_t max_touched = UINT64_MAX);

  // Rebases to the oldest checkpoint whose range (checkpoint, version()] touched at most `max_touched`
  // fingerprints (counted with repeats): the retention window of a catch-up archive.
  void TrimToTouched(uint64_t max_touched);

  // The range diff (from, version()] for `target` (target.version == version(), from in [checkpoint(),
  // version())): every entry last touched after `from`. Layers without such an entry are left out.
  RangeDiff Diff(const RangeDiffTarget& target, uint64_t from) const;

  // Diff(target, from) for every `from` of `froms` (ascending, unique, each in [checkpoint(), version())), in
  // the same order, made in one pass over the map: an entry goes to every range that starts before its last
  // version. A version's anchors (Anchors) hold about 4.3x the map's entries in all; one filter pass per
  // anchor read the whole map each time instead (9 passes for 20 equal versions). Output vectors are sized
  // exactly first.
  std::vector<RangeDiff> Diffs(const RangeDiffTarget& target, std::span<const uint64_t> froms) const;

  // The anchors of version() (PlanAnchors over the epoch's touched counts).
  std::vector<uint64_t> Anchors(double ratio) const;

  // Touched fingerprints over (from, version()], counted with repeats (what PlanAnchors weighs).
  uint64_t TouchedSince(uint64_t from) const;

  std::string Encode(std::string_view list) const;
  // Encode's bytes handed to `out` in order, a piece of at most about kEpochEncodePieceBytes at a time, the
  // trailer hashed on the way: the file of an archive of 60 M entries is 1.4 GB, which Encode would hold beside
  // the map. Stops at `out`'s first error and returns it.
  Status EncodeTo(std::string_view list, const std::function<Status(std::string_view)>& out) const;
  // Checks magic, format, the list name, sizes against the byte count (before allocating), the SHA-256
  // trailer, sorted unique entries with last_version in (checkpoint, version]. kCorruption naming the
  // problem. `room`: entries to reserve beyond the file's, so that an Apply of up to that many fingerprints
  // merges in place. `done_with(offset, length)`, when set, is told of each stretch of `bytes` (at most about
  // kEpochDecodePieceBytes) as Decode is through with it for now: the checksum pass, then the entries, read it
  // once each, so a caller decoding a mapped file can hand its pages back (ReleaseMappedPages) instead of
  // holding the whole file beside the map.
  static Result<EpochMap> Decode(std::string_view bytes, std::string_view list, size_t room = 0,
                                 const std::function<void(size_t offset, size_t length)>& done_with = nullptr);

  uint64_t checkpoint() const { return checkpoint_; }
  uint64_t version() const { return version_; }
  const std::array<LayerSetSum, kLayerKindCount>& sums() const { return sums_; }
  // The entries, sorted by (layer, fingerprint): a copy, unpacked (for tests and tools; size() is cheap).
  std::vector<EpochEntry> entries() const;
  size_t size() const { return entries_.size(); }
  const std::vector<uint64_t>& touched_counts() const { return touched_counts_; }

 private:
  // An entry as the map holds it: 12 bytes where EpochEntry (and the file's record) takes 24, since the last
  // version is kept as its distance from the checkpoint (below kMaxEpochVersions). A checkpoint's catch-up archive
  // holds up to 64 Mi of them.
  struct Packed {
    uint32_t fp_lo = 0;
    uint32_t fp_hi = 0;
    uint32_t word = 0;  // (last_version - checkpoint_ - 1) << 3 | layer << 1 | present

    uint64_t fingerprint() const { return uint64_t{fp_hi} << 32 | fp_lo; }
    LayerKind layer() const { return static_cast<LayerKind>((word >> 1) & 3); }
    bool present() const { return (word & 1) != 0; }
    uint64_t offset() const { return word >> 3; }  // last_version - checkpoint_ - 1
  };
  static_assert(sizeof(Packed) == 12 && kLayerKindCount <= 4 && kMaxEpochVersions < (uint64_t{1} << 29));
  static bool Less(const Packed& a, LayerKind layer, uint64_t fp) {
    return a.layer() != layer ? a.layer() < layer : a.fingerprint() < fp;
  }
  static bool Same(const Packed& a, LayerKind layer, uint64_t fp) { return a.layer() == layer && a.fingerprint() == fp; }
  // An entry last touched at `last_version` (in (checkpoint_, checkpoint_ + kMaxEpochVersions]).
  Packed Pack(uint64_t fingerprint, uint64_t last_version, LayerKind layer, bool present) const {
    return {static_cast<uint32_t>(fingerprint), static_cast<uint32_t>(fingerprint >> 32),
            static_cast<uint32_t>((last_version - checkpoint_ - 1) << 3 | static_cast<uint64_t>(layer) << 1 |
                                  (present ? 1 : 0))};
  }
  uint64_t LastVersion(const Packed& e) const { return checkpoint_ + 1 + e.offset(); }

  uint64_t checkpoint_ = 0;
  uint64_t version_ = 0;
  std::array<LayerSetSum, kLayerKindCount> sums_{};
  std::vector<uint64_t> touched_counts_;  // [i]: fingerprints version checkpoint_ + 1 + i touched
  std::vector<Packed> entries_;           // sorted by (layer, fingerprint)
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_CATCHUP_H_
