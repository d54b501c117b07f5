// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "bench/sqlite_hash_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <utility>

#include "core/list_name.h"
#include "platform/env.h"
#include "platform/sqlite.h"

namespace urlguard {
namespace {

// The schema, in creation order (the one the verify server used before the full-hash files).
constexpr const char* kSchemaStatements[] = {
    "CREATE TABLE lists (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL,\n"
    "  entries INTEGER NOT NULL CHECK (entries >= 0)\n"
    ")",
    "CREATE UNIQUE INDEX lists_by_name ON lists (name)",
    "CREATE TABLE full_hashes (\n"
    "  prefix INTEGER NOT NULL CHECK (prefix BETWEEN 0 AND 4294967295),\n"
    "  sha256 BLOB NOT NULL CHECK (length(sha256) = 32),\n"
    "  list_id INTEGER NOT NULL REFERENCES lists (id),\n"
    "  layer INTEGER NOT NULL CHECK (layer IN (0, 1, 2)),\n"
    "  threat TEXT NOT NULL,\n"
    "  PRIMARY KEY (prefix, sha256, list_id, layer)\n"
    ") WITHOUT ROWID",
};

// Per connection: read the file through a memory mapping (a lookup touches 3-4 B-tree pages; through read()
// each costs a system call and a copy) and keep a larger page cache. Measured on a 1 M-hash store (68 MB,
// 2-core machine under load): one prefix 8.6 -> 5.3 us, five 30.7 -> 16.1 us per lookup.
constexpr const char* kConnectionPragmas = "PRAGMA mmap_size=1073741824; PRAGMA cache_size=-16384";

// One statement looks up n <= kLookupBatch prefixes ("prefix IN (?1, ..., ?n)", prepared on first use for
// each n): one statement execution per request instead of one per prefix plus BEGIN and COMMIT. Measured on a
// 1 M-hash store (2-core machine, loaded): 5 prefixes 17.9 us with IN (?1..?5), 17.6-30.8 us as five "prefix
// = ?1" statements in a transaction, 19.0-23.5 us with a fixed IN list of 32 padded parameters (the padding
// costs 9 us for one prefix); 30 prefixes 58-69 us with IN vs 68-95 us as 30 statements.
constexpr int kLookupBatch = 32;
std::string LookupSql(int n) {
  std::string sql =
      "SELECT f.prefix, f.sha256, l.name, f.layer, f.threat FROM full_hashes AS f "
      "JOIN lists AS l ON l.id = f.list_id WHERE f.prefix IN (";
  for (int i = 1; i <= n; ++i) sql += (i > 1 ? ",?" : "?") + std::to_string(i);
  return sql + ")";
}
constexpr const char* kCountSql = "SELECT entries FROM lists WHERE name = ?1";

using sqlite::ColumnText;
using sqlite::Stmt;

// Maps a SQLite result code to a Status: lock contention is kUnavailable (retry later), a damaged or foreign
// file kCorruption, everything else kIoError.
Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message =
      "hash store: " + std::string(what) + ": " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable(std::move(message));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_SCHEMA:
      return Status::Corruption(std::move(message));
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
      return Status::Corruption(std::move(message));
    case SQLITE_NOMEM:
      return Status::ResourceExhausted(std::move(message));
    default:
      return Status::IoError(std::move(message));
  }
}

Result<Stmt> Prepare(sqlite3* db, const char* sql) {
  Stmt stmt;
  const int rc = sqlite::Prepare(db, sql, &stmt);
  if (rc != SQLITE_OK) {
    Status s = SqliteError(db, rc, "prepare");
    // A statement over missing tables means the file is some other database.
    if ((rc & 0xff) == SQLITE_ERROR) return Status::Corruption(s.message());
    return s;
  }
  return stmt;
}

Status Exec(sqlite3* db, const char* sql) {
  const int rc = sqlite::Exec(db, sql);
  if (rc != SQLITE_OK) return SqliteError(db, rc, sql);
  return Status::Ok();
}

// Runs a statement that returns no rows (or ignores them) to completion and resets it.
Status StepDone(sqlite3* db, sqlite3_stmt* stmt, std::string_view what) {
  const int rc = sqlite::StepDone(stmt);
  if (rc != SQLITE_OK) return SqliteError(db, rc, what);
  return Status::Ok();
}

}  // namespace


