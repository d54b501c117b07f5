// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Diffs between two versions of a list: per layer, the fingerprints removed and added, Rice coded
// (docs/architecture.md §5; every byte is specified in docs/diff-format.md).
//
// A client keeps, per list and per layer, a sorted set of unique fingerprints in [0, U) (U, the layer's
// universe, is stored with the layer). A LayerDiff names the removed fingerprints by their positions
// (0-based indices) in the client's old sorted array, as Safe Browsing v4 does, and the added ones by value.
// Both sequences are strictly increasing and Rice coded as gaps (core/bit_stream.h) with the cost-optimal
// parameter. Cost: an added fingerprint about log2(U / added) + 1.5 bits, a removal about
// log2(old_count / removed) + 1.5 bits. Measured by bench/diff_size_bench for a 10 M list with
// U = 10 M * 2^14 (~2^37) and 25 k + 25 k changes: 107 098 bytes, 2.14 bytes per changed entry, 0.05% under
// the formula; zlib on top saves nothing (+41 bytes: Rice output is already near its entropy).
//
// The diff bytes end with a SHA-256 over everything before it, so any accidental change is detected even
// though the manifest also signs the file's hash.
//
// Changes the on-disk format: bump kDiffFormatVersion and the golden test (diff_codec_test.cc).
#ifndef URLGUARD_CORE_DIFF_CODEC_H_
#define URLGUARD_CORE_DIFF_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/bit_stream.h"
#include "core/layer_kind.h"
#include "core/list_name.h"
#include "urlguard/status.h"

namespace urlguard {

// Changes the on-disk format: bump kDiffFormatVersion and the golden test.
constexpr char kDiffMagic[8] = {'U', 'G', 'D', 'I', 'F', 'F', '\r', '\n'};
constexpr uint32_t kDiffFormatVersion = 1;

// Caps on untrusted diff bytes (a file over a cap is refused with kResourceExhausted).
constexpr size_t kMaxDiffBytes = size_t{64} << 20;        // a whole diff file, before decompression
constexpr uint64_t kMaxDiffEntries = uint64_t{16} << 20;  // removed or added entries of one layer
constexpr size_t kMaxDiffLayers = 3;                      // each LayerKind at most once

// Fixed sizes of the format (see docs/diff-format.md).
constexpr size_t kDiffFixedHeaderBytes = 34;  // magic .. layer count, without the name bytes
constexpr size_t kDiffLayerRecordBytes = 60;
constexpr size_t kDiffTrailerBytes = 32;  // SHA-256 of all preceding bytes

// The change of one layer between two versions.
struct LayerDiff {
  LayerKind layer = LayerKind::kDomain;
  uint64_t universe = 0;                    // U: every fingerprint of the layer is < U
  uint64_t old_count = 0;                   // fingerprints in the layer before the diff
  uint64_t new_count = 0;                   // ... and after: old_count - removed + added
  std::vector<uint64_t> removed_positions;  // strictly increasing indices into the old sorted array
  std::vector<uint64_t> added;              // strictly increasing fingerprints, each < universe

  bool operator==(const LayerDiff&) const = default;
};

// The change of a list from one version to a later one. Layers appear in ascending LayerKind order, each at
// most once; a layer not listed is unchanged.
struct Diff {
  std::string list_name;  // 1..kMaxListNameBytes bytes of [a-z0-9_-]
  uint64_t from_version = 0;
  uint64_t to_version = 0;  // > from_version
  std::vector<LayerDiff> layers;

