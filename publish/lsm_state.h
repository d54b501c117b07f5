// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// LsmState: a list's content at one version as the publisher keeps it since issue 17, a base plus small deltas,
// in two levels (an LSM tree of depth two):
//
//   REPO/private/lists/LIST/B.state     the whole content of version B (publish/state_file.h), mapped
//   REPO/private/lists/LIST/V.delta     for every V in (B, X]: V's effective change (publish/state_delta.h)
//
// The state at X is B.state with the deltas B+1..X applied in order (a later record for an entry replaces an
// earlier one; a delete removes it). A version then costs what changed: it looks its added and removed entries up
// here (O(changes log N)) and writes only its own delta, instead of reading and rewriting 48 bytes x N (9.5 s of
// CPU at 10 M entries, 149 s at 100 M before this). CompactListState folds the deltas into a new base in the
// background: it reads immutable files only, so publishing goes on beside it.
//
// Which base: the newest B.state with B <= X for which every delta in (B, X] exists (design17 §1). A compaction
// killed at any point leaves either only the old base (a stray X.state.tmp: PruneListState removes it) or both
// bases, and both describe the same content, so either choice is right.
//
// Lookups: the base's records are sorted by (layer, key, sha256) with keys uniform 64-bit hashes, so a lookup
// interpolates: it guesses the record's place from its key, probes the two records a few standard deviations
// either side of the guess and repeats inside them (about 4 pages per lookup at 100 M, where a binary search
// touches 27 and the kernel's readahead mapped 32 around each). The base is mapped MADV_RANDOM and its pages are
// handed back to the kernel every kReleaseLookups lookups, so a version's 50 k lookups into a 4.8 GB base do not
// become 4.4 GB of resident set (measured at 100 M before this: docs/performance.md "Freshness"). The deltas are
// few and small (a compaction runs when they hold 1/8 of the base or number 64): they are read whole and folded
// into one sorted vector, the overlay, at Open (56 bytes per record in memory).
//
// Trust: Open checks the base's header and size, not its checksum (that would read the whole base, O(N), on every
// version); the files are the publisher's own, fsynced and renamed into place. Every full walk (ForEach: the
// compaction, a full snapshot) verifies the base's record count and checksum at its end. Each delta is verified
// whole at Open.
//
// Thread safety: a LsmState is immutable after Open; const methods may run concurrently.
#ifndef URLGUARD_PUBLISH_LSM_STATE_H_
#define URLGUARD_PUBLISH_LSM_STATE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/layer_kind.h"
#include "core/sha256.h"
#include "platform/env.h"
#include "publish/key_record.h"
#include "publish/state_delta.h"
#include "urlguard/status.h"

namespace urlguard {

// The keys a fingerprint f of universe U covers (fingerprint = MulHi64(key, U), core/byte_io.h): the inclusive
// range [ceil(f * 2^64 / U), ceil((f + 1) * 2^64 / U) - 1]. f < U, U >= 1 (asserted).
// A LsmState hands its base's mapped pages back to the kernel after this many base lookups: at about 4 pages a
// lookup that bounds the lookups' share of the resident set to about 64 MB per LsmState.
constexpr uint64_t kReleaseLookups = 4096;

struct KeyRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive: the last fingerprint's range ends at 2^64 - 1
};
KeyRange KeyRangeOfFingerprint(uint64_t fingerprint, uint64_t universe);

class LsmState {
 public:
  // Opens list `list`'s state at `version` in `private_dir` (REPO/private/lists/LIST): the base chosen as above,
  // mapped, and the deltas after it read and verified. kFailedPrecondition (naming the missing file and saying
  // "run a full publish") when no base <= version has every delta up to version; kCorruption for a damaged base
  // header or delta, or one that names another list or version; kIoError from the file system.
  static Result<std::unique_ptr<LsmState>> Open(Env* env, const std::string& private_dir, const std::string& list,
                                                 uint64_t version);
  ~LsmState();

  uint64_t version() const { return version_; }
  uint64_t base_version() const { return base_version_; }
  uint64_t base_records() const { return base_count_; }
  // Records of the deltas (B, X] after folding (each entry once): what a compaction would fold in.
  uint64_t overlay_records() const { return overlay_.size(); }
  uint64_t delta_count() const { return version_ - base_version_; }

