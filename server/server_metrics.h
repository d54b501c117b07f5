// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard-server's Prometheus metrics: request counters by endpoint and status, the verify latency
// histogram, verify counters, and per-list gauges read from each list's manifest.json. Written with the one
// Prometheus writer (http/prometheus.h).
//
// Thread safety: ServerMetrics is lock-free (relaxed atomics, each an independent monotonic count);
// ListGauges::Append serializes scrapes on its mutex.
#ifndef URLGUARD_SERVER_SERVER_METRICS_H_
#define URLGUARD_SERVER_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/thread_annotations.h"
#include "http/prometheus.h"
#include "platform/env.h"

namespace urlguard {

// Per-list metrics read each manifest.json up to this size, for at most this many lists.
constexpr size_t kMaxManifestBytes = size_t{1} << 20;
constexpr size_t kMaxMetricsLists = 1024;

enum Endpoint : int { kEndpointVerify = 0, kEndpointStatic, kEndpointMetrics, kEndpointHealthz, kEndpointOther,
                      kEndpointCount };

// The endpoint a request is counted under.
Endpoint EndpointOf(std::string_view method, std::string_view path);

// Upper bounds (seconds) of the verify latency histogram.
inline constexpr std::array<double, 12> kVerifyLatencyBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                                0.01,   0.025,   0.05,   0.1,   0.25,   1.0};

struct ServerMetrics {
  static constexpr int kMinStatus = 100, kMaxStatus = 599;

  std::array<std::array<std::atomic<uint64_t>, kMaxStatus - kMinStatus + 1>, kEndpointCount> requests{};
  std::array<std::atomic<uint64_t>, kVerifyLatencyBounds.size()> verify_buckets{};  // non-cumulative
  std::atomic<uint64_t> verify_count{0};
  std::atomic<uint64_t> verify_nanos{0};
  std::atomic<uint64_t> prefixes{0};
  std::atomic<uint64_t> matches{0};
  std::atomic<uint64_t> throttled{0};

  void CountRequest(Endpoint endpoint, int status);
  void ObserveVerify(std::chrono::steady_clock::duration elapsed);
  // Appends every family above (requests, verify histogram, verify counters).
  void Append(PrometheusText* out) const;
};

// Per-list gauges from LISTS_DIR/<list>/manifest.json, re-parsed when a manifest's bytes change.
class ListGauges {
 public:
  ListGauges(Env* env, std::string lists_dir) : env_(env), dir_(std::move(lists_dir)) {}

  void Append(PrometheusText* out) EXCLUDES(mutex_);

 private:
  struct ListInfo {
    std::string raw;     // the manifest bytes last parsed
    bool valid = false;  // "version" was readable
    uint64_t version = 0;
    std::vector<std::pair<std::string, uint64_t>> entries;  // layer -> count
  };

  static ListInfo Parse(std::string raw);
  void Refresh() REQUIRES(mutex_);

  Env* const env_;
  const std::string dir_;
  Mutex mutex_;  // also serializes scrapes
  std::map<std::string, ListInfo> lists_ GUARDED_BY(mutex_);
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_SERVER_METRICS_H_
