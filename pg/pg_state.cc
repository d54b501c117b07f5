// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "pg/pg_state.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/list_name.h"
#include "platform/fault_point.h"

namespace urlguard {
namespace {

// Migration N brings the schema from N - 1 to N. Never edit a shipped migration: add one.
struct Migration {
  int version;
  const char* description;
  const char* sql;
};

constexpr Migration kMigrations[] = {
    {1, "entries, list_versions",
     R"sql(
CREATE TABLE entries (
  list            text        NOT NULL,
  sha256          bytea       NOT NULL,
  expression      text        NOT NULL,
  layer           smallint    NOT NULL,
  threat          text        NOT NULL,
  feeds           text[]      NOT NULL,
  first_seen      timestamptz NOT NULL,
  last_seen       timestamptz NOT NULL,
  seen_count      bigint      NOT NULL DEFAULT 1,
  listed          boolean     NOT NULL DEFAULT true,
  added_version   bigint,
  removed_version bigint,
  PRIMARY KEY (list, sha256),
  CONSTRAINT entries_sha256_length CHECK (octet_length(sha256) = 32),
  CONSTRAINT entries_layer_range CHECK (layer BETWEEN 0 AND 2),
  CONSTRAINT entries_versions_order CHECK (removed_version IS NULL OR added_version IS NOT NULL)
);
CREATE INDEX entries_pending ON entries (list)
  WHERE (listed AND (added_version IS NULL OR removed_version IS NOT NULL))
     OR (NOT listed AND added_version IS NOT NULL AND removed_version IS NULL);
CREATE TABLE list_versions (
  list              text        NOT NULL,
  version           bigint      NOT NULL,
  manifest          bytea       NOT NULL,
  signature         bytea       NOT NULL,
  state_sha256      bytea       NOT NULL,
  entries           bigint      NOT NULL,
  created           timestamptz NOT NULL DEFAULT now(),
  oldest_first_seen timestamptz,
  PRIMARY KEY (list, version),
  CONSTRAINT list_versions_positive CHECK (version > 0),
  CONSTRAINT list_versions_state_sha256_length CHECK (octet_length(state_sha256) = 32)
);
)sql"},
    // The change log (StreamChanges) reads the rows whose added_version, removed_version or threat_version lies
    // in a version range: these indexes make that three index range scans, O(changes), instead of a scan of the
    // list. Rows that cannot match (never published, live, threat never changed) are left out of each index.
    // A threat change of a live entry becomes a version event: ingest flags it (threat_changed), the next
    // publish stamps threat_version (found through entries_threat_changed, O(flagged)).
    // ADD COLUMN with a constant default rewrites nothing (PostgreSQL >= 11).
    {2, "change log: threat_changed, threat_version and the indexes on added, removed and threat versions",
     R"sql(
ALTER TABLE entries ADD COLUMN threat_changed boolean NOT NULL DEFAULT false;
ALTER TABLE entries ADD COLUMN threat_version bigint;
CREATE INDEX entries_added_version ON entries (list, added_version) WHERE added_version IS NOT NULL;
CREATE INDEX entries_removed_version ON entries (list, removed_version) WHERE removed_version IS NOT NULL;
CREATE INDEX entries_threat_version ON entries (list, threat_version) WHERE threat_version IS NOT NULL;
CREATE INDEX entries_threat_changed ON entries (list) WHERE threat_changed;
)sql"},
};

// pg_advisory_lock keys: the migration lock, and one per list (hashtextextended of a prefixed name).
constexpr int64_t kMigrationLockKey = 0x75726c6775617264;  // "urlguard"
const char kListLockSql[] = "SELECT pg_advisory_lock(hashtextextended('urlguard-publish:' || $1, 0))";
const char kListUnlockSql[] = "SELECT pg_advisory_unlock(hashtextextended('urlguard-publish:' || $1, 0))";

// Spec (docs/postgres-schema.md, "The change log"): the rows added in ($2, $3]; the rows removed in ($2, $3]
// that the first branch did not return (added at or before $2); the live rows added at or before $2 whose
// threat changed in ($2, $3]. Each branch is one range scan of a migration-2 index and no row matches two; the
// last column is the row's presence at the newest version $3.
constexpr char kChangeLogSql[] =
    "SELECT sha256, layer, threat, removed_version IS NULL FROM ("
    "  SELECT sha256, layer, threat, removed_version FROM entries"
    "   WHERE list = $1 AND added_version > $2 AND added_version <= $3"
    "  UNION ALL"
    "  SELECT sha256, layer, threat, removed_version FROM entries"
    "   WHERE list = $1 AND removed_version > $2 AND removed_version <= $3 AND added_version <= $2"
    "  UNION ALL"
    "  SELECT sha256, layer, threat, removed_version FROM entries"
    "   WHERE list = $1 AND threat_version > $2 AND threat_version <= $3 AND added_version <= $2"
    "    AND removed_version IS NULL"
    " ) c ORDER BY sha256";

// A cursor is planned for its first 10 % of rows by default (cursor_tuple_fraction 0.1): for the change log's
// ORDER BY that can favour walking the primary key (list, sha256) in order and filtering, a scan of the whole
// list. StreamChanges reads every row, so it asks for the plan with the least total cost: the two index range
// scans and a sort of the changes.
constexpr char kChangeLogCursorSetup[] = "SET LOCAL cursor_tuple_fraction = 1.0";

std::string DigestBytes(const Sha256Digest& d) { return std::string(reinterpret_cast<const char*>(d.data()), d.size()); }

Result<PgLiveEntry> LiveEntryFromRow(const PgResult& r, int row) {
  PgLiveEntry e;
  std::string sha = r.bytes(row, 0);
  if (sha.size() != 32) return Status::Corruption("PostgreSQL entries: a sha256 that is not 32 bytes");
  std::memcpy(e.sha256.data(), sha.data(), 32);
  e.key.expression = std::string(r.value(row, 1));
  const int64_t layer = r.int64(row, 2);
  if (layer < 0 || layer >= kLayerKindCount) return Status::Corruption("PostgreSQL entries: bad layer");
  e.key.layer = static_cast<LayerKind>(layer);
  e.threat = std::string(r.value(row, 3));
  if (e.key.layer == LayerKind::kIp) {  // "203.0.113.0/24", "2001:db8::/32" (url/entry.h)
    const size_t slash = e.key.expression.rfind('/');
    e.key.ipv6 = e.key.expression.find(':') != std::string::npos;
    e.key.prefix_length = slash == std::string::npos ? (e.key.ipv6 ? 128 : 32)
                                                     : std::atoi(e.key.expression.c_str() + slash + 1);
    if (e.key.prefix_length < 0 || e.key.prefix_length > (e.key.ipv6 ? 128 : 32)) {
      return Status::Corruption("PostgreSQL entries: bad ip range " + e.key.expression);
    }
  }
  return e;
}

}  // namespace

bool IsPostgresStateUri(std::string_view state) {
  return state.starts_with("postgresql://") || state.starts_with("postgres://");
}

Result<std::unique_ptr<PgState>> PgState::Open(const std::string& conninfo) {
  auto conn = PgConnection::Connect(conninfo);
  if (!conn.ok()) return conn.status();
  std::unique_ptr<PgState> s(new PgState(std::move(conn).value()));
  URLGUARD_RETURN_IF_ERROR(s->Migrate(kPgSchemaVersion));
  return s;
}

Result<std::unique_ptr<PgState>> PgState::OpenAtSchemaVersionForTesting(const std::string& conninfo,
                                                                        int schema_version) {
  if (schema_version < 1 || schema_version > kPgSchemaVersion) {
    return Status::InvalidArgument("schema version " + std::to_string(schema_version) + " out of range");
  }
  auto conn = PgConnection::Connect(conninfo);
  if (!conn.ok()) return conn.status();
  std::unique_ptr<PgState> s(new PgState(std::move(conn).value()));
  URLGUARD_RETURN_IF_ERROR(s->Migrate(schema_version));
  return s;
}

PgState::~PgState() {
  if (!locked_list_.empty()) EndPublish(locked_list_);
}

Result<int> PgState::SchemaVersion() {
  auto exists = conn_->Exec("SELECT to_regclass('public.schema_migrations') IS NOT NULL");
  if (!exists.ok()) return exists.status();
  if (exists->value(0, 0) != "t") return 0;
  auto r = conn_->Exec("SELECT coalesce(max(version), 0) FROM schema_migrations");
  if (!r.ok()) return r.status();
  return static_cast<int>(r->int64(0, 0));
}

Status PgState::Migrate(int target_version) {
  URLGUARD_RETURN_IF_ERROR(conn_->Run("SELECT pg_advisory_lock(" + std::to_string(kMigrationLockKey) + ")"));
  Status result = [&]() -> Status {
    URLGUARD_RETURN_IF_ERROR(conn_->Run(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, description text NOT NULL, "
        "applied timestamptz NOT NULL DEFAULT now())"));
    auto current = SchemaVersion();
    if (!current.ok()) return current.status();
    if (*current > kPgSchemaVersion) {
      return Status::FailedPrecondition("PostgreSQL state has schema version " + std::to_string(*current) +
                                        ", newer than this urlguard's " + std::to_string(kPgSchemaVersion) +
                                        ": upgrade urlguard");
    }
    for (const Migration& m : kMigrations) {
      if (m.version <= *current || m.version > target_version) continue;
      URLGUARD_RETURN_IF_ERROR(conn_->Run("BEGIN"));
      Status s = conn_->Run(m.sql);
      if (s.ok()) {
        s = conn_->Run("INSERT INTO schema_migrations (version, description) VALUES ($1, $2)",
                       {PgParam::Int(m.version), PgParam::Text(m.description)});
      }
      if (s.ok()) s = conn_->Run("COMMIT");
      if (!s.ok()) {
        (void)conn_->Run("ROLLBACK");
        return s.WithContext("migration " + std::to_string(m.version));
      }
    }
    return Status::Ok();
  }();
  (void)conn_->Run("SELECT pg_advisory_unlock(" + std::to_string(kMigrationLockKey) + ")");
  return result;
}

Result<PgIngestReport> PgState::IngestFeed(const std::string& list, const std::string& feed,
                                           const std::vector<PgIngestEntry>& entries, int64_t now_unix,
                                           bool replace_feed) {
  if (!IsValidListName(list)) return Status::InvalidArgument("invalid list name: " + list);
  if (feed.empty() || feed.size() > kPgMaxFeedNameBytes) return Status::InvalidArgument("feed name: 1 to 1024 bytes");
  // One row per key: ON CONFLICT DO UPDATE may not touch a row twice in one statement.
  std::vector<std::pair<Sha256Digest, const PgIngestEntry*>> keys;
  keys.reserve(entries.size());
  for (const PgIngestEntry& e : entries) {
    if (e.key.expression.size() > kPgMaxExpressionBytes) {
      return Status::InvalidArgument("expression longer than " + std::to_string(kPgMaxExpressionBytes) + " bytes");
    }
    if (!IsValidThreatName(e.threat)) return Status::InvalidArgument("invalid threat name: " + e.threat);
    keys.emplace_back(Sha256(e.key.expression), &e);
  }
  std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  keys.erase(std::unique(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
             keys.end());

  PgIngestReport report;
  // One transaction per feed. An ingest of a list and a publish of it (whose UPDATE row-locks the list's pending
  // entries in another order), or two feeds replacing entries of one list, can deadlock: PostgreSQL then rolls one
  // transaction back (40P01), and that one runs again from the start, up to kPgIngestAttempts times in all.
  Status s;
  for (int attempt = 1; attempt <= kPgIngestAttempts; ++attempt) {
    report = PgIngestReport{};
    report.entries = keys.size();
    URLGUARD_RETURN_IF_ERROR(conn_->Run("BEGIN"));
    s = [&]() -> Status {
      URLGUARD_RETURN_IF_ERROR(conn_->Run(
          "CREATE TEMP TABLE IF NOT EXISTS ingest_batch (sha256 bytea, expression text, layer smallint, threat text) "
          "ON COMMIT DELETE ROWS;"
          "CREATE TEMP TABLE IF NOT EXISTS ingest_run (sha256 bytea PRIMARY KEY) ON COMMIT DELETE ROWS"));
      const std::string now = std::to_string(now_unix);
      std::string data;
      for (size_t start = 0; start < keys.size(); start += kPgIngestBatchRows) {
        const size_t end = std::min(keys.size(), start + kPgIngestBatchRows);
        data.clear();
        for (size_t i = start; i < end; ++i) {
          AppendCopyBytea(DigestBytes(keys[i].first), &data);
          data.push_back('\t');
          AppendCopyText(keys[i].second->key.expression, &data);
          data.push_back('\t');
          data.append(std::to_string(static_cast<int>(keys[i].second->key.layer)));
          data.push_back('\t');
          AppendCopyText(keys[i].second->threat, &data);
          data.push_back('\n');
        }
        URLGUARD_RETURN_IF_ERROR(conn_->Run("TRUNCATE ingest_batch"));
        URLGUARD_RETURN_IF_ERROR(conn_->CopyIn("COPY ingest_batch FROM STDIN", data));
        auto merged = conn_->Exec(
            "WITH m AS ("
            " INSERT INTO entries AS e (list, sha256, expression, layer, threat, feeds, first_seen, last_seen)"
            " SELECT $1, sha256, expression, layer, threat, ARRAY[$2], to_timestamp($3), to_timestamp($3)"
            " FROM ingest_batch"
            " ON CONFLICT (list, sha256) DO UPDATE SET"
            "  last_seen = greatest(e.last_seen, EXCLUDED.last_seen), seen_count = e.seen_count + 1,"
            "  threat_changed = e.threat_changed OR e.threat <> EXCLUDED.threat,"
            "  threat = EXCLUDED.threat, listed = true,"
            "  feeds = CASE WHEN $2 = ANY(e.feeds) THEN e.feeds ELSE e.feeds || $2 END"
            " RETURNING (xmax = 0) AS inserted)"
            " SELECT count(*) FILTER (WHERE inserted), count(*) FROM m",
            {PgParam::Text(list), PgParam::Text(feed), PgParam::Text(now)});
        if (!merged.ok()) return merged.status();
        report.new_entries += static_cast<uint64_t>(merged->int64(0, 0));
        report.seen_before += static_cast<uint64_t>(merged->int64(0, 1) - merged->int64(0, 0));
        ++report.batches;
        if (replace_feed) {
          URLGUARD_RETURN_IF_ERROR(conn_->Run("INSERT INTO ingest_run SELECT sha256 FROM ingest_batch"));
        }
      }
      if (replace_feed) {
        auto removed = conn_->Exec(
            "WITH u AS ("
            " UPDATE entries e SET feeds = array_remove(e.feeds, $2),"
            "  listed = cardinality(array_remove(e.feeds, $2)) > 0"
            " WHERE e.list = $1 AND $2 = ANY(e.feeds)"
            "  AND NOT EXISTS (SELECT 1 FROM ingest_run r WHERE r.sha256 = e.sha256)"
            " RETURNING e.listed)"
            " SELECT count(*) FILTER (WHERE NOT listed) FROM u",
            {PgParam::Text(list), PgParam::Text(feed)});
        if (!removed.ok()) return removed.status();
        report.removed = static_cast<uint64_t>(removed->int64(0, 0));
      }
      return conn_->Run("COMMIT");
    }();
    if (s.ok()) return report;
    const bool retry = conn_->last_failure_retryable();
    (void)conn_->Run("ROLLBACK");
    if (!retry) return s;
  }
  return s;
}

Result<uint64_t> PgState::RemoveEntries(const std::string& list, const std::string& feed,
                                        const std::vector<Sha256Digest>& keys) {
  if (!IsValidListName(list)) return Status::InvalidArgument("invalid list name: " + list);
  std::string array = "{";
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i != 0) array.push_back(',');
    array += "\"\\\\x" + ToHex(keys[i]) + "\"";
  }
  array.push_back('}');
  auto r = conn_->Exec(
      "WITH u AS ("
      " UPDATE entries e SET feeds = array_remove(e.feeds, $2), listed = cardinality(array_remove(e.feeds, $2)) > 0"
      " WHERE e.list = $1 AND e.sha256 = ANY($3::bytea[]) AND $2 = ANY(e.feeds) RETURNING e.listed)"
      " SELECT count(*) FILTER (WHERE NOT listed) FROM u",
      {PgParam::Text(list), PgParam::Text(feed), PgParam::Text(array)});
  if (!r.ok()) return r.status();
  return static_cast<uint64_t>(r->int64(0, 0));
}

