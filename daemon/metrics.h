// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The Prometheus text body of urlguardd's /metrics, written through http/'s one writer (http/prometheus.h):
// lookups by verdict, verification requests, result cache, sync attempts by result, and per-list installed
// version, entries, age and staleness.
//
// The per-list version and entry gauges are the CLIENT's (what this data directory has installed), named
// urlguard_client_list_version / urlguard_client_list_entries: urlguard-server exports urlguard_list_version
// and urlguard_list_entries for what it PUBLISHES (per layer), and one Prometheus scraping both must not mix
// the two.
//
// Thread safety: a pure function.
#ifndef URLGUARD_DAEMON_METRICS_H_
#define URLGUARD_DAEMON_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "urlguard/client.h"

namespace urlguard {

// Sync attempts since start, indexed by SyncResult (urlguard/sync.h).
struct SyncAttemptCounts {
  uint64_t by_result[kSyncResultCount] = {};
  // List indexes refused whole for naming more lists than a client keeps (SyncReport::over_list_limit).
  uint64_t list_limit_refusals = 0;
};

std::string RenderDaemonMetrics(const ClientStats& stats, const std::vector<ListStatus>& lists,
                                const SyncAttemptCounts& sync, int64_t now_unix);

}  // namespace urlguard

#endif  // URLGUARD_DAEMON_METRICS_H_
