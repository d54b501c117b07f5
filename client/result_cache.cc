// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The verification result cache of docs/cache-schema.md on SQLite (WAL journal, synchronous=NORMAL: it is a
// cache, so a power cut may lose the last stores but never corrupts the file).
#include "client/result_cache.h"

#include <sqlite3.h>

#include <array>
#include <cassert>
#include <utility>

#include "core/list_name.h"
#include "platform/env.h"
#include "sync/data_dir_guard.h"
#include "platform/sqlite.h"

namespace urlguard {
namespace {

using sqlite::ColumnText;
using sqlite::ResetOnExit;
using sqlite::Stmt;

// The schema, in creation order. docs/cache-schema.md explains every column and rule.
// Changes the on-disk format: bump kResultCacheSchemaVersion, update docs/cache-schema.md and regenerate
// fixtures/golden/cache_schema.sql (URLGUARD_UPDATE_GOLDEN=1).
constexpr const char* kSchemaStatements[] = {
    "CREATE TABLE positive (\n"
    "  sha256 BLOB NOT NULL CHECK (length(sha256) = 32),\n"
    "  list TEXT NOT NULL CHECK (length(list) BETWEEN 1 AND 64 AND list NOT GLOB '*[^a-z0-9_-]*'),\n"
    "  list_version INTEGER NOT NULL CHECK (list_version <> 0),\n"
    "  layer TEXT NOT NULL CHECK (layer IN ('domain', 'url', 'ip')),\n"
    "  prefix INTEGER NOT NULL CHECK (prefix BETWEEN 0 AND 4294967295),\n"
    "  threat TEXT NOT NULL CHECK (length(threat) BETWEEN 1 AND 64 AND threat NOT GLOB '*[^a-z0-9_-]*'),\n"
    "  expires_unix INTEGER NOT NULL,\n"
    "  stored_seq INTEGER NOT NULL,\n"
    "  PRIMARY KEY (sha256, list, list_version, layer),\n"
    "  CHECK (hex(substr(sha256, 1, 4)) = printf('%08X', prefix))\n"
    ") STRICT, WITHOUT ROWID",
    "CREATE INDEX positive_by_expiry ON positive (expires_unix)",
    "CREATE UNIQUE INDEX positive_by_age ON positive (stored_seq)",
    "CREATE TABLE negative (\n"
    "  prefix INTEGER NOT NULL CHECK (prefix BETWEEN 0 AND 4294967295),\n"
    "  list TEXT NOT NULL CHECK (length(list) BETWEEN 1 AND 64 AND list NOT GLOB '*[^a-z0-9_-]*'),\n"
    "  list_version INTEGER NOT NULL CHECK (list_version <> 0),\n"
    "  expires_unix INTEGER NOT NULL,\n"
    "  stored_seq INTEGER NOT NULL,\n"
    "  PRIMARY KEY (prefix, list, list_version)\n"
    ") STRICT, WITHOUT ROWID",
    "CREATE INDEX negative_by_expiry ON negative (expires_unix)",
    "CREATE UNIQUE INDEX negative_by_age ON negative (stored_seq)",
    // A negative entry says "no full hash with this prefix beyond the positive entries": it must not outlive
    // any positive entry of its prefix, list and version, or a known threat would turn "safe".
    "CREATE TRIGGER positive_delete_clears_negative AFTER DELETE ON positive BEGIN\n"
    "  DELETE FROM negative\n"
    "  WHERE prefix = old.prefix AND list = old.list AND list_version = old.list_version;\n"
    "END",
};

constexpr const char* kFindPositiveSql =
    "SELECT layer, threat, expires_unix FROM positive WHERE sha256 = ?1 AND list = ?2 AND list_version = ?3 "
    "ORDER BY layer";
constexpr const char* kFindNegativeSql =
    "SELECT expires_unix FROM negative WHERE prefix = ?1 AND list = ?2 AND list_version = ?3";
constexpr const char* kUpsertPositiveSql =
    "INSERT INTO positive (sha256, list, list_version, layer, prefix, threat, expires_unix, stored_seq) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT coalesce(max(stored_seq), 0) + 1 FROM positive)) "
    "ON CONFLICT (sha256, list, list_version, layer) DO UPDATE SET threat = excluded.threat, "
    "expires_unix = excluded.expires_unix, stored_seq = excluded.stored_seq";
constexpr const char* kUpsertNegativeSql =
    "INSERT INTO negative (prefix, list, list_version, expires_unix, stored_seq) "
    "VALUES (?1, ?2, ?3, ?4, (SELECT coalesce(max(stored_seq), 0) + 1 FROM negative)) "
    "ON CONFLICT (prefix, list, list_version) DO UPDATE SET expires_unix = excluded.expires_unix, "
    "stored_seq = excluded.stored_seq";
// Spec (docs/cache-schema.md §4): every store first drops the expired rows of both tables ...
constexpr const char* kPurgePositiveSql = "DELETE FROM positive WHERE expires_unix <= ?1";
constexpr const char* kPurgeNegativeSql = "DELETE FROM negative WHERE expires_unix <= ?1";
// ... and after its insert evicts the oldest stored rows of the table it wrote until the table is at the cap.
constexpr const char* kCountPositiveSql = "SELECT count(*) FROM positive";
constexpr const char* kCountNegativeSql = "SELECT count(*) FROM negative";
constexpr const char* kEvictPositiveSql =
    "DELETE FROM positive WHERE stored_seq IN (SELECT stored_seq FROM positive ORDER BY stored_seq LIMIT ?1)";
constexpr const char* kEvictNegativeSql =
    "DELETE FROM negative WHERE stored_seq IN (SELECT stored_seq FROM negative ORDER BY stored_seq LIMIT ?1)";

// How a failed SQLite call is handled.
enum class Failure {
  kBusy,     // another connection holds a lock: skip this operation (or open later)
  kBadFile,  // not a database, damaged, or another schema: rebuild
  kIo,       // the OS refused (cannot open, read-only, disk full ...): skip / open later
};

Failure Classify(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Failure::kBusy;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
      return Failure::kBadFile;
    default:
      return Failure::kIo;
  }
}

Status ToStatus(Failure failure, std::string message) {
  switch (failure) {
    case Failure::kBusy:
      return Status::Unavailable(std::move(message));
    case Failure::kBadFile:
      return Status::Corruption(std::move(message));
    case Failure::kIo:
      break;
  }
  return Status::IoError(std::move(message));
}

}  // namespace

