// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Publisher: turns feeds into a new signed version of a list, as static files (docs/architecture.md §5, §8).
//
// Repository layout (docs/repository-layout.md; every name is made by format/repository_files.h, included below for
// the publisher's callers):
//   REPO/public/v1/lists/index.json, index.sig     the signed index of all lists (publish/list_index_writer.h)
//   REPO/public/v1/lists/LIST/manifest.json        the signed manifest (format/manifest.h)
//   REPO/public/v1/lists/LIST/manifest.sig         its detached Ed25519 signature file (format/signature.h)
//   REPO/public/v1/lists/LIST/snapshot-V.ugs.z     zlib of the full snapshot of version V
//   REPO/public/v1/lists/LIST/diff-F-V.ugd.z       zlib of the diff from version F to V (core/diff_codec.h)
//   REPO/public/v1/lists/LIST/LIST.rpz             the DNS export, when made (publish/rpz_export.h)
//   REPO/private/lists/LIST/V.ugs                  the publisher's own copies of recent versions (diff bases)
//   REPO/private/lists/LIST/V.entries              their domain and ip entries in clear (publish/entry_list.h)
//   REPO/private/lists/LIST/V.state                every entry's record, sorted (publish/state_file.h)
//   REPO/private/lists/LIST/V.ugh                  full hashes of version V for the verify API (format/full_hash_file.h)
//   REPO/private/lists/LIST/publish.lock           one publisher per list (publish/repo_lock.h)
//   REPO/private/tmp/LIST/                         spilled sort runs of the list's run in progress (emptied at start)
//   REPO/private/seen.bin                          the "seen before?" filter (publish/seen_filter.h), under seen.lock
//   REPO/private/index.lock                        held while the list index is rebuilt
// Only public/ is ever served.
//
// One Publish() call: read every input (a bad line is reported and skipped; the rest loads), make the inputs the
// list's whole content at version previous + 1, keep the previous layer universes when the list size still fits
// them (so diffs are possible), write the snapshot, a diff from each of the last K versions, the manifest and its
// signature, replace the list's full hashes, record the run in the seen filter, and delete files no manifest
// refers to any more. Files are written before the manifest that names them, each by atomic rename.
//
// Thread safety: one Publish at a time per list and repository (a file lock enforces it across processes);
// publications of different lists run side by side on one repository (each has its own private and scratch
// directories; the shared files, seen.bin and the list index, are written under their own locks).
#ifndef URLGUARD_PUBLISH_PUBLISHER_H_
#define URLGUARD_PUBLISH_PUBLISHER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "url/entry.h"
#include "core/layer_kind.h"
#include "core/diff_codec.h"
#include "platform/env.h"
#include "feeds/feeds.h"
#include "signing/signer.h"
#include "format/manifest.h"
#include "format/repository_files.h"
#include "format/version_store.h"
#include "urlguard/publish.h"
#include "urlguard/status.h"

namespace urlguard {

class EpochMap;  // publish/catchup.h

// How many problems (bad lines) a report keeps in full; all are counted.
constexpr size_t kMaxReportedFeedProblems = 200;

struct PublishOptions {
  std::string repo_dir;
  std::string list;
  std::vector<FeedSpec> inputs;         // a full version: the list's whole content
  // An incremental version (when either is set; `inputs` must then be empty): the previous version's state
  // (a base REPO/private/lists/LIST/B.state plus the deltas after it, publish/lsm_state.h) minus the entries of
  // `remove_inputs` plus those of `add_inputs`. Writes only the effective change as V.delta (no state file); gives
  // the same public files, snapshot and full hashes as a full version from the resulting content.
  std::vector<FeedSpec> add_inputs;
  std::vector<FeedSpec> remove_inputs;
  int64_t expires_in_seconds = 24 * 3600;
  uint32_t keep = 5;                // diffs from up to this many previous versions
  // The list's private state is a base B.state plus one V.delta per version after it (publish/lsm_state.h). After a
  // commit, the deltas are folded into a new base when they hold more than 1/compact_ratio of the base's records
  // or number compact_max_deltas (0 for either: that trigger is off; both 0: never compact here). Deltas are kept
  // for `keep_deltas` versions (range diffs for clients that were away are computed from them).
  uint32_t compact_ratio = 8;
  uint32_t compact_max_deltas = 64;
  uint32_t keep_deltas = 1440;      // a day of minute versions: the deltas of versions V-1439 .. V
  bool emergency = false;           // manifest policy flag
  double fp_rate = 0.001;           // per-URL false-positive target
  uint32_t min_wait_seconds = 1800;  // clients poll at most this often
  std::string default_threat;       // for entries whose feed names none; empty = the list name
  int64_t now_unix = 0;             // 0: the Env's clock