Result<std::vector<int64_t>> PgState::SeenCounts(const std::vector<Sha256Digest>& keys) {
  std::vector<int64_t> out;
  out.reserve(keys.size());
  for (const Sha256Digest& k : keys) {
    auto r = conn_->Exec("SELECT coalesce(sum(seen_count), 0) FROM entries WHERE sha256 = $1",
                         {PgParam::Bytes(DigestBytes(k))});
    if (!r.ok()) return r.status();
    out.push_back(r->int64(0, 0));
  }
  return out;
}

Result<CommittedVersion> PgState::BeginPublish(const std::string& list) {
  if (!IsValidListName(list)) return Status::InvalidArgument("invalid list name: " + list);
  if (!locked_list_.empty()) return Status::FailedPrecondition("a publish run is already open on this connection");
  // A session lock, not a transaction lock: it must also cover the manifest files written after COMMIT and
  // the removal of old files, so the next publisher starts only when this run's files are in place. PostgreSQL
  // releases it when the session ends, so a killed publisher cannot keep it.
  URLGUARD_RETURN_IF_ERROR(conn_->Run(kListLockSql, {PgParam::Text(list)}));
  locked_list_ = list;
  Status s = conn_->Run("BEGIN ISOLATION LEVEL READ COMMITTED");
  if (!s.ok()) {
    EndPublish(list);
    return s;
  }
  in_transaction_ = true;
  auto r = conn_->Exec(
      "SELECT version, manifest, signature FROM list_versions WHERE list = $1 ORDER BY version DESC LIMIT 1",
      {PgParam::Text(list)});
  if (!r.ok()) {
    EndPublish(list);
    return r.status();
  }
  CommittedVersion v;
  if (r->rows() == 1) {
    v.version = static_cast<uint64_t>(r->int64(0, 0));
    v.manifest = r->bytes(0, 1);
    v.signature = r->bytes(0, 2);
  }
  return v;
}

