// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The D/current codec: the bytes of docs/data-dir.md, "current".
#include "format/current_record.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/byte_io.h"
#include "core/list_name.h"

namespace urlguard {
namespace {

// Record flags (docs/data-dir.md, "Record").
constexpr uint8_t kFlagInstalled = 1;
constexpr uint8_t kFlagEmergency = 2;

// Offsets inside a record.
constexpr size_t kRecNameLen = 0;
constexpr size_t kRecFlags = 1;
constexpr size_t kRecReserved0 = 2;
constexpr size_t kRecMinWait = 4;
constexpr size_t kRecName = 8;
constexpr size_t kRecHighWater = 72;
constexpr size_t kRecHighWaterSha = 80;
constexpr size_t kRecVersion = 112;
constexpr size_t kRecCreated = 120;
constexpr size_t kRecExpires = 128;
constexpr size_t kRecEntries = 136;
constexpr size_t kRecStateSha = 160;
constexpr size_t kRecManifestSha = 192;
constexpr size_t kRecReserved1 = 224;
static_assert(kRecReserved1 + 32 == kCurrentRecordBytes);
static_assert(kRecName + kMaxListNameBytes == kRecHighWater);

bool AllZero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

Status CorruptRecord(size_t index, const std::string& what) {
  return Status::Corruption("current: record " + std::to_string(index) + ": " + what);
}

Sha256Digest DigestAt(const uint8_t* p) {
  Sha256Digest d;
  std::memcpy(d.data(), p, d.size());
  return d;
}

}  // namespace

const ListState* StoreState::Find(std::string_view list) const {
  auto it = std::lower_bound(lists.begin(), lists.end(), list,
                             [](const ListState& s, std::string_view name) { return s.list < name; });
  return it != lists.end() && it->list == list ? &*it : nullptr;
}

const InstalledList* StoreState::FindInstalled(std::string_view list) const {
  const ListState* s = Find(list);
  return s != nullptr && s->installed.has_value() ? &*s->installed : nullptr;
}

std::string InstalledFileName(std::string_view list, uint64_t version) {
  return std::string(kListsDirName) + "/" + std::string(list) + "/" + std::to_string(version) + ".ugs";
}

Status ValidateStoreState(const StoreState& state) {
  if (state.lists.size() > kMaxStoreLists) {
    return Status::InvalidArgument("more than " + std::to_string(kMaxStoreLists) + " lists");
  }
  for (size_t i = 0; i < state.lists.size(); ++i) {
    const ListState& s = state.lists[i];
    const std::string where = "list " + std::to_string(i) + " '" + s.list + "': ";
    if (!IsValidListName(s.list)) {
      return Status::InvalidArgument(where + "name must be 1-64 bytes of [a-z0-9_-]");
    }
    if (i > 0 && !(state.lists[i - 1].list < s.list)) {
      return Status::InvalidArgument(where + "lists must be sorted by name and unique");
    }
    if (s.high_water_version == 0) return Status::InvalidArgument(where + "high-water version 0");
    if (!s.installed.has_value()) continue;
    const InstalledList& in = *s.installed;
    if (in.list != s.list) return Status::InvalidArgument(where + "installed record names another list");
    if (in.version == 0 || in.version > s.high_water_version) {
      return Status::InvalidArgument(where + "installed version not in 1..high-water version");
    }
    if (in.version == s.high_water_version && in.manifest_sha256 != s.high_water_manifest_sha256) {
      return Status::InvalidArgument(where + "installed high-water version with other manifest bytes");
    }
    if (in.file != InstalledFileName(in.list, in.version)) {
      return Status::InvalidArgument(where + "file must be " + InstalledFileName(in.list, in.version));
    }
  }
  return Status::Ok();
}

// Layout (docs/data-dir.md): header (32 bytes) | records (256 bytes each, sorted by name) | SHA-256 (32).
std::string SerializeStoreState(const StoreState& state) {
  Status valid = ValidateStoreState(state);
  if (!valid.ok()) {
    std::fprintf(stderr, "urlguard: SerializeStoreState on an invalid state: %s\n", valid.ToString().c_str());
    std::abort();
  }
  const size_t size = kCurrentHeaderBytes + state.lists.size() * kCurrentRecordBytes + kCurrentTrailerBytes;
  std::string out(size, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  std::memcpy(p, kCurrentMagic, sizeof kCurrentMagic);
  StoreLE32(p + 8, kCurrentFormatVersion);
  StoreLE32(p + 12, static_cast<uint32_t>(state.lists.size()));
  StoreLE64(p + 16, state.generation);
  StoreLE64(p + 24, size);
  for (size_t i = 0; i < state.lists.size(); ++i) {
    const ListState& s = state.lists[i];
    uint8_t* r = p + kCurrentHeaderBytes + i * kCurrentRecordBytes;
    r[kRecNameLen] = static_cast<uint8_t>(s.list.size());
    std::memcpy(r + kRecName, s.list.data(), s.list.size());
    StoreLE64(r + kRecHighWater, s.high_water_version);
    std::memcpy(r + kRecHighWaterSha, s.high_water_manifest_sha256.data(), 32);
    if (s.installed.has_value()) {
      const InstalledList& in = *s.installed;
      r[kRecFlags] = kFlagInstalled | (in.emergency ? kFlagEmergency : 0);
      StoreLE32(r + kRecMinWait, in.min_wait_seconds);
      StoreLE64(r + kRecVersion, in.version);
      StoreLE64(r + kRecCreated, static_cast<uint64_t>(in.created_unix));
      StoreLE64(r + kRecExpires, static_cast<uint64_t>(in.expires_unix));
      for (int k = 0; k < kLayerKindCount; ++k) StoreLE64(r + kRecEntries + 8 * k, in.entries[k]);
      std::memcpy(r + kRecStateSha, in.state_sha256.data(), 32);
      std::memcpy(r + kRecManifestSha, in.manifest_sha256.data(), 32);
    }
  }
  Sha256Digest sum = Sha256(p, size - kCurrentTrailerBytes);
  std::memcpy(p + size - kCurrentTrailerBytes, sum.data(), sum.size());
  return out;
}

Result<StoreState> ParseStoreState(std::string_view bytes) {
  if (bytes.size() > kMaxCurrentBytes) {
    return Status::ResourceExhausted("current: " + std::to_string(bytes.size()) +
                                     " bytes is over the cap of " + std::to_string(kMaxCurrentBytes));
  }
  if (bytes.size() < kCurrentHeaderBytes + kCurrentTrailerBytes) {
    return Status::Corruption("current: truncated");
  }
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (std::memcmp(p, kCurrentMagic, sizeof kCurrentMagic) != 0) {
    return Status::Corruption("current: not a urlguard state file (bad magic)");
  }
  const uint32_t format = LoadLE32(p + 8);
  if (format != kCurrentFormatVersion) {
    return Status::Corruption("current: unsupported format version " + std::to_string(format));
  }
  const uint32_t count = LoadLE32(p + 12);
  if (count > kMaxStoreLists) {
    return Status::Corruption("current: list count " + std::to_string(count) + " over the cap");
  }
  const uint64_t file_size = LoadLE64(p + 24);
  const uint64_t expected =
      kCurrentHeaderBytes + uint64_t{count} * kCurrentRecordBytes + kCurrentTrailerBytes;
  if (file_size != bytes.size() || expected != bytes.size()) {
    return Status::Corruption("current: size " + std::to_string(bytes.size()) + " does not match its header");
  }
  if (Sha256(p, bytes.size() - kCurrentTrailerBytes) != DigestAt(p + bytes.size() - kCurrentTrailerBytes)) {
    return Status::Corruption("current: checksum mismatch");
  }
  StoreState state;
  state.generation = LoadLE64(p + 16);
  state.lists.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* r = p + kCurrentHeaderBytes + i * kCurrentRecordBytes;
    const size_t name_len = r[kRecNameLen];
    if (name_len == 0 || name_len > kMaxListNameBytes) return CorruptRecord(i, "bad name length");
    ListState s;
    s.list.assign(reinterpret_cast<const char*>(r + kRecName), name_len);
    if (!IsValidListName(s.list)) return CorruptRecord(i, "bad list name");
    if (!AllZero(r + kRecName + name_len, kMaxListNameBytes - name_len)) {
      return CorruptRecord(i, "name padding");
    }
    if (i > 0 && !(state.lists.back().list < s.list)) {
      return CorruptRecord(i, "lists not sorted or not unique");
    }
    const uint8_t flags = r[kRecFlags];
    if ((flags & ~(kFlagInstalled | kFlagEmergency)) != 0) return CorruptRecord(i, "unknown flags");
    if (!AllZero(r + kRecReserved0, 2) || !AllZero(r + kRecReserved1, 32)) {
      return CorruptRecord(i, "reserved bytes");
    }
    s.high_water_version = LoadLE64(r + kRecHighWater);
    if (s.high_water_version == 0) return CorruptRecord(i, "high-water version 0");
    s.high_water_manifest_sha256 = DigestAt(r + kRecHighWaterSha);
    if ((flags & kFlagInstalled) == 0) {
      // A dropped list: every installed-version field is zero.
      if (flags != 0 || !AllZero(r + kRecMinWait, 4) ||
          !AllZero(r + kRecVersion, kRecReserved1 - kRecVersion)) {
        return CorruptRecord(i, "fields set on a list without an installed version");
      }
      state.lists.push_back(std::move(s));
      continue;
    }
    InstalledList in;
    in.list = s.list;
    in.emergency = (flags & kFlagEmergency) != 0;
    in.min_wait_seconds = LoadLE32(r + kRecMinWait);
    in.version = LoadLE64(r + kRecVersion);
    if (in.version == 0 || in.version > s.high_water_version) {
      return CorruptRecord(i, "installed version not in 1..high-water version");
    }
    in.file = InstalledFileName(in.list, in.version);
    in.created_unix = static_cast<int64_t>(LoadLE64(r + kRecCreated));
    in.expires_unix = static_cast<int64_t>(LoadLE64(r + kRecExpires));
    for (int k = 0; k < kLayerKindCount; ++k) in.entries[k] = LoadLE64(r + kRecEntries + 8 * k);
    in.state_sha256 = DigestAt(r + kRecStateSha);
    in.manifest_sha256 = DigestAt(r + kRecManifestSha);
    if (in.version == s.high_water_version && in.manifest_sha256 != s.high_water_manifest_sha256) {
      return CorruptRecord(i, "installed high-water version with other manifest bytes");
    }
    s.installed = std::move(in);
    state.lists.push_back(std::move(s));
  }
  return state;
}

}  // namespace urlguard
