// Copyright urlguard authors.
//
// urlguardd as systemd runs it: a real process against the reference server on loopback. It must say READY=1 on
// $NOTIFY_SOCKET once its lists are mapped, answer /v1/check, /status and /metrics, reload on SIGHUP, stop cleanly
// on SIGTERM, and refuse to start while another process holds the data directory.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
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
#include "publish/signer.h"
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
  bool WaitFor(const std::string& what, int seconds) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    char buf[1024];
    while (std::chrono::steady_clock::now() < until) {
      ssize_t n = ::recv(fd_, buf, sizeof buf - 1, 0);
      if (n > 0 && std::string(buf, static_cast<size_t>(n)).find(what) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::string path_;
  int fd_;
};

pid_t Spawn(const std::vector<std::string>& args, const std::string& notify_socket, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!notify_socket.empty()) setenv("NOTIFY_SOCKET", notify_socket.c_str(), 1);
    FILE* f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int WaitExit(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
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
  ServerOptions so;
  so.repo_dir = po.repo_dir;
  auto server = Server::Start(so);
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!published.ok() || !server.ok()) return nullptr;
  *url = "http://127.0.0.1:" + std::to_string((*server)->port());
  return std::move(*server);
}

TEST(Daemon, ServesLookupsStatusMetricsAndStopsCleanly) {
  const std::string root = testing::ScratchDir("daemon");
  std::string url;
  std::unique_ptr<Server> server = PublishAndServe(root, "evil.example\nhttp://secure-bank.example/login.php\n", &url);
  ASSERT_NE(server, nullptr);
  const int api_port = 20000 + static_cast<int>(getpid() % 20000);

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
  const int api_port = 20000 + static_cast<int>((getpid() + 7919) % 20000);
  const std::string data = root + "/data";
  // Install the list first (one pass), so the daemon serves it from its first request on.
  auto synced = testing::RunCommand(testing::BinPath("urlguard") + " sync --once --list phishing --server " + url +
                                    " --public-key " + root + "/pub.pem --data-dir " + data);
  ASSERT_EQ(synced.exit_code, 0) << synced.out;

  NotifySocket notify(root + "/notify.sock");
  pid_t pid = Spawn({testing::BinPath("urlguardd"), "--data-dir", data, "--server", url, "--public-key",
                     root + "/pub.pem", "--list", "phishing", "--listen", "127.0.0.1:" + std::to_string(api_port)},
                    root + "/notify.sock", root + "/daemon.log");
  ASSERT_TRUE(notify.WaitFor("READY=1", 20)) << testing::ReadFileOrDie(root + "/daemon.log");
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

// Issue 22, item 5: D/current or D/sync-state.json replaced by a FIFO hung urlguardd: its watcher thread blocked
// in open(D/current) holding the refresh lock, /status blocked in open(D/sync-state.json), and SIGTERM did not
// stop it (stopping joins the watcher). Every open is non-blocking now and refuses what is not a regular file.
TEST(Daemon, AFifoInTheDataDirectoryHangsNothing) {
  const std::string root = testing::ScratchDir("daemon-fifo");
  std::string url;
  std::unique_ptr<Server> server = PublishAndServe(root, "evil.example\n", &url);
  ASSERT_NE(server, nullptr);
  const int api_port = 20000 + static_cast<int>((getpid() + 104729) % 20000);
  const std::string data = root + "/data";
  auto synced = testing::RunCommand(testing::BinPath("urlguard") + " sync --once --list phishing --server " + url +
                                    " --public-key " + root + "/pub.pem --data-dir " + data);
  ASSERT_EQ(synced.exit_code, 0) << synced.out;

  NotifySocket notify(root + "/notify.sock");
  pid_t pid = Spawn({testing::BinPath("urlguardd"), "--data-dir", data, "--server", url, "--public-key",
                     root + "/pub.pem", "--list", "phishing", "--listen", "127.0.0.1:" + std::to_string(api_port)},
                    root + "/notify.sock", root + "/daemon.log");
  ASSERT_TRUE(notify.WaitFor("READY=1", 20)) << testing::ReadFileOrDie(root + "/daemon.log");
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
  ServerOptions so;
  so.repo_dir = root + "/repo";
  auto server = Server::Start(so);
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
  explicit RunningDaemon(const std::string& name) : root_(testing::ScratchDir(name)) {
    testing::WriteFileOrDie(root_ + "/pub.pem", std::move(SigningKey::Generate()).value().PublicPem());
    NotifySocket notify(root_ + "/notify.sock");
    pid_ = Spawn({testing::BinPath("urlguardd"), "--data-dir", root_ + "/data", "--server", "http://127.0.0.1:1",
                  "--public-key", root_ + "/pub.pem", "--list", "phishing", "--listen", "127.0.0.1:0"},
                 root_ + "/notify.sock", root_ + "/daemon.log");
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

}  // namespace
}  // namespace urlguard
