// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/full_hash_file.h"

#include <bit>
#include <cstring>
#include <set>

#include "core/byte_io.h"
#include "core/list_name.h"
#include "platform/env.h"

namespace urlguard {

namespace {

// Header field offsets (docs/full-hash-format.md).
constexpr size_t kOffFormatVersion = 8;
constexpr size_t kOffBucketBits = 12;
constexpr size_t kOffVersion = 16;
constexpr size_t kOffThreatCount = 24;
constexpr size_t kOffThreatTableBytes = 28;
constexpr size_t kOffBaseVersion = 32;  // delta files only; reserved (0) in a base file
constexpr size_t kOffListName = 64;

uint32_t BucketOf(uint32_t prefix, uint32_t bucket_bits) { return prefix >> (32 - bucket_bits); }

uint32_t PrefixOf(const uint8_t* sha) {
  return (uint32_t{sha[0]} << 24) | (uint32_t{sha[1]} << 16) | (uint32_t{sha[2]} << 8) | uint32_t{sha[3]};
}

Status Corrupt(const std::string& what) { return Status::Corruption("full-hash file: " + what); }

}  // namespace

uint32_t FullHashBucketBitsFor(uint64_t expected_records) {
  const int width = std::bit_width(expected_records);  // 2^(width-1) <= n < 2^width
  const int bits = width - 1;                          // 1-2 records per bucket
  if (bits < static_cast<int>(kMinFullHashBucketBits)) return kMinFullHashBucketBits;
  if (bits > static_cast<int>(kMaxFullHashBucketBits)) return kMaxFullHashBucketBits;
  return static_cast<uint32_t>(bits);
}

// ---- writer ---------------------------------------------------------------------------------------------

Result<FullHashFileWriter> FullHashFileWriter::Create(Env* env, const std::string& path,
                                                      std::string_view list, uint64_t version,
                                                      const std::vector<std::string>& threat_names,
                                                      uint64_t expected_records) {
  return Start(env, path, list, version, /*delta=*/false, 0, threat_names, expected_records);
}

Result<FullHashFileWriter> FullHashFileWriter::CreateDelta(Env* env, const std::string& path,
                                                           std::string_view list, uint64_t version,
                                                           uint64_t base_version,
                                                           const std::vector<std::string>& threat_names,
                                                           uint64_t expected_records) {
  if (base_version >= version) {
    return Status::InvalidArgument("full-hash delta file: base version must be below the version");
  }
  return Start(env, path, list, version, /*delta=*/true, base_version, threat_names, expected_records);
}

Result<FullHashFileWriter> FullHashFileWriter::Start(Env* env, const std::string& path, std::string_view list,
                                                     uint64_t version, bool delta, uint64_t base_version,
                                                     const std::vector<std::string>& threat_names,
                                                     uint64_t expected_records) {
  if (!IsValidListName(list)) return Status::InvalidArgument("full-hash file: invalid list name");
  if (threat_names.size() > kMaxFullHashThreats) {
    return Status::InvalidArgument("full-hash file: more than " + std::to_string(kMaxFullHashThreats) +
                                   " threat names");
  }
  std::set<std::string_view> seen;
  for (const std::string& t : threat_names) {
    if (!IsValidThreatName(t)) return Status::InvalidArgument("full-hash file: invalid threat name");
    if (!seen.insert(t).second) return Status::InvalidArgument("full-hash file: duplicate threat name " + t);
  }

  FullHashFileWriter w;
  w.env_ = env;
  w.path_ = path;
  w.tmp_path_ = path + ".tmp";
  w.delta_ = delta;
  w.bucket_bits_ = FullHashBucketBitsFor(expected_records);
  w.threat_count_ = static_cast<uint16_t>(threat_names.size());
  w.index_.assign((size_t{1} << w.bucket_bits_) + 1, 0);
  w.hasher_ = std::make_unique<Sha256Hasher>();
  w.buffer_.reserve(kFullHashWriteBufferBytes);
  auto file = CreateTempFile(env, w.tmp_path_);
  if (!file.ok()) return file.status();
  w.file_ = std::move(file).value();

  std::string table;
  for (const std::string& t : threat_names) {
    table.push_back(static_cast<char>(t.size()));
    table += t;
  }
  PadTo(&table, 8);
  std::string header(kFullHashHeaderBytes, '\0');
  std::memcpy(header.data(), delta ? kFullHashDeltaMagic : kFullHashMagic, sizeof(kFullHashMagic));
  auto* h = reinterpret_cast<uint8_t*>(header.data());
  StoreLE32(h + kOffFormatVersion, kFullHashFormatVersion);
  if (delta) StoreLE64(h + kOffBaseVersion, base_version);
  StoreLE32(h + kOffBucketBits, w.bucket_bits_);
  StoreLE64(h + kOffVersion, version);
  h[kOffThreatCount] = static_cast<uint8_t>(w.threat_count_ & 0xff);
  h[kOffThreatCount + 1] = static_cast<uint8_t>(w.threat_count_ >> 8);
  StoreLE32(h + kOffThreatTableBytes, static_cast<uint32_t>(table.size()));
  std::memcpy(h + kOffListName, list.data(), list.size());
  URLGUARD_RETURN_IF_ERROR(w.Write(header.data(), header.size()));
  URLGUARD_RETURN_IF_ERROR(w.Write(table.data(), table.size()));
  w.records_offset_ = w.written_;
  return w;
}

FullHashFileWriter::FullHashFileWriter(FullHashFileWriter&& o) noexcept
    : env_(o.env_),
      path_(std::move(o.path_)),
      tmp_path_(std::move(o.tmp_path_)),
      file_(std::move(o.file_)),
      hasher_(std::move(o.hasher_)),
      buffer_(std::move(o.buffer_)),
      index_(std::move(o.index_)),
      bucket_bits_(o.bucket_bits_),
      threat_count_(o.threat_count_),
      count_(o.count_),
      written_(o.written_),
      records_offset_(o.records_offset_),
      failed_(o.failed_),
      finished_(o.finished_),
      delta_(o.delta_) {
  std::memcpy(last_, o.last_, sizeof(last_));
  o.finished_ = true;  // the moved-from object owns no temporary file
}

FullHashFileWriter::~FullHashFileWriter() {
  if (finished_) return;
  if (file_) (void)file_->Close();
  if (env_ != nullptr) (void)env_->RemoveFile(tmp_path_);
}

Status FullHashFileWriter::Write(const void* data, size_t size) {
  hasher_->Update(data, size);
  written_ += size;
  buffer_.append(static_cast<const char*>(data), size);
  if (buffer_.size() >= kFullHashWriteBufferBytes) return Flush();
  return Status::Ok();
}

Status FullHashFileWriter::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status s = file_->Append(buffer_);
  buffer_.clear();
  if (!s.ok()) failed_ = true;
  return s;
}

