// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Full-hash file: one list version's full SHA-256 keys, sorted, with per record the layer and a threat id,
// used straight from a read-only mapping by the verify API (docs/full-hash-format.md specifies every byte;
// format/full_hash_file_test.cc pins them with fixtures/golden/full_hash_v1.ugh). The publisher writes
// REPO/private/lists/LIST/V.ugh next to V.ugs; urlguard-server maps the newest one of each list.
//
// Why a sorted mapped file and not a database: a verify request asks "which full hashes start with these
// 4-byte prefixes". With the keys sorted and a bucket index on the first B bits of the hash (B chosen from
// the record count, so a bucket holds ~1-2 records), a prefix lookup reads one u32 pair of the index and one
// or two 36-byte records: about two cache misses, no parse step, no per-lookup allocation, and the kernel's
// page cache shares the data between processes. A 1 M-key file is 36 MB + 2 MB of index; 100 M keys, 3.6 GB +
// 256 MB.
//
// Written streaming: the writer takes records in ascending (sha256, layer) order, keeps only a write buffer
// and the index (4 * 2^B bytes, at most 256 MiB) in memory, and puts the record count and offsets in a
// footer, so the file is written with appends only and hashed as it goes. Finish() renames it into place:
// readers see a complete file or none.
//
// Delta files (V.ughd, issue 17): the same layout with another magic, the version they apply on top of in
// the header, and per record an op (put or delete), so that a version that changed c entries writes O(c)
// bytes and a server maps only that (docs/full-hash-format.md, "Delta files"; pinned by
// fixtures/golden/full_hash_delta_v1.ughd).
//
// Changes the on-disk format: bump kFullHashFormatVersion, docs/full-hash-format.md and the golden test.
#ifndef URLGUARD_FORMAT_FULL_HASH_FILE_H_
#define URLGUARD_FORMAT_FULL_HASH_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/layer_kind.h"
#include "core/sha256.h"
#include "format/repository_files.h"  // FullHashFileName: the name of version V's file
#include "urlguard/env.h"
#include "urlguard/status.h"

namespace urlguard {

constexpr uint32_t kFullHashFormatVersion = 1;
inline constexpr char kFullHashMagic[8] = {'U', 'G', 'H', 'A', 'S', 'H', '\x1a', '\n'};
// A delta file's magic ("UGHDELT\n"); its format version is kFullHashFormatVersion too.
inline constexpr char kFullHashDeltaMagic[8] = {'U', 'G', 'H', 'D', 'E', 'L', 'T', '\n'};
// A delta record's op (record byte 33; reserved and 0 in a base file).
constexpr uint8_t kFullHashOpPut = 0;
constexpr uint8_t kFullHashOpDelete = 1;
constexpr size_t kFullHashHeaderBytes = 128;
constexpr size_t kFullHashRecordBytes = 36;  // sha256[32], layer u8, reserved u8, threat id u16
constexpr size_t kFullHashFooterBytes =
    32;  // record count, records offset, index offset, file size (u64 each)
constexpr size_t kFullHashChecksumBytes = 32;
// Bucket index: 2^bucket_bits + 1 u32 entries.
constexpr uint32_t kMinFullHashBucketBits = 8;
constexpr uint32_t kMaxFullHashBucketBits = 26;
// Threat names per file (ids are u16; names follow IsValidThreatName).
constexpr size_t kMaxFullHashThreats = 4096;
// Records per file: the index stores u32 record positions.
constexpr uint64_t kMaxFullHashRecords = 0xffffffffu;
// The writer's append buffer.
constexpr size_t kFullHashWriteBufferBytes = size_t{1} << 20;

// The bucket bits a writer uses for about `expected_records` records: ~1-2 records per bucket, clamped to
// [kMinFullHashBucketBits, kMaxFullHashBucketBits].
uint32_t FullHashBucketBitsFor(uint64_t expected_records);

// Writes one full-hash file. Not thread-safe. Memory: kFullHashWriteBufferBytes plus 4 * 2^bucket_bits bytes,
// whatever the record count.
class FullHashFileWriter {
 public:
  // Starts writing `path` (through `path + ".tmp"`, created with CreateTempFile: a stale or planted temporary
  // file is removed first). `threat_names` become ids 0, 1, ...: each must be a valid threat name, no
  // duplicates, at most kMaxFullHashThreats. `expected_records` only sizes the bucket index (any count stays
  // correct). Failures: kInvalidArgument (list or threat names), kIoError / kFailedPrecondition from the Env.
  static Result<FullHashFileWriter> Create(Env* env, const std::string& path, std::string_view list,
                                           uint64_t version, const std::vector<std::string>& threat_names,
                                           uint64_t expected_records);

  // Starts writing the delta file of `version` on top of `base_version` (the publisher passes version - 1):
  // `path` is REPO/private/lists/LIST/FullHashDeltaFileName(version). Same arguments and failures as Create(),
  // plus kInvalidArgument when base_version >= version. `threat_names` are those of the put records (may be
  // empty when the delta only deletes). Records go in with AddDelta() (Add() is AddDelta(..., false)).
  static Result<FullHashFileWriter> CreateDelta(Env* env, const std::string& path, std::string_view list,
                                                uint64_t version, uint64_t base_version,
                                                const std::vector<std::string>& threat_names,
                                                uint64_t expected_records);

