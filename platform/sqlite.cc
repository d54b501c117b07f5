// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "platform/sqlite.h"

namespace urlguard::sqlite {

int Open(const std::string& path, int flags, int busy_timeout_ms, Connection* out) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  out->reset(raw);
  if (rc != SQLITE_OK) return rc;
  sqlite3_extended_result_codes(raw, 1);
  return sqlite3_busy_timeout(raw, busy_timeout_ms);
}

int SetJournalModeWal(sqlite3* db, std::string* mode) {
  return QueryText(db, "PRAGMA journal_mode=WAL", mode);
}

int Prepare(sqlite3* db, const char* sql, Stmt* out) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
  out->reset(raw);
  return rc;
}

int Exec(sqlite3* db, const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }

int StepDone(sqlite3_stmt* stmt) {
  ResetOnExit reset(stmt);
  int rc;
  do {
    rc = sqlite3_step(stmt);
  } while (rc == SQLITE_ROW);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int StepInt(sqlite3_stmt* stmt, int64_t* out) {
  ResetOnExit reset(stmt);
  const int rc = sqlite3_step(stmt);
  if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_INTERNAL : rc;
  *out = sqlite3_column_int64(stmt, 0);
  return SQLITE_OK;
}

int QueryInt(sqlite3* db, const char* sql, int64_t* out) {
  Stmt stmt;
  const int rc = Prepare(db, sql, &stmt);
  if (rc != SQLITE_OK) return rc;
  return StepInt(stmt.get(), out);
}

int QueryText(sqlite3* db, const char* sql, std::string* out) {
  Stmt stmt;
  int rc = Prepare(db, sql, &stmt);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_step(stmt.get());
  if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_INTERNAL : rc;
  *out = std::string(ColumnText(stmt.get(), 0));
  return SQLITE_OK;
}

int ReadSchemaState(sqlite3* db, int64_t* user_version, int64_t* objects) {
  const int rc = QueryInt(db, "PRAGMA user_version", user_version);
  if (rc != SQLITE_OK) return rc;
  return QueryInt(db, "SELECT count(*) FROM sqlite_master", objects);
}

std::string_view ColumnText(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  const int size = sqlite3_column_bytes(stmt, column);
  if (text == nullptr || size <= 0) return {};
  return {reinterpret_cast<const char*>(text), static_cast<size_t>(size)};
}

std::string ErrorMessage(sqlite3* db, int rc) {
  return db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}

}  // namespace urlguard::sqlite