  bool operator==(const Diff&) const = default;
};

// IsValidListName() and kMaxListNameBytes come from core/list_name.h (shared with the snapshot format).

// Checks every invariant EncodeDiff() needs and DecodeDiff() enforces: the name, from < to, layer order and
// uniqueness, counts <= kMaxDiffEntries, removed positions strictly increasing and < old_count, added values
// strictly increasing and < universe, old_count and new_count <= universe, new_count == old_count -
// removed + added. kInvalidArgument naming the first violation. (Whether an added value is already in the
// old set is only known with the old set: ApplyLayerDiff() checks that.)
Status ValidateDiff(const Diff& diff);

// Serializes a diff (format in docs/diff-format.md), choosing the optimal Rice parameter per sequence.
// Precondition: ValidateDiff(diff).ok(); violating it is a bug and aborts the process (checked in every
// build type: a publisher must never ship a diff its clients would reject). Deterministic: equal diffs
// give equal bytes. Thread-safe (no shared state). A diff of millions of entries can exceed kMaxDiffBytes;
// clients refuse such a file, so the publisher checks the size and ships only the snapshot in that case.
std::string EncodeDiff(const Diff& diff);

// Parses and validates diff bytes from outside (disk or network). Checks, in order: size cap
// (kResourceExhausted), magic, format version, the SHA-256 trailer, then every header field and count
// against the caps (kResourceExhausted) and against the bytes actually present before allocating, then
// decodes the Rice streams. Any malformed input gives kCorruption with a message saying what is wrong;
// never crashes, never reads outside `bytes`, never allocates more than a small multiple of
// bytes.size(). Thread-safe.
Result<Diff> DecodeDiff(std::string_view bytes);

// Reference merge: applies `d` to the sorted unique array `old_sorted`, writing the new sorted array to
// *out (replaced; must not alias old_sorted). Fails with kCorruption (and *out cleared) when
// old_sorted.size() != d.old_count, a removed position is out of range or positions are not strictly
// increasing, an added value is >= d.universe or not strictly increasing or already present after the
// removals, an old value is >= d.universe or old_sorted is not strictly increasing, or the result's size
// != d.new_count. One linear pass; allocates d.new_count values only after the counts agree.
Status ApplyLayerDiff(const std::vector<uint64_t>& old_sorted, const LayerDiff& d,
                      std::vector<uint64_t>* out);

// ---- Streaming apply ------------------------------------------------------------------------------------
// The client's form of ApplyLayerDiff for states too large to hold decoded (a 100 M-entry list is 800 MB of
// u64s): the old fingerprints arrive one at a time, in order, from a cursor over the mapped snapshot
// (core/fingerprint_set.h), and the new ones leave one at a time into a SnapshotWriter
// (core/snapshot_writer.h). Only the diff itself (its removed positions and added values) is in memory.
// core/diff_codec_test.cc cross-checks it against ApplyLayerDiff on random inputs.

// The checks of `d` that need no old fingerprint: d.old_count == old_count, removed positions strictly
// increasing and < old_count, added values strictly increasing and < d.universe, old - removed + added ==
// d.new_count. kCorruption with ApplyLayerDiff's messages.
Status CheckLayerDiffShape(const LayerDiff& d, uint64_t old_count);

// Merges `d` into an old state of `old_count` fingerprints read through next_old(uint64_t*) -> bool (false:
// no more), calling emit(uint64_t) -> Status with each new fingerprint in ascending order. Fails as
// ApplyLayerDiff does (kCorruption: the shape checks above; an old value >= d.universe or not strictly
// increasing; the state ending early; an added value already present after the removals) or with emit's
// first error. What was emitted before a failure is garbage to the caller (a writer then discards its file).
template <typename NextOld, typename Emit>
Status MergeLayerDiff(const LayerDiff& d, uint64_t old_count, NextOld&& next_old, Emit&& emit);

// Builds the LayerDiff that turns `old_sorted` into `new_sorted` (for the publisher). Precondition
// (asserted): both strictly increasing with every value < universe. One linear pass.
LayerDiff MakeLayerDiff(LayerKind layer, uint64_t universe, const std::vector<uint64_t>& old_sorted,
                        const std::vector<uint64_t>& new_sorted);

// ---- Version 2: range diffs (docs/diff-format.md, "Version 2: range diffs") ------------------------------
// A range diff (A, V] carries, for every fingerprint touched by a version in (A, V], its presence at V: the
// touched values absent at V and the touched values present at V. Fingerprints untouched in (A, V] are the
// same at every version F in [A, V], so the diff applies to ANY client state F with A <= F <= V:
// new = (old \ absent) U present. A client that was away picks the diff with the largest A <= F: one
// download, whatever the number of versions it missed. The cost over a version 1 diff: a touched value that
// the client's state already agrees with is carried anyway (it costs a value, not a position).
// Same header, trailer and caps as version 1; only the layer record's fields and the streams' meaning differ.

constexpr uint32_t kRangeDiffFormatVersion = 2;

// What a reader takes in one range diff: the file's bytes (before decompression) and the absent or present
// values of one layer. The defaults are kMaxDiffBytes and kMaxDiffEntries, what every reader takes; a manifest
// format 2 "large diff" (docs/manifest-format.md §8.5) is read with caps the signed manifest sets
// (format/manifest.h RangeDiffCapsFor): a catch-up diff of a list of 100 M entries can hold 60 M values and still
// be smaller than the list's snapshot.
struct RangeDiffCaps {
  uint64_t max_bytes = kMaxDiffBytes;
  uint64_t max_values = kMaxDiffEntries;
};

// One layer of a range diff.
struct RangeLayerDiff {
  LayerKind layer = LayerKind::kDomain;
  uint64_t universe = 0;
  uint64_t new_count = 0;        // fingerprints of the layer at to_version
  std::vector<uint64_t> absent;  // strictly increasing, < universe: touched, absent at to_version
  std::vector<uint64_t> present;  // strictly increasing, < universe: touched, present at to_version

