// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/bounded_inflate.h"

#include <zlib.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <functional>
#include <memory>

namespace urlguard {

namespace {

// windowBits 15 + 32: a 32 KiB window, and zlib detects the zlib or gzip header by itself.
constexpr int kWindowBitsAutoDetect = 15 + 32;
// windowBits 15 + 16: a 32 KiB window, gzip wrapper only.
constexpr int kWindowBitsGzip = 15 + 16;

std::string ZlibMessage(const z_stream& z, int rc) {
  std::string m = z.msg != nullptr ? z.msg : "";
  if (m.empty()) m = "zlib error " + std::to_string(rc);
  return m;
}

bool StartsWithGzipMagic(std::string_view s) {
  return s.size() >= 2 && static_cast<unsigned char>(s[0]) == 0x1f &&
         static_cast<unsigned char>(s[1]) == 0x8b;
}

// Where one pass puts its output.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void Append(const char* data, size_t n) = 0;
};

// Keeps nothing: the counting pass.
class NullSink final : public Sink {
 public:
  void Append(const char* /*data*/, size_t /*n*/) override {}
};

// Appends to a string that already has its exact final capacity.
class ExactSink final : public Sink {
 public:
  explicit ExactSink(std::string* out) : out_(out) {}
  void Append(const char* data, size_t n) override { out_->append(data, n); }

 private:
  std::string* out_;
};

// Appends `n` bytes to *out (out->size() + n <= cap), growing its capacity geometrically but never beyond
// `cap`. std::string::reserve on a non-empty string may round a request up to twice the old capacity, so
// the growth goes through a fresh string, whose reserve is exact (for requests of at least 30 bytes).
class GrowingSink final : public Sink {
 public:
  GrowingSink(std::string* out, size_t cap) : out_(out), cap_(cap) {}
  void Append(const char* data, size_t n) override {
    const size_t need = out_->size() + n;
    if (need > out_->capacity()) {
      const size_t doubled = out_->capacity() > cap_ / 2 ? cap_ : out_->capacity() * 2;
      std::string bigger;
      bigger.reserve(std::max(need, doubled));
      bigger.append(*out_);
      out_->swap(bigger);
    }
    out_->append(data, n);
  }

 private:
  std::string* out_;
  const size_t cap_;
};

// The one inflation engine: input in pieces, in order, output into a Sink, at most max_output bytes. The first
// error sticks (later input is ignored). With gzip_members, a member's end followed by the gzip magic in the same
// piece starts the next member (InflateBounded feeds its whole input as one piece; BoundedInflater never asks for
// members).
class InflateStream {
 public:
  InflateStream(size_t max_output, bool gzip_members, Sink* sink)
      : max_output_(max_output),
        gzip_members_(gzip_members),
        sink_(sink),
        // Produce at most cap + 1 bytes in total: one byte past the cap proves the output is too large.
        chunk_size_(std::min(kInflateChunkBytes, max_output == SIZE_MAX ? max_output : max_output + 1)),
        chunk_(new char[chunk_size_]) {
    if (inflateInit2(&z_, gzip_members ? kWindowBitsGzip : kWindowBitsAutoDetect) != Z_OK) {
      status_ = Status::Internal("inflate: zlib could not initialize");
    } else {
      initialized_ = true;
    }
  }
  ~InflateStream() {
    if (initialized_) inflateEnd(&z_);
  }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;

  void Feed(std::string_view input) {
    if (!status_.ok()) return;
    size_t offset = 0;
    for (;;) {
      if (z_.avail_in == 0) {
        if (offset == input.size()) return;  // all of this piece taken: wait for the next
        // avail_in is 32-bit: feed large inputs in pieces.
        const size_t piece = std::min<size_t>(input.size() - offset, UINT_MAX);
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data() + offset));
        z_.avail_in = static_cast<uInt>(piece);
        offset += piece;
      }
      if (ended_) {
        // The unfed input follows z_.next_in contiguously.
        const size_t remaining = z_.avail_in + (input.size() - offset);
        const std::string_view rest(reinterpret_cast<const char*>(z_.next_in), remaining);
        if (!gzip_members_ || !StartsWithGzipMagic(rest)) {
          trailing_ += remaining;
          z_.avail_in = 0;
          return;
        }
        if (inflateReset(&z_) != Z_OK) {
          status_ = Status::Internal("inflate: inflateReset failed");
          return;
        }
        ended_ = false;
      }
      const size_t room = max_output_ - produced_;
      const size_t want = std::min(chunk_size_, room == SIZE_MAX ? room : room + 1);
      z_.next_out = reinterpret_cast<Bytef*>(chunk_.get());
      z_.avail_out = static_cast<uInt>(want);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      const size_t produced = want - z_.avail_out;
      if (produced > room) {
        status_ = Status::ResourceExhausted("inflate: output larger than " + std::to_string(max_output_) +
                                            " bytes (the cap)");
        return;
      }
      sink_->Append(chunk_.get(), produced);
      produced_ += produced;
      switch (rc) {
        case Z_STREAM_END:
          ended_ = true;
          continue;
        case Z_OK:
          break;
        case Z_BUF_ERROR:
          // No progress possible: with output room left, the input ran out mid-stream (the next piece decides).
          if (z_.avail_in == 0 && offset == input.size()) return;
          break;
        case Z_NEED_DICT:
          status_ = Status::Corruption("inflate: stream needs a preset dictionary");
          return;
        case Z_DATA_ERROR:
          status_ = Status::Corruption("inflate: " + ZlibMessage(z_, rc));
          return;
        case Z_MEM_ERROR:
          status_ = Status::Internal("inflate: zlib out of memory");
          return;
        default:
          status_ = Status::Internal("inflate: " + ZlibMessage(z_, rc));
          return;
      }
      if (produced == 0 && z_.avail_in == 0 && offset == input.size()) return;  // zlib wants more input
    }
  }

  bool failed() const { return !status_.ok(); }

  // What was fed must have been complete streams and nothing after them. The bytes produced.
  Result<size_t> Finish() const {
    if (!status_.ok()) return status_;
    if (trailing_ > 0) {
      return Status::Corruption("inflate: " + std::to_string(trailing_) +
                                " bytes of trailing garbage after the end of the stream");
    }
    if (!ended_) return Status::Corruption("inflate: truncated stream (input ended before the end of the stream)");
    return produced_;
  }

 private:
  z_stream z_{};
  bool initialized_ = false;
  const size_t max_output_;
  const bool gzip_members_;
  Sink* const sink_;
  const size_t chunk_size_;
  std::unique_ptr<char[]> chunk_;
  size_t produced_ = 0;
  bool ended_ = false;     // the last stream (member) ended: what follows is a new member or garbage
  size_t trailing_ = 0;    // bytes fed after the end
  Status status_;
};