Status PgState::StreamLive(const std::string& list, uint64_t version,
                           const std::function<void(const PgLiveEntry&)>& fn) {
  URLGUARD_RETURN_IF_ERROR(conn_->Run(
      "DECLARE live NO SCROLL CURSOR FOR SELECT sha256, expression, layer, threat FROM entries"
      " WHERE list = $1 AND added_version <= $2 AND (removed_version IS NULL OR removed_version > $2)"
      " ORDER BY sha256",
      {PgParam::Text(list), PgParam::Int(static_cast<int64_t>(version))}));
  const std::string fetch = "FETCH " + std::to_string(kPgFetchRows) + " FROM live";
  for (;;) {
    auto r = conn_->Exec(fetch);
    if (!r.ok()) return r.status();
    for (int i = 0; i < r->rows(); ++i) {
      auto e = LiveEntryFromRow(*r, i);
      if (!e.ok()) return e.status();
      fn(*e);
    }
    if (r->rows() < kPgFetchRows) break;
  }
  return conn_->Run("CLOSE live");
}

Status PgState::StreamNextVersion(const std::string& list, uint64_t version,
                                  const std::function<void(const PgLiveEntry&)>& fn) {
  if (locked_list_ != list || !in_transaction_) return Status::FailedPrecondition("no publish run open for " + list);
  const std::vector<PgParam> params = {PgParam::Text(list), PgParam::Int(static_cast<int64_t>(version))};
  // Spec (docs/postgres-schema.md): newly listed or re-listed entries are added at V; unlisted live ones are
  // removed at V.
  URLGUARD_RETURN_IF_ERROR(conn_->Run(
      "UPDATE entries SET added_version = $2, removed_version = NULL, threat_changed = false WHERE list = $1 AND listed"
      " AND (added_version IS NULL OR removed_version IS NOT NULL)",
      params));
  URLGUARD_RETURN_IF_ERROR(conn_->Run(
      "UPDATE entries SET removed_version = $2 WHERE list = $1 AND NOT listed"
      " AND added_version IS NOT NULL AND removed_version IS NULL",
      params));
  // Spec: an entry whose threat an ingest changed since the last version has its threat changed at V (the change
  // log reads it; for an entry added or removed at V it changes nothing).
  URLGUARD_RETURN_IF_ERROR(conn_->Run(
      "UPDATE entries SET threat_version = $2, threat_changed = false WHERE list = $1 AND threat_changed", params));
  return StreamLive(list, version, fn);
}

