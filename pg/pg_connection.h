// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// PgConnection: one libpq connection, with errors as Status values (pg/pg_state.h is its only user).
//
// Errors: a connection that cannot be made or is lost is kUnavailable (the caller may retry: PostgreSQL is
// down or restarting); a statement PostgreSQL rejects is kInternal with the server's message, except a unique
// violation (SQLSTATE 23505), which is kAlreadyExists-like and reported as kFailedPrecondition so callers can
// tell "someone else committed this version" from a broken store.
//
// Parameters are passed as text, or as binary for the byte strings (bytea) the caller marks.
//
// Thread safety: none; one thread at a time per connection (libpq's rule).
#ifndef URLGUARD_PG_PG_CONNECTION_H_
#define URLGUARD_PG_PG_CONNECTION_H_

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// How long connecting may take before kUnavailable (libpq's connect_timeout, seconds).
constexpr int kPgConnectTimeoutSeconds = 5;

// A query result; empty when the statement returns no rows.
class PgResult {
 public:
  PgResult() = default;
  explicit PgResult(PGresult* r) : r_(r, &PQclear) {}
  int rows() const { return r_ ? PQntuples(r_.get()) : 0; }
  bool is_null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  // The value as text (text results), or its raw bytes (binary results).
  std::string_view value(int row, int col) const {
    return {PQgetvalue(r_.get(), row, col), static_cast<size_t>(PQgetlength(r_.get(), row, col))};
  }
  // A bigint/integer column of a text result; 0 for NULL or garbage.
  int64_t int64(int row, int col) const;
  // A bytea column of a text result ("\x0a1b..."), decoded.
  std::string bytes(int row, int col) const;

 private:
  std::shared_ptr<PGresult> r_;
};

// One parameter: text, or binary bytes (bytea), or NULL.
struct PgParam {
  std::string value;
  bool binary = false;
  bool null = false;
  static PgParam Text(std::string v) { return {std::move(v), false, false}; }
  static PgParam Bytes(std::string_view v) { return {std::string(v), true, false}; }
  static PgParam Int(int64_t v) { return {std::to_string(v), false, false}; }
  static PgParam Null() { return {std::string(), false, true}; }
};

class PgConnection {
 public:
  // Connects to `conninfo` (a "postgresql://" URI or "key=value" string). kInvalidArgument for a conninfo
  // libpq cannot parse, kUnavailable when the server cannot be reached or refuses the login.
  static Result<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement (or several separated by ';' when `params` is empty). Failures as the file comment says.
  Result<PgResult> Exec(const std::string& sql, const std::vector<PgParam>& params = {});
  // Exec, dropping the result.
  Status Run(const std::string& sql, const std::vector<PgParam>& params = {});

  // COPY ... FROM STDIN: sends `data` (COPY text format, already escaped) as one copy stream.
  Status CopyIn(const std::string& copy_sql, std::string_view data);

  // False once the connection is broken (the caller should make a new one).
  bool ok() const { return PQstatus(conn_) == CONNECTION_OK; }

  // Whether the last failure (of Exec, Run or CopyIn) was PostgreSQL rolling the transaction back as a deadlock
  // victim (SQLSTATE 40P01) or a serialization failure (40001): nothing of that transaction happened, and running
  // it again is the documented remedy. Set at every failure.
  bool last_failure_retryable() const { return last_failure_retryable_; }

  PGconn* raw() { return conn_; }

 private:
  explicit PgConnection(PGconn* c) : conn_(c) {}
  Status ErrorFrom(PGresult* r, const std::string& what);
  PGconn* conn_;
  bool last_failure_retryable_ = false;
};

// Appends `s` to `out` escaped for COPY's text format (backslash, tab, newline, carriage return).
void AppendCopyText(std::string_view s, std::string* out);
// Appends `bytes` as a bytea hex literal for COPY's text format ("\\x0a1b...": the backslash escaped).
void AppendCopyBytea(std::string_view bytes, std::string* out);

}  // namespace urlguard

#endif  // URLGUARD_PG_PG_CONNECTION_H_