// One inflation pass over `input` into `sink`. Returns the number of bytes produced (<= max_output).
Result<size_t> InflatePass(std::string_view input, size_t max_output, bool gzip_members, Sink* sink) {
  InflateStream stream(max_output, gzip_members, sink);
  stream.Feed(input);
  return stream.Finish();
}

}  // namespace

Result<std::string> InflateBounded(std::string_view input, size_t max_output, const InflateOptions& options) {
  std::string out;
  if (options.count_first) {
    NullSink counter;
    URLGUARD_ASSIGN_OR_RETURN(size_t size, InflatePass(input, max_output, options.gzip_members, &counter));
    out.reserve(size);
    ExactSink exact(&out);
    URLGUARD_ASSIGN_OR_RETURN(size_t filled, InflatePass(input, size, options.gzip_members, &exact));
    assert(filled == size);
    (void)filled;
    return out;
  }
  GrowingSink growing(&out, max_output);
  URLGUARD_RETURN_IF_ERROR(InflatePass(input, max_output, options.gzip_members, &growing).status());
  return out;
}

namespace {

// Hands each piece to a function; its first error sticks and later pieces are dropped.
class FunctionSink final : public Sink {
 public:
  explicit FunctionSink(std::function<Status(std::string_view)> output) : output_(std::move(output)) {}
  void Append(const char* data, size_t n) override {
    if (status_.ok() && n != 0) status_ = output_(std::string_view(data, n));
  }
  const Status& status() const { return status_; }

 private:
  std::function<Status(std::string_view)> output_;
  Status status_;
};

}  // namespace

struct BoundedInflater::Impl {
  Impl(size_t max_output, size_t expected_output)
      : growing(std::make_unique<GrowingSink>(&out, max_output)), stream(max_output, false, growing.get()) {
    out.reserve(std::min(expected_output, max_output));
  }
  Impl(size_t max_output, std::function<Status(std::string_view)> output)
      : to_output(std::make_unique<FunctionSink>(std::move(output))), stream(max_output, false, to_output.get()) {}
  bool output_failed() const { return to_output != nullptr && !to_output->status().ok(); }

  std::string out;
  std::unique_ptr<GrowingSink> growing;     // the first form's sink
  std::unique_ptr<FunctionSink> to_output;  // the output function's
  InflateStream stream;
};

BoundedInflater::BoundedInflater(size_t max_output, size_t expected_output)
    : impl_(std::make_unique<Impl>(max_output, expected_output)) {}

BoundedInflater::BoundedInflater(size_t max_output, std::function<Status(std::string_view)> output)
    : impl_(std::make_unique<Impl>(max_output, std::move(output))) {}

BoundedInflater::~BoundedInflater() = default;

void BoundedInflater::Feed(std::string_view piece) {
  if (impl_->output_failed()) return;  // the output's error sticks: nothing more is inflated
  impl_->stream.Feed(piece);
}

bool BoundedInflater::failed() const { return impl_->output_failed() || impl_->stream.failed(); }

Result<std::string> BoundedInflater::Finish() {
  assert(impl_->to_output == nullptr);
  URLGUARD_RETURN_IF_ERROR(impl_->stream.Finish().status());
  return std::move(impl_->out);
}

Result<size_t> BoundedInflater::FinishOutput() {
  assert(impl_->to_output != nullptr);
  if (impl_->output_failed()) return impl_->to_output->status();
  return impl_->stream.Finish();
}

}  // namespace urlguard
