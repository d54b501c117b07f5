// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// State file: the publisher's private record of one list version, REPO/private/lists/LIST/V.state: every entry's
// KeyRecord (without its input position), sorted by ByLayerKey, and the threat names. It is what a later version is
// computed from (incremental versions) and what the snapshot is built from, read front to back in bounded memory.
// Format (docs/repository-layout.md, "State file"; pinned by fixtures/golden/state_v1.ugst), little-endian:
//
//   magic "UGSTATE\n" | u32 format version (1) | u32 threat count T | u64 list version | u8 list name length |
//   list name | T x (u8 length, name) | records, 48 bytes each: u64 key, sha256[32], u8 layer, u8 ipv6,
//   u8 prefix length, u8 0, u16 threat id, u16 0 | u64 record count | sha256 of everything before it.
//
// Threat names are sorted byte-wise and unique; records reference them by position. Writing is append-only with a
// running hash; Finish() renames the file into place.
//
// Changes the on-disk format: bump kStateFormatVersion, the doc and the golden test.
#ifndef URLGUARD_PUBLISH_STATE_FILE_H_
#define URLGUARD_PUBLISH_STATE_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "format/repository_files.h"  // StateFileName: the name of version V's state file
#include "platform/env.h"
#include "platform/sequential_file.h"
#include "publish/key_record.h"
#include "urlguard/status.h"

namespace urlguard {

constexpr uint32_t kStateFormatVersion = 1;
constexpr size_t kStateRecordBytes = 48;
constexpr size_t kStateBufferBytes = size_t{1} << 20;

// The header a state file and a state delta (publish/state_delta.h) both start with: `magic`, u32 format version,
// u32 threat count, u64 list version, the list name and the threat names, each length-prefixed.
std::string StateHeaderBytes(const char (&magic)[8], uint32_t format_version, uint64_t version, const std::string& list,
                             const std::vector<std::string>& threats);

class StateFileWriter {
 public:
  // `threats` sorted and unique (asserted), at most 65536.
  static Result<std::unique_ptr<StateFileWriter>> Create(Env* env, const std::string& path, const std::string& list,
                                                         uint64_t version, const std::vector<std::string>& threats);
  // Records in ByLayerKey order (the caller's merge gives them so); seq is not stored.
  Status Add(const KeyRecord& r);
  Status Finish();  // footer, fsync, rename into place
  uint64_t records() const { return count_; }

 private:
  StateFileWriter() = default;
  Status Write(const void* data, size_t size);
  Env* env_ = nullptr;
  std::string path_;
  std::unique_ptr<WritableFile> file_;
  Sha256Hasher hasher_;
  std::string buffer_;
  uint64_t count_ = 0;
};

class StateFileReader {
 public:
  // Opens and reads the header. kCorruption for a bad magic, version, name or size; kNotFound when missing.
  static Result<std::unique_ptr<StateFileReader>> Open(const std::string& path);
  // The next record (seq 0); false after the last, once the count and checksum are verified (kCorruption if not).
  Result<bool> Next(KeyRecord* out);
  uint64_t version() const { return version_; }
  const std::string& list() const { return list_; }
  const std::vector<std::string>& threats() const { return threats_; }
  uint64_t records() const { return count_; }

 private:
  StateFileReader() = default;
  Status Fill(void* out, size_t size);  // exact read through the buffer, hashed
  std::unique_ptr<SequentialFile> file_;
  Sha256Hasher hasher_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0, end_ = 0;
  std::string list_;
  uint64_t version_ = 0;
  std::vector<std::string> threats_;
  uint64_t count_ = 0;
  uint64_t read_ = 0;
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_STATE_FILE_H_
