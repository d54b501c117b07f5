// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::Server: the reference update and verification server behind `urlguard-server`, as a library
// (link urlguard_publish_lib; it is not part of liburlguard.so). It serves a publisher's repository of
// static files, answers the verify API from the full-hash store, guards that API against abuse and exposes
// Prometheus metrics. docs/verify-server.md describes the endpoints, limits and the abuse guard.
//
//   urlguard::ServerOptions options;
//   options.repo_dir = "repo";
//   options.listen = "127.0.0.1:8080";
//   auto server = urlguard::Server::Start(options);   // Result<std::unique_ptr<Server>>
//   ...
//   (*server)->Stop();
//
// Repository layout (written by urlguard-publish):
//   REPO/public/...              static files, served at "/" + their path below public/
//   REPO/private/lists/LIST/V.ugh  full-hash files (docs/full-hash-format.md), mapped read-only
// Nothing outside REPO/public/ is ever served.
//
// Thread safety: Start() returns a running server; every method may be called from any thread; Stop() is
// idempotent.
#ifndef URLGUARD_SERVER_H_
#define URLGUARD_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

struct ServerOptions {
  // Repository directory: public/ is served; the verify API answers from private/lists/LIST/V.ugh (the newest
  // complete version of each list; docs/full-hash-format.md).
  std::string repo_dir;
  // "IPV4:PORT" or "[IPV6]:PORT", a NUMERIC loopback address (127.0.0.0/8 or ::1); port 0 picks one.
  // Public exposure goes through a reverse proxy (see trusted_proxies).
  std::string listen = "127.0.0.1:0";
  // Both set: HTTPS (PEM; the certificate file may hold a chain). TLS 1.2 and 1.3 (GnuTLS through
  // libmicrohttpd).
  std::string tls_cert_file, tls_key_file;

  // ---- abuse guard of the verify API (keyed on the client address only; IPv6 by /64) ----
  // Throttled when active in more than this many of the previous 59 seconds (0..59; 59 never throttles).
  int throttle_threshold = 30;
  // Throttled for the rest of a second after this many verify requests in it (0: no per-second limit).
  int max_requests_per_second = 100;
  // Distinct clients per second the guard is sized for.
  uint64_t throttle_clients_per_second = 10000;
  // Addresses of reverse proxies whose X-Forwarded-For is believed (the rightmost address that is not
  // itself a trusted proxy is the client). Numeric IPv4/IPv6 addresses; empty: X-Forwarded-For is ignored.
  std::vector<std::string> trusted_proxies;
  // Where the guard keeps its windows: "local" (this process's memory, the default) or
  // "redis://HOST:PORT[/DB][?timeout_ms=N]"
  // (shared by every server using that Redis; falls back to local while Redis is unreachable and returns by
  // itself; docs/fleet.md).
  std::string guard = "local";
  // Seconds for the guard (tests inject time). Empty: a monotonic clock. Called from the event threads.
  std::function<int64_t()> clock;

  // ---- verify answers ----
  int negative_cache_seconds = 1800;  // 0..30 days
  int positive_cache_seconds = 3600;  // 0..30 days
  size_t max_body_bytes = 16384;      // 256..1 MiB: a verify request body
  // How often private/lists/ is checked for new full-hash files (each is validated completely before it
  // answers). 100 ms .. 1 hour.
  int hash_refresh_millis = 1000;
  // Empty: the full hashes come from REPO/private/lists/ (above). "postgresql://...": from the publishers'
  // PostgreSQL state instead (docs/postgres-schema.md "Verify servers"): each list's newest committed version,
  // loaded completely into memory before it answers, polled every hash_refresh_millis; while PostgreSQL is down
  // the loaded versions keep answering. Start fails with kUnavailable when PostgreSQL cannot be reached.
  std::string state;

  // ---- connections (docs/verify-server.md "Limits") ----
  int worker_threads = 2;                    // event threads, 1..64 (each serves many connections)
  unsigned max_connections = 4096;           // in total
  unsigned max_connections_per_address = 64;  // per client (TCP peer) address
  int idle_timeout_seconds = 15;
  int head_deadline_seconds = 10;  // the request head must be complete within this
  int body_deadline_seconds = 20;  // the body within this after the head
};

class Server {
 public:
  // Validates `options`, opens the store, binds and starts serving; returns once the server accepts
  // connections. Failures: kInvalidArgument (a bad option, a listen address that is not numeric loopback,
  // only one TLS file, a TLS key that does not match the certificate), kNotFound (REPO/public/ or the
  // store missing), kFailedPrecondition / kCorruption (the store), kIoError (cannot bind, cannot read the
  // TLS files).
  static Result<std::unique_ptr<Server>> Start(const ServerOptions& options);

  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The bound port (the picked one when the listen port was 0).
  int port() const;
  // True when serving HTTPS.
  bool tls() const;
  // "http://127.0.0.1:PORT" or "https://[::1]:PORT".
  std::string base_url() const;
  // Stops accepting, closes every connection and joins every thread. Idempotent. Not from a request.
  void Stop();
  // Blocks until Stop() has been called (from another thread).
  void Wait();

  class Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_H_
