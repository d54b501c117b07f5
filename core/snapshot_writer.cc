// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/snapshot_writer.h"

#include <algorithm>
#include <cassert>

#include "core/blocked_bloom.h"
#include "platform/env.h"

namespace urlguard {
namespace {

// Spilled regions are copied into the file through a mapping, this many bytes at a time; each piece is handed
// back to the kernel once copied.
constexpr size_t kCopyChunkBytes = size_t{128} << 10;

}  // namespace

// A spill file for one region of the current layer: appended while fingerprints arrive, copied into the
// snapshot when the layer ends, then removed.
class SnapshotWriter::Stream {
 public:
  Stream(Env* env, std::string path) : env_(env), path_(std::move(path)) {}
  ~Stream() { Drop(); }

  // Appends *bytes to the spill file (created on first use) and clears *bytes.
  Status Spill(std::string* bytes) {
    if (file_ == nullptr) {
      auto f = CreateTempFile(env_, path_);
      if (!f.ok()) return f.status();
      file_ = std::move(f).value();
      created_ = true;
    }
    Status s = file_->Append(*bytes);
    bytes->clear();
    return s;
  }

  // Feeds what was spilled, in order, to `emit`, then removes the spill file.
  template <typename Emit>
  Status CopyTo(Emit&& emit) {
    if (file_ == nullptr) return Status::Ok();
    Status s = file_->Close();
    file_.reset();
    if (!s.ok()) return s;
    auto mapped = env_->MapReadOnly(path_);
    if (!mapped.ok()) return mapped.status();
    const MappedFile& m = **mapped;
    for (size_t off = 0; off < m.size(); off += kCopyChunkBytes) {
      const size_t n = std::min(kCopyChunkBytes, m.size() - off);
      URLGUARD_RETURN_IF_ERROR(emit(std::string_view(reinterpret_cast<const char*>(m.data()) + off, n)));
      ReleaseMappedPages(m, off, n);
    }
    Drop();
    return Status::Ok();
  }

 private:
  void Drop() {
    file_.reset();
    if (created_) (void)env_->RemoveFile(path_);
    created_ = false;
  }

