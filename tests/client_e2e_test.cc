// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The living client end to end, through the real components: urlguard-publish's Publish() writes a signed
// repository, the reference server (include/urlguard/server.h) serves it on 127.0.0.1, the Syncer (libcurl) installs it
// into a data directory, and Client verdicts come from the mapped lists, the SQLite cache and the verify API.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <chrono>
#include <random>
#include <thread>

#include "core/snapshot.h"
#include "platform/env.h"
#include "publish/publisher.h"
#include "urlguard/server.h"
#include "signing/signer.h"
#include "sync/store.h"
#include "sync/syncer.h"
#include "tests/reference_server_util.h"
#include "tests/test_util.h"
#include "urlguard/client.h"

namespace urlguard {
namespace {

constexpr char kListed[] = "http://login.evil.example/account";
constexpr char kListedUrl[] = "http://secure-bank.example/login.php?session=1";
constexpr char kClean[] = "http://www.wikipedia.org/wiki/Main_Page";

class ClientE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::ScratchDir("client-e2e");
    repo_ = root_ + "/repo";
    data_ = root_ + "/data";
    feed_ = root_ + "/feed.txt";
    key_ = std::make_unique<SigningKey>(std::move(SigningKey::Generate()).value());
    pub_pem_ = key_->PublicPem();
    WriteFeed({});
    ASSERT_TRUE(PublishNow().ok());
    auto server = testing::StartReferenceServer(repo_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    url_ = server_->base_url();
  }

  // The feed: two known entries, `extra` ones, and filler so the list is not trivially small.
  void WriteFeed(const std::vector<std::string>& extra) {
    std::string text = "evil.example\nhttp://secure-bank.example/login.php\n";
    for (int i = 0; i < 300; ++i) text += "filler" + std::to_string(i) + ".bad.example/x\n";
    for (const std::string& e : extra) text += e + "\n";
    testing::WriteFileOrDie(feed_, text);
  }

  Result<PublishReport> PublishNow(bool emergency = false, double fp_rate = 0.3, int64_t expires_in = 86400) {
    PublishOptions o;
    o.repo_dir = repo_;
    o.list = "phishing";
    auto spec = ParseFeedSpec("plain:" + feed_);
    o.inputs = {*spec};
    // A high false-positive rate on purpose: the tests need local hits that verification proves wrong.
    o.fp_rate = fp_rate;
    o.emergency = emergency;
    o.expires_in_seconds = expires_in;
    o.min_wait_seconds = 60;
    return Publish(Env::Default(), *key_, o);
  }

  // The options of a client of this server subscribed to "phishing".
  ClientOptions Options(bool verify = true, std::vector<std::string> allow = {}) const {
    ClientOptions co;
    co.data_dir = data_;
    co.server_url = url_;
    co.public_key_pems = {pub_pem_};
    co.lists = {"phishing"};
    co.verify = verify;
    co.allowlist = std::move(allow);
    co.verify_deadline_ms = 2000;
    return co;
  }

