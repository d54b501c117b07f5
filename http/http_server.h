// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// HttpServer: the event-driven HTTP/1.1 server of urlguard-server and urlguardd, a thin layer over
// libmicrohttpd (MHD, Debian's libmicrohttpd 0.9.75). A few event threads (MHD's thread pool, each with its
// own epoll set) serve every connection; no thread is ever tied to one connection, so slow or idle clients
// cost a socket and a few KiB each, not a thread.
//
// What the layer guarantees before a handler runs (each limit a named option with a default below):
//   - listening: on a numeric TCP address (`listen`) or on a Unix-domain socket (`unix_path`, mode 0660,
//     group `unix_group`);
//   - connections: at most max_connections in total (MHD) and max_connections_per_address per PEER: the
//     client address on TCP, the peer's uid (SO_PEERCRED) on a Unix socket. A further connection from a peer
//     at its cap is accepted and closed at once, or, with evict_waiting_connections, closes that peer's
//     oldest connection still waiting for a request head instead (a dripper, an idle keep-alive), so a peer's
//     own slow connections never lock it out; it is refused only when all of them are inside a request;
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
//   - no NUL byte in the request line or a header line (400, closed): MHD 0.9.75 parses the head in place
//     into C strings, so a NUL would end the target or a value early ("/status\0junk" served as "/status").
//     The check (HeadBytesAreAccountedFor in http/framing.h) accounts for every byte of the head between the
//     strings MHD parsed; a head whose strings MHD did not leave in place (an obs-fold line) is refused too;
//   - with require_loopback_host, the Host allowlist (http/framing.h): otherwise 421.
//
// A response queued before the body was read ends the connection (MHD stops reading it; the sweeper cuts it
// kEarlyAnswerLingerSeconds later), so an early 4xx never lets the rest of the body be parsed as a next
// request. LINGERING CLOSE (as nginx's lingering_close): closing a socket with unread bytes makes the kernel
// send a reset, and a client still sending its body would lose the answer; so the layer keeps its own
// duplicate of such a connection's socket, and when MHD has sent the answer and let go, it shuts the sending
// side (FIN after the answer) and reads and discards what still comes, until the client closes, or
// kLingerMaxBytes were discarded, or kLingerSeconds passed, whichever is first (at most
// kMaxLingeringConnections at once; beyond that a connection is closed at once, as before).
// HEAD answers carry no body (MHD).
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
// Lingering close after an early answer (see above): bytes discarded at most, seconds at most, connections
// lingering at once at most.
constexpr size_t kLingerMaxBytes = size_t{8} << 20;
constexpr int kLingerSeconds = 10;
constexpr size_t kMaxLingeringConnections = 512;
// Longest unix_path (sockaddr_un::sun_path holds 108 bytes with its NUL).
constexpr size_t kMaxUnixSocketPathBytes = 107;

// See HttpServer::Start. Thread-safety and blocking rules as HttpHandler's.
using HttpHeadHandler = std::function<std::optional<HttpResponse>(const HttpRequest&)>;

struct HttpServerOptions {
  ListenAddress listen;  // numeric; port 0 picks one. Unused when unix_path is set.
  // Non-empty: listen on a Unix-domain stream socket at this absolute path instead of `listen`. The socket is
  // created mode 0660 before it accepts anything (bind, chown, chmod, then listen); a stale socket at the
  // path (nobody accepts on it) is replaced, a live one or anything that is not a socket is refused. Stop()
  // removes it. Peers are told apart by uid (SO_PEERCRED).
  std::string unix_path;
  std::string unix_group;  // the socket's group: a name or a number; "" = the process's group
  // See the connection limits above.
  bool evict_waiting_connections = false;
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
  // refuse early (a route that takes no body, a throttled client) without reading what the client sends.
  // Failures: kInvalidArgument (an option out of range, only one TLS half, a relative or too long unix_path,
  // an unknown unix_group), kIoError (cannot bind: the message has errno's text; a live socket or another
  // file at unix_path; cannot give the socket its group or mode; MHD cannot start, e.g. bad TLS data).
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
  // Connections closed for the per-peer cap so far (refused new ones and evicted waiting ones).
  uint64_t peer_limit_cuts() const;
  // Connections closed after lingering (see above) so far.
  uint64_t lingered() const;

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlguard

#endif  // URLGUARD_HTTP_HTTP_SERVER_H_
