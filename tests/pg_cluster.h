// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// PgCluster: a throwaway PostgreSQL 15 cluster for tests (tests/fleet_pg_test.cc, bench/pg_ingest_bench.cc).
// Start() runs Debian's own server binaries, for real: `initdb` into a new temporary directory, then `pg_ctl
// start` listening on 127.0.0.1 only (and a unix socket inside that directory) on a free port, then creates one
// database. The destructor stops the server (immediate mode) and removes the directory.
//
// As root, PostgreSQL refuses to run, so every server binary runs as the `postgres` user (runuser -u postgres);
// the directory is made theirs. The binaries come from $URLGUARD_PG_BIN, else /usr/lib/postgresql/15/bin.
//
// Restart() stops and starts the same cluster on the same port (the "restart PostgreSQL" fault); Stop() and
// StartAgain() split it so a test can act while the server is down.
//
// Thread safety: none; one test thread drives a cluster.
#ifndef URLGUARD_TESTS_PG_CLUSTER_H_
#define URLGUARD_TESTS_PG_CLUSTER_H_

#include <memory>
#include <string>

namespace urlguard::testing {

class PgCluster {
 public:
  // True when the server binaries (initdb, pg_ctl) are installed. Tests GTEST_SKIP with SkipReason() otherwise.
  static bool Available();
  static std::string SkipReason();

  // initdb + start + CREATE DATABASE `database`. Returns nullptr and writes why into *error on failure (the
  // server log's tail included).
  static std::unique_ptr<PgCluster> Start(const std::string& database, std::string* error);

  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  // "postgresql://postgres@127.0.0.1:PORT/DATABASE".
  std::string conninfo() const;
  // The same for another database name (e.g. "postgres").
  std::string conninfo_for(const std::string& database) const;
  int port() const { return port_; }

  // pg_ctl stop -m fast; true when the server stopped.
  bool Stop();
  // pg_ctl start on the same port and directory; true once it accepts connections.
  bool StartAgain();
  bool Restart() { return Stop() && StartAgain(); }
  // The server log's last `bytes` bytes (for failure messages).
  std::string LogTail(size_t bytes = 4000) const;

 private:
  PgCluster() = default;
  bool RunPgCtl(const std::string& action, std::string* error);

  std::string dir_;       // owned by postgres: data/, sock/, server.log
  std::string database_;
  int port_ = 0;
  bool running_ = false;
};

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_PG_CLUSTER_H_
