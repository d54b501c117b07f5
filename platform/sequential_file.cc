// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "platform/sequential_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

namespace urlguard {

SequentialFile::~SequentialFile() { ::close(fd_); }

Result<std::unique_ptr<SequentialFile>> SequentialFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IoError(path + ": " + strerror(e));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return Status::IoError(path + ": " + strerror(e));
  }
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::unique_ptr<SequentialFile>(new SequentialFile(fd, path, static_cast<uint64_t>(st.st_size)));
}

Result<size_t> SequentialFile::Read(void* buf, size_t size) {
  for (;;) {
    ssize_t n = ::read(fd_, buf, size);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    return Status::IoError(path_ + ": read: " + strerror(errno));
  }
}

Status SequentialFile::ReadExactly(void* buf, size_t size) {
  auto* p = static_cast<uint8_t*>(buf);
  while (size > 0) {
    URLGUARD_ASSIGN_OR_RETURN(size_t n, Read(p, size));
    if (n == 0) return Status::Corruption(path_ + ": truncated");
    p += n;
    size -= n;
  }
  return Status::Ok();
}

}  // namespace urlguard
