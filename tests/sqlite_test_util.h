// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Helpers for tests of the SQLite-backed stores (client/result_cache): look at a database
// file behind the store's back, and make digests with a chosen 4-byte verification prefix.
#ifndef URLGUARD_TESTS_SQLITE_TEST_UTIL_H_
#define URLGUARD_TESTS_SQLITE_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "core/sha256.h"
#include "platform/sqlite.h"

namespace urlguard::testing {

// Runs SQL on the file directly (schema inspection, corruption tests). Rows as "a|b\n".
inline std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite::Connection db;
  EXPECT_EQ(sqlite::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, /*busy_timeout_ms=*/1000, &db),
            SQLITE_OK);
  std::string out;
  sqlite::Stmt stmt;
  EXPECT_EQ(sqlite::Prepare(db.get(), sql.c_str(), &stmt), SQLITE_OK) << sqlite::ErrorMessage(db.get(), 0);
  if (stmt == nullptr) return out;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(stmt.get()); ++i) {
      if (i > 0) out += "|";
      out += sqlite3_column_type(stmt.get(), i) == SQLITE_NULL
                 ? "NULL"
                 : std::string(sqlite::ColumnText(stmt.get(), i));
    }
    out += "\n";
  }
  EXPECT_EQ(rc, SQLITE_DONE) << sqlite::ErrorMessage(db.get(), rc);
  return out;
}

// A digest with a chosen 4-byte prefix and a chosen last byte.
inline Sha256Digest WithPrefix(uint32_t prefix, uint8_t tail) {
  Sha256Digest d{};
  d[0] = static_cast<uint8_t>(prefix >> 24);
  d[1] = static_cast<uint8_t>(prefix >> 16);
  d[2] = static_cast<uint8_t>(prefix >> 8);
  d[3] = static_cast<uint8_t>(prefix);
  d[31] = tail;
  return d;
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_SQLITE_TEST_UTIL_H_
