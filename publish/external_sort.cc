// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/external_sort.h"

namespace urlguard {

Result<std::unique_ptr<RunFileWriter>> RunFileWriter::Create(Env* env, const std::string& path) {
  URLGUARD_ASSIGN_OR_RETURN(auto file, CreateTempFile(env, path, /*private_file=*/true));
  return std::unique_ptr<RunFileWriter>(new RunFileWriter(std::move(file)));
}

Status RunFileWriter::Append(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  if (buffer_.size() + size > kRunWriteBuffer) {
    if (!buffer_.empty()) {
      URLGUARD_RETURN_IF_ERROR(file_->Append(buffer_));
      buffer_.clear();
    }
    if (size >= kRunWriteBuffer) return file_->Append(std::string_view(p, size));
  }
  buffer_.append(p, size);
  return Status::Ok();
}

Status RunFileWriter::Close() {
  if (!buffer_.empty()) URLGUARD_RETURN_IF_ERROR(file_->Append(buffer_));
  buffer_.clear();
  buffer_.shrink_to_fit();
  return file_->Close();
}

Result<std::unique_ptr<RunFileReader>> RunFileReader::Open(const std::string& path, size_t record_size,
                                                           size_t buffer) {
  URLGUARD_ASSIGN_OR_RETURN(auto file, SequentialFile::Open(path));
  if (file->size() % record_size != 0) return Status::Corruption(path + ": not a whole number of records");
  return std::unique_ptr<RunFileReader>(
      new RunFileReader(std::move(file), record_size, std::max(buffer, record_size)));
}

Result<bool> RunFileReader::Next(void* out) {
  if (pos_ == end_) {
    size_t filled = 0;
    while (filled < buffer_.size()) {
      URLGUARD_ASSIGN_OR_RETURN(size_t n, file_->Read(buffer_.data() + filled, buffer_.size() - filled));
      if (n == 0) break;
      filled += n;
    }
    if (filled % record_size_ != 0) return Status::Corruption(file_->path() + ": ends inside a record");
    pos_ = 0;
    end_ = filled;
    if (filled == 0) return false;
  }
  std::memcpy(out, buffer_.data() + pos_, record_size_);
  pos_ += record_size_;
  return true;
}

}  // namespace urlguard
