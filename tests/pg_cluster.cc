// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "tests/pg_cluster.h"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tests/child_process.h"
#include "tests/test_util.h"

namespace urlguard::testing {
namespace {

std::string PgBinDir() {
  const char* env = std::getenv("URLGUARD_PG_BIN");
  return env != nullptr && *env != '\0' ? env : "/usr/lib/postgresql/15/bin";
}

// Runs argv (as the postgres user when we are root), stdout and stderr appended to `log`, in a process group of
// its own (tests/child_process.h), stopped with its group if it has not finished within 120 s (pg_ctl's own wait
// is 30 s). Returns the exit status, or -1 when it could not run, was killed or ended by a signal. The server that
// `pg_ctl start` leaves running is not in that group (pg_ctl starts it in a session of its own): ~PgCluster
// stops it.
int Run(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> full;
  if (::geteuid() == 0) full = {"/usr/sbin/runuser", "-u", "postgres", "--"};
  full.insert(full.end(), args.begin(), args.end());
  ChildOptions options;
  options.stdout_path = log;
  options.stderr_path = log;
  const pid_t pid = StartInOwnProcessGroup(full, options);
  if (pid < 0) return -1;
  const int code = StopProcessGroup(pid, 0, 120 * 1000);
  return code > 127 ? -1 : code;
}

bool ChownToPostgres(const std::string& path) {
  if (::geteuid() != 0) return true;
  passwd* pw = ::getpwnam("postgres");
  if (pw == nullptr) return false;
  return ::chown(path.c_str(), pw->pw_uid, pw->pw_gid) == 0;
}

}  // namespace

bool PgCluster::Available() {
  const std::string bin = PgBinDir();
  if (::access((bin + "/initdb").c_str(), X_OK) != 0 || ::access((bin + "/pg_ctl").c_str(), X_OK) != 0) return false;
  return ::geteuid() != 0 || (::getpwnam("postgres") != nullptr && ::access("/usr/sbin/runuser", X_OK) == 0);
}

std::string PgCluster::SkipReason() {
  return "PostgreSQL 15 server binaries not found in " + PgBinDir() +
         " (install the Debian package `postgresql`, scripts/install-deps.sh, or set URLGUARD_PG_BIN)";
}

std::unique_ptr<PgCluster> PgCluster::Start(const std::string& database, std::string* error) {
  std::unique_ptr<PgCluster> c(new PgCluster());
  // Under /tmp, not the build tree: the postgres user must be able to reach the directory.
  std::string tmpl = "/tmp/urlguard-pg.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    *error = "mkdtemp failed";
    return nullptr;
  }
  c->dir_ = tmpl;
  c->database_ = database;
  ::chmod(c->dir_.c_str(), 0755);
  if (!ChownToPostgres(c->dir_)) {
    *error = "cannot give " + c->dir_ + " to the postgres user";
    return nullptr;
  }
  const std::string log = c->dir_ + "/setup.log";
  // --no-sync and fsync=off below: a throwaway cluster needs no durability across a machine crash.
  if (Run({PgBinDir() + "/initdb", "-D", c->dir_ + "/data", "-A", "trust", "-U", "postgres", "--no-sync",
           "-E", "UTF8", "--locale=C"},
          log) != 0) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    *error = "initdb failed: " + ss.str();
    return nullptr;
  }
  std::filesystem::create_directories(c->dir_ + "/sock");
  ChownToPostgres(c->dir_ + "/sock");
  for (int attempt = 0; attempt < 5; ++attempt) {  // the free port may be taken between the probe and the bind
    c->port_ = FreeLoopbackPort();
    if (c->port_ > 0 && c->RunPgCtl("start", error)) break;
  }
  if (!c->running_) return nullptr;
  PGconn* conn = PQconnectdb(c->conninfo_for("postgres").c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    *error = std::string("connect: ") + PQerrorMessage(conn);
    PQfinish(conn);
    return nullptr;
  }
  PGresult* r = PQexec(conn, ("CREATE DATABASE \"" + database + "\"").c_str());
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  if (!ok) *error = std::string("CREATE DATABASE: ") + PQerrorMessage(conn);
  PQclear(r);
  PQfinish(conn);
  if (!ok) return nullptr;
  return c;
}

bool PgCluster::RunPgCtl(const std::string& action, std::string* error) {
  const std::string log = dir_ + "/server.log";
  std::vector<std::string> args = {PgBinDir() + "/pg_ctl", "-D", dir_ + "/data", "-w", "-t", "30", "-l", log};
  if (action == "start") {
    args.push_back("-o");
    args.push_back("-k " + dir_ + "/sock -p " + std::to_string(port_) +
                   " -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
                   " -c max_connections=100");
  } else {
    args.push_back("-m");
    args.push_back(action == "kill" ? "immediate" : "fast");
  }
  args.push_back(action == "start" ? "start" : "stop");
  const int rc = Run(args, dir_ + "/pg_ctl.log");
  if (rc != 0) {
    if (error != nullptr) *error = "pg_ctl " + action + " failed (" + std::to_string(rc) + "): " + LogTail();
    return false;
  }
  running_ = action == "start";
  return true;
}

PgCluster::~PgCluster() {
  if (running_) {
    // The postmaster's pid (first line of postmaster.pid), read before the stop removes the file: when pg_ctl
    // cannot stop it, it is killed here if that pid is still a postgres (its backends exit by themselves then).
    pid_t postmaster = -1;
    std::ifstream pid_file(dir_ + "/data/postmaster.pid");
    if (!(pid_file >> postmaster)) postmaster = -1;
    std::string comm;
    if (!RunPgCtl("kill", nullptr) && postmaster > 0 &&
        std::getline(std::ifstream("/proc/" + std::to_string(postmaster) + "/comm"), comm) && comm == "postgres") {
      ::kill(postmaster, SIGKILL);
    }
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string PgCluster::conninfo() const { return conninfo_for(database_); }

std::string PgCluster::conninfo_for(const std::string& database) const {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + database;
}

bool PgCluster::Stop() { return RunPgCtl("stop", nullptr); }

bool PgCluster::StartAgain() { return RunPgCtl("start", nullptr); }

std::string PgCluster::LogTail(size_t bytes) const {
  std::ifstream in(dir_ + "/server.log");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

}  // namespace urlguard::testing
