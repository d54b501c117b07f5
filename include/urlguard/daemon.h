// Copyright urlguard authors.
//
// urlguard::Daemon — everything urlguardd does, as a library: it keeps a data directory current (a SyncEngine on
// the schedule of urlguard/sync.h), serves lookups from it (a Client), and answers the loopback lookup API:
//   GET /v1/check?url=URL   -> 200, the verdict JSON object (urlguard/render.h: the same object as
//                              `urlguard check --json`); 400 without a url parameter
//   GET /status             -> 200, RenderListStatusJson: per-list version, entries, age, expiry, sync results
//   GET /metrics            -> 200, Prometheus text format (lookups by verdict, verification, cache, sync
//                              attempts by result, per-list version/entries/age/staleness)
//   anything else           -> 404 (405 for a method other than GET or HEAD)
//
//   auto d = urlguard::Daemon::Open(options);         // loads keys, creates the directory, takes its lock
//   auto listener = urlguard::NewLoopbackApiListener();
//   listener->Start("127.0.0.1", 8089, [&](const urlguard::ApiRequest& r) { return (*d)->Handle(r); });
//   while (!stop) { (*d)->Tick(); sleep(200 ms); }     // syncs when due, logs through options.log
//
// The HTTP transport is a seam (ApiListener): the routing, bodies and status codes live in Daemon::Handle, so the
// transport can be replaced without touching them.
//
// Thread safety: Handle() may be called from any number of threads at once (it only reads the Client and the
// counters). Tick() and Reload() are called from one thread (the daemon's main loop), concurrently with Handle().
#ifndef URLGUARD_DAEMON_H_
#define URLGUARD_DAEMON_H_

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

// Serves the lookup API over HTTP/1.1 on one address.
class URLGUARD_EXPORT ApiListener {
 public:
  virtual ~ApiListener() = default;
  // Binds `host`:`port` and serves requests on background threads, calling `handler` (from several threads at
  // once) for each. kUnavailable when the address cannot be bound. Call once.
  virtual Status Start(const std::string& host, int port, ApiHandler handler) = 0;
  // Stops serving and joins the threads. Idempotent.
  virtual void Stop() = 0;
};

// The current transport (cpp-httplib, request bodies capped at 64 KiB).
URLGUARD_EXPORT std::unique_ptr<ApiListener> NewLoopbackApiListener();

// Parses "HOST:PORT" ("[::1]:8089" for IPv6) and accepts only loopback hosts (127.0.0.0/8, ::1, localhost) and
// ports 1..65535: the lookup API is for local programs only. kInvalidArgument otherwise.
URLGUARD_EXPORT Status ParseLoopbackListenAddress(std::string_view address, std::string* host, int* port);

// Tells systemd `state` ("READY=1", "STOPPING=1", "STATUS=...") over $NOTIFY_SOCKET, as sd_notify does; a no-op
// when the variable is unset. Best effort: errors are ignored.
URLGUARD_EXPORT void NotifyServiceManager(const std::string& state);

}  // namespace urlguard

#endif  // URLGUARD_DAEMON_H_