Status FullHashFileWriter::Add(const Sha256Digest& sha256, LayerKind layer, uint16_t threat_id) {
  return AddDelta(sha256, layer, threat_id, /*deleted=*/false);
}

Status FullHashFileWriter::AddDelta(const Sha256Digest& sha256, LayerKind layer, uint16_t threat_id,
                                    bool deleted) {
  if (failed_ || finished_) return Status::FailedPrecondition("full-hash file writer is unusable");
  const auto layer_byte = static_cast<uint8_t>(layer);
  if (!IsValidLayerKind(layer_byte)) {
    failed_ = true;
    return Status::InvalidArgument("full-hash file: invalid layer");
  }
  if (deleted && !delta_) {
    failed_ = true;
    return Status::InvalidArgument("full-hash file: a delete record in a base file");
  }
  if (deleted) threat_id = 0;  // meaningless for a delete; the format pins it to 0
  if (!deleted && threat_id >= threat_count_) {
    failed_ = true;
    return Status::InvalidArgument("full-hash file: threat id out of range");
  }
  uint8_t key[33];
  std::memcpy(key, sha256.data(), 32);
  key[32] = layer_byte;
  if (count_ > 0 && std::memcmp(key, last_, sizeof(key)) <= 0) {
    failed_ = true;
    return Status::InvalidArgument("full-hash file: records out of order or duplicated");
  }
  if (count_ >= kMaxFullHashRecords) {
    failed_ = true;
    return Status::InvalidArgument("full-hash file: too many records");
  }
  std::memcpy(last_, key, sizeof(key));
  uint8_t rec[kFullHashRecordBytes];
  std::memcpy(rec, sha256.data(), 32);
  rec[32] = layer_byte;
  rec[33] = deleted ? kFullHashOpDelete : kFullHashOpPut;
  rec[34] = static_cast<uint8_t>(threat_id & 0xff);
  rec[35] = static_cast<uint8_t>(threat_id >> 8);
  // index_[b + 1] counts records in buckets <= b; turned into a prefix sum at Finish().
  ++index_[BucketOf(PrefixOf(sha256.data()), bucket_bits_) + 1];
  ++count_;
  return Write(rec, sizeof(rec));
}

