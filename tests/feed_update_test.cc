// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `urlguard-publish update` end to end (docs/feeds-file.md): feeds served by a real HTTP server on 127.0.0.1
// (cpp-httplib) that fails the way upstream feeds fail in the field — an HTML error page behind a 200, 404 and
// 500 pages, a body cut short, a slow drip, a redirect, a feed that shrank by 90%, gzip — plus a real proxy
// (tinyproxy) and a real PostgreSQL state. Each failure shows the quarantine reported and the list's previous
// entries still published (read back from the version's private entry list, REPO/private/lists/LIST/V.entries).
// The main paths run the real binary as an operator would.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "pg/pg_connection.h"
#include "tests/feed_test_util.h"
#include "tests/pg_cluster.h"
#include "tests/test_util.h"
#include "urlguard/publish.h"

namespace urlguard {
namespace {

const bool kSigpipeIgnored = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

using testing::Domains;
using testing::Gzip;

const char kErrorPage[] =
    "<!DOCTYPE html>\n<html><head><title>403 Forbidden</title></head>\n<body><h1>Forbidden</h1></body></html>\n";

// What the feed server answers at /feed (and /moved redirects there). Set by the test between runs.
struct Answer {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain";
  std::string etag;              // sent, and a matching If-None-Match gets 304
  std::string content_encoding;  // sent as is (the body is already encoded)
  bool truncate = false;         // announce the whole length, send half, close
  bool drip = false;             // a line every 200 ms (the client's total timeout must cut it)
};

class FeedServer {
 public:
  FeedServer() {
    server_.set_keep_alive_timeout(1);
    server_.Get("/feed", [this](const httplib::Request& req, httplib::Response& res) { Serve(req, res); });
    server_.Get("/moved", [this](const httplib::Request&, httplib::Response& res) {
      res.status = 302;
      res.set_header("Location", url("/feed"));
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 5000 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FeedServer() {
    stopping_ = true;
    server_.stop();
    thread_.join();
  }
  void Set(const Answer& a) {
    std::lock_guard<std::mutex> l(mu_);
    answer_ = a;
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  int not_modified() const { return not_modified_; }
  int requests() const { return requests_; }

 private:
  void Serve(const httplib::Request& req, httplib::Response& res) {
    Answer a;
    {
      std::lock_guard<std::mutex> l(mu_);
      a = answer_;
    }
    ++requests_;
    if (!a.etag.empty()) res.set_header("ETag", a.etag);
    if (!a.etag.empty() && req.get_header_value("If-None-Match") == a.etag) {
      ++not_modified_;
      res.status = 304;
      return;
    }
    res.status = a.status;
    if (!a.content_encoding.empty()) res.set_header("Content-Encoding", a.content_encoding);
    if (a.truncate) {
      auto body = std::make_shared<std::string>(a.body);
      res.set_content_provider(body->size(), a.content_type,
                               [body](size_t offset, size_t, httplib::DataSink& sink) {
                                 if (offset >= body->size() / 2) return false;  // closes the connection
                                 sink.write(body->data(), body->size() / 2);
                                 return true;
                               });
      return;
    }
    if (a.drip) {
      res.set_chunked_content_provider(a.content_type, [this](size_t, httplib::DataSink& sink) {
        for (int i = 0; i < 50 && !stopping_; ++i) {
          const std::string line = "drip" + std::to_string(i) + ".example\n";
          if (!sink.write(line.data(), line.size())) return false;
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        sink.done();
        return true;
      });
      return;
    }
    res.set_content(a.body, a.content_type);
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = -1;
  std::mutex mu_;
  Answer answer_;  // guarded by mu_
  std::atomic<int> not_modified_{0}, requests_{0};
  std::atomic<bool> stopping_{false};
};

class FeedUpdate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("feed-update");
    repo_ = dir_ + "/repo";
    auto keys = GenerateKeyPair(dir_ + "/keys");
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    key_ = keys->private_key_path;
    ASSERT_GT(server_.url("/").size(), 0u);
  }

  // A feeds file with one feed `name` into list `phishing`, from /feed (or `path`), plus `extra` lines.
  std::string FeedsFile(const std::string& extra = "", const std::string& url_path = "/feed") {
    const std::string path = dir_ + "/feeds.conf";
    testing::WriteFileOrDie(path, "[feed upstream]\nurl = " + server_.url(url_path) +
                                      "\nformat = plain\nlist = phishing\ntimeout = 2s\nconnect_timeout = 2s\n" +
                                      extra);
    return path;
  }

  FeedUpdateOptions Options(const std::string& feeds_file) {
    FeedUpdateOptions o;
    o.feeds_file = feeds_file;
    o.repo_dir = repo_;
    o.private_key_path = key_;
    return o;
  }

  FeedUpdateReport Update(const FeedUpdateOptions& o) {
    auto r = UpdateFeeds(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : FeedUpdateReport{};
  }

  // Entries of the published version `version` of `list` (its private entry list: one "domain X" line each).
  int PublishedEntries(uint64_t version, const std::string& list = "phishing") {
    const std::string path = repo_ + "/private/lists/" + list + "/" + std::to_string(version) + ".entries";
    if (!std::filesystem::exists(path)) return -1;
    const std::string text = testing::ReadFileOrDie(path);
    int n = 0;
    for (size_t p = text.find("\ndomain "); p != std::string::npos; p = text.find("\ndomain ", p + 1)) ++n;
    return n;
  }

  // A first good run: version 1 with `n` entries.
  void PublishFirst(const std::string& feeds, int n = 1000, const std::string& etag = "") {
    Answer a;
    a.body = Domains(n);
    a.etag = etag;
    server_.Set(a);
    FeedUpdateReport r = Update(Options(feeds));
    ASSERT_EQ(r.lists.size(), 1u);
    ASSERT_EQ(r.lists[0].version, 1u);
    ASSERT_EQ(PublishedEntries(1), n);
    ASSERT_FALSE(r.any_quarantined);
  }

  // Runs the real binary; stderr into err.txt.
  testing::RunResult Cli(const std::string& args, std::string* err = nullptr) {
    const std::string err_path = dir_ + "/err.txt";
    auto r = testing::RunCommand(testing::BinPath("urlguard-publish") + " update --repo " + repo_ + " --key " + key_ +
                                     " " + args,
                                 "", err_path);
    if (err != nullptr) *err = testing::ReadFileOrDie(err_path);
    return r;
  }

  // The failure-path check: the run quarantined the feed for `why`, and version 2 still has the 1000 entries.
  void ExpectQuarantinedAndKept(const FeedUpdateReport& r, const std::string& why) {
    ASSERT_EQ(r.feeds.size(), 1u);
    EXPECT_EQ(r.feeds[0].outcome, FeedOutcome::kQuarantined);
    EXPECT_TRUE(r.feeds[0].quarantined);
    EXPECT_TRUE(r.any_quarantined);
    EXPECT_NE(r.feeds[0].reason.find(why), std::string::npos) << r.feeds[0].reason;
    EXPECT_EQ(r.feeds[0].entries, 1000u);  // the good copy that counts
    EXPECT_EQ(r.feeds[0].consecutive_failures, 1u);
    ASSERT_EQ(r.lists.size(), 1u);
    EXPECT_EQ(r.lists[0].version, 2u);
    EXPECT_EQ(PublishedEntries(2), 1000);
  }

  FeedServer server_;
  std::string dir_, repo_, key_;
};

// The field failure of issue 19: a feed of 1,000 domains, then what a failing upstream returns (three lines of
// it, then an HTML error page). Run as an operator would: version 2 keeps 1,000 entries, exit status 3, the
// quarantined bytes kept where the report says.
TEST_F(FeedUpdate, CollapseToErrorPageKeepsTheList) {
  const std::string feeds = FeedsFile();
  Answer a;
  a.body = Domains(1000);
  server_.Set(a);
  std::string err;
  auto first = Cli("--feeds " + feeds, &err);
  ASSERT_EQ(first.exit_code, 0) << first.out << err;
  EXPECT_NE(first.out.find("list phishing: published version 1, 1000 entries"), std::string::npos) << first.out;
  a.body = Domains(3) + kErrorPage;
  server_.Set(a);
  auto second = Cli("--feeds " + feeds, &err);
  EXPECT_EQ(second.exit_code, 3) << second.out << err;
  EXPECT_NE(second.out.find("list phishing: published version 2, 1000 entries"), std::string::npos) << second.out;
  EXPECT_NE(err.find("feed upstream quarantined: looks like an HTML page"), std::string::npos) << err;
  const std::string qdir = repo_ + "/private/feeds/upstream/quarantine/";
  const size_t at = err.find(qdir);
  ASSERT_NE(at, std::string::npos) << err;
  const std::string qpath = err.substr(at, err.find('\n', at) - at);
  EXPECT_EQ(testing::ReadFileOrDie(qpath), Domains(3) + kErrorPage);
  EXPECT_EQ(PublishedEntries(2), 1000);
}

TEST_F(FeedUpdate, UnchangedETagGets304AndKeepsTheList) {
  const std::string feeds = FeedsFile();
  PublishFirst(feeds, 1000, "\"v1\"");
  FeedUpdateReport r = Update(Options(feeds));
  EXPECT_EQ(server_.not_modified(), 1);
  ASSERT_EQ(r.feeds.size(), 1u);
  EXPECT_EQ(r.feeds[0].outcome, FeedOutcome::kNotModified);
  EXPECT_FALSE(r.any_quarantined);
  EXPECT_EQ(r.lists[0].version, 2u);
  EXPECT_EQ(PublishedEntries(2), 1000);
}

TEST_F(FeedUpdate, Http404And500PagesAreQuarantined) {
  const std::string feeds = FeedsFile();
  PublishFirst(feeds);
  Answer a;
  a.status = 404;
  a.body = kErrorPage;
  a.content_type = "text/html";
  server_.Set(a);
  FeedUpdateReport r = Update(Options(feeds));
  ExpectQuarantinedAndKept(r, "HTTP 404");
  EXPECT_EQ(testing::ReadFileOrDie(r.feeds[0].quarantine_path), kErrorPage);
  a.status = 500;
  server_.Set(a);
  r = Update(Options(feeds));
  EXPECT_NE(r.feeds[0].reason.find("HTTP 500"), std::string::npos) << r.feeds[0].reason;
  EXPECT_EQ(r.feeds[0].consecutive_failures, 2u);
  EXPECT_EQ(r.lists[0].version, 3u);
  EXPECT_EQ(PublishedEntries(3), 1000);
}

TEST_F(FeedUpdate, TruncatedBodyIsQuarantined) {
  const std::string feeds = FeedsFile();
  PublishFirst(feeds);
  Answer a;
  a.body = Domains(2000);
  a.truncate = true;
  server_.Set(a);
  ExpectQuarantinedAndKept(Update(Options(feeds)), "truncated");
}

TEST_F(FeedUpdate, SlowDripHitsTheTotalTimeout) {
  const std::string feeds = FeedsFile();
  PublishFirst(feeds);
  Answer a;
  a.drip = true;
  server_.Set(a);
  ExpectQuarantinedAndKept(Update(Options(feeds)), "timed out");
}

TEST_F(FeedUpdate, RedirectIsFollowed) {
  const std::string feeds = FeedsFile("", "/moved");
  PublishFirst(feeds, 1000);
  Answer a;
  a.body = Domains(1100);
  server_.Set(a);
  FeedUpdateReport r = Update(Options(feeds));
  EXPECT_EQ(r.feeds[0].outcome, FeedOutcome::kUpdated);
  EXPECT_EQ(PublishedEntries(2), 1100);
}

TEST_F(FeedUpdate, GzipEncodingAndGzipFile) {
  const std::string feeds = FeedsFile();
  Answer a;
  a.body = Gzip(Domains(1000));
  a.content_encoding = "gzip";
  a.content_type = "application/octet-stream";
  server_.Set(a);
  FeedUpdateReport r = Update(Options(feeds));
  EXPECT_EQ(r.feeds[0].outcome, FeedOutcome::kUpdated);
  EXPECT_EQ(PublishedEntries(1), 1000);
  a.body = Gzip(Domains(1200));  // a .gz file served as bytes
  a.content_encoding.clear();
  a.content_type = "application/gzip";
  server_.Set(a);
  r = Update(Options(feeds));
  EXPECT_EQ(r.feeds[0].outcome, FeedOutcome::kUpdated);
  EXPECT_EQ(PublishedEntries(2), 1200);
}

// A feed that shrank by 90% is quarantined; --accept takes it on purpose; its entries still leave only after the
// grace, and then only with --allow-large-removal (900 of 1000 is more than the 10% a version may remove).
TEST_F(FeedUpdate, ShrinkQuarantinedThenAcceptedThenGraceAndRemovalCap) {
  const std::string feeds = FeedsFile();
  PublishFirst(feeds);
  Answer a;
  a.body = Domains(100);
  server_.Set(a);
  ExpectQuarantinedAndKept(Update(Options(feeds)), "shrank from 1000 to 100");

  std::string err;
  auto accepted = Cli("--feeds " + feeds + " --accept upstream", &err);
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << err;
  EXPECT_NE(err.find("feed upstream accepted on purpose although: shrank"), std::string::npos) << err;
  EXPECT_NE(accepted.out.find("published version 3, 1000 entries (900 in grace, 0 removed)"), std::string::npos)
      << accepted.out;
  EXPECT_EQ(PublishedEntries(3), 1000);

  // Seven hours later the grace (6 h) is over, but 900 removals exceed the cap: held, exit 5 from the CLI.
  FeedUpdateOptions o = Options(feeds);
  o.now_unix = std::time(nullptr) + 7 * 3600;
  FeedUpdateReport r = Update(o);
  EXPECT_EQ(r.feeds[0].outcome, FeedOutcome::kNotModified);
  EXPECT_EQ(r.lists[0].removals_held, 900u);
  EXPECT_TRUE(r.removals_held);
  EXPECT_EQ(PublishedEntries(4), 1000);
  auto held = Cli("--feeds " + feeds, &err);  // the real clock: still in grace, nothing held
  EXPECT_EQ(held.exit_code, 0) << held.out << err;
  o.allow_large_removal = true;
  r = Update(o);
  EXPECT_EQ(r.lists[0].removed, 900u);
  EXPECT_EQ(PublishedEntries(6), 100);
}

TEST_F(FeedUpdate, RemovalCapExitStatusFromTheCli) {
  const std::string feeds = FeedsFile("[list phishing]\ngrace = 0\n");
  PublishFirst(feeds);
  Answer a;
  a.body = Domains(850);  // 15% smaller: passes max_shrink 20%, but exceeds max_removal 10%
  server_.Set(a);
  std::string err;
  auto r = Cli("--feeds " + feeds, &err);
  EXPECT_EQ(r.exit_code, 5) << r.out << err;
  EXPECT_NE(err.find("held back 150 removals"), std::string::npos) << err;
  EXPECT_EQ(PublishedEntries(2), 1000);
  r = Cli("--feeds " + feeds + " --allow-large-removal", &err);
  EXPECT_EQ(r.exit_code, 0) << r.out << err;
  EXPECT_EQ(PublishedEntries(3), 850);
}

// Entries leave gently: one that disappears from the feed stays published until the list's grace has passed.
TEST_F(FeedUpdate, GraceRemovesOnlyAfterTheClockMoves) {
  const std::string feeds = FeedsFile();
  PublishFirst(feeds, 100);
  Answer a;
  a.body = Domains(95);
  server_.Set(a);
  const int64_t t0 = std::time(nullptr);
  FeedUpdateOptions o = Options(feeds);
  o.now_unix = t0 + 60;
  FeedUpdateReport r = Update(o);
  EXPECT_EQ(r.lists[0].in_grace, 5u);
  EXPECT_EQ(PublishedEntries(2), 100);
  // The feed flaps back: nothing changes for clients.
  a.body = Domains(100);
  server_.Set(a);
  o.now_unix = t0 + 3600;
  r = Update(o);
  EXPECT_EQ(r.lists[0].in_grace, 0u);
  EXPECT_EQ(PublishedEntries(3), 100);
  a.body = Domains(95);
  server_.Set(a);
  o.now_unix = t0 + 2 * 3600;
  EXPECT_EQ(PublishedEntries((Update(o), 4)), 100);
  o.now_unix = t0 + 2 * 3600 + 6 * 3600 - 1;
  EXPECT_EQ(PublishedEntries((Update(o), 5)), 100);
  o.now_unix = t0 + 2 * 3600 + 6 * 3600;
  r = Update(o);
  EXPECT_EQ(r.lists[0].removed, 5u);
  EXPECT_EQ(PublishedEntries(6), 95);
}

TEST_F(FeedUpdate, ThroughTinyproxy) {
  if (access("/usr/bin/tinyproxy", X_OK) != 0) GTEST_SKIP() << "tinyproxy is not installed (scripts/install-deps.sh)";
  const std::string pdir = testing::ScratchDir("feed-proxy");
  const std::string log = pdir + "/tinyproxy.log";
  const int port = testing::FreeLoopbackPort();
  testing::WriteFileOrDie(log, "");
  chmod(log.c_str(), 0666);
  chmod(pdir.c_str(), 0777);
  testing::WriteFileOrDie(pdir + "/tinyproxy.conf",
                          "User nobody\nGroup nogroup\nPort " + std::to_string(port) +
                              "\nListen 127.0.0.1\nAllow 127.0.0.1\nTimeout 30\nLogFile \"" + log +
                              "\"\nLogLevel Connect\nMaxClients 16\nDisableViaHeader Yes\n");
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/usr/bin/tinyproxy", "tinyproxy", "-d", "-c", (pdir + "/tinyproxy.conf").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    httplib::Client probe("127.0.0.1", port);
    probe.set_connection_timeout(0, 100000);
    up = static_cast<bool>(probe.Get("/"));
    if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string feeds = FeedsFile();
  Answer a;
  a.body = Domains(1000);
  server_.Set(a);
  std::string err;
  auto r = Cli("--feeds " + feeds + " --proxy http://127.0.0.1:" + std::to_string(port), &err);
  kill(pid, SIGTERM);
  int status;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(up) << "tinyproxy did not start: " << testing::ReadFileOrDie(log);
  EXPECT_EQ(r.exit_code, 0) << r.out << err;
  EXPECT_EQ(PublishedEntries(1), 1000);
  EXPECT_NE(testing::ReadFileOrDie(log).find(server_.url("/feed")), std::string::npos)
      << "the proxy did not see the request:\n" << testing::ReadFileOrDie(log);
}

// Per-feed health as Prometheus text; promtool accepts it.
TEST_F(FeedUpdate, MetricsTextfilePassesPromtool) {
  const std::string feeds = FeedsFile();
  PublishFirst(feeds);
  Answer a;
  a.body = kErrorPage;
  server_.Set(a);
  const std::string prom = dir_ + "/urlguard_feeds.prom";
  std::string err;
  auto r = Cli("--feeds " + feeds + " --metrics-textfile " + prom, &err);
  EXPECT_EQ(r.exit_code, 3) << err;
  const std::string text = testing::ReadFileOrDie(prom);
  EXPECT_NE(text.find("urlguard_feed_quarantined{feed=\"upstream\",list=\"phishing\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("urlguard_feed_entries{feed=\"upstream\",list=\"phishing\"} 1000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("urlguard_feed_consecutive_failures{feed=\"upstream\",list=\"phishing\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("urlguard_feed_list_version{list=\"phishing\"} 2\n"), std::string::npos) << text;
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool is not installed";
  auto check = testing::RunCommand("/usr/bin/promtool check metrics < '" + prom + "' 2>&1");
  EXPECT_EQ(check.exit_code, 0) << check.out << text;
}

TEST_F(FeedUpdate, FirstRunWithoutAGoodCopyPublishesNothing) {
  const std::string feeds = FeedsFile();
  Answer a;
  a.status = 500;
  a.body = "oops";
  server_.Set(a);
  std::string err;
  auto r = Cli("--feeds " + feeds, &err);
  EXPECT_EQ(r.exit_code, 3) << r.out << err;
  EXPECT_NE(r.out.find("list phishing: not published"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(repo_ + "/public/v1/lists/phishing/manifest.json"));
}

TEST_F(FeedUpdate, LocalFileFeedAndEmptyFile) {
  const std::string local = dir_ + "/local.txt";
  testing::WriteFileOrDie(local, Domains(1000));
  const std::string feeds = dir_ + "/local.conf";
  testing::WriteFileOrDie(feeds, "[feed local]\npath = " + local + "\nlist = phishing\n");
  FeedUpdateReport r = Update(Options(feeds));
  EXPECT_EQ(PublishedEntries(1), 1000);
  testing::WriteFileOrDie(local, "");
  r = Update(Options(feeds));
  ExpectQuarantinedAndKept(r, "empty download");
  EXPECT_TRUE(r.feeds[0].quarantine_path.empty());  // nothing arrived, nothing kept
}

TEST_F(FeedUpdate, BadInvocationsAreUsageErrors) {
  testing::WriteFileOrDie(dir_ + "/bad.conf", "[feed a]\nurl = https://x.example/\nlsit = phishing\n");
  std::string err;
  auto r = Cli("--feeds " + dir_ + "/bad.conf", &err);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(err.find("line 3: unknown feed key lsit"), std::string::npos) << err;
  r = Cli("--feeds " + FeedsFile() + " --accept nosuchfeed", &err);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(err.find("--accept nosuchfeed: no such feed"), std::string::npos) << err;
  EXPECT_EQ(server_.requests(), 0);  // nothing fetched before the options were checked
}

// The PostgreSQL state: the collapse leaves version 2 with 1,000 entries there too.
TEST_F(FeedUpdate, PostgresStateKeepsTheListOnCollapse) {
  using testing::PgCluster;
  if (!PgCluster::Available()) GTEST_SKIP() << PgCluster::SkipReason();
  std::string error;
  auto cluster = PgCluster::Start("urlguard_feeds", &error);
  ASSERT_NE(cluster, nullptr) << error;
  const std::string feeds = FeedsFile();
  Answer a;
  a.body = Domains(1000);
  server_.Set(a);
  std::string err;
  auto first = Cli("--feeds " + feeds + " --state " + cluster->conninfo(), &err);
  ASSERT_EQ(first.exit_code, 0) << first.out << err;
  EXPECT_EQ(PublishedEntries(1), 1000);
  a.body = Domains(3) + kErrorPage;
  server_.Set(a);
  auto second = Cli("--feeds " + feeds + " --state " + cluster->conninfo(), &err);
  EXPECT_EQ(second.exit_code, 3) << second.out << err;
  EXPECT_EQ(PublishedEntries(2), 1000);
  auto conn = PgConnection::Connect(cluster->conninfo());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto v = (*conn)->Exec("SELECT max(version) FROM list_versions WHERE list = 'phishing'", {});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->int64(0, 0), 2);
}

}  // namespace
}  // namespace urlguard