bool IsValidLayerLabel(std::string_view layer) {
  return layer == "domain" || layer == "url" || layer == "ip";
}

// One open connection with its prepared statements. Used under ResultCache::mutex_ only.
class ResultCache::Db {
 public:
  // The outcome of Open(): a connection, or the SQLite code and a message saying which step failed. rc is
  // SQLITE_CORRUPT for a well-formed database with a foreign or damaged schema.
  struct Opened {
    std::unique_ptr<Db> db;
    int rc = SQLITE_OK;
    std::string what;
  };

  ~Db() {
    for (Stmt* s : AllStatements()) s->reset();
  }

  static Opened Open(const std::string& path, int busy_timeout_ms, bool integrity_check) {
    Opened out;
    auto db = std::unique_ptr<Db>(new Db());
    auto fail = [&out](int rc, std::string what) -> Opened {
      out.rc = rc;
      out.what = std::move(what);
      return std::move(out);
    };
    // NOFOLLOW: a symlink at the database path is refused, never followed (a dangling one would make SQLite
    // create its target, outside the data directory).
    int rc = sqlite::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                          busy_timeout_ms, &db->connection_);
    if (rc != SQLITE_OK) return fail(rc, "open: " + db->Error(rc));

    // Spec (SQLite WAL): the journal mode is persistent; switching a database already in WAL mode needs no
    // lock, so a running writer does not stop a reader from opening the cache.
    std::string mode;
    rc = sqlite::SetJournalModeWal(db->db(), &mode);
    if (rc != SQLITE_OK) return fail(rc, "journal_mode=WAL: " + db->Error(rc));
    if (mode != "wal") return fail(SQLITE_IOERR, "cannot switch to WAL mode (journal mode \"" + mode + "\")");
    rc = db->Exec("PRAGMA synchronous=NORMAL");
    if (rc != SQLITE_OK) return fail(rc, "synchronous=NORMAL: " + db->Error(rc));