  Env* const env_;
  const std::string path_;
  std::unique_ptr<WritableFile> file_;
  bool created_ = false;
};

SnapshotWriter::SnapshotWriter(Env* env, std::string path, const SnapshotWriterOptions& options)
    : env_(env), path_(std::move(path)), tmp_path_(path_ + ".tmp"), options_(options) {}

SnapshotWriter::~SnapshotWriter() {
  unary_.reset();
  remainders_.reset();
  if (!finished_ && file_ != nullptr) {
    file_.reset();
    (void)env_->RemoveFile(tmp_path_);
  }
}

Result<std::unique_ptr<SnapshotWriter>> SnapshotWriter::Create(Env* env, const std::string& path,
                                                               const SnapshotHeaderFields& header,
                                                               const std::vector<StreamLayerSpec>& layers,
                                                               const SnapshotWriterOptions& options) {
  std::unique_ptr<SnapshotWriter> w(new SnapshotWriter(env, path, options));
  SnapshotHead head;
  head.list_name = header.list_name;
  head.version = header.version;
  head.created_unix = header.created_unix;
  head.key_hash = header.key_hash;
  for (const StreamLayerSpec& spec : layers) {
    Layer l;
    l.spec = spec;
    SnapshotLayerHead e;
    e.kind = spec.kind;
    e.filter = spec.filter;
    e.entries = spec.entries;
    e.ip_prefixes = spec.ip_prefixes;
    if (spec.filter == FilterKind::kFingerprintArray) {
      if (spec.universe == 0) return Status::InvalidArgument("zero universe");
      if (spec.entries > kMaxLayerEntries) return Status::InvalidArgument("too many entries in one layer");
      if (spec.entries > spec.universe) {
        return Status::InvalidArgument("more entries than fingerprints below the universe");
      }
      l.geometry = FingerprintSetGeometryFor(spec.entries, spec.universe);
      e.body_length = l.geometry.body_bytes();
    } else if (spec.filter == FilterKind::kBlockedBloom) {
      auto check = BlockedBloomView::Open(reinterpret_cast<const uint8_t*>(spec.bloom_body.data()),
                                          spec.bloom_body.size());
      if (!check.ok()) return check.status().WithContext("bloom layer");
      e.body_length = spec.bloom_body.size();
    } else {
      return Status::InvalidArgument("unknown filter kind");
    }
    w->layers_.push_back(l);
    head.layers.push_back(e);
  }
  std::string head_bytes;
  SnapshotLayout layout;
  URLGUARD_RETURN_IF_ERROR(SerializeSnapshotHead(head, &head_bytes, &layout));
  for (size_t i = 0; i < w->layers_.size(); ++i) w->layers_[i].body_offset = layout.body_offsets[i];
  w->file_size_ = layout.file_size;

  auto file = CreateTempFile(env, w->tmp_path_);
  if (!file.ok()) return file.status();
  w->file_ = std::move(file).value();
  w->file_buffer_.reserve(options.buffer_bytes);
  URLGUARD_RETURN_IF_ERROR(w->Emit(head_bytes));
  URLGUARD_RETURN_IF_ERROR(w->StartLayer());
  return w;
}

Status SnapshotWriter::Fail(Status s) {
  if (error_.ok()) error_ = std::move(s);
  return error_;
}

Status SnapshotWriter::FlushFile() {
  if (file_buffer_.empty()) return Status::Ok();
  Status s = file_->Append(file_buffer_);
  file_buffer_.clear();
  return s;
}

Status SnapshotWriter::Emit(std::string_view bytes) {
  hasher_.Update(bytes);
  written_ += bytes.size();
  if (file_buffer_.size() + bytes.size() > options_.buffer_bytes) {
    URLGUARD_RETURN_IF_ERROR(FlushFile());
    if (bytes.size() >= options_.buffer_bytes) return file_->Append(bytes);
  }
  file_buffer_.append(bytes);
  return Status::Ok();
}

Status SnapshotWriter::StartLayer() {
  const Layer& l = layers_[current_];
  assert(written_ <= l.body_offset);
  URLGUARD_RETURN_IF_ERROR(Emit(std::string(l.body_offset - written_, '\0')));
  if (l.spec.filter == FilterKind::kBlockedBloom) return Emit(l.spec.bloom_body);
  encoder_ = std::make_unique<FingerprintSetEncoder>(l.geometry);
  // Room for one buffer's worth plus the last word, so the strings never double past it.
  encoder_->samples()->reserve(options_.buffer_bytes + 8);
  encoder_->unary()->reserve(options_.buffer_bytes + 8);
  encoder_->remainders()->reserve(options_.buffer_bytes + 8);
  URLGUARD_RETURN_IF_ERROR(Emit(encoder_->Header()));
  unary_ = std::make_unique<Stream>(env_, tmp_path_ + ".unary");
  remainders_ = std::make_unique<Stream>(env_, tmp_path_ + ".rem");
  return Status::Ok();
}

Status SnapshotWriter::Add(uint64_t fingerprint) {
  if (!error_.ok()) return error_;
  if (encoder_ == nullptr) {
    return Fail(Status::InvalidArgument(finished_ ? "snapshot writer: Add after Finish"
                                                  : "snapshot writer: Add on a Bloom-filter layer"));
  }
  if (!encoder_->Add(fingerprint)) {
    const Layer& l = layers_[current_];
    std::string why = encoder_->added() == l.spec.entries ? "more than the declared " + std::to_string(l.spec.entries)
                      : fingerprint >= l.spec.universe    ? "not below the universe " + std::to_string(l.spec.universe)
                                                          : "not above the previous one";
    return Fail(Status::InvalidArgument(std::string("snapshot writer: ") + LayerKindName(l.spec.kind) +
                                        " layer: fingerprint " + std::to_string(fingerprint) + " is " + why));
  }
  const size_t cap = options_.buffer_bytes;
  if (encoder_->samples()->size() >= cap) {
    Status s = Emit(*encoder_->samples());
    encoder_->samples()->clear();
    if (!s.ok()) return Fail(std::move(s));
  }
  if (encoder_->unary()->size() >= cap) {
    Status s = unary_->Spill(encoder_->unary());
    if (!s.ok()) return Fail(std::move(s));
  }
  if (encoder_->remainders()->size() >= cap) {
    Status s = remainders_->Spill(encoder_->remainders());
    if (!s.ok()) return Fail(std::move(s));
  }
  return Status::Ok();
}

Status SnapshotWriter::EndLayer() {
  const Layer& l = layers_[current_];
  if (encoder_ != nullptr) {
    if (!encoder_->Finish()) {
      return Status::InvalidArgument(std::string("snapshot writer: ") + LayerKindName(l.spec.kind) +
                                     " layer: " + std::to_string(encoder_->added()) + " of the declared " +
                                     std::to_string(l.spec.entries) + " fingerprints added");
    }
    auto emit = [this](std::string_view b) { return Emit(b); };
    URLGUARD_RETURN_IF_ERROR(Emit(*encoder_->samples()));
    URLGUARD_RETURN_IF_ERROR(unary_->CopyTo(emit));
    URLGUARD_RETURN_IF_ERROR(Emit(*encoder_->unary()));
    URLGUARD_RETURN_IF_ERROR(remainders_->CopyTo(emit));
    URLGUARD_RETURN_IF_ERROR(Emit(*encoder_->remainders()));
    encoder_.reset();
    unary_.reset();
    remainders_.reset();
  }
  const uint64_t body_bytes =
      l.spec.filter == FilterKind::kFingerprintArray ? l.geometry.body_bytes() : l.spec.bloom_body.size();
  if (written_ != l.body_offset + body_bytes) {
    return Status::Internal("snapshot writer: layer body of " + std::to_string(written_ - l.body_offset) +
                            " bytes, laid out as " + std::to_string(body_bytes));
  }
  return Status::Ok();
}

Status SnapshotWriter::NextLayer() {
  if (!error_.ok()) return error_;
  if (finished_ || current_ + 1 >= layers_.size()) {
    return Fail(Status::InvalidArgument("snapshot writer: NextLayer past the last layer"));
  }
  Status s = EndLayer();
  if (s.ok()) {
    ++current_;
    s = StartLayer();
  }
  if (!s.ok()) return Fail(std::move(s));
  return Status::Ok();
}

Result<Sha256Digest> SnapshotWriter::Finish() {
  if (!error_.ok()) return error_;
  if (finished_) return Fail(Status::InvalidArgument("snapshot writer: Finish called twice"));
  if (current_ + 1 != layers_.size()) {
    return Fail(Status::InvalidArgument("snapshot writer: Finish before the last layer"));
  }
  Status s = EndLayer();
  if (!s.ok()) return Fail(std::move(s));
  const Sha256Digest digest = hasher_.Finish();
  file_buffer_.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  written_ += digest.size();
  if (written_ != file_size_) {
    return Fail(Status::Internal("snapshot writer: wrote " + std::to_string(written_) + " bytes, laid out " +
                                 std::to_string(file_size_)));
  }
  s = FlushFile();
  if (s.ok()) s = file_->Sync();
  if (s.ok()) s = file_->Close();
  if (!s.ok()) return Fail(s.WithContext(tmp_path_));
  file_.reset();
  if (options_.install) {
    s = env_->RenameFile(tmp_path_, path_);
    if (!s.ok()) {
      (void)env_->RemoveFile(tmp_path_);
      return Fail(std::move(s));
    }
    finished_ = true;
    s = env_->SyncDir(DirName(path_));
    if (!s.ok()) return Fail(s.WithContext(path_ + " renamed, but not yet durable"));
  }
  finished_ = true;
  return digest;
}

}  // namespace urlguard