  // Threat names: the base's table, then the names only the deltas use (unsorted past the base's). A record's
  // `threat` indexes this table.
  const std::vector<std::string>& threats() const { return threats_; }

  // The entry (layer, key, sha256) at version(): its record (seq 0, reserved 0, threat indexing threats()), or
  // nullopt when absent. O(log N + log overlay).
  std::optional<KeyRecord> Find(uint8_t layer, uint64_t key, const uint8_t sha256[32]) const;

  // Calls fn for every entry of `layer` with first <= key <= last at version(), in (key, sha256) order; stops at
  // the first error fn returns. What a fingerprint's presence test needs (KeyRangeOfFingerprint).
  Status ForEachInKeyRange(uint8_t layer, uint64_t first, uint64_t last,
                           const std::function<Status(const KeyRecord&)>& fn) const;
  // Whether any entry of `layer` lies in [first, last].
  bool AnyInKeyRange(uint8_t layer, uint64_t first, uint64_t last) const;
  // Where a lookup ended in the base, for the next one of a series in ascending order: its search starts there,
  // and its first bracket is the square root of the records in between instead of the layer's (at 10 M entries
  // and 50 k lookups, about 30 records on one page where a search from the layer's ends probed about 4 pages). A
  // lookup below the finger (or in another layer) searches from the layer's ends. Caller-owned: one per thread.
  struct Finger {
    uint8_t layer = kLayerKindCount;
    uint64_t index = 0;  // the previous answer: base record index - 1 is below that lookup's probe
  };
  // Find and ForEachInKeyRange in one search, for a key's fingerprint range [first, last] (which holds `key`): the
  // entry (layer, key, sha256) at version() or nullopt, and in *in_range the number of entries in the range. What a
  // version asks of each entry it changes (the effective change, then the fingerprints it touched): one search
  // where the two took three (docs/performance.md "Freshness", session 13). `finger` (optional): the series'.
  // kCorruption for a base record in the range with a bad layer or threat id.
  Result<std::optional<KeyRecord>> FindInKeyRange(uint8_t layer, uint64_t key, const uint8_t sha256[32],
                                                  uint64_t first, uint64_t last, uint64_t* in_range,
                                                  Finger* finger = nullptr) const;

  // Reads ahead, in parallel, the base pages that lookups of `keys` (Find, and the ranges of AnyInKeyRange and
  // ForEachInKeyRange starting there) will touch: it runs their interpolation searches in lockstep, one round at a
  // time, and asks the kernel for all of a round's pages at once (madvise MADV_WILLNEED) before reading them. A
  // cold base then costs the batch a few parallel reads per round instead of one wait per page (at 100 M, the
  // effective change of a 168 k-change version: docs/performance.md "Freshness"). A hint only: what it reads
  // changes no answer. Hands its mapped pages back to the kernel at the end. Call it with a few thousand keys at a
  // time, in any order. Does nothing when the first call finds 90 % of a sample of the base's pages in memory
  // (SampleResidentFraction): a warm base would only pay a system call per page.
  struct LookupKey {
    uint8_t layer = 0;
    uint64_t key = 0;
  };
  enum class Readahead { kIfCold, kAlways };  // kAlways: skip the residency sample (tests)
  struct PrefetchStats {
    uint64_t searched = 0;  // keys whose search ran (not answered by the overlay, not in an empty layer)
    uint64_t pages = 0;     // distinct pages asked for, summed over the rounds
  };
  PrefetchStats PrefetchLookups(std::span<const LookupKey> keys, Readahead mode = Readahead::kIfCold) const;

  // Calls fn for every entry at version() in ByLayerKey order: the merged walk of the base and the overlay that a
  // compaction and a full snapshot stream. Verifies the base's record count and checksum at the end (kCorruption).
  // O(N) reads; hands the base's pages back to the kernel as it goes.
  Status ForEach(const std::function<Status(const KeyRecord&)>& fn) const;

  // ForEach as a pull: the same records, one per Next(), for merges that interleave the state with other sorted
  // streams (the publisher's loop). Hashes and hands back the base's pages as it goes. Valid while the LsmState
  // lives; one thread.
  class Cursor {
   public:
    explicit Cursor(const LsmState* state) : s_(state), hashed_(0) {}
    // The next record (threat indexing threats()); false at the end, once the base's record count and checksum
    // are verified (kCorruption if not, or for a record with a bad layer or threat id).
    Result<bool> Next(KeyRecord* out);

