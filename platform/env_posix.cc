// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The POSIX Env (Linux). Every system call's failure becomes a Status naming the call, the path and errno.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "platform/env.h"

namespace urlguard {
namespace {

Status ErrnoStatus(const char* op, const std::string& path, int err) {
  std::string m = std::string(op) + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(std::move(m));
  if (err == ENOSPC || err == EDQUOT) return Status::ResourceExhausted(std::move(m));
  if (err == EEXIST) return Status::FailedPrecondition(std::move(m));
  return Status::IoError(std::move(m));
}

// What a non-regular file is, for messages ("a FIFO").
const char* FileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Checks that the open descriptor `fd` of `path` is a regular file and clears the O_NONBLOCK it was opened
// with. Every open in this Env passes O_NONBLOCK, so that a FIFO (no writer: open blocks; O_RDWR: read blocks)
// or a device planted at any path is refused here instead of hanging the process (and whatever lock it holds).
// On failure `fd` is closed.
Status RequireRegularAndBlocking(int fd, const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IoError(path + ": " + FileTypeName(st.st_mode) + ", not a regular file; refusing it");
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus("fcntl(F_SETFL)", path, err);
  }
  return Status::Ok();
}

// Opens `path` with `flags` | O_NONBLOCK | O_CLOEXEC, fstat()s the open descriptor and refuses anything but a
// regular file (RequireRegularAndBlocking), so the checks that follow and the I/O see the same inode and no
// open blocks. On success the caller owns *fd; on failure nothing is left open.
Status OpenRegular(const std::string& path, int flags, mode_t mode, int* fd, struct stat* st) {
  *fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC, mode);
  // ENXIO: a socket, or a FIFO opened write-only without a reader.
  if (*fd < 0) return ErrnoStatus("open", path, errno);
  if (::fstat(*fd, st) != 0) {
    const int err = errno;
    ::close(*fd);
    *fd = -1;
    return ErrnoStatus("fstat", path, err);
  }
  Status s = RequireRegularAndBlocking(*fd, path, *st);
  if (!s.ok()) *fd = -1;
  return s;
}

Status OpenForReading(const std::string& path, int* fd, struct stat* st) {
  return OpenRegular(path, O_RDONLY, 0, fd, st);
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

// madvise(advice) over the whole pages of [offset, offset + length) of a mapping Env::Default() made; `outward`
// widens the range to the pages that touch it (advice that only adds work), otherwise it narrows it to the pages
// inside it (MADV_DONTNEED must not drop bytes outside the range).
void AdviseMapped(const MappedFile& file, size_t offset, size_t length, int advice, bool outward) {
  const auto* posix = dynamic_cast<const PosixMappedFile*>(&file);
  if (posix == nullptr || offset >= file.size()) return;
  length = std::min(length, file.size() - offset);
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(file.data()) + offset;
  const uintptr_t first = outward ? begin / page * page : (begin + page - 1) / page * page;
  const uintptr_t last = outward ? (begin + length + page - 1) / page * page : (begin + length) / page * page;
  if (first >= last) return;
  (void)::madvise(reinterpret_cast<void*>(first), last - first, advice);
}

}  // namespace

void ReleaseMappedPages(const MappedFile& file, size_t offset, size_t length) {
  AdviseMapped(file, offset, length, MADV_DONTNEED, /*outward=*/false);
}

void AdviseRandomAccess(const MappedFile& file) { AdviseMapped(file, 0, file.size(), MADV_RANDOM, true); }

void PrefetchMappedPages(const MappedFile& file, size_t offset, size_t length) {
  AdviseMapped(file, offset, length, MADV_WILLNEED, /*outward=*/true);
}

double SampleResidentFraction(const MappedFile& file, size_t samples) {
  const auto* posix = dynamic_cast<const PosixMappedFile*>(&file);
  if (posix == nullptr || file.size() == 0 || samples == 0) return 1.0;
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(file.data());  // mmap's address: page-aligned
  const size_t pages = (file.size() + page - 1) / page;
  samples = std::min(samples, pages);
  size_t resident = 0, asked = 0;
  for (size_t i = 0; i < samples; ++i) {
    // Evenly spread, the first in the middle of its stretch.
    const size_t pg = static_cast<size_t>((static_cast<unsigned __int128>(2 * i + 1) * pages) / (2 * samples));
    unsigned char vec = 0;
    if (::mincore(reinterpret_cast<void*>(begin + pg * page), page, &vec) != 0) continue;
    ++asked;
    resident += vec & 1;
  }
  return asked == 0 ? 1.0 : static_cast<double>(resident) / static_cast<double>(asked);
}

