// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The fleet as one system on loopback (docs/fleet.md): a real redis-server, three urlguard-server processes
// sharing it as their abuse guard, nginx in front rendered from packaging/nginx/urlguard.conf by
// scripts/fleet.sh, and urlguard clients (include/urlguard/client.h) syncing through nginx and verifying
// their local hits through it the whole time. Faults while they do:
//   - kill -9 one verify server: nginx retries on the others, no client verification fails;
//   - Redis stopped for 10 s and restarted: every live server falls back to its local guard (its metrics say
//     so, its log says so once) and returns to Redis by itself;
//   - the killed server restarted: nginx sends it traffic again.
// Zero wrong verdicts: every listed URL is kMalicious (confirmed by the verify API), every clean URL kSafe or
// kSafeVerified, and nothing is ever kUnverifiedHit.
//
// Every test client reaches nginx from 127.0.0.1, so the servers run with the window and the per-second cap
// off (one signature for all of them); the shared throttling itself is server/redis_guard_test's.
// Skipped when redis-server or nginx is not installed.
#include <sys/stat.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <regex>
#include <thread>

#include "platform/env.h"
#include "publish/publisher.h"
#include "signing/signer.h"
#include "tests/fleet_test_util.h"
#include "tests/test_util.h"
#include "urlguard/client.h"

namespace urlguard {
namespace {

using testing::ChildProcess;
using testing::RedisProcess;
using testing::WaitFor;

constexpr int kServers = 3;
constexpr int kListedHosts = 2000;

std::string ListedHost(int i) { return "bad" + std::to_string(i) + ".example"; }

class Fleet {
 public:
  // Everything up and a first version published; false (with a message) when a part does not start.
  bool Start(std::string* error) {
    root_ = testing::ScratchDir("fleet");
    chmod(root_.c_str(), 0755);  // nginx's workers (nobody when the test runs as root) read public/
    key_ = std::make_unique<SigningKey>(std::move(SigningKey::Generate()).value());
    std::string feed;
    for (int i = 0; i < kListedHosts; ++i) feed += ListedHost(i) + "\n";
    if (!Publish(feed)) return Fail(error, "publish failed");

    if (!redis_.Start(root_)) return Fail(error, "redis-server did not start");
    for (int i = 0; i < kServers; ++i) {
      if (!StartServer(i)) return Fail(error, "urlguard-server " + std::to_string(i) + " did not start: " + ServerLog(i));
    }
    nginx_port_ = testing::FreeLoopbackPort();
    std::string render = testing::SourcePath("scripts/fleet.sh") + " render-nginx " + std::to_string(nginx_port_) +
                         " " + root_ + "/repo/public " + nginx_rate_ + " " + root_;
    for (int p : ports_) render += " " + std::to_string(p);
    const auto conf = testing::RunCommand(render);
    if (conf.exit_code != 0) return Fail(error, "fleet.sh render-nginx failed");
    testing::WriteFileOrDie(root_ + "/urlguard.conf", conf.out);
    std::filesystem::create_directories(root_ + "/nginx-tmp");
    testing::WriteFileOrDie(root_ + "/nginx.conf",
                            std::string(geteuid() == 0 ? "user nobody nogroup;\n" : "") +
                                "daemon off;\nworker_processes 2;\npid " + root_ + "/nginx.pid;\nerror_log " +
                                root_ + "/nginx.error.log warn;\nevents { worker_connections 1024; }\nhttp {\n"
                                "  client_body_temp_path " + root_ + "/nginx-tmp/body;\n  proxy_temp_path " +
                                root_ + "/nginx-tmp/proxy;\n  fastcgi_temp_path " + root_ + "/nginx-tmp/fcgi;\n"
                                "  uwsgi_temp_path " + root_ + "/nginx-tmp/uwsgi;\n  scgi_temp_path " + root_ +
                                "/nginx-tmp/scgi;\n  include " + root_ + "/urlguard.conf;\n}\n");
    if (!nginx_.Start({testing::kNginxBinary, "-p", root_, "-c", root_ + "/nginx.conf"}, root_ + "/nginx.out") ||
        !WaitFor([&] { return testing::CanConnect(nginx_port_); }, 10000)) {
      return Fail(error, "nginx did not start: " + testing::ReadFileOrDie(root_ + "/nginx.out"));
    }
    return true;
  }

