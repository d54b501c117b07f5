// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// PgHashSource: the verify API's answers loaded from the PostgreSQL state (pg/pg_state.h), for stateless
// verify servers (`urlguard-server --state postgresql://...`, docs/verify-server.md). For every list it loads the
// full hashes of the newest committed version (the entries live at it) into memory, completely, and only then
// answers for that version; Refresh() (called every second by the server) asks PostgreSQL for newer versions and
// swaps each in once loaded. A lookup sees one immutable table of versions, never one being loaded.
//
// When PostgreSQL is down, Refresh() fails, the versions already loaded keep answering, and the metrics say so
// (urlguard_server_store_up 0); once it is back the next Refresh() reconnects. A source that has never loaded
// anything answers every lookup with kUnavailable (the verify API's 503), never with "no match".
//
// Why memory and not a query per request (measured, docs/verify-server.md): a query per verify request costs a
// round trip and a backend's CPU, and PostgreSQL being down would mean no answers at all; an in-memory table
// costs 36 bytes per record (twice that while a new version loads) and answers without leaving the process.
//
// Thread safety: Lookup(), Loaded() and AppendMetrics() from any number of threads; Refresh() from one thread at
// a time (refresh_mutex_), concurrently with lookups.
#ifndef URLGUARD_SERVER_PG_HASH_SOURCE_H_
#define URLGUARD_SERVER_PG_HASH_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/thread_annotations.h"
#include "http/prometheus.h"
#include "pg/pg_state.h"
#include "server/verify_hash_source.h"
#include "urlguard/env.h"

namespace urlguard {

// The most records one source holds in memory (all lists together); a version that would exceed it is not
// loaded (kResourceExhausted from Refresh) and the previous one keeps answering.
constexpr uint64_t kMaxPgHashSourceRecords = 200'000'000;
// Distinct threat names per list version.
constexpr size_t kMaxPgHashSourceThreats = 65535;

class PgHashSource : public VerifyHashSource {
 public:
  // Connects to `conninfo` and loads every list's newest committed version. `env` times the polls
  // (urlguard_server_store_latency_seconds); null: Env::Default(); not owned, outlives the source. Failures:
  // PgState::Open's (kUnavailable when PostgreSQL is down: a verify server does not start without anything to
  // answer from), and the first load's.
  static Result<std::unique_ptr<PgHashSource>> Open(const std::string& conninfo, Env* env = nullptr);

  Status Refresh() override;
  Status Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const override;
  std::vector<LoadedListVersion> Loaded() const override;

  // Prometheus samples: urlguard_server_store_up, urlguard_server_store_latency_seconds (the last refresh's
  // round trips), urlguard_server_store_failures_total, urlguard_server_loaded_version{list},
  // urlguard_server_publish_lag_seconds{list} (oldest first_seen among the version's new entries -> commit).
  void AppendMetrics(PrometheusText* out) const override;

 private:
  struct Record {
    Sha256Digest sha256;
    uint8_t layer;
    uint16_t threat;  // index into ListTable::threats
  };
  struct ListTable {
    std::string name;
    uint64_t version = 0;
    int64_t publish_lag_seconds = 0;
    std::vector<std::string> threats;
    std::vector<Record> records;  // sorted by sha256
  };
  struct Table {
    std::vector<std::shared_ptr<const ListTable>> lists;  // sorted by name
  };

  PgHashSource(std::string conninfo, Env* env) : env_(env), conninfo_(std::move(conninfo)) {}
  std::shared_ptr<const Table> Current() const EXCLUDES(table_mutex_);
  Status RefreshLocked() REQUIRES(refresh_mutex_);
  Result<std::shared_ptr<const ListTable>> LoadList(const PgVersionInfo& info, uint64_t budget)
      REQUIRES(refresh_mutex_);

  Env* const env_;
  const std::string conninfo_;

  Mutex refresh_mutex_;  // also serializes Refresh()
  // Null after a failure: reconnect on the next Refresh.
  std::unique_ptr<PgState> state_ GUARDED_BY(refresh_mutex_);

  mutable Mutex table_mutex_;
  // The pointer is guarded; tables are immutable.
  std::shared_ptr<const Table> table_ GUARDED_BY(table_mutex_) = std::make_shared<const Table>();

  std::atomic<bool> store_up_{false};
  std::atomic<int64_t> store_latency_micros_{0};
  std::atomic<uint64_t> store_failures_{0};
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_PG_HASH_SOURCE_H_
