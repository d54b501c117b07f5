// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// SequentialFile: reads a file front to back in caller-sized blocks with read(2), for inputs that must not be
// held whole in memory (feeds of any size, the publisher's sorted runs and state files). Unlike a mapping, the
// pages read stay in the page cache, not in the process's resident set, so a reader's memory is its buffer.
//
// Thread safety: one object per thread; different objects may be used concurrently.
#ifndef URLGUARD_PLATFORM_SEQUENTIAL_FILE_H_
#define URLGUARD_PLATFORM_SEQUENTIAL_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "urlguard/status.h"

namespace urlguard {

class SequentialFile {
 public:
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;
  ~SequentialFile();

  // Opens `path` for reading (O_RDONLY|O_CLOEXEC). kNotFound when missing, kIoError otherwise.
  static Result<std::unique_ptr<SequentialFile>> Open(const std::string& path);

  // Reads up to `size` bytes into `buf`; returns how many (0 only at the end of the file). Retries EINTR.
  // kIoError naming the path on a read error.
  Result<size_t> Read(void* buf, size_t size);

  // Reads exactly `size` bytes, or fails with kCorruption ("truncated") at the end of the file.
  Status ReadExactly(void* buf, size_t size);

  uint64_t size() const { return size_; }  // at open time
  const std::string& path() const { return path_; }

 private:
  SequentialFile(int fd, std::string path, uint64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  int fd_;
  std::string path_;
  uint64_t size_;
};

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_SEQUENTIAL_FILE_H_