   private:
    void HashUpTo(size_t offset);
    const LsmState* s_;
    uint64_t b_ = 0;
    size_t o_ = 0;
    size_t hashed_;
    Sha256Hasher hasher_;
    bool done_ = false;
    bool started_ = false;
  };

 private:
  LsmState() = default;
  struct Bracket;  // one interpolation search, a round at a time (lsm_state.cc)
  // The i-th base record, decoded (threat id as stored: indexes the base's table, a prefix of threats_).
  KeyRecord BaseRecord(uint64_t i) const;
  uint64_t BaseKey(uint64_t i) const;  // the i-th base record's key alone
  // First base index whose (layer, key, sha) is >= the given one (sha null: the smallest sha): an interpolation
  // search inside the layer (see the file comment). Counts towards the next page release.
  uint64_t BaseLowerBound(uint8_t layer, uint64_t key, const uint8_t* sha256, Finger* finger = nullptr) const;
  Status ForEachInKeyRange(uint8_t layer, uint64_t first, uint64_t last, Finger* finger,
                           const std::function<Status(const KeyRecord&)>& fn) const;
  // The same by binary search over [lo, hi): Open's layer boundaries and the end of an interpolation.
  uint64_t BinaryLowerBound(uint64_t lo, uint64_t hi, uint8_t layer, uint64_t key, const uint8_t* sha256) const;
  size_t OverlayLowerBound(uint8_t layer, uint64_t key, const uint8_t* sha256) const;
  // The end of a key range [.., last] of `layer` (< kLayerKindCount) that starts at base record b / overlay record
  // o: the first record past it, by a scan (ranges hold a few records).
  uint64_t BaseRangeEnd(uint8_t layer, uint64_t b, uint64_t last) const;
  size_t OverlayRangeEnd(uint8_t layer, size_t o, uint64_t last) const;
  // Merged walk of base records [b, b_end) and overlay records [o, o_end).
  Status Walk(uint64_t b, uint64_t b_end, size_t o, size_t o_end,
              const std::function<Status(const KeyRecord&)>& fn) const;

  std::string path_;  // the base's
  uint64_t version_ = 0;
  uint64_t base_version_ = 0;
  std::unique_ptr<MappedFile> base_;
  size_t records_at_ = 0;  // offset of the base's first record
  uint64_t base_count_ = 0;
  uint64_t layer_begin_[kLayerKindCount + 1] = {};  // the base's records of layer l: [layer_begin_[l], [l + 1])
  mutable std::atomic<uint64_t> base_lookups_{0};
  mutable std::atomic<bool> prefetch_decided_{false};  // PrefetchLookups sampled the base's residency
  mutable std::atomic<bool> prefetch_{false};          // and found it worth reading ahead
  size_t base_threats_ = 0;
  std::vector<std::string> threats_;
  std::vector<KeyRecord> overlay_;  // ascending by CompareEntry; reserved = DeltaOp; puts' threat indexes threats_
};

// Folds list `list`'s state at `to_version` (base + deltas) into a new base `to_version`.state in `private_dir`,
// written as a full publish writes it (threat table: the names in use, sorted; records in ByLayerKey order), so
// the two are byte-identical for the same content. Crash-safe: X.state.tmp, fsync, rename, fsync of the directory.
// Reads immutable files only: safe beside a publish of later versions (it never deletes anything: PruneListState
// does, under the list lock). No-op when the chosen base already is `to_version`. Errors as LsmState::Open, and
// kIoError / kResourceExhausted from writing (the .tmp is removed on a clean failure).
Status CompactListState(Env* env, const std::string& private_dir, const std::string& list, uint64_t to_version);

// Housekeeping under the list's publish lock, after a commit of `committed_version`: removes stray *.state.tmp and
// *.delta.tmp files, every base older than the newest base that is complete at `committed_version`, and the deltas
// that base makes unnecessary whose version is below `keep_deltas_from` (deltas are kept for a retention window:
// clients that were away get range diffs computed from them). Never removes what Open(committed_version) chooses.
Status PruneListState(Env* env, const std::string& private_dir, const std::string& list, uint64_t committed_version,
                      uint64_t keep_deltas_from);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_LSM_STATE_H_
