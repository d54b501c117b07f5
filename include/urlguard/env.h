// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Env: the one seam between urlguard and the operating system (files, atomic replace, mmap, locks, clocks,
// randomness, the environment, the service manager, signals). Everything in the library reaches the OS only
// through an Env*, so an embedder can hand in its own implementation (a sandboxed file system, a fake clock)
// and a test can hand in one that fails on purpose (disk full, short write, crash between two steps).
//
// An embedder passes its Env through the options of the object it opens (the `env` option field, like
// LevelDB's Options::env); null means Env::Default(). The Env must outlive every object it was given to.
// To change a few methods only, derive from EnvWrapper (below), which forwards everything else to another Env.
//
// Thread safety: Env::Default() and its methods are safe from any thread; an Env an embedder supplies must
// be too (the library calls it from its sync and cache threads). Objects an Env returns (MappedFile,
// WritableFile, FileLock, SignalSet, Directory) are owned by the caller and are not shared without external
// locking, except MappedFile, whose read-only bytes may be read from any number of threads (and Directory's
// path() and Stat()).
//
// Errors: every failure is a Status. The POSIX implementation maps errno as follows: ENOENT is kNotFound,
// ENOSPC and EDQUOT are kResourceExhausted, EEXIST is kFailedPrecondition, anything else is kIoError; the
// message names the system call, the path and the errno text.
#ifndef URLGUARD_ENV_H_
#define URLGUARD_ENV_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/export.h"
#include "urlguard/status.h"

namespace urlguard {

// A read-only mapping of a whole file. The bytes stay valid until the object is destroyed, even if the
// file is renamed over or unlinked meanwhile (urlguard replaces files by rename and never truncates a
// mapped file in place; see docs/data-dir.md). Thread-safe for reading.
class URLGUARD_EXPORT MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
};

// A file being written sequentially. Destroying it without Close() closes it and drops errors.
// Not thread-safe.
class URLGUARD_EXPORT WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends all of `data`. On failure an unknown prefix of `data` may have been written (a short write).
  virtual Status Append(std::string_view data) = 0;
  virtual Status Sync() = 0;   // fsync: data and metadata reach the disk
  virtual Status Close() = 0;  // flushes; further calls are bugs
};

// An exclusive advisory lock held until the object is destroyed.
class URLGUARD_EXPORT FileLock {
 public:
  virtual ~FileLock() = default;
};

// A set of signals diverted from their default action to Wait(), for daemons (SIGTERM, SIGINT, SIGHUP).
// Destroying it restores the calling thread's previous signal mask for those signals; one still pending
// then takes its default action (for SIGTERM: the process ends), so destroy it last. Not thread-safe: one
// thread (normally main) waits.
class URLGUARD_EXPORT SignalSet {
 public:
  virtual ~SignalSet() = default;
  // Waits up to `timeout_ms` (0: just polls; negative: forever) for one of the signals. Returns its number,
  // or 0 when the time ran out first. A signal that arrived before the call is returned at once; several
  // arrivals of one signal between two calls may be merged into one. kIoError when the wait itself fails.
  virtual Result<int> Wait(int64_t timeout_ms) = 0;
};

// What Env::Stat() reports about one path.
struct FileInfo {
  uint64_t size = 0;       // bytes (for a symlink: the length of its target path)
  int64_t mtime_unix = 0;  // last modification, seconds since the Unix epoch
  bool is_regular = false;
  bool is_dir = false;
  bool is_symlink = false;  // the path itself is a symbolic link (Stat does not follow it)
  uint32_t mode = 0;        // permission bits (07777 of st_mode)
  uint32_t uid = 0;         // owner
};

// A directory held open by a descriptor (docs/data-dir.md §1.1): whatever is renamed or planted along the path
// it was reached by afterwards, this object keeps naming the same directory (the same inode). The data
// directory is reached this way once, by a trust walk that opens each component relative to the one before, and
// every file below it is then reached through path(). Not thread-safe except path() and Stat(), which are.
class URLGUARD_EXPORT Directory {
 public:
  virtual ~Directory() = default;
  // A path naming this very directory, not the path it was opened by: the POSIX Env's is "/proc/self/fd/N"
  // (needs /proc). JoinPath(path(), "name") given to any Env method reaches "name" inside the held directory,
  // so the Env's other methods (and an EnvWrapper's faults) apply unchanged. Valid while this object lives.
  virtual const std::string& path() const = 0;
  // fstat of the held directory itself.
  virtual Result<FileInfo> Stat() = 0;
  // fstatat(AT_SYMLINK_NOFOLLOW) of `name`, one component inside it ("..": its parent). As Env::Stat.
  virtual Result<FileInfo> StatAt(const std::string& name) = 0;
  // readlinkat of `name`, one component inside it: the target as stored (may be relative to this directory).
  // kNotFound when nothing is there; kInvalidArgument when `name` is not a symlink.
  virtual Result<std::string> ReadLinkAt(const std::string& name) = 0;
  // Opens directory `name`, one component inside it ("..": its parent), never following a symlink
  // (openat O_PATH|O_NOFOLLOW|O_DIRECTORY): kFailedPrecondition when `name` is a symlink or not a directory,
  // kNotFound when missing.
  virtual Result<std::unique_ptr<Directory>> OpenDirectoryAt(const std::string& name) = 0;
};

