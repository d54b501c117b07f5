// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Repository files: the one place that names every file and directory of a publisher repository
// (docs/repository-layout.md), as LevelDB's db/filename.h names every file of a database. Code elsewhere
// makes a repository path only by calling these functions and recognizes a repository file name only with the
// Parse/Is functions below; format/repository_files_test.cc pins every name, so renaming a file is a
// deliberate change.
//
// It lives in format/ because every side of the repository uses it: the publisher writes it (publish/), the
// verify server serves its public half and maps its full-hash files (server/), the client fetches the public
// half by the same names below a server's base URL (sync/: URL paths mirror REPO/public/), and the offline
// checker opens directories of snapshot files (client/).
//
//   REPO/public/                         RepoPublicDir: what a server serves; URL paths mirror it
//     v1/lists/                          PublicListsDir; kPublicListsPath below public/ and a base URL
//       index.json, index.sig            ListIndexPath(), ListIndexSignaturePath() (docs/list-index.md)
//       LIST/                            PublicListDir; PublicListPath below public/ and a base URL
//         manifest.json, manifest.sig    kManifestFileName, kManifestSignatureFileName
//         snapshot-V.ugs.z               SnapshotFileName(V); IsSnapshotFileName
//         diff-F-V.ugd.z                 DiffFileName(F, V); IsDiffFileName
//         range-F-V.ugd.z                RangeDiffFileName(F, V); IsRangeDiffFileName (manifest format 2)
//         LIST.rpz                       RpzFileName(LIST)
//   REPO/private/                        RepoPrivateDir: the publisher's own, never served
//     lists/                             PrivateListsDir
//       LIST/                            PrivateListDir
//         V.ugs                          PrivateSnapshotFileName(V); ParsePrivateSnapshotFileName
//         V.entries                      EntryListFileName(V); ParseEntryListFileName
//         V.entries-delta                EntryListDeltaFileName(V); ParseEntryListDeltaFileName (format 2)
//         V.state                        StateFileName(V); ParseStateFileName: a base state
//         V.delta                        StateDeltaFileName(V); ParseStateDeltaFileName (publish/state_delta.h)
//         V.ugh                          FullHashFileName(V); ParseFullHashFileName
//         V.epoch                        EpochMapFileName(V); ParseEpochMapFileName (manifest format 2)
//         X.archive, X.checkpoint        ArchiveFileName(X), CheckpointRecordFileName(X); Parse... (format 2)
//         V.ughd                         FullHashDeltaFileName(V); ParseFullHashDeltaFileName
//         publish.lock                   ListPublishLockPath
//     tmp/LIST/                          PrivateTmpDir: scratch of LIST's publish in progress
//     trash/LIST/                        PrivateTrashDir: superseded bases waiting to be unlinked
//       PREFIX-N.run                     SortRunFileName(PREFIX, N): an external sort's spilled run
//       merged.run, seen.run             kMergedRunFileName, kSeenRunFileName
//     seen.bin                           SeenFilterPath
//     seen.lock, index.lock              SeenLockPath, IndexLockPath (what each guards: publish/repo_lock.h)
//     feeds/                             FeedsDir (docs/feeds-file.md)
//       update.lock                      FeedUpdateLockPath
//       FEED/                            FeedDir
//         meta, good                     kFeedMetaFileName, kFeedGoodFileName
//         quarantine/                    kFeedQuarantineDirName
//           T.body                       QuarantineFileName(T); ParseQuarantineFileName
//     feed-lists/LIST.record             FeedListsDir, ListRecordPath
//
// Paths are made with JoinPath (platform/env.h): REPO may end in '/' or be empty (the current directory).
// Lists and feeds are not checked here (IsValidListName, core/list_name.h, is the callers'): a name is only
// joined. The client's data directory (docs/data-dir.md) is another layout: format/current_record.h and
// sync/store.h.
//
// Thread safety: pure functions of their arguments.
#ifndef URLGUARD_FORMAT_REPOSITORY_FILES_H_
#define URLGUARD_FORMAT_REPOSITORY_FILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace urlguard {

// Changing any name below changes the repository layout that servers, CDNs and every released client rely on:
// update docs/repository-layout.md and format/repository_files_test.cc.

// ---- The public half (served; relative names mirror URL paths below a server's base URL B) ----

