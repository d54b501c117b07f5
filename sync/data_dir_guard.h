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
// This file is the policy (which modes, which message); every OS access goes through the Env it is given
// (CreateDirs, SetPermissions, CheckPrivateDir, NewExclusiveFile, RemoveTree), so a test can break it.
//
// Thread safety: stateless; safe from any thread (as the Env is).
#ifndef URLGUARD_SYNC_DATA_DIR_GUARD_H_
#define URLGUARD_SYNC_DATA_DIR_GUARD_H_

#include <cstdint>
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
// exactly DataDirPermissions(mode), whatever the umask. An existing directory is left as it is (CheckDataDir
// judges it). Errors of Env::CreateDirs and Env::SetPermissions.
Status CreateDataDir(Env* env, const std::string& dir, DataDirMode mode);

// kPermissionDenied when `dir` (following symlinks) is owned by a user other than this process's effective
// user, or is writable by its group or by others ("data directory D is writable by its group (mode 0775):
// refusing it; chmod g-w,o-w D"); kFailedPrecondition when it is not a directory; kNotFound when missing.
Status CheckDataDir(Env* env, const std::string& dir);

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
