// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The one SQLite helper: RAII for connections and prepared statements, opening with busy timeout and
// extended result codes, switching to WAL, stepping, and small one-value queries. SQLite is the OS-facing
// storage engine of the result cache (client/result_cache.cc), which calls it through these functions; tests
// look at its files with them too.
//
// Functions return SQLite result codes (SQLITE_OK or the failing code, extended codes on) so each caller
// keeps its own mapping to Status. Not thread-safe beyond what SQLite itself promises for a connection.
#ifndef URLGUARD_PLATFORM_SQLITE_H_
#define URLGUARD_PLATFORM_SQLITE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace urlguard::sqlite {

struct StmtDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
// A prepared statement, finalized when it goes out of scope.
using Stmt = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

struct ConnectionDeleter {
  // sqlite3_close_v2: the close completes once the last statement is finalized, in whatever order the
  // owners go away.
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
// A database connection, closed when it goes out of scope.
using Connection = std::unique_ptr<sqlite3, ConnectionDeleter>;

// Opens `path` with `flags` (SQLITE_OPEN_*), turns on extended result codes and sets the busy timeout. On
// failure *out may still hold a connection (for its error message); it is closed with *out.
int Open(const std::string& path, int flags, int busy_timeout_ms, Connection* out);

// Switches the database to WAL and reports the journal mode now in force ("wal" on success; a database that
// cannot use WAL, e.g. in memory, reports another mode with SQLITE_OK). Spec (SQLite WAL): the mode is
// persistent, and switching a database already in WAL mode takes no lock.
int SetJournalModeWal(sqlite3* db, std::string* mode);

int Prepare(sqlite3* db, const char* sql, Stmt* out);
// Runs SQL without results (several statements allowed).
int Exec(sqlite3* db, const char* sql);

// Steps `stmt` until it is done (ignoring rows), then resets it and clears its bindings.
int StepDone(sqlite3_stmt* stmt);
// Steps `stmt` once and reads column 0 of its row as an integer, then resets it and clears its bindings.
// SQLITE_INTERNAL when there is no row.
int StepInt(sqlite3_stmt* stmt, int64_t* out);

// Column 0 of the first row of `sql`, as an integer or as text. SQLITE_INTERNAL when there is no row.
int QueryInt(sqlite3* db, const char* sql, int64_t* out);
int QueryText(sqlite3* db, const char* sql, std::string* out);

// PRAGMA user_version and the number of objects in sqlite_master: (0, 0) is a new, empty file.
int ReadSchemaState(sqlite3* db, int64_t* user_version, int64_t* objects);

// A column as text (empty for NULL); valid until the statement steps or resets.
std::string_view ColumnText(sqlite3_stmt* stmt, int column);

// SQLite's message for the last failure on `db`, or for `rc` when there is no connection.
std::string ErrorMessage(sqlite3* db, int rc);

// Resets a statement and clears its bindings when it goes out of scope, so an early return never leaves a
// read transaction open.
class ResetOnExit {
 public:
  explicit ResetOnExit(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~ResetOnExit() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

}  // namespace urlguard::sqlite

#endif  // URLGUARD_PLATFORM_SQLITE_H_
