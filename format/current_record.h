// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The D/current record: the client's installed state and high-water marks as bytes (docs/data-dir.md,
// "current"): a header, one 256-byte record per list sorted by name, and a trailing SHA-256 of every
// preceding byte. This file is the codec only; sync/store.h writes and reads the file with its install and
// recovery protocol.
//
// Changes the D/current format: bump kCurrentFormatVersion, docs/data-dir.md and the golden test
// (fixtures/golden/current_v1.bin via format/current_record_test.cc, regenerated only with
// URLGUARD_UPDATE_GOLDEN=1).
#ifndef URLGUARD_FORMAT_CURRENT_RECORD_H_
#define URLGUARD_FORMAT_CURRENT_RECORD_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/layer_kind.h"
#include "core/list_name.h"
#include "core/sha256.h"
#include "urlguard/status.h"

namespace urlguard {

// The D/current format (docs/data-dir.md).
inline constexpr char kCurrentMagic[8] = {'U', 'G', 'C', 'U', 'R', 'R', '\x1a', '\n'};
constexpr uint32_t kCurrentFormatVersion = 1;
constexpr size_t kCurrentHeaderBytes = 32;
constexpr size_t kCurrentRecordBytes = 256;
constexpr size_t kCurrentTrailerBytes = 32;  // SHA-256 of every preceding byte
// The most lists one data directory holds (a client subscribes to a handful): kMaxLists (core/list_name.h).
constexpr size_t kMaxStoreLists = kMaxLists;
// The cap for reading D/current (its largest valid size: 65 600 bytes).
constexpr size_t kMaxCurrentBytes =
    kCurrentHeaderBytes + kMaxStoreLists * kCurrentRecordBytes + kCurrentTrailerBytes;

// The directory of the snapshot files inside D (InstalledFileName).
inline constexpr std::string_view kListsDirName = "lists";

// An installed version of one list: what D/current says about it.
struct InstalledList {
  std::string list;      // IsValidListName
  uint64_t version = 0;  // >= 1
  std::string file;      // relative to D: "lists/<list>/<version>.ugs" (InstalledFileName); set by the store
  Sha256Digest state_sha256{};     // the snapshot file's trailing SHA-256 (SnapshotView::checksum())
  Sha256Digest manifest_sha256{};  // SHA-256 of the signed manifest bytes this version came with
  int64_t created_unix = 0;        // from the manifest
  int64_t expires_unix = 0;        // from the manifest: not fresh from this time on
  bool emergency = false;          // manifest policy flag
  uint32_t min_wait_seconds = 0;   // manifest: the server's minimum polling interval
  std::array<uint64_t, kLayerKindCount> entries{};  // per LayerKind, read from the snapshot; set by the store

  bool operator==(const InstalledList&) const = default;
};

// Everything D/current records about one list.
struct ListState {
  std::string list;  // IsValidListName
  // The high-water mark: the highest version ever installed and the SHA-256 of its manifest bytes.
  uint64_t high_water_version = 0;  // >= 1
  Sha256Digest high_water_manifest_sha256{};
  // The version serving now. Absent when its file was found missing or corrupt (dropped by Store::Open; the
  // next sync installs it again). When present, installed->version <= high_water_version.
  std::optional<InstalledList> installed;

  bool operator==(const ListState&) const = default;
};

struct StoreState {
  // Changes with every write of D/current: counts up by one per write, and restarts at a random value when
  // Store::Open() had to set aside a corrupt D/current. Readers compare it for inequality only.
  uint64_t generation = 0;
  std::vector<ListState> lists;  // sorted by name, names unique, at most kMaxStoreLists

  // The list's record, or nullptr.
  const ListState* Find(std::string_view list) const;
  // The installed version of `list`, or nullptr when none serves.
  const InstalledList* FindInstalled(std::string_view list) const;

  bool operator==(const StoreState&) const = default;
};

// "lists/<list>/<version>.ugs".
std::string InstalledFileName(std::string_view list, uint64_t version);

// Checks every rule of the format on a state (names, order, counts, versions, `file` names, a dropped list's
// zero fields are implied). kInvalidArgument naming the first violation.
Status ValidateStoreState(const StoreState& state);

// The bytes of D/current for `state` (docs/data-dir.md). Precondition: ValidateStoreState(state).ok();
// violating it is a bug and aborts the process. Deterministic. Thread-safe.
std::string SerializeStoreState(const StoreState& state);

// Parses D/current bytes from disk (untrusted: a reader may race a writer on a broken file system, the disk
// may flip bits). kResourceExhausted over kMaxCurrentBytes; kCorruption naming the first problem (magic,
// format version, sizes, the trailing SHA-256, then every record field). Never crashes on any input; fuzzed
// by fuzz/store_state_fuzz.cc. Thread-safe.
Result<StoreState> ParseStoreState(std::string_view bytes);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_CURRENT_RECORD_H_