class URLGUARD_EXPORT Env {
 public:
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  virtual ~Env() = default;

  // The process-wide POSIX implementation. Never null; never destroyed.
  static Env* Default();

  // ---- reading -----------------------------------------------------------------------------------------

  // Reads a whole regular file. Fails with kResourceExhausted when it is larger than `max_bytes` (the file is
  // not read), kNotFound when it does not exist, kIoError otherwise, and kIoError naming the path and its type
  // when it is not a regular file (a directory, FIFO, socket or device): no open or read in this Env blocks
  // on a FIFO planted where a file belongs (the POSIX Env opens with O_NONBLOCK and checks with fstat).
  virtual Result<std::string> ReadFile(const std::string& path, size_t max_bytes) = 0;

  // Maps a whole regular file read-only. An empty file fails with kCorruption (nothing can be mapped); a
  // missing one with kNotFound; anything but a regular file with kIoError (as for ReadFile).
  virtual Result<std::unique_ptr<MappedFile>> MapReadOnly(const std::string& path) = 0;

  // ---- writing -----------------------------------------------------------------------------------------

  // Creates or truncates `path` for writing, following a symlink at `path`. Mode 0644 (less what the umask
  // removes), or exactly 0600 when `private_file`, whatever the umask and even when the file existed.
  // kIoError when something other than a regular file is there (a FIFO, socket or device), without blocking.
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                bool private_file = false) = 0;

  // Creates `path`, which must not exist yet, for writing: never opens an existing file and never follows
  // a symlink (O_CREAT|O_EXCL|O_NOFOLLOW), so a file or link planted at a predictable temporary name cannot
  // redirect the write. kFailedPrecondition when something already exists at `path`. Modes as for
  // NewWritableFile.
  virtual Result<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path,
                                                                 bool private_file = false) = 0;

  // rename(2): atomically replaces `to`. Both must be on one file system (else kIoError, EXDEV).
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  // Removes a file or a symlink (never its target). kNotFound when missing.
  virtual Status RemoveFile(const std::string& path) = 0;

  // ---- directories -------------------------------------------------------------------------------------

  // mkdir -p; ok when the directory exists. Directories it creates get mode 0755 (less the umask), or
  // exactly 0700 when `private_dir`, whatever the umask. Existing directories keep their mode (see
  // CheckPrivateDir in the library for refusing an unsafe one). kIoError when `path` exists and is not a
  // directory.
  virtual Status CreateDirs(const std::string& path, bool private_dir = false) = 0;
  // chmod(2): sets the permission bits (07777) of `path` to exactly `mode`, following a symlink at `path`
  // (the library calls it only on a directory it has just created). kNotFound when missing.
  virtual Status SetPermissions(const std::string& path, uint32_t mode) = 0;
  // Removes an empty directory. kNotFound when missing; kIoError when not empty.
  virtual Status RemoveDir(const std::string& path) = 0;
  // fsync a directory (makes renames, creations and removals in it durable).
  virtual Status SyncDir(const std::string& dir) = 0;
  // File names (not paths) in `dir`, without "." and "..", sorted bytewise.
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  // Holds directory `path` open (following symlinks; the data directory's trust walk opens only "/" this way
  // and every later component with Directory::OpenDirectoryAt). kNotFound when missing; kFailedPrecondition
  // when not a directory.
  virtual Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& path) = 0;

  // ---- metadata ----------------------------------------------------------------------------------------

  // True when a file or directory exists at `path`, following symlinks (a dangling symlink: false). Any
  // error counts as false; use Stat() to tell "missing" from "cannot look".
  virtual bool FileExists(const std::string& path) = 0;
  // lstat: what is at `path` itself; does not follow a final symlink. kNotFound when nothing is there.
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  // The absolute path with every symlink, "." and ".." resolved. kNotFound when a component is missing.
  virtual Result<std::string> RealPath(const std::string& path) = 0;

  // Takes an exclusive lock on `path` (created if missing, mode 0644) without waiting. kFailedPrecondition
  // when another process (or another FileLock in this one) holds it. A symlink at `path` is refused
  // (kIoError), so a planted link cannot make the lock create or hold some other file; so is anything but a
  // regular file (a FIFO, socket or device), without blocking.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) = 0;

  // ---- time and randomness -----------------------------------------------------------------------------

  virtual int64_t NowUnixSeconds() = 0;                  // wall clock; may jump
  virtual uint64_t NowMonotonicNanos() = 0;              // never goes back; for intervals and timeouts
  virtual void RandomBytes(void* out, size_t size) = 0;  // cryptographically strong

  // ---- the process -------------------------------------------------------------------------------------

  // The value of environment variable `name`, or nullopt when it is unset. The POSIX Env ignores the
  // environment in a set-user-ID or set-group-ID process (secure_getenv) and returns nullopt there.
  virtual std::optional<std::string> GetEnvVar(const std::string& name) = 0;

  // sd_notify(3) without libsystemd: sends `state` ("READY=1", "STOPPING=1", "STATUS=...", lines joined
  // by '\n') as one datagram to the AF_UNIX socket named by $NOTIFY_SOCKET ('@' at the start means the
  // abstract namespace). Ok and does nothing when $NOTIFY_SOCKET is unset or empty, so a daemon calls it
  // unconditionally. kInvalidArgument when $NOTIFY_SOCKET is not an absolute or '@' name or is too long;
  // kUnavailable when nobody listens there; kIoError for other socket failures.
  virtual Status NotifyServiceManager(std::string_view state) = 0;

  // Diverts `signal_numbers` (POSIX numbers: SIGTERM, SIGINT, SIGHUP...) to the returned SignalSet: they are
  // blocked in the calling thread and later delivered through SignalSet::Wait() instead of their default
  // action. Call it in main() before starting any thread: threads inherit the mask, and a thread that does
  // not block a signal may still receive (and die of) it. kInvalidArgument for an empty list or a signal
  // that cannot be caught (SIGKILL, SIGSTOP); kIoError when the kernel refuses.
  // (Not named `signals`: Qt defines that word as a macro, and this header must compile in Qt programs.)
  virtual Result<std::unique_ptr<SignalSet>> WatchSignals(const std::vector<int>& signal_numbers) = 0;
};

