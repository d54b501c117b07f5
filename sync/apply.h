// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Applying an update to a list's state (docs/architecture.md §5, client side): old snapshot + signed manifest + diff (or
// the full snapshot) -> the new snapshot's bytes, proven equal to what the publisher built by the state SHA-256
// the manifest signs. The bytes go to a new file; nothing here touches a live file.
//
// Thread safety: pure functions.
#ifndef URLGUARD_SYNC_APPLY_H_
#define URLGUARD_SYNC_APPLY_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/diff_codec.h"
#include "core/set_digest.h"
#include "core/snapshot.h"
#include "format/manifest.h"
#include "urlguard/env.h"
#include "urlguard/status.h"

namespace urlguard {

// Rebuilds the snapshot of `manifest.version` from `old` and `diff`. kCorruption when the diff is for another
// list or base version, does not fit the old state (positions, counts, universes), or the result's SHA-256 is
// not manifest.state_sha256 (the caller then falls back to the full snapshot).
Result<std::string> ApplyDiffToSnapshot(const SnapshotView& old, const Diff& diff, const Manifest& manifest);

// The streaming form of ApplyDiffToSnapshot that the updater uses: walks `old`'s fingerprints in order (a
// cursor over the mapping; nothing is decoded into memory), merges `diff` into them (MergeLayerDiff) and writes
// the new snapshot with a SnapshotWriter to `path`.tmp, fsynced and NOT renamed (the Store verifies and renames
// it). Memory: the diff plus the writer's buffers, whatever the list size (bench/update_bench measures it).
// When `old_file` (the mapping `old` points into) is not null, the pages streamed through are handed back to the
// kernel as the merge moves on (ReleaseMappedPages), so the resident set does not grow by the old file either.
// Fails, with no file left at `path`.tmp, with kCorruption as ApplyDiffToSnapshot (checked before writing
// anything where possible: lists, versions, universes, the signed size), and with the Env's errors.
Status WriteDiffAppliedSnapshot(Env* env, const std::string& path, const SnapshotView& old,
                                const MappedFile* old_file, const Diff& diff, const Manifest& manifest);

// ---- Manifest format 2 (docs/manifest-format.md §8) ----------------------------------------------------------

// The set digest (core/set_digest.h) of a snapshot's fingerprint arrays: per layer its universe, count and
// hash sum; {0, 0} with universe 0 for a layer the snapshot lacks or holds as a Bloom filter (no fingerprint
// set; such a layer never takes a range diff). Walks the arrays with a cursor (no decoded copy).
Result<Sha256Digest> SnapshotSetDigest(const SnapshotView& snapshot);

// The format 2 form of WriteDiffAppliedSnapshot: streams `old` (a state at version F) through the range
// diff `diff` (F in [diff.from_version, diff.to_version], diff.to_version == manifest.version; a two-hop
// client passes its two diffs to the form below) into the snapshot of manifest.version at
// `path`.tmp, fsynced and not renamed. The header carries the manifest's list, version, created_unix and
// ip_prefix_lengths and the old state's key hash. Checks, before writing where possible: list and versions,
// each diff layer's universe against the old state's and the manifest's, then while streaming the merge's
// own checks (MergeRangeLayerDiff: exactly new_count values), and at the end the set digest of what was
// written against manifest.state_digest. On success *state_sha256 is the new file's trailing SHA-256 (the
// Store records it: format 2 manifests sign the set digest, not the file's hash). Fails with no file left at
// `path`.tmp: kCorruption for anything wrong with the diff or the base, the Env's errors otherwise.
Status WriteRangeDiffAppliedSnapshot(Env* env, const std::string& path, const SnapshotView& old,
                                     const MappedFile* old_file, const RangeDiff& diff, const Manifest& manifest,
                                     Sha256Digest* state_sha256);

// The same with the one or two range diffs of a client's path (docs/manifest-format.md §8.3) in order: a
// to-checkpoint diff (A, C] with A <= F <= C, then the diff (C, V]. Each layer streams the old state through the
// first hop and that through the second (RangeLayerMerger), so the memory is the two diffs, never a
// composed third. The checks of the one-diff form, plus: the second starts where the first ends, both hops'
// universes are the state's; a hop's own count check (its new_count at C) holds where it is reached.
Status WriteRangeDiffAppliedSnapshot(Env* env, const std::string& path, const SnapshotView& old,
                                     const MappedFile* old_file, std::span<const RangeDiff* const> hops,
                                     const Manifest& manifest, Sha256Digest* state_sha256);
// The same with the hops as their files hold them (ParseRangeDiff, which checked them): the values are decoded as
// the merge reads them, so the memory is the diffs' bytes, a few bits a value, not 8 bytes a value (the updater's
// form: a 4-hour catch-up of a 100 M-entry list is about 40 M values).
Status WriteRangeDiffAppliedSnapshot(Env* env, const std::string& path, const SnapshotView& old,
                                     const MappedFile* old_file, std::span<const RangeDiffStreams* const> hops,
                                     const Manifest& manifest, Sha256Digest* state_sha256);

// Full snapshot bytes held in memory (a download) opened as a view: in place when they are 8-byte aligned, as a
// std::string's heap buffer is, else through a copy into *aligned, which must then outlive the view (a 100 M-entry
// list's snapshot is 200 MB: the copy is made only where it must be).
Result<SnapshotView> OpenSnapshotBytes(std::string_view bytes, bool verify_checksum, std::vector<uint64_t>* aligned);

// Format 2: checks full snapshot bytes are the checkpoint the manifest names (list, checkpoint.version,
// checkpoint.state_bytes, checkpoint.state_sha256) and structurally valid. kCorruption otherwise.
Status CheckSnapshotAgainstCheckpoint(std::string_view snapshot, const Manifest& manifest);

// Checks that full snapshot bytes are the state the manifest names (list, version, size, SHA-256) and
// structurally valid. kCorruption otherwise.
Status CheckSnapshotAgainstManifest(std::string_view snapshot, const Manifest& manifest);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_APPLY_H_
