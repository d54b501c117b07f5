// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/full_hash_delta.h"

#include <algorithm>
#include <cstring>

#include "core/list_name.h"
#include "core/sha256.h"
#include "format/full_hash_file.h"
#include "publish/state_delta.h"

namespace urlguard {
namespace {

void PutU16(std::string* s, uint16_t v) { s->append(reinterpret_cast<const char*>(&v), 2); }
void PutU32(std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), 4); }
void PutU64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

std::string FullHashDeltaFileName(uint64_t version) { return std::to_string(version) + ".ughd"; }

std::optional<uint64_t> ParseFullHashDeltaFileName(std::string_view name) {
  constexpr std::string_view kSuffix = ".ughd";
  if (name.size() <= kSuffix.size() || name.size() > kSuffix.size() + 19) return std::nullopt;
  if (name.substr(name.size() - kSuffix.size()) != kSuffix) return std::nullopt;
  uint64_t v = 0;
  for (char c : name.substr(0, name.size() - kSuffix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

Status WriteFullHashDelta(Env* env, const std::string& path, const std::string& list, uint64_t version,
                          uint64_t base_version, const std::vector<std::string>& threats,
                          const std::vector<KeyRecord>& changes) {
  if (!IsValidListName(list)) return Status::InvalidArgument("bad list name: " + list);
  if (threats.size() > kMaxFullHashThreats) return Status::InvalidArgument("too many threat names for a .ughd");
  if (changes.size() > kMaxFullHashRecords) return Status::InvalidArgument("too many changes for a .ughd");
  std::vector<KeyRecord> records = changes;
  std::sort(records.begin(), records.end(), BySha());
  const uint32_t bits = FullHashBucketBitsFor(records.size());
  std::string table;
  for (const std::string& t : threats) {
    table.push_back(static_cast<char>(t.size()));
    table += t;
  }
  table.resize((table.size() + 7) / 8 * 8, '\0');
  // Header (128 bytes): magic, format, bucket bits, version, threat count, reserved, table bytes, base version
  // (bytes 32..39), reserved to 64, list name zero-padded to 128.
  std::string out(kFullHashDeltaMagic, 8);
  PutU32(&out, kFullHashFormatVersion);
  PutU32(&out, bits);
  PutU64(&out, version);
  PutU16(&out, static_cast<uint16_t>(threats.size()));
  PutU16(&out, 0);
  PutU32(&out, static_cast<uint32_t>(table.size()));
  PutU64(&out, base_version);
  out.resize(64, '\0');
  out += list;
  out.resize(kFullHashHeaderBytes, '\0');
  out += table;
  const uint64_t records_offset = out.size();
  std::vector<uint32_t> index((size_t{1} << bits) + 1, 0);
  for (size_t i = 0; i < records.size(); ++i) {
    const KeyRecord& r = records[i];
    out.append(reinterpret_cast<const char*>(r.sha256), 32);
    out.push_back(static_cast<char>(r.layer));
    const bool put = r.reserved == static_cast<uint8_t>(DeltaOp::kPut);
    out.push_back(static_cast<char>(put ? FullHashDeltaOp::kPut : FullHashDeltaOp::kDelete));
    PutU16(&out, put ? r.threat : 0);
    // Bucket of this record: the first bits of its big-endian 4-byte prefix.
    const uint32_t prefix = static_cast<uint32_t>(ShaOrderPrefix(r.sha256) >> 32);
    ++index[(prefix >> (32 - bits)) + 1];
  }
  for (size_t b = 1; b < index.size(); ++b) index[b] += index[b - 1];  // counts -> first positions
  const uint64_t index_offset = out.size();
  for (uint32_t v : index) PutU32(&out, v);
  const uint64_t file_size = out.size() + kFullHashFooterBytes + kFullHashChecksumBytes;
  PutU64(&out, records.size());
  PutU64(&out, records_offset);
  PutU64(&out, index_offset);
  PutU64(&out, file_size);
  Sha256Digest d = Sha256(out);
  out.append(reinterpret_cast<const char*>(d.data()), d.size());
  return WriteFileAtomic(env, path, out, /*private_file=*/true);
}

}  // namespace urlguard
