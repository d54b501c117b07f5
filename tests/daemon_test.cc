// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguardd as systemd runs it: a real process against the reference server on loopback. It must say READY=1 on
// $NOTIFY_SOCKET once its lists are mapped, answer /v1/check, /status and /metrics, reload on SIGHUP, stop cleanly
// on SIGTERM, and refuse to start while another process holds the data directory.
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "http/http_test_util.h"
#include "platform/env.h"
#include "publish/publisher.h"
#include "urlguard/server.h"
#include "signing/signer.h"
#include "tests/child_process.h"
#include "tests/reference_server_util.h"
#include "tests/test_util.h"
#include "urlguard/daemon.h"

namespace urlguard {
namespace {

// Receives sd_notify datagrams like systemd does.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    ::unlink(path.c_str());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  ~NotifySocket() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  // Waits up to `seconds` for a datagram containing `what`.
  bool WaitFor(const std::string& what, int seconds) { return !WaitForMessage(what, seconds).empty(); }
  // The same, returning the whole datagram ("" when none came).
  std::string WaitForMessage(const std::string& what, int seconds) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    char buf[1024];
    while (std::chrono::steady_clock::now() < until) {
      ssize_t n = ::recv(fd_, buf, sizeof buf - 1, 0);
      if (n <= 0) continue;
      std::string message(buf, static_cast<size_t>(n));
      if (message.find(what) != std::string::npos) return message;
    }
    return "";
  }

 private:
  std::string path_;
  int fd_;
};

// Starts a daemon in its own process group (tests/child_process.h), stderr to `log`, NOTIFY_SOCKET set when given.
// A daemon a failed assertion leaves running still gets SIGTERM when the test process ends.
pid_t Spawn(const std::vector<std::string>& args, const std::string& notify_socket, const std::string& log) {
  testing::ChildOptions options;
  options.stdin_path = "";  // inherited, as before
  options.stderr_path = log;
  if (!notify_socket.empty()) options.env.emplace_back("NOTIFY_SOCKET", notify_socket);
  return testing::StartInOwnProcessGroup(args, options);
}

// Waits up to `seconds` for the daemon to exit and returns its exit code (128 + signal when a signal ended it),
// or -1 when it did not exit in time; either way its whole process group is gone afterwards.
int WaitExit(pid_t pid, int seconds) { return testing::StopProcessGroup(pid, 0, seconds * 1000); }

// A port for urlguardd's --listen, from the test's pid: in [20000, 32000), below Linux's ephemeral range (32768 up),
// where the outgoing connections of the tests running beside this one take their local ports (one took 34078
// from under the daemon in a CI run: "cannot bind ... Address already in use").
int FixedTestPort(int salt) { return 20000 + static_cast<int>((getpid() + salt) % 12000); }

// urlguardd on ROOT/data with the `phishing` list of the server at `url` installed first (one `urlguard sync --once`
// pass), so that it serves the list from its first request on; returns once it said READY=1, its pid in `*pid`.
void StartSyncedDaemon(const std::string& root, const std::string& url, int api_port, NotifySocket* notify,
                       pid_t* pid) {
  const std::string data = root + "/data";
  auto synced = testing::RunCommand(testing::BinPath("urlguard") + " sync --once --list phishing --server " + url +
                                    " --public-key " + root + "/pub.pem --data-dir " + data);
  ASSERT_EQ(synced.exit_code, 0) << synced.out;
  *pid = Spawn({testing::BinPath("urlguardd"), "--data-dir", data, "--server", url, "--public-key", root + "/pub.pem",
                "--list", "phishing", "--listen", "127.0.0.1:" + std::to_string(api_port)},
               root + "/notify.sock", root + "/daemon.log");
  ASSERT_TRUE(notify->WaitFor("READY=1", 20)) << testing::ReadFileOrDie(root + "/daemon.log");
}

// Signs `feed` (plain entries) as list "phishing" in ROOT/repo with a fresh key (public half at ROOT/pub.pem) and
// serves the repository on 127.0.0.1. Returns the running server; `*url` is its base URL.
std::unique_ptr<Server> PublishAndServe(const std::string& root, const std::string& feed, std::string* url) {
  SigningKey key = std::move(SigningKey::Generate()).value();
  testing::WriteFileOrDie(root + "/pub.pem", key.PublicPem());
  testing::WriteFileOrDie(root + "/feed.txt", feed);
  PublishOptions po;
  po.repo_dir = root + "/repo";
  po.list = "phishing";
  po.inputs = {*ParseFeedSpec("plain:" + root + "/feed.txt")};
  Status published = Publish(Env::Default(), key, po).status();
  EXPECT_TRUE(published.ok()) << published.ToString();
  auto server = testing::StartReferenceServer(po.repo_dir);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!published.ok() || !server.ok()) return nullptr;
  *url = (*server)->base_url();
  return std::move(*server);
}