  // Fleet mode (format/version_store.h, docs/runbook-publishers.md). With a version store, the version number
  // comes from the store's last committed version under its per-list lock (not from the private copies), the
  // version is committed to the store before manifest.json/manifest.sig are written, the repository file lock and
  // seen.bin are not used (the store holds the seen counts; V.ugh is still written, after the commit), and a public manifest
  // that lags the store's last committed version (a publisher killed between its commit and its manifest write)
  // is first rewritten from the store, byte for byte. Not owned; nullptr: today's single-machine behaviour.
  VersionStore* version_store = nullptr;
  // When set, the list's entries come from here instead of `inputs` (which must then be empty): called once with
  // a sink taking each entry's key and threat. Used with a version store whose entries are the source of truth.
  std::function<Status(const std::function<void(const EntryKey& key, const std::string& threat)>& sink)> entry_source;
  // Bytes of sort buffers the run may hold (records of 56 bytes; domain and ip names of 256); above it, sorted
  // runs spill to REPO/private/tmp/LIST/ and are merged (publish/external_sort.h). Peak memory is this plus a fixed
  // overhead (docs/repository-layout.md, "Memory budget").
  size_t memory_budget = size_t{1} << 30;
  int threads = 2;                  // parse, canonicalize and hash on this many threads
  size_t block_bytes = 0;           // feed read block; 0: kDefaultIngestBlockBytes
  PublishPhaseFn phase_progress;    // optional: told as each phase and step begins (include/urlguard/publish.h)

  // The publication guard (docs/feeds.md, "The publication guard"), off by default here (UpdateFeeds checks its
  // feeds itself); PublishList turns it on. A refusal is kFailedPrecondition before anything is committed, and
  // *refusal says why.
  bool check_inputs = false;  // refuse an input that is empty, looks like HTML, has no entry or is mostly rejected
  double max_rejected_fraction = kDefaultInputMaxRejectedFraction;
  std::vector<std::string> accepted_inputs;  // input paths taken although they fail the check
  bool cap_removal = false;         // refuse a full version that removes more than max_removal (CheckRemoval)
  double max_removal = kDefaultPublishMaxRemoval;
  PublishRefusal* refusal = nullptr;  // optional: set when the guard refuses (not owned)