  // Publishes `feed` (plain lines) as the next version of "phishing"; readable by nginx's workers.
  bool Publish(const std::string& feed) {
    testing::WriteFileOrDie(root_ + "/feed.txt", feed);
    PublishOptions o;
    o.repo_dir = root_ + "/repo";
    o.list = "phishing";
    o.inputs = {*ParseFeedSpec("plain:" + root_ + "/feed.txt")};
    o.fp_rate = 0.3;  // many local hits on clean URLs: they must be verified as safe
    const Status s = urlguard::Publish(Env::Default(), *key_, o).status();
    EXPECT_TRUE(s.ok()) << s.ToString();
    testing::RunCommand("chmod -R o+rX '" + root_ + "/repo/public'");
    return s.ok();
  }

  bool StartServer(int i) {
    const std::string log = root_ + "/server-" + std::to_string(i) + ".log";
    testing::WriteFileOrDie(log, "");
    const int port = i < static_cast<int>(ports_.size()) ? ports_[i] : 0;
    if (!servers_[i].Start({testing::BinPath("urlguard-server"), "--repo", root_ + "/repo", "--listen",
                            "127.0.0.1:" + std::to_string(port), "--guard", redis_.url() + "?timeout_ms=200", "--trusted-proxy",
                            "127.0.0.1", "--throttle", "59", "--max-requests-per-second", "0"},
                           log)) {
      return false;
    }
    std::smatch m;
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    std::string text;
    if (!WaitFor([&] {
          text = testing::ReadFileOrDie(log);
          return std::regex_search(text, m, listening);
        }, 10000)) {
      return false;
    }
    if (i >= static_cast<int>(ports_.size())) ports_.push_back(std::stoi(m[1]));
    return true;
  }

  // One server's /metrics (empty when it does not answer).
  std::string Metrics(int i) {
    httplib::Client c("127.0.0.1", ports_[i]);
    c.set_connection_timeout(2);
    auto r = c.Get("/metrics");
    return r && r->status == 200 ? r->body : "";
  }
  bool Backend(int i, const std::string& backend) {
    return Metrics(i).find("urlguard_server_guard_backend{backend=\"" + backend + "\"} 1") != std::string::npos;
  }
  uint64_t VerifyRequests(int i) {
    const std::string m = Metrics(i);
    std::smatch match;
    const std::regex re("urlguard_server_requests_total\\{endpoint=\"verify\",status=\"200\"\\} ([0-9]+)");
    return std::regex_search(m, match, re) ? std::stoull(match[1]) : 0;
  }
  std::string ServerLog(int i) { return testing::ReadFileOrDie(root_ + "/server-" + std::to_string(i) + ".log"); }

  ClientOptions ClientFor(const std::string& data) const {
    ClientOptions co;
    co.data_dir = data;
    co.server_url = url();
    co.public_key_pems = {key_->PublicPem()};
    co.lists = {"phishing"};
    co.verify_deadline_ms = 5000;
    co.watch = false;
    return co;
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(nginx_port_); }
  // nginx's per-client verify rate (limit_req); before Start. The default never limits the tests' clients.
  void set_nginx_rate(const std::string& rate) { nginx_rate_ = rate; }
  const std::string& root() const { return root_; }
  ChildProcess& server(int i) { return servers_[i]; }
  RedisProcess& redis() { return redis_; }

 private:
  static bool Fail(std::string* error, const std::string& what) {
    *error = what;
    return false;
  }

