// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// AbuseGuard: the verify API's abuse guard as the verify handler sees it. One call per verify request:
// Check(signature, now) records the request of a client signature and says allow, or throttle with a
// Retry-After. The rule is core/rolling_window.h's, whatever the implementation: one bucket per second over
// the last 60 seconds, a signature seen in more than `threshold` of the previous 59 seconds is throttled, and
// so is a signature past `max_requests_per_second` requests in the current second (Retry-After 1).
//
// Implementations:
//   LocalAbuseGuard (here)          this process's memory (RollingWindowGuard): the default, and the fallback
//   RedisAbuseGuard (redis_guard.h)  shared by every verify server of a fleet through Redis
//
// Thread safety: every method of every implementation may be called from any thread.
#ifndef URLGUARD_SERVER_ABUSE_GUARD_H_
#define URLGUARD_SERVER_ABUSE_GUARD_H_

#include <cstdint>
#include <string_view>

#include "core/rolling_window.h"
#include "http/prometheus.h"

namespace urlguard {

class AbuseGuard {
 public:
  virtual ~AbuseGuard() = default;

  // Records one request of `signature` (a client address key, http/client_address.h GuardKeyOf; never a
  // client-chosen value) at `now_seconds` (the caller's monotonic seconds; an implementation shared across
  // processes may use its own shared clock instead, see redis_guard.h) and decides. Never fails: a guard
  // that cannot decide fails open or falls back, and says so in its metrics.
  virtual RollingWindowDecision Check(std::string_view signature, int64_t now_seconds) = 0;

  // Requests whose signature could not be recorded (RollingWindowGuard::unrecorded).
  virtual uint64_t unrecorded() const = 0;

  // Appends the guard's metric families: at least urlguard_server_guard_backend{backend="local"|"redis"}
  // (1 for the backend deciding now, 0 for the other).
  virtual void AppendMetrics(PrometheusText* out) const = 0;
};

// RollingWindowGuard::SignatureKey(signature), remembered per thread for the last signature seen: a
// kept-alive client's requests share one, and the key's SHA-256 was about a sixth of the guard's cost
// (docs/verify-server.md, "CPU per request"). Pure: the same key as SignatureKey for every input.
uint64_t SignatureKeyOf(std::string_view signature);

// The in-process guard: a RollingWindowGuard.
class LocalAbuseGuard final : public AbuseGuard {
 public:
  // Options as RollingWindowGuard's (out of range: assert).
  explicit LocalAbuseGuard(const RollingWindowOptions& options) : guard_(options) {}

  RollingWindowDecision Check(std::string_view signature, int64_t now_seconds) override {
    return guard_.CheckKey(SignatureKeyOf(signature), now_seconds);
  }
  uint64_t unrecorded() const override { return guard_.unrecorded(); }
  void AppendMetrics(PrometheusText* out) const override;

 private:
  RollingWindowGuard guard_;  // thread-safe
};

// Writes urlguard_server_guard_backend with `redis_active` deciding which backend is 1. Shared by the
// implementations so the family reads the same whichever is configured.
void AppendGuardBackendMetric(PrometheusText* out, bool redis_active);

}  // namespace urlguard

#endif  // URLGUARD_SERVER_ABUSE_GUARD_H_
