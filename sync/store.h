// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Store: the client's data directory D (docs/architecture.md §7; every file and byte is specified in
// docs/data-dir.md).
//
//   D/lock                  single-writer lock (Env::LockFile): one Store per directory, across processes
//   D/lists/LIST/V.ugs      immutable snapshot files (core/snapshot.h); a new version is a new file
//   D/current               the installed state and the high-water marks, with a generation counter and a
//                           trailing SHA-256; replaced atomically (D/current.tmp, fsync, rename, fsync D)
//
// Two kinds of users:
//   - the single writer (the sync daemon, or an app that syncs itself) opens a Store: it takes D/lock,
//     recovers from a crash, and installs new versions one at a time with Install();
//   - readers (apps that only look up) take no lock: ReadStoreState() reads D/current, and they map the files
//     it names. A reader notices an update when the generation changes. Files are never written in place or
//     truncated, so a mapping stays valid; a file may disappear (unlinked) after a newer version of its list
//     is installed, so a reader that cannot map a named file reads D/current again and retries.
//
// Crash safety. Install() writes the new snapshot file (tmp, fsync, rename, fsync its directory), then the
// new D/current (the same dance), then removes the list's previous file. A crash or an I/O failure at any
// point leaves D/current naming either the old state (every file it names intact) or the new one; stray files
// (*.tmp, files D/current does not name) are removed by the next Open(). sync/store_test.cc proves this
// with a fault-injecting Env that fails or "loses power" at every single step.
//
// High-water marks. For every list ever installed, D/current keeps the highest version installed and the
// SHA-256 of that version's manifest bytes, even when the list's file is later found corrupt and dropped:
// the updater refuses a lower version (rollback) and the same version with other manifest bytes
// (equivocation), and Install() enforces the same rule.
//
// The bytes of D/current (StoreState, SerializeStoreState, ParseStoreState) are format/current_record.h.
#ifndef URLGUARD_SYNC_STORE_H_
#define URLGUARD_SYNC_STORE_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format/current_record.h"
#include "platform/env.h"
#include "sync/data_dir_guard.h"
#include "urlguard/status.h"

namespace urlguard {

// Names inside D (kListsDirName, the snapshot directory, is in format/current_record.h).
inline constexpr std::string_view kCurrentFileName = "current";
inline constexpr std::string_view kLockFileName = "lock";

// For readers: reads and parses DIR/current. No lock taken, nothing written. kNotFound when no state was ever
// installed there; other failures as Env::ReadFile and ParseStoreState. Thread-safe.
Result<StoreState> ReadStoreState(Env* env, const std::string& dir);

struct StoreOptions {
  // The mode a NEW data directory gets: 0700, or 0750 for a group of readers (sync/data_dir_guard.h).
  DataDirMode dir_mode = DataDirMode::kPrivate;
};

// The single writer of one data directory. Not thread-safe: one thread at a time (the sync daemon's updater);
// readers in other threads or processes use ReadStoreState() and their own mappings.
class Store {
 public:
  // Creates `dir` (mode 0700, or 0750 per options.dir_mode, whatever the umask) and dir/lists if needed,
  // refuses a `dir` owned by another user or writable by its group or others, or reached through an untrusted
  // parent or link (kPermissionDenied, see OpenTrustedDataDir), holds it open (OpenTrustedDataDir: every later
  // access goes through that descriptor, so renaming `dir` or a parent away cannot redirect an install), takes
  // dir/lock and recovers:
  //   - a missing D/current: an empty state (generation 0);
  //   - a corrupt or unreadable-as-format D/current (bad checksum, bad field): renamed to D/current.corrupt
  //     and replaced by an empty state with a random generation; every list is fetched again and the
  //     high-water marks are lost (warning);
  //   - a list whose file is missing or fails SnapshotView::Open with checksum verification, or does not
  //     match its record (list, version, state SHA-256): its `installed` record is dropped, its high-water
  //     mark kept, and the new state written (warning naming the list and file);
  //   - *.tmp files and every file under D/lists that D/current does not name: removed; so is anything that is
  //     not a regular file (a directory, a symlink, a FIFO) at a file's place in D/lists/LIST/, which would
  //     otherwise make every later install of that path fail.
  // Failures: kFailedPrecondition "another urlguard process is syncing this data directory" when the lock
  // is held (by another process or another Store in this one); kIoError / kNotFound / kResourceExhausted
  // from the Env when the directory cannot be created, read or (for a needed recovery) written.
  // `env` must outlive the Store. The lock is released when the Store is destroyed.
  static Result<std::unique_ptr<Store>> Open(Env* env, const std::string& dir,
                                             const StoreOptions& options = {});

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  // The state as D/current has it (after the last successful write).
  const StoreState& state() const { return state_; }
  // What Open() recovered from, one line each (empty after a clean start). For the daemon's log.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // A path naming the held data directory (Directory::path(): "/proc/self/fd/N"), not the one it was opened
  // by; valid while the Store lives. Files below D are reached as JoinPath(dir(), name).
  const std::string& dir() const { return dir_; }
  Env* env() const { return env_; }
  // The path of an installed list's file (dir() joined with list.file), valid while the Store lives.
  std::string PathOf(const InstalledList& list) const { return Below(list.file); }

