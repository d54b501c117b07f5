// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/snapshot.h"

#include <algorithm>
#include <cstring>

#include "core/byte_io.h"

namespace urlguard {

const char* FilterKindName(FilterKind kind) {
  switch (kind) {
    case FilterKind::kFingerprintArray: return "fingerprint-array";
    case FilterKind::kBlockedBloom: return "blocked-bloom";
  }
  return "unknown";
}

bool IpPrefixLengths::Empty() const {
  return std::all_of(bits.begin(), bits.end(), [](uint8_t b) { return b == 0; });
}

bool IpPrefixLengths::Valid() const {
  for (int i = 33; i < 64; ++i) {
    if (Get(i)) return false;
  }
  for (int i = 64 + 129; i < 256; ++i) {
    if (Get(i)) return false;
  }
  return true;
}

// Layout (docs/snapshot-format.md):
//   header (64 bytes) | list name, zero-padded to 8 | layer table (64 bytes per layer)
//   | layer bodies, each at a 64-byte aligned offset | SHA-256 of all preceding bytes (32 bytes)
Status SerializeSnapshotHead(const SnapshotHead& head, std::string* out, SnapshotLayout* layout) {
  if (!IsValidListName(head.list_name)) {
    return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: '" + std::string(head.list_name) +
                                   "'");
  }
  if (head.layers.empty() || head.layers.size() > kMaxSnapshotLayers) {
    return Status::InvalidArgument("a snapshot holds 1 to 3 layers");
  }
  if (head.key_hash != KeyHashKind::kSha256Prefix && head.key_hash != KeyHashKind::kXxh3) {
    return Status::InvalidArgument("unknown key hash kind");
  }
  uint64_t total_entries = 0;
  for (size_t i = 0; i < head.layers.size(); ++i) {
    const SnapshotLayerHead& l = head.layers[i];
    if (i > 0 && l.kind <= head.layers[i - 1].kind) return Status::InvalidArgument("duplicate or unsorted layer");
    if (l.kind != LayerKind::kIp && !l.ip_prefixes.Empty()) {
      return Status::InvalidArgument("IP prefix lengths on a non-ip layer");
    }
    if (!l.ip_prefixes.Valid()) return Status::InvalidArgument("invalid IP prefix lengths");
    total_entries += l.entries;
  }

  const size_t name_padded = (head.list_name.size() + 7) / 8 * 8;
  const size_t table_offset = kSnapshotHeaderBytes + name_padded;
  uint64_t offset = table_offset + head.layers.size() * kSnapshotLayerEntryBytes;
  layout->body_offsets.clear();
  for (const SnapshotLayerHead& l : head.layers) {
    offset = (offset + 63) / 64 * 64;
    layout->body_offsets.push_back(offset);
    if (l.body_length > kMaxSnapshotBytes) return Status::ResourceExhausted("snapshot over 4 GiB");
    offset += l.body_length;
  }
  layout->file_size = offset + 32;
  if (layout->file_size > kMaxSnapshotBytes) return Status::ResourceExhausted("snapshot over 4 GiB");

  // Version 1 has no key hash field (offset 48 is a zero "flags" word); version 2 names the kind there.
  const bool v1 = head.key_hash == KeyHashKind::kSha256Prefix;
  out->append(kSnapshotMagic, 8);
  AppendLE32(out, v1 ? kSnapshotFormatVersionSha256Keys : kSnapshotFormatVersion);
  AppendLE32(out, static_cast<uint32_t>(table_offset));
  AppendLE64(out, head.version);
  AppendLE64(out, static_cast<uint64_t>(head.created_unix));
  AppendLE64(out, layout->file_size);
  AppendLE32(out, static_cast<uint32_t>(head.layers.size()));
  AppendLE32(out, static_cast<uint32_t>(head.list_name.size()));
  AppendLE64(out, v1 ? 0 : static_cast<uint64_t>(head.key_hash));
  AppendLE64(out, total_entries);
  out->append(head.list_name);
  PadTo(out, 8);
  for (const SnapshotLayerHead& l : head.layers) {
    out->push_back(static_cast<char>(l.kind));
    out->push_back(static_cast<char>(l.filter));
    AppendLE16(out, 0);
    AppendLE32(out, 0);
    AppendLE64(out, layout->body_offsets[&l - head.layers.data()]);
    AppendLE64(out, l.body_length);
    AppendLE64(out, l.entries);
    out->append(reinterpret_cast<const char*>(l.ip_prefixes.bits.data()), 32);
  }
  return Status::Ok();
}

