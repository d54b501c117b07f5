// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Data directory guard: the permission and ownership rules of the client's data directory D
// (docs/data-dir.md §1.1), and the removal of whatever sits where only a regular file may.
//
// Whoever can write D decides every verdict: D/current has a checksum but no signature, so a planted file is
// as good as a published one. The client therefore refuses a D that another user owns or that its group or
// the world may write, creates a new D 0700 (0750 with DataDirMode::kGroupReadable, for a group of readers
// such as a browser's service account), and its private files (the cache, 0600) are written whatever the
// umask.
//
// Since issue 22 the check covers the whole path, not only D: a D under a world-writable parent without the
// sticky bit was renamed away by another user and replaced with theirs (own key, own server), and a symlink
// another user planted in a sticky directory was followed into root's directory. Readers check too.
//
// This file is the policy (which modes, which message); every OS access goes through the Env it is given
// (OpenDirectory and the Directory it returns, CreateDirs, SetPermissions, Stat, NewExclusiveFile, RemoveTree),
// so a test can break it.
//
// Thread safety: stateless; safe from any thread (as the Env is).
#ifndef URLGUARD_SYNC_DATA_DIR_GUARD_H_
#define URLGUARD_SYNC_DATA_DIR_GUARD_H_

#include <cstdint>
#include <memory>
#include <string>

#include "urlguard/env.h"
#include "urlguard/status.h"

namespace urlguard {

enum class DataDirMode {
  kPrivate,        // 0700: only the owner (the default)
  kGroupReadable,  // 0750: the owner writes, its group may read (apps that only look up)
};

// The mode a new data directory gets (0700 or 0750).
uint32_t DataDirPermissions(DataDirMode mode);

// Creates `dir` (and missing parents, with the usual 0755) when it does not exist; the last component gets
// exactly DataDirPermissions(mode), whatever the umask. An existing directory is left as it is (OpenTrustedDataDir
// judges it). Errors of Env::CreateDirs and Env::SetPermissions.
Status CreateDataDir(Env* env, const std::string& dir, DataDirMode mode);

// Who is about to trust a data directory: its writer (the Store: `urlguard sync`, urlguardd, SyncNow) or a
// reader (Client: `urlguard check`, `urlguard status`, an app, urlguardd's lookups).
enum class DataDirAccess { kWrite, kRead };

// At most this many symbolic links are followed on the way to a data directory (the kernel's ELOOP limit).
inline constexpr int kMaxDataDirSymlinks = 40;

// The trust rule of docs/data-dir.md §1.1: whoever can change what `dir` names decides every verdict, so the
// walk from "/" (the trust root; a relative `dir` starts from the working directory, which is walked too)
// down to `dir` accepts, component by component (lstat, nothing followed before it is judged):
//  - every directory on the way: owned by this process's effective user or root, and writable by nobody
//    else unless sticky (/tmp: others cannot rename or remove what they do not own);
//  - every symbolic link on the way: owned by this user or root (a link another user made in a sticky
//    directory is theirs to point anywhere), then followed; at most kMaxDataDirSymlinks of them;
//  - `dir` itself: writable by neither its group nor others; owned by this user (kWrite), or for kRead by
//    this user, root, or (a group-readable directory of another user's daemon) anyone when its parent is
//    writable by nobody else (then only this user or root could have made it).
// kPermissionDenied naming the offending path and the command that fixes it ("data directory D: its parent P is
// writable by every user (mode 0777) without the sticky bit, ...; chmod g-w,o-w P (or chmod +t P): refusing
// it ..."); kFailedPrecondition when a component is not a directory or there are too many links; kNotFound
// when a component is missing. On success *resolved (may be nullptr) is the absolute path without symlinks.
//
// The walk goes by descriptors (Env::OpenDirectory("/"), then Directory::StatAt/ReadLinkAt/OpenDirectoryAt with
// O_NOFOLLOW, component by component) and judges each directory by fstat of the descriptor it holds.
// OpenTrustedDataDir returns the held D: every file below D is then reached through its path() (the held
// inode), so a rename of D or of a parent after the check cannot redirect a read or a write.
Result<std::unique_ptr<Directory>> OpenTrustedDataDir(Env* env, const std::string& dir, DataDirAccess access,
                                                      std::string* resolved = nullptr);

// The rule for D itself again, on a directory held since OpenTrustedDataDir (fstat: its owner and mode now,
// and whether its parent is shared): what a reader re-checks before each refresh. `dir` names it in messages.
Status CheckHeldDataDir(Directory* held, const std::string& dir, DataDirAccess access);

// `s` with every mention of `held_path` (a held directory's Directory::path(), "/proc/self/fd/N") replaced by
// `dir`, the name the user knows it by: for messages. An ok `s` stays ok.
Status NameHeldDataDir(Status s, const std::string& held_path, const std::string& dir);

// Creates an empty file at `path` with mode exactly 0600 (whatever the umask) when nothing is there; leaves an
// existing file alone (never truncates: another process may have created and filled it meanwhile). For
// files another library then opens (SQLite's cache: its -wal and -shm files take the database file's mode).
// Never follows a symlink at `path` (Env::NewExclusiveFile). Errors of the Env other than "exists".
Status CreatePrivateFileIfMissing(Env* env, const std::string& path);

// Removes whatever is at `path` when it is not a regular file (a directory tree, a symlink, a FIFO, a socket),
// without following symlinks. Ok when nothing is there or it is a regular file (left alone). *removed (may be
// nullptr) tells whether something was removed. Errors of RemoveTree (platform/env.h) when removal fails.
Status RemoveIfNotRegularFile(Env* env, const std::string& path, bool* removed);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_DATA_DIR_GUARD_H_