  // Manifest format 2 (docs/versions.md): 1 keeps today's manifests (a snapshot and version 1 diffs per version,
  // O(N) work per version); 2 publishes a snapshot only at checkpoints and range diffs in between, so an
  // incremental version costs what changed. A full version with format 2 is a checkpoint. File state only (no
  // version store).
  uint32_t manifest_format = 1;
  // Format 2: a checkpoint (compaction + snapshot) is due when the fingerprints touched since the last one exceed
  // this or an eighth of the list's (at least 64 Ki) (it bounds each version's range diffs, and what a client far
  // behind downloads after the checkpoint's snapshot); the incremental run that finds it due makes it after its commit
  // unless `checkpoint_inline` is false (the publisher loop runs it on its maintenance thread instead).
  uint64_t checkpoint_changes = uint64_t{1} << 20;
  bool checkpoint_inline = true;
  // Format 2: each range diff from an anchor wastes at most this ratio over what a client missed (PlanAnchors).
  double catchup_ratio = 1.3;
  // Format 2: a checkpoint's catch-up archive covers at most this many touched fingerprints back (its memory:
  // 24 bytes each); clients that missed more take the checkpoint snapshot. 0: follows the list (3/5 of its
  // fingerprints, within 16 Mi .. 64 Mi: past 3/5 the snapshot is the smaller download; docs/versions.md §7b).
  uint64_t catchup_retention = 0;
  // Format 2: the most values one stream of a range diff may hold (what clients take: kMaxDiffEntries). A version
  // whose diff from its checkpoint would hold more (a batch of millions of changes) becomes a checkpoint itself
  // before its commit. Tests lower it to reach that path with small lists.
  uint64_t range_diff_value_cap = kMaxDiffEntries;
};

struct PublishReport {
  uint64_t version = 0;
  uint64_t entries[3] = {0, 0, 0};  // by LayerKind, unique keys
  uint64_t added[3] = {0, 0, 0};    // vs the previous version (fingerprints)
  uint64_t removed[3] = {0, 0, 0};
  bool first_version = true;
  bool universe_changed = false;     // the list outgrew its universes: clients take the full snapshot once
  // Incremental versions: the effective change written as V.delta (puts: new entries or new threats; deletes).
  uint64_t delta_puts = 0;
  uint64_t delta_deletes = 0;
  bool compacted = false;            // the run folded the list's deltas into a new base after its commit
  // Manifest format 2: the checkpoint the manifest names, the fingerprints the version touched, its range diffs
  // (from_version, wire bytes, touched fingerprints in `diffs`), and whether it made a new checkpoint after its
  // commit.
  uint64_t checkpoint = 0;
  uint64_t touched = 0;
  bool checkpointed = false;
  bool checkpoint_due = false;  // one is due and left to be made beside publishing (checkpoint_inline false)
  uint64_t input_lines = 0;
  uint64_t input_entries = 0;
  uint64_t rejected = 0;             // bad lines and entries that are no URL/domain/IP
  uint64_t new_keys = 0;             // never ingested before (seen filter)
  uint64_t seen_before = 0;
  // A format 2 incremental version counts neither: the seen filter learns its additions at the next checkpoint
  // (new_keys and seen_before stay 0).
  bool seen_at_checkpoint = false;
  std::vector<FeedProblem> problems;  // the first kMaxReportedFeedProblems
  uint64_t snapshot_bytes = 0;
  uint64_t snapshot_wire_bytes = 0;
  struct DiffInfo {
    uint64_t from_version;
    uint64_t wire_bytes;
    uint64_t changed_entries;
  };
  std::vector<DiffInfo> diffs;
  std::string manifest_path;
  size_t spilled_runs = 0;           // sorted runs written to disk (0: everything fit in the budget)
  // Always true in a returned report: Publish returns a report exactly when the version was committed (the
  // commit point: the rename of manifest.json; with a version store, the store's commit) and a Status exactly
  // when it was not.
  bool committed = false;
  // Steps after the commit that failed (the list index, the manifest files after a store's commit): the version
  // stands and clients may hold it; the next run repeats these steps.
  std::vector<std::string> warnings;
};

// PublishList's copies between the public types (include/urlguard/publish.h) and these. A twin is a place to
// forget a field: publish/publish_api_test.cc fails when a public field is added and not carried.
//   CopyListPublishOptions: the fields Publish takes as they are, and the publication guard (on, capped at
//   o.max_removal unless o.allow_large_removal). PublishList fills the rest itself: the inputs (parsed into
//   FeedSpecs), the accepted inputs, the PostgreSQL state's seams, the key, the Env and the progress callback.
void CopyListPublishOptions(const ListPublishOptions& o, PublishOptions* po);
//   ToListPublishReport: every field of the public report.
ListPublishReport ToListPublishReport(const PublishReport& report);

// Called now and then with the number of entries processed so far.
using ProgressFn = std::function<void(uint64_t entries)>;

// Publishes a new version. Fails without changing the served files when an input cannot be read, no entry is
// valid, the list is locked by another publisher, or a write before the commit fails (files already written for
// the new version are harmless: no manifest names them). A failure after the commit is no failure: the report
// (committed) lists it in `warnings`.
// Manifest format 2 (docs/versions.md §5): makes committed version `version` (a format 2 version, with its epoch map)
// of list options.list a checkpoint: its state and full hashes folded into new bases, its snapshot (public, zlib),
// the catch-up archive and the range diffs to it, then the checkpoint record, written last. The next version adopts
// it. Reads immutable files only, so it runs beside publishing (the publisher loop's maintenance thread, `urlguard-
// publish compact`); a kill at any point leaves no record (nothing changed for clients; stray temporary files are
// removed by the next run) or a complete one. Ok and no work when `version` already is the newest checkpoint.
// kFailedPrecondition without an earlier checkpoint; kCorruption when the snapshot disagrees with the versions'
// digest sums (never published); I/O errors.
Status MakeCheckpoint(Env* env, const PublishOptions& options, uint64_t version);
// The list's committed manifest (REPO/public/.../LIST/manifest.json), read and parsed; errors name the file.
Result<Manifest> ReadListManifest(Env* env, const std::string& repo_dir, const std::string& list);
// MakeCheckpoint beside publishing (`urlguard-publish compact`): `*version` is the committed version the caller
// read. Versions keep the epoch maps of the newest two versions only, so when versions committed since have removed
// its map, the pass makes the newest committed version a checkpoint instead and sets *version to it. True when it
// made one; false when *version already was the newest checkpoint.
Result<bool> MakeCheckpointBeside(Env* env, const PublishOptions& options, uint64_t* version);
// MakeCheckpointBeside when the fingerprints touched since the newest checkpoint exceed options.checkpoint_changes
// or an eighth of the list's fingerprints (at least 64 Ki; what the publisher loop's maintenance thread and
// `compact --if-due` call after each commit). True when it made one (of *version).
Result<bool> MakeCheckpointIfDue(Env* env, const PublishOptions& options, uint64_t* version);
// Unlinks what versions moved into LIST's trash (format/repository_files.h PrivateTrashDir: bases a newer
// checkpoint superseded). MakeCheckpoint and MakeCheckpointIfDue run it once they hold the version's epoch map
// (ignoring its failure), so the loop's maintenance thread, `compact` and `compact --if-due` empty it beside
// publishing. Nothing reads the trash: safe at any time. Ok when there is none; the first error otherwise.
Status EmptyTrash(Env* env, const std::string& repo_dir, const std::string& list);
// The rule MakeCheckpointIfDue and an inline checkpoint apply to `map` (the epoch map of the newest version) when
// the newest checkpoint is `checkpoint`.
bool CheckpointDue(const EpochMap& map, uint64_t checkpoint, uint64_t checkpoint_changes);

Result<PublishReport> Publish(Env* env, const SigningKey& key, const PublishOptions& options,
                              const ProgressFn& progress = nullptr);

// Answers "have we seen this before?" from the repository's seen filter, for each entry: -1 when the entry is
// invalid, 0 when never seen, else the approximate number of runs that contained it.
Result<std::vector<int64_t>> SeenCounts(Env* env, const std::string& repo_dir, const std::vector<std::string>& entries);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_PUBLISHER_H_
