// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::Daemon — everything urlguardd does, as a library: it keeps a data directory current (a SyncEngine on
// the schedule of urlguard/sync.h), serves lookups from it (a Client), and answers the loopback lookup API:
//   GET /v1/check?url=URL   -> 200, the verdict JSON object (urlguard/render.h: the same object as
//                              `urlguard check --json`); 400 without a url parameter
//   GET /status             -> 200, RenderListStatusJson: per-list version, entries, age, expiry, sync results
//   GET /metrics            -> 200, Prometheus text format (lookups by verdict, verification, cache, sync
//                              attempts by result, per-list installed version/entries/age/staleness)
//   anything else           -> 404 (405 for a method other than GET or HEAD, OPTIONS included)
//
//   auto d = urlguard::Daemon::Open(options);         // loads keys, creates the directory, takes its lock
//   auto listener = urlguard::NewLoopbackApiListener("127.0.0.1:8089");  // parses; kInvalidArgument
//   (*listener)->Start([&](const urlguard::ApiRequest& r) { return (*d)->Handle(r); });
//   while (!stop) { (*d)->Tick(); wait for a signal up to 200 ms; }     // syncs when due, logs via options.log
//
// Readiness (urlguardd --wait-for-first-sync): a thread waits in WaitUntilReady(timeout) and then says READY=1,
// while the main loop runs SyncNowUnlessReady() once and then Tick() as usual.
//
// The HTTP transport is a seam (ApiListener): the routing, bodies and status codes live in Daemon::Handle, so the
// transport can be replaced without touching them. What reaches Handle has passed the transport's checks (see
// NewLoopbackApiListener): the API is for local programs, never for web pages a local browser shows, so a
// request naming any other Host (DNS rebinding) is refused and no answer ever grants CORS access.
//
// Thread safety: Handle() may be called from any number of threads at once (it only reads the Client and the
// counters). Tick(), SyncNowUnlessReady() and Reload() are called from one thread (the daemon's main loop),
// concurrently with Handle(), Ready() and WaitUntilReady() (see each).
#ifndef URLGUARD_DAEMON_H_
#define URLGUARD_DAEMON_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/client.h"
#include "urlguard/export.h"
#include "urlguard/status.h"
#include "urlguard/sync.h"