namespace {

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

FileInfo ToFileInfo(const struct stat& st) {
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

// A directory held by an O_PATH descriptor; path() is its /proc/self/fd name, so the Env's path-based methods
// reach what is inside the held inode, whatever happens to the path it was opened by.
class PosixDirectory final : public Directory {
 public:
  PosixDirectory(int fd, std::string opened_as)
      : fd_(fd), path_("/proc/self/fd/" + std::to_string(fd)), opened_as_(std::move(opened_as)) {}
  ~PosixDirectory() override { ::close(fd_); }

  const std::string& path() const override { return path_; }

  Result<FileInfo> Stat() override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return ErrnoStatus("fstat", opened_as_, errno);
    return ToFileInfo(st);
  }

  Result<FileInfo> StatAt(const std::string& name) override {
    URLGUARD_RETURN_IF_ERROR(CheckName(name));
    struct stat st;
    if (::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoStatus("fstatat", Name(name), errno);
    }
    return ToFileInfo(st);
  }

  Result<std::string> ReadLinkAt(const std::string& name) override {
    URLGUARD_RETURN_IF_ERROR(CheckName(name));
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlinkat(fd_, name.c_str(), target.data(), target.size());
    if (n < 0) {
      if (errno == EINVAL) return Status::InvalidArgument("readlinkat " + Name(name) + ": not a symbolic link");
      return ErrnoStatus("readlinkat", Name(name), errno);
    }
    if (static_cast<size_t>(n) >= target.size()) {
      return Status::IoError("readlinkat " + Name(name) + ": target too long");
    }
    target.resize(static_cast<size_t>(n));
    return target;
  }

  Result<std::unique_ptr<Directory>> OpenDirectoryAt(const std::string& name) override {
    URLGUARD_RETURN_IF_ERROR(CheckName(name));
    const int fd = ::openat(fd_, name.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      // O_PATH|O_NOFOLLOW on a symlink opens the link itself; O_DIRECTORY then fails with ENOTDIR.
      if (err == ENOTDIR || err == ELOOP) {
        return Status::FailedPrecondition("openat " + Name(name) +
                                          ": a symbolic link or not a directory; not following it");
      }
      return ErrnoStatus("openat", Name(name), err);
    }
    return std::unique_ptr<Directory>(new PosixDirectory(fd, Name(name)));
  }

 private:
  // One component: no '/', not empty (".." and "." are the kernel's own entries).
  static Status CheckName(const std::string& name) {
    if (name.empty() || name.find('/') != std::string::npos) {
      return Status::InvalidArgument("directory entry '" + name + "': not a single path component");
    }
    return Status::Ok();
  }
  std::string Name(const std::string& name) const {
    return opened_as_ == "/" ? "/" + name : opened_as_ + "/" + name;
  }

  const int fd_;
  const std::string path_;
  const std::string opened_as_;  // for messages only: the path it was reached by
};

class PosixEnv final : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    int fd = -1;
    struct stat st;
    URLGUARD_RETURN_IF_ERROR(OpenForReading(path, &fd, &st));
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
    int fd = -1;
    struct stat st;
    URLGUARD_RETURN_IF_ERROR(OpenForReading(path, &fd, &st));
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

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool private_file) override {
    return OpenForWriting(path, O_TRUNC, private_file);
  }

  Result<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path,
                                                         bool private_file) override {
    return OpenForWriting(path, O_EXCL | O_NOFOLLOW, private_file);
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus("rename", from + " -> " + to, errno);
    return Status::Ok();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return ErrnoStatus("unlink", path, errno);
    return Status::Ok();
  }

  Status CreateDirs(const std::string& path, bool private_dir) override {
    if (path.empty()) return Status::InvalidArgument("empty directory path");
    const mode_t mode = private_dir ? 0700 : 0755;
    std::string partial;
    size_t pos = 0;
    while (pos <= path.size()) {
      size_t next = path.find('/', pos);
      if (next == std::string::npos) next = path.size();
      partial = path.substr(0, next);
      pos = next + 1;
      if (partial.empty()) continue;  // leading '/'
      if (::mkdir(partial.c_str(), mode) != 0) {
        if (errno == EEXIST) continue;
        return ErrnoStatus("mkdir", partial, errno);
      }
      // The umask may have removed bits from a private directory's 0700; nothing else can add any.
      if (private_dir && ::chmod(partial.c_str(), mode) != 0) return ErrnoStatus("chmod", partial, errno);
    }
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::IoError(path + ": not a directory");
    }
    return Status::Ok();
  }

  Status SetPermissions(const std::string& path, uint32_t mode) override {
    if (::chmod(path.c_str(), static_cast<mode_t>(mode & 07777)) != 0) return ErrnoStatus("chmod", path, errno);
    return Status::Ok();
  }

  Status RemoveDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return ErrnoStatus("rmdir", path, errno);
    return Status::Ok();
  }

  Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
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
    return ToFileInfo(st);
  }

  Result<std::unique_ptr<Directory>> OpenDirectory(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == ENOTDIR) return Status::FailedPrecondition("open " + path + ": not a directory");
      return ErrnoStatus("open", path, err);
    }
    return std::unique_ptr<Directory>(new PosixDirectory(fd, path));
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
    int fd = -1;
    struct stat st;
    URLGUARD_RETURN_IF_ERROR(OpenRegular(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644, &fd, &st));
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

  std::optional<std::string> GetEnvVar(const std::string& name) override {
    const char* value = ::secure_getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }

  Status NotifyServiceManager(std::string_view state) override {
    std::optional<std::string> socket_name = GetEnvVar("NOTIFY_SOCKET");
    if (!socket_name.has_value() || socket_name->empty()) return Status::Ok();
    const std::string& name = *socket_name;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (name[0] != '/' && name[0] != '@') {
      return Status::InvalidArgument("NOTIFY_SOCKET=" + name +
                                     ": neither an absolute path nor '@' abstract name");
    }
    if (name.size() > sizeof addr.sun_path - (name[0] == '/' ? 1 : 0)) {  // a path needs its NUL
      return Status::InvalidArgument("NOTIFY_SOCKET=" + name + ": longer than a socket address can hold");
    }
    std::memcpy(addr.sun_path, name.data(), name.size());
    if (name[0] == '@') addr.sun_path[0] = '\0';  // Linux abstract namespace: the name is not NUL-terminated
    const socklen_t addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return ErrnoStatus("socket(AF_UNIX)", name, errno);
    ssize_t n;
    do {
      n = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&addr),
                   addr_len);
    } while (n < 0 && errno == EINTR);
    const int err = errno;
    ::close(fd);
    if (n < 0) {
      if (err == ECONNREFUSED || err == ENOENT) {
        return Status::Unavailable("sendto " + name + ": " + std::strerror(err) +
                                   " (no service manager listening)");
      }
      return ErrnoStatus("sendto", name, err);
    }
    if (static_cast<size_t>(n) != state.size()) return Status::IoError("sendto " + name + ": short datagram");
    return Status::Ok();
  }

  Result<std::unique_ptr<SignalSet>> WatchSignals(const std::vector<int>& signals) override;

 private:
  static Result<std::unique_ptr<WritableFile>> OpenForWriting(const std::string& path, int extra_flags,
                                                              bool private_file) {
    const mode_t mode = private_file ? 0600 : 0644;
    int fd = -1;
    struct stat st;
    URLGUARD_RETURN_IF_ERROR(OpenRegular(path, O_WRONLY | O_CREAT | extra_flags, mode, &fd, &st));
    // The umask may have removed bits, and an existing file keeps its old mode through O_CREAT: a private
    // file gets exactly 0600 either way.
    if (private_file && ::fchmod(fd, mode) != 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("fchmod", path, err);
    }
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path));
  }
};