    // The schema: read without a write lock; created under BEGIN IMMEDIATE (re-checked inside, so two
    // processes creating the same file do not both create tables).
    int64_t version = 0, objects = 0;
    rc = db->ReadSchemaState(&version, &objects);
    if (rc != SQLITE_OK) return fail(rc, "read schema: " + db->Error(rc));
    if (version == 0 && objects == 0) {
      rc = db->Exec("BEGIN IMMEDIATE");
      if (rc != SQLITE_OK) return fail(rc, "begin: " + db->Error(rc));
      rc = db->ReadSchemaState(&version, &objects);
      if (rc == SQLITE_OK && version == 0 && objects == 0) {
        for (const char* sql : kSchemaStatements) {
          rc = db->Exec(sql);
          if (rc != SQLITE_OK) break;
        }
        if (rc == SQLITE_OK) {
          rc = db->Exec(("PRAGMA user_version=" + std::to_string(kResultCacheSchemaVersion)).c_str());
        }
        if (rc == SQLITE_OK) version = kResultCacheSchemaVersion;
      }
      if (rc == SQLITE_OK) rc = db->Exec("COMMIT");
      if (rc != SQLITE_OK) {
        const std::string error = db->Error(rc);
        (void)db->Exec("ROLLBACK");
        return fail(rc, "create schema: " + error);
      }
    }
    if (version != kResultCacheSchemaVersion) {
      return fail(SQLITE_CORRUPT, version == 0 ? "some other SQLite database (no user_version)"
                                               : "schema version " + std::to_string(version) + ", expected " +
                                                     std::to_string(kResultCacheSchemaVersion));
    }
    if (integrity_check) {
      std::string verdict;
      rc = db->QueryText("PRAGMA quick_check", &verdict);
      if (rc != SQLITE_OK) return fail(rc, "quick_check: " + db->Error(rc));
      if (verdict != "ok") return fail(SQLITE_CORRUPT, "quick_check: " + verdict.substr(0, 200));
    }
    rc = db->PrepareAll();
    if (rc != SQLITE_OK) {
      // A statement over missing or altered tables: the file carries our version number but not our schema.
      const int code = (rc & 0xff) == SQLITE_ERROR ? SQLITE_CORRUPT : rc;
      return fail(code, "prepare: " + db->Error(rc));
    }
    out.db = std::move(db);
    return out;
  }

  sqlite3* db() const { return connection_.get(); }
  std::string Error(int rc) const { return sqlite::ErrorMessage(db(), rc) + " (" + std::to_string(rc) + ")"; }

  // Runs a statement without results (or ignoring them). SQLITE_OK or the failing code.
  int Exec(const char* sql) { return sqlite::Exec(db(), sql); }

  // Steps `stmt` to completion; SQLITE_OK or the failing code. Resets it.
  static int StepDone(sqlite3_stmt* stmt) { return sqlite::StepDone(stmt); }

  // Runs a one-column, one-row count statement.
  static int StepCount(sqlite3_stmt* stmt, int64_t* count) { return sqlite::StepInt(stmt, count); }

  Stmt find_positive, find_negative, upsert_positive, upsert_negative, purge_positive, purge_negative,
      count_positive, count_negative, evict_positive, evict_negative, begin_read, begin_write, commit,
      rollback;

 private:
  Db() = default;

  std::array<Stmt*, 14> AllStatements() {
    return {&find_positive,  &find_negative,  &upsert_positive, &upsert_negative, &purge_positive,
            &purge_negative, &count_positive, &count_negative,  &evict_positive,  &evict_negative,
            &begin_read,     &begin_write,    &commit,          &rollback};
  }

  int PrepareAll() {
    const std::pair<const char*, Stmt*> statements[] = {
        {kFindPositiveSql, &find_positive},
        {kFindNegativeSql, &find_negative},
        {kUpsertPositiveSql, &upsert_positive},
        {kUpsertNegativeSql, &upsert_negative},
        {kPurgePositiveSql, &purge_positive},
        {kPurgeNegativeSql, &purge_negative},
        {kCountPositiveSql, &count_positive},
        {kCountNegativeSql, &count_negative},
        {kEvictPositiveSql, &evict_positive},
        {kEvictNegativeSql, &evict_negative},
        {"BEGIN", &begin_read},
        {"BEGIN IMMEDIATE", &begin_write},
        {"COMMIT", &commit},
        {"ROLLBACK", &rollback},
    };
    for (const auto& [sql, stmt] : statements) {
      const int rc = sqlite::Prepare(db(), sql, stmt);
      if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
  }

  int QueryText(const char* sql, std::string* out) { return sqlite::QueryText(db(), sql, out); }
  int ReadSchemaState(int64_t* version, int64_t* objects) {
    return sqlite::ReadSchemaState(db(), version, objects);
  }

  sqlite::Connection connection_;  // closed after ~Db() has finalized the statements
};