Status PgState::CommitVersion(const VersionCommit& c) {
  if (locked_list_ != c.list || !in_transaction_) return Status::FailedPrecondition("no publish run open for " + c.list);
  Status s = conn_->Run(
      "INSERT INTO list_versions (list, version, manifest, signature, state_sha256, entries, oldest_first_seen)"
      " SELECT $1, $2, $3, $4, $5,"
      "  (SELECT count(*) FROM entries WHERE list = $1 AND added_version <= $2"
      "    AND (removed_version IS NULL OR removed_version > $2)),"
      "  (SELECT min(first_seen) FROM entries WHERE list = $1 AND added_version = $2)",
      {PgParam::Text(c.list), PgParam::Int(static_cast<int64_t>(c.version)), PgParam::Bytes(c.manifest),
       PgParam::Bytes(c.signature), PgParam::Bytes(DigestBytes(c.state_sha256))});
  URLGUARD_FAULT_POINT("pg.publish.before-commit");
  if (s.ok()) s = conn_->Run("COMMIT");
  if (!s.ok()) {
    (void)conn_->Run("ROLLBACK");
    in_transaction_ = false;
    return s.WithContext("committing " + c.list + " version " + std::to_string(c.version));
  }
  in_transaction_ = false;
  URLGUARD_FAULT_POINT("pg.publish.after-commit");
  return Status::Ok();
}

