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

// A list version's threat names, each given a 16-bit id the first time it is seen (records store the id).
class ThreatTable {
 public:
  // Starts from `names` (ids 0..n-1 stay valid: a change-log load extends the base's table).
  ThreatTable(std::vector<std::string>* names, const std::string& list) : names_(names), list_(list) {
    for (size_t i = 0; i < names_->size(); ++i) index_.emplace((*names_)[i], static_cast<uint16_t>(i));
  }
  // The id of `name`; kResourceExhausted past kMaxPgHashSourceThreats names.
  Result<uint16_t> Id(const std::string& name) {
    auto it = index_.find(name);
    if (it != index_.end()) return it->second;
    if (names_->size() >= kMaxPgHashSourceThreats) {
      return Status::ResourceExhausted("more than 65535 threat names in " + list_);
    }
    const auto id = static_cast<uint16_t>(names_->size());
    index_.emplace(name, id);
    names_->push_back(name);
    return id;
  }

 private:
  std::vector<std::string>* names_;
  const std::string& list_;
  std::map<std::string, uint16_t, std::less<>> index_;
};

}  // namespace

Result<std::unique_ptr<PgHashSource>> PgHashSource::Open(const std::string& conninfo, Env* env,
                                                        const PgHashSourceOptions& options) {
  std::unique_ptr<PgHashSource> s(new PgHashSource(conninfo, env != nullptr ? env : Env::Default(), options));
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
  // Records held in memory: bases (counted once per list: successive tables share one) plus overlays.
  auto held_by = [](const ListTable& t) { return t.base->size() + t.overlay.size(); };
  uint64_t held = 0;
  for (const auto& l : current->lists) {
    lists[l->name] = l;
    held += held_by(*l);
  }
  Status first_problem;
  bool changed = false;
  for (const PgVersionInfo& info : *latest) {
    auto it = lists.find(info.list);
    if (it != lists.end() && it->second->version >= info.version) continue;  // never go back
    const uint64_t old_size = it != lists.end() ? held_by(*it->second) : 0;
    const uint64_t budget = kMaxPgHashSourceRecords - std::min(kMaxPgHashSourceRecords, held - old_size);
    Result<std::shared_ptr<const ListTable>> loaded = Status::NotFound("not loaded");
    bool full = true;
    if (it != lists.end() && options_.use_change_log) {
      loaded = LoadChanges(*it->second, info, budget);
      if (loaded.ok()) {
        full = false;
      } else if (loaded.status().code() == StatusCode::kUnavailable) {
        return loaded.status();  // the old table keeps answering
      } else if (loaded.status().code() == StatusCode::kFailedPrecondition) {
        continue;  // a newer version was committed meanwhile: the next poll reads to it
      } else if (loaded.status().code() == StatusCode::kResourceExhausted) {
        if (first_problem.ok()) first_problem = loaded.status();
        continue;
      } else {
        ++change_log_fallbacks_;  // a change log that did not add up: load the version whole
      }
    }
    if (full) loaded = LoadList(info, budget);
    if (!loaded.ok()) {
      if (loaded.status().code() == StatusCode::kUnavailable) return loaded.status();
      if (first_problem.ok()) first_problem = loaded.status();
      continue;
    }
    ++(full ? full_loads_ : change_loads_);
    held = held - old_size + held_by(**loaded);
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
  auto records = std::make_shared<std::vector<Record>>();
  records->reserve(info.entries);
  ThreatTable threats(&t->threats, info.list);
  Status problem;
  uint64_t rows = 0;
  Status s = state_->StreamVersion(info.list, info.version, [&](const PgLiveEntry& e) {
    ++rows;
    if (options_.on_row_read) options_.on_row_read();
    if (!problem.ok()) return;
    Result<uint16_t> threat = threats.Id(e.threat);
    if (!threat.ok()) {
      problem = threat.status();
      return;
    }
    if (records->size() >= budget) {
      problem = Status::ResourceExhausted(info.list + ": over this server's record budget");
      return;
    }
    records->push_back({e.sha256, static_cast<uint8_t>(e.key.layer), *threat});
  });
  rows_read_ += rows;
  if (!s.ok()) return s;
  if (!problem.ok()) return problem;
  // The version is complete only when it holds every entry its row counted.
  if (records->size() != info.entries) {
    return Status::Corruption(info.list + " version " + std::to_string(info.version) + ": loaded " +
                              std::to_string(records->size()) + " entries, the version row says " +
                              std::to_string(info.entries));
  }
  // PostgreSQL sorted by bytea (memcmp order), the order binary search needs; checked, not assumed.
  for (size_t i = 1; i < records->size(); ++i) {
    if (!((*records)[i - 1].sha256 < (*records)[i].sha256)) {
      return Status::Corruption(info.list + ": entries not in sha256 order");
    }
  }
  t->records = records->size();
  t->base = std::move(records);
  return std::shared_ptr<const ListTable>(std::move(t));
}

Result<std::shared_ptr<const PgHashSource::ListTable>> PgHashSource::LoadChanges(const ListTable& old,
                                                                                 const PgVersionInfo& info,
                                                                                 uint64_t budget) {
  auto t = std::make_shared<ListTable>();
  t->name = info.list;
  t->version = info.version;
  t->publish_lag_seconds =
      info.oldest_first_seen_unix != 0 ? std::max<int64_t>(0, info.created_unix - info.oldest_first_seen_unix) : 0;
  t->threats = old.threats;  // append-only: the base's threat indexes stay valid
  t->base = old.base;
  ThreatTable threats(&t->threats, info.list);
  const std::vector<Record>& base = *old.base;

  // The change log normalized against the base, in sha256 order: a put of a record the base holds identically,
  // or a delete of a sha256 the base does not hold, is "as the base" (drops any older overlay record).
  enum class Op : uint8_t { kPut, kDelete, kAsBase };
  struct Change {
    OverlayRecord o;
    Op op;
  };
  std::vector<Change> changes;
  Status problem;
  uint64_t rows = 0;
  Status s = state_->StreamChanges(info.list, old.version, info.version, [&](const PgChangedEntry& e) {
    ++rows;
    if (options_.on_row_read) options_.on_row_read();
    if (!problem.ok()) return;
    if (!changes.empty() && !(changes.back().o.record.sha256 < e.sha256)) {
      problem = Status::Corruption(info.list + ": change log not in sha256 order");
      return;
    }
    if (base.size() + old.overlay.size() + changes.size() >= budget) {
      problem = Status::ResourceExhausted(info.list + ": over this server's record budget");
      return;
    }
    Result<uint16_t> threat = threats.Id(e.threat);
    if (!threat.ok()) {
      problem = threat.status();
      return;
    }
    Change c{{{e.sha256, static_cast<uint8_t>(e.layer), *threat}, e.live, false}, Op::kAsBase};
    auto b = std::lower_bound(base.begin(), base.end(), e.sha256,
                              [](const Record& r, const Sha256Digest& d) { return r.sha256 < d; });
    c.o.in_base = b != base.end() && b->sha256 == e.sha256;
    if (e.live) {
      const bool same = c.o.in_base && b->layer == c.o.record.layer && t->threats[b->threat] == e.threat;
      c.op = same ? Op::kAsBase : Op::kPut;
    } else {
      c.op = c.o.in_base ? Op::kDelete : Op::kAsBase;
    }
    changes.push_back(c);
  });
  rows_read_ += rows;
  changes_read_ += rows;
  if (!s.ok()) return s;
  if (!problem.ok()) return problem;

  // Merge: the change log replaces the old overlay's record of the same sha256.
  t->overlay.reserve(old.overlay.size() + changes.size());
  size_t i = 0, j = 0;
  while (i < old.overlay.size() || j < changes.size()) {
    if (j == changes.size() || (i < old.overlay.size() && old.overlay[i].record.sha256 < changes[j].o.record.sha256)) {
      t->overlay.push_back(old.overlay[i++]);
      continue;
    }
    if (i < old.overlay.size() && old.overlay[i].record.sha256 == changes[j].o.record.sha256) ++i;
    if (changes[j].op != Op::kAsBase) t->overlay.push_back(changes[j].o);
    ++j;
  }
  uint64_t records = base.size();
  for (const OverlayRecord& o : t->overlay) {
    if (!o.put) --records;
    else if (!o.in_base) ++records;
  }
  t->records = records;
  // The version is complete only when it holds every entry its row counted (else the caller loads it whole).
  if (t->records != info.entries) {
    return Status::Corruption(info.list + " version " + std::to_string(info.version) + ": the change log from " +
                              std::to_string(old.version) + " gives " + std::to_string(t->records) +
                              " entries, the version row says " + std::to_string(info.entries));
  }
  if (t->overlay.size() > std::max(base.size() / std::max<uint64_t>(1, options_.fold_base_divisor),
                                   options_.fold_min_records)) {
    ++folds_;
    return Fold(*t);
  }
  return std::shared_ptr<const ListTable>(std::move(t));
}

std::shared_ptr<const PgHashSource::ListTable> PgHashSource::Fold(const ListTable& t) {
  auto out = std::make_shared<ListTable>();
  out->name = t.name;
  out->version = t.version;
  out->publish_lag_seconds = t.publish_lag_seconds;
  out->threats = t.threats;
  auto records = std::make_shared<std::vector<Record>>();
  records->reserve(t.records);
  const std::vector<Record>& base = *t.base;
  size_t i = 0, j = 0;
  while (i < base.size() || j < t.overlay.size()) {
    if (j == t.overlay.size() || (i < base.size() && base[i].sha256 < t.overlay[j].record.sha256)) {
      records->push_back(base[i++]);
      continue;
    }
    if (i < base.size() && base[i].sha256 == t.overlay[j].record.sha256) ++i;  // replaced or deleted
    if (t.overlay[j].put) records->push_back(t.overlay[j].record);
    ++j;
  }
  out->records = records->size();
  out->base = std::move(records);
  return out;
}

Status PgHashSource::Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const {
  out->records.clear();
  out->versions.clear();
  uint32_t unique[kMaxLookupPrefixes];
  auto n = UniquePrefixes(prefixes, unique);
  if (!n.ok()) return n.status();
  std::shared_ptr<const Table> table = Current();
  if (table->lists.empty()) return Status::Unavailable("no list version loaded from PostgreSQL yet");
  auto emit = [&](const ListTable& list, const Record& r) -> Status {
    if (out->records.size() >= kMaxLookupRecords) {
      return Status::ResourceExhausted("more than " + std::to_string(kMaxLookupRecords) + " matching records");
    }
    out->records.push_back({r.sha256, list.name, static_cast<LayerKind>(r.layer), list.threats[r.threat]});
    return Status::Ok();
  };
  for (size_t i = 0; i < *n; ++i) {
    for (const auto& list : table->lists) {
      // The overlay's records of this prefix: they hide the base's records of the same sha256.
      auto ob = std::lower_bound(list->overlay.begin(), list->overlay.end(), unique[i],
                                 [](const OverlayRecord& o, uint32_t p) { return Prefix32(o.record.sha256) < p; });
      auto oe = ob;
      while (oe != list->overlay.end() && Prefix32(oe->record.sha256) == unique[i]) ++oe;
      const std::vector<Record>& base = *list->base;
      auto it = std::lower_bound(base.begin(), base.end(), unique[i],
                                 [](const Record& r, uint32_t p) { return Prefix32(r.sha256) < p; });
      for (; it != base.end() && Prefix32(it->sha256) == unique[i]; ++it) {
        if (ob != oe) {
          auto o = std::lower_bound(ob, oe, it->sha256,
                                    [](const OverlayRecord& r, const Sha256Digest& d) { return r.record.sha256 < d; });
          if (o != oe && o->record.sha256 == it->sha256) continue;
        }
        URLGUARD_RETURN_IF_ERROR(emit(*list, *it));
      }
      for (auto o = ob; o != oe; ++o) {
        if (o->put) URLGUARD_RETURN_IF_ERROR(emit(*list, o->record));
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
  for (const auto& l : Current()->lists) out.push_back({l->name, l->version, l->records, 0});
  return out;
}

PgHashSourceStats PgHashSource::stats() const {
  PgHashSourceStats s;
  s.full_loads = full_loads_;
  s.change_loads = change_loads_;
  s.rows_read = rows_read_;
  s.changes_read = changes_read_;
  s.folds = folds_;
  s.change_log_fallbacks = change_log_fallbacks_;
  return s;
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
  out->Counter("urlguard_server_store_full_loads_total",
               "List versions loaded by reading every entry live at them (first load, fallback).", full_loads_.load());
  out->Counter("urlguard_server_store_change_loads_total",
               "List versions loaded from the change log since the loaded version.", change_loads_.load());
  out->Counter("urlguard_server_store_rows_read_total", "Rows read from the PostgreSQL state by all loads.",
               rows_read_.load());
  out->Counter("urlguard_server_store_changes_loaded_total", "Change-log rows read from the PostgreSQL state.",
               changes_read_.load());
  out->Counter("urlguard_server_store_overlay_folds_total", "Change overlays folded into a new in-memory base.",
               folds_.load());
  out->Counter("urlguard_server_store_change_log_fallbacks_total",
               "Change logs whose result did not match the version's entry count (a full load followed).",
               change_log_fallbacks_.load());
  out->Family("urlguard_server_store_overlay_records",
              "Records in the list's change overlay on top of its in-memory base.", MetricType::kGauge);
  for (const auto& l : table->lists) {
    out->Sample("urlguard_server_store_overlay_records", {{"list", l->name}}, static_cast<double>(l->overlay.size()));
  }
}

}  // namespace urlguard
