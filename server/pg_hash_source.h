// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// PgHashSource: the verify API's answers loaded from the PostgreSQL state (pg/pg_state.h), for stateless
// verify servers (`urlguard-server --state postgresql://...`, docs/verify-server.md). For every list it loads the
// full hashes of the newest committed version (the entries live at it) into memory, completely, and only then
// answers for that version; Refresh() (called every second by the server) asks PostgreSQL for newer versions and
// swaps each in once loaded. A lookup sees one immutable table of versions, never one being loaded.
//
// Versions that cost what changed (issue 17): a list's table is an immutable, shared base (sorted records of
// some version B, read by one full load) plus a small sorted overlay: the difference between B and the served
// version X (puts: records not in B or with another threat; deletes: B's records absent at X). Picking up a
// newer version reads only the change log (PgState::StreamChanges(X, newest): the rows that changed, through
// an index) and merges it into a new overlay, O(changes) memory, time and rows read; the base is shared, not
// copied. When the overlay outgrows max(base / fold_base_divisor, fold_min_records) the refresh folds it into a
// new base (an O(N) merge in memory, no PostgreSQL read; rare), while the old table keeps answering. The first
// load, and any change log that fails its check (the count of the result must equal the version row's
// `entries`), is a full load. Measured in bench/pg_changes_bench (docs/postgres-schema.md).
//
// When PostgreSQL is down, Refresh() fails, the versions already loaded keep answering, and the metrics say so
// (urlguard_server_store_up 0); once it is back the next Refresh() reconnects. A source that has never loaded
// anything answers every lookup with kUnavailable (the verify API's 503), never with "no match".
//
// Why memory and not a query per request (measured, docs/verify-server.md): a query per verify request costs a
// round trip and a backend's CPU, and PostgreSQL being down would mean no answers at all; an in-memory table
// costs 36 bytes per record (twice that during a full load or a fold; a change-log load adds only the new
// overlay) and answers without leaving the process.
//
// Thread safety: Lookup(), Loaded() and AppendMetrics() from any number of threads; Refresh() from one thread at
// a time (refresh_mutex_), concurrently with lookups.
#ifndef URLGUARD_SERVER_PG_HASH_SOURCE_H_
#define URLGUARD_SERVER_PG_HASH_SOURCE_H_

#include <atomic>
#include <cstdint>
#include <functional>
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

// How a PgHashSource picks up versions (defaults: what urlguard-server uses).
struct PgHashSourceOptions {
  // Read the change log when a list already holds an older version (false: every version is a full load, the
  // behaviour before issue 17, kept for comparison in the bench).
  bool use_change_log = true;
  // Fold the overlay into a new base when it holds more than max(base records / fold_base_divisor,
  // fold_min_records) records.
  uint64_t fold_min_records = uint64_t{1} << 20;
  uint64_t fold_base_divisor = 8;
  // Called for every row read from PostgreSQL, on the refresh thread, before the load it belongs to completes
  // (tests: take PostgreSQL down in the middle of a load). Empty: nothing.
  std::function<void()> on_row_read;
};

// What the source has done since it opened (for tests and the bench; the same numbers as the metrics).
struct PgHashSourceStats {
  uint64_t full_loads = 0;      // versions loaded by reading every live entry (StreamVersion)
  uint64_t change_loads = 0;    // versions loaded from the change log (StreamChanges)
  uint64_t rows_read = 0;       // rows read from PostgreSQL by both
  uint64_t changes_read = 0;    // of which change-log rows
  uint64_t folds = 0;           // overlays folded into a new base
  uint64_t change_log_fallbacks = 0;  // change logs that failed their check and became a full load
};

class PgHashSource : public VerifyHashSource {
 public:
  // Connects to `conninfo` and loads every list's newest committed version. `env` times the polls
  // (urlguard_server_store_latency_seconds); null: Env::Default(); not owned, outlives the source. Failures:
  // PgState::Open's (kUnavailable when PostgreSQL is down: a verify server does not start without anything to
  // answer from), and the first load's.
  static Result<std::unique_ptr<PgHashSource>> Open(const std::string& conninfo, Env* env = nullptr,
                                                    const PgHashSourceOptions& options = {});

  Status Refresh() override;
  Status Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const override;
  std::vector<LoadedListVersion> Loaded() const override;

  // Prometheus samples: urlguard_server_store_up, urlguard_server_store_latency_seconds (the last refresh's
  // round trips), urlguard_server_store_failures_total, urlguard_server_loaded_version{list},
  // urlguard_server_publish_lag_seconds{list} (oldest first_seen among the version's new entries -> commit),
  // urlguard_server_store_full_loads_total, urlguard_server_store_change_loads_total,
  // urlguard_server_store_rows_read_total, urlguard_server_store_changes_loaded_total,
  // urlguard_server_store_overlay_folds_total, urlguard_server_store_overlay_records{list}.
  void AppendMetrics(PrometheusText* out) const override;

  PgHashSourceStats stats() const;

 private:
  struct Record {
    Sha256Digest sha256;
    uint8_t layer;
    uint16_t threat;  // index into ListTable::threats
  };
  // A change of the overlay against the base: a put (the record at the served version) or a delete (the base's
  // record of this sha256 is absent at the served version).
  struct OverlayRecord {
    Record record;
    bool put;      // false: a delete
    bool in_base;  // the base holds this sha256 (a put then replaces the base's record)
  };
  struct ListTable {
    std::string name;
    uint64_t version = 0;
    int64_t publish_lag_seconds = 0;
    std::vector<std::string> threats;  // base records index the first ones; overlay puts may add more
    std::shared_ptr<const std::vector<Record>> base;  // sorted by sha256, unique; shared by successive tables
    std::vector<OverlayRecord> overlay;  // sorted by sha256, unique: puts hide and replace, deletes hide base
    uint64_t records = 0;                // records at `version` (base - deletes - replaced + puts)
  };
  struct Table {
    std::vector<std::shared_ptr<const ListTable>> lists;  // sorted by name
  };

  PgHashSource(std::string conninfo, Env* env, const PgHashSourceOptions& options)
      : env_(env), options_(options), conninfo_(std::move(conninfo)) {}
  std::shared_ptr<const Table> Current() const EXCLUDES(table_mutex_);
  Status RefreshLocked() REQUIRES(refresh_mutex_);
  Result<std::shared_ptr<const ListTable>> LoadList(const PgVersionInfo& info, uint64_t budget)
      REQUIRES(refresh_mutex_);
  // The next table from `old` and the change log (old->version, info.version]; kCorruption when the result does
  // not hold info.entries records (the caller then loads fully).
  Result<std::shared_ptr<const ListTable>> LoadChanges(const ListTable& old, const PgVersionInfo& info,
                                                       uint64_t budget) REQUIRES(refresh_mutex_);
  // `t` with its overlay merged into a new base.
  static std::shared_ptr<const ListTable> Fold(const ListTable& t);

  Env* const env_;
  const PgHashSourceOptions options_;
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
  std::atomic<uint64_t> full_loads_{0};
  std::atomic<uint64_t> change_loads_{0};
  std::atomic<uint64_t> rows_read_{0};
  std::atomic<uint64_t> changes_read_{0};
  std::atomic<uint64_t> folds_{0};
  std::atomic<uint64_t> change_log_fallbacks_{0};
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_PG_HASH_SOURCE_H_