TEST(Daemon, ServesLookupsStatusMetricsAndStopsCleanly) {
  const std::string root = testing::ScratchDir("daemon");
  std::string url;
  std::unique_ptr<Server> server = PublishAndServe(root, "evil.example\nhttp://secure-bank.example/login.php\n", &url);
  ASSERT_NE(server, nullptr);
  const int api_port = FixedTestPort(0);

  NotifySocket notify(root + "/notify.sock");
  const std::vector<std::string> args = {testing::BinPath("urlguardd"), "--data-dir", root + "/data", "--server", url,
                                         "--public-key", root + "/pub.pem", "--list", "phishing", "--listen",
                                         "127.0.0.1:" + std::to_string(api_port)};
  pid_t pid = Spawn(args, root + "/notify.sock", root + "/daemon.log");
  ASSERT_TRUE(notify.WaitFor("READY=1", 20)) << testing::ReadFileOrDie(root + "/daemon.log");

  // A second daemon on the same data directory refuses to start.
  pid_t second = Spawn(args, "", root + "/second.log");
  EXPECT_EQ(WaitExit(second, 20), 1);
  EXPECT_NE(testing::ReadFileOrDie(root + "/second.log").find("another urlguard process"), std::string::npos);

  httplib::Client api("127.0.0.1", api_port);
  api.set_read_timeout(10, 0);
  // The first sync runs within a minute of start (jitter); wait until the list is installed.
  nlohmann::json status;
  for (int i = 0; i < 140; ++i) {
    auto r = api.Get("/status");
    ASSERT_TRUE(r) << "no answer from the daemon";
    status = nlohmann::json::parse(r->body);
    if (!status["lists"].empty() && status["lists"][0]["version"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(status["lists"][0]["version"], 1) << status.dump();
  EXPECT_EQ(status["lists"][0]["last_sync_result"], "ok");
  EXPECT_EQ(status["lists"][0]["stale"], false);

  auto hit = api.Get("/v1/check?url=" + httplib::detail::encode_query_param("http://login.evil.example/x"));
  ASSERT_TRUE(hit);
  auto hj = nlohmann::json::parse(hit->body);
  EXPECT_EQ(hj["verdict"], "malicious") << hit->body;
  EXPECT_EQ(hj["list"], "phishing");
  auto clean = api.Get("/v1/check?url=" + httplib::detail::encode_query_param("https://www.wikipedia.org/"));
  ASSERT_TRUE(clean);
  EXPECT_EQ(nlohmann::json::parse(clean->body)["verdict"], "safe");
  auto bad = api.Get("/v1/check");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);

  auto metrics = api.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("urlguard_lookups_total{verdict=\"malicious\"} 1"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("urlguard_client_list_version{list=\"phishing\"} 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("urlguard_sync_attempts_total{result=\"updated\"} 1"), std::string::npos);

  // SIGHUP reloads (and keeps serving); SIGTERM stops with status 0 and says so to systemd.
  kill(pid, SIGHUP);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  auto after = api.Get("/v1/check?url=" + httplib::detail::encode_query_param("http://evil.example/"));
  ASSERT_TRUE(after);
  EXPECT_EQ(nlohmann::json::parse(after->body)["verdict"], "malicious");
  EXPECT_NE(testing::ReadFileOrDie(root + "/daemon.log").find("reloaded"), std::string::npos);
  kill(pid, SIGTERM);
  EXPECT_TRUE(notify.WaitFor("STOPPING=1", 10));
  EXPECT_EQ(WaitExit(pid, 20), 0);
}

// One renderer: `urlguard check --json` and urlguardd's /v1/check give the same JSON object for the same URL on the
// same data directory (a hit decided by the verification API, a clean URL, an invalid input).
TEST(Daemon, CheckJsonIsTheSameObjectAsTheCli) {
  const std::string root = testing::ScratchDir("daemon-same-json");
  std::string url;
  std::unique_ptr<Server> server = PublishAndServe(root, "evil.example\nhttp://secure-bank.example/login.php\n203.0.113.0/24\n", &url);
  ASSERT_NE(server, nullptr);
  const int api_port = FixedTestPort(7919);
  const std::string data = root + "/data";
  NotifySocket notify(root + "/notify.sock");
  pid_t pid = -1;
  ASSERT_NO_FATAL_FAILURE(StartSyncedDaemon(root, url, api_port, &notify, &pid));
  httplib::Client api("127.0.0.1", api_port);
  api.set_read_timeout(10, 0);

  const std::vector<std::string> inputs = {"http://login.evil.example/x?y=1", "https://secure-bank.example/login.php",
                                           "http://203.0.113.9/a", "https://www.wikipedia.org/", "http://[::1"};
  for (const std::string& input : inputs) {
    auto res = api.Get("/v1/check?url=" + httplib::detail::encode_query_param(input));
    ASSERT_TRUE(res) << input;
    ASSERT_EQ(res->status, 200) << res->body;
    nlohmann::json from_daemon = nlohmann::json::parse(res->body);
    auto cli = testing::RunCommand(testing::BinPath("urlguard") + " check --json --data-dir " + data +
                                   " --verify --server " + url + " -", input + "\n");
    nlohmann::json from_cli = nlohmann::json::parse(cli.out, nullptr, false);
    ASSERT_FALSE(from_cli.is_discarded()) << cli.out;
    EXPECT_EQ(from_cli, from_daemon) << "cli:    " << from_cli.dump() << "\ndaemon: " << from_daemon.dump();
    EXPECT_EQ(from_daemon["input"], input);
  }
  // The objects are not trivially equal: the hit carries its match, hash, version and canonical URL.
  auto hit = nlohmann::json::parse(api.Get("/v1/check?url=" + httplib::detail::encode_query_param(inputs[0]))->body);
  EXPECT_EQ(hit["verdict"], "malicious") << hit.dump();
  EXPECT_EQ(hit["expression"], "evil.example/");
  EXPECT_EQ(hit["list_version"], 1);
  EXPECT_EQ(hit["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(hit["canonical"], "http://login.evil.example/x?y=1");
  EXPECT_EQ(hit["matches"].size(), 1u);
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid, 20), 0);
}

// Issue 22 item 2 in the daemon: started on a fresh data directory without --list against an index of three
// lists, one of which cannot be downloaded. The failing list is subscribed all the same: /status lists all three
// (that one not installed, stale), /metrics marks it stale with its reason, and verdicts are stale.
TEST(Daemon, AFailingListIsSubscribedAndStaleInStatusAndMetrics) {
  const std::string root = testing::ScratchDir("daemon-failing-list");
  SigningKey key = std::move(SigningKey::Generate()).value();
  testing::WriteFileOrDie(root + "/pub.pem", key.PublicPem());
  for (const char* list : {"alpha", "beta", "gamma"}) {
    testing::WriteFileOrDie(root + "/" + list + ".txt", std::string("evil-") + list + ".example\n");
    PublishOptions po;
    po.repo_dir = root + "/repo";
    po.list = list;
    po.inputs = {*ParseFeedSpec("plain:" + root + "/" + list + ".txt")};
    ASSERT_TRUE(Publish(Env::Default(), key, po).ok());
  }
  // beta's manifest is there, its snapshot is not.
  const std::string beta = root + "/repo/public/v1/lists/beta";
  ASSERT_EQ(testing::RunCommand("mkdir -p " + root + "/stash && cd " + beta +
                                " && for f in *; do case $f in manifest.*) ;; *) mv \"$f\" " + root +
                                "/stash/;; esac; done")
                .exit_code,
            0);
  auto server = testing::StartReferenceServer(root + "/repo");
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string url = (*server)->base_url();

  NotifySocket notify(root + "/notify.sock");
  pid_t pid = Spawn({testing::BinPath("urlguardd"), "--data-dir", root + "/data", "--server", url, "--public-key",
                     root + "/pub.pem", "--listen", "127.0.0.1:0"},
                    root + "/notify.sock", root + "/daemon.log");
  ASSERT_TRUE(notify.WaitFor("READY=1", 20)) << testing::ReadFileOrDie(root + "/daemon.log");
  const std::string marker = "lookup API on http://127.0.0.1:";
  const std::string log = testing::ReadFileOrDie(root + "/daemon.log");
  ASSERT_NE(log.find(marker), std::string::npos) << log;
  httplib::Client api("127.0.0.1", std::atoi(log.c_str() + log.find(marker) + marker.size()));
  api.set_read_timeout(10, 0);
  // The index is asked at once; wait until the pass has tried beta.
  nlohmann::json status;
  for (int i = 0; i < 100; ++i) {
    auto r = api.Get("/status");
    ASSERT_TRUE(r) << "no answer from the daemon";
    status = nlohmann::json::parse(r->body);
    if (status["lists"].size() == 3 && status["lists"][1]["last_sync_result"] == "failed" &&
        status["lists"][0]["version"] == 1 && status["lists"][2]["version"] == 1) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(status["lists"].size(), 3u) << status.dump();
  EXPECT_EQ(status["lists"][0]["list"], "alpha");
  EXPECT_EQ(status["lists"][0]["stale"], false) << status.dump();
  EXPECT_EQ(status["lists"][1]["list"], "beta");
  EXPECT_EQ(status["lists"][1]["version"], 0);
  EXPECT_EQ(status["lists"][1]["stale"], true);
  EXPECT_EQ(status["lists"][1]["stale_reason"], "not_installed");
  EXPECT_EQ(status["lists"][1]["last_sync_result"], "failed");
  EXPECT_EQ(status["lists"][2]["list"], "gamma");
  EXPECT_EQ(status["lists"][2]["stale"], false);

  auto metrics = api.Get("/metrics");
  for (int i = 0; i < 50 && metrics && metrics->body.find("urlguard_sync_attempts_total{result=\"failed\"} 1") ==
                                            std::string::npos;
       ++i) {  // the pass's counters are added when it returns
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    metrics = api.Get("/metrics");
  }
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("urlguard_list_stale{list=\"beta\"} 1"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("urlguard_list_stale_reason{list=\"beta\",reason=\"not_installed\"} 1"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("urlguard_list_stale{list=\"alpha\"} 0"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("urlguard_sync_attempts_total{result=\"failed\"} 1"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("urlguard_list_index_over_limit_total 0"), std::string::npos) << metrics->body;
  auto check = api.Get("/v1/check?url=" + httplib::detail::encode_query_param("http://evil-beta.example/"));
  ASSERT_TRUE(check);
  EXPECT_EQ(nlohmann::json::parse(check->body)["verdict"], "safe");
  EXPECT_EQ(nlohmann::json::parse(check->body)["stale"], true) << check->body;
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid, 20), 0);
}

// Issue 22, item 5: D/current or D/sync-state.json replaced by a FIFO hung urlguardd: its watcher thread blocked
// in open(D/current) holding the refresh lock, /status blocked in open(D/sync-state.json), and SIGTERM did not
// stop it (stopping joins the watcher). Every open is non-blocking now and refuses what is not a regular file.
TEST(Daemon, AFifoInTheDataDirectoryHangsNothing) {
  const std::string root = testing::ScratchDir("daemon-fifo");
  std::string url;
  std::unique_ptr<Server> server = PublishAndServe(root, "evil.example\n", &url);
  ASSERT_NE(server, nullptr);
  const int api_port = FixedTestPort(104729);
  const std::string data = root + "/data";
  NotifySocket notify(root + "/notify.sock");
  pid_t pid = -1;
  ASSERT_NO_FATAL_FAILURE(StartSyncedDaemon(root, url, api_port, &notify, &pid));
  httplib::Client api("127.0.0.1", api_port);
  api.set_read_timeout(10, 0);
  const std::string evil = "/v1/check?url=" + httplib::detail::encode_query_param("http://evil.example/");
  auto before = api.Get(evil);
  ASSERT_TRUE(before);
  EXPECT_EQ(nlohmann::json::parse(before->body)["verdict"], "malicious") << before->body;

  for (const char* name : {"/current", "/sync-state.json"}) {
    ASSERT_EQ(std::remove((data + name).c_str()), 0) << name;
    ASSERT_EQ(::mkfifo((data + name).c_str(), 0600), 0) << name;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the watcher looks every 500 ms
  // EXPECT, not ASSERT: whatever happens, the daemon is stopped below (killed when SIGTERM does not work).
  auto status = api.Get("/status");
  EXPECT_TRUE(status && status->status == 200) << "/status did not answer";
  auto after = api.Get(evil);  // the generation loaded before keeps serving
  EXPECT_TRUE(after && nlohmann::json::parse(after->body)["verdict"] == "malicious")
      << (after ? after->body : "/v1/check did not answer");
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid, 20), 0) << testing::ReadFileOrDie(root + "/daemon.log");
}

// Key rotation through the tools: a list signed only by a new key is refused until the client is given a rotation
// statement signed by the key it trusts; a forged statement is refused.
TEST(Tools, KeyRotationMovesTrustOnlyThroughASignedStatement) {
  const std::string root = testing::ScratchDir("rotation");
  const std::string pub = testing::BinPath("urlguard-publish");
  ASSERT_EQ(testing::RunCommand(pub + " keygen --out " + root + "/old").exit_code, 0);
  ASSERT_EQ(testing::RunCommand(pub + " keygen --out " + root + "/new").exit_code, 0);
  ASSERT_EQ(testing::RunCommand(pub + " rotate --key " + root + "/old/urlguard-ed25519.pem --new-key " + root +
                                "/new/urlguard-ed25519.pub.pem --out " + root + "/rotation.txt").exit_code, 0);
  testing::WriteFileOrDie(root + "/feed.txt", "evil.example\n");
  ASSERT_EQ(testing::RunCommand(pub + " publish --repo " + root + "/repo --key " + root +
                                "/new/urlguard-ed25519.pem --list phishing --input " + root + "/feed.txt").exit_code, 0);
  auto server = testing::StartReferenceServer(root + "/repo");
  ASSERT_TRUE(server.ok());
  const std::string sync = testing::BinPath("urlguard") + " sync --once --list phishing --server http://127.0.0.1:" +
                           std::to_string((*server)->port()) + " --public-key " + root + "/old/urlguard-ed25519.pub.pem";
  auto untrusted = testing::RunCommand(sync + " --data-dir " + root + "/d1");
  EXPECT_EQ(untrusted.exit_code, 2);
  EXPECT_NE(untrusted.out.find("untrusted key"), std::string::npos) << untrusted.out;

  std::string forged = testing::ReadFileOrDie(root + "/rotation.txt");
  forged[forged.size() / 3] ^= 0x01;
  testing::WriteFileOrDie(root + "/forged.txt", forged);
  EXPECT_EQ(testing::RunCommand(sync + " --data-dir " + root + "/d2 --key-rotation " + root + "/forged.txt", "",
                                root + "/forged.err").exit_code, 2);
  EXPECT_NE(testing::ReadFileOrDie(root + "/forged.err").find("key rotation refused"), std::string::npos);

  auto rotated = testing::RunCommand(sync + " --data-dir " + root + "/d3 --key-rotation " + root + "/rotation.txt");
  EXPECT_EQ(rotated.exit_code, 0) << rotated.out;
  EXPECT_NE(rotated.out.find("installed version 1"), std::string::npos) << rotated.out;
}

TEST(Daemon, RefusesNonLoopbackListenAddress) {
  const std::string root = testing::ScratchDir("daemon-listen");
  testing::WriteFileOrDie(root + "/pub.pem", std::move(SigningKey::Generate()).value().PublicPem());
  auto r = testing::RunCommand(testing::BinPath("urlguardd") + " --data-dir " + root + "/data --server http://127.0.0.1:1" +
                               " --public-key " + root + "/pub.pem --list x --listen 0.0.0.0:8089", "", root + "/err");
  EXPECT_EQ(r.exit_code, 4);
}


// ---- the loopback API's transport (DNS rebinding, CORS, listen address, dripping clients, smuggling) -------

// A urlguardd on 127.0.0.1 with a port the system picked (read back from its start-up line), syncing from a
// server that does not exist: verdicts are "safe" and stale, which is all these tests need.
class RunningDaemon {
 public:
  // `extra`: more arguments; "ROOT" in them stands for the daemon's scratch directory.
  explicit RunningDaemon(const std::string& name, std::vector<std::string> extra = {})
      : root_(testing::ScratchDir(name)) {
    testing::WriteFileOrDie(root_ + "/pub.pem", std::move(SigningKey::Generate()).value().PublicPem());
    NotifySocket notify(root_ + "/notify.sock");
    std::vector<std::string> args = {testing::BinPath("urlguardd"), "--data-dir", root_ + "/data", "--server",
                                     "http://127.0.0.1:1", "--public-key", root_ + "/pub.pem", "--list", "phishing",
                                     "--listen", "127.0.0.1:0"};
    for (std::string& a : extra) {
      if (a.rfind("ROOT", 0) == 0) a = root_ + a.substr(4);
      args.push_back(a);
    }
    pid_ = Spawn(args, root_ + "/notify.sock", root_ + "/daemon.log");
    if (!notify.WaitFor("READY=1", 20)) return;
    const std::string log = testing::ReadFileOrDie(root_ + "/daemon.log");
    const std::string marker = "lookup API on http://127.0.0.1:";
    const size_t at = log.find(marker);
    if (at != std::string::npos) port_ = std::atoi(log.c_str() + at + marker.size());
  }
  ~RunningDaemon() {
    kill(pid_, SIGTERM);
    EXPECT_EQ(WaitExit(pid_, 20), 0);
  }
  int port() const { return port_; }
  const std::string& root() const { return root_; }
  std::string log() const { return testing::ReadFileOrDie(root_ + "/daemon.log"); }
  std::string hostport() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::string root_;
  pid_t pid_ = -1;
  int port_ = 0;
};

std::string CheckRequest(const std::string& host_line, const std::string& extra = "") {
  return "GET /v1/check?url=http%3A%2F%2Fexample.com%2F HTTP/1.1\r\n" + host_line + extra +
         "Connection: close\r\n\r\n";
}

bool HasHeader(const std::string& raw_response, const std::string& name_lower) {
  const std::string head = raw_response.substr(0, raw_response.find("\r\n\r\n"));
  std::string lower = head;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("\r\n" + name_lower) != std::string::npos;
}

// A page on attacker.example that rebinds its name to 127.0.0.1 sends "Host: attacker.example[:PORT]": it is
// refused (421, no verdict), as is a request without Host; loopback names with the daemon's port are answered.
// No answer grants CORS access, not even to a preflight.
TEST(DaemonApi, AnswersOnlyLoopbackHostsAndGrantsNoCors) {
  RunningDaemon d("daemon-host");
  ASSERT_GT(d.port(), 0) << d.log();
  const std::string port = std::to_string(d.port());
  const std::string origin = "Origin: http://attacker.example:" + port + "\r\n";
  for (const std::string& host : std::vector<std::string>{
           "Host: attacker.example\r\n", "Host: attacker.example:" + port + "\r\n", "", "Host: 127.0.0.1:1\r\n",
           "Host: localhost.attacker.example:" + port + "\r\n"}) {
    SCOPED_TRACE(host);
    const auto out = testing_http::RawExchange(d.port(), CheckRequest(host, origin));
    EXPECT_EQ(testing_http::StatusOf(out.response), 421) << out.response;
    EXPECT_EQ(out.response.find("verdict"), std::string::npos) << out.response;
    EXPECT_FALSE(HasHeader(out.response, "access-control-allow-")) << out.response;
  }
  for (const std::string& host : {"Host: localhost:" + port + "\r\n", "Host: 127.0.0.1:" + port + "\r\n",
                                  "Host: LOCALHOST:" + port + "\r\n"}) {
    SCOPED_TRACE(host);
    const auto out = testing_http::RawExchange(d.port(), CheckRequest(host, origin));
    EXPECT_EQ(testing_http::StatusOf(out.response), 200) << out.response;
    EXPECT_NE(out.response.find("\"verdict\":\"safe\""), std::string::npos) << out.response;
    EXPECT_FALSE(HasHeader(out.response, "access-control-allow-")) << out.response;
  }
  // Every route, and a CORS preflight: never an Access-Control-Allow-* header.
  const std::string host = "Host: localhost:" + port + "\r\n";
  for (const std::string& request :
       {"GET /status HTTP/1.1\r\n" + host + origin + "Connection: close\r\n\r\n",
        "GET /metrics HTTP/1.1\r\n" + host + origin + "Connection: close\r\n\r\n",
        "GET /nope HTTP/1.1\r\n" + host + origin + "Connection: close\r\n\r\n",
        "OPTIONS /v1/check?url=x HTTP/1.1\r\n" + host + origin +
            "Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: x-a\r\nConnection: close\r\n\r\n"}) {
    const auto out = testing_http::RawExchange(d.port(), request);
    EXPECT_NE(testing_http::StatusOf(out.response), 0) << request;
    EXPECT_FALSE(HasHeader(out.response, "access-control-")) << out.response;
    if (request.rfind("OPTIONS", 0) == 0) {
      EXPECT_EQ(testing_http::StatusOf(out.response), 405) << out.response;
    }
  }
}

// --listen goes through the one listen-address parser: names are refused before anything else happens, even
// ones that look like loopback.
TEST(DaemonApi, RefusesListenNamesThatLookLikeLoopback) {
  const std::string root = testing::ScratchDir("daemon-listen-name");
  testing::WriteFileOrDie(root + "/pub.pem", std::move(SigningKey::Generate()).value().PublicPem());
  for (const std::string listen : {"127.attacker.invalid:8089", "localhost:8089", "127.0.0.1.nip.io:8089"}) {
    auto r = testing::RunCommand(testing::BinPath("urlguardd") + " --data-dir " + root + "/data --server " +
                                     "http://127.0.0.1:1 --public-key " + root + "/pub.pem --list x --listen " + listen,
                                 "", root + "/err");
    EXPECT_EQ(r.exit_code, 4) << listen;
    const std::string err = testing::ReadFileOrDie(root + "/err");
    EXPECT_NE(err.find("not a numeric IP address"), std::string::npos) << err;
    EXPECT_FALSE(Env::Default()->FileExists(root + "/data")) << "refused before touching the data directory";
  }
}

// Clients that open connections and drip their headers a byte at a time (from 127.0.0.2) tie up no thread: a
// well-behaved lookup from 127.0.0.1 is answered within a second with 20 and with 200 of them connected, and
// the head deadline cuts every dripper although it never stops sending.
TEST(DaemonApi, DrippingClientsDoNotStarveTheApi) {
  RunningDaemon d("daemon-drip");
  ASSERT_GT(d.port(), 0) << d.log();
  const std::string partial = "GET /v1/check?url=http%3A%2F%2Fexample.com%2F HTTP/1.1\r\nHost: " + d.hostport() +
                              "\r\nX-Drip: ";
  std::vector<int> drippers;
  std::atomic<bool> stop{false};
  std::mutex mu;  // guards drippers
  std::thread drip([&] {
    while (!stop) {
      {
        std::lock_guard<std::mutex> l(mu);
        for (int fd : drippers) (void)send(fd, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  for (int attackers : {20, 200}) {
    SCOPED_TRACE(attackers);
    {
      std::lock_guard<std::mutex> l(mu);
      while (static_cast<int>(drippers.size()) < attackers) {
        const int fd = testing_http::ConnectFrom(d.port(), "127.0.0.2", 1);
        ASSERT_GE(fd, 0);
        (void)testing_http::SendAll(fd, partial);
        drippers.push_back(fd);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto start = std::chrono::steady_clock::now();
    const auto out = testing_http::RawExchange(d.port(), CheckRequest("Host: " + d.hostport() + "\r\n"), "127.0.0.1",
                                               /*timeout_seconds=*/1);
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(testing_http::StatusOf(out.response), 200) << out.response;
    EXPECT_NE(out.response.find("\"verdict\""), std::string::npos);
    EXPECT_LT(elapsed, std::chrono::seconds(1));
    std::printf("lookup with %d drippers connected: %lld ms\n", attackers,
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
  }
  // Past the head deadline every dripper has been cut, although each sent a byte every 200 ms.
  std::this_thread::sleep_for(std::chrono::seconds(kApiHeadDeadlineSeconds + 2));
  stop = true;
  drip.join();
  int cut = 0;
  for (int fd : drippers) {
    char buf[512];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
    }
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) ++cut;
    close(fd);
  }
  EXPECT_EQ(cut, static_cast<int>(drippers.size()));
}

// A request with two Content-Length headers (a proxy and the daemon could frame it differently) is refused with
// 400 and the connection closed: the request hidden in its body is never answered.
TEST(DaemonApi, RefusesAmbiguousFramingAndCloses) {
  RunningDaemon d("daemon-smuggle");
  ASSERT_GT(d.port(), 0) << d.log();
  const std::string host = "Host: " + d.hostport() + "\r\n";
  const std::string hidden = "GET /metrics HTTP/1.1\r\n" + host + "\r\n";
  const std::string request = "GET /v1/check?url=a HTTP/1.1\r\n" + host + "Content-Length: 0\r\nContent-Length: " +
                              std::to_string(hidden.size()) + "\r\n\r\n" + hidden;
  const auto out = testing_http::RawExchange(d.port(), request);
  EXPECT_EQ(testing_http::StatusOf(out.response), 400) << out.response;
  EXPECT_TRUE(out.closed);
  EXPECT_EQ(testing_http::CountResponses(out.response), 1) << out.response;
  EXPECT_EQ(out.response.find("urlguard_"), std::string::npos) << out.response;
  // A Content-Length and a Transfer-Encoding together: the same.
  const auto te = testing_http::RawExchange(
      d.port(), "GET /status HTTP/1.1\r\n" + host + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
                    hidden);
  EXPECT_EQ(testing_http::StatusOf(te.response), 400) << te.response;
  EXPECT_TRUE(te.closed);
  EXPECT_EQ(testing_http::CountResponses(te.response), 1) << te.response;
}

// ---- readiness: --wait-for-first-sync (issue 21) ------------------------------------------------------------

// A proxy on 127.0.0.1 in front of the reference server that holds every request until Open(): an update server
// that is slow, or not reachable yet, when the daemon starts. Fault injection (latency) only: what it forwards
// is the real server's answer.
class GatedProxy {
 public:
  explicit GatedProxy(int upstream_port) : upstream_port_(upstream_port) {
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) { Forward(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~GatedProxy() {
    Open();
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  // Waits up to `seconds` until a request arrived (held or not).
  bool WaitForRequest(int seconds) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(seconds), [this] { return requests_ > 0; });
  }

 private:
  void Forward(const httplib::Request& req, httplib::Response& res) {
    {
      std::unique_lock<std::mutex> l(mu_);
      ++requests_;
      cv_.notify_all();
      cv_.wait(l, [this] { return open_; });
    }
    httplib::Client upstream("127.0.0.1", upstream_port_);
    httplib::Headers headers;
    if (req.has_header("If-None-Match")) headers.emplace("If-None-Match", req.get_header_value("If-None-Match"));
    auto r = upstream.Get(req.target.c_str(), headers);
    if (!r) {
      res.status = 502;
      return;
    }
    res.status = r->status;
    for (const char* h : {"ETag", "Retry-After", "Cache-Control"}) {
      if (r->has_header(h)) res.set_header(h, r->get_header_value(h));
    }
    res.set_content(r->body, r->get_header_value("Content-Type").empty() ? "application/octet-stream"
                                                                         : r->get_header_value("Content-Type"));
  }

  const int upstream_port_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;  // guards open_ and requests_ (handlers run on the server's worker threads)
  std::condition_variable cv_;
  bool open_ = false;
  int requests_ = 0;
};

// A urlguardd started with `extra` arguments against `server_url`, its notify socket bound before it starts.
class ReadinessDaemon {
 public:
  ReadinessDaemon(const std::string& root, const std::string& server_url, const std::vector<std::string>& extra)
      : root_(root), notify_(root + "/notify.sock") {
    std::vector<std::string> args = {testing::BinPath("urlguardd"), "--data-dir", root + "/data", "--server",
                                     server_url, "--public-key", root + "/pub.pem", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = Spawn(args, root + "/notify.sock", root + "/daemon.log");
  }
  ~ReadinessDaemon() {
    kill(pid_, SIGTERM);
    EXPECT_EQ(WaitExit(pid_, 60), 0) << log();
  }
  NotifySocket& notify() { return notify_; }
  // The daemon's stderr so far ("" before the child has opened it).
  std::string log() const {
    const std::string path = root_ + "/daemon.log";
    return Env::Default()->FileExists(path) ? testing::ReadFileOrDie(path) : "";
  }
  // The lookup API's port from the start-up line (written before any waiting), 0 when it did not come.
  int WaitForPort() {
    const std::string marker = "lookup API on http://127.0.0.1:";
    for (int i = 0; i < 200; ++i) {
      const std::string l = log();
      const size_t at = l.find(marker);
      if (at != std::string::npos) return std::atoi(l.c_str() + at + marker.size());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return 0;
  }
  nlohmann::json Status(int port) {
    httplib::Client api("127.0.0.1", port);
    api.set_read_timeout(10, 0);
    auto r = api.Get("/status");
    if (!r) return nullptr;
    return nlohmann::json::parse(r->body, nullptr, false);
  }

 private:
  std::string root_;
  NotifySocket notify_;
  pid_t pid_ = -1;
};

// The readiness ordering: with --wait-for-first-sync a unit ordered after urlguardd never starts against no
// list. READY=1 does not come while the update server holds the first sync back (which starts at once, not after
// the start-up jitter of up to a minute), and comes once the list is installed: /status says so the moment
// READY=1 arrives. The same with --list and on a fresh directory that discovers its lists from the list index.
TEST(DaemonReadiness, WaitForFirstSyncSaysReadyOnlyOnceTheListsAreInstalled) {
  for (const bool discovery : {false, true}) {
    SCOPED_TRACE(discovery ? "discovery" : "--list phishing");
    const std::string root = testing::ScratchDir(discovery ? "ready-discovery" : "ready-list");
    std::string url;
    std::unique_ptr<Server> server = PublishAndServe(root, "evil.example\n", &url);
    ASSERT_NE(server, nullptr);
    GatedProxy proxy(server->port());
    std::vector<std::string> extra = {"--wait-for-first-sync=60"};
    if (!discovery) extra.insert(extra.end(), {"--list", "phishing"});
    ReadinessDaemon d(root, proxy.url(), extra);
    const int port = d.WaitForPort();
    ASSERT_GT(port, 0) << d.log();
    // systemd is asked to wait as long as the daemon will (60 s and a margin), whatever TimeoutStartSec= says.
    const std::string waiting = d.notify().WaitForMessage("EXTEND_TIMEOUT_USEC=", 20);
    EXPECT_NE(waiting.find("EXTEND_TIMEOUT_USEC=90000000\nSTATUS=waiting for the first sync"), std::string::npos)
        << waiting << d.log();
    ASSERT_TRUE(proxy.WaitForRequest(20)) << "the first sync did not start at once\n" << d.log();
    // The first sync is held: no READY=1, and the API already answers with the list not installed.
    EXPECT_FALSE(d.notify().WaitFor("READY=1", 2)) << d.log();
    nlohmann::json before = d.Status(port);
    ASSERT_TRUE(before.is_object()) << d.log();
    if (discovery) {
      EXPECT_TRUE(before["lists"].empty()) << before.dump();
    } else {
      ASSERT_EQ(before["lists"].size(), 1u) << before.dump();
      EXPECT_EQ(before["lists"][0]["stale_reason"], "not_installed");
    }
    proxy.Open();
    const std::string ready = d.notify().WaitForMessage("READY=1", 60);
    ASSERT_FALSE(ready.empty()) << d.log();
    EXPECT_NE(ready.find("STATUS=serving 1 lists"), std::string::npos) << ready;
    nlohmann::json after = d.Status(port);
    ASSERT_TRUE(after.is_object());
    ASSERT_EQ(after["lists"].size(), 1u) << after.dump();
    EXPECT_EQ(after["lists"][0]["list"], "phishing");
    EXPECT_EQ(after["lists"][0]["version"], 1) << after.dump();
    EXPECT_EQ(after["lists"][0]["stale"], false);
    EXPECT_NE(d.log().find("ready: every subscribed list is installed"), std::string::npos) << d.log();
  }
}

// When the wait passes first, READY=1 comes anyway (a unit ordered after urlguardd is not held forever), saying
// which list is not installed; /status names it stale. The held sync still installs the list afterwards.
TEST(DaemonReadiness, WaitForFirstSyncTimesOutWithTheListNamedStale) {
  const std::string root = testing::ScratchDir("ready-timeout");
  std::string url;
  std::unique_ptr<Server> server = PublishAndServe(root, "evil.example\n", &url);
  ASSERT_NE(server, nullptr);
  GatedProxy proxy(server->port());
  ReadinessDaemon d(root, proxy.url(), {"--list", "phishing", "--wait-for-first-sync=2"});
  const int port = d.WaitForPort();
  ASSERT_GT(port, 0) << d.log();
  const std::string ready = d.notify().WaitForMessage("READY=1", 60);
  ASSERT_FALSE(ready.empty()) << d.log();
  EXPECT_NE(ready.find("not ready after 2 s: phishing (not_installed)"), std::string::npos) << ready;
  EXPECT_NE(ready.find("STATUS=serving 0 lists"), std::string::npos) << ready;
  nlohmann::json status = d.Status(port);
  ASSERT_TRUE(status.is_object()) << d.log();
  ASSERT_EQ(status["lists"].size(), 1u) << status.dump();
  EXPECT_EQ(status["lists"][0]["list"], "phishing");
  EXPECT_EQ(status["lists"][0]["stale"], true);
  EXPECT_EQ(status["lists"][0]["stale_reason"], "not_installed");
  EXPECT_NE(d.log().find("not ready after 2 s: phishing (not_installed)"), std::string::npos) << d.log();
  // The held first sync goes on and installs the list.
  proxy.Open();
  nlohmann::json later;
  for (int i = 0; i < 120; ++i) {
    later = d.Status(port);
    if (later.is_object() && later["lists"].size() == 1 && later["lists"][0]["version"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_EQ(later["lists"][0]["version"], 1) << later.dump();
}

// Without the flag nothing changed: READY=1 comes as soon as the API listens, before any list is installed.
TEST(DaemonReadiness, WithoutTheFlagReadyComesBeforeTheFirstSync) {
  const std::string root = testing::ScratchDir("ready-default");
  std::string url;
  std::unique_ptr<Server> server = PublishAndServe(root, "evil.example\n", &url);
  ASSERT_NE(server, nullptr);
  GatedProxy proxy(server->port());
  ReadinessDaemon d(root, proxy.url(), {"--list", "phishing"});
  const std::string ready = d.notify().WaitForMessage("READY=1", 20);
  ASSERT_FALSE(ready.empty()) << d.log();
  EXPECT_NE(ready.find("STATUS=serving 0 lists"), std::string::npos) << ready;
  const int port = d.WaitForPort();
  ASSERT_GT(port, 0) << d.log();
  nlohmann::json status = d.Status(port);
  ASSERT_TRUE(status.is_object()) << d.log();
  ASSERT_EQ(status["lists"].size(), 1u) << status.dump();
  EXPECT_EQ(status["lists"][0]["stale_reason"], "not_installed");
  EXPECT_EQ(d.log().find("waiting up to"), std::string::npos) << d.log();
}

// A bad wait is bad usage, refused before the data directory is touched.
TEST(DaemonReadiness, RefusesAWaitOutOfRange) {
  const std::string root = testing::ScratchDir("ready-usage");
  testing::WriteFileOrDie(root + "/pub.pem", std::move(SigningKey::Generate()).value().PublicPem());
  for (const std::string wait : {"0", "86401", "soon", "-5"}) {
    auto r = testing::RunCommand(testing::BinPath("urlguardd") + " --data-dir " + root + "/data --server " +
                                     "http://127.0.0.1:1 --public-key " + root + "/pub.pem --list x " +
                                     "--wait-for-first-sync=" + wait,
                                 "", root + "/err");
    EXPECT_EQ(r.exit_code, 4) << wait;
    EXPECT_NE(testing::ReadFileOrDie(root + "/err").find("not in range 1 to 86400"), std::string::npos) << wait;
    EXPECT_FALSE(Env::Default()->FileExists(root + "/data")) << wait;
  }
}

// Every local program connects from 127.0.0.1, so they all share one per-address budget: one process holding 80
// dripping connections (reconnecting whenever one is cut) used to leave another program on 127.0.0.1 with 2 of
// 24 /status answers. Now a new connection at the cap closes the address's oldest connection still waiting for
// a head, and a dripper loses its slot after kApiHeadDeadlineSeconds anyway: the honest program gets its
// answers.
TEST(DaemonApi, OneLocalProcessDrippingFrom127001DoesNotStarveAnother) {
  RunningDaemon d("daemon-drip-same-address");
  ASSERT_GT(d.port(), 0) << d.log();
  const std::string partial = "GET /status HTTP/1.1\r\nHost: " + d.hostport() + "\r\nX-Drip: ";
  constexpr int kDrippers = 80;
  std::atomic<bool> stop{false};
  std::atomic<int> reconnects{0};
  std::thread attacker([&] {
    std::vector<int> fds;
    while (!stop) {
      // Keep kDrippers connections open from 127.0.0.1, replacing each one the daemon cuts, and drip a byte
      // into each every 100 ms.
      for (int& fd : fds) {
        if (testing_http::ClosedByServer(fd)) {
          close(fd);
          fd = -1;
        } else {
          (void)send(fd, "a", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
      }
      fds.erase(std::remove(fds.begin(), fds.end(), -1), fds.end());
      while (static_cast<int>(fds.size()) < kDrippers && !stop) {
        const int fd = testing_http::ConnectFrom(d.port(), "127.0.0.1", 1);
        if (fd < 0) break;
        (void)testing_http::SendAll(fd, partial);
        fds.push_back(fd);
        reconnects.fetch_add(1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (int fd : fds) close(fd);
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the drippers hold every slot of 127.0.0.1
  constexpr int kProbes = 24;
  int answered = 0;
  for (int i = 0; i < kProbes; ++i) {
    const auto out = testing_http::RawExchange(
        d.port(), "GET /status HTTP/1.1\r\nHost: " + d.hostport() + "\r\nConnection: close\r\n\r\n", "127.0.0.1",
        /*timeout_seconds=*/10);
    if (testing_http::StatusOf(out.response) == 200) ++answered;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stop = true;
  attacker.join();
  std::printf("honest /status answered: %d of %d next to %d drippers (%d dripper connections opened)\n", answered,
              kProbes, kDrippers, reconnects.load());
  EXPECT_GT(reconnects.load(), kDrippers) << "the drippers never lost a slot";
  EXPECT_GE(answered, kProbes - 2);
}

// urlguardd --listen-unix: the API on a Unix socket, mode 0660 with the configured group, no Host allowlist
// (curl --unix-socket sends "Host: localhost"), a NUL in the target refused there too, and connections capped
// per uid: a flood of 100 waiting connections from one uid leaves at most kApiMaxConnectionsPerPeer of them
// open, and another uid's connections are neither counted with them nor evicted for them.
TEST(DaemonApi, UnixSocketServesLocalProgramsAndCapsEachUid) {
  const bool root = geteuid() == 0;
  const std::string group = root ? "65534" : std::to_string(getegid());
  RunningDaemon d("daemon-unix", {"--listen-unix", "ROOT/api.sock", "--unix-group", group});
  ASSERT_GT(d.port(), 0) << d.log();
  const std::string path = d.root() + "/api.sock";
  EXPECT_NE(d.log().find("and unix:" + path), std::string::npos) << d.log();
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(std::to_string(st.st_gid), group);
  auto curl = testing::RunCommand("curl -s --max-time 10 --unix-socket " + path + " http://localhost/status");
  EXPECT_EQ(curl.exit_code, 0);
  EXPECT_NE(curl.out.find("\"lists\""), std::string::npos) << curl.out;
  using namespace std::string_literals;
  const auto nul = testing_http::ExchangeOn(testing_http::ConnectUnix(path),
                                            "GET /status\0junk HTTP/1.1\r\nHost: localhost\r\n\r\n"s);
  EXPECT_EQ(testing_http::StatusOf(nul.response), 400) << nul.response;

  std::vector<int> flood;
  for (int i = 0; i < 100; ++i) {
    const int fd = testing_http::ConnectUnix(path, 5);
    ASSERT_GE(fd, 0) << i;
    (void)testing_http::SendAll(fd, "GET /status HTTP/1.1\r\n");
    flood.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int open = 0;
  for (int fd : flood) open += testing_http::ClosedByServer(fd) ? 0 : 1;
  EXPECT_LE(open, static_cast<int>(kApiMaxConnectionsPerPeer));
  EXPECT_GE(open, static_cast<int>(kApiMaxConnectionsPerPeer) - 4);  // the newest ones are kept
  if (root) {
    // nobody (uid 65534, in the socket's group): its held connections survive this uid's next flood, and its
    // request is answered.
    ASSERT_EQ(chmod(d.root().c_str(), 0711), 0);
    int to_child[2], from_child[2];
    ASSERT_EQ(pipe(to_child), 0);
    ASSERT_EQ(pipe(from_child), 0);
    const pid_t child = fork();
    if (child == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
      std::vector<int> held;
      for (int i = 0; i < 8; ++i) {
        const int fd = testing_http::ConnectUnix(path, 5);
        if (fd < 0 || !testing_http::SendAll(fd, "GET /status HTTP/1.1\r\n")) _exit(4);
        held.push_back(fd);
      }
      char c = 'r';
      (void)!write(from_child[1], &c, 1);  // held; now the parent floods
      (void)!read(to_child[0], &c, 1);
      int kept = 0;
      for (int fd : held) kept += testing_http::ClosedByServer(fd) ? 0 : 1;
      const auto other = testing_http::ExchangeOn(
          testing_http::ConnectUnix(path, 5), "GET /status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
      _exit(kept == 8 && testing_http::StatusOf(other.response) == 200 ? 0 : 1);
    }
    char c;
    ASSERT_EQ(read(from_child[0], &c, 1), 1);
    for (int i = 0; i < 100; ++i) {
      const int fd = testing_http::ConnectUnix(path, 5);
      ASSERT_GE(fd, 0) << i;
      (void)testing_http::SendAll(fd, "GET /status HTTP/1.1\r\n");
      flood.push_back(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(write(to_child[1], "g", 1), 1);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the other uid was evicted or not served";
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
  }
  for (int fd : flood) close(fd);
}

// urlguardd's own NUL check: "/status\0junk" was answered as /status.
TEST(DaemonApi, ANulInTheTargetIs400) {
  RunningDaemon d("daemon-nul");
  ASSERT_GT(d.port(), 0) << d.log();
  using namespace std::string_literals;
  const auto out = testing_http::RawExchange(
      d.port(), "GET /status\0junk HTTP/1.1\r\nHost: "s + d.hostport() + "\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(testing_http::StatusOf(out.response), 400) << out.response;
  EXPECT_EQ(out.response.find("\"lists\""), std::string::npos) << out.response;
}

}  // namespace
}  // namespace urlguard
