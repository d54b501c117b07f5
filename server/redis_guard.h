// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// RedisAbuseGuard: the verify API's abuse guard (server/abuse_guard.h) shared by every verify server of a
// fleet through one Redis (docs/fleet.md "Shared abuse guard"). A client that spreads its requests over
// three servers behind a load balancer is seen by all three, with the same rule as the in-process guard:
// one bucket per second over the last 60 seconds, throttled when seen in more than `threshold` of the
// previous 59 seconds, or past `max_requests_per_second` requests in the current second.
//
// Data in Redis (docs/fleet.md pins it): one hash per client signature,
//   KEY    = key_prefix + lower-case hex of the first 16 bytes of SHA-256(signature)   (no address in clear)
//   FIELD  = a second (decimal Unix seconds), VALUE = requests of the signature in that second
// with an expiry of kRedisGuardKeyTtlSeconds refreshed on every request, so an idle client's key vanishes by
// itself and fields older than the window are dropped on the next request. Memory: one small hash (at most
// 60 fields) per client active in the last minute. The buckets are exact (no Bloom false positives), so on
// the same sequence of requests this guard decides exactly as RollingWindowGuard does below its capacity
// (redis_guard_test checks it against RollingWindowGuard). One difference: a request for a second older than
// the newest seen (threads racing) counts toward the per-second cap of its own second here, of the newest
// second there; with Redis's clock (below) that needs a request to sit on the network across a second boundary.
//
// One round trip per request: a Lua script (EVALSHA; kRedisGuardScript) reads the hash, drops stale fields,
// counts the request, refreshes the expiry and computes the decision and Retry-After inside Redis, atomically.
// Time comes from Redis (`TIME` inside the script) by default, so every node agrees on "this second" whatever
// their clocks; tests pass their own time instead (use_redis_clock = false).
//
// Cost (bench/fleet_load_bench, docs/performance.md "Fleet"; 2 shared cores): about 100 us of CPU per verify
// request (server + Redis) against about 50 us with the in-process guard, for a client active in every second
// (60 fields: HGETALL's worst case); the event thread waits for the round trip.
//
// Failure: a connect or a reply that takes longer than its timeout (a few ms), a refused connection or an
// error reply switches the guard to its in-process fallback (a LocalAbuseGuard, which records every request
// all along so it is warm), logs it once, counts it (urlguard_server_guard_fallbacks_total, _redis_errors_total)
// and reports backend="local" in urlguard_server_guard_backend. A background thread retries Redis every
// retry_interval_ms (connect, SCRIPT LOAD, PING) and switches back when it answers, logging that once too.
// While on the fallback no request waits for Redis. Verify is never refused because Redis is down: the guard
// degrades to per-node windows (a client spread over N nodes gets N times the allowance).
//
// Thread safety: every method may be called from any thread. pool_mutex_ guards the idle connections (a
// hiredis context is used by one thread at a time: borrowed from the pool, returned after the request);
// retry_mutex_ guards the retry thread's wake-up; the rest are atomics or immutable.
#ifndef URLGUARD_SERVER_REDIS_GUARD_H_
#define URLGUARD_SERVER_REDIS_GUARD_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/thread_annotations.h"
#include "server/abuse_guard.h"
#include "urlguard/env.h"
#include "urlguard/status.h"

struct redisContext;

namespace urlguard {

// Seconds a signature's hash lives after its last request (the window: nothing older is ever counted).
constexpr int kRedisGuardKeyTtlSeconds = kRollingWindowSeconds;
// Idle connections kept per guard (more are opened under load and closed when returned past the cap).
constexpr size_t kMaxRedisGuardIdleConnections = 64;
// A guard URL is at most this long; a key prefix at most this long.
constexpr size_t kMaxRedisUrlBytes = 512;
constexpr size_t kMaxRedisKeyPrefixBytes = 128;
// Timeouts accepted (milliseconds).
constexpr int kMaxRedisTimeoutMs = 10000;

// The Lua script run per request (exposed for the golden test and docs/fleet.md).
extern const char kRedisGuardScript[];

struct RedisGuardOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;  // SELECT'ed on connect when not 0
  std::string key_prefix = "urlguard:guard:";
  int connect_timeout_ms = 5;   // 1..kMaxRedisTimeoutMs
  int io_timeout_ms = 5;        // per reply, 1..kMaxRedisTimeoutMs
  int retry_interval_ms = 1000;  // while on the fallback, 1..600000
  // true: the script's clock is Redis `TIME` (every node agrees). false: the `now_seconds` passed to Check.
  bool use_redis_clock = true;
  // threshold and max_requests_per_second decide in Redis; all of it sizes the local fallback.
  RollingWindowOptions window;
  // Receives the one-line messages "switched to the local guard: WHY" / "back on redis". Null: stderr.
  std::function<void(std::string_view)> log;
  // Times the Redis round trips (urlguard_server_guard_redis_seconds). Null: Env::Default(). Not owned; outlives
  // the guard. The connect and reply timeouts are hiredis's own, and the retry thread's wait is a condition
  // variable's (docs/architecture.md §1).
  Env* env = nullptr;
};