  bool operator==(const RangeLayerDiff&) const = default;
};

// The change of a list from any version in [from_version, to_version] to to_version.
struct RangeDiff {
  std::string list_name;  // 1..kMaxListNameBytes bytes of [a-z0-9_-]
  uint64_t from_version = 0;  // A
  uint64_t to_version = 0;    // V > A
  std::vector<RangeLayerDiff> layers;  // ascending kind, each at most once; a layer not listed is untouched

  bool operator==(const RangeDiff&) const = default;
};

// Checks every invariant EncodeRangeDiff() needs and DecodeRangeDiff() enforces: the name, from < to, layer
// order and uniqueness, absent and present counts <= caps.max_values, each sequence strictly increasing and
// < universe, absent and present disjoint, present count <= new_count <= universe. kInvalidArgument naming
// the first violation.
Status ValidateRangeDiff(const RangeDiff& d, const RangeDiffCaps& caps = {});

// Serializes a range diff (format version 2), choosing the optimal Rice parameter per sequence.
// Precondition: ValidateRangeDiff(d, caps).ok() (aborts otherwise, in every build type, as EncodeDiff).
// Deterministic. Thread-safe. The result can exceed caps.max_bytes for huge diffs: the publisher checks,
// clients refuse.
std::string EncodeRangeDiff(const RangeDiff& d, const RangeDiffCaps& caps = {});

// Parses and validates range diff bytes from outside, with DecodeDiff's checks in DecodeDiff's order: size
// cap (kResourceExhausted), magic, format version (a version 1 diff is kCorruption "unsupported format
// version 1"; DecodeDiff likewise refuses version 2), the SHA-256 trailer, every header field and count
// against the caps (kResourceExhausted) and against the bytes present before allocating, the Rice streams
// with exact ends, then absent/present disjointness. kCorruption otherwise. Never crashes, never reads
// outside `bytes`. Thread-safe. `caps` replaces the size and value caps (a large diff's, signed by the manifest).
Result<RangeDiff> DecodeRangeDiff(std::string_view bytes, const RangeDiffCaps& caps = {});

// One layer of a range diff as its file holds it: the counts and the two Rice streams, which the merge that
// applies it decodes value by value (RangeLayerMerger). A client catching up holds these, a few bits a value,
// instead of RangeLayerDiff's 8 bytes (a large diff of a 100 M-entry list: tens of millions of values).
struct RangeLayerStreams {
  LayerKind layer = LayerKind::kDomain;
  uint64_t universe = 0;
  uint64_t new_count = 0;
  uint64_t absent_count = 0;
  uint64_t present_count = 0;
  int absent_k = 0;
  int present_k = 0;
  std::string_view absent_stream;  // into the bytes the diff was parsed from
  std::string_view present_stream;