ResultCache::ResultCache(std::string path, const ResultCacheOptions& options)
    : path_(std::move(path)),
      options_(options),
      env_(options.env != nullptr ? options.env : Env::Default()) {}

ResultCache::~ResultCache() = default;

std::unique_ptr<ResultCache> ResultCache::Open(const std::string& path, const ResultCacheOptions& options) {
  assert(options.max_rows >= 1 && options.busy_timeout_ms >= 0);
  auto cache = std::unique_ptr<ResultCache>(new ResultCache(path, options));
  MutexLock lock(&cache->mutex_);
  cache->OpenLocked(/*force_check=*/false);
  return cache;
}

void ResultCache::DisableLocked(Status why) {
  db_.reset();
  status_ = std::move(why);
  retry_at_nanos_ =
      env_->NowMonotonicNanos() + static_cast<uint64_t>(kCacheReopenIntervalSeconds) * 1000000000u;
}

void ResultCache::OpenLocked(bool force_check) {
  db_.reset();
  const std::string dir = DirName(path_);
  if (Status s = env_->CreateDirs(dir); !s.ok()) {
    DisableLocked(
        Status::IoError("result cache " + path_ + ": cannot create its directory: " + s.ToString()));
    return;
  }
  // Only a regular file may be there: SQLite follows a symlink for its -wal and -shm files and reads a FIFO
  // until it is written to (for ever: it holds it open read-write). Anything else is removed, never followed;
  // it is only a cache.
  for (const char* suffix : {"", "-wal", "-shm"}) (void)RemoveIfNotRegularFile(env_, path_ + suffix, nullptr);
  // The cache reveals which listed sites were looked up: 0600 whatever the umask (SQLite gives its -wal and
  // -shm files the database file's mode). A failure here leaves SQLite to create it.
  (void)CreatePrivateFileIfMissing(env_, path_);
  Db::Opened opened = Db::Open(path_, options_.busy_timeout_ms, force_check);
  if (opened.db != nullptr) {
    db_ = std::move(opened.db);
    return;
  }
  const Failure failure = Classify(opened.rc);
  if (failure != Failure::kBadFile) {
    DisableLocked(ToStatus(failure, "result cache " + path_ + " disabled: " + opened.what));
    return;
  }

  // Spec (docs/cache-schema.md §5): a bad file is moved aside, with its WAL, and the cache recreated. The
  // shared-memory index belongs to the bad file and is removed (the new file must not inherit it).
  const std::string aside = path_ + ".bad";
  Status moved = env_->RenameFile(path_, aside);
  if (!moved.ok() && moved.code() != StatusCode::kNotFound) {
    DisableLocked(Status::IoError("result cache " + path_ + " is bad (" + opened.what +
                                  ") and cannot be moved aside: " + moved.ToString()));
    return;
  }
  if (env_->FileExists(path_ + "-wal")) (void)env_->RenameFile(path_ + "-wal", aside + "-wal");
  if (env_->FileExists(path_ + "-shm")) (void)env_->RemoveFile(path_ + "-shm");
  Db::Opened fresh = Db::Open(path_, options_.busy_timeout_ms, /*force_check=*/false);
  if (fresh.db == nullptr) {
    DisableLocked(ToStatus(Classify(fresh.rc), "result cache " + path_ + " was bad (" + opened.what +
                                                   ") and cannot be recreated: " + fresh.what));
    return;
  }
  db_ = std::move(fresh.db);
  status_ = Status::Corruption("result cache " + path_ + " was bad (" + opened.what + "); moved to " + aside +
                               " and rebuilt");
}

