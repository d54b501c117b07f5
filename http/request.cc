// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/request.h"

#include <cassert>
#include <utility>

#include "core/ascii.h"

namespace urlguard {

namespace {

// Per-thread pool of response body strings. A body's bytes move between the pooled string objects and the
// handler's HttpResponse::body by swapping, so both the objects and their buffers are reused. Bounded: at most
// kMaxPooledBuffers objects, and a buffer grown past kMaxPooledBufferBytes (a large static file read into
// memory) is freed instead of kept.
constexpr size_t kMaxPooledBuffers = 256;
constexpr size_t kMaxPooledBufferBytes = 64 * 1024;

struct ResponseBufferPool {
  std::vector<std::string*> free;  // reserved to kMaxPooledBuffers: push_back never allocates
  ~ResponseBufferPool() {
    for (std::string* s : free) delete s;
  }
};

ResponseBufferPool& ThisThreadPool() {
  thread_local ResponseBufferPool pool;
  return pool;
}

}  // namespace

void HttpResponse::SetStaticHeader(const char* name, const char* value) {
  assert(static_header_count < kMaxStaticHeaders);
  if (static_header_count < kMaxStaticHeaders) static_headers[static_header_count++] = {name, value};
}

std::string TakeResponseBuffer() {
  std::string out;
  ResponseBufferPool& pool = ThisThreadPool();
  // The pooled objects keep circulating: a recently recycled one (near the back) lends its buffer and stays
  // in the pool empty, where AcquireResponseBuffer takes it next. A few looks, not a scan of the pool.
  size_t looks = 0;
  for (auto it = pool.free.rbegin(); it != pool.free.rend() && looks < 4; ++it, ++looks) {
    if ((*it)->capacity() > out.capacity()) {
      out.swap(**it);
      std::swap(*it, pool.free.back());  // the emptied object is the next one acquired
      break;
    }
  }
  return out;
}

std::string* AcquireResponseBuffer() {
  ResponseBufferPool& pool = ThisThreadPool();
  if (pool.free.empty()) return new std::string;
  std::string* s = pool.free.back();
  pool.free.pop_back();
  return s;
}

void RecycleResponseBuffer(std::string* buffer) {
  ResponseBufferPool& pool = ThisThreadPool();
  if (pool.free.capacity() < kMaxPooledBuffers) pool.free.reserve(kMaxPooledBuffers);
  if (pool.free.size() >= kMaxPooledBuffers || buffer->capacity() > kMaxPooledBufferBytes) {
    delete buffer;
    return;
  }
  buffer->clear();
  pool.free.push_back(buffer);
}

std::string PercentDecode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%' && i + 2 < in.size()) {
      const int hi = AsciiHexDigitValue(in[i + 1]), lo = AsciiHexDigitValue(in[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (plus_is_space && c == '+') ? ' ' : c;
  }
  return out;
}

std::optional<std::string_view> HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

std::vector<std::string_view> HttpRequest::Headers(std::string_view name) const {
  std::vector<std::string_view> out;
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) out.emplace_back(value);
  }
  return out;
}

std::vector<std::string> HttpRequest::QueryValues(std::string_view name) const {
  std::vector<std::string> out;
  std::string_view rest = query;
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (PercentDecode(pair.substr(0, eq), true) != name) continue;
    out.push_back(eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), true));
  }
  return out;
}

}  // namespace urlguard
