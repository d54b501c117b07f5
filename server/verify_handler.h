// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// VerifyHandler: the verify API of urlguard-server (POST /v1/verify with a JSON body, GET /v1/verify?prefixes=)
// behind the abuse guard. docs/verify-server.md describes the answers.
//
// Abuse guard: every verify request is charged to its CLIENT ADDRESS (http/client_address.h: the TCP peer,
// or the X-Forwarded-For client when the peer is a trusted proxy; IPv6 by /64) and nothing a client chooses
// (no User-Agent, no cookie, no body field). The guard (server/abuse_guard.h: in-process by default, or shared
// through Redis) decides with core/rolling_window.h's rule: seen in more than `threshold` of the previous 59
// seconds, or more than max_requests_per_second requests in the current one -> 429 with Retry-After.
//
// Thread safety: Handle() may be called from any thread (the guard, the hash source and the metrics are).
#ifndef URLGUARD_SERVER_VERIFY_HANDLER_H_
#define URLGUARD_SERVER_VERIFY_HANDLER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/rolling_window.h"
#include "server/abuse_guard.h"
#include "http/client_address.h"
#include "http/request.h"
#include "server/server_metrics.h"
#include "server/verify_hash_source.h"
#include "urlguard/env.h"

namespace urlguard {

struct VerifyHandlerOptions {
  int negative_cache_seconds = 1800;
  int positive_cache_seconds = 3600;
  RollingWindowOptions guard;            // the local guard's options (when shared_guard is null)
  std::shared_ptr<AbuseGuard> shared_guard;  // the guard to use instead (e.g. RedisAbuseGuard); null: local
  TrustedProxies trusted_proxies;
  std::function<int64_t()> clock;  // seconds; required
  Env* env = nullptr;              // times each request for the latency histogram; null: Env::Default()
};

class VerifyHandler {
 public:
  // `source` and `metrics` are not owned and must outlive the handler.
  VerifyHandler(VerifyHandlerOptions options, const VerifyHashSource* source, ServerMetrics* metrics);

  // Answers a request for /v1/verify (any method: others get 405).
  HttpResponse Handle(const HttpRequest& req);

  // Requests the guard could not record (its second was over capacity).
  uint64_t unrecorded() const { return guard_->unrecorded(); }
  // The guard in use (for its metrics).
  const AbuseGuard& guard() const { return *guard_; }

 private:
  // The guard's decision for this request; a 429 in *refusal when throttled.
  bool Throttled(const HttpRequest& req, HttpResponse* refusal);
  HttpResponse Answer(std::span<const uint32_t> prefixes);
  static HttpResponse Refuse(const Status& parse_error);  // 413 for too many prefixes, else 400

  const VerifyHandlerOptions options_;
  const VerifyHashSource* const source_;
  ServerMetrics* const metrics_;
  const std::shared_ptr<AbuseGuard> guard_;  // thread-safe
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_VERIFY_HANDLER_H_