Status FullHashFileWriter::Finish() {
  if (failed_ || finished_) return Status::FailedPrecondition("full-hash file writer is unusable");
  failed_ = true;  // until everything below succeeded
  for (size_t b = 1; b < index_.size(); ++b) index_[b] += index_[b - 1];
  const uint64_t index_offset = written_;
  std::string chunk;
  chunk.reserve(4096);
  for (uint32_t v : index_) {
    AppendLE32(&chunk, v);
    if (chunk.size() >= 4096) {
      URLGUARD_RETURN_IF_ERROR(Write(chunk.data(), chunk.size()));
      chunk.clear();
    }
  }
  URLGUARD_RETURN_IF_ERROR(Write(chunk.data(), chunk.size()));
  std::string footer;
  AppendLE64(&footer, count_);
  AppendLE64(&footer, records_offset_);
  AppendLE64(&footer, index_offset);
  AppendLE64(&footer, written_ + kFullHashFooterBytes + kFullHashChecksumBytes);
  URLGUARD_RETURN_IF_ERROR(Write(footer.data(), footer.size()));
  const Sha256Digest checksum = hasher_->Finish();
  buffer_.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());
  URLGUARD_RETURN_IF_ERROR(Flush());
  URLGUARD_RETURN_IF_ERROR(file_->Sync());
  URLGUARD_RETURN_IF_ERROR(file_->Close());
  file_.reset();
  URLGUARD_RETURN_IF_ERROR(env_->RenameFile(tmp_path_, path_));
  finished_ = true;
  failed_ = false;
  return env_->SyncDir(DirName(path_));
}

// ---- reader ---------------------------------------------------------------------------------------------

