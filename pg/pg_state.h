// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// PgState: the publisher's source of truth in PostgreSQL 15 (`--state postgresql://...`), for a fleet of
// publishers and verify servers (docs/architecture.md §8). The schema (version 2, docs/postgres-schema.md,
// pinned by fixtures/golden/postgres_schema_v2.txt; v1 by postgres_schema_v1.txt) holds
//   - entries:        one row per (list, key): expression, sha256, layer, threat, the feeds that list it
//                     (provenance), first/last seen, how many ingest runs saw it (the shared "seen before?"
//                     count), the versions that added and removed it, and the version that last changed
//                     its threat while it stayed live (threat_changed flags an ingest's change until the next
//                     publish stamps threat_version);
//   - list_versions:  one row per committed version: the exact manifest and signature bytes, the snapshot's
//                     state sha256, the live entry count, when, and the oldest first_seen it publishes;
//   - schema_migrations: which migrations ran.
// The full hashes of version V are the entries live at V (added_version <= V and not removed at or before V).
// The change log from a version to the newest (StreamChanges) is read through the (list, added_version),
// (list, removed_version) and (list, threat_version) indexes of migration 2, so a verify server pays for what
// changed, not for the list.
//
// Ingestion (IngestFeed) is incremental and batched: each batch is COPYed into a temporary table and merged
// with one INSERT ... ON CONFLICT DO UPDATE; a feed's whole dump is one transaction, so a dump that fails
// half-way changes nothing. Publishing goes through the VersionStore seam (format/version_store.h): a
// session advisory lock per list serializes publishers, the version row's primary key makes a second commit
// of one version impossible.
//
// Thread safety: one PgState is one connection; use it from one thread at a time (each thread or process opens
// its own). Many PgState objects on many machines may work on one database at once.
#ifndef URLGUARD_PG_PG_STATE_H_
#define URLGUARD_PG_PG_STATE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "url/entry.h"
#include "core/layer_kind.h"
#include "core/sha256.h"
#include "pg/pg_connection.h"
#include "format/version_store.h"
#include "urlguard/status.h"

namespace urlguard {

// The schema version this code writes and reads (schema_migrations' highest row). A database at a higher
// version is refused (kFailedPrecondition): an older binary must not write a newer schema.
// Changes the schema: add a migration, bump this and the golden test (URLGUARD_UPDATE_GOLDEN=1).
constexpr int kPgSchemaVersion = 2;
// Rows per COPY batch during ingestion (one temp-table COPY plus one INSERT ... ON CONFLICT each).
constexpr size_t kPgIngestBatchRows = 50000;
// How many times IngestFeed runs a feed's transaction that PostgreSQL rolled back as a deadlock victim or a
// serialization failure (PgConnection::last_failure_retryable) before it gives up.
constexpr int kPgIngestAttempts = 4;
// Rows fetched per round trip when streaming a version's entries out of PostgreSQL.
constexpr int kPgFetchRows = 20000;
// Longest expression stored (a feed value is at most kMaxFeedValueBytes; its canonical form may grow by %XX).
constexpr size_t kPgMaxExpressionBytes = 32 << 10;
// Feed name (provenance) length cap.
constexpr size_t kPgMaxFeedNameBytes = 1024;

// True for "postgresql://..." and "postgres://..." (the --state values that select PostgreSQL).
bool IsPostgresStateUri(std::string_view state);

// One entry as ingestion gives it.
struct PgIngestEntry {
  EntryKey key;        // layer and expression (url/entry.h)
  std::string threat;  // a valid threat name
};

struct PgIngestReport {
  uint64_t entries = 0;      // unique keys in the feed
  uint64_t new_entries = 0;  // never seen in this list before
  uint64_t seen_before = 0;  // seen in an earlier run
  uint64_t removed = 0;      // no longer listed by any feed (replace mode)
  uint64_t batches = 0;
};

// A live entry of a version, streamed in sha256 order.
struct PgLiveEntry {
  EntryKey key;
  std::string threat;
  Sha256Digest sha256{};
};

// An entry whose presence changed in a change log (StreamChanges), streamed in sha256 order.
struct PgChangedEntry {
  Sha256Digest sha256{};
  LayerKind layer = LayerKind::kDomain;
  std::string threat;  // the entry's threat when `live`; the last one it had otherwise (meaningless)
  bool live = false;   // present at the change log's to_version (a put); false: absent at it (a delete)
};

// A committed version as verify servers see it.
struct PgVersionInfo {
  std::string list;
  uint64_t version = 0;
  int64_t created_unix = 0;
  int64_t oldest_first_seen_unix = 0;  // 0 when the version added nothing
  uint64_t entries = 0;
};

class PgState : public VersionStore {
 public:
  // Connects and brings the schema to kPgSchemaVersion (each migration in its own transaction, under an
  // advisory lock so concurrent openers do not race). Failures: kInvalidArgument (conninfo), kUnavailable
  // (PostgreSQL down), kFailedPrecondition (the database has a newer schema), kInternal (SQL errors).
  static Result<std::unique_ptr<PgState>> Open(const std::string& conninfo);
  ~PgState() override;

  // The schema version recorded in schema_migrations (0 for an empty database).
  Result<int> SchemaVersion();

