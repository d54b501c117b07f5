// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/abuse_guard.h"

#include <cstring>

namespace urlguard {

uint64_t SignatureKeyOf(std::string_view signature) {
  // Client address keys are 6 or 10 bytes (http/client_address.h GuardKeyOf); longer ones are not remembered.
  constexpr size_t kMaxRemembered = 32;
  struct Last {
    char bytes[kMaxRemembered];
    size_t size = SIZE_MAX;  // nothing remembered yet
    uint64_t key = 0;
  };
  thread_local Last last;
  if (signature.size() == last.size && std::memcmp(signature.data(), last.bytes, last.size) == 0) return last.key;
  const uint64_t key = RollingWindowGuard::SignatureKey(signature);
  if (signature.size() <= kMaxRemembered) {
    std::memcpy(last.bytes, signature.data(), signature.size());
    last.size = signature.size();
    last.key = key;
  }
  return key;
}

void AppendGuardBackendMetric(PrometheusText* out, bool redis_active) {
  out->Family("urlguard_server_guard_backend",
              "Abuse guard deciding verify requests now: 1 for the backend in use, 0 for the other.",
              MetricType::kGauge);
  out->Sample("urlguard_server_guard_backend", {{"backend", "local"}}, uint64_t{redis_active ? 0u : 1u});
  out->Sample("urlguard_server_guard_backend", {{"backend", "redis"}}, uint64_t{redis_active ? 1u : 0u});
}

void LocalAbuseGuard::AppendMetrics(PrometheusText* out) const { AppendGuardBackendMetric(out, false); }

}  // namespace urlguard