// Parses "redis://HOST:PORT[/DB][?timeout_ms=N]" (HOST: a name, an IPv4 address or [IPv6]; PORT 1..65535; DB
// 0..15; N 1..kMaxRedisTimeoutMs, both the connect and the reply timeout) into *options (other fields
// untouched). kInvalidArgument otherwise.
Status ParseRedisUrl(std::string_view url, RedisGuardOptions* options);

class RedisAbuseGuard final : public AbuseGuard {
 public:
  // Validates the options (kInvalidArgument naming the bad one) and tries Redis once: up -> the guard starts on
  // Redis; down -> it starts on the local fallback (logged) and the retry thread takes over. Never fails because
  // Redis is down.
  static Result<std::unique_ptr<RedisAbuseGuard>> Create(RedisGuardOptions options);
  ~RedisAbuseGuard() override;  // stops the retry thread, closes the connections

  RedisAbuseGuard(const RedisAbuseGuard&) = delete;
  RedisAbuseGuard& operator=(const RedisAbuseGuard&) = delete;

  RollingWindowDecision Check(std::string_view signature, int64_t now_seconds) override;
  uint64_t unrecorded() const override { return local_.unrecorded(); }
  void AppendMetrics(PrometheusText* out) const override;

  // True while Redis decides (false: the local fallback does).
  bool using_redis() const { return on_redis_.load(std::memory_order_acquire); }
  // The Redis key of a signature (key_prefix + hex of 16 bytes of its SHA-256).
  std::string KeyOf(std::string_view signature) const;

  // Upper bounds (seconds) of the Redis round-trip histogram.
  static constexpr std::array<double, 9> kLatencyBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                           0.005,  0.01,    0.025,  0.05};

 private:
  explicit RedisAbuseGuard(RedisGuardOptions options);

  // A connected context with the script loaded; null (and *error set) when Redis does not answer in time.
  redisContext* Connect(std::string* error);
  redisContext* Borrow(std::string* error) EXCLUDES(pool_mutex_);
  void Return(redisContext* c) EXCLUDES(pool_mutex_);
  void CloseAll() EXCLUDES(pool_mutex_);
  // Runs the script for `key`; false (and *error) on any failure, after which `c` must be freed.
  bool Eval(redisContext* c, const std::string& key, int64_t now_seconds, RollingWindowDecision* out,
            std::string* error);
  void SwitchToLocal(const std::string& why);
  void RetryLoop() EXCLUDES(retry_mutex_);
  void Log(const std::string& line) const;

  const RedisGuardOptions options_;
  LocalAbuseGuard local_;  // records every request; decides while Redis is down
  const std::string script_sha_;  // SHA-1 of kRedisGuardScript, hex (what EVALSHA names)

  std::atomic<bool> on_redis_{false};
  Mutex pool_mutex_;
  std::vector<redisContext*> idle_ GUARDED_BY(pool_mutex_);

  Mutex retry_mutex_;  // what retry_cv_ waits on
  CondVar retry_cv_;
  bool stop_ GUARDED_BY(retry_mutex_) = false;
  std::thread retry_thread_;

  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> fallbacks_{0};
  std::array<std::atomic<uint64_t>, kLatencyBounds.size()> latency_buckets_{};  // non-cumulative
  std::atomic<uint64_t> latency_count_{0};
  std::atomic<uint64_t> latency_nanos_{0};
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_REDIS_GUARD_H_
