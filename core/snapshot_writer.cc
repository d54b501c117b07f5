// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/snapshot_writer.h"

#include <algorithm>
#include <cassert>

#include "core/blocked_bloom.h"

namespace urlguard {

// The output as a ByteSink, through the hash and the buffer: what a spill is copied into.
class SnapshotWriter::EmitSink final : public ByteSink {
 public:
  explicit EmitSink(SnapshotWriter* w) : w_(w) {}
  Status Append(std::string_view bytes) override { return w_->Emit(bytes); }

 private:
  SnapshotWriter* const w_;
};

SnapshotWriter::SnapshotWriter(ByteSink* out, SpillFactory* spills, const SnapshotWriterOptions& options)
    : out_(out), spills_(spills), options_(options) {}

SnapshotWriter::~SnapshotWriter() = default;

Result<std::unique_ptr<SnapshotWriter>> SnapshotWriter::Create(ByteSink* out, SpillFactory* spills,
                                                               const SnapshotHeaderFields& header,
                                                               const std::vector<StreamLayerSpec>& layers,
                                                               const SnapshotWriterOptions& options) {
  std::unique_ptr<SnapshotWriter> w(new SnapshotWriter(out, spills, options));
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

  w->out_buffer_.reserve(options.buffer_bytes);
  URLGUARD_RETURN_IF_ERROR(w->Emit(head_bytes));
  URLGUARD_RETURN_IF_ERROR(w->StartLayer());
  return w;
}

Status SnapshotWriter::Fail(Status s) {
  if (error_.ok()) error_ = std::move(s);
  return error_;
}

Status SnapshotWriter::FlushOutput() {
  if (out_buffer_.empty()) return Status::Ok();
  Status s = out_->Append(out_buffer_);
  out_buffer_.clear();
  return s;
}

Status SnapshotWriter::Emit(std::string_view bytes) {
  hasher_.Update(bytes);
  written_ += bytes.size();
  if (out_buffer_.size() + bytes.size() > options_.buffer_bytes) {
    URLGUARD_RETURN_IF_ERROR(FlushOutput());
    if (bytes.size() >= options_.buffer_bytes) return out_->Append(bytes);
  }
  out_buffer_.append(bytes);
  return Status::Ok();
}

Status SnapshotWriter::SpillBytes(std::string_view name, std::unique_ptr<Spill>* spill, std::string* bytes) {
  if (*spill == nullptr) {
    auto made = spills_->NewSpill(name);
    if (!made.ok()) return made.status();
    *spill = std::move(made).value();
  }
  Status s = (*spill)->Append(*bytes);
  bytes->clear();
  return s;
}

Status SnapshotWriter::CopySpill(std::unique_ptr<Spill>* spill) {
  if (*spill == nullptr) return Status::Ok();
  EmitSink emit(this);
  Status s = (*spill)->CopyTo(&emit);
  spill->reset();
  return s;
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
  return Emit(encoder_->Header());
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
    Status s = SpillBytes("unary", &unary_, encoder_->unary());
    if (!s.ok()) return Fail(std::move(s));
  }
  if (encoder_->remainders()->size() >= cap) {
    Status s = SpillBytes("rem", &remainders_, encoder_->remainders());
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
    URLGUARD_RETURN_IF_ERROR(Emit(*encoder_->samples()));
    URLGUARD_RETURN_IF_ERROR(CopySpill(&unary_));
    URLGUARD_RETURN_IF_ERROR(Emit(*encoder_->unary()));
    URLGUARD_RETURN_IF_ERROR(CopySpill(&remainders_));
    URLGUARD_RETURN_IF_ERROR(Emit(*encoder_->remainders()));
    encoder_.reset();
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
  out_buffer_.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  written_ += digest.size();
  if (written_ != file_size_) {
    return Fail(Status::Internal("snapshot writer: wrote " + std::to_string(written_) + " bytes, laid out " +
                                 std::to_string(file_size_)));
  }
  s = FlushOutput();
  if (!s.ok()) return Fail(std::move(s));
  finished_ = true;
  return digest;
}

}  // namespace urlguard
