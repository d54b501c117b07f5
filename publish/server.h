// Copyright urlguard authors.
//
// The reference server behind `urlguard-server` (ARCHITECTURE §5, §6, §8): serves a publisher's repository of
// static files, answers the verify API from the full-hash store, guards that API with a rolling-window abuse
// detector and exposes Prometheus metrics. HTTP is cpp-httplib (Debian's libcpp-httplib 0.11).
//
// Repository layout (written by urlguard-publish):
//   REPO/public/...              static files, served at "/" + their path below public/
//   REPO/public/v1/lists/<list>/manifest.json   also read for the per-list metrics ("version", "entries")
//   REPO/private/hashes.sqlite   the full-hash store (publish/hash_store.h), opened read-only
// Nothing outside REPO/public/ is ever served: a path must be 1-32 segments of [A-Za-z0-9._-], none starting
// with '.', with no encoded '/', '\' or NUL in the raw target, and its real path (symlinks resolved) must
// stay below the real path of REPO/public/; everything else is 404.
//
// Endpoints:
//   GET|HEAD /<file>    static file; strong ETag = quoted lower-case hex SHA-256 of the content (hashed
//                       once per file identity: device, inode, size, mtime), If-None-Match -> 304.
//                       Cache-Control: names starting with "manifest" (the manifest and its signature change
//                       in place) `no-cache`; every other name carries its version:
//                       `public, max-age=31536000, immutable`. One byte range is honoured; a multi-range
//                       request gets the whole file.
//   POST /v1/verify     body {"prefixes": ["a1b2c3d4", ...]} (1 to 30 prefixes of 8 hex digits) -> 200
//                       {"matches": [{"sha256", "list", "layer", "threat", "cache_seconds"}...],
//                        "negative_cache_seconds": N}; a malformed body 400 {"error": "..."}; more than 30
//                       prefixes or a body over max_body_bytes 413; a throttled client 429 + Retry-After.
//   GET /v1/verify?prefixes=a1b2c3d4,...   the same.
//   GET /metrics        Prometheus text format 0.0.4.
//   GET /healthz        200 "ok".
//
// Bounded input. cpp-httplib 0.11 buffers a request line or header of any length and does not apply its
// payload limit to chunked bodies, so the server reads every connection through its own stream: each request
// may consume at most kMaxRequestHeadBytes + 2 x max_body_bytes bytes from the wire (a request past it is cut
// and the connection closed), the verify body is collected by the handler under max_body_bytes, a request
// whose body the server does not read closes its connection, and a connection serves at most
// kKeepAliveMaxRequests requests with kKeepAliveTimeoutSeconds idle time. Accepted connections wait in a
// queue of at most kMaxPendingConnections (the accept loop blocks beyond it). Multi-range requests are
// reduced to the whole response (no multipart amplification).
//
// Thread safety: Start() returns a running server; port() may be called from any thread; Stop() is idempotent
// and may be called from any thread but not from a request handler.
#ifndef URLGUARD_PUBLISH_SERVER_H_
#define URLGUARD_PUBLISH_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// Verify API limits (ARCHITECTURE §6).
constexpr size_t kMaxVerifyPrefixes = 30;
constexpr size_t kVerifyPrefixHexDigits = 8;
// The largest max_body_bytes a server accepts, and what ParseVerifyRequest refuses past.
constexpr size_t kMaxVerifyBodyBytes = size_t{1} << 20;
constexpr size_t kMinVerifyBodyBytes = 256;
// Request line plus headers; beyond it (plus the body allowance) the connection is cut.
constexpr size_t kMaxRequestHeadBytes = 32 * 1024;
constexpr size_t kKeepAliveMaxRequests = 1000;
constexpr int kKeepAliveTimeoutSeconds = 5;
constexpr int kReadTimeoutSeconds = 5;  // per read or write on a connection, and for the TLS handshake
constexpr size_t kMaxPendingConnections = 1024;
constexpr int kMaxWorkerThreads = 256;
constexpr int kMaxCacheSeconds = 30 * 86400;
// A static path: at most this long, this many segments.
constexpr size_t kMaxStaticPathBytes = 1024;
constexpr size_t kMaxStaticPathSegments = 32;
// Per-list metrics read each manifest.json up to this size, for at most this many lists.
constexpr size_t kMaxManifestBytes = size_t{1} << 20;
constexpr size_t kMaxMetricsLists = 1024;
// ETags remembered (by file identity) before the cache is dropped and rebuilt.
constexpr size_t kMaxEtagCacheEntries = 4096;
// User-Agent bytes that go into the abuse guard's client signature.
constexpr size_t kMaxSignatureUserAgentBytes = 512;

// Parses a verify request body: a JSON object whose "prefixes" member is an array of 1 to kMaxVerifyPrefixes
// strings of exactly 8 hex digits (either case); other members are ignored. Returns the prefixes as
// big-endian integers, in request order, duplicates kept. Failures: kResourceExhausted (more than
// kMaxVerifyPrefixes prefixes, or a body over kMaxVerifyBodyBytes), kInvalidArgument (anything else
// malformed; the message names the problem, never echoes input). Pure; never throws; safe on arbitrary bytes.
Result<std::vector<uint32_t>> ParseVerifyRequest(std::string_view body);

// The GET form: "a1b2c3d4,00ff00ff" (comma-separated, no spaces). Same results and failures.
Result<std::vector<uint32_t>> ParseVerifyPrefixList(std::string_view list);

// True for a numeric loopback address: IPv4 127.0.0.0/8 ("127.0.0.1") or IPv6 "::1". Host names, including
// "localhost", are not addresses and return false.
bool IsLoopbackAddress(std::string_view host);

struct ServerOptions {
  std::string repo_dir;
  std::string host = "127.0.0.1";           // must be a loopback address (a workplace rule)
  int port = 0;                             // 0 = let the system pick; see Server::port()
  std::string tls_cert_file, tls_key_file;  // both set -> HTTPS (PEM; the cert file may hold a chain)
  int throttle_threshold = 30;              // 0..59, see core/rolling_window.h (59 disables throttling)
  int negative_cache_seconds = 1800;        // 0..kMaxCacheSeconds
  int positive_cache_seconds = 3600;        // 0..kMaxCacheSeconds
  size_t max_body_bytes = 16384;            // kMinVerifyBodyBytes..kMaxVerifyBodyBytes
  int worker_threads = 8;                   // 1..kMaxWorkerThreads; one connection per thread at a time
  // Seconds for the abuse guard (tests inject time). Empty: a monotonic clock. Called from worker threads.
  std::function<int64_t()> clock;
  // Distinct clients per second the abuse guard is sized for (RollingWindowOptions::signatures_per_second).
  uint64_t throttle_clients_per_second = 10000;
};

class Server {
 public:
  // Validates `options`, opens the store, binds and starts serving on a background thread; returns once the
  // server accepts connections. Failures: kInvalidArgument (bad option, a host that is not a loopback
  // address, only one of the TLS files), kNotFound (REPO/public/ or the store missing), kFailedPrecondition /
  // kCorruption (the store), kIoError (cannot bind, cannot load the TLS certificate or key).
  static Result<std::unique_ptr<Server>> Start(const ServerOptions& options);

  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The bound port (the picked one when options.port was 0).
  int port() const;
  // True when serving HTTPS.
  bool tls() const;
  // Stops accepting, finishes or cuts the connections in flight (each within its read/keep-alive timeout)
  // and joins every thread. Idempotent.
  void Stop();

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_SERVER_H_
