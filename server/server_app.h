// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// ServerApp: urlguard-server's request routing, independent of the network: one HttpRequest in, one
// HttpResponse out (the http/ layer's handler). Separate from the listening Server (server/server.cc) so a
// fuzzer and tests can drive every route without sockets.
//
// Routes:
//   /v1/verify          server/verify_handler.h (GET, HEAD, POST)
//   GET|HEAD /metrics   Prometheus text (server/server_metrics.h)
//   GET|HEAD /healthz   200 "ok" when a list version is loaded and answers a lookup, 503 otherwise
//   GET|HEAD /<file>    server/static_files.h
//   anything else       405 with Allow
// A request that carries a body where none is read (every route but POST /v1/verify) is answered and its
// connection closed.
//
// Thread safety: Handle() may be called from any thread.
#ifndef URLGUARD_SERVER_SERVER_APP_H_
#define URLGUARD_SERVER_SERVER_APP_H_

#include <memory>
#include <optional>
#include <string>

#include "http/http_server.h"
#include "http/request.h"
#include "server/verify_hash_source.h"
#include "server/server_metrics.h"
#include "server/static_files.h"
#include "server/verify_handler.h"
#include "urlguard/server.h"

namespace urlguard {

class ServerApp {
 public:
  // Validates the non-network options, opens REPO/public/ and the hash source: `source` when given (a test,
  // a benchmark's baseline, another backing store), else the full-hash files under REPO/private/lists/
  // (server/file_hash_source.h). Failures as Server::Start's.
  static Result<std::unique_ptr<ServerApp>> Create(const ServerOptions& options, Env* env,
                                                   std::unique_ptr<VerifyHashSource> source = nullptr);

  // Lets the hash source pick up new list versions (VerifyHashSource::Refresh). One caller at a time.
  Status RefreshHashes() { return source_->Refresh(); }

  HttpResponse Handle(const HttpRequest& req);
  // The head-time answer (HttpHeadHandler): every request that carries a body but is not POST /v1/verify
  // is answered before its body is read (and its connection closed). nullopt: read the body, then Handle().
  std::optional<HttpResponse> HandleHead(const HttpRequest& head);

  // Connections the http/ layer cut at a deadline (set by the server, for /metrics); may be null.
  void set_deadline_cuts(std::function<uint64_t()> f) { deadline_cuts_ = std::move(f); }

 private:
  ServerApp(Env* env, std::string public_root, std::unique_ptr<VerifyHashSource> source,
            VerifyHandlerOptions verify_options);
  HttpResponse Route(const HttpRequest& req);
  std::string MetricsText();

  std::unique_ptr<VerifyHashSource> source_;
  ServerMetrics metrics_;
  VerifyHandler verify_;
  StaticFiles files_;
  ListGauges gauges_;
  std::function<uint64_t()> deadline_cuts_;
};

// Checks the options a ServerApp uses (kInvalidArgument naming the option).
Status ValidateServerOptions(const ServerOptions& options);

// The http/ layer's options for a server with `options` listening on `listen` (without TLS material).
HttpServerOptions ServerHttpOptions(const ServerOptions& options, const ListenAddress& listen);

}  // namespace urlguard

#endif  // URLGUARD_SERVER_SERVER_APP_H_
