// Copyright urlguard authors.
#include "sync/data_dir_guard.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "platform/env.h"

namespace urlguard {
namespace {

std::string Octal(uint32_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

Status Errno(const char* what, const std::string& path, int err) {
  std::string m = std::string(what) + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(std::move(m));
  return Status::IoError(std::move(m));
}

}  // namespace

uint32_t DataDirPermissions(DataDirMode mode) { return mode == DataDirMode::kGroupReadable ? 0750 : 0700; }

Status CreateDataDir(const std::string& dir, DataDirMode mode) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) return Status::Ok();
  const std::string parent = DirName(dir);
  if (parent != dir && parent != ".") {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) return Status::IoError("mkdir " + parent + ": " + ec.message());
  }
  const mode_t perms = static_cast<mode_t>(DataDirPermissions(mode));
  if (::mkdir(dir.c_str(), perms) != 0 && errno != EEXIST) return Errno("mkdir", dir, errno);
  // mkdir applies the umask; the data directory's mode must not depend on it.
  if (::chmod(dir.c_str(), perms) != 0) return Errno("chmod", dir, errno);
  return Status::Ok();
}

Status CheckDataDir(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return Errno("stat", dir, errno);
  if (!S_ISDIR(st.st_mode)) return Status::FailedPrecondition("data directory " + dir + " is not a directory");
  if (st.st_uid != ::geteuid()) {
    return Status::PermissionDenied("data directory " + dir + " is owned by uid " + std::to_string(st.st_uid) +
                                    ", not by this user (uid " + std::to_string(::geteuid()) +
                                    "): refusing it (whoever owns it decides every verdict)");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    const char* who = (st.st_mode & S_IWOTH) != 0 ? "every user" : "its group";
    return Status::PermissionDenied("data directory " + dir + " is writable by " + who + " (mode " +
                                    Octal(st.st_mode) + "): refusing it; chmod g-w,o-w " + dir);
  }
  return Status::Ok();
}

Status CreatePrivateFileIfMissing(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return errno == EEXIST ? Status::Ok() : Errno("open", path, errno);
  const int rc = ::fchmod(fd, 0600);  // O_CREAT applies the umask; the mode must not depend on it
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Errno("fchmod", path, err);
  return Status::Ok();
}

Status RemoveIfNotRegularFile(const std::string& path, bool* removed) {
  if (removed != nullptr) *removed = false;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? Status::Ok() : Errno("lstat", path, errno);
  }
  if (S_ISREG(st.st_mode)) return Status::Ok();
  std::error_code ec;
  std::filesystem::remove_all(path, ec);  // does not follow symlinks: a link is removed, not its target
  if (ec) return Status::IoError("removing " + path + ": " + ec.message());
  if (removed != nullptr) *removed = true;
  return Status::Ok();
}

}  // namespace urlguard
