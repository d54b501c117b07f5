// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// State delta: the effective change of one list version V against V-1, REPO/private/lists/LIST/V.delta. The
// publisher's state is a base state file B.state (publish/state_file.h) plus one delta per version after it
// (publish/lsm_state.h): a version writes only its delta, so its cost follows the number of changes and not the
// list's size (issue 17). Format (docs/repository-layout.md, "State delta"; pinned by
// fixtures/golden/state_delta_v1.ugsd), little-endian, the state file's layout with another magic and an op byte:
//
//   magic "UGDELTA\n" | u32 format version (1) | u32 threat count T | u64 list version V | u8 list name length |
//   list name | T x (u8 length, name) | records, 48 bytes each: u64 key, sha256[32], u8 layer, u8 ipv6,
//   u8 prefix length, u8 op, u16 threat id, u16 0 | u64 record count | sha256 of everything before it.
//
// op 1 = put (the entry is in V with this threat: absent in V-1 or listed there with another threat), op 2 =
// delete (the entry was in V-1 and is not in V; threat id 0, meaningless). Records are strictly ascending by
// (layer, key, sha256) (CompareEntry): an entry appears at most once. The threat table holds the names the put
// records use, sorted byte-wise and unique. A version without an effective change still writes a delta (count 0)
// so that "every delta after the base exists" is what a complete state means.
//
// Changes the on-disk format: bump kStateDeltaFormatVersion, the doc and the golden test.
#ifndef URLGUARD_PUBLISH_STATE_DELTA_H_
#define URLGUARD_PUBLISH_STATE_DELTA_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "platform/env.h"
#include "platform/sequential_file.h"
#include "publish/key_record.h"
#include "urlguard/status.h"

namespace urlguard {

constexpr uint32_t kStateDeltaFormatVersion = 1;
// A delta is held in memory whole by its readers (publish/lsm_state.h): a cap on the records one file may announce
// (48 bytes each: 3 GiB), far above a version's changes (the attack rate is 5 M an hour).
constexpr uint64_t kMaxStateDeltaRecords = uint64_t{64} << 20;

enum class DeltaOp : uint8_t { kPut = 1, kDelete = 2 };

class StateDeltaWriter {
 public:
  // Writes PATH.tmp; Finish() renames it to `path`. `threats` sorted and unique (asserted), at most 65536.
  // kInvalidArgument for a bad list or threat name; kIoError from the file system.
  static Result<std::unique_ptr<StateDeltaWriter>> Create(Env* env, const std::string& path, const std::string& list,
                                                          uint64_t version, const std::vector<std::string>& threats);
  // Records strictly ascending by CompareEntry (kInvalidArgument otherwise: a caller bug caught before it reaches
  // the disk). Put: r.threat indexes this writer's table. Delete: r.threat is written as 0; seq is not stored.
  Status Add(const KeyRecord& r, DeltaOp op);
  Status Finish();  // footer, fsync, rename into place, fsync the directory
  uint64_t records() const { return count_; }

 private:
  StateDeltaWriter() = default;
  Status Write(const void* data, size_t size);
  Env* env_ = nullptr;
  std::string path_;
  size_t threat_count_ = 0;
  std::unique_ptr<WritableFile> file_;
  Sha256Hasher hasher_;
  std::string buffer_;
  uint64_t count_ = 0;
  bool have_last_ = false;
  KeyRecord last_;
};

class StateDeltaReader {
 public:
  // Opens and reads the header. kCorruption for a bad magic, version, name, size or a count above
  // kMaxStateDeltaRecords; kNotFound when missing.
  static Result<std::unique_ptr<StateDeltaReader>> Open(const std::string& path);
  // The next record (seq 0, reserved 0) and its op; false after the last, once the count and checksum are verified.
  // kCorruption for a bad layer, op or threat id, records out of order, or a count or checksum mismatch.
  Result<bool> Next(KeyRecord* out, DeltaOp* op);
  uint64_t version() const { return version_; }
  const std::string& list() const { return list_; }
  const std::vector<std::string>& threats() const { return threats_; }
  uint64_t records() const { return count_; }

 private:
  StateDeltaReader() = default;
  Status Fill(void* out, size_t size, bool hash);  // exact read through the buffer
  std::unique_ptr<SequentialFile> file_;
  Sha256Hasher hasher_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0, end_ = 0;
  std::string list_;
  uint64_t version_ = 0;
  std::vector<std::string> threats_;
  uint64_t count_ = 0;
  uint64_t read_ = 0;
  bool done_ = false;
  KeyRecord last_;
};

// A whole delta in memory: what publish/lsm_state.h keeps of each version after the base.
struct StateDelta {
  uint64_t version = 0;
  std::vector<std::string> threats;
  std::vector<KeyRecord> records;  // ascending; `reserved` holds the DeltaOp
};
// Reads and verifies `path` whole (StateDeltaReader's checks), and that it is list `list`'s version `version`.
Result<StateDelta> ReadStateDelta(const std::string& path, const std::string& list, uint64_t version);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_STATE_DELTA_H_
