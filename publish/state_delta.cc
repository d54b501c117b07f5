// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/state_delta.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "core/list_name.h"
#include "publish/state_file.h"

namespace urlguard {
namespace {

constexpr char kDeltaMagic[8] = {'U', 'G', 'D', 'E', 'L', 'T', 'A', '\n'};
// Fixed header bytes before the list name: magic, format, threat count, version, name length.
constexpr size_t kFixedHeaderBytes = 25;
constexpr size_t kFooterBytes = 8 + 32;
// A delta is small: a smaller buffer than the state file's keeps a publisher reading 64 of them modest.
constexpr size_t kDeltaBufferBytes = size_t{256} << 10;

void PutU64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

Result<std::unique_ptr<StateDeltaWriter>> StateDeltaWriter::Create(Env* env, const std::string& path,
                                                                   const std::string& list, uint64_t version,
                                                                   const std::vector<std::string>& threats) {
  if (!IsValidListName(list)) return Status::InvalidArgument("bad list name: " + list);
  if (threats.size() > 65536) return Status::InvalidArgument("too many threat names");
  for (size_t i = 0; i < threats.size(); ++i) {
    if (!IsValidThreatName(threats[i])) return Status::InvalidArgument("bad threat name: " + threats[i]);
    assert(i == 0 || threats[i - 1] < threats[i]);
  }
  std::unique_ptr<StateDeltaWriter> w(new StateDeltaWriter());
  w->env_ = env;
  w->path_ = path;
  w->threat_count_ = threats.size();
  URLGUARD_ASSIGN_OR_RETURN(w->file_, CreateTempFile(env, path + ".tmp", /*private_file=*/true));
  const std::string h = StateHeaderBytes(kDeltaMagic, kStateDeltaFormatVersion, version, list, threats);
  URLGUARD_RETURN_IF_ERROR(w->Write(h.data(), h.size()));
  return w;
}

Status StateDeltaWriter::Write(const void* data, size_t size) {
  hasher_.Update(data, size);
  buffer_.append(static_cast<const char*>(data), size);
  if (buffer_.size() >= kDeltaBufferBytes) {
    URLGUARD_RETURN_IF_ERROR(file_->Append(buffer_));
    buffer_.clear();
  }
  return Status::Ok();
}

Status StateDeltaWriter::Add(const KeyRecord& r, DeltaOp op) {
  if (r.layer > 2) return Status::InvalidArgument("state delta: bad layer");
  if (have_last_ && CompareEntry(last_, r) >= 0) return Status::InvalidArgument("state delta: records out of order");
  if (op == DeltaOp::kPut && r.threat >= threat_count_) return Status::InvalidArgument("state delta: bad threat id");
  if (op != DeltaOp::kPut && op != DeltaOp::kDelete) return Status::InvalidArgument("state delta: bad op");
  have_last_ = true;
  last_ = r;
  uint8_t b[48] = {};
  std::memcpy(b, &r.key, 8);
  std::memcpy(b + 8, r.sha256, 32);
  b[40] = r.layer;
  b[41] = r.ipv6;
  b[42] = r.prefix_length;
  b[43] = static_cast<uint8_t>(op);
  if (op == DeltaOp::kPut) std::memcpy(b + 44, &r.threat, 2);
  ++count_;
  return Write(b, sizeof(b));
}

Status StateDeltaWriter::Finish() {
  std::string f;
  PutU64(&f, count_);
  URLGUARD_RETURN_IF_ERROR(Write(f.data(), f.size()));
  Sha256Digest d = hasher_.Finish();
  buffer_.append(reinterpret_cast<const char*>(d.data()), d.size());
  URLGUARD_RETURN_IF_ERROR(file_->Append(buffer_));
  buffer_.clear();
  URLGUARD_RETURN_IF_ERROR(file_->Sync());
  URLGUARD_RETURN_IF_ERROR(file_->Close());
  URLGUARD_RETURN_IF_ERROR(env_->RenameFile(path_ + ".tmp", path_));
  return env_->SyncDir(DirName(path_));
}

Result<std::unique_ptr<StateDeltaReader>> StateDeltaReader::Open(const std::string& path) {
  std::unique_ptr<StateDeltaReader> r(new StateDeltaReader());
  URLGUARD_ASSIGN_OR_RETURN(r->file_, SequentialFile::Open(path));
  r->buffer_.resize(kDeltaBufferBytes);
  uint8_t h[kFixedHeaderBytes];
  URLGUARD_RETURN_IF_ERROR(r->Fill(h, sizeof(h), true));
  if (std::memcmp(h, kDeltaMagic, 8) != 0) return Status::Corruption(path + ": not a state delta");
  uint32_t format, threats;
  std::memcpy(&format, h + 8, 4);
  std::memcpy(&threats, h + 12, 4);
  std::memcpy(&r->version_, h + 16, 8);
  if (format != kStateDeltaFormatVersion) {
    return Status::Corruption(path + ": state delta format " + std::to_string(format));
  }
  if (threats > 65536) return Status::Corruption(path + ": too many threat names");
  uint64_t header = kFixedHeaderBytes + h[24];
  r->list_.resize(h[24]);
  URLGUARD_RETURN_IF_ERROR(r->Fill(r->list_.data(), h[24], true));
  if (!IsValidListName(r->list_)) return Status::Corruption(path + ": bad list name");
  // Each name costs at least its length byte: a table larger than the file is refused before it is allocated.
  if (threats > r->file_->size()) return Status::Corruption(path + ": threat table larger than the file");
  r->threats_.resize(threats);
  for (size_t i = 0; i < r->threats_.size(); ++i) {
    std::string& t = r->threats_[i];
    uint8_t len;
    URLGUARD_RETURN_IF_ERROR(r->Fill(&len, 1, true));
    t.resize(len);
    URLGUARD_RETURN_IF_ERROR(r->Fill(t.data(), len, true));
    header += 1 + len;
    if (!IsValidThreatName(t)) return Status::Corruption(path + ": bad threat name");
    if (i > 0 && !(r->threats_[i - 1] < t)) return Status::Corruption(path + ": threat names not sorted");
  }
  const uint64_t size = r->file_->size();
  if (size < header + kFooterBytes || (size - header - kFooterBytes) % 48 != 0) {
    return Status::Corruption(path + ": size is no whole number of records");
  }
  r->count_ = (size - header - kFooterBytes) / 48;
  if (r->count_ > kMaxStateDeltaRecords) return Status::Corruption(path + ": more records than a delta may hold");
  return r;
}

Status StateDeltaReader::Fill(void* out, size_t size, bool hash) {
  auto* p = static_cast<uint8_t*>(out);
  while (size > 0) {
    if (pos_ == end_) {
      URLGUARD_ASSIGN_OR_RETURN(size_t n, file_->Read(buffer_.data(), buffer_.size()));
      if (n == 0) return Status::Corruption(file_->path() + ": truncated");
      pos_ = 0;
      end_ = n;
    }
    size_t take = std::min(size, end_ - pos_);
    std::memcpy(p, buffer_.data() + pos_, take);
    if (hash) hasher_.Update(p, take);
    pos_ += take;
    p += take;
    size -= take;
  }
  return Status::Ok();
}

Result<bool> StateDeltaReader::Next(KeyRecord* out, DeltaOp* op) {
  if (done_) return false;
  if (read_ == count_) {
    uint64_t count;
    URLGUARD_RETURN_IF_ERROR(Fill(&count, 8, true));
    Sha256Digest want = hasher_.Finish();
    uint8_t got[32];
    URLGUARD_RETURN_IF_ERROR(Fill(got, 32, false));  // the checksum itself is not hashed
    if (count != count_ || std::memcmp(got, want.data(), 32) != 0) {
      return Status::Corruption(file_->path() + ": checksum or record count mismatch");
    }
    done_ = true;
    return false;
  }
  uint8_t b[48];
  URLGUARD_RETURN_IF_ERROR(Fill(b, sizeof(b), true));
  ++read_;
  KeyRecord r;
  std::memcpy(&r.key, b, 8);
  std::memcpy(r.sha256, b + 8, 32);
  r.layer = b[40];
  r.ipv6 = b[41];
  r.prefix_length = b[42];
  std::memcpy(&r.threat, b + 44, 2);
  const uint8_t o = b[43];
  const bool bad_op = o != static_cast<uint8_t>(DeltaOp::kPut) && o != static_cast<uint8_t>(DeltaOp::kDelete);
  const bool bad_threat = o == static_cast<uint8_t>(DeltaOp::kPut) ? r.threat >= threats_.size() : r.threat != 0;
  if (r.layer > 2 || bad_op || bad_threat || b[46] != 0 || b[47] != 0) {
    return Status::Corruption(file_->path() + ": bad record " + std::to_string(read_));
  }
  if (read_ > 1 && CompareEntry(last_, r) >= 0) {
    return Status::Corruption(file_->path() + ": records out of order at " + std::to_string(read_));
  }
  last_ = r;
  *out = r;
  *op = static_cast<DeltaOp>(o);
  return true;
}

Result<StateDelta> ReadStateDelta(const std::string& path, const std::string& list, uint64_t version) {
  URLGUARD_ASSIGN_OR_RETURN(auto reader, StateDeltaReader::Open(path));
  if (reader->list() != list || reader->version() != version) {
    return Status::Corruption(path + ": holds list " + reader->list() + " version " +
                              std::to_string(reader->version()));
  }
  StateDelta d;
  d.version = version;
  d.threats = reader->threats();
  d.records.reserve(reader->records());
  KeyRecord r;
  DeltaOp op;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, reader->Next(&r, &op));
    if (!has) break;
    r.reserved = static_cast<uint8_t>(op);
    d.records.push_back(r);
  }
  return d;
}

}  // namespace urlguard