  std::unique_ptr<Client> OpenClient(bool verify = true, std::vector<std::string> allow = {}) {
    auto c = Client::Open(Options(verify, std::move(allow)));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  // A clean URL whose local lookup hits (a filter false positive at the test's fp rate).
  std::string FalsePositive(const Client& c) {
    for (int i = 0; i < 100000; ++i) {
      std::string u = "http://clean" + std::to_string(i) + ".example.org/page";
      if (c.CheckLocal(u).kind == VerdictKind::kHit) return u;
    }
    ADD_FAILURE() << "no false positive found";
    return "";
  }

  std::string root_, repo_, data_, feed_, pub_pem_, url_;
  std::unique_ptr<SigningKey> key_;
  std::unique_ptr<Server> server_;
};

TEST_F(ClientE2E, FreshSyncThenCleanListedAndVerifiedFalsePositive) {
  auto client = OpenClient();
  ASSERT_TRUE(client);
  EXPECT_TRUE(client->Check(kClean).stale);  // nothing installed yet: never a confident safe
  auto reports = client->SyncNow();
  ASSERT_TRUE(reports.ok()) << reports.status().ToString();
  ASSERT_EQ(reports->size(), 1u);
  EXPECT_EQ((*reports)[0].result, SyncResult::kUpdated) << (*reports)[0].error;
  EXPECT_EQ((*reports)[0].to_version, 1u);

  Verdict clean = client->Check(kClean);
  EXPECT_TRUE(clean.kind == VerdictKind::kSafe || clean.kind == VerdictKind::kSafeVerified);
  EXPECT_FALSE(clean.stale);

  Verdict listed = client->Check(kListed);
  EXPECT_EQ(listed.kind, VerdictKind::kMalicious) << listed.error;
  EXPECT_EQ(listed.list, "phishing");
  EXPECT_EQ(listed.threat, "phishing");
  EXPECT_EQ(client->Check(kListedUrl).kind, VerdictKind::kMalicious);

  std::string fp = FalsePositive(*client);
  Verdict v = client->Check(fp);
  EXPECT_EQ(v.kind, VerdictKind::kSafeVerified) << v.error;
  EXPECT_FALSE(v.from_cache);
  Verdict again = client->Check(fp);
  EXPECT_EQ(again.kind, VerdictKind::kSafeVerified);
  EXPECT_TRUE(again.from_cache);  // the negative answer was cached per prefix

  ClientStats st = client->Stats();
  EXPECT_GE(st.verifications, 2u);
  EXPECT_GE(st.cache_hits, 1u);
  auto lists = client->Lists();
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_EQ(lists[0].version, 1u);
  EXPECT_EQ(lists[0].last_sync_result, SyncResult::kOk);
  EXPECT_GT(lists[0].next_sync_unix, 0);
}

// WaitUntilReady (the Go client's WaitUntilReady): a client that only reads waits until the writer of the data
// directory (here SyncNow of another client, as urlguardd in another process would) has installed its list.
TEST_F(ClientE2E, WaitUntilReadyReturnsOnceTheWriterInstalledTheList) {
  auto reader = OpenClient();
  ASSERT_TRUE(reader);
  Status early = reader->WaitUntilReady(0);
  EXPECT_EQ(early.code(), StatusCode::kUnavailable);
  EXPECT_NE(early.message().find("phishing (not_installed)"), std::string::npos) << early.ToString();
  Status waited = Status::Unavailable("not run");
  std::thread waiter([&] { waited = reader->WaitUntilReady(60000); });
  auto writer = OpenClient(/*verify=*/false);
  auto reports = writer ? writer->SyncNow() : Result<std::vector<SyncReport>>(Status::Internal("no writer"));
  waiter.join();
  ASSERT_TRUE(reports.ok()) << reports.status().ToString();
  EXPECT_TRUE(waited.ok()) << waited.ToString();
  EXPECT_FALSE(reader->Check(kClean).stale);
  ASSERT_EQ(reader->Lists().size(), 1u);
  EXPECT_EQ(reader->Lists()[0].version, 1u);
}

TEST_F(ClientE2E, AsyncChecksDeliverVerdictsOnAWorker) {
  auto client = OpenClient();
  ASSERT_TRUE(client->SyncNow().ok());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Verdict> got;
  int accepted = 0;
  for (int i = 0; i < 20; ++i) {
    accepted += client->CheckAsync(i % 2 ? kListed : kClean, [&](Verdict v) {
      std::lock_guard<std::mutex> l(mu);
      got.push_back(std::move(v));
      cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> l(mu);
  ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(30), [&] { return static_cast<int>(got.size()) == accepted; }));
  EXPECT_EQ(accepted, 20);
  int malicious = 0;
  for (const Verdict& v : got) malicious += v.kind == VerdictKind::kMalicious;
  EXPECT_EQ(malicious, 10);
}

TEST_F(ClientE2E, DiffUpdatesSwapInWhileLookupsContinue) {
  auto client = OpenClient(/*verify=*/false);
  ASSERT_TRUE(client->SyncNow().ok());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> wrong{0}, done{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop) {
        if (client->CheckLocal(kListed).kind != VerdictKind::kHit) ++wrong;
        if (client->CheckLocal("not a url at all ::").kind == VerdictKind::kHit) ++wrong;
        ++done;
      }
    });
  }
  for (int v = 2; v <= 6; ++v) {
    WriteFeed({"new" + std::to_string(v) + ".example"});
    ASSERT_TRUE(PublishNow().ok());
    auto r = client->SyncNow();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)[0].result, SyncResult::kUpdated) << (*r)[0].error;
    EXPECT_TRUE((*r)[0].used_diff) << "version " << v;
    EXPECT_EQ(client->CheckLocal("http://new" + std::to_string(v) + ".example/").kind, VerdictKind::kHit);
    if (v > 2) {
      EXPECT_NE(client->CheckLocal("http://new" + std::to_string(v - 1) + ".example/").matches.size(), 5u);
    }
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GT(done.load(), 100u);
  EXPECT_GE(client->Stats().swaps, 5u);
}