// "REPO/public".
std::string RepoPublicDir(const std::string& repo);
// "v1/lists": the lists directory below public/ and below B.
inline constexpr char kPublicListsPath[] = "v1/lists";
// "REPO/public/v1/lists".
std::string PublicListsDir(const std::string& repo);
// "v1/lists/LIST": a list's directory below public/ and below B.
std::string PublicListPath(const std::string& list);
// "REPO/public/v1/lists/LIST".
std::string PublicListDir(const std::string& repo, const std::string& list);

// The signed list index (docs/list-index.md), in the lists directory.
inline constexpr char kListIndexFileName[] = "index.json";
inline constexpr char kListIndexSignatureFileName[] = "index.sig";
// "v1/lists/index.json" and "v1/lists/index.sig": below public/ and below B.
std::string ListIndexPath();
std::string ListIndexSignaturePath();

// In a list's public directory: the signed manifest (format/manifest.h) and its signature file
// (format/signature.h).
inline constexpr char kManifestFileName[] = "manifest.json";
inline constexpr char kManifestSignatureFileName[] = "manifest.sig";

// "snapshot-V.ugs.z": zlib of version V's snapshot.
std::string SnapshotFileName(uint64_t version);
// "diff-F-V.ugd.z": zlib of the diff from version F to version V.
std::string DiffFileName(uint64_t from_version, uint64_t to_version);
// Whether `name` is "snapshot-" D ".ugs.z" (resp. "diff-" D "-" D ".ugd.z"), D a decimal number of 1 to 20
// digits (leading zeros allowed; 20 digits hold every uint64_t, no value is computed). What urlguard-server
// serves as immutable (server/static_files.h, IsImmutableFileName).
bool IsSnapshotFileName(std::string_view name);
bool IsDiffFileName(std::string_view name);
// Manifest format 2's range diff (F, V] (docs/versions.md): "range-F-V.ugd.z". Immutable like a diff.
std::string RangeDiffFileName(uint64_t from_version, uint64_t to_version);
bool IsRangeDiffFileName(std::string_view name);
// The publisher's private files of manifest format 2 (docs/versions.md): the epoch map of version V, the catch-up
// archive and the checkpoint record of a checkpoint X.
std::string EpochMapFileName(uint64_t version);
std::string ArchiveFileName(uint64_t version);
std::string CheckpointRecordFileName(uint64_t version);
std::optional<uint64_t> ParseCheckpointRecordFileName(std::string_view name);
std::optional<uint64_t> ParseEpochMapFileName(std::string_view name);
std::optional<uint64_t> ParseArchiveFileName(std::string_view name);

// "LIST.rpz": the list as a DNS response policy zone (docs/rpz.md), in the list's public directory.
std::string RpzFileName(const std::string& list);

// ---- The private half (never served) ----

// "REPO/private".
std::string RepoPrivateDir(const std::string& repo);
// "REPO/private/lists": one directory per list (what urlguard-server's file hash source scans).
std::string PrivateListsDir(const std::string& repo);
// "REPO/private/lists/LIST".
std::string PrivateListDir(const std::string& repo, const std::string& list);

