// Copyright urlguard authors.
//
// Env: the one seam between urlguard and the operating system (files, atomic replace, mmap, locks, clocks,
// randomness). Everything above platform/ reaches the OS only through an Env*, so a test can hand in an
// implementation that fails on purpose (disk full, short write, crash between two steps).
//
// Thread safety: Env::Default() and its methods are safe from any thread. Objects it returns
// (MappedFile, WritableFile, FileLock) are owned by the caller and are not shared without external locking,
// except MappedFile, whose read-only bytes may be read from any number of threads.
#ifndef URLGUARD_PLATFORM_ENV_H_
#define URLGUARD_PLATFORM_ENV_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// What Stat() reports about a path.
struct FileInfo {
  uint64_t size = 0;
  int64_t mtime_unix = 0;
  bool is_regular = false;
  bool is_dir = false;
  bool is_symlink = false;
  uint32_t mode = 0;
  uint32_t uid = 0;
};

// A read-only mapping of a whole file. The bytes stay valid until the object is destroyed, even if the
// file is renamed over or unlinked meanwhile (files are never truncated in place, see ARCHITECTURE §7).
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
};

// A file being written sequentially. Destroying it without Close() closes it and drops errors.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  virtual Status Sync() = 0;   // fsync: data and metadata reach the disk
  virtual Status Close() = 0;  // flushes; further calls are bugs
};

// An exclusive advisory lock held until the object is destroyed.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide POSIX implementation. Never null; never destroyed.
  static Env* Default();

  // Reads a whole file. Fails with kResourceExhausted when it is larger than `max_bytes` (the file is not
  // read), kNotFound when it does not exist, kIoError otherwise.
  virtual Result<std::string> ReadFile(const std::string& path, size_t max_bytes) = 0;

  // Maps a whole file read-only. An empty file fails with kCorruption (nothing can be mapped).
  virtual Result<std::unique_ptr<MappedFile>> MapReadOnly(const std::string& path) = 0;

  // Creates or truncates `path` for writing (mode 0644, or 0600 when `private_file`).
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                                bool private_file = false) = 0;

  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  virtual Status CreateDirs(const std::string& path) = 0;  // mkdir -p; ok when it exists
  virtual Status SyncDir(const std::string& dir) = 0;      // fsync a directory (makes renames durable)
  virtual bool FileExists(const std::string& path) = 0;
  // File names (not paths) in `dir`, without "." and "..", sorted.
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;

  // lstat: does not follow a final symlink. kNotFound when missing, kIoError otherwise.
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  // The canonical absolute path (every symlink resolved). kNotFound when a component is missing.
  virtual Result<std::string> RealPath(const std::string& path) = 0;

  // Takes an exclusive lock on `path` (created if missing) without waiting. kFailedPrecondition when
  // another process (or another FileLock in this one) holds it.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) = 0;

  virtual int64_t NowUnixSeconds() = 0;
  virtual uint64_t NowMonotonicNanos() = 0;
  virtual void RandomBytes(void* out, size_t size) = 0;  // cryptographically strong
};

// Writes `data` to `path` so that a crash at any moment leaves either the old file or the new one: write
// to `path + ".tmp"`, fsync, rename over `path`, fsync the directory. The temporary file is removed on
// failure.
Status WriteFileAtomic(Env* env, const std::string& path, std::string_view data,
                       bool private_file = false);

// The directory part of `path` ("." when it has none).
std::string DirName(const std::string& path);
// The last component of `path`.
std::string BaseName(const std::string& path);
// Joins two path pieces with exactly one '/'.
std::string JoinPath(const std::string& a, const std::string& b);

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_ENV_H_
