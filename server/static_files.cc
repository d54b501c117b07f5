// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/static_files.h"

#include <algorithm>
#include <cctype>

#include "core/sha256.h"
#include "format/repository_files.h"
#include "server/server_response.h"

namespace urlguard {

bool IsServablePath(std::string_view raw_target, std::string_view path) {
  const std::string_view raw = raw_target.substr(0, raw_target.find('?'));
  for (size_t i = 0; i + 2 < raw.size(); ++i) {
    if (raw[i] != '%') continue;
    const char a = raw[i + 1], b = static_cast<char>(std::tolower(static_cast<unsigned char>(raw[i + 2])));
    if ((a == '2' && b == 'f') || (a == '5' && b == 'c') || (a == '0' && b == '0')) return false;
  }
  if (path.size() < 2 || path.size() > kMaxStaticPathBytes || path[0] != '/') return false;
  size_t segments = 0;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    const std::string_view seg =
        path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (seg.empty() || seg[0] == '.' || ++segments > kMaxStaticPathSegments) return false;
    for (char c : seg) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

bool IfNoneMatchMatches(std::string_view header, std::string_view etag) {
  size_t start = 0;
  while (start < header.size()) {
    size_t comma = header.find(',', start);
    if (comma == std::string_view::npos) comma = header.size();
    std::string_view tag = header.substr(start, comma - start);
    while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
    while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == etag) return true;
    start = comma + 1;
  }
  return false;
}

bool IsImmutableFileName(std::string_view name) {
  // Spec (docs/repository-layout.md): snapshot-V.ugs.z and diff-F-V.ugd.z are written once under a new name
  // and never rewritten; manifest.json, manifest.sig and LIST.rpz are rewritten in place.
  return IsSnapshotFileName(name) || IsDiffFileName(name) || IsRangeDiffFileName(name);
}

namespace {

std::string_view BaseNameOf(std::string_view path) { return path.substr(path.rfind('/') + 1); }

const char* ContentTypeFor(std::string_view name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".json")) return "application/json";
  if (ends_with(".txt")) return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

// A single byte range of a `size`-byte file. kWhole: absent, malformed or several ranges (answer in full).
enum class RangeKind { kWhole, kRange, kUnsatisfiable };

RangeKind ParseSingleRange(std::string_view header, uint64_t size, uint64_t* first, uint64_t* last) {
  constexpr std::string_view kPrefix = "bytes=";
  if (header.substr(0, kPrefix.size()) != kPrefix) return RangeKind::kWhole;
  const std::string_view spec = header.substr(kPrefix.size());
  if (spec.find(',') != std::string_view::npos) return RangeKind::kWhole;
  const size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return RangeKind::kWhole;
  auto parse = [](std::string_view digits, uint64_t* out) {
    if (digits.empty() || digits.size() > 18) return false;
    uint64_t v = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    *out = v;
    return true;
  };
  const std::string_view a = spec.substr(0, dash), b = spec.substr(dash + 1);
  uint64_t x = 0, y = 0;
  if (a.empty()) {  // suffix: the last N bytes
    if (!parse(b, &y)) return RangeKind::kWhole;
    if (y == 0 || size == 0) return RangeKind::kUnsatisfiable;
    *first = size - std::min(y, size);
    *last = size - 1;
    return RangeKind::kRange;
  }
  if (!parse(a, &x)) return RangeKind::kWhole;
  if (b.empty()) {
    y = size == 0 ? 0 : size - 1;
  } else if (!parse(b, &y) || y < x) {
    return RangeKind::kWhole;
  }
  if (x >= size) return RangeKind::kUnsatisfiable;
  *first = x;
  *last = std::min(y, size - 1);
  return RangeKind::kRange;
}

HttpResponse NotFound() { return JsonError(404, "not found"); }

}  // namespace

HttpResponse StaticFiles::Serve(const HttpRequest& req) {
  if (!IsServablePath(req.target, req.path)) return NotFound();
  auto real = env_->RealPath(root_ + req.path);
  if (!real.ok()) return NotFound();
  // Symlinks may point anywhere; the resolved file must still be below the root.
  if (real->size() <= root_.size() + 1 || real->compare(0, root_.size(), root_) != 0 ||
      (*real)[root_.size()] != '/') {
    return NotFound();
  }
  auto info = env_->Stat(*real);  // the real path has no symlink left; a FIFO or directory is refused here
  if (!info.ok() || !info->is_regular) return NotFound();

  std::shared_ptr<const MappedFile> mapping;
  uint64_t size = 0;
  std::string etag;
  if (info->size > 0) {
    auto mapped = env_->MapReadOnly(*real);
    if (!mapped.ok()) return NotFound();
    mapping = std::move(mapped).value();
    size = mapping->size();
  }
  // The tag of exactly the bytes served: of the mapping (the file may be replaced between Stat and Map; a
  // cached tag is used only when the mapping has the size Stat saw).
  const bool cacheable = size == info->size && size > kEtagAlwaysHashBytes &&
                         info->mtime_unix + kEtagSettleSeconds <= env_->NowUnixSeconds();
  if (cacheable) {
    MutexLock lock(&mutex_);
    auto it = cache_.find(*real);
    if (it != cache_.end() && it->second.size == size && it->second.mtime == info->mtime_unix) {
      etag = it->second.etag;
    }
  }
  if (etag.empty()) {
    etag = "\"" + ToHex(Sha256(size == 0 ? nullptr : mapping->data(), size)) + "\"";
    if (cacheable) {
      MutexLock lock(&mutex_);
      if (cache_.size() >= kMaxEtagCacheEntries) cache_.clear();
      cache_[*real] = {size, info->mtime_unix, etag};
    }
  }

  const std::string_view name = BaseNameOf(req.path);
  HttpResponse res;
  res.SetHeader("ETag", etag);
  res.SetHeader("Cache-Control", IsImmutableFileName(name) ? "public, max-age=31536000, immutable" : "no-cache");
  if (const auto inm = req.Header("If-None-Match"); inm && IfNoneMatchMatches(*inm, etag)) {
    res.status = 304;
    return res;
  }
  res.SetHeader("Content-Type", ContentTypeFor(name));
  res.SetHeader("Accept-Ranges", "bytes");
  uint64_t first = 0, last = size == 0 ? 0 : size - 1;
  const auto range = req.Header("Range");
  const RangeKind kind = range ? ParseSingleRange(*range, size, &first, &last) : RangeKind::kWhole;
  if (kind == RangeKind::kUnsatisfiable) {
    HttpResponse refused = JsonError(416, "range not satisfiable");
    refused.SetHeader("Content-Range", "bytes */" + std::to_string(size));
    return refused;
  }
  res.status = 200;
  if (kind == RangeKind::kRange) {
    res.status = 206;
    res.SetHeader("Content-Range",
                  "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(size));
  }
  if (size > 0) {
    res.file = std::move(mapping);
    res.file_offset = static_cast<size_t>(first);
    res.file_length = static_cast<size_t>(last - first + 1);
  }
  return res;
}

}  // namespace urlguard