  RiceSortedReader absent() const { return RiceSortedReader(absent_stream, absent_k, absent_count, universe); }
  RiceSortedReader present() const { return RiceSortedReader(present_stream, present_k, present_count, universe); }
};

// A range diff checked in full but not decoded: RangeDiff with each layer's streams in place of its values.
// Points into the bytes it was parsed from, which must outlive it unchanged.
struct RangeDiffStreams {
  std::string list_name;
  uint64_t from_version = 0;
  uint64_t to_version = 0;
  std::vector<RangeLayerStreams> layers;
};

// Every check of DecodeRangeDiff, in its order, in memory that does not grow with the diff: each layer's two
// streams are decoded once, in step, their values checked (bounds, exact ends, absent and present disjoint) and
// dropped. Where a layer has two faults, the one met first in that step-wise decode is reported. DecodeRangeDiff
// is this and then the decode.
Result<RangeDiffStreams> ParseRangeDiff(std::string_view bytes, const RangeDiffCaps& caps = {});

// The checks of one layer that need no old fingerprint (ValidateRangeDiff's with `max_values`, as kCorruption,
// prefixed "apply range diff to layer X").
Status CheckRangeLayerDiffShape(const RangeLayerDiff& d, uint64_t max_values = kMaxDiffEntries);

// Streaming apply, like MergeLayerDiff: next_old(uint64_t*) -> bool yields the client's old sorted
// fingerprints (false: no more), emit(uint64_t) -> Status receives the new ones in ascending order. Fails with
// kCorruption on a shape violation, an old value >= d.universe or not strictly increasing, or a result count
// != d.new_count (detected at the end: what was emitted is then garbage, the caller discards its output), or
// with emit's first error. Memory: the diff only. No value cap: the values are in memory already (the caps
// guarded their decoding).
template <typename NextOld, typename Emit>
Status MergeRangeLayerDiff(const RangeLayerDiff& d, NextOld&& next_old, Emit&& emit);
// The same from the layer's streams (RangeLayerStreams: memory is the merge's, not the diff's).
template <typename NextOld, typename Emit>
Status MergeRangeLayerDiff(const RangeLayerStreams& d, NextOld&& next_old, Emit&& emit);

namespace diff_internal {
// The absent or present values of a range layer as RangeLayerMerger reads them: from a decoded vector or straight
// from a Rice stream.
class AscendingSource {
 public:
  explicit AscendingSource(const std::vector<uint64_t>& values)
      : p_(values.data()), end_(values.data() + values.size()) {
    Advance();
  }
  explicit AscendingSource(RiceSortedReader rice) : rice_(rice), from_rice_(true) { Advance(); }

  bool has() const { return has_; }
  uint64_t head() const { return head_; }  // precondition: has()
  void Advance() {
    if (from_rice_) {
      has_ = rice_.Next(&head_);
    } else {
      has_ = p_ != end_;
      if (has_) head_ = *p_++;
    }
  }
  // A stream's decoding error (a stream that changed since it was parsed); always ok for a vector.
  const Status& status() const { return rice_.status(); }

 private:
  const uint64_t* p_ = nullptr;
  const uint64_t* end_ = nullptr;
  RiceSortedReader rice_;
  bool from_rice_ = false;
  bool has_ = false;
  uint64_t head_ = 0;
};
}  // namespace diff_internal

// The pull form of MergeRangeLayerDiff (which is written with it): Next(&v) yields the new fingerprints in
// ascending order, and false at the end or at the first error, which status() then holds (a result count other
// than d.new_count is found at the end). A client two hops behind chains two of them, old -> C -> V, and streams
// its state through both without composing the diffs in memory (sync/apply.h). Takes the layer decoded
// (RangeLayerDiff, whose shape is checked at the first Next) or as its file holds it (RangeLayerStreams, checked
// by ParseRangeDiff: its values are decoded as they are merged). Holds references to `d`, to the bytes a
// RangeLayerStreams points into and to what next_old refers to. Not thread-safe.
template <typename NextOld>
class RangeLayerMerger {
 public:
  RangeLayerMerger(const RangeLayerDiff& d, NextOld next_old)
      : layer_(d.layer),
        universe_(d.universe),
        new_count_(d.new_count),
        unchecked_(&d),
        next_old_(std::forward<NextOld>(next_old)),
        absent_(d.absent),
        present_(d.present) {}
  RangeLayerMerger(const RangeLayerStreams& d, NextOld next_old)
      : layer_(d.layer),
        universe_(d.universe),
        new_count_(d.new_count),
        next_old_(std::forward<NextOld>(next_old)),
        absent_(d.absent()),
        present_(d.present()) {}