Result<FullHashFileView> FullHashFileView::Open(const uint8_t* data, size_t size, bool verify_contents) {
  if (size < kFullHashHeaderBytes + kFullHashFooterBytes + kFullHashChecksumBytes)
    return Corrupt("truncated");
  FullHashFileView v;
  if (std::memcmp(data, kFullHashDeltaMagic, sizeof(kFullHashDeltaMagic)) == 0) {
    v.is_delta_ = true;
  } else if (std::memcmp(data, kFullHashMagic, sizeof(kFullHashMagic)) != 0) {
    return Corrupt("bad magic");
  }
  if (LoadLE32(data + kOffFormatVersion) != kFullHashFormatVersion)
    return Corrupt("unsupported format version");
  v.bucket_bits_ = LoadLE32(data + kOffBucketBits);
  if (v.bucket_bits_ < kMinFullHashBucketBits || v.bucket_bits_ > kMaxFullHashBucketBits) {
    return Corrupt("bad bucket bits");
  }
  v.version_ = LoadLE64(data + kOffVersion);
  const uint16_t threat_count = LoadLE16(data + kOffThreatCount);
  const uint32_t table_bytes = LoadLE32(data + kOffThreatTableBytes);
  if (LoadLE16(data + kOffThreatCount + 2) != 0) return Corrupt("nonzero reserved header bytes");
  size_t reserved_from = kOffBaseVersion;
  if (v.is_delta_) {
    v.base_version_ = LoadLE64(data + kOffBaseVersion);
    if (v.base_version_ >= v.version_) return Corrupt("delta base version not below its version");
    reserved_from = kOffBaseVersion + 8;
  }
  for (size_t i = reserved_from; i < kOffListName; ++i) {
    if (data[i] != 0) return Corrupt("nonzero reserved header bytes");
  }
  const auto* name = reinterpret_cast<const char*>(data + kOffListName);
  const size_t name_len = strnlen(name, kFullHashHeaderBytes - kOffListName);
  v.list_ = std::string_view(name, name_len);
  if (!IsValidListName(v.list_)) return Corrupt("bad list name");
  for (size_t i = kOffListName + name_len; i < kFullHashHeaderBytes; ++i) {
    if (data[i] != 0) return Corrupt("bad list name padding");
  }
  if (threat_count > kMaxFullHashThreats) return Corrupt("too many threat names");
  if (table_bytes % 8 != 0 || table_bytes > size - kFullHashHeaderBytes)
    return Corrupt("bad threat table size");

  const uint8_t* footer = data + size - kFullHashChecksumBytes - kFullHashFooterBytes;
  const uint64_t count = LoadLE64(footer);
  const uint64_t records_offset = LoadLE64(footer + 8);
  const uint64_t index_offset = LoadLE64(footer + 16);
  const uint64_t file_size = LoadLE64(footer + 24);
  if (file_size != size) return Corrupt("size differs from the footer (truncated or extended)");
  if (records_offset != kFullHashHeaderBytes + table_bytes) return Corrupt("bad records offset");
  if (count > kMaxFullHashRecords) return Corrupt("too many records");
  // A delta of deletes only needs no threat names; its puts are checked record by record below.
  if (count > 0 && threat_count == 0 && !v.is_delta_) return Corrupt("records without threat names");
  const uint64_t index_entries = (uint64_t{1} << v.bucket_bits_) + 1;
  // No overflow: count < 2^32, records are 36 bytes, offsets were checked against size.
  if (index_offset != records_offset + count * kFullHashRecordBytes) return Corrupt("bad index offset");
  if (index_offset + index_entries * 4 + kFullHashFooterBytes + kFullHashChecksumBytes != size) {
    return Corrupt("bad index size");
  }

  // Threat table: threat_count entries of (u8 length, bytes), zero padding to table_bytes.
  const uint8_t* t = data + kFullHashHeaderBytes;
  size_t pos = 0;
  v.threats_.reserve(threat_count);
  for (uint16_t i = 0; i < threat_count; ++i) {
    if (pos >= table_bytes) return Corrupt("threat table overruns");
    const size_t len = t[pos++];
    if (len > table_bytes - pos) return Corrupt("threat table overruns");
    const std::string_view threat(reinterpret_cast<const char*>(t + pos), len);
    if (!IsValidThreatName(threat)) return Corrupt("bad threat name");
    for (std::string_view other : v.threats_) {
      if (other == threat) return Corrupt("duplicate threat name");
    }
    v.threats_.push_back(threat);
    pos += len;
  }
  if (table_bytes - pos >= 8) return Corrupt("threat table padding too long");
  for (; pos < table_bytes; ++pos) {
    if (t[pos] != 0) return Corrupt("nonzero threat table padding");
  }

  v.records_ = data + records_offset;
  v.index_ = data + index_offset;
  v.count_ = count;
  if (LoadLE32(v.index_) != 0) return Corrupt("index does not start at 0");
  uint32_t prev = 0;
  for (uint64_t b = 1; b < index_entries; ++b) {
    const uint32_t cur = LoadLE32(v.index_ + 4 * b);
    if (cur < prev) return Corrupt("index decreases");
    prev = cur;
  }
  if (prev != count) return Corrupt("index does not end at the record count");

  if (verify_contents) {
    const Sha256Digest sum = Sha256(data, size - kFullHashChecksumBytes);
    if (std::memcmp(sum.data(), data + size - kFullHashChecksumBytes, kFullHashChecksumBytes) != 0) {
      return Corrupt("checksum mismatch");
    }
    uint64_t bucket = 0;
    for (uint64_t i = 0; i < count; ++i) {
      const uint8_t* r = v.records_ + i * kFullHashRecordBytes;
      if (!IsValidLayerKind(r[32])) return Corrupt("bad layer in record " + std::to_string(i));
      const uint8_t op = r[33];
      if (op != kFullHashOpPut && !(v.is_delta_ && op == kFullHashOpDelete)) {
        return Corrupt((v.is_delta_ ? "bad op in record " : "nonzero reserved byte in record ") +
                       std::to_string(i));
      }
      if (op == kFullHashOpDelete ? LoadLE16(r + 34) != 0 : LoadLE16(r + 34) >= threat_count) {
        return Corrupt("bad threat id in record " + std::to_string(i));
      }
      if (i > 0 && std::memcmp(r - kFullHashRecordBytes, r, 33) >= 0) {
        return Corrupt("records out of order at " + std::to_string(i));
      }
      // The record's bucket: the one whose [index[b], index[b+1]) range holds i.
      while (LoadLE32(v.index_ + 4 * (bucket + 1)) <= i) ++bucket;
      if (BucketOf(PrefixOf(r), v.bucket_bits_) != bucket) {
        return Corrupt("record " + std::to_string(i) + " outside its bucket");
      }
    }
  }
  return v;
}

