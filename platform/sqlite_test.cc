// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The SQLite helper on a real file.
#include "platform/sqlite.h"

#include <gtest/gtest.h>

#include <string>

#include "platform/env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

std::string FreshPath(const std::string& name) { return JoinPath(testing::ScratchDir("sqlite_test"), name); }

TEST(Sqlite, OpenWalStepAndQuery) {
  const std::string path = FreshPath("sqlite_helper.db");
  sqlite::Connection db;
  ASSERT_EQ(sqlite::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 500, &db), SQLITE_OK);
  int64_t version = -1, objects = -1;
  ASSERT_EQ(sqlite::ReadSchemaState(db.get(), &version, &objects), SQLITE_OK);
  EXPECT_EQ(version, 0);
  EXPECT_EQ(objects, 0);
  std::string mode;
  ASSERT_EQ(sqlite::SetJournalModeWal(db.get(), &mode), SQLITE_OK);
  EXPECT_EQ(mode, "wal");
  ASSERT_EQ(sqlite::Exec(db.get(), "CREATE TABLE t (k INTEGER, v TEXT); PRAGMA user_version=7"), SQLITE_OK);
  ASSERT_EQ(sqlite::ReadSchemaState(db.get(), &version, &objects), SQLITE_OK);
  EXPECT_EQ(version, 7);
  EXPECT_EQ(objects, 1);

  sqlite::Stmt insert;
  ASSERT_EQ(sqlite::Prepare(db.get(), "INSERT INTO t VALUES (?1, ?2)", &insert), SQLITE_OK);
  for (int i = 1; i <= 3; ++i) {
    sqlite3_bind_int64(insert.get(), 1, i);
    sqlite3_bind_text(insert.get(), 2, "v", 1, SQLITE_STATIC);
    ASSERT_EQ(sqlite::StepDone(insert.get()), SQLITE_OK);  // resets, so the statement runs again
  }
  int64_t n = 0;
  ASSERT_EQ(sqlite::QueryInt(db.get(), "SELECT sum(k) FROM t", &n), SQLITE_OK);
  EXPECT_EQ(n, 6);
  sqlite::Stmt count;
  ASSERT_EQ(sqlite::Prepare(db.get(), "SELECT count(*) FROM t WHERE k > ?1", &count), SQLITE_OK);
  sqlite3_bind_int64(count.get(), 1, 1);
  ASSERT_EQ(sqlite::StepInt(count.get(), &n), SQLITE_OK);
  EXPECT_EQ(n, 2);
  ASSERT_EQ(sqlite::StepInt(count.get(), &n), SQLITE_OK);  // bindings cleared: k > NULL matches nothing
  EXPECT_EQ(n, 0);
  std::string text = "x";
  EXPECT_EQ(sqlite::QueryText(db.get(), "SELECT v FROM t WHERE k = 99", &text), SQLITE_INTERNAL);  // no row
  ASSERT_EQ(sqlite::QueryText(db.get(), "SELECT v FROM t WHERE k = 2", &text), SQLITE_OK);
  EXPECT_EQ(text, "v");

  // Errors come back as codes with a message.
  sqlite::Stmt bad;
  const int rc = sqlite::Prepare(db.get(), "SELECT * FROM missing", &bad);
  EXPECT_EQ(rc & 0xff, SQLITE_ERROR);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(sqlite::ErrorMessage(db.get(), rc).find("missing"), std::string::npos);
  // The journal mode is persistent: a second connection finds WAL already on.
  sqlite::Connection second;
  ASSERT_EQ(sqlite::Open(path, SQLITE_OPEN_READONLY, 500, &second), SQLITE_OK);
  ASSERT_EQ(sqlite::QueryText(second.get(), "PRAGMA journal_mode", &mode), SQLITE_OK);
  EXPECT_EQ(mode, "wal");
}

TEST(Sqlite, OpenFailureAndBusyTimeout) {
  sqlite::Connection db;
  const int rc = sqlite::Open(JoinPath(testing::ScratchDir("sqlite_test"), "no/such/dir/x.db"),
                              SQLITE_OPEN_READWRITE, 0, &db);
  EXPECT_EQ(rc & 0xff, SQLITE_CANTOPEN);
  EXPECT_FALSE(sqlite::ErrorMessage(db.get(), rc).empty());

  // A writer holding the lock: the second writer waits its busy timeout, then gets SQLITE_BUSY.
  const std::string path = FreshPath("sqlite_busy.db");
  sqlite::Connection a, b;
  ASSERT_EQ(sqlite::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 50, &a), SQLITE_OK);
  ASSERT_EQ(sqlite::Open(path, SQLITE_OPEN_READWRITE, 50, &b), SQLITE_OK);
  ASSERT_EQ(sqlite::Exec(a.get(), "CREATE TABLE t (k); BEGIN IMMEDIATE; INSERT INTO t VALUES (1)"),
            SQLITE_OK);
  EXPECT_EQ(sqlite::Exec(b.get(), "BEGIN IMMEDIATE") & 0xff, SQLITE_BUSY);
  ASSERT_EQ(sqlite::Exec(a.get(), "COMMIT"), SQLITE_OK);
}

}  // namespace
}  // namespace urlguard
