// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/server_app.h"

#include <algorithm>

#include "format/repository_files.h"
#include "http/http_server.h"
#include "http/prometheus.h"
#include "server/file_hash_source.h"
#include "server/pg_hash_source.h"
#include "server/redis_guard.h"
#include "server/server_response.h"
#include "server/verify_request.h"

namespace urlguard {

namespace {

constexpr int kMaxCacheSeconds = 30 * 86400;

}  // namespace

Status ValidateServerOptions(const ServerOptions& o) {
  if (o.repo_dir.empty()) return Status::InvalidArgument("server: repo_dir is empty");
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return Status::InvalidArgument("server: HTTPS needs both a certificate and a key file");
  }
  if (o.throttle_threshold < 0 || o.throttle_threshold >= kRollingWindowSeconds) {
    return Status::InvalidArgument("server: throttle threshold must be 0..59");
  }
  if (o.max_requests_per_second < 0) return Status::InvalidArgument("server: max_requests_per_second < 0");
  if (o.negative_cache_seconds < 0 || o.negative_cache_seconds > kMaxCacheSeconds ||
      o.positive_cache_seconds < 0 || o.positive_cache_seconds > kMaxCacheSeconds) {
    return Status::InvalidArgument("server: cache durations must be 0.." + std::to_string(kMaxCacheSeconds));
  }
  if (o.max_body_bytes < kMinVerifyBodyBytes || o.max_body_bytes > kMaxVerifyBodyBytes) {
    return Status::InvalidArgument("server: max_body_bytes must be " + std::to_string(kMinVerifyBodyBytes) +
                                   ".." + std::to_string(kMaxVerifyBodyBytes));
  }
  if (o.hash_refresh_millis < 100 || o.hash_refresh_millis > 3600 * 1000) {
    return Status::InvalidArgument("server: hash_refresh_millis must be 100..3600000");
  }
  if (o.worker_threads < 1 || o.worker_threads > kMaxEventThreads) {
    return Status::InvalidArgument("server: worker_threads must be 1.." + std::to_string(kMaxEventThreads));
  }
  if (o.throttle_clients_per_second < 1 ||
      o.throttle_clients_per_second > kMaxRollingWindowSignaturesPerSecond) {
    return Status::InvalidArgument("server: throttle_clients_per_second out of range");
  }
  return Status::Ok();
}

HttpServerOptions ServerHttpOptions(const ServerOptions& options, const ListenAddress& listen) {
  HttpServerOptions h;
  h.listen = listen;
  h.event_threads = options.worker_threads;
  h.max_connections = options.max_connections;
  h.max_connections_per_address = options.max_connections_per_address;
  h.idle_timeout_seconds = options.idle_timeout_seconds;
  h.head_deadline_seconds = options.head_deadline_seconds;
  h.body_deadline_seconds = options.body_deadline_seconds;
  h.max_body_bytes = options.max_body_bytes;
  return h;
}

Result<std::unique_ptr<ServerApp>> ServerApp::Create(const ServerOptions& options, Env* env,
                                                     std::unique_ptr<VerifyHashSource> source) {
  URLGUARD_RETURN_IF_ERROR(ValidateServerOptions(options));
  auto trusted = TrustedProxies::Parse(options.trusted_proxies);
  if (!trusted.ok()) return trusted.status().WithContext("server");
  const std::string public_dir = RepoPublicDir(options.repo_dir);
  auto root = env->RealPath(public_dir);
  if (!root.ok()) return Status::NotFound("server: " + public_dir + " is not a directory");
  auto info = env->Stat(*root);
  if (!info.ok() || !info->is_dir) return Status::NotFound("server: " + public_dir + " is not a directory");
  if (source == nullptr && !options.state.empty()) {  // stateless verify server (server/pg_hash_source.h)
    if (!IsPostgresStateUri(options.state)) return Status::InvalidArgument("server: state must be postgresql://...");
    auto pg = PgHashSource::Open(options.state, env);
    if (!pg.ok()) return pg.status().WithContext("server");
    source = std::move(pg).value();
  }
  if (source == nullptr) source = FileHashSource::Open(env, PrivateListsDir(options.repo_dir));

  VerifyHandlerOptions v;
  v.negative_cache_seconds = options.negative_cache_seconds;
  v.positive_cache_seconds = options.positive_cache_seconds;
  v.guard.threshold = options.throttle_threshold;
  v.guard.signatures_per_second = options.throttle_clients_per_second;
  v.guard.max_requests_per_second = static_cast<uint32_t>(options.max_requests_per_second);
  if (options.guard.substr(0, 8) == "redis://") {
    RedisGuardOptions r;
    URLGUARD_RETURN_IF_ERROR(ParseRedisUrl(options.guard, &r));
    r.window = v.guard;
    r.env = env;
    auto guard = RedisAbuseGuard::Create(std::move(r));
    if (!guard.ok()) return guard.status().WithContext("server");
    v.shared_guard = std::move(guard).value();
  } else if (options.guard != "local") {
    return Status::InvalidArgument("server: guard must be \"local\" or redis://HOST:PORT[/DB]");
  }
  v.trusted_proxies = std::move(trusted).value();
  v.env = env;
  v.clock = options.clock;
  if (!v.clock) v.clock = [env] { return static_cast<int64_t>(env->NowMonotonicNanos() / 1000000000u); };
  return std::unique_ptr<ServerApp>(new ServerApp(env, *root, std::move(source), std::move(v)));
}

