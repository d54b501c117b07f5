// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/abuse_guard.h"

namespace urlguard {

void AppendGuardBackendMetric(PrometheusText* out, bool redis_active) {
  out->Family("urlguard_server_guard_backend",
              "Abuse guard deciding verify requests now: 1 for the backend in use, 0 for the other.",
              MetricType::kGauge);
  out->Sample("urlguard_server_guard_backend", {{"backend", "local"}}, uint64_t{redis_active ? 0u : 1u});
  out->Sample("urlguard_server_guard_backend", {{"backend", "redis"}}, uint64_t{redis_active ? 1u : 0u});
}

void LocalAbuseGuard::AppendMetrics(PrometheusText* out) const { AppendGuardBackendMetric(out, false); }

}  // namespace urlguard
