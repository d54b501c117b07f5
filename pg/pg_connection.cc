// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "pg/pg_connection.h"

#include <cstdlib>
#include <cstring>

namespace urlguard {

int64_t PgResult::int64(int row, int col) const {
  if (!r_ || is_null(row, col)) return 0;
  return std::strtoll(PQgetvalue(r_.get(), row, col), nullptr, 10);
}

std::string PgResult::bytes(int row, int col) const {
  if (!r_ || is_null(row, col)) return {};
  size_t n = 0;
  unsigned char* raw = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(r_.get(), row, col)), &n);
  if (raw == nullptr) return {};
  std::string out(reinterpret_cast<const char*>(raw), n);
  PQfreemem(raw);
  return out;
}

Result<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &err);
  if (parsed == nullptr) {
    std::string m = err != nullptr ? err : "out of memory";
    if (err != nullptr) PQfreemem(err);
    return Status::InvalidArgument("PostgreSQL connection string: " + m);
  }
  PQconninfoFree(parsed);
  const std::string timeout = std::to_string(kPgConnectTimeoutSeconds);
  const char* keys[] = {"dbname", "connect_timeout", "application_name", nullptr};
  const char* values[] = {conninfo.c_str(), timeout.c_str(), "urlguard", nullptr};
  PGconn* c = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (c == nullptr) return Status::Unavailable("PostgreSQL: out of memory");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string m = PQerrorMessage(c);
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    PQfinish(c);
    return Status::Unavailable("PostgreSQL store is down or refuses the connection: " + m);
  }
  PGresult* r = PQexec(c, "SET client_min_messages = warning");
  PQclear(r);
  return std::unique_ptr<PgConnection>(new PgConnection(c));
}

PgConnection::~PgConnection() { PQfinish(conn_); }

Status PgConnection::ErrorFrom(PGresult* r, const std::string& what) {
  std::string m = r != nullptr && PQresultErrorMessage(r)[0] != '\0' ? PQresultErrorMessage(r) : PQerrorMessage(conn_);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string short_what = what.substr(0, 60);
  last_failure_retryable_ = state != nullptr && (std::strcmp(state, "40P01") == 0 || std::strcmp(state, "40001") == 0);
  if (PQstatus(conn_) != CONNECTION_OK || state == nullptr || std::strncmp(state, "08", 2) == 0 ||
      std::strncmp(state, "57P", 3) == 0) {
    return Status::Unavailable("PostgreSQL store is down: " + m);
  }
  if (std::strcmp(state, "23505") == 0) return Status::FailedPrecondition("PostgreSQL: " + m);
  return Status::Internal("PostgreSQL (" + std::string(state) + ") in `" + short_what + "`: " + m);
}

Result<PgResult> PgConnection::Exec(const std::string& sql, const std::vector<PgParam>& params) {
  PGresult* r;
  if (params.empty()) {
    r = PQexec(conn_, sql.c_str());
  } else {
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    for (const PgParam& p : params) {
      values.push_back(p.null ? nullptr : p.value.data());
      lengths.push_back(static_cast<int>(p.value.size()));
      formats.push_back(p.binary ? 1 : 0);
    }
    r = PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(), lengths.data(),
                     formats.data(), /*resultFormat=*/0);
  }
  ExecStatusType st = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    Status s = ErrorFrom(r, sql);
    PQclear(r);
    return s;
  }
  return PgResult(r);
}

Status PgConnection::Run(const std::string& sql, const std::vector<PgParam>& params) {
  auto r = Exec(sql, params);
  return r.ok() ? Status::Ok() : r.status();
}

Status PgConnection::CopyIn(const std::string& copy_sql, std::string_view data) {
  PGresult* r = PQexec(conn_, copy_sql.c_str());
  if (r == nullptr || PQresultStatus(r) != PGRES_COPY_IN) {
    Status s = ErrorFrom(r, copy_sql);
    PQclear(r);
    return s;
  }
  PQclear(r);
  // libpq takes at most INT_MAX per call.
  constexpr size_t kChunk = size_t{1} << 20;
  for (size_t off = 0; off < data.size(); off += kChunk) {
    const size_t n = std::min(kChunk, data.size() - off);
    if (PQputCopyData(conn_, data.data() + off, static_cast<int>(n)) != 1) {
      return Status::Unavailable(std::string("PostgreSQL store is down (COPY): ") + PQerrorMessage(conn_));
    }
  }
  if (PQputCopyEnd(conn_, nullptr) != 1) {
    return Status::Unavailable(std::string("PostgreSQL store is down (COPY): ") + PQerrorMessage(conn_));
  }
  Status result;
  while ((r = PQgetResult(conn_)) != nullptr) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK && result.ok()) result = ErrorFrom(r, copy_sql);
    PQclear(r);
  }
  return result;
}

void AppendCopyText(std::string_view s, std::string* out) {
  for (char c : s) {
    switch (c) {
      case '\\': out->append("\\\\"); break;
      case '\t': out->append("\\t"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      default: out->push_back(c);
    }
  }
}

void AppendCopyBytea(std::string_view bytes, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->append("\\\\x");
  for (unsigned char c : bytes) {
    out->push_back(kHex[c >> 4]);
    out->push_back(kHex[c & 15]);
  }
}

}  // namespace urlguard