TEST_F(ClientE2E, UnreachableVerificationGivesUnverifiedHit) {
  auto client = OpenClient();
  ASSERT_TRUE(client->SyncNow().ok());
  std::string fp = FalsePositive(*client);
  server_->Stop();
  Verdict v = client->Check(fp);
  EXPECT_EQ(v.kind, VerdictKind::kUnverifiedHit);
  EXPECT_FALSE(v.error.empty());
  // Local misses never touch the cache or the network.
  EXPECT_EQ(client->Check("http://" + std::string(40, 'q') + ".example.net/").kind == VerdictKind::kHit, false);
}

// The gap between a publish and a verify server loading it (docs/verify-server.md "The answer's list
// versions"): the client installs version 2 at once, the server still answers from version 1, where the new
// entry is not. That "no match" must not become a (cached) safe_verified.
TEST_F(ClientE2E, AVerifyServerBehindTheClientsVersionIsNotTrusted) {
  // A server that picks up new versions only every hour, on the same port.
  const int port = server_->port();
  auto restart = [&](int hash_refresh_millis) {
    server_->Stop();
    server_.reset();
    ServerOptions so;
    so.repo_dir = repo_;
    so.listen = "127.0.0.1:" + std::to_string(port);
    so.hash_refresh_millis = hash_refresh_millis;
    auto server = Server::Start(so);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  };
  restart(3600 * 1000);
  auto client = OpenClient();
  ASSERT_TRUE(client->SyncNow().ok());
  WriteFeed({"fresh-threat.example"});
  ASSERT_TRUE(PublishNow().ok());
  auto reports = client->SyncNow();
  ASSERT_TRUE(reports.ok()) << reports.status().ToString();
  ASSERT_EQ((*reports)[0].to_version, 2u) << (*reports)[0].error;

  constexpr char kFresh[] = "http://fresh-threat.example/";
  ASSERT_EQ(client->CheckLocal(kFresh).kind, VerdictKind::kHit);
  const std::string fp = FalsePositive(*client);
  for (int round = 0; round < 2; ++round) {  // nothing cached: the second round asks again
    Verdict v = client->Check(kFresh);
    EXPECT_EQ(v.kind, VerdictKind::kUnverifiedHit) << VerdictKindName(v.kind);
    EXPECT_FALSE(v.from_cache);
    EXPECT_NE(v.error.find("from version 1, older than the local version 2"), std::string::npos) << v.error;
    v = client->Check(fp);
    EXPECT_EQ(v.kind, VerdictKind::kUnverifiedHit) << VerdictKindName(v.kind);
    EXPECT_FALSE(v.from_cache);
    // An entry version 1 already had is malicious (the server holds its full hash), never from the cache.
    v = client->Check(kListed);
    EXPECT_EQ(v.kind, VerdictKind::kMalicious) << v.error;
    EXPECT_FALSE(v.from_cache);
  }

  // The server loads version 2 (here: a restart, which loads the newest version before answering).
  restart(1000);
  Verdict v = client->Check(kFresh);
  EXPECT_EQ(v.kind, VerdictKind::kMalicious) << v.error;
  EXPECT_FALSE(v.from_cache);
  EXPECT_EQ(client->Check(kListed).kind, VerdictKind::kMalicious);
  v = client->Check(fp);
  EXPECT_EQ(v.kind, VerdictKind::kSafeVerified) << v.error;
  EXPECT_TRUE(client->Check(fp).from_cache);
}

