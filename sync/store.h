// Copyright urlguard authors.
//
// Store: the client's data directory D (ARCHITECTURE §7; every file and byte is specified in
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
// Changes the D/current format: bump kCurrentFormatVersion, docs/data-dir.md and the golden test
// (fixtures/golden/current_v1.bin, regenerated only with URLGUARD_UPDATE_GOLDEN=1).
#ifndef URLGUARD_SYNC_STORE_H_
#define URLGUARD_SYNC_STORE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/layer_kind.h"
#include "core/sha256.h"
#include "platform/env.h"
#include "sync/data_dir_guard.h"
#include "urlguard/status.h"

namespace urlguard {

// The D/current format (docs/data-dir.md).
inline constexpr char kCurrentMagic[8] = {'U', 'G', 'C', 'U', 'R', 'R', '\x1a', '\n'};
constexpr uint32_t kCurrentFormatVersion = 1;
constexpr size_t kCurrentHeaderBytes = 32;
constexpr size_t kCurrentRecordBytes = 256;
constexpr size_t kCurrentTrailerBytes = 32;  // SHA-256 of every preceding byte
// The most lists one data directory holds (a client subscribes to a handful).
constexpr size_t kMaxStoreLists = 256;
// The cap for reading D/current (its largest valid size: 65 600 bytes).
constexpr size_t kMaxCurrentBytes =
    kCurrentHeaderBytes + kMaxStoreLists * kCurrentRecordBytes + kCurrentTrailerBytes;

// Names inside D.
inline constexpr std::string_view kCurrentFileName = "current";
inline constexpr std::string_view kLockFileName = "lock";
inline constexpr std::string_view kListsDirName = "lists";

// An installed version of one list: what D/current says about it.
struct InstalledList {
  std::string list;      // IsValidListName
  uint64_t version = 0;  // >= 1
  std::string file;      // relative to D: "lists/<list>/<version>.ugs" (InstalledFileName); set by the store
  Sha256Digest state_sha256{};     // the snapshot file's trailing SHA-256 (SnapshotView::checksum())
  Sha256Digest manifest_sha256{};  // SHA-256 of the signed manifest bytes this version came with
  int64_t created_unix = 0;        // from the manifest
  int64_t expires_unix = 0;        // from the manifest: not fresh from this time on
  bool emergency = false;          // manifest policy flag
  uint32_t min_wait_seconds = 0;   // manifest: the server's minimum polling interval
  std::array<uint64_t, kLayerKindCount> entries{};  // per LayerKind, read from the snapshot; set by the store

  bool operator==(const InstalledList&) const = default;
};

// Everything D/current records about one list.
struct ListState {
  std::string list;  // IsValidListName
  // The high-water mark: the highest version ever installed and the SHA-256 of its manifest bytes.
  uint64_t high_water_version = 0;  // >= 1
  Sha256Digest high_water_manifest_sha256{};
  // The version serving now. Absent when its file was found missing or corrupt (dropped by Store::Open; the
  // next sync installs it again). When present, installed->version <= high_water_version.
  std::optional<InstalledList> installed;

  bool operator==(const ListState&) const = default;
};

struct StoreState {
  // Changes with every write of D/current: counts up by one per write, and restarts at a random value when
  // Store::Open() had to set aside a corrupt D/current. Readers compare it for inequality only.
  uint64_t generation = 0;
  std::vector<ListState> lists;  // sorted by name, names unique, at most kMaxStoreLists

  // The list's record, or nullptr.
  const ListState* Find(std::string_view list) const;
  // The installed version of `list`, or nullptr when none serves.
  const InstalledList* FindInstalled(std::string_view list) const;

  bool operator==(const StoreState&) const = default;
};

// "lists/<list>/<version>.ugs".
std::string InstalledFileName(std::string_view list, uint64_t version);

// Checks every rule of the format on a state (names, order, counts, versions, `file` names, a dropped list's
// zero fields are implied). kInvalidArgument naming the first violation.
Status ValidateStoreState(const StoreState& state);

// The bytes of D/current for `state` (docs/data-dir.md). Precondition: ValidateStoreState(state).ok();
// violating it is a bug and aborts the process. Deterministic. Thread-safe.
std::string SerializeStoreState(const StoreState& state);

// Parses D/current bytes from disk (untrusted: a reader may race a writer on a broken file system, the disk
// may flip bits). kResourceExhausted over kMaxCurrentBytes; kCorruption naming the first problem (magic,
// format version, sizes, the trailing SHA-256, then every record field). Never crashes on any input; fuzzed
// by fuzz/store_state_fuzz.cc. Thread-safe.
Result<StoreState> ParseStoreState(std::string_view bytes);

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
  // refuses a `dir` owned by another user or writable by its group or others (kPermissionDenied, see
  // CheckDataDir), takes dir/lock and recovers:
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
  const std::string& dir() const { return dir_; }
  Env* env() const { return env_; }
  // The absolute path of an installed list's file (dir() joined with list.file).
  std::string PathOf(const InstalledList& list) const { return JoinPath(dir_, list.file); }

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

  // Lowers the high-water mark of `list` to `max_version` on a signed request (a key rotation statement's
  // reset, sync/key_rotation.h), so that a stolen key's fast-forward does not block the genuine publisher.
  // Applies only when the mark is above max_version and the high-water manifest was created before
  // `not_before_unix` (or its file was dropped, so its time is unknown): re-reading the same statement after
  // the genuine publisher moved on changes nothing. Then the mark becomes max_version with an unknown
  // manifest hash (zeros; so the next version accepted is above max_version, or max_version itself only when
  // installed from the bytes installed now), and an installed version above max_version is dropped (its file
  // is removed at the next Open). *applied (may be nullptr) tells whether D/current changed. Writes D/current
  // as Install() does; failures as Install()'s write step.
  Status ResetHighWater(const std::string& list, uint64_t max_version, int64_t not_before_unix, bool* applied);

 private:
  Store(Env* env, std::string dir, std::unique_ptr<FileLock> lock);
  Status Recover();
  // Writes `next` as D/current. On success state_ = next. *replaced tells whether the rename happened.
  Status WriteState(const StoreState& next, bool* replaced);

  Env* const env_;
  const std::string dir_;
  std::unique_ptr<FileLock> lock_;
  StoreState state_;
  std::vector<std::string> warnings_;
};

}  // namespace urlguard

#endif  // URLGUARD_SYNC_STORE_H_