void PgState::EndPublish(const std::string& list) {
  if (in_transaction_) (void)conn_->Run("ROLLBACK");
  in_transaction_ = false;
  if (locked_list_ == list && !list.empty()) (void)conn_->Run(kListUnlockSql, {PgParam::Text(list)});
  locked_list_.clear();
}

Result<std::vector<PgVersionInfo>> PgState::LatestVersions() {
  auto r = conn_->Exec(
      "SELECT DISTINCT ON (list) list, version, extract(epoch FROM created)::bigint,"
      " coalesce(extract(epoch FROM oldest_first_seen)::bigint, 0), entries"
      " FROM list_versions ORDER BY list, version DESC");
  if (!r.ok()) return r.status();
  std::vector<PgVersionInfo> out;
  for (int i = 0; i < r->rows(); ++i) {
    PgVersionInfo v;
    v.list = std::string(r->value(i, 0));
    v.version = static_cast<uint64_t>(r->int64(i, 1));
    v.created_unix = r->int64(i, 2);
    v.oldest_first_seen_unix = r->int64(i, 3);
    v.entries = static_cast<uint64_t>(r->int64(i, 4));
    out.push_back(std::move(v));
  }
  return out;
}

Status PgState::StreamVersion(const std::string& list, uint64_t version,
                              const std::function<void(const PgLiveEntry&)>& fn) {
  URLGUARD_RETURN_IF_ERROR(conn_->Run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  Status s = StreamLive(list, version, fn);
  if (s.ok()) s = conn_->Run("COMMIT");
  if (!s.ok()) (void)conn_->Run("ROLLBACK");
  return s;
}

Status PgState::StreamChanges(const std::string& list, uint64_t from_version, uint64_t to_version,
                              const std::function<void(const PgChangedEntry&)>& fn) {
  if (!IsValidListName(list)) return Status::InvalidArgument("invalid list name: " + list);
  if (from_version > to_version) return Status::InvalidArgument("change log from a version after its end");
  const int64_t from = static_cast<int64_t>(from_version), to = static_cast<int64_t>(to_version);
  URLGUARD_RETURN_IF_ERROR(conn_->Run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  Status s = [&]() -> Status {
    // In this snapshot: `to` must be the newest committed version (see the header) and `from` committed.
    auto newest = conn_->Exec(
        "SELECT coalesce(max(version), 0), count(*) FILTER (WHERE version = $2) FROM list_versions WHERE list = $1",
        {PgParam::Text(list), PgParam::Int(from)});
    if (!newest.ok()) return newest.status();
    const int64_t latest = newest->int64(0, 0);
    if (latest < to || to == 0) return Status::NotFound(list + " version " + std::to_string(to) + " is not committed");
    if (latest > to) {
      return Status::FailedPrecondition(list + " version " + std::to_string(latest) + " was committed after " +
                                        std::to_string(to) + ": the change log reads to the newest version only");
    }
    if (from != 0 && newest->int64(0, 1) != 1) {
      return Status::NotFound(list + " version " + std::to_string(from) + " is not committed");
    }
    URLGUARD_RETURN_IF_ERROR(conn_->Run(kChangeLogCursorSetup));
    URLGUARD_RETURN_IF_ERROR(conn_->Run(std::string("DECLARE changes NO SCROLL CURSOR FOR ") + kChangeLogSql,
                                        {PgParam::Text(list), PgParam::Int(from), PgParam::Int(to)}));
    const std::string fetch = "FETCH " + std::to_string(kPgFetchRows) + " FROM changes";
    for (;;) {
      auto r = conn_->Exec(fetch);
      if (!r.ok()) return r.status();
      for (int i = 0; i < r->rows(); ++i) {
        PgChangedEntry e;
        const std::string sha = r->bytes(i, 0);
        if (sha.size() != 32) return Status::Corruption("PostgreSQL entries: a sha256 that is not 32 bytes");
        std::memcpy(e.sha256.data(), sha.data(), 32);
        const int64_t layer = r->int64(i, 1);
        if (layer < 0 || layer >= kLayerKindCount) return Status::Corruption("PostgreSQL entries: bad layer");
        e.layer = static_cast<LayerKind>(layer);
        e.threat = std::string(r->value(i, 2));
        e.live = r->value(i, 3) == "t";
        fn(e);
      }
      if (r->rows() < kPgFetchRows) break;
    }
    return conn_->Run("CLOSE changes");
  }();
  if (s.ok()) s = conn_->Run("COMMIT");
  if (!s.ok()) (void)conn_->Run("ROLLBACK");
  return s;
}

Result<std::string> PgState::ExplainChanges(const std::string& list, uint64_t from_version, uint64_t to_version) {
  // The plan of the cursor exactly as StreamChanges declares it (a cursor is planned for its first rows unless
  // told otherwise, see kChangeLogCursorSetup).
  URLGUARD_RETURN_IF_ERROR(conn_->Run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  Status setup = conn_->Run(kChangeLogCursorSetup);
  Result<PgResult> r = setup.ok() ? Result<PgResult>(PgResult()) : Result<PgResult>(setup);
  if (setup.ok()) {
    r = conn_->Exec(std::string("EXPLAIN DECLARE changes NO SCROLL CURSOR FOR ") + kChangeLogSql,
                    {PgParam::Text(list), PgParam::Int(static_cast<int64_t>(from_version)),
                     PgParam::Int(static_cast<int64_t>(to_version))});
  }
  (void)conn_->Run("ROLLBACK");
  if (!r.ok()) return r.status();
  std::string out;
  for (int i = 0; i < r->rows(); ++i) out += std::string(r->value(i, 0)) + "\n";
  return out;
}

Result<CommittedVersion> PgState::ReadVersion(const std::string& list, uint64_t version) {
  auto r = conn_->Exec("SELECT manifest, signature FROM list_versions WHERE list = $1 AND version = $2",
                       {PgParam::Text(list), PgParam::Int(static_cast<int64_t>(version))});
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return Status::NotFound(list + " version " + std::to_string(version) + " is not committed");
  CommittedVersion v;
  v.version = version;
  v.manifest = r->bytes(0, 0);
  v.signature = r->bytes(0, 1);
  return v;
}

Result<std::string> PgState::DumpSchema() {
  std::string out;
  auto cols = conn_->Exec(
      "SELECT table_name, column_name, data_type, is_nullable, coalesce(column_default, '') FROM "
      "information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position");
  if (!cols.ok()) return cols.status();
  for (int i = 0; i < cols->rows(); ++i) {
    out += "column " + std::string(cols->value(i, 0)) + "." + std::string(cols->value(i, 1)) + " " +
           std::string(cols->value(i, 2)) + (cols->value(i, 3) == "NO" ? " not null" : " null");
    if (!cols->value(i, 4).empty()) out += " default " + std::string(cols->value(i, 4));
    out += "\n";
  }
  auto cons = conn_->Exec(
      "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
      " WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2");
  if (!cons.ok()) return cons.status();
  for (int i = 0; i < cons->rows(); ++i) {
    out += "constraint " + std::string(cons->value(i, 0)) + "." + std::string(cons->value(i, 1)) + " " +
           std::string(cons->value(i, 2)) + "\n";
  }
  auto idx = conn_->Exec("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1");
  if (!idx.ok()) return idx.status();
  for (int i = 0; i < idx->rows(); ++i) {
    out += "index " + std::string(idx->value(i, 0)) + " " + std::string(idx->value(i, 1)) + "\n";
  }
  auto mig = conn_->Exec("SELECT version, description FROM schema_migrations ORDER BY version");
  if (!mig.ok()) return mig.status();
  for (int i = 0; i < mig->rows(); ++i) {
    out += "migration " + std::string(mig->value(i, 0)) + " " + std::string(mig->value(i, 1)) + "\n";
  }
  return out;
}

}  // namespace urlguard
