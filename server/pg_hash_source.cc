// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/pg_hash_source.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace urlguard {
namespace {

uint32_t Prefix32(const Sha256Digest& d) {
  return (uint32_t{d[0]} << 24) | (uint32_t{d[1]} << 16) | (uint32_t{d[2]} << 8) | uint32_t{d[3]};
}

}  // namespace

Result<std::unique_ptr<PgHashSource>> PgHashSource::Open(const std::string& conninfo, Env* env) {
  std::unique_ptr<PgHashSource> s(new PgHashSource(conninfo, env != nullptr ? env : Env::Default()));
  URLGUARD_RETURN_IF_ERROR(s->Refresh());
  return s;
}

std::shared_ptr<const PgHashSource::Table> PgHashSource::Current() const {
  MutexLock l(&table_mutex_);
  return table_;
}

Status PgHashSource::Refresh() {
  MutexLock l(&refresh_mutex_);
  const uint64_t start = env_->NowMonotonicNanos();
  Status s = RefreshLocked();
  store_latency_micros_ = static_cast<int64_t>((env_->NowMonotonicNanos() - start) / 1000);
  if (!s.ok() && s.code() == StatusCode::kUnavailable) {
    store_up_ = false;
    ++store_failures_;
    state_.reset();  // reconnect next time
  } else {
    store_up_ = true;
    if (!s.ok()) ++store_failures_;
  }
  return s;
}

Status PgHashSource::RefreshLocked() {
  if (state_ == nullptr || !state_->connection()->ok()) {
    auto st = PgState::Open(conninfo_);
    if (!st.ok()) return st.status();
    state_ = std::move(st).value();
  }
  auto latest = state_->LatestVersions();
  if (!latest.ok()) return latest.status();
  std::shared_ptr<const Table> current = Current();
  std::map<std::string, std::shared_ptr<const ListTable>> lists;
  uint64_t held = 0;
  for (const auto& l : current->lists) {
    lists[l->name] = l;
    held += l->records.size();
  }
  Status first_problem;
  bool changed = false;
  for (const PgVersionInfo& info : *latest) {
    auto it = lists.find(info.list);
    if (it != lists.end() && it->second->version >= info.version) continue;  // never go back
    const uint64_t old_size = it != lists.end() ? it->second->records.size() : 0;
    const uint64_t budget = kMaxPgHashSourceRecords - std::min(kMaxPgHashSourceRecords, held - old_size);
    auto loaded = LoadList(info, budget);
    if (!loaded.ok()) {
      if (loaded.status().code() == StatusCode::kUnavailable) return loaded.status();
      if (first_problem.ok()) first_problem = loaded.status();
      continue;
    }
    held = held - old_size + (*loaded)->records.size();
    lists[info.list] = std::move(loaded).value();
    changed = true;
  }
  if (changed) {
    auto next = std::make_shared<Table>();
    for (auto& [name, l] : lists) next->lists.push_back(l);
    MutexLock l(&table_mutex_);
    table_ = std::move(next);
  }
  return first_problem;
}