// EnvWrapper: an Env that forwards every call to a target Env. Derive from it and override only what you
// want to change (a sandboxed path, a clock a test moves, a rename that fails), as with LevelDB's EnvWrapper:
//
//   class SlowClockEnv : public urlguard::EnvWrapper {
//    public:
//     SlowClockEnv() : EnvWrapper(urlguard::Env::Default()) {}
//     uint64_t NowMonotonicNanos() override { return nanos.load(); }
//     std::atomic<uint64_t> nanos{0};
//   };
//
// When Env gains a method, EnvWrapper gains its forwarder in the same release, so an Env built on it keeps
// compiling (one built directly on Env must add the method).
//
// Thread safety: as safe as the target; overrides add their own locking.
class URLGUARD_EXPORT EnvWrapper : public Env {
 public:
  // Forwards to `target`, which is not owned and must outlive this object.
  explicit EnvWrapper(Env* target) : target_(target) { assert(target != nullptr); }

  Env* target() const { return target_; }

  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return target_->ReadFile(path, max_bytes);
  }
  Result<std::unique_ptr<MappedFile>> MapReadOnly(const std::string& path) override {
    return target_->MapReadOnly(path);
  }
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool private_file) override {
    return target_->NewWritableFile(path, private_file);
  }
  Result<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path,
                                                         bool private_file) override {
    return target_->NewExclusiveFile(path, private_file);
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    return target_->RenameFile(from, to);
  }
  Status RemoveFile(const std::string& path) override { return target_->RemoveFile(path); }
  Status CreateDirs(const std::string& path, bool private_dir) override {
    return target_->CreateDirs(path, private_dir);
  }
  Status SetPermissions(const std::string& path, uint32_t mode) override {
    return target_->SetPermissions(path, mode);
  }
  Status RemoveDir(const std::string& path) override { return target_->RemoveDir(path); }
  Status SyncDir(const std::string& dir) override { return target_->SyncDir(dir); }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override { return target_->ListDir(dir); }
  Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& path) override {
    return target_->OpenDirectory(path);
  }
  bool FileExists(const std::string& path) override { return target_->FileExists(path); }
  Result<FileInfo> Stat(const std::string& path) override { return target_->Stat(path); }
  Result<std::string> RealPath(const std::string& path) override { return target_->RealPath(path); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return target_->LockFile(path);
  }
  int64_t NowUnixSeconds() override { return target_->NowUnixSeconds(); }
  uint64_t NowMonotonicNanos() override { return target_->NowMonotonicNanos(); }
  void RandomBytes(void* out, size_t size) override { target_->RandomBytes(out, size); }
  std::optional<std::string> GetEnvVar(const std::string& name) override { return target_->GetEnvVar(name); }
  Status NotifyServiceManager(std::string_view state) override {
    return target_->NotifyServiceManager(state);
  }
  Result<std::unique_ptr<SignalSet>> WatchSignals(const std::vector<int>& signal_numbers) override {
    return target_->WatchSignals(signal_numbers);
  }

 private:
  Env* const target_;
};

}  // namespace urlguard

#endif  // URLGUARD_ENV_H_