  std::string root_;
  std::unique_ptr<SigningKey> key_;
  RedisProcess redis_;
  ChildProcess servers_[kServers];
  std::vector<int> ports_;
  ChildProcess nginx_;
  int nginx_port_ = -1;
  std::string nginx_rate_ = "100000r/s";
};

bool Installed() {
  return RedisProcess::Available() && access(testing::kNginxBinary, X_OK) == 0;
}

TEST(FleetTest, StaticFilesCarryTheRepositoryCachePolicy) {
  if (!Installed()) GTEST_SKIP() << "redis-server or nginx is not installed (scripts/install-deps.sh)";
  Fleet fleet;
  std::string error;
  ASSERT_TRUE(fleet.Start(&error)) << error;
  httplib::Client c(fleet.url());
  auto manifest = c.Get("/v1/lists/phishing/manifest.json");
  ASSERT_TRUE(manifest);
  ASSERT_EQ(manifest->status, 200);
  EXPECT_EQ(manifest->get_header_value("Cache-Control"), "no-cache");
  EXPECT_EQ(manifest->get_header_value("Content-Type"), "application/json");
  const std::string etag = manifest->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  auto again = c.Get("/v1/lists/phishing/manifest.json", {{"If-None-Match", etag}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 304);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(manifest->body, m, std::regex("snapshot-[0-9]+\\.ugs\\.z")));
  auto snapshot = c.Get("/v1/lists/phishing/" + m.str());
  ASSERT_TRUE(snapshot);
  EXPECT_EQ(snapshot->status, 200);
  EXPECT_EQ(snapshot->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  // Nothing private, nothing outside /v1/, no writes.
  EXPECT_EQ(c.Get("/private/hashes.sqlite")->status, 404);
  EXPECT_EQ(c.Get("/v1/../private/hashes.sqlite")->status, 404);
  EXPECT_EQ(c.Post("/v1/lists/phishing/manifest.json", "x", "text/plain")->status, 403);
  // /v1/verify and /healthz go to the servers; a body over the cap is refused at the edge.
  EXPECT_EQ(c.Get("/healthz")->status, 200);
  auto verify = c.Post("/v1/verify", R"({"prefixes":["00000000"]})", "application/json");
  ASSERT_TRUE(verify);
  EXPECT_EQ(verify->status, 200);
  EXPECT_NE(verify->body.find("\"matches\""), std::string::npos);
  EXPECT_EQ(c.Post("/v1/verify", std::string(20000, ' '), "application/json")->status, 413);
  EXPECT_TRUE(fleet.Backend(0, "redis"));
}

// nginx's own 429s (limit_req: burst 100 at 1 r/s here) carry Retry-After, as the verify servers' 429s do
// (packaging/nginx/urlguard.conf, error_page 429).
TEST(FleetTest, NginxOwn429sCarryRetryAfter) {
  if (!Installed()) GTEST_SKIP() << "redis-server or nginx is not installed (scripts/install-deps.sh)";
  Fleet fleet;
  fleet.set_nginx_rate("1r/s");
  std::string error;
  ASSERT_TRUE(fleet.Start(&error)) << error;
  httplib::Client c(fleet.url());
  int nginx_429 = 0, other_429 = 0, ok = 0;
  for (int i = 0; i < 160; ++i) {
    auto r = c.Post("/v1/verify", R"({"prefixes":["00000000"]})", "application/json");
    ASSERT_TRUE(r) << "request " << i;
    if (r->status == 200) ++ok;
    if (r->status != 429) continue;
    const bool from_nginx = r->body.find("nginx") != std::string::npos;  // its page, or ours: "(nginx)"
    (from_nginx ? nginx_429 : other_429) += 1;
    const std::string retry = r->get_header_value("Retry-After");
    EXPECT_TRUE(!retry.empty() && retry.find_first_not_of("0123456789") == std::string::npos)
        << "a 429 " << (from_nginx ? "from nginx" : "from a server") << " without a Retry-After: " << r->body;
  }
  EXPECT_GT(ok, 0);
  EXPECT_GE(nginx_429, 40) << "nginx's limit_req refused too few of the burst (" << other_429 << " 429s from servers)";
}

TEST(FleetTest, ClientsKeepVerifyingThroughServerDeathAndRedisOutage) {
  if (!Installed()) GTEST_SKIP() << "redis-server or nginx is not installed (scripts/install-deps.sh)";
  Fleet fleet;
  std::string error;
  ASSERT_TRUE(fleet.Start(&error)) << error;

  // Two clients, each in its own data directory, synced through nginx.
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 2; ++i) {
    auto c = Client::Open(fleet.ClientFor(fleet.root() + "/client-" + std::to_string(i)));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto reports = (*c)->SyncNow();
    ASSERT_TRUE(reports.ok()) << reports.status().ToString();
    ASSERT_EQ((*reports)[0].result, SyncResult::kUpdated) << (*reports)[0].error;
    clients.push_back(std::move(c).value());
  }

  // Load: listed hosts must come back kMalicious (verified), clean ones safe; a fresh clean host every time,
  // so the ~30 % of them that hit locally go to the verify API (nothing cached).
  std::atomic<bool> stop{false};
  std::atomic<int> extra_listed{0};  // hosts "new0.example".. "new{n-1}.example" are listed and installed
  // behind: unverified_hit because the verify server answered from an older version than the client's (right
  // after a publish); never cached, so not a wrong verdict, and asked again next time.
  std::atomic<uint64_t> checks{0}, verified{0}, failures{0}, behind{0};
  std::mutex failure_mu;
  std::string first_failure;
  std::vector<std::thread> load;
  for (int t = 0; t < 4; ++t) {
    load.emplace_back([&, t] {
      std::mt19937 rng(1000 + t);
      const Client& client = *clients[t % 2];
      for (uint64_t n = 0; !stop.load(); ++n) {
        std::string url;
        bool listed = rng() % 3 == 0;
        if (listed) {
          const int extra = extra_listed.load();
          url = "http://" + (extra > 0 && rng() % 4 == 0 ? "new" + std::to_string(rng() % extra) + ".example"
                                                          : ListedHost(static_cast<int>(rng() % kListedHosts))) +
                "/login";
        } else {
          url = "http://clean-" + std::to_string(t) + "-" + std::to_string(n) + ".example.org/page";
        }
        const Verdict v = client.Check(url);
        checks.fetch_add(1);
        const bool server_behind = v.kind == VerdictKind::kUnverifiedHit &&
                                   v.error.find("older than the local version") != std::string::npos;
        const bool ok = server_behind ||
                        (listed ? v.kind == VerdictKind::kMalicious
                                : v.kind == VerdictKind::kSafe || v.kind == VerdictKind::kSafeVerified);
        if (server_behind) behind.fetch_add(1);
        if (v.kind == VerdictKind::kMalicious || v.kind == VerdictKind::kSafeVerified) verified.fetch_add(1);
        if (!ok) {
          failures.fetch_add(1);
          std::lock_guard<std::mutex> l(failure_mu);
          if (first_failure.empty()) first_failure = url + " -> " + VerdictKindName(v.kind) + " " + v.error;
        }
      }
    });
  }
  auto sleep_s = [](double s) { std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int>(s * 1000))); };