TEST_F(ClientE2E, EmergencyPolicyTurnsHitsMaliciousWithoutAsking) {
  ASSERT_TRUE(PublishNow(/*emergency=*/true).ok());
  auto client = OpenClient();
  ASSERT_TRUE(client->SyncNow().ok());
  server_->Stop();
  Verdict v = client->Check(kListed);
  EXPECT_EQ(v.kind, VerdictKind::kMalicious);
  EXPECT_TRUE(v.emergency);
}

TEST_F(ClientE2E, ExpiredListIsStaleAndAllowlistOverrides) {
  // 5 s: the publish and the first sync must finish inside it even in sanitizer builds on a busy machine (the
  // manifest's expiry counts from the start of the publish).
  const auto published = std::chrono::steady_clock::now();
  ASSERT_TRUE(PublishNow(false, 0.3, /*expires_in=*/5).ok());
  auto client = OpenClient(true, {"evil.example"});
  auto first = client->SyncNow();
  ASSERT_TRUE(first.ok());
  ASSERT_EQ((*first)[0].result, SyncResult::kUpdated) << (*first)[0].error;
  Verdict allowed = client->Check(kListed);
  EXPECT_EQ(allowed.kind, VerdictKind::kSafe);
  EXPECT_TRUE(allowed.allowlisted);
  std::this_thread::sleep_until(published + std::chrono::milliseconds(6100));
  Verdict v = client->Check(kClean);
  EXPECT_TRUE(v.stale);
  auto lists = client->Lists();
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_TRUE(lists[0].stale);
  // Syncing again changes nothing (the server has nothing newer): the stale state keeps serving, flagged.
  auto r = client->SyncNow();
  ASSERT_TRUE(r.ok());
  EXPECT_NE((*r)[0].result, SyncResult::kUpdated);
  EXPECT_EQ(client->CheckLocal(kListedUrl).kind, VerdictKind::kHit);
  EXPECT_TRUE(client->CheckLocal(kListedUrl).stale);
  // A client that never had the list refuses the expired manifest outright.
  data_ += "-fresh";
  auto fresh = OpenClient(false);
  auto rf = fresh->SyncNow();
  ASSERT_TRUE(rf.ok());
  EXPECT_EQ((*rf)[0].result, SyncResult::kFailed);
  EXPECT_NE((*rf)[0].error.find("expired"), std::string::npos) << (*rf)[0].error;
  EXPECT_TRUE(fresh->Lists().empty() || fresh->Lists()[0].version == 0);
}

