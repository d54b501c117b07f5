// Copyright urlguard authors.
//
// The POSIX Env. Every system call's failure becomes a Status naming the call, the path and errno.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "platform/env.h"

namespace urlguard {
namespace {

Status ErrnoStatus(const char* op, const std::string& path, int err) {
  std::string m = std::string(op) + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(std::move(m));
  if (err == ENOSPC || err == EDQUOT) return Status::ResourceExhausted(std::move(m));
  return Status::IoError(std::move(m));
}

class PosixMappedFile final : public MappedFile {
 public:
  PosixMappedFile(void* base, size_t size) : base_(base), size_(size) {}
  ~PosixMappedFile() override { munmap(base_, size_); }
  const uint8_t* data() const override { return static_cast<const uint8_t*>(base_); }
  size_t size() const override { return size_; }

 private:
  void* base_;
  size_t size_;
};

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus("write", path_, errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }
  Status Sync() override {
    if (::fsync(fd_) != 0) return ErrnoStatus("fsync", path_, errno);
    return Status::Ok();
  }
  Status Close() override {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return ErrnoStatus("close", path_, errno);
    return Status::Ok();
  }

 private:
  int fd_;
  std::string path_;
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing releases the OFD lock

 private:
  int fd_;
};

class PosixEnv final : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("fstat", path, err);
    }
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      ::close(fd);
      return Status::ResourceExhausted(path + ": " + std::to_string(st.st_size) +
                                       " bytes is over the cap of " + std::to_string(max_bytes));
    }
    std::string out;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return ErrnoStatus("read", path, err);
      }
      if (n == 0) break;
      if (out.size() + static_cast<size_t>(n) > max_bytes) {  // the file grew while we read it
        ::close(fd);
        return Status::ResourceExhausted(path + ": over the cap of " + std::to_string(max_bytes));
      }
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
  }

  Result<std::unique_ptr<MappedFile>> MapReadOnly(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("fstat", path, err);
    }
    if (st.st_size == 0) {
      ::close(fd);
      return Status::Corruption(path + ": empty file");
    }
    size_t size = static_cast<size_t>(st.st_size);
    void* base = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    int err = errno;
    ::close(fd);  // the mapping keeps the file alive
    if (base == MAP_FAILED) return ErrnoStatus("mmap", path, err);
    return std::unique_ptr<MappedFile>(new PosixMappedFile(base, size));
  }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path,
                                                        bool private_file) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                    private_file ? 0600 : 0644);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    if (private_file) ::fchmod(fd, 0600);  // an existing file keeps its mode through O_CREAT
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path));
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus("rename", from + " -> " + to, errno);
    return Status::Ok();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoStatus("unlink", path, errno);
    return Status::Ok();
  }

  Status CreateDirs(const std::string& path) override {
    if (path.empty()) return Status::InvalidArgument("empty directory path");
    std::string partial;
    size_t pos = 0;
    while (pos <= path.size()) {
      size_t next = path.find('/', pos);
      if (next == std::string::npos) next = path.size();
      partial = path.substr(0, next);
      pos = next + 1;
      if (partial.empty()) continue;  // leading '/'
      if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoStatus("mkdir", partial, errno);
      }
    }
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::IoError(path + ": not a directory");
    }
    return Status::Ok();
  }

  Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", dir, errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return ErrnoStatus("fsync", dir, err);
    return Status::Ok();
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  Result<FileInfo> Stat(const std::string& path) override {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return ErrnoStatus("lstat", path, errno);
    FileInfo info;
    info.size = static_cast<uint64_t>(st.st_size);
    info.mtime_unix = static_cast<int64_t>(st.st_mtim.tv_sec);
    info.is_regular = S_ISREG(st.st_mode);
    info.is_dir = S_ISDIR(st.st_mode);
    info.is_symlink = S_ISLNK(st.st_mode);
    info.mode = static_cast<uint32_t>(st.st_mode & 07777);
    info.uid = static_cast<uint32_t>(st.st_uid);
    return info;
  }

  Result<std::string> RealPath(const std::string& path) override {
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (resolved == nullptr) return ErrnoStatus("realpath", path, errno);
    std::string out(resolved);
    ::free(resolved);
    return out;
  }

  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return ErrnoStatus("opendir", dir, errno);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      names.emplace_back(e->d_name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    // Open-file-description locks: per open file, so two opens in one process also exclude each other.
    struct flock fl;
    std::memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
      int err = errno;
      ::close(fd);
      if (err == EAGAIN || err == EACCES) {
        return Status::FailedPrecondition(path + ": locked by another process");
      }
      return ErrnoStatus("fcntl(F_OFD_SETLK)", path, err);
    }
    return std::unique_ptr<FileLock>(new PosixFileLock(fd));
  }

  int64_t NowUnixSeconds() override { return static_cast<int64_t>(::time(nullptr)); }

  uint64_t NowMonotonicNanos() override {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
  }

  void RandomBytes(void* out, size_t size) override {
    auto* p = static_cast<uint8_t*>(out);
    while (size > 0) {
      ssize_t n = ::getrandom(p, size, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        std::abort();  // no entropy source at all: nothing safe to do
      }
      p += n;
      size -= static_cast<size_t>(n);
    }
  }
};

}  // namespace

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();
  return env;
}

Status WriteFileAtomic(Env* env, const std::string& path, std::string_view data, bool private_file) {
  std::string tmp = path + ".tmp";
  auto file = env->NewWritableFile(tmp, private_file);
  if (!file.ok()) return file.status();
  Status s = (*file)->Append(data);
  if (s.ok()) s = (*file)->Sync();
  if (s.ok()) s = (*file)->Close();
  if (s.ok()) s = env->RenameFile(tmp, path);
  if (!s.ok()) {
    (void)env->RemoveFile(tmp);
    return s;
  }
  return env->SyncDir(DirName(path));
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

}  // namespace urlguard