  sleep_s(3);
  for (int i = 0; i < kServers; ++i) EXPECT_TRUE(fleet.Backend(i, "redis")) << "server " << i;
  const uint64_t verified_before_kill = verified.load();
  EXPECT_GT(verified_before_kill, 20u);

  // kill -9 a verify server under load.
  fleet.server(1).Kill(SIGKILL);
  sleep_s(3);
  EXPECT_GT(verified.load(), verified_before_kill + 20) << "verification stalled after a server died";

  // A new version through nginx while one server is down: the clients sync it and the new entries verify.
  std::string feed;
  for (int i = 0; i < kListedHosts; ++i) feed += ListedHost(i) + "\n";
  for (int i = 0; i < 50; ++i) feed += "new" + std::to_string(i) + ".example\n";
  ASSERT_TRUE(fleet.Publish(feed));
  // The clients install version 2 at once and verify right away, while the servers may still answer from
  // version 1 for up to hash_refresh_millis (1 s): such an answer names version 1 and is not trusted (never a
  // cached safe_verified; docs/verify-server.md "The answer's list versions").
  for (auto& c : clients) {
    auto reports = c->SyncNow();
    ASSERT_TRUE(reports.ok()) << reports.status().ToString();
    EXPECT_EQ((*reports)[0].result, SyncResult::kUpdated) << (*reports)[0].error;
    EXPECT_EQ((*reports)[0].to_version, 2u);
  }
  extra_listed.store(50);
  auto new_host = [](int i) { return "http://new" + std::to_string(i) + ".example/login"; };
  for (auto& c : clients) {
    for (int i = 0; i < 50; ++i) {
      const Verdict v = c->Check(new_host(i));
      EXPECT_TRUE(v.kind == VerdictKind::kMalicious ||
                  (v.kind == VerdictKind::kUnverifiedHit &&
                   v.error.find("older than the local version") != std::string::npos))
          << new_host(i) << " right after the publish: " << VerdictKindName(v.kind) << " " << v.error;
    }
  }
  // Once the servers have loaded version 2, every new entry is malicious on every client: none was cached as
  // safe in the gap.
  EXPECT_TRUE(WaitFor(
      [&] {
        for (auto& c : clients) {
          for (int i = 0; i < 50; ++i) {
            if (c->Check(new_host(i)).kind != VerdictKind::kMalicious) return false;
          }
        }
        return true;
      },
      10000))
      << "a new entry is not malicious after the servers loaded its version";

