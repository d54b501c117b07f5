// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// StaticFiles: GET/HEAD of a repository's public files for urlguard-server, through the Env (RealPath,
// Stat, MapReadOnly: a response is sent straight from the mapping).
//
// Spec (this server's contract, docs/verify-server.md):
//   - a servable path is 1..kMaxStaticPathSegments segments of [A-Za-z0-9._-], none empty or starting with
//     '.', at most kMaxStaticPathBytes; the raw target carries no encoded '/', '\' or NUL; its real path
//     (symlinks resolved) is a regular file strictly below the real path of the root. Anything else: 404.
//   - strong ETag = quoted lower-case hex SHA-256 of the content; If-None-Match (weak comparison, "*") -> 304.
//   - Cache-Control (docs/repository-layout.md): `public, max-age=31536000, immutable` only for the files
//     whose name carries their content's version and which are never rewritten (IsImmutableFileName:
//     snapshot-V.ugs.z, diff-F-V.ugd.z); every other file (manifest.json, manifest.sig, index.json, index.sig,
//     LIST.rpz, anything
//     unknown) may be rewritten in place and is `no-cache` (revalidated with the ETag).
//   - one byte range ("bytes=A-B", "bytes=A-", "bytes=-N") -> 206 with Content-Range; an unsatisfiable one
//     -> 416; several ranges -> the whole file (no multipart amplification).
//   - ETags are cached by (real path, size, mtime) only for files last modified at least
//     kEtagSettleSeconds ago and larger than kEtagAlwaysHashBytes: a file replaced within the same second
//     with the same size is never served with a stale tag; smaller files are hashed on every request.
//
// Thread safety: Serve() may be called from any thread; mutex_ guards the ETag cache.
#ifndef URLGUARD_SERVER_STATIC_FILES_H_
#define URLGUARD_SERVER_STATIC_FILES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/thread_annotations.h"
#include "http/request.h"
#include "platform/env.h"

namespace urlguard {

constexpr size_t kMaxStaticPathBytes = 1024;
constexpr size_t kMaxStaticPathSegments = 32;
// ETags remembered before the cache is dropped and rebuilt.
constexpr size_t kMaxEtagCacheEntries = 4096;
constexpr size_t kEtagAlwaysHashBytes = 64 * 1024;
constexpr int64_t kEtagSettleSeconds = 2;

// True when `path` (decoded) reached through `raw_target` is a servable path (spec above). Pure.
bool IsServablePath(std::string_view raw_target, std::string_view path);

// True when `name` (a file name, no '/') is a versioned file of docs/repository-layout.md that is written
// once and never changed: "snapshot-V.ugs.z" or "diff-F-V.ugd.z" with V and F decimal numbers (1 to 20
// digits). Everything else, including manifest.json, manifest.sig and LIST.rpz, is not. Pure.
bool IsImmutableFileName(std::string_view name);

// RFC 9110 13.1.2: true when If-None-Match `header` matches `etag` (weak comparison; "*" matches). Pure.
bool IfNoneMatchMatches(std::string_view header, std::string_view etag);

class StaticFiles {
 public:
  // `root_real`: the real path of the directory served, no trailing '/'. `env` is not owned.
  StaticFiles(Env* env, std::string root_real) : env_(env), root_(std::move(root_real)) {}

  // Answers GET/HEAD `req`: always a complete response (404 for anything not servable).
  HttpResponse Serve(const HttpRequest& req);

 private:
  struct CachedTag {
    uint64_t size;
    int64_t mtime;
    std::string etag;
  };

  Env* const env_;
  const std::string root_;
  Mutex mutex_;
  std::map<std::string, CachedTag> cache_ GUARDED_BY(mutex_);
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_STATIC_FILES_H_