  // Ingests one feed's entries into `list` at `now_unix`: new keys are inserted (first_seen = last_seen = now,
  // seen_count 1), known ones get last_seen = now and seen_count + 1, and `feed` is added to their provenance;
  // all become listed. Keys given twice count once. With `replace_feed`, the call is the feed's whole content:
  // keys that only `feed` listed and that are not in `entries` stop being listed (the next publish removes
  // them); keys other feeds still list only lose `feed` from their provenance. One transaction.
  // Failures: kInvalidArgument (list, feed name, an expression over kPgMaxExpressionBytes), kUnavailable,
  // kInternal.
  Result<PgIngestReport> IngestFeed(const std::string& list, const std::string& feed,
                                    const std::vector<PgIngestEntry>& entries, int64_t now_unix, bool replace_feed);

  // Stops listing `keys` (sha256) in `list` for `feed` (provenance removed; unlisted when no feed is left).
  // Returns how many became unlisted.
  Result<uint64_t> RemoveEntries(const std::string& list, const std::string& feed,
                                 const std::vector<Sha256Digest>& keys);

  // The shared "seen before?" counts: for each key, the number of ingest runs that contained it, summed over
  // lists (0 when never seen).
  Result<std::vector<int64_t>> SeenCounts(const std::vector<Sha256Digest>& keys);

  // ---- VersionStore (the publisher's seam) ----
  Result<CommittedVersion> BeginPublish(const std::string& list) override;
  // Commits. Fault points (platform/fault_point.h, test builds only) for tests/fleet_pg_test.cc's kill tests:
  // "pg.publish.before-commit" and "pg.publish.after-commit".
  Status CommitVersion(const VersionCommit& commit) override;
  void EndPublish(const std::string& list) override;

  // Inside a BeginPublish run: assigns version `version` (= last committed + 1) to every pending change of
  // `list` (newly listed entries are added at `version`, unlisted ones removed at it), then calls `fn` for every
  // entry live at `version`, in sha256 order, fetched kPgFetchRows at a time. Rolled back unless CommitVersion
  // follows. kFailedPrecondition outside a run.
  Status StreamNextVersion(const std::string& list, uint64_t version,
                           const std::function<void(const PgLiveEntry&)>& fn);

  // ---- verify servers ----
  // Every list's newest committed version.
  Result<std::vector<PgVersionInfo>> LatestVersions();
  // The entries live at committed `version` of `list`, in sha256 order (one read-only snapshot).
  Status StreamVersion(const std::string& list, uint64_t version, const std::function<void(const PgLiveEntry&)>& fn);
  // The change log of `list` from committed `from_version` (0: the empty list before version 1) to committed
  // `to_version`, which must be the list's newest committed version: calls `fn`, in sha256 order, fetched
  // kPgFetchRows at a time, for every entry whose row changed in (from, to] (its added_version or
  // removed_version lies in the range, or it stayed live and its threat_version does), with its presence at `to`. Applied with set semantics to the full
  // hashes of `from` ((from \ deletes) ∪ puts, a put replacing the record of the same sha256), it gives exactly
  // the full hashes of `to`. One read-only REPEATABLE READ snapshot; costs O(changes) through the indexes of
  // migration 2 (docs/postgres-schema.md, "The change log").
  // Why only to the newest: a row keeps only its last (added, removed) interval, so a version after `to` could
  // have overwritten what the row said at `to`; at the newest version the row is exact.
  // The log may hold more than the entries whose presence differs: an entry added and removed inside the range
  // comes as a delete (the row cannot tell whether an earlier interval, overwritten by the re-add, covered
  // `from`), and one removed and re-added inside it comes as a put. Both are no-ops under set semantics.
  // Failures: kInvalidArgument (list name, from > to), kNotFound (`from` or `to` not committed),
  // kFailedPrecondition (`to` is no longer the newest committed version: read LatestVersions again),
  // kUnavailable, kInternal, kCorruption (a malformed row).
  Status StreamChanges(const std::string& list, uint64_t from_version, uint64_t to_version,
                       const std::function<void(const PgChangedEntry&)>& fn);
  // PostgreSQL's plan (EXPLAIN, one line per row) for StreamChanges' query: what docs/postgres-schema.md shows
  // and the tests check (index scans on entries_added_version, entries_removed_version and
  // entries_threat_version, no Seq Scan).
  Result<std::string> ExplainChanges(const std::string& list, uint64_t from_version, uint64_t to_version);
  // The manifest and signature bytes of a committed version (kNotFound when not committed).
  Result<CommittedVersion> ReadVersion(const std::string& list, uint64_t version);

  // The schema as PostgreSQL's catalog describes it (tables, columns, constraints, indexes), one item a line,
  // sorted: what fixtures/golden/postgres_schema_v2.txt pins (one golden file per kPgSchemaVersion).
  Result<std::string> DumpSchema();

  // Tests only (the migration test): connects and migrates no further than `schema_version` (<=
  // kPgSchemaVersion), as an older urlguard would have left the database. Same failures as Open.
  static Result<std::unique_ptr<PgState>> OpenAtSchemaVersionForTesting(const std::string& conninfo,
                                                                        int schema_version);

  PgConnection* connection() { return conn_.get(); }

 private:
  explicit PgState(std::unique_ptr<PgConnection> conn) : conn_(std::move(conn)) {}
  Status Migrate(int target_version);
  Status StreamLive(const std::string& list, uint64_t version, const std::function<void(const PgLiveEntry&)>& fn);

  std::unique_ptr<PgConnection> conn_;
  std::string locked_list_;  // the list whose publish lock this session holds, if any
  bool in_transaction_ = false;
};

}  // namespace urlguard

#endif  // URLGUARD_PG_PG_STATE_H_