  // Redis away for 10 s: the live servers fall back to their local guards, then return.
  fleet.redis().Stop();
  EXPECT_TRUE(WaitFor([&] { return fleet.Backend(0, "local") && fleet.Backend(2, "local"); }, 5000))
      << "servers did not report the local guard";
  const uint64_t verified_in_outage = verified.load();
  sleep_s(10);
  EXPECT_GT(verified.load(), verified_in_outage + 20) << "verification stalled while Redis was down";
  ASSERT_TRUE(fleet.redis().Start(fleet.root()));
  EXPECT_TRUE(WaitFor([&] { return fleet.Backend(0, "redis") && fleet.Backend(2, "redis"); }, 10000))
      << "servers did not return to the shared guard";

  // The killed server comes back on its port and nginx sends it verify traffic again (fail_timeout 2 s).
  ASSERT_TRUE(fleet.StartServer(1)) << fleet.ServerLog(1);
  const uint64_t restarted_before = fleet.VerifyRequests(1);
  EXPECT_TRUE(WaitFor([&] { return fleet.VerifyRequests(1) > restarted_before + 5; }, 10000))
      << "nginx did not use the restarted server";
  EXPECT_TRUE(fleet.Backend(1, "redis"));

  stop.store(true);
  for (auto& t : load) t.join();
  EXPECT_EQ(failures.load(), 0u) << "of " << checks.load() << " checks; first: " << first_failure;
  EXPECT_GT(verified.load(), 200u);
  for (int i : {0, 2}) {
    const std::string log = fleet.ServerLog(i);
    size_t n = 0;
    for (size_t at = log.find("switched to the local guard"); at != std::string::npos;
         at = log.find("switched to the local guard", at + 1)) {
      ++n;
    }
    // Logged once per outage (a reply slower than the timeout on this busy machine is an outage too, so not
    // exactly once here; server/redis_guard_test pins "once"), and the last word is the return.
    EXPECT_GE(n, 1u) << "server " << i << " log:\n" << log;
    EXPECT_GT(log.rfind("is back: switched to the shared guard"), log.rfind("switched to the local guard")) << log;
  }
  std::fprintf(stderr,
               "fleet: %llu checks, %llu verified through nginx, %llu failures, %llu unverified while a server "
               "was behind the client's version\n",
               static_cast<unsigned long long>(checks.load()), static_cast<unsigned long long>(verified.load()),
               static_cast<unsigned long long>(failures.load()), static_cast<unsigned long long>(behind.load()));
}

}  // namespace
}  // namespace urlguard