// Never a confident "safe" without the lists: a subscribed list that was never installed, or whose file was
// found damaged (dropped by recovery), makes every verdict stale, and Lists() says which and why. A directory
// planted at the installed file's path is removed by the next sync's recovery, which then repairs the list.
TEST_F(ClientE2E, MissingOrDamagedListMakesVerdictsStale) {
  {
    PublishOptions o;
    o.repo_dir = repo_;
    o.list = "malware";
    testing::WriteFileOrDie(root_ + "/malware.txt", "malware-only.example\n");
    o.inputs = {*ParseFeedSpec("plain:" + root_ + "/malware.txt")};
    ASSERT_TRUE(Publish(Env::Default(), *key_, o).ok());
  }
  ClientOptions co = Options(/*verify=*/false);
  {
    auto client = Client::Open(co);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->SyncNow().ok());
    EXPECT_FALSE((*client)->Check(kClean).stale);
  }
  co.lists = {"malware", "phishing"};  // subscribed to malware, which is not installed
  {
    auto client = Client::Open(co);
    ASSERT_TRUE(client.ok());
    EXPECT_TRUE((*client)->Check(kClean).stale);
    auto lists = (*client)->Lists();
    ASSERT_EQ(lists.size(), 2u);
    EXPECT_EQ(lists[0].name, "malware");
    EXPECT_TRUE(lists[0].stale);
    EXPECT_EQ(lists[0].stale_reason, StaleReason::kNotInstalled);
    EXPECT_FALSE(lists[1].stale);
    auto r = (*client)->SyncNow();
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE((*client)->Check(kClean).stale);
  }
  // Damage phishing: a directory where its file was. Recovery (the next writer's open) drops it.
  auto state = ReadStoreState(Env::Default(), data_);
  ASSERT_TRUE(state.ok());
  const std::string file = data_ + "/" + state->FindInstalled("phishing")->file;
  std::filesystem::remove(file);
  std::filesystem::create_directories(file + "/x");
  {
    auto store = Store::Open(Env::Default(), data_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
  }
  {
    ClientOptions offline = co;
    offline.server_url.clear();
    auto client = Client::Open(offline);
    ASSERT_TRUE(client.ok());
    Verdict v = client->get()->Check(kListed);  // phishing's entries are gone: "safe", but not confidently
    EXPECT_TRUE(v.stale);
    auto lists = (*client)->Lists();
    ASSERT_EQ(lists.size(), 2u);
    EXPECT_EQ(lists[1].name, "phishing");
    EXPECT_EQ(lists[1].stale_reason, StaleReason::kDamaged);
  }
  auto client = Client::Open(co);
  ASSERT_TRUE(client.ok());
  auto r = (*client)->SyncNow();  // the repair
  ASSERT_TRUE(r.ok());
  for (const SyncReport& rep : *r) EXPECT_NE(rep.result, SyncResult::kFailed) << rep.list << ": " << rep.error;
  EXPECT_FALSE((*client)->Check(kClean).stale);
  EXPECT_EQ((*client)->CheckLocal(kListed).kind, VerdictKind::kHit);
}

TEST_F(ClientE2E, OnlyOneWriterPerDataDirectory) {
  SyncerOptions so;
  so.data_dir = data_;
  so.server_url = url_;
  so.trusted_keys = {key_->public_key()};
  so.lists = {"phishing"};
  auto first = Syncer::Open(Env::Default(), so);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = Syncer::Open(Env::Default(), so);
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  auto client = OpenClient();
  EXPECT_EQ(client->SyncNow().status().code(), StatusCode::kFailedPrecondition);
}