size_t FullHashFileView::LookupPrefix(uint32_t prefix, std::vector<FullHashMatch>* out) const {
  if (count_ == 0) return 0;
  const uint32_t b = BucketOf(prefix, bucket_bits_);
  const uint32_t begin = LoadLE32(index_ + 4 * size_t{b});
  const uint32_t end = LoadLE32(index_ + 4 * (size_t{b} + 1));  // begin <= end <= count_ (checked at open)
  size_t found = 0;
  for (uint32_t i = begin; i < end; ++i) {
    const uint8_t* r = records_ + size_t{i} * kFullHashRecordBytes;
    const uint32_t p = PrefixOf(r);
    if (p < prefix) continue;
    if (p > prefix) break;
    const uint16_t threat = LoadLE16(r + 34);
    // A base file's byte 33 is not looked at here (as before deltas existed); verify_contents pins it to 0.
    const bool deleted = is_delta_ && r[33] == kFullHashOpDelete;
    if (!IsValidLayerKind(r[32])) continue;
    if (is_delta_ && r[33] > kFullHashOpDelete) continue;
    if (!deleted && threat >= threats_.size()) continue;
    FullHashMatch& m = out->emplace_back();
    std::memcpy(m.sha256.data(), r, 32);
    m.layer = static_cast<LayerKind>(r[32]);
    if (!deleted) m.threat = threats_[threat];
    m.deleted = deleted;
    ++found;
  }
  return found;
}

FullHashMatch FullHashFileView::RecordAt(uint64_t i) const {
  const uint8_t* r = records_ + i * kFullHashRecordBytes;
  FullHashMatch m;
  std::memcpy(m.sha256.data(), r, 32);
  m.layer = static_cast<LayerKind>(r[32]);
  m.deleted = is_delta_ && r[33] == kFullHashOpDelete;
  const uint16_t threat = LoadLE16(r + 34);
  if (!m.deleted && threat < threats_.size()) m.threat = threats_[threat];
  return m;
}

}  // namespace urlguard
