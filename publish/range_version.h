// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The steps of a manifest format 2 version (docs/versions.md §3) that follow from the version's effective change
// alone: its touched fingerprints (presence before and after, from lookups in the state), its range diff files,
// and the checkpoint record a version adopts. Each costs what changed since the checkpoint, never the list.
#ifndef URLGUARD_PUBLISH_RANGE_VERSION_H_
#define URLGUARD_PUBLISH_RANGE_VERSION_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/layer_kind.h"
#include "format/manifest.h"
#include "publish/catchup.h"
#include "publish/key_record.h"
#include "publish/lsm_state.h"
#include "urlguard/env.h"
#include "urlguard/status.h"

namespace urlguard {

// The fingerprints a version touched, sorted by (layer, fingerprint), each once: for every record of the
// version's effective change (`change`, ByLayerKey order), its key's fingerprint under the layer's universe,
// present before (any entry of `before`, the state at V - 1, in the fingerprint's key range) and after (the same
// in `after`, the state at V). Distinct keys may share a fingerprint, which is why presence is a range lookup
// and not the record's own op. kFailedPrecondition when a changed layer has no universe (universe 0: it had no
// entry at the checkpoint; a checkpoint must size one first).
Result<std::vector<TouchedFingerprint>> TouchedFingerprintsOf(const LsmState& before, const LsmState& after,
                                                              std::span<const KeyRecord> change,
                                                              const std::array<uint64_t, kLayerKindCount>& universe);

// The same from `before` and the change alone, without the state at V: a fingerprint is present after when
// one of the change's records in its key range is a put, or when `before` holds more entries in the range
// than the change deletes there (a delete always names an entry of `before`: state_delta.h). What a version
// calls: opening the state at V read and sorted every delta since the base a second time (0.44 s of CPU of a
// 50 k-change version 20 versions after a checkpoint, URLGUARD_PUBLISH_STAGES: docs/scale.md §7). `change`
// must be the effective change against `before` (ComputeEffectiveChange); kCorruption for a record with a bad
// layer or op.
Result<std::vector<TouchedFingerprint>> TouchedFingerprintsOf(
    const LsmState& before, std::span<const KeyRecord> change,
    const std::array<uint64_t, kLayerKindCount>& universe);

// The same from the change and, for each of its records, the number of entries of `before` in its key's
// fingerprint range (`before_in_range`, as long as `change`): what a version has once its effective change looked
// its entries up with LsmState::FindInKeyRange, so no second search runs. kInvalidArgument when the lengths differ.
Result<std::vector<TouchedFingerprint>> TouchedFingerprintsOf(
    std::span<const KeyRecord> change, std::span<const uint64_t> before_in_range,
    const std::array<uint64_t, kLayerKindCount>& universe);

// Writes one range diff as a public file `public_dir/RangeDiffFileName(from, to)` (zlib, atomically) and
// returns its manifest entry. The zlib stream holds stored (level 0) blocks: Rice-coded gaps are at their
// entropy, and level 1 made files 0.03% larger than their input at a tenth of a version's CPU (docs/scale.md
// §7); every zlib reader inflates stored blocks. kResourceExhausted, with nothing written, when clients could not
// take the diff: a layer's absent or present values over `value_cap` (readers take kMaxDiffEntries; tests lower
// it), or its bytes over kMaxDiffBytes. The caller leaves such a diff out.
// With `large` (a checkpoint's to-checkpoint diffs), a diff over those caps is written when it is within
// `large` (values a stream, bytes inflated and deflated), and *is_large says so: it goes to the manifest's
// `large_diffs` (docs/manifest-format.md §8.5), which only readers that take large diffs read.
// `diff` is taken by value and let go of once encoded (8 bytes a value, beside the file's 4 and its deflated
// copy): a checkpoint's farthest to-checkpoint diff of a 100 M list holds tens of millions of values.
Result<ManifestDiff> WriteRangeDiffFile(Env* env, const std::string& public_dir, RangeDiff diff,
                                        uint64_t value_cap = kMaxDiffEntries, const RangeDiffCaps* large = nullptr,
                                        bool* is_large = nullptr);

// The checkpoint record, REPO/private/lists/LIST/X.checkpoint: the format 2 manifest of version X with checkpoint
// X (its snapshot, state hash and digest) whose diffs are the to-X range diffs of the checkpoint's catch-up
// archive (from_version < X: the first hop of a client behind X). Unsigned and private; canonical JSON
// (SerializeManifest). Written last of a checkpoint's files, by rename: its presence makes the checkpoint exist.
Status WriteCheckpointRecord(Env* env, const std::string& path, const Manifest& record);
// Reads and validates it (ParseManifest rules; format 2, checkpoint.version == version, list `list`).
Result<Manifest> ReadCheckpointRecord(Env* env, const std::string& path, const std::string& list);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_RANGE_VERSION_H_