// Another process keeps looking up, without error, through 1000 consecutive swaps written by this one.
TEST_F(ClientE2E, AnotherProcessLooksUpThrough1000Swaps) {
  auto client = OpenClient(false);
  ASSERT_TRUE(client->SyncNow().ok());
  StoreState state = *ReadStoreState(Env::Default(), data_);
  const InstalledList base = *state.FindInstalled("phishing");
  std::string bytes = testing::ReadFileOrDie(JoinPath(data_, base.file));
  client.reset();

  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  if (child == 0) {
    // The reader: its own Client, following generations in the background.
    ClientOptions co;
    co.data_dir = data_;
    auto c = Client::Open(co);
    if (!c.ok()) _exit(3);
    (void)!write(ready[1], "r", 1);
    uint64_t errors = 0, lookups = 0;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < until) {
      if ((*c)->CheckLocal(kListed).kind != VerdictKind::kHit) ++errors;
      // Follow swaps eagerly, not once a second. A refresh may lose the race against this fast a writer (the old
      // generation then keeps serving, which is the point); a lookup may never fail.
      if (++lookups % 64 == 0) (void)(*c)->Refresh();
      if (access((data_ + "/stop").c_str(), F_OK) == 0) break;
    }
    if (errors != 0) _exit(1);
    if (lookups < 1000) _exit(2);
    if ((*c)->Stats().swaps < 50) _exit(4);
    _exit(0);
  }
  char b;
  ASSERT_EQ(read(ready[0], &b, 1), 1);
  // The writer: 1000 installs of new versions (same content, new version numbers) through the real Store.
  auto store = Store::Open(Env::Default(), data_);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size(), true);
  ASSERT_TRUE(view.ok());
  SnapshotContent content;
  content.list_name = "phishing";
  content.created_unix = base.created_unix;
  for (int k = 0; k < 3; ++k) {
    const LayerView* l = view->layer(static_cast<LayerKind>(k));
    if (l == nullptr) continue;
    LayerContent lc;
    lc.kind = static_cast<LayerKind>(k);
    lc.universe = l->fingerprints.universe();
    l->fingerprints.Decode(&lc.fingerprints);
    lc.entries = lc.fingerprints.size();
    lc.ip_prefixes = l->ip_prefixes;
    content.layers.push_back(std::move(lc));
  }
  for (uint64_t v = base.version + 1; v <= base.version + 1000; ++v) {
    content.version = v;
    std::string next = *BuildSnapshot(content);
    InstalledList meta = base;
    meta.version = v;
    meta.state_sha256 = Sha256(next.data(), next.size() - 32);
    meta.manifest_sha256 = Sha256(std::to_string(v));
    ASSERT_TRUE((*store)->Install(meta, next).ok()) << v;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // let the reader see the last generation
  testing::WriteFileOrDie(data_ + "/stop", "");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "reader: 1 = a lookup error, 2 = too few lookups, 4 = too few swaps";
}

// kill -9 of a syncing process at arbitrary moments: the directory always opens to a complete state, and the
// next sync recovers by itself.
TEST_F(ClientE2E, KillNineDuringSyncLeavesOldOrNewState) {
  std::string key_file = root_ + "/pub.pem";
  testing::WriteFileOrDie(key_file, pub_pem_);
  const std::string sync_cmd = testing::BinPath("urlguard") + " sync --once --data-dir " + data_ + " --server " + url_ +
                               " --public-key " + key_file + " --list phishing";
  std::mt19937 rng(7);
  int killed = 0;
  for (int round = 0; round < 12; ++round) {
    WriteFeed({"round" + std::to_string(round) + ".example"});
    ASSERT_TRUE(PublishNow().ok());
    pid_t child = fork();
    if (child == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + sync_cmd + " > /dev/null 2>&1").c_str(), nullptr);
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 40000));
    if (kill(child, SIGKILL) == 0) ++killed;
    int status;
    waitpid(child, &status, 0);
    // Whatever happened, the directory opens to a complete state (or to none before the first install).
    ClientOptions co;
    co.data_dir = data_;
    co.watch = false;
    auto c = Client::Open(co);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto lists = (*c)->Lists();
    if (!lists.empty() && lists[0].version > 0) {
      EXPECT_EQ((*c)->CheckLocal(kListed).kind, VerdictKind::kHit) << "round " << round;
    }
  }
  EXPECT_GT(killed, 0);
  auto r = testing::RunCommand(sync_cmd);
  EXPECT_EQ(r.exit_code, 0) << r.out;  // recovers and syncs to the newest version
  auto client = OpenClient(false);
  EXPECT_EQ(client->CheckLocal("http://round11.example/").kind, VerdictKind::kHit);
}

}  // namespace
}  // namespace urlguard
