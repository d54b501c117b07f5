// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "daemon/metrics.h"

#include "http/prometheus.h"

namespace urlguard {

std::string RenderDaemonMetrics(const ClientStats& s, const std::vector<ListStatus>& lists,
                                const SyncAttemptCounts& sync, int64_t now) {
  PrometheusText o;
  o.Family("urlguard_lookups_total", "Lookups answered, by verdict.", MetricType::kCounter);
  for (int i = 0; i < 6; ++i) {
    o.Sample("urlguard_lookups_total", {{"verdict", VerdictKindName(static_cast<VerdictKind>(i))}}, s.by_verdict[i]);
  }
  o.Counter("urlguard_verifications_total", "Verification API requests.", s.verifications);
  o.Counter("urlguard_verification_failures_total", "Verification requests without a usable answer.",
            s.verification_failures);
  o.Family("urlguard_verification_seconds_total", "Time spent in verification requests.", MetricType::kCounter);
  o.Sample("urlguard_verification_seconds_total", {}, s.verification_seconds);
  o.Counter("urlguard_cache_hits_total", "Result cache hits.", s.cache_hits);
  o.Counter("urlguard_cache_misses_total", "Result cache misses.", s.cache_misses);
  o.Family("urlguard_sync_attempts_total", "Sync passes, by result.", MetricType::kCounter);
  for (SyncResult r : {SyncResult::kUpdated, SyncResult::kNotModified, SyncResult::kUpToDate, SyncResult::kFailed,
                       SyncResult::kUnsubscribed}) {
    o.Sample("urlguard_sync_attempts_total", {{"result", SyncResultName(r)}}, sync.by_result[static_cast<int>(r)]);
  }
  o.Counter("urlguard_list_index_over_limit_total",
            "List indexes refused whole for naming more lists than a client keeps (256).", sync.list_limit_refusals);
  o.Family("urlguard_client_list_version", "Version of each list installed in the data directory (0: none).",
           MetricType::kGauge);
  for (const auto& l : lists) o.Sample("urlguard_client_list_version", {{"list", l.name}}, l.version);
  o.Family("urlguard_client_list_entries", "Entries of each list installed in the data directory.",
           MetricType::kGauge);
  for (const auto& l : lists) o.Sample("urlguard_client_list_entries", {{"list", l.name}}, l.entries);
  o.Family("urlguard_list_age_seconds", "Seconds since the installed version was created.", MetricType::kGauge);
  for (const auto& l : lists) {
    const int64_t age = l.version ? now - l.created_unix : 0;
    o.Sample("urlguard_list_age_seconds", {{"list", l.name}}, static_cast<double>(age));
  }
  o.Family("urlguard_list_stale", "1 when the list makes verdicts stale (not installed, damaged or expired).",
           MetricType::kGauge);
  for (const auto& l : lists) o.Sample("urlguard_list_stale", {{"list", l.name}}, uint64_t{l.stale ? 1u : 0u});
  o.Family("urlguard_list_stale_reason", "1 for each stale list, labelled with why.", MetricType::kGauge);
  for (const auto& l : lists) {
    if (l.stale) o.Sample("urlguard_list_stale_reason", {{"list", l.name}, {"reason", StaleReasonName(l.stale_reason)}}, uint64_t{1});
  }
  o.Family("urlguard_sync_consecutive_failures", "Failed sync passes in a row, per list (a freeze counts).",
           MetricType::kGauge);
  for (const auto& l : lists) {
    o.Sample("urlguard_sync_consecutive_failures", {{"list", l.name}}, static_cast<uint64_t>(l.consecutive_failures));
  }
  return o.Release();
}

}  // namespace urlguard
