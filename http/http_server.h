// Copyright urlguard authors.
//
// HttpServer: the event-driven HTTP/1.1 server of urlguard-server and urlguardd, a thin layer over
// libmicrohttpd (MHD, Debian's libmicrohttpd 0.9.75). A few event threads (MHD's thread pool, each with its
// own epoll set) serve every connection; no thread is ever tied to one connection, so slow or idle clients
// cost a socket and a few KiB each, not a thread.
//
// What the layer guarantees before a handler runs (each limit a named option with a default below):
//   - connections: at most max_connections in total and max_connections_per_address per client address
//     (further connections are accepted and closed at once by MHD);
//   - idle_timeout_seconds without any byte in either direction closes a connection (MHD's own timeout);
//   - DEADLINES that a dripping client cannot extend: the request head must be complete within
//     head_deadline_seconds of the connection's start (or of the end of the previous response on a kept-alive
//     connection), and the body within body_deadline_seconds of the end of the head. A sweeper thread cuts
//     (shutdown(2)) any connection past its deadline, however recently it sent a byte;
//   - the head (request line + headers) fits max_head_bytes (MHD's per-connection memory pool; MHD answers a
//     larger head with 414 or 431 and closes);
//   - the body fits max_body_bytes: a body over it (declared or chunked) is read and discarded up to
//     kMaxDiscardedBodyBytes more and answered 413 (a client sending its whole body before reading gets the
//     answer, not a reset); a declared length beyond that is answered 413 before any body byte is read;
//     a chunked body growing beyond that is cut without an answer; all close the connection;
//   - strict framing (http/framing.h): ambiguous framing is answered 400 and the connection closed, so no
//     request hidden in a body is ever answered;
//   - with require_loopback_host, the Host allowlist (http/framing.h): otherwise 421.
//
// A response queued before the body was read ends the connection (MHD stops reading it; the sweeper cuts it
// kEarlyAnswerLingerSeconds later), so an early 4xx never lets the rest of the body be parsed as a next
// request. HEAD answers carry no body (MHD).
//
// TLS: MHD is built with GnuTLS on Debian (MHD_FEATURE_TLS); tls_cert_pem / tls_key_pem switch it on.
//
// Thread safety: Start() returns a running server; port() from any thread; Stop() is idempotent, from any
// thread except a handler.
#ifndef URLGUARD_HTTP_HTTP_SERVER_H_
#define URLGUARD_HTTP_HTTP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "http/listen_address.h"
#include "http/request.h"
#include "urlguard/status.h"

namespace urlguard {

// Bytes of a chunked body discarded past max_body_bytes to still answer 413 (beyond it: cut).
constexpr size_t kMaxDiscardedBodyBytes = size_t{1} << 20;
// A connection answered before its body was read is cut this long after the answer.
constexpr int kEarlyAnswerLingerSeconds = 2;
// Ranges of the options below.
constexpr size_t kMinHeadBytes = 4096, kMaxHeadBytes = size_t{1} << 20;
constexpr size_t kMaxHttpBodyBytes = size_t{64} << 20;
constexpr int kMaxEventThreads = 64;
constexpr unsigned kMaxHttpConnections = 65536;
// How often the deadline sweeper looks at the connections.
constexpr int kDeadlineSweepMillis = 100;

// See HttpServer::Start. Thread-safety and blocking rules as HttpHandler's.
using HttpHeadHandler = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

struct HttpServerOptions {
  ListenAddress listen;  // numeric; port 0 picks one
  int event_threads = 2;  // MHD thread pool size, 1..kMaxEventThreads
  unsigned max_connections = 4096;
  unsigned max_connections_per_address = 64;
  int idle_timeout_seconds = 15;
  int head_deadline_seconds = 10;
  int body_deadline_seconds = 20;
  size_t max_head_bytes = 32 * 1024;  // kMinHeadBytes..kMaxHeadBytes
  size_t max_body_bytes = 16 * 1024;  // 0..kMaxHttpBodyBytes
  int listen_backlog = 1024;
  bool require_loopback_host = false;
  std::string tls_cert_pem, tls_key_pem;  // both set: HTTPS (PEM text; the certificate may be a chain)
};

class HttpServer {
 public:
  // Binds and starts serving with `handler`. `head_handler` (may be empty) sees each request once its head
  // is complete and before any body byte is read (HttpRequest::body is empty then); when it returns a
  // response, that response is sent at once, the body is never read and the connection closes. Use it to
  // refuse early (a route that takes no body, a throttled client) without reading what the client sends. Failures: kInvalidArgument (an option out of range, only one
  // TLS half), kIoError (cannot bind: the message has errno's text; MHD cannot start, e.g. bad TLS data).
  static Result<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options, HttpHandler handler,
                                                   HttpHeadHandler head_handler = {});

  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const;
  bool tls() const;
  // Stops accepting, closes every connection and joins every thread. Idempotent.
  void Stop();

  // Connections cut by the deadline sweeper so far.
  uint64_t deadline_cuts() const;

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlguard

#endif  // URLGUARD_HTTP_HTTP_SERVER_H_