bool ResultCache::ReadyLocked() {
  if (db_ != nullptr) return true;
  if (env_->NowMonotonicNanos() < retry_at_nanos_) return false;
  OpenLocked(/*force_check=*/false);
  return db_ != nullptr;
}

void ResultCache::OnErrorLocked(int rc, std::string_view what) {
  const Failure failure = Classify(rc);
  const std::string message = "result cache " + path_ + ": " + std::string(what) + ": " + db_->Error(rc);
  if (failure != Failure::kBadFile) {
    status_ = ToStatus(failure, message);
    return;
  }
  // Damage found while running: reopen with an integrity check, which rebuilds a damaged file (and keeps a
  // file another process has already rebuilt).
  OpenLocked(/*force_check=*/true);
  if (db_ != nullptr && status_.code() != StatusCode::kCorruption) status_ = Status::Corruption(message);
}

ResultCache::Lookup ResultCache::Find(const Sha256Digest& full_hash, const std::string& list,
                                      uint64_t list_version, int64_t now_unix) {
  Lookup out;
  MutexLock lock(&mutex_);
  auto miss = [this]() -> Lookup {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return Lookup{};
  };
  if (!ReadyLocked()) return miss();
  Db& db = *db_;

  // One read transaction: a concurrent store of the positive and then the negative entries of one answer is
  // seen entirely or not at all (a reader must never see its negative entry without its positive entries).
  int rc = Db::StepDone(db.begin_read.get());
  if (rc != SQLITE_OK) {
    OnErrorLocked(rc, "begin");
    return miss();
  }
  bool positive_seen = false;
  {
    sqlite3_stmt* s = db.find_positive.get();
    ResetOnExit reset(s);
    sqlite3_bind_blob(s, 1, full_hash.data(), static_cast<int>(full_hash.size()), SQLITE_STATIC);
    sqlite3_bind_text(s, 2, list.data(), static_cast<int>(list.size()), SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, static_cast<int64_t>(list_version));
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      positive_seen = true;
      const std::string_view threat = ColumnText(s, 1);
      // Spec (docs/cache-schema.md §3, rule 1): a live positive entry answers "malicious".
      if (sqlite3_column_int64(s, 2) > now_unix && IsValidThreatName(threat)) {
        out.answer = Answer::kMalicious;
        out.list = list;
        out.threat = std::string(threat);
        break;
      }
    }
    if (rc == SQLITE_ROW) rc = SQLITE_DONE;
  }
  // Spec (rule 2): an expired (or unreadable) positive entry makes the answer unknown, whatever the negative
  // entries say. Spec (rule 3): otherwise a live negative entry answers "safe".
  if (rc == SQLITE_DONE && !positive_seen) {
    sqlite3_stmt* s = db.find_negative.get();
    ResetOnExit reset(s);
    sqlite3_bind_int64(s, 1, DigestPrefix32(full_hash));
    sqlite3_bind_text(s, 2, list.data(), static_cast<int>(list.size()), SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, static_cast<int64_t>(list_version));
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
      if (sqlite3_column_int64(s, 0) > now_unix) out.answer = Answer::kSafe;
      rc = SQLITE_DONE;
    }
  }
  const int end_rc = Db::StepDone(db.commit.get());
  if (rc != SQLITE_DONE || end_rc != SQLITE_OK) {
    if (sqlite3_get_autocommit(db.db()) == 0) (void)Db::StepDone(db.rollback.get());
    OnErrorLocked(rc != SQLITE_DONE ? rc : end_rc, "find");
    return miss();
  }
  if (out.answer == Answer::kUnknown) return miss();
  hits_.fetch_add(1, std::memory_order_relaxed);
  return out;
}

void ResultCache::StorePositive(const Sha256Digest& full_hash, const std::string& list, uint64_t list_version,
                                const std::string& layer, const std::string& threat, int64_t expires_unix,
                                int64_t now_unix) {
  MutexLock lock(&mutex_);
  StoreLocked(/*positive=*/true, &full_hash, DigestPrefix32(full_hash), list, list_version, layer, threat,
              expires_unix, now_unix);
}

