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

#include <string>
#include <string_view>

#include "core/diff_codec.h"
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

// Checks that full snapshot bytes are the state the manifest names (list, version, size, SHA-256) and
// structurally valid. kCorruption otherwise.
Status CheckSnapshotAgainstManifest(std::string_view snapshot, const Manifest& manifest);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_APPLY_H_
