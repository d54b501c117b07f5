// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/server_metrics.h"

#include <nlohmann/json.hpp>

#include "core/list_name.h"
#include "format/repository_files.h"

namespace urlguard {

namespace {
constexpr const char* kEndpointNames[kEndpointCount] = {"verify", "static", "metrics", "healthz", "other"};
}  // namespace

Endpoint EndpointOf(std::string_view method, std::string_view path) {
  if (path == "/v1/verify") return kEndpointVerify;
  if (path == "/metrics") return kEndpointMetrics;
  if (path == "/healthz") return kEndpointHealthz;
  if ((method == "GET" || method == "HEAD") && !path.empty()) return kEndpointStatic;
  return kEndpointOther;
}

void ServerMetrics::CountRequest(Endpoint endpoint, int status) {
  if (status < kMinStatus || status > kMaxStatus) return;
  requests[endpoint][status - kMinStatus].fetch_add(1, std::memory_order_relaxed);
}

void ServerMetrics::ObserveVerify(std::chrono::steady_clock::duration elapsed) {
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
  const double seconds = static_cast<double>(nanos) / 1e9;
  for (size_t i = 0; i < kVerifyLatencyBounds.size(); ++i) {
    if (seconds <= kVerifyLatencyBounds[i]) {
      verify_buckets[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  verify_nanos.fetch_add(static_cast<uint64_t>(nanos), std::memory_order_relaxed);
  verify_count.fetch_add(1, std::memory_order_relaxed);
}

void ServerMetrics::Append(PrometheusText* out) const {
  out->Family("urlguard_server_requests_total", "HTTP requests answered, by endpoint and status.",
              MetricType::kCounter);
  for (int e = 0; e < kEndpointCount; ++e) {
    for (int s = kMinStatus; s <= kMaxStatus; ++s) {
      const uint64_t n = requests[e][s - kMinStatus].load(std::memory_order_relaxed);
      if (n == 0) continue;
      const std::string status = std::to_string(s);
      out->Sample("urlguard_server_requests_total", {{"endpoint", kEndpointNames[e]}, {"status", status}}, n);
    }
  }
  out->Family("urlguard_server_verify_seconds",
              "Time to answer a verify request (guard, parse, lookup, encode).", MetricType::kHistogram);
  std::array<uint64_t, kVerifyLatencyBounds.size()> counts;
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = verify_buckets[i].load(std::memory_order_relaxed);
  out->Histogram("urlguard_server_verify_seconds", {}, kVerifyLatencyBounds, counts,
                 verify_count.load(std::memory_order_relaxed),
                 static_cast<double>(verify_nanos.load(std::memory_order_relaxed)) / 1e9);
  out->Counter("urlguard_server_prefixes_total", "Prefixes looked up by verify requests.",
               prefixes.load(std::memory_order_relaxed));
  out->Counter("urlguard_server_matches_total", "Full hashes returned by verify requests.",
               matches.load(std::memory_order_relaxed));
  out->Counter("urlguard_server_throttled_total", "Verify requests refused with 429 by the abuse guard.",
               throttled.load(std::memory_order_relaxed));
}

ListGauges::ListInfo ListGauges::Parse(std::string raw) {
  ListInfo info;
  const nlohmann::json doc = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  info.raw = std::move(raw);
  if (!doc.is_object()) return info;  // garbage: no gauges for this list
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_unsigned()) return info;
  info.valid = true;
  info.version = version->get<uint64_t>();
  const auto entries = doc.find("entries");
  if (entries == doc.end()) return info;
  if (entries->is_number_unsigned()) {
    info.entries.emplace_back("all", entries->get<uint64_t>());
  } else if (entries->is_object()) {
    for (const auto& [layer, count] : entries->items()) {
      if (IsValidListName(layer) && count.is_number_unsigned()) {  // [a-z0-9_-]{1,64}: a safe label value
        info.entries.emplace_back(layer, count.get<uint64_t>());
      }
    }
  }
  return info;
}

void ListGauges::Refresh() {
  auto names = env_->ListDir(dir_);
  if (!names.ok()) {
    lists_.clear();
    return;
  }
  std::map<std::string, ListInfo> fresh;
  for (const std::string& name : *names) {
    if (fresh.size() >= kMaxMetricsLists) break;
    if (!IsValidListName(name)) continue;
    auto raw = env_->ReadFile(JoinPath(JoinPath(dir_, name), kManifestFileName), kMaxManifestBytes);
    if (!raw.ok()) continue;  // missing or too large: no gauges
    auto it = lists_.find(name);
    if (it != lists_.end() && it->second.raw == *raw) {
      fresh.emplace(name, std::move(it->second));
    } else {
      fresh.emplace(name, Parse(std::move(raw).value()));
    }
  }
  lists_ = std::move(fresh);
}

void ListGauges::Append(PrometheusText* out) {
  MutexLock lock(&mutex_);
  Refresh();
  out->Family("urlguard_list_version", "Version of each list's current manifest.", MetricType::kGauge);
  for (const auto& [list, info] : lists_) {
    if (info.valid) out->Sample("urlguard_list_version", {{"list", list}}, info.version);
  }
  out->Family("urlguard_list_entries", "Entries of each list layer in its current manifest.", MetricType::kGauge);
  for (const auto& [list, info] : lists_) {
    for (const auto& [layer, count] : info.entries) {
      out->Sample("urlguard_list_entries", {{"list", list}, {"layer", layer}}, count);
    }
  }
}

}  // namespace urlguard