namespace urlguard {

class Env;

struct DaemonOptions {
  std::string data_dir;                      // required; created when missing
  std::string server_url;                    // required: update and verification server
  std::vector<std::string> public_key_files; // required: trusted PEM public keys (re-read by Reload)
  std::vector<std::string> rotation_files;   // key-rotation statements, in chain order (re-read by Reload)
  std::vector<std::string> lists;            // lists to keep current; empty = those installed, or when none
                                             // is, those of the server's list index (urlguard/sync.h)
  std::string ca_bundle;                     // "" = the system's
  std::string proxy;                         // "" = libcurl's default (http_proxy, https_proxy, no_proxy, ...)
  // One line per event (sync results, reloads, warnings), without a trailing newline. Called from the thread
  // that calls Open, Tick or Reload. Empty: events are dropped.
  std::function<void(const std::string&)> log;
  Env* env = nullptr;                        // nullptr = the process default; not owned, must outlive the Daemon
};

// One request to the lookup API, as the transport parsed it.
struct ApiRequest {
  std::string method;                        // "GET", "HEAD", ...
  std::string path;                          // without the query, e.g. "/v1/check"
  std::map<std::string, std::string> query;  // decoded query parameters (the first of repeated names)
};

struct ApiResponse {
  int status = 200;
  std::string content_type;  // e.g. "application/json"
  std::string body;
};

class URLGUARD_EXPORT Daemon {
 public:
  // Loads the trusted keys (urlguard/keys.h), creates the data directory, opens the sync engine (taking the
  // directory's single-writer lock) and a client on it. Failures: the key loading failures of
  // TrustedKeys::LoadFiles; kFailedPrecondition "another urlguard process ..." when the lock is held; the
  // failures of SyncEngine::Open and Client::Open. Recoverable warnings go to options.log.
  static Result<std::unique_ptr<Daemon>> Open(const DaemonOptions& options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Answers one lookup-API request (see the table above). Never fails: problems are HTTP status codes.
  ApiResponse Handle(const ApiRequest& request) const;

  // Runs the lists that are due (logging one line per report and the next due time), then lets the client swap
  // in what was installed. Cheap when nothing is due. Returns the reports of this tick (empty when none ran).
  std::vector<SyncReport> Tick();

  // Re-reads the key and rotation files and re-opens the sync engine with them (SIGHUP), then refreshes the
  // client. When the keys cannot be loaded the old ones stay and the error is logged (ok is returned); a
  // failure to re-open the engine is returned (the daemon cannot sync any more and should stop).
  Status Reload();

  // ---- readiness (urlguardd --wait-for-first-sync) ----
  // "Subscribed" = DaemonOptions::lists, else the lists installed at Open, else (discovery) those the server's
  // signed list index named once a pass fetched it (none before: not ready).

  // True when every subscribed list is installed, intact and within its signed expiry (ListsReady in
  // urlguard/client.h): the verdicts are not stale. Reads the data directory's schedule file. Any thread.
  bool Ready() const;

  // When not Ready(), runs a sync pass of every subscribed list (and the list discovery) now instead of after the
  // start-up jitter, then lets the client swap in what was installed; nothing when Ready(). Each list's schedule
  // then goes on as after any attempt: a failure backs off (urlguard/sync.h), it is not retried sooner. Returns
  // the pass's reports. The Tick thread, like Tick.
  std::vector<SyncReport> SyncNowUnlessReady();

  // Blocks until Ready() (ok), until `timeout_ms` (>= 0) has passed, or until CancelWaits(). kUnavailable
  // "not ready after N s: NAME (REASON), ..." on timeout (N ms when not whole seconds) (naming the lists in the way, or "the list index was not
  // fetched yet"); kFailedPrecondition after CancelWaits. Wakes at the end of each pass and every 200 ms. Any
  // thread other than the Tick thread (Tick installs what it waits for).
  Status WaitUntilReady(int64_t timeout_ms) const;
  // Makes every WaitUntilReady return now, and later ones at once (before stopping). Any thread.
  void CancelWaits();

  // Lists installed in the data directory (for the start-up log line and READY status).
  size_t installed_lists() const;
  const Client& client() const;

 private:
  struct Impl;
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- transport seam ----------------------------------------------------------------------------------------

using ApiHandler = std::function<ApiResponse(const ApiRequest&)>;

// Serves the lookup API over HTTP/1.1 on one loopback address or one Unix-domain socket.
class URLGUARD_EXPORT ApiListener {
 public:
  virtual ~ApiListener() = default;
  // Binds the address given at creation and serves requests on background event threads, calling `handler`
  // (from several threads at once; it must not block for long) for each request that passed the transport's
  // checks. kIoError when the address cannot be bound (the message has errno's text). Call once.
  virtual Status Start(ApiHandler handler) = 0;
  // The bound port (the system's choice when the address said port 0); 0 before Start.
  virtual int port() const = 0;
  // "http://127.0.0.1:8089" with the bound port; "unix:/run/urlguard/api.sock" for a Unix socket.
  virtual std::string url() const = 0;
  // Stops accepting, closes every connection and joins the threads. Idempotent.
  virtual void Stop() = 0;
};

// The transport: the project's event-driven HTTP layer (libmicrohttpd; a few event threads, no thread per
// connection). `listen_address` is "IPV4:PORT" or "[IPV6]:PORT" with a NUMERIC loopback host (127.0.0.0/8,
// ::1) and a port 0..65535 (0: the system picks one), parsed by the one listen-address parser of urlguard's
// servers; names are refused ("localhost:8089", "127.attacker.invalid:8089": a name is resolved at bind time
// and may resolve anywhere). Failures: kInvalidArgument naming the problem.
//
// Before `handler` sees a request, the transport has enforced, each answered as shown and the connection
// closed:
//   - a Host header naming a numeric loopback address or "localhost" WITH the bound port, exactly one
//     (else 421: a page on attacker.example that a DNS-rebinding attack points at 127.0.0.1 sends its own
//     name);
//   - unambiguous framing (two Content-Length headers, Content-Length with Transfer-Encoding, any coding
//     but "chunked": 400, so nothing hidden in a body is answered);
//   - GET or HEAD (else 405 before any body byte is read) and no request body (413);
//   - no NUL byte in the request line or a header (400: it would end the target or a value early);
//   - a complete head within kApiHeadDeadlineSeconds of connecting (or of the previous answer on a kept-alive
//     connection), however slowly bytes drip in (cut); heads up to kApiMaxHeadBytes (431/414);
//   - at most kApiMaxConnections connections, kApiMaxConnectionsPerAddress from one source address. Every
//     local program connects from 127.0.0.1, so at that cap a new connection closes the address's oldest
//     connection still waiting for a head (a dripper, an idle keep-alive) rather than being refused: one
//     process dripping heads cannot lock the others out; it is refused only while all of them are inside a
//     request. Programs that must not share a budget with other local programs use the Unix socket
//     (NewUnixApiListener), which caps each uid on its own.
// An answer given before the request was read (400, 405, 413, 421) is followed by a lingering close: the
// daemon reads and discards what the client still sends (bounded) so the client gets the answer, not a reset.
// Answers never carry Access-Control-* headers (no CORS grant, also not to a preflight OPTIONS, which gets
// 405), and carry "Cache-Control: no-store" and "X-Content-Type-Options: nosniff".
URLGUARD_EXPORT Result<std::unique_ptr<ApiListener>> NewLoopbackApiListener(std::string_view listen_address);

// The same API on a Unix-domain socket at `path` (absolute, at most 107 bytes), for local programs that must
// not share a connection budget with every other local program. Start() creates the socket mode 0660 with
// group `group` (a name or a number; "" = the daemon's group) before it accepts anything; who may connect is
// decided by the file's mode, so the directory holding it should be writable by the daemon only (systemd:
// RuntimeDirectory=). A stale socket left at `path` is replaced; a live one or any other file is refused
// (kIoError). Stop() removes the socket. Peers are identified by their uid (SO_PEERCRED): at most
// kApiMaxConnectionsPerPeer connections per uid, with the eviction rule above, so one user's programs cannot
// starve another's. The transport's other checks are those above, except the Host allowlist: no web page can
// reach a Unix socket (there is no name to rebind), and clients send "Host: localhost" without a port.
// Failures: kInvalidArgument (a relative or too long path, checked here; an unknown group, from Start()).
URLGUARD_EXPORT Result<std::unique_ptr<ApiListener>> NewUnixApiListener(std::string_view path,
                                                                         std::string_view group = {});

// The transport's limits (see NewLoopbackApiListener). A local client sends its head in well under a
// millisecond; a dripper loses its slot after kApiHeadDeadlineSeconds, and an idle keep-alive connection too.
inline constexpr int kApiHeadDeadlineSeconds = 2;
inline constexpr int kApiIdleTimeoutSeconds = 15;
inline constexpr size_t kApiMaxHeadBytes = 16 * 1024;  // a URL to check travels in the request line
inline constexpr unsigned kApiMaxConnections = 1024;
inline constexpr unsigned kApiMaxConnectionsPerAddress = 64;
inline constexpr unsigned kApiMaxConnectionsPerPeer = 64;  // per uid, on the Unix socket
inline constexpr int kApiEventThreads = 2;

}  // namespace urlguard

#endif  // URLGUARD_DAEMON_H_