// One SQLite connection and its prepared statements. Used by one thread at a time (the pool hands it out), so
// it is opened with SQLITE_OPEN_NOMUTEX.
class FullHashStore::Connection {
 public:
  ~Connection() {
    for (Stmt& s : lookup_) s.reset();
    count_.reset();
    begin_.reset();
    commit_.reset();
    rollback_.reset();
  }

  static Result<std::unique_ptr<Connection>> Open(const std::string& path, bool read_only) {
    auto c = std::unique_ptr<Connection>(new Connection());
    const int flags = (read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) |
                      SQLITE_OPEN_NOMUTEX;
    const int rc = sqlite::Open(path, flags, kHashStoreBusyTimeoutMs, &c->connection_);
    if (rc != SQLITE_OK) return SqliteError(c->db(), rc, "open " + path);
    URLGUARD_RETURN_IF_ERROR(Exec(c->db(), kConnectionPragmas));
    return c;
  }

  // Prepares the statements every call needs. Fails with kCorruption when the tables are missing.
  Status PrepareStatements() {
    URLGUARD_RETURN_IF_ERROR(lookup(1).status());
    URLGUARD_ASSIGN_OR_RETURN(count_, Prepare(db(), kCountSql));
    URLGUARD_ASSIGN_OR_RETURN(begin_, Prepare(db(), "BEGIN"));
    URLGUARD_ASSIGN_OR_RETURN(commit_, Prepare(db(), "COMMIT"));
    URLGUARD_ASSIGN_OR_RETURN(rollback_, Prepare(db(), "ROLLBACK"));
    return Status::Ok();
  }

  sqlite3* db() const { return connection_.get(); }
  // The statement looking up `n` (1..kLookupBatch) prefixes, prepared on first use.
  Result<sqlite3_stmt*> lookup(int n) {
    assert(n >= 1 && n <= kLookupBatch);
    if (lookup_[n] == nullptr) {
      URLGUARD_ASSIGN_OR_RETURN(lookup_[n], Prepare(db(), LookupSql(n).c_str()));
    }
    return lookup_[n].get();
  }
  sqlite3_stmt* count() const { return count_.get(); }
  sqlite3_stmt* begin() const { return begin_.get(); }
  sqlite3_stmt* commit() const { return commit_.get(); }
  sqlite3_stmt* rollback() const { return rollback_.get(); }

 private:
  Connection() = default;

  sqlite::Connection connection_;  // closed after ~Connection() has finalized the statements
  std::array<Stmt, kLookupBatch + 1> lookup_;  // index: prefix count
  Stmt count_, begin_, commit_, rollback_;
};

class FullHashStore::Lease {
 public:
  Lease(const FullHashStore* store, std::unique_ptr<Connection> c)
      : store_(store), connection_(std::move(c)) {}
  Lease(Lease&& other) noexcept = default;
  Lease& operator=(Lease&&) = delete;
  ~Lease() {
    if (connection_ != nullptr) store_->Release(std::move(connection_));
  }
  Connection* operator->() const { return connection_.get(); }

 private:
  const FullHashStore* store_;
  std::unique_ptr<Connection> connection_;
};

FullHashStore::FullHashStore(std::string path, bool read_only, int max_connections)
    : path_(std::move(path)), read_only_(read_only), max_connections_(max_connections) {}

FullHashStore::~FullHashStore() {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  assert(static_cast<int>(idle_.size()) == open_connections_ && "store destroyed while a call is running");
  idle_.clear();
}

