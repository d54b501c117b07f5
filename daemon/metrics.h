// Copyright urlguard authors.
//
// The Prometheus text body of urlguardd's /metrics (text format 0.0.4): lookups by verdict, verification
// requests, result cache, sync attempts by result, and per-list version, entries, age and staleness.
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
  uint64_t by_result[6] = {0, 0, 0, 0, 0, 0};
};

std::string RenderDaemonMetrics(const ClientStats& stats, const std::vector<ListStatus>& lists,
                                const SyncAttemptCounts& sync, int64_t now_unix);

}  // namespace urlguard

#endif  // URLGUARD_DAEMON_METRICS_H_