ServerApp::ServerApp(Env* env, std::string public_root, std::unique_ptr<VerifyHashSource> source,
                     VerifyHandlerOptions verify_options)
    : source_(std::move(source)),
      verify_(std::move(verify_options), source_.get(), &metrics_),
      files_(env, public_root),
      gauges_(env, JoinPath(public_root, kPublicListsPath)) {}

HttpResponse ServerApp::Handle(const HttpRequest& req) {
  HttpResponse res = Route(req);
  metrics_.CountRequest(EndpointOf(req.method, req.path), res.status);
  return res;
}

std::optional<HttpResponse> ServerApp::HandleHead(const HttpRequest& head) {
  if (head.method == "POST" && head.path == "/v1/verify") return std::nullopt;
  const auto length = head.Header("Content-Length");
  const bool has_body = head.Header("Transfer-Encoding").has_value() || (length && *length != "0");
  if (!has_body) return std::nullopt;
  HttpResponse res = Handle(head);
  res.close = true;
  return res;
}

HttpResponse ServerApp::Route(const HttpRequest& req) {
  const Endpoint endpoint = EndpointOf(req.method, req.path);
  if (endpoint == kEndpointVerify) return verify_.Handle(req);
  const bool is_get = req.method == "GET" || req.method == "HEAD";
  HttpResponse res;
  if (!is_get) {
    res = JsonError(405, "method not allowed");
    res.SetHeader("Allow", "GET, HEAD");
  } else if (endpoint == kEndpointHealthz) {
    // Healthy when verify can be answered: at least one list version loaded, and a lookup works
    // (docs/fleet.md "Health").
    VerifyLookup probe;
    const uint32_t prefix = 0;
    const bool ready = !source_->Loaded().empty() && source_->Lookup({&prefix, 1}, &probe).ok();
    res.status = ready ? 200 : 503;
    res.SetHeader("Content-Type", "text/plain; charset=utf-8");
    res.SetHeader("Cache-Control", "no-store");
    res.body = ready ? "ok" : "no list loaded";
  } else if (endpoint == kEndpointMetrics) {
    res.SetHeader("Content-Type", kPrometheusContentType);
    res.SetHeader("Cache-Control", "no-store");
    res.body = MetricsText();
  } else {
    res = files_.Serve(req);
  }
  // Bodies are read only by POST /v1/verify: a request carrying one ends its connection.
  if (!req.body.empty() || req.Header("Transfer-Encoding")) res.close = true;
  return res;
}

std::string ServerApp::MetricsText() {
  PrometheusText out;
  metrics_.Append(&out);
  out.Counter("urlguard_server_throttle_unrecorded_total",
              "Verify requests the abuse guard could not record (its second was over capacity).",
              verify_.unrecorded());
  verify_.guard().AppendMetrics(&out);
  if (deadline_cuts_) {
    out.Counter("urlguard_server_deadline_cuts_total",
                "Connections cut because a request head or body missed its deadline.", deadline_cuts_());
  }
  gauges_.Append(&out);
  source_->AppendMetrics(&out);
  return out.Release();
}

}  // namespace urlguard