Result<std::unique_ptr<FullHashStore>> FullHashStore::Open(const std::string& path, bool read_only,
                                                           int max_connections) {
  if (max_connections < 1 || max_connections > kMaxHashStoreConnections) {
    return Status::InvalidArgument("hash store: max_connections must be 1.." +
                                   std::to_string(kMaxHashStoreConnections));
  }
  if (read_only && !Env::Default()->FileExists(path)) {
    return Status::NotFound("hash store: " + path + " does not exist");
  }
  URLGUARD_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c, Connection::Open(path, read_only));
  sqlite3* db = c->db();

  if (!read_only) {
    // Spec (SQLite WAL): the journal mode is persistent, so one switch serves every later connection.
    std::string mode;
    const int rc = sqlite::SetJournalModeWal(db, &mode);
    if (rc != SQLITE_OK) return SqliteError(db, rc, "journal_mode=WAL");
    if (mode != "wal") {
      return Status::IoError("hash store: " + path + " cannot use WAL mode");
    }
  }

  // The schema: create it in a new file, check its version otherwise. BEGIN IMMEDIATE so two publishers
  // creating the same file do not both create tables.
  if (!read_only) URLGUARD_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  Status status = [&]() -> Status {
    int64_t version = 0, objects = 0;
    const int rc = sqlite::ReadSchemaState(db, &version, &objects);
    if (rc != SQLITE_OK) return SqliteError(db, rc, "read schema");
    if (version == 0 && objects == 0) {
      if (read_only) return Status::Corruption("hash store: " + path + " is empty (no schema)");
      for (const char* sql : kSchemaStatements) URLGUARD_RETURN_IF_ERROR(Exec(db, sql));
      const std::string set_version = "PRAGMA user_version=" + std::to_string(kHashStoreSchemaVersion);
      return Exec(db, set_version.c_str());
    }
    if (version == 0) return Status::Corruption("hash store: " + path + " is some other SQLite database");
    if (version != kHashStoreSchemaVersion) {
      return Status::FailedPrecondition("hash store: " + path + " has schema version " +
                                        std::to_string(version) + ", this build reads version " +
                                        std::to_string(kHashStoreSchemaVersion));
    }
    return Status::Ok();
  }();
  if (!read_only) {
    if (status.ok()) {
      status = Exec(db, "COMMIT");
    } else {
      (void)Exec(db, "ROLLBACK");
    }
  }
  URLGUARD_RETURN_IF_ERROR(status);
  URLGUARD_RETURN_IF_ERROR(c->PrepareStatements());

  auto store = std::unique_ptr<FullHashStore>(new FullHashStore(path, read_only, max_connections));
  store->open_connections_ = 1;
  store->idle_.push_back(std::move(c));
  return store;
}

Result<FullHashStore::Lease> FullHashStore::Acquire() const {
  std::unique_lock<std::mutex> lock(pool_mutex_);
  pool_cv_.wait(lock, [&] { return !idle_.empty() || open_connections_ < max_connections_; });
  if (!idle_.empty()) {
    std::unique_ptr<Connection> c = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(c));
  }
  ++open_connections_;
  lock.unlock();
  auto opened = Connection::Open(path_, read_only_);
  Status status = opened.ok() ? (*opened)->PrepareStatements() : opened.status();
  if (!status.ok()) {
    lock.lock();
    --open_connections_;
    pool_cv_.notify_one();
    return status;
  }
  return Lease(this, std::move(opened).value());
}

void FullHashStore::Release(std::unique_ptr<Connection> connection) const {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    idle_.push_back(std::move(connection));
  }
  pool_cv_.notify_one();
}

