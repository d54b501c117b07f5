// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "platform/file_sink.h"

#include <algorithm>
#include <cassert>

#include "platform/env.h"

namespace urlguard {
namespace {

class TempFileSpill final : public Spill {
 public:
  TempFileSpill(Env* env, std::string path, std::unique_ptr<WritableFile> file)
      : env_(env), path_(std::move(path)), file_(std::move(file)) {}
  ~TempFileSpill() override {
    file_.reset();
    (void)env_->RemoveFile(path_);
  }

  Status Append(std::string_view bytes) override {
    assert(file_ != nullptr && "Append after CopyTo");
    return file_->Append(bytes);
  }

  Status CopyTo(ByteSink* out) override {
    assert(file_ != nullptr && "CopyTo called twice");
    Status s = file_->Close();
    file_.reset();
    if (!s.ok()) return s;
    auto mapped = env_->MapReadOnly(path_);
    if (!mapped.ok()) return mapped.status();
    const MappedFile& m = **mapped;
    for (size_t off = 0; off < m.size(); off += TempFileSpills::kCopyChunkBytes) {
      const size_t n = std::min(TempFileSpills::kCopyChunkBytes, m.size() - off);
      URLGUARD_RETURN_IF_ERROR(out->Append(std::string_view(reinterpret_cast<const char*>(m.data()) + off, n)));
      ReleaseMappedPages(m, off, n);
    }
    return Status::Ok();
  }

 private:
  Env* const env_;
  const std::string path_;
  std::unique_ptr<WritableFile> file_;
};

}  // namespace

Result<std::unique_ptr<Spill>> TempFileSpills::NewSpill(std::string_view name) {
  std::string path = prefix_ + "." + std::string(name);
  auto file = CreateTempFile(env_, path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<Spill>(new TempFileSpill(env_, std::move(path), std::move(file).value()));
}

}  // namespace urlguard
