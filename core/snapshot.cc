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
Result<SnapshotHead> BuildSnapshotHead(const SnapshotHeaderFields& header,
                                       const std::vector<SnapshotTableEntry>& layers) {
  if (!IsValidListName(header.list_name)) {
    return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: '" +
                                   std::string(header.list_name) + "'");
  }
  if (layers.empty() || layers.size() > kMaxSnapshotLayers) {
    return Status::InvalidArgument("a snapshot holds 1 to 3 layers");
  }
  uint64_t total_entries = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const SnapshotTableEntry& l = layers[i];
    if (i > 0 && l.kind <= layers[i - 1].kind) return Status::InvalidArgument("duplicate layer");
    if (l.kind != LayerKind::kIp && !l.ip_prefixes.Empty()) {
      return Status::InvalidArgument("IP prefix lengths on a non-ip layer");
    }
    if (!l.ip_prefixes.Valid()) return Status::InvalidArgument("invalid IP prefix lengths");
    total_entries += l.entries;
  }

  SnapshotHead head;
  const size_t name_padded = (header.list_name.size() + 7) / 8 * 8;
  const size_t table_offset = kSnapshotHeaderBytes + name_padded;
  uint64_t offset = table_offset + layers.size() * kSnapshotLayerEntryBytes;
  for (const SnapshotTableEntry& l : layers) {
    offset = (offset + 63) / 64 * 64;
    head.body_offsets.push_back(offset);
    if (l.body_bytes > kMaxSnapshotBytes) return Status::ResourceExhausted("snapshot over 4 GiB");
    offset += l.body_bytes;
  }
  head.file_size = offset + 32;
  if (head.file_size > kMaxSnapshotBytes) return Status::ResourceExhausted("snapshot over 4 GiB");

  std::string& out = head.bytes;
  out.reserve(table_offset + layers.size() * kSnapshotLayerEntryBytes);
  out.append(kSnapshotMagic, 8);
  AppendLE32(&out, kSnapshotFormatVersion);
  AppendLE32(&out, static_cast<uint32_t>(table_offset));
  AppendLE64(&out, header.version);
  AppendLE64(&out, static_cast<uint64_t>(header.created_unix));
  AppendLE64(&out, head.file_size);
  AppendLE32(&out, static_cast<uint32_t>(layers.size()));
  AppendLE32(&out, static_cast<uint32_t>(header.list_name.size()));
  AppendLE64(&out, 0);  // flags, reserved
  AppendLE64(&out, total_entries);
  out.append(header.list_name);
  PadTo(&out, 8);
  for (size_t i = 0; i < layers.size(); ++i) {
    const SnapshotTableEntry& l = layers[i];
    out.push_back(static_cast<char>(l.kind));
    out.push_back(static_cast<char>(l.filter));
    AppendLE16(&out, 0);
    AppendLE32(&out, 0);
    AppendLE64(&out, head.body_offsets[i]);
    AppendLE64(&out, l.body_bytes);
    AppendLE64(&out, l.entries);
    out.append(reinterpret_cast<const char*>(l.ip_prefixes.bits.data()), 32);
  }
  return head;
}

Result<std::string> BuildSnapshot(const SnapshotContent& content) {
  if (content.layers.empty() || content.layers.size() > kMaxSnapshotLayers) {
    return Status::InvalidArgument("a snapshot holds 1 to 3 layers");
  }
  std::vector<const LayerContent*> layers;
  for (const LayerContent& l : content.layers) layers.push_back(&l);
  std::sort(layers.begin(), layers.end(),
            [](const LayerContent* a, const LayerContent* b) { return a->kind < b->kind; });

  std::vector<std::string> bodies;
  std::vector<SnapshotTableEntry> table;
  for (const LayerContent* l : layers) {
    if (l->filter == FilterKind::kFingerprintArray) {
      const auto& f = l->fingerprints;
      if (f.size() > kMaxLayerEntries) return Status::InvalidArgument("too many entries in one layer");
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] >= l->universe || (i > 0 && f[i] <= f[i - 1])) {
          return Status::InvalidArgument("fingerprints must be sorted, unique and below the universe");
        }
      }
      if (l->universe == 0) return Status::InvalidArgument("zero universe");
      bodies.push_back(BuildFingerprintSet(f, l->universe));
    } else {
      auto check = BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(l->bloom_body.data()),
                                          l->bloom_body.size());
      if (!check.ok()) return check.status().WithContext("bloom layer");
      bodies.push_back(l->bloom_body);
    }
    SnapshotTableEntry e;
    e.kind = l->kind;
    e.filter = l->filter;
    e.body_bytes = bodies.back().size();
    e.entries = l->filter == FilterKind::kFingerprintArray ? l->fingerprints.size() : l->entries;
    e.ip_prefixes = l->ip_prefixes;
    table.push_back(e);
  }
  URLGUARD_ASSIGN_OR_RETURN(
      SnapshotHead head,
      BuildSnapshotHead({content.list_name, content.version, content.created_unix}, table));

  std::string out = std::move(head.bytes);
  out.reserve(head.file_size);
  for (size_t i = 0; i < bodies.size(); ++i) {
    out.resize(head.body_offsets[i], '\0');
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
  uint32_t format = LoadLE32(data + 8);
  if (format != kSnapshotFormatVersion) {
    return Status::Corruption("snapshot: format version " + std::to_string(format) + " (this build reads " +
                              std::to_string(kSnapshotFormatVersion) + ")");
  }
  SnapshotView v;
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