Result<std::vector<FullHashRecord>> FullHashStore::LookupPrefixes(
    const std::vector<uint32_t>& prefixes) const {
  if (prefixes.size() > kMaxSqliteLookupPrefixes) {
    return Status::InvalidArgument("hash store: more than " + std::to_string(kMaxSqliteLookupPrefixes) +
                                   " prefixes in one lookup");
  }
  std::vector<uint32_t> unique = prefixes;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  std::vector<FullHashRecord> out;
  if (unique.empty()) return out;

  URLGUARD_ASSIGN_OR_RETURN(Lease c, Acquire());
  sqlite3* db = c->db();
  // One read transaction over all prefixes, so a concurrent ReplaceList is seen entirely or not at all (a
  // single statement is its own transaction).
  const bool in_transaction = unique.size() > static_cast<size_t>(kLookupBatch);
  if (in_transaction) URLGUARD_RETURN_IF_ERROR(StepDone(db, c->begin(), "begin"));
  Status status = [&]() -> Status {
    for (size_t first = 0; first < unique.size(); first += kLookupBatch) {
      const int count = static_cast<int>(std::min(unique.size() - first, static_cast<size_t>(kLookupBatch)));
      URLGUARD_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, c->lookup(count));
      for (int i = 0; i < count; ++i) sqlite3_bind_int64(stmt, i + 1, unique[first + static_cast<size_t>(i)]);
      int rc;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (out.size() >= kMaxSqliteLookupRecords) {
          sqlite3_reset(stmt);
          return Status::ResourceExhausted("hash store: more than " + std::to_string(kMaxSqliteLookupRecords) +
                                           " records match the prefixes");
        }
        const int64_t prefix = sqlite3_column_int64(stmt, 0);
        FullHashRecord r;
        const void* blob = sqlite3_column_blob(stmt, 1);
        const int blob_size = sqlite3_column_bytes(stmt, 1);
        const int64_t layer = sqlite3_column_int64(stmt, 3);
        const std::string_view list = ColumnText(stmt, 2);
        const std::string_view threat = ColumnText(stmt, 4);
        bool valid = blob != nullptr && blob_size == 32 && layer >= 0 && layer < kLayerKindCount &&
                     IsValidListName(list) && IsValidThreatName(threat);
        if (valid) {
          std::memcpy(r.sha256.data(), blob, 32);
          valid = int64_t{DigestPrefix32(r.sha256)} == prefix;
        }
        if (!valid) {
          sqlite3_reset(stmt);
          return Status::Corruption("hash store: a row of prefix " + std::to_string(prefix) +
                                    " breaks the schema's invariants");
        }
        r.list = list;
        r.layer = static_cast<LayerKind>(layer);
        r.threat = threat;
        out.push_back(std::move(r));
      }
      sqlite3_reset(stmt);
      if (rc != SQLITE_DONE) return SqliteError(db, rc, "lookup");
    }
    return Status::Ok();
  }();
  if (in_transaction) {
    if (status.ok()) {
      status = StepDone(db, c->commit(), "commit");
    } else {
      (void)StepDone(db, c->rollback(), "rollback");
    }
  }
  URLGUARD_RETURN_IF_ERROR(status);
  std::sort(out.begin(), out.end(), [](const FullHashRecord& a, const FullHashRecord& b) {
    if (a.sha256 != b.sha256) return a.sha256 < b.sha256;
    if (a.list != b.list) return a.list < b.list;
    return a.layer < b.layer;
  });
  return out;
}

Result<uint64_t> FullHashStore::CountList(const std::string& list) const {
  if (!IsValidListName(list)) return Status::InvalidArgument("hash store: bad list name");
  URLGUARD_ASSIGN_OR_RETURN(Lease c, Acquire());
  sqlite3_stmt* stmt = c->count();
  sqlite3_bind_text(stmt, 1, list.data(), static_cast<int>(list.size()), SQLITE_STATIC);
  const int rc = sqlite3_step(stmt);
  uint64_t count = 0;
  if (rc == SQLITE_ROW) {
    const int64_t v = sqlite3_column_int64(stmt, 0);
    count = v > 0 ? static_cast<uint64_t>(v) : 0;
  }
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError(c->db(), rc, "count");
  return count;
}

Result<std::vector<std::string>> FullHashStore::ListNames() const {
  URLGUARD_ASSIGN_OR_RETURN(Lease c, Acquire());
  URLGUARD_ASSIGN_OR_RETURN(Stmt stmt, Prepare(c->db(), "SELECT name FROM lists ORDER BY name"));
  std::vector<std::string> names;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) names.emplace_back(ColumnText(stmt.get(), 0));
  if (rc != SQLITE_DONE) return SqliteError(c->db(), rc, "list names");
  return names;
}