  bool Next(uint64_t* out);
  const Status& status() const { return status_; }

 private:
  bool Fail(const std::string& what);

  LayerKind layer_;
  uint64_t universe_;
  uint64_t new_count_;
  const RangeLayerDiff* unchecked_ = nullptr;  // a decoded layer whose shape the first Next checks
  NextOld next_old_;
  diff_internal::AscendingSource absent_;
  diff_internal::AscendingSource present_;
  Status status_;
  uint64_t emitted_ = 0;
  uint64_t old_ = 0;        // the last old value read; waiting to be emitted while have_old_
  bool have_prev_ = false;  // an old value was read (old_ is the previous one for the order check)
  bool have_old_ = false;
  bool old_end_ = false;
  bool started_ = false;
  bool done_ = false;
};

// Reference apply into a vector (tests, small states): *out = (old_sorted \ d.absent) U d.present, with
// MergeRangeLayerDiff's checks. *out is cleared on failure; must not alias old_sorted.
Status ApplyRangeLayerDiff(const std::vector<uint64_t>& old_sorted, const RangeLayerDiff& d,
                           std::vector<uint64_t>* out);

// Builds a range layer from the fingerprints touched in (A, V] (`touched`, strictly increasing) and the
// layer's sorted set at V: absent = touched \ new_sorted, present = touched n new_sorted, new_count =
// new_sorted.size(). Precondition (asserted): both strictly increasing, every value < universe.
RangeLayerDiff MakeRangeLayerDiff(LayerKind layer, uint64_t universe, const std::vector<uint64_t>& touched,
                                  const std::vector<uint64_t>& new_sorted);

// Composes the range diffs (A, C] and (C, V] of one list into (A, V]: per layer, a value touched in (C, V]
// takes its presence from `second`, one touched only in (A, C] from `first` (it is the same at C and V);
// new_count is second's for the layers second has, first's otherwise. kInvalidArgument when first.to_version !=
// second.from_version, the lists differ, or a layer has different universes in the two. O(size of the two
// diffs). (A client two hops behind chains the two merges instead, RangeLayerMerger: no third diff in memory,
// and the first hop's count at C is checked.)
Result<RangeDiff> ComposeRangeDiffs(const RangeDiff& first, const RangeDiff& second);

// ---- implementation ----

namespace diff_internal {
Status MergeError(const LayerDiff& d, const std::string& what);
}  // namespace diff_internal

template <typename NextOld, typename Emit>
Status MergeLayerDiff(const LayerDiff& d, uint64_t old_count, NextOld&& next_old, Emit&& emit) {
  URLGUARD_RETURN_IF_ERROR(CheckLayerDiffShape(d, old_count));
  const uint64_t* removed = d.removed_positions.data();
  const uint64_t* const removed_end = removed + d.removed_positions.size();
  const uint64_t* added = d.added.data();
  const uint64_t* const added_end = added + d.added.size();
  uint64_t prev = 0;
  for (uint64_t i = 0; i < old_count; ++i) {
    uint64_t v;
    if (!next_old(&v)) {
      return diff_internal::MergeError(d, "the state ended after " + std::to_string(i) + " of " +
                                              std::to_string(old_count) + " entries");
    }
    if (v >= d.universe) {
      return diff_internal::MergeError(d, "the state holds fingerprint " + std::to_string(v) +
                                              " >= the universe " + std::to_string(d.universe));
    }
    if (i > 0 && v <= prev) {
      return diff_internal::MergeError(d, "the state is not strictly increasing at index " + std::to_string(i));
    }
    prev = v;
    if (removed != removed_end && *removed == i) {
      ++removed;
      continue;
    }
    while (added != added_end && *added < v) URLGUARD_RETURN_IF_ERROR(emit(*added++));
    if (added != added_end && *added == v) {
      return diff_internal::MergeError(d, "added fingerprint " + std::to_string(v) + " is already present");
    }
    URLGUARD_RETURN_IF_ERROR(emit(v));
  }
  while (added != added_end) URLGUARD_RETURN_IF_ERROR(emit(*added++));
  return Status::Ok();
}

namespace diff_internal {
Status RangeMergeError(LayerKind layer, const std::string& what);
}  // namespace diff_internal

template <typename NextOld>
bool RangeLayerMerger<NextOld>::Fail(const std::string& what) {
  status_ = diff_internal::RangeMergeError(layer_, what);
  done_ = true;
  return false;
}

template <typename NextOld>
bool RangeLayerMerger<NextOld>::Next(uint64_t* out) {
  if (done_) return false;
  if (!started_) {
    started_ = true;
    if (unchecked_ != nullptr) {
      status_ = CheckRangeLayerDiffShape(*unchecked_, UINT64_MAX);
      if (!status_.ok()) {
        done_ = true;
        return false;
      }
    }
  }
  for (;;) {
    if (!have_old_ && !old_end_) {
      uint64_t v;
      if (!next_old_(&v)) {
        old_end_ = true;
      } else {
        if (v >= universe_) {
          return Fail("the state holds fingerprint " + std::to_string(v) + " >= the universe " +
                      std::to_string(universe_));
        }
        if (have_prev_ && v <= old_) {
          return Fail("the state is not strictly increasing after " + std::to_string(old_));
        }
        have_prev_ = true;
        have_old_ = true;
        old_ = v;
      }
    }
    if (have_old_) {
      // Touched values present at the end that come before the old value go first.
      if (present_.has() && present_.head() < old_) {
        ++emitted_;
        *out = present_.head();
        present_.Advance();
        return true;
      }
      have_old_ = false;
      if (present_.has() && present_.head() == old_) {
        present_.Advance();  // touched, present at both ends: once
      } else {
        while (absent_.has() && absent_.head() < old_) absent_.Advance();
        if (absent_.has() && absent_.head() == old_) continue;  // Spec: old \ absent.
      }
      ++emitted_;
      *out = old_;
      return true;
    }
    if (present_.has()) {
      ++emitted_;
      *out = present_.head();
      present_.Advance();
      return true;
    }
    done_ = true;
    for (const diff_internal::AscendingSource* s : {&absent_, &present_}) {
      if (!s->status().ok()) return Fail(s->status().message());
    }
    if (emitted_ != new_count_) {
      return Fail("the result has " + std::to_string(emitted_) + " entries, the diff says " +
                  std::to_string(new_count_) + " (the state is not a version the diff applies to)");
    }
    return false;
  }
}

namespace diff_internal {
template <typename Layer, typename NextOld, typename Emit>
Status MergeRange(const Layer& d, NextOld& next_old, Emit& emit) {
  RangeLayerMerger<NextOld&> merger(d, next_old);
  uint64_t v;
  while (merger.Next(&v)) URLGUARD_RETURN_IF_ERROR(emit(v));
  return merger.status();
}
}  // namespace diff_internal

template <typename NextOld, typename Emit>
Status MergeRangeLayerDiff(const RangeLayerDiff& d, NextOld&& next_old, Emit&& emit) {
  return diff_internal::MergeRange(d, next_old, emit);
}

template <typename NextOld, typename Emit>
Status MergeRangeLayerDiff(const RangeLayerStreams& d, NextOld&& next_old, Emit&& emit) {
  return diff_internal::MergeRange(d, next_old, emit);
}

}  // namespace urlguard

#endif  // URLGUARD_CORE_DIFF_CODEC_H_