Result<std::string> BuildSnapshot(const SnapshotContent& content) {
  if (content.layers.empty() || content.layers.size() > kMaxSnapshotLayers) {
    return Status::InvalidArgument("a snapshot holds 1 to 3 layers");
  }
  std::vector<const LayerContent*> layers;
  for (const LayerContent& l : content.layers) layers.push_back(&l);
  std::sort(layers.begin(), layers.end(),
            [](const LayerContent* a, const LayerContent* b) { return a->kind < b->kind; });

  SnapshotHead head;
  head.list_name = content.list_name;
  head.version = content.version;
  head.created_unix = content.created_unix;
  head.key_hash = content.key_hash;
  std::vector<std::string> bodies;
  for (const LayerContent* l : layers) {
    SnapshotLayerHead h;
    h.kind = l->kind;
    h.filter = l->filter;
    h.ip_prefixes = l->ip_prefixes;
    if (l->filter == FilterKind::kFingerprintArray) {
      const auto& f = l->fingerprints;
      if (f.size() > kMaxLayerEntries) return Status::InvalidArgument("too many entries in one layer");
      if (l->universe == 0) return Status::InvalidArgument("zero universe");
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] >= l->universe || (i > 0 && f[i] <= f[i - 1])) {
          return Status::InvalidArgument("fingerprints must be sorted, unique and below the universe");
        }
      }
      bodies.push_back(BuildFingerprintSet(f, l->universe));
      h.entries = f.size();
    } else {
      auto check = BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(l->bloom_body.data()),
                                          l->bloom_body.size());
      if (!check.ok()) return check.status().WithContext("bloom layer");
      bodies.push_back(l->bloom_body);
      h.entries = l->entries;
    }
    h.body_length = bodies.back().size();
    head.layers.push_back(h);
  }

  std::string out;
  SnapshotLayout layout;
  URLGUARD_RETURN_IF_ERROR(SerializeSnapshotHead(head, &out, &layout));
  out.reserve(layout.file_size);
  for (size_t i = 0; i < bodies.size(); ++i) {
    out.resize(layout.body_offsets[i], '\0');
    out.append(bodies[i]);
  }
  Sha256Digest digest = Sha256(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

Result<SnapshotView> SnapshotView::Open(const uint8_t* data, size_t size, bool verify_checksum) {
  if (size < kSnapshotHeaderBytes + 32) return Status::Corruption("snapshot: file too short (" +
                                                                  std::to_string(size) + " bytes)");
  if (std::memcmp(data, kSnapshotMagic, 8) != 0) return Status::Corruption("snapshot: not a urlguard snapshot (bad magic)");
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0) return Status::InvalidArgument("snapshot: buffer not 8-byte aligned");
  const uint32_t format = LoadLE32(data + 8);
  if (format != kSnapshotFormatVersion && format != kSnapshotFormatVersionSha256Keys) {
    return Status::Corruption("snapshot: format version " + std::to_string(format) + " (this build reads " +
                              std::to_string(kSnapshotFormatVersionSha256Keys) + " and " +
                              std::to_string(kSnapshotFormatVersion) + ")");
  }
  // Version 1: the word at 48 is reserved (0) and keys are SHA-256 prefixes. Version 2: it names the key hash,
  // and only kinds this build knows are taken (a lookup with the wrong hash would miss every entry).
  const uint64_t key_word = LoadLE64(data + 48);
  KeyHashKind key_hash;
  if (format == kSnapshotFormatVersionSha256Keys) {
    if (key_word != 0) return Status::Corruption("snapshot: version 1 with nonzero reserved flags");
    key_hash = KeyHashKind::kSha256Prefix;
  } else {
    if (key_word != static_cast<uint64_t>(KeyHashKind::kXxh3)) {
      return Status::Corruption("snapshot: unknown key hash kind " + std::to_string(key_word));
    }
    key_hash = KeyHashKind::kXxh3;
  }
  SnapshotView v;
  v.key_hash_ = key_hash;
  v.data_ = data;
  v.size_ = size;
  const uint32_t table_offset = LoadLE32(data + 12);
  v.version_ = LoadLE64(data + 16);
  v.created_ = static_cast<int64_t>(LoadLE64(data + 24));
  const uint64_t file_size = LoadLE64(data + 32);
  const uint32_t layer_count = LoadLE32(data + 40);
  const uint32_t name_len = LoadLE32(data + 44);
  v.total_entries_ = LoadLE64(data + 56);
  if (file_size != size) {
    return Status::Corruption("snapshot: file is " + std::to_string(size) + " bytes but its header says " +
                              std::to_string(file_size) + (size < file_size ? " (truncated)" : ""));
  }
  if (name_len == 0 || name_len > kMaxListNameBytes) return Status::Corruption("snapshot: bad list name length");
  if (table_offset != kSnapshotHeaderBytes + (name_len + 7) / 8 * 8) {
    return Status::Corruption("snapshot: bad layer table offset");
  }
  if (layer_count == 0 || layer_count > kMaxSnapshotLayers) return Status::Corruption("snapshot: bad layer count");
  const uint64_t table_end = uint64_t{table_offset} + uint64_t{layer_count} * kSnapshotLayerEntryBytes;
  if (table_end > size - 32) return Status::Corruption("snapshot: layer table past the end");
  v.list_name_ = std::string_view(reinterpret_cast<const char*>(data + kSnapshotHeaderBytes), name_len);
  if (!IsValidListName(v.list_name_)) return Status::Corruption("snapshot: invalid list name");

  uint64_t sum = 0;
  uint64_t prev_end = table_end;
  for (uint32_t i = 0; i < layer_count; ++i) {
    const uint8_t* e = data + table_offset + i * kSnapshotLayerEntryBytes;
    uint8_t kind = e[0];
    uint8_t filter = e[1];
    uint64_t off = LoadLE64(e + 8);
    uint64_t len = LoadLE64(e + 16);
    uint64_t entries = LoadLE64(e + 24);
    if (kind >= kMaxSnapshotLayers) return Status::Corruption("snapshot: unknown layer kind " + std::to_string(kind));
    if (v.has_layer_[kind]) return Status::Corruption("snapshot: duplicate layer");
    if (off % 64 != 0 || off < prev_end || len > size - 32 || off > size - 32 - len) {
      return Status::Corruption("snapshot: layer body out of bounds");
    }
    prev_end = off + len;
    LayerView& l = v.layers_[kind];
    l.kind = static_cast<LayerKind>(kind);
    l.entries = entries;
    l.body_bytes = len;
    std::memcpy(l.ip_prefixes.bits.data(), e + 32, 32);
    if (!l.ip_prefixes.Valid() || (l.kind != LayerKind::kIp && !l.ip_prefixes.Empty())) {
      return Status::Corruption("snapshot: bad IP prefix lengths");
    }
    std::string ctx = std::string("snapshot: ") + LayerKindName(l.kind) + " layer";
    if (filter == static_cast<uint8_t>(FilterKind::kFingerprintArray)) {
      l.filter = FilterKind::kFingerprintArray;
      auto fs = FingerprintSetView::Open(data + off, len);
      if (!fs.ok()) return fs.status().WithContext(ctx);
      l.fingerprints = *fs;
      if (fs->size() != entries) return Status::Corruption(ctx + ": entry count mismatch");
    } else if (filter == static_cast<uint8_t>(FilterKind::kBlockedBloom)) {
      l.filter = FilterKind::kBlockedBloom;
      auto bf = BlockedBloomView::Open(data + off, len);
      if (!bf.ok()) return bf.status().WithContext(ctx);
      l.bloom = *bf;
    } else {
      return Status::Corruption(ctx + ": unknown filter kind " + std::to_string(filter));
    }
    v.has_layer_[kind] = true;
    sum += entries;
  }
  if (prev_end > size - 32) return Status::Corruption("snapshot: bodies overlap the checksum");
  if (sum != v.total_entries_) return Status::Corruption("snapshot: total entry count mismatch");
  if (verify_checksum) URLGUARD_RETURN_IF_ERROR(v.VerifyChecksum());
  return v;
}

Sha256Digest SnapshotView::checksum() const {
  Sha256Digest d;
  std::memcpy(d.data(), data_ + size_ - 32, 32);
  return d;
}

Status SnapshotView::VerifyChecksum() const {
  Sha256Digest actual = Sha256(data_, size_ - 32);
  if (actual != checksum()) return Status::Corruption("snapshot: content checksum mismatch (corrupt file)");
  return Status::Ok();
}

}  // namespace urlguard