Status FullHashStore::ReplaceList(const std::string& list, const std::vector<FullHashRecord>& records) {
  if (read_only_) return Status::FailedPrecondition("hash store: opened read-only");
  if (!IsValidListName(list)) return Status::InvalidArgument("hash store: bad list name '" + list + "'");
  for (size_t i = 0; i < records.size(); ++i) {
    const FullHashRecord& r = records[i];
    if (r.list != list) {
      return Status::InvalidArgument("hash store: record " + std::to_string(i) + " belongs to list '" +
                                     r.list + "', not '" + list + "'");
    }
    if (!IsValidLayerKind(static_cast<uint8_t>(r.layer))) {
      return Status::InvalidArgument("hash store: record " + std::to_string(i) + " has a bad layer");
    }
    if (!IsValidThreatName(r.threat)) {
      return Status::InvalidArgument("hash store: record " + std::to_string(i) + " has a bad threat name");
    }
  }

  // The new set, sorted by (sha256, layer), a repeated key keeping its last record.
  std::vector<const FullHashRecord*> wanted(records.size());
  for (size_t i = 0; i < records.size(); ++i) wanted[i] = &records[i];
  auto key_less = [](const FullHashRecord* a, const FullHashRecord* b) {
    if (a->sha256 != b->sha256) return a->sha256 < b->sha256;
    return a->layer < b->layer;
  };
  std::stable_sort(wanted.begin(), wanted.end(), key_less);
  {
    size_t out = 0;
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (i + 1 < wanted.size() && !key_less(wanted[i], wanted[i + 1]))
        continue;  // a later duplicate follows
      wanted[out++] = wanted[i];
    }
    wanted.resize(out);
  }

  std::lock_guard<std::mutex> write_lock(write_mutex_);
  URLGUARD_ASSIGN_OR_RETURN(Lease c, Acquire());
  sqlite3* db = c->db();
  URLGUARD_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  Status status = [&]() -> Status {
    URLGUARD_ASSIGN_OR_RETURN(Stmt add_list, Prepare(db,
                                                     "INSERT INTO lists (name, entries) VALUES (?1, 0) "
                                                     "ON CONFLICT (name) DO NOTHING"));
    sqlite3_bind_text(add_list.get(), 1, list.data(), static_cast<int>(list.size()), SQLITE_STATIC);
    URLGUARD_RETURN_IF_ERROR(StepDone(db, add_list.get(), "add list"));
    URLGUARD_ASSIGN_OR_RETURN(Stmt get_id, Prepare(db, "SELECT id FROM lists WHERE name = ?1"));
    sqlite3_bind_text(get_id.get(), 1, list.data(), static_cast<int>(list.size()), SQLITE_STATIC);
    int rc = sqlite3_step(get_id.get());
    if (rc != SQLITE_ROW) return SqliteError(db, rc, "list id");
    const int64_t list_id = sqlite3_column_int64(get_id.get(), 0);

    // The current set of the list.
    struct Existing {
      Sha256Digest sha256;
      int64_t prefix;
      LayerKind layer;
      std::string threat;
    };
    std::vector<Existing> existing;
    {
      URLGUARD_ASSIGN_OR_RETURN(
          Stmt scan, Prepare(db, "SELECT prefix, sha256, layer, threat FROM full_hashes WHERE list_id = ?1"));
      sqlite3_bind_int64(scan.get(), 1, list_id);
      while ((rc = sqlite3_step(scan.get())) == SQLITE_ROW) {
        Existing e;
        const void* blob = sqlite3_column_blob(scan.get(), 1);
        const int64_t layer = sqlite3_column_int64(scan.get(), 2);
        if (blob == nullptr || sqlite3_column_bytes(scan.get(), 1) != 32 || layer < 0 ||
            layer >= kLayerKindCount) {
          return Status::Corruption("hash store: a row of list '" + list +
                                    "' breaks the schema's invariants");
        }
        std::memcpy(e.sha256.data(), blob, 32);
        e.prefix = sqlite3_column_int64(scan.get(), 0);
        e.layer = static_cast<LayerKind>(layer);
        e.threat = ColumnText(scan.get(), 3);
        existing.push_back(std::move(e));
      }
      if (rc != SQLITE_DONE) return SqliteError(db, rc, "scan list");
    }
    std::sort(existing.begin(), existing.end(), [](const Existing& a, const Existing& b) {
      if (a.sha256 != b.sha256) return a.sha256 < b.sha256;
      return a.layer < b.layer;
    });

    URLGUARD_ASSIGN_OR_RETURN(Stmt insert, Prepare(db,
                                                   "INSERT INTO full_hashes (prefix, sha256, list_id, layer, "
                                                   "threat) VALUES (?1, ?2, ?3, ?4, ?5)"));
    URLGUARD_ASSIGN_OR_RETURN(Stmt erase, Prepare(db,
                                                  "DELETE FROM full_hashes WHERE prefix = ?1 AND sha256 = ?2 "
                                                  "AND list_id = ?3 AND layer = ?4"));
    URLGUARD_ASSIGN_OR_RETURN(Stmt update, Prepare(db,
                                                   "UPDATE full_hashes SET threat = ?5 WHERE prefix = ?1 AND "
                                                   "sha256 = ?2 AND list_id = ?3 AND layer = ?4"));
    auto bind_key = [&](sqlite3_stmt* s, int64_t prefix, const Sha256Digest& sha, LayerKind layer) {
      sqlite3_bind_int64(s, 1, prefix);
      sqlite3_bind_blob(s, 2, sha.data(), static_cast<int>(sha.size()), SQLITE_STATIC);
      sqlite3_bind_int64(s, 3, list_id);
      sqlite3_bind_int64(s, 4, static_cast<int64_t>(layer));
    };
    auto do_insert = [&](const FullHashRecord& r) {
      bind_key(insert.get(), DigestPrefix32(r.sha256), r.sha256, r.layer);
      sqlite3_bind_text(insert.get(), 5, r.threat.data(), static_cast<int>(r.threat.size()), SQLITE_STATIC);
      return StepDone(db, insert.get(), "insert");
    };
    auto do_erase = [&](const Existing& e) {
      bind_key(erase.get(), e.prefix, e.sha256, e.layer);
      return StepDone(db, erase.get(), "delete");
    };

    // Merge the two sorted sets.
    size_t i = 0, j = 0;
    while (i < existing.size() || j < wanted.size()) {
      int order;  // < 0: only in the old set, > 0: only in the new set, 0: in both
      if (i == existing.size()) {
        order = 1;
      } else if (j == wanted.size()) {
        order = -1;
      } else if (existing[i].sha256 != wanted[j]->sha256) {
        order = existing[i].sha256 < wanted[j]->sha256 ? -1 : 1;
      } else {
        order = static_cast<int>(existing[i].layer) - static_cast<int>(wanted[j]->layer);
      }
      if (order < 0) {
        URLGUARD_RETURN_IF_ERROR(do_erase(existing[i++]));
      } else if (order > 0) {
        URLGUARD_RETURN_IF_ERROR(do_insert(*wanted[j++]));
      } else {  // same key in both
        const Existing& e = existing[i++];
        const FullHashRecord& r = *wanted[j++];
        if (e.prefix != DigestPrefix32(r.sha256)) {  // a damaged prefix column: rewrite the row
          URLGUARD_RETURN_IF_ERROR(do_erase(e));
          URLGUARD_RETURN_IF_ERROR(do_insert(r));
        } else if (e.threat != r.threat) {
          bind_key(update.get(), e.prefix, e.sha256, e.layer);
          sqlite3_bind_text(update.get(), 5, r.threat.data(), static_cast<int>(r.threat.size()),
                            SQLITE_STATIC);
          URLGUARD_RETURN_IF_ERROR(StepDone(db, update.get(), "update"));
        }
      }
    }

    if (wanted.empty()) {
      URLGUARD_ASSIGN_OR_RETURN(Stmt drop, Prepare(db, "DELETE FROM lists WHERE id = ?1"));
      sqlite3_bind_int64(drop.get(), 1, list_id);
      return StepDone(db, drop.get(), "drop list");
    }
    URLGUARD_ASSIGN_OR_RETURN(Stmt set_count, Prepare(db, "UPDATE lists SET entries = ?2 WHERE id = ?1"));
    sqlite3_bind_int64(set_count.get(), 1, list_id);
    sqlite3_bind_int64(set_count.get(), 2, static_cast<int64_t>(wanted.size()));
    return StepDone(db, set_count.get(), "count");
  }();
  if (status.ok()) {
    status = Exec(db, "COMMIT");
  }
  if (!status.ok()) (void)Exec(db, "ROLLBACK");
  return status;
}

}  // namespace urlguard