Result<std::shared_ptr<const PgHashSource::ListTable>> PgHashSource::LoadList(const PgVersionInfo& info,
                                                                              uint64_t budget) {
  auto t = std::make_shared<ListTable>();
  t->name = info.list;
  t->version = info.version;
  t->publish_lag_seconds =
      info.oldest_first_seen_unix != 0 ? std::max<int64_t>(0, info.created_unix - info.oldest_first_seen_unix) : 0;
  if (info.entries > budget) {
    return Status::ResourceExhausted(info.list + " version " + std::to_string(info.version) + " has " +
                                     std::to_string(info.entries) + " entries: over this server's budget");
  }
  t->records.reserve(info.entries);
  std::map<std::string, uint16_t, std::less<>> threat_index;
  Status problem;
  Status s = state_->StreamVersion(info.list, info.version, [&](const PgLiveEntry& e) {
    if (!problem.ok()) return;
    auto it = threat_index.find(e.threat);
    if (it == threat_index.end()) {
      if (t->threats.size() >= kMaxPgHashSourceThreats) {
        problem = Status::ResourceExhausted("more than 65535 threat names in " + info.list);
        return;
      }
      it = threat_index.emplace(e.threat, static_cast<uint16_t>(t->threats.size())).first;
      t->threats.push_back(e.threat);
    }
    if (t->records.size() >= budget) {
      problem = Status::ResourceExhausted(info.list + ": over this server's record budget");
      return;
    }
    t->records.push_back({e.sha256, static_cast<uint8_t>(e.key.layer), it->second});
  });
  if (!s.ok()) return s;
  if (!problem.ok()) return problem;
  // The version is complete only when it holds every entry its row counted.
  if (t->records.size() != info.entries) {
    return Status::Corruption(info.list + " version " + std::to_string(info.version) + ": loaded " +
                              std::to_string(t->records.size()) + " entries, the version row says " +
                              std::to_string(info.entries));
  }
  // PostgreSQL sorted by bytea (memcmp order), the order binary search needs; checked, not assumed.
  for (size_t i = 1; i < t->records.size(); ++i) {
    if (!(t->records[i - 1].sha256 < t->records[i].sha256)) {
      return Status::Corruption(info.list + ": entries not in sha256 order");
    }
  }
  return std::shared_ptr<const ListTable>(std::move(t));
}

Status PgHashSource::Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const {
  out->records.clear();
  out->versions.clear();
  uint32_t unique[kMaxLookupPrefixes];
  auto n = UniquePrefixes(prefixes, unique);
  if (!n.ok()) return n.status();
  std::shared_ptr<const Table> table = Current();
  if (table->lists.empty()) return Status::Unavailable("no list version loaded from PostgreSQL yet");
  for (size_t i = 0; i < *n; ++i) {
    for (const auto& list : table->lists) {
      auto it = std::lower_bound(list->records.begin(), list->records.end(), unique[i],
                                 [](const Record& r, uint32_t p) { return Prefix32(r.sha256) < p; });
      for (; it != list->records.end() && Prefix32(it->sha256) == unique[i]; ++it) {
        if (out->records.size() >= kMaxLookupRecords) {
          return Status::ResourceExhausted("more than " + std::to_string(kMaxLookupRecords) + " matching records");
        }
        out->records.push_back({it->sha256, list->name, static_cast<LayerKind>(it->layer), list->threats[it->threat]});
      }
    }
  }
  SortVerifyRecords(&out->records);
  for (const auto& list : table->lists) out->versions.push_back({list->name, list->version});
  out->pin = table;
  return Status::Ok();
}

std::vector<LoadedListVersion> PgHashSource::Loaded() const {
  std::vector<LoadedListVersion> out;
  for (const auto& l : Current()->lists) out.push_back({l->name, l->version, l->records.size()});
  return out;
}

void PgHashSource::AppendMetrics(PrometheusText* out) const {
  out->Gauge("urlguard_server_store_up", "1 when the last poll of the PostgreSQL state succeeded, else 0.",
             store_up_ ? 1.0 : 0.0);
  out->Gauge("urlguard_server_store_latency_seconds", "Duration of the last poll of the PostgreSQL state.",
             static_cast<double>(store_latency_micros_.load()) / 1e6);
  out->Counter("urlguard_server_store_failures_total", "Polls of the PostgreSQL state that failed.",
               store_failures_.load());
  std::shared_ptr<const Table> table = Current();
  out->Family("urlguard_server_loaded_version", "The list version this server answers for (fully loaded).",
              MetricType::kGauge);
  for (const auto& l : table->lists) {
    out->Sample("urlguard_server_loaded_version", {{"list", l->name}}, static_cast<double>(l->version));
  }
  out->Family("urlguard_server_publish_lag_seconds",
              "Oldest feed first-seen among the loaded version's new entries to the version's commit.",
              MetricType::kGauge);
  for (const auto& l : table->lists) {
    out->Sample("urlguard_server_publish_lag_seconds", {{"list", l->name}}, static_cast<double>(l->publish_lag_seconds));
  }
}

}  // namespace urlguard
