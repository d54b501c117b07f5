// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/state_file.h"

#include <cassert>
#include <cstring>

#include "core/byte_io.h"
#include "core/list_name.h"

namespace urlguard {
namespace {

constexpr char kStateMagic[8] = {'U', 'G', 'S', 'T', 'A', 'T', 'E', '\n'};

void PutU32(std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), 4); }
void PutU64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }

}  // namespace

std::string StateHeaderBytes(const char (&magic)[8], uint32_t format_version, uint64_t version, const std::string& list,
                             const std::vector<std::string>& threats) {
  std::string h(magic, 8);
  PutU32(&h, format_version);
  PutU32(&h, static_cast<uint32_t>(threats.size()));
  PutU64(&h, version);
  h.push_back(static_cast<char>(list.size()));
  h += list;
  for (const std::string& t : threats) {
    h.push_back(static_cast<char>(t.size()));
    h += t;
  }
  return h;
}

Result<std::unique_ptr<StateFileWriter>> StateFileWriter::Create(Env* env, const std::string& path,
                                                                 const std::string& list, uint64_t version,
                                                                 const std::vector<std::string>& threats) {
  if (!IsValidListName(list)) return Status::InvalidArgument("bad list name: " + list);
  if (threats.size() > 65536) return Status::InvalidArgument("too many threat names");
  for (size_t i = 0; i < threats.size(); ++i) {
    if (!IsValidThreatName(threats[i])) return Status::InvalidArgument("bad threat name: " + threats[i]);
    assert(i == 0 || threats[i - 1] < threats[i]);
  }
  std::unique_ptr<StateFileWriter> w(new StateFileWriter());
  w->env_ = env;
  w->path_ = path;
  URLGUARD_ASSIGN_OR_RETURN(w->file_, CreateTempFile(env, path + ".tmp", /*private_file=*/true));
  const std::string h = StateHeaderBytes(kStateMagic, kStateFormatVersion, version, list, threats);
  URLGUARD_RETURN_IF_ERROR(w->Write(h.data(), h.size()));
  return w;
}

Status StateFileWriter::Write(const void* data, size_t size) {
  hasher_.Update(data, size);
  buffer_.append(static_cast<const char*>(data), size);
  if (buffer_.size() >= kStateBufferBytes) {
    URLGUARD_RETURN_IF_ERROR(file_->Append(buffer_));
    buffer_.clear();
  }
  return Status::Ok();
}

Status StateFileWriter::Add(const KeyRecord& r) {
  uint8_t b[kStateRecordBytes] = {};
  std::memcpy(b, &r.key, 8);
  std::memcpy(b + 8, r.sha256, 32);
  b[40] = r.layer;
  b[41] = r.ipv6;
  b[42] = r.prefix_length;
  std::memcpy(b + 44, &r.threat, 2);
  ++count_;
  return Write(b, sizeof(b));
}

Status StateFileWriter::Finish() {
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

Result<std::unique_ptr<StateFileReader>> StateFileReader::Open(const std::string& path) {
  std::unique_ptr<StateFileReader> r(new StateFileReader());
  URLGUARD_ASSIGN_OR_RETURN(r->file_, SequentialFile::Open(path));
  r->buffer_.resize(kStateBufferBytes);
  uint8_t h[25];
  URLGUARD_RETURN_IF_ERROR(r->Fill(h, sizeof(h)));
  if (std::memcmp(h, kStateMagic, 8) != 0) return Status::Corruption(path + ": not a state file");
  uint32_t format, threats;
  std::memcpy(&format, h + 8, 4);
  std::memcpy(&threats, h + 12, 4);
  std::memcpy(&r->version_, h + 16, 8);
  if (format != kStateFormatVersion) return Status::Corruption(path + ": state format " + std::to_string(format));
  if (threats > 65536) return Status::Corruption(path + ": too many threat names");
  uint64_t header = 25;
  auto read_name = [&](std::string* out) -> Status {
    uint8_t len;
    URLGUARD_RETURN_IF_ERROR(r->Fill(&len, 1));
    out->resize(len);
    URLGUARD_RETURN_IF_ERROR(r->Fill(out->data(), len));
    header += 1 + len;
    return Status::Ok();
  };
  r->list_.resize(h[24]);
  URLGUARD_RETURN_IF_ERROR(r->Fill(r->list_.data(), h[24]));
  header += h[24];
  if (!IsValidListName(r->list_)) return Status::Corruption(path + ": bad list name");
  r->threats_.resize(threats);
  for (std::string& t : r->threats_) {
    URLGUARD_RETURN_IF_ERROR(read_name(&t));
    if (!IsValidThreatName(t)) return Status::Corruption(path + ": bad threat name");
  }
  uint64_t size = r->file_->size();
  if (size < header + 40 || (size - header - 40) % kStateRecordBytes != 0) {
    return Status::Corruption(path + ": size is no whole number of records");
  }
  r->count_ = (size - header - 40) / kStateRecordBytes;
  return r;
}

Status StateFileReader::Fill(void* out, size_t size) {
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
    hasher_.Update(p, take);
    pos_ += take;
    p += take;
    size -= take;
  }
  return Status::Ok();
}

Result<bool> StateFileReader::Next(KeyRecord* out) {
  if (read_ == count_) {
    if (read_ == UINT64_MAX) return false;
    uint64_t count;
    URLGUARD_RETURN_IF_ERROR(Fill(&count, 8));
    Sha256Digest want = hasher_.Finish();
    uint8_t got[32];
    size_t at = 0;
    while (at < 32) {  // the checksum itself is not hashed
      if (pos_ == end_) {
        URLGUARD_ASSIGN_OR_RETURN(size_t n, file_->Read(buffer_.data(), buffer_.size()));
        if (n == 0) return Status::Corruption(file_->path() + ": truncated");
        pos_ = 0;
        end_ = n;
      }
      size_t take = std::min<size_t>(32 - at, end_ - pos_);
      std::memcpy(got + at, buffer_.data() + pos_, take);
      pos_ += take;
      at += take;
    }
    if (count != count_ || std::memcmp(got, want.data(), 32) != 0) {
      return Status::Corruption(file_->path() + ": checksum or record count mismatch");
    }
    read_ = UINT64_MAX;
    return false;
  }
  uint8_t b[kStateRecordBytes];
  URLGUARD_RETURN_IF_ERROR(Fill(b, sizeof(b)));
  ++read_;
  *out = KeyRecord{};
  std::memcpy(&out->key, b, 8);
  std::memcpy(out->sha256, b + 8, 32);
  out->layer = b[40];
  out->ipv6 = b[41];
  out->prefix_length = b[42];
  std::memcpy(&out->threat, b + 44, 2);
  if (out->layer > 2 || out->threat >= threats_.size()) {
    return Status::Corruption(file_->path() + ": bad record " + std::to_string(read_));
  }
  return true;
}

}  // namespace urlguard