// Names in a list's private directory, each carrying its version V in decimal.
// The uncompressed snapshot suffix: ".ugs" (the same format in a client's data directory, docs/data-dir.md).
inline constexpr char kSnapshotFileSuffix[] = ".ugs";
// "V.ugs": the publisher's copy of version V's snapshot (a diff base).
std::string PrivateSnapshotFileName(uint64_t version);
// "V.entries": version V's domain and ip entries in clear (publish/entry_list.h).
std::string EntryListFileName(uint64_t version);
// "V.entries-delta": what an incremental version V of manifest format 2 changed in the entry list of V - 1
// (publish/entry_list.h): the DNS export reads the newest V.entries plus the deltas after it.
std::string EntryListDeltaFileName(uint64_t version);
// V of "V.entries" (resp. "V.entries-delta"), as ParsePrivateSnapshotFileName; "V.entries.tmp" is neither.
std::optional<uint64_t> ParseEntryListFileName(std::string_view name);
std::optional<uint64_t> ParseEntryListDeltaFileName(std::string_view name);
// "V.state": every entry of version V as a sorted record (publish/state_file.h).
std::string StateFileName(uint64_t version);
// "V.delta": the effective change of version V against V-1 (publish/state_delta.h); the state of a version is
// a base "B.state" plus the deltas after it (publish/lsm_state.h).
std::string StateDeltaFileName(uint64_t version);
// "V.ugh": the full hashes of version V for the verify API (format/full_hash_file.h).
std::string FullHashFileName(uint64_t version);
// V of "V.ugs" (resp. "V.ugh"), V 1 to 19 decimal digits (leading zeros allowed: "007.ugs" is 7; at most 19
// so that every such number fits a uint64_t); nullopt for every other name.
std::optional<uint64_t> ParsePrivateSnapshotFileName(std::string_view name);
std::optional<uint64_t> ParseFullHashFileName(std::string_view name);
// V of "V.state" (resp. "V.delta"), as ParsePrivateSnapshotFileName: how the publisher lists its bases and deltas.
std::optional<uint64_t> ParseStateFileName(std::string_view name);
std::optional<uint64_t> ParseStateDeltaFileName(std::string_view name);
// "V.ughd": the full-hash delta of version V against V - 1 (format/full_hash_file.h, "Delta files"), and its
// parser (same digit rules as ParseFullHashFileName; "V.ugh" and "V.ughd.tmp" are not delta names).
std::string FullHashDeltaFileName(uint64_t version);
std::optional<uint64_t> ParseFullHashDeltaFileName(std::string_view name);
// Whether `name` is longer than ".ugs" and ends in it: the snapshot files Checker::OpenDirectory opens from a
// directory a user names (any stem: a private list directory, a data directory's lists/LIST/, hand-made
// files).
bool HasSnapshotFileSuffix(std::string_view name);

// "REPO/private/tmp/LIST": the scratch directory of LIST's publish in progress (emptied at its start and
// end).
std::string PrivateTmpDir(const std::string& repo, const std::string& list);
// "REPO/private/trash/LIST": LIST's superseded bases (state, full hashes, snapshots, entry lists), renamed here by
// the version that adopts a newer checkpoint and unlinked by the next checkpoint pass (publish/publisher.h
// MakeCheckpointIfDue), so that no version waits for the kernel to free gigabytes. Nothing reads it.
std::string PrivateTrashDir(const std::string& repo, const std::string& list);
// "PREFIX-N.run": the N-th run an external sort (publish/external_sort.h) spills into the scratch directory.
std::string SortRunFileName(const std::string& prefix, uint64_t n);
// The publisher's merged records and its seen-filter run, in the scratch directory.
inline constexpr char kMergedRunFileName[] = "merged.run";
inline constexpr char kSeenRunFileName[] = "seen.run";

// "REPO/private/seen.bin": the "seen before?" filter over every entry ever ingested (publish/seen_filter.h).
std::string SeenFilterPath(const std::string& repo);

// The repository's lock files (which step each guards, and how long one waits: publish/repo_lock.h).
// "REPO/private/lists/LIST/publish.lock": one publisher per list.
std::string ListPublishLockPath(const std::string& repo, const std::string& list);
// "REPO/private/index.lock": the list index is rebuilt under it.
std::string IndexLockPath(const std::string& repo);
// "REPO/private/seen.lock": seen.bin is loaded, updated and saved under it.
std::string SeenLockPath(const std::string& repo);
// "REPO/private/feeds/update.lock": one `urlguard-publish update` run.
std::string FeedUpdateLockPath(const std::string& repo);

// The feed update's state (docs/feeds-file.md, feeds/feed_state.h).
// "REPO/private/feeds".
std::string FeedsDir(const std::string& repo);
// "REPO/private/feeds/FEED".
std::string FeedDir(const std::string& repo, const std::string& feed);
// In a feed's directory: its metadata, its last good copy, and the directory of quarantined downloads.
inline constexpr char kFeedMetaFileName[] = "meta";
inline constexpr char kFeedGoodFileName[] = "good";
inline constexpr char kFeedQuarantineDirName[] = "quarantine";
// "T.body": a download quarantined at unix time T, in the quarantine directory.
std::string QuarantineFileName(int64_t unix_time);
// T of "T.body", T 1 to 19 decimal digits (as ParsePrivateSnapshotFileName); nullopt for every other name.
std::optional<uint64_t> ParseQuarantineFileName(std::string_view name);
// "REPO/private/feed-lists".
std::string FeedListsDir(const std::string& repo);
// "REPO/private/feed-lists/LIST.record": what the list's last update published, with grace clocks.
std::string ListRecordPath(const std::string& repo, const std::string& list);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_REPOSITORY_FILES_H_