  FullHashFileWriter(FullHashFileWriter&&) noexcept;
  FullHashFileWriter& operator=(FullHashFileWriter&&) = delete;
  ~FullHashFileWriter();  // without a successful Finish(): removes the temporary file

  // Appends one record. (sha256, layer) must be strictly greater than the previous record's (bytewise sha256,
  // then layer). Failures: kInvalidArgument (order, bad layer, threat id out of range, too many records: the
  // writer is then unusable), kIoError. After a failure, Finish() fails too.
  Status Add(const Sha256Digest& sha256, LayerKind layer, uint16_t threat_id);

  // Appends one delta record: a put (the entry is in the version with `threat_id`) or, with `deleted`, a
  // delete (the entry is not in the version; `threat_id` is ignored and written as 0). Same order rule and
  // failures as Add(), plus kInvalidArgument for a delete on a writer made by Create() (a base file has no
  // deletes).
  Status AddDelta(const Sha256Digest& sha256, LayerKind layer, uint16_t threat_id, bool deleted);

  // Writes the index, footer and checksum, fsyncs, renames the file into place and fsyncs the directory.
  Status Finish();

  uint64_t records() const { return count_; }
  uint32_t bucket_bits() const { return bucket_bits_; }
  bool is_delta() const { return delta_; }

 private:
  FullHashFileWriter() = default;
  static Result<FullHashFileWriter> Start(Env* env, const std::string& path, std::string_view list,
                                          uint64_t version, bool delta, uint64_t base_version,
                                          const std::vector<std::string>& threat_names, uint64_t expected_records);
  Status Write(const void* data, size_t size);  // buffered; hashes as it goes
  Status Flush();

  Env* env_ = nullptr;
  std::string path_;
  std::string tmp_path_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<Sha256Hasher> hasher_;
  std::string buffer_;
  std::vector<uint32_t> index_;  // index_[b]: number of records with bucket < b, filled as records arrive
  uint32_t bucket_bits_ = 0;
  uint16_t threat_count_ = 0;
  uint64_t count_ = 0;
  uint64_t written_ = 0;  // bytes handed to Write()
  uint64_t records_offset_ = 0;
  uint8_t last_[33] = {};  // previous record's sha256 and layer
  bool failed_ = false;
  bool finished_ = false;
  bool delta_ = false;
};

// One record of an open file. `threat` points into the mapping.
struct FullHashMatch {
  Sha256Digest sha256{};
  LayerKind layer = LayerKind::kUrl;
  std::string_view threat;  // empty for a delete
  bool deleted = false;     // a delta file's delete record: (sha256, layer) is not in the delta's version
};

// A validated read-only view of full-hash file bytes. Does not own them. Thread-safe (immutable).
class FullHashFileView {
 public:
  FullHashFileView() = default;

  // Validates `size` bytes at `data`, a base file (kFullHashMagic) or a delta file (kFullHashDeltaMagic: then
  // base_version < version), in O(2^bucket_bits): magic, format version, names, threat table, every
  // offset and length, the index (starts at 0, never decreases, ends at the record count). With
  // `verify_contents` also in O(records): the trailing SHA-256, strict record order, each record in its
  // bucket, valid layers, ops and threat ids; a server verifies before it answers from a file. Failures:
  // kCorruption naming the first problem.
  static Result<FullHashFileView> Open(const uint8_t* data, size_t size, bool verify_contents);

  // Appends to `*out` every record whose first 4 bytes (big-endian) equal `prefix`, in file order, and
  // returns how many. Never allocates beyond `out`'s growth. In a delta file, delete records are returned too
  // (FullHashMatch::deleted). A record with an invalid layer, op or threat id (possible only when opened
  // without verify_contents) is skipped.
  size_t LookupPrefix(uint32_t prefix, std::vector<FullHashMatch>* out) const;

  std::string_view list_name() const { return list_; }
  uint64_t version() const { return version_; }
  // Whether this is a delta file, and the version it applies on top of (0 for a base file).
  bool is_delta() const { return is_delta_; }
  uint64_t base_version() const { return base_version_; }
  uint64_t records() const { return count_; }
  uint32_t bucket_bits() const { return bucket_bits_; }
  const std::vector<std::string_view>& threat_names() const { return threats_; }
  // The record at `i` < records(); for dumps and tests.
  FullHashMatch RecordAt(uint64_t i) const;

 private:
  const uint8_t* records_ = nullptr;
  const uint8_t* index_ = nullptr;
  uint64_t count_ = 0;
  uint32_t bucket_bits_ = 0;
  uint64_t version_ = 0;
  uint64_t base_version_ = 0;
  bool is_delta_ = false;
  std::string_view list_;
  std::vector<std::string_view> threats_;
};

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_FULL_HASH_FILE_H_