void ResultCache::StoreNegative(uint32_t prefix, const std::string& list, uint64_t list_version,
                                int64_t expires_unix, int64_t now_unix) {
  MutexLock lock(&mutex_);
  static const std::string kNone;
  StoreLocked(/*positive=*/false, nullptr, prefix, list, list_version, kNone, kNone, expires_unix, now_unix);
}

void ResultCache::StoreLocked(bool positive, const Sha256Digest* full_hash, uint32_t prefix,
                              const std::string& list, uint64_t list_version, const std::string& layer,
                              const std::string& threat, int64_t expires_unix, int64_t now_unix) {
  // Validated here as well as by the schema's CHECKs, so a caller bug never reaches the file as a failed
  // transaction that looks like an I/O problem.
  bool valid = IsValidListName(list) && list_version != 0;
  if (positive) valid = valid && IsValidLayerLabel(layer) && IsValidThreatName(threat);
  assert(valid && "ResultCache: store with an invalid list, version, layer or threat");
  if (!valid || expires_unix <= now_unix) return;
  if (!ReadyLocked()) return;
  Db& db = *db_;

  int rc = Db::StepDone(db.begin_write.get());
  if (rc != SQLITE_OK) {
    OnErrorLocked(rc, "begin write");
    return;
  }
  std::string_view failed_step;
  auto step = [&](sqlite3_stmt* s, std::string_view what) {
    if (rc != SQLITE_OK) return;
    rc = Db::StepDone(s);
    if (rc != SQLITE_OK) failed_step = what;
  };
  sqlite3_bind_int64(db.purge_positive.get(), 1, now_unix);
  step(db.purge_positive.get(), "purge expired");
  sqlite3_bind_int64(db.purge_negative.get(), 1, now_unix);
  step(db.purge_negative.get(), "purge expired");

  sqlite3_stmt* upsert = positive ? db.upsert_positive.get() : db.upsert_negative.get();
  if (positive) {
    sqlite3_bind_blob(upsert, 1, full_hash->data(), static_cast<int>(full_hash->size()), SQLITE_STATIC);
    sqlite3_bind_text(upsert, 2, list.data(), static_cast<int>(list.size()), SQLITE_STATIC);
    sqlite3_bind_int64(upsert, 3, static_cast<int64_t>(list_version));
    sqlite3_bind_text(upsert, 4, layer.data(), static_cast<int>(layer.size()), SQLITE_STATIC);
    sqlite3_bind_int64(upsert, 5, prefix);
    sqlite3_bind_text(upsert, 6, threat.data(), static_cast<int>(threat.size()), SQLITE_STATIC);
    sqlite3_bind_int64(upsert, 7, expires_unix);
  } else {
    sqlite3_bind_int64(upsert, 1, prefix);
    sqlite3_bind_text(upsert, 2, list.data(), static_cast<int>(list.size()), SQLITE_STATIC);
    sqlite3_bind_int64(upsert, 3, static_cast<int64_t>(list_version));
    sqlite3_bind_int64(upsert, 4, expires_unix);
  }
  step(upsert, "insert");

  int64_t rows = 0;
  if (rc == SQLITE_OK) {
    rc = Db::StepCount(positive ? db.count_positive.get() : db.count_negative.get(), &rows);
    if (rc != SQLITE_OK) failed_step = "count";
  }
  const auto cap = static_cast<int64_t>(options_.max_rows);
  if (rc == SQLITE_OK && rows > cap) {
    sqlite3_stmt* evict = positive ? db.evict_positive.get() : db.evict_negative.get();
    sqlite3_bind_int64(evict, 1, rows - cap);
    step(evict, "evict");
  }
  step(db.commit.get(), "commit");
  if (rc != SQLITE_OK) {
    if (sqlite3_get_autocommit(db.db()) == 0) (void)Db::StepDone(db.rollback.get());
    OnErrorLocked(rc, failed_step);
  }
}

Status ResultCache::status() const {
  MutexLock lock(&mutex_);
  return status_;
}

bool ResultCache::enabled() const {
  MutexLock lock(&mutex_);
  return db_ != nullptr;
}

}  // namespace urlguard