  // Installs `meta.version` of `meta.list` from the full snapshot bytes and advances the list's high-water
  // mark to it (meta.file and meta.entries are ignored: the store sets them). Steps: write
  // D/lists/LIST/V.ugs.tmp, fsync, map it and verify it (SnapshotView::Open with checksum; list, version and
  // state SHA-256 must be meta's), rename to V.ugs, fsync the list directory; write the new D/current
  // (generation + 1) the same way; then remove the list's previous file (a failure to remove is ignored:
  // the next Open() removes it).
  // Fails, leaving the old state (on disk and in state()), with:
  //   kInvalidArgument    a bad list name or version 0;
  //   kFailedPrecondition meta.version below the high-water mark, or equal to it with other manifest bytes;
  //   kCorruption         the bytes are not a valid snapshot of that list, version and state SHA-256;
  //   kResourceExhausted  kMaxStoreLists lists already, or the disk is full;
  //   kIoError, ...       any Env failure before D/current was replaced.
  // One exception: when the final fsync of D (after the rename of D/current) fails, the new state is
  // already what D/current holds and what state() returns, and the error says durability is not assured.
  Status Install(const InstalledList& meta, std::string_view snapshot_bytes);

  // Install() for a snapshot that is written rather than held (a diff applied by streaming, sync/apply.h):
  // `write` is called with the final path P (D/lists/LIST/V.ugs) and must leave the complete, fsynced file at
  // P + ".tmp" (a SnapshotWriter with options.install = false does). Then the same steps and failures as
  // Install(): verify (structure, full SHA-256, list, version, state SHA-256; read through the mapping in
  // pieces handed back to the kernel, so verifying costs no resident memory of the file's size), rename,
  // D/current, old file removed. When `write` fails, its Status is returned (with the install's context),
  // P.tmp is removed, and the old state stays.
  Status InstallWith(const InstalledList& meta, const std::function<Status(const std::string& path)>& write);

  // A scratch file of `list` for a pass to write and remove (the checkpoint snapshot a diff is applied to, never
  // installed itself): D/lists/LIST/`name`.tmp.scratch, in the list's directory (created if needed, as Install()
  // does), so a crash leaves it to the next Open(), which removes every *.tmp.* file there. kInvalidArgument for a
  // bad list name; the Env's errors for the directory.
  Result<std::string> ScratchPath(const std::string& list, std::string_view name);

  // Lowers the high-water mark of `list` to `max_version` on a signed request (a key rotation statement's
  // reset, format/key_rotation.h), so that a stolen key's fast-forward does not block the genuine publisher.
  // Applies only when the mark is above max_version and the high-water manifest was created before
  // `not_before_unix` (or its file was dropped, so its time is unknown): re-reading the same statement after
  // the genuine publisher moved on changes nothing. Then the mark becomes max_version with an unknown
  // manifest hash (zeros; so the next version accepted is above max_version, or max_version itself only when
  // installed from the bytes installed now), and an installed version above max_version is dropped (its file
  // is removed at the next Open). *applied (may be nullptr) tells whether D/current changed. Writes D/current
  // as Install() does; failures as Install()'s write step.
  Status ResetHighWater(const std::string& list, uint64_t max_version, int64_t not_before_unix, bool* applied);

  // Forgets `list` on purpose (it was unsubscribed, sync/subscriptions.h): writes D/current without its record
  // (generation + 1) as Install() does, then removes its file (a failure to remove is ignored: the next Open()
  // removes it). Its high-water mark goes with the record, so a later subscription starts afresh (as after a
  // corrupt D/current, docs/data-dir.md §4). Ok, changing nothing, when there is no record; *removed (may be
  // nullptr) tells whether D/current changed. Failures as Install()'s write of D/current.
  Status Remove(const std::string& list, bool* removed);

 private:
  Store(Env* env, std::unique_ptr<Directory> held, std::unique_ptr<Directory> lists,
        std::unique_ptr<FileLock> lock);
  // The path of `rel` (a name in D, or lists/...) through the held D or the held D/lists.
  std::string Below(const std::string& rel) const;
  Status Recover();
  // Writes `next` as D/current. On success state_ = next. *replaced tells whether the rename happened.
  Status WriteState(const StoreState& next, bool* replaced);

  Env* const env_;
  const std::unique_ptr<Directory> held_;  // D, held since the trust check
  const std::string dir_;                  // held_->path()
  // D/lists, held since Open (opened O_NOFOLLOW): a link planted at D/lists later is never followed.
  const std::unique_ptr<Directory> lists_;
  std::unique_ptr<FileLock> lock_;
  StoreState state_;
  std::vector<std::string> warnings_;
};

}  // namespace urlguard

#endif  // URLGUARD_SYNC_STORE_H_