// signalfd(2): the signals are blocked, so they stay pending until read from the descriptor.
class PosixSignalSet final : public SignalSet {
 public:
  PosixSignalSet(int fd, sigset_t watched, sigset_t previous)
      : fd_(fd), watched_(watched), previous_(previous) {}
  ~PosixSignalSet() override {
    ::close(fd_);
    // Unblock only the watched signals that were not blocked before.
    sigset_t unblock;
    sigemptyset(&unblock);
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sigismember(&watched_, sig) == 1 && sigismember(&previous_, sig) != 1) sigaddset(&unblock, sig);
    }
    pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  }

  Result<int> Wait(int64_t timeout_ms) override {
    struct pollfd p {};
    p.fd = fd_;
    p.events = POLLIN;
    const int timeout = timeout_ms < 0 ? -1 : static_cast<int>(std::min<int64_t>(timeout_ms, INT_MAX));
    int rc;
    do {
      // An EINTR restart waits the whole timeout again: at worst late, never early.
      rc = ::poll(&p, 1, timeout);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) return ErrnoStatus("poll", "signalfd", errno);
    if (rc == 0) return 0;
    struct signalfd_siginfo info;
    ssize_t n;
    do {
      n = ::read(fd_, &info, sizeof info);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) return 0;  // taken by sigwait() elsewhere meanwhile
    if (n != static_cast<ssize_t>(sizeof info)) return ErrnoStatus("read", "signalfd", n < 0 ? errno : EIO);
    return static_cast<int>(info.ssi_signo);
  }

 private:
  int fd_;
  sigset_t watched_;
  sigset_t previous_;
};

Result<std::unique_ptr<SignalSet>> PosixEnv::WatchSignals(const std::vector<int>& signals) {
  if (signals.empty()) return Status::InvalidArgument("no signals to watch");
  sigset_t set;
  sigemptyset(&set);
  for (int sig : signals) {
    if (sig == SIGKILL || sig == SIGSTOP || sigaddset(&set, sig) != 0) {
      return Status::InvalidArgument("signal " + std::to_string(sig) + " cannot be watched");
    }
  }
  sigset_t previous;
  if (int err = pthread_sigmask(SIG_BLOCK, &set, &previous); err != 0) {
    return ErrnoStatus("pthread_sigmask", "", err);
  }
  int fd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return ErrnoStatus("signalfd", "", err);
  }
  return std::unique_ptr<SignalSet>(new PosixSignalSet(fd, set, previous));
}

}  // namespace

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();
  return env;
}

}  // namespace urlguard
