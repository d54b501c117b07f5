// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The publisher fleet on a real PostgreSQL 15 (tests/pg_cluster.h starts a throwaway cluster on 127.0.0.1):
// the schema golden and migrations, ingest -> publish -> a client syncs and trusts the signed result, two
// publishers racing on one list, a publisher killed -9 before and after its commit, a store that is down, and a
// verify server answering from PostgreSQL through a PostgreSQL restart.
// Skipped (with the reason) only when the PostgreSQL server binaries are not installed.
#include <gtest/gtest.h>

#include <httplib.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "format/manifest.h"
#include "format/signature.h"
#include "platform/env.h"
#include "platform/fault_point.h"
#include "publish/pg_publish.h"
#include "pg/pg_state.h"
#include "publish/publisher.h"
#include "server/pg_hash_source.h"
#include "signing/signer.h"
#include "tests/pg_cluster.h"
#include "tests/test_util.h"
#include "urlguard/client.h"
#include "urlguard/publish.h"
#include "urlguard/server.h"

namespace urlguard {
namespace {

using testing::PgCluster;

// One cluster for the whole test binary (initdb costs seconds); each test uses its own database.
PgCluster* Cluster() {
  static std::unique_ptr<PgCluster> cluster = [] {
    std::string error;
    auto c = PgCluster::Start("urlguard", &error);
    if (!c) std::fprintf(stderr, "PgCluster::Start: %s\n", error.c_str());
    return c;
  }();
  return cluster.get();
}

// A fresh database in the shared cluster: its conninfo.
std::string NewDatabase(const std::string& name) {
  auto admin = PgConnection::Connect(Cluster()->conninfo_for("postgres"));
  EXPECT_TRUE(admin.ok()) << admin.status().ToString();
  EXPECT_TRUE((*admin)->Run("DROP DATABASE IF EXISTS \"" + name + "\"").ok());
  Status s = (*admin)->Run("CREATE DATABASE \"" + name + "\"");
  EXPECT_TRUE(s.ok()) << s.ToString();
  return Cluster()->conninfo_for(name);
}


class FleetPg : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PgCluster::Available()) GTEST_SKIP() << PgCluster::SkipReason();
    ASSERT_NE(Cluster(), nullptr) << "PostgreSQL is installed but would not start";
    root_ = testing::ScratchDir("fleet-pg");
    repo_ = root_ + "/repo";
    key_ = std::make_unique<SigningKey>(std::move(SigningKey::Generate()).value());
    key_path_ = root_ + "/key.pem";
    testing::WriteFileOrDie(key_path_, key_->PrivatePem());
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string db;
    for (char c : std::string(info->name())) db.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    conninfo_ = NewDatabase("t_" + db);
  }

  void WriteFeed(const std::string& path, const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    testing::WriteFileOrDie(path, text);
  }

  Result<StateIngestReport> Ingest(const std::string& feed_path, bool replace = true, int64_t now = 1'700'000'000) {
    StateIngestOptions o;
    o.state = conninfo_;
    o.list = "phishing";
    o.inputs = {"plain:" + feed_path};
    o.replace = replace;
    o.now_unix = now;
    return IngestIntoState(o);
  }

  // One publish run through the library, as urlguard-publish does it, with its own connection.
  Result<PublishReport> PublishOnce(int64_t now = 1'700'000'100) {
    PublishOptions po;
    po.repo_dir = repo_;
    po.list = "phishing";
    po.now_unix = now;
    po.fp_rate = 0.01;
    std::unique_ptr<PgState> pg;
    URLGUARD_RETURN_IF_ERROR(AttachPgState(conninfo_, "phishing", false, &pg, &po));
    return Publish(Env::Default(), *key_, po);
  }

  std::string PublicFile(const std::string& name) {
    return JoinPath(PublicListDir(repo_, "phishing"), name);
  }

  std::string root_, repo_, key_path_, conninfo_;
  std::unique_ptr<SigningKey> key_;
};

// The golden file without its '#' header lines (which say where it came from).
std::string ReadGolden(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string out, line;
  while (std::getline(in, line)) {
    if (!line.starts_with("#")) out += line + "\n";
  }
  return out;
}
// One golden file per schema version: fixtures/golden/postgres_schema_v2.txt pins version 2, the current one
// (tests/pg_changes_test.cc checks fixtures/golden/postgres_schema_v1.txt through a migration).
std::string SchemaGoldenPath(int version) {
  return testing::SourcePath("fixtures/golden/postgres_schema_v" + std::to_string(version) + ".txt");
}
const std::string kGoldenHeader =
    "# PgState::DumpSchema() of a database migrated to schema version " + std::to_string(kPgSchemaVersion) +
    " (docs/postgres-schema.md).\n"
    "# Compared by tests/fleet_pg_test.cc; regenerate with URLGUARD_UPDATE_GOLDEN=1 only with a new migration.\n";

TEST_F(FleetPg, SchemaMatchesGoldenAndMigratesFromEmpty) {
  {  // an empty database has no schema
    auto raw = PgConnection::Connect(conninfo_);
    ASSERT_TRUE(raw.ok()) << raw.status().ToString();
    auto r = (*raw)->Exec("SELECT to_regclass('public.entries') IS NULL");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->value(0, 0), "t");
  }
  auto state = PgState::Open(conninfo_);
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto v = (*state)->SchemaVersion();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, kPgSchemaVersion);
  auto dump = (*state)->DumpSchema();
  ASSERT_TRUE(dump.ok()) << dump.status().ToString();
  const std::string golden = SchemaGoldenPath(kPgSchemaVersion);
  if (std::getenv("URLGUARD_UPDATE_GOLDEN") != nullptr) testing::WriteFileOrDie(golden, kGoldenHeader + *dump);
  EXPECT_EQ(*dump, ReadGolden(golden)) << "the PostgreSQL schema changed: add a migration, bump kPgSchemaVersion and "
                                          "regenerate the golden file with URLGUARD_UPDATE_GOLDEN=1";

  // Opening again runs nothing twice.
  auto again = PgState::Open(conninfo_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto dump2 = (*again)->DumpSchema();
  ASSERT_TRUE(dump2.ok());
  EXPECT_EQ(*dump2, *dump);

  // A database from a newer urlguard is refused, not written.
  ASSERT_TRUE((*state)->connection()->Run("INSERT INTO schema_migrations (version, description) VALUES (99, 'future')").ok());
  auto newer = PgState::Open(conninfo_);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kFailedPrecondition) << newer.status().ToString();
}

TEST_F(FleetPg, IngestTracksProvenanceSeenCountsAndRemovals) {
  const std::string a = root_ + "/a.txt", b = root_ + "/b.txt";
  WriteFeed(a, {"evil.example", "http://bank.example/login.php", "203.0.113.0/24", "not a url at all"});
  WriteFeed(b, {"evil.example", "other.example"});
  auto ra = Ingest(a);
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  EXPECT_EQ(ra->entries, 3u);
  EXPECT_EQ(ra->new_entries, 3u);
  EXPECT_EQ(ra->rejected, 1u);  // reported and skipped
  auto rb = Ingest(b);
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  EXPECT_EQ(rb->new_entries, 1u);
  EXPECT_EQ(rb->seen_before, 1u);

  auto state = PgState::Open(conninfo_);
  ASSERT_TRUE(state.ok());
  auto prov = (*state)->connection()->Exec(
      "SELECT array_to_string(feeds, ','), seen_count FROM entries WHERE expression = 'evil.example/'");
  ASSERT_TRUE(prov.ok());
  ASSERT_EQ(prov->rows(), 1);
  EXPECT_EQ(prov->value(0, 0), a + "," + b);
  EXPECT_EQ(prov->int64(0, 1), 2);
  auto seen = (*state)->SeenCounts({Sha256("evil.example/"), Sha256("other.example/"), Sha256("never.example/")});
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(*seen, (std::vector<int64_t>{2, 1, 0}));
  // The same counts through the command line.
  auto cli = testing::RunCommand(testing::BinPath("urlguard-publish") + " seen --state '" + conninfo_ +
                                 "' evil.example never.example");
  EXPECT_EQ(cli.exit_code, 0);
  EXPECT_NE(cli.out.find("evil.example: seen in about 2 runs"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("never.example: never seen"), std::string::npos) << cli.out;

  // Feed a drops evil.example (b still lists it) and the range (nobody does any more).
  WriteFeed(a, {"http://bank.example/login.php"});
  auto ra2 = Ingest(a);
  ASSERT_TRUE(ra2.ok()) << ra2.status().ToString();
  EXPECT_EQ(ra2->removed, 1u);
  auto listed = (*state)->connection()->Exec(
      "SELECT expression, listed, array_to_string(feeds, ',') FROM entries ORDER BY expression");
  ASSERT_TRUE(listed.ok());
  std::map<std::string, std::pair<std::string, std::string>> rows;
  for (int i = 0; i < listed->rows(); ++i) {
    rows[std::string(listed->value(i, 0))] = {std::string(listed->value(i, 1)), std::string(listed->value(i, 2))};
  }
  EXPECT_EQ(rows["evil.example/"], std::make_pair(std::string("t"), b));
  EXPECT_EQ(rows["203.0.113.0/24"], std::make_pair(std::string("f"), std::string()));
  EXPECT_EQ(rows["bank.example/login.php"].first, "t");
}

// The PostgreSQL paths read the Env's clocks (include/urlguard/env.h), not the system's: an ingest without now_unix
// stamps its entries with the Env's wall clock, and a verify server's poll of the store is timed with its monotonic
// clock (urlguard_server_store_latency_seconds).
TEST_F(FleetPg, IngestAndTheVerifyServersPollReadTheEnvClocks) {
  class FixedClockEnv : public EnvWrapper {
   public:
    FixedClockEnv() : EnvWrapper(Env::Default()) {}
    int64_t NowUnixSeconds() override { return 1'234'567'890; }
    uint64_t NowMonotonicNanos() override { return nanos_.fetch_add(250'000'000); }  // 0.25 s per reading

   private:
    std::atomic<uint64_t> nanos_{0};
  } env;
  const std::string feed = root_ + "/feed.txt";
  WriteFeed(feed, {"clock.example"});
  StateIngestOptions o;
  o.state = conninfo_;
  o.list = "phishing";
  o.inputs = {"plain:" + feed};
  o.env = &env;  // and no now_unix
  auto ingested = IngestIntoState(o);
  ASSERT_TRUE(ingested.ok()) << ingested.status().ToString();
  auto state = PgState::Open(conninfo_);
  ASSERT_TRUE(state.ok());
  auto seen = (*state)->connection()->Exec(
      "SELECT extract(epoch FROM first_seen)::bigint, extract(epoch FROM last_seen)::bigint FROM entries");
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(seen->rows(), 1);
  EXPECT_EQ(seen->int64(0, 0), 1'234'567'890);
  EXPECT_EQ(seen->int64(0, 1), 1'234'567'890);

  auto source = PgHashSource::Open(conninfo_, &env);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  PrometheusText metrics;
  (*source)->AppendMetrics(&metrics);
  EXPECT_NE(metrics.text().find("urlguard_server_store_latency_seconds 0.25\n"), std::string::npos)
      << metrics.text();
}

// An ingest that PostgreSQL picks as a deadlock victim (here: another transaction holds the row of the feed's second
// key, the ingest holds its first and waits, then the other asks for the first) runs again instead of failing
// (PgState::IngestFeed, kPgIngestAttempts): "ingest runs failing with no fault injected" in a fleet.
TEST_F(FleetPg, AnIngestChosenAsADeadlockVictimRunsAgain) {
  const std::string feed = root_ + "/feed.txt";
  std::vector<std::string> names = {"first.example/", "second.example/"};
  std::sort(names.begin(), names.end(), [](const std::string& x, const std::string& y) { return Sha256(x) < Sha256(y); });
  WriteFeed(feed, {names[0].substr(0, names[0].size() - 1), names[1].substr(0, names[1].size() - 1)});
  ASSERT_TRUE(Ingest(feed).ok());  // both rows exist

  auto other = PgConnection::Connect(conninfo_);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  PgConnection* o = other->get();
  // This session never runs the deadlock check first: the ingest's does, and aborts the ingest.
  ASSERT_TRUE(o->Run("SET deadlock_timeout = '60s'").ok());
  ASSERT_TRUE(o->Run("BEGIN").ok());
  ASSERT_TRUE(o->Run("UPDATE entries SET threat = threat WHERE expression = $1", {PgParam::Text(names[1])}).ok());
  Result<StateIngestReport> ingested = Status::Internal("not run");
  std::thread ingest([&] { ingested = Ingest(feed, /*replace=*/true, 1'700'000'500); });
  // Wait until the ingest waits for the second key's row (it holds the first one's by then: keys go in sha order).
  auto watcher = PgConnection::Connect(conninfo_);
  ASSERT_TRUE(watcher.ok());
  bool waiting = false;
  for (int i = 0; i < 2000 && !waiting; ++i) {
    auto r = (*watcher)->Exec("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                              " AND query LIKE '%INSERT INTO entries%'");
    waiting = r.ok() && r->int64(0, 0) > 0;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(waiting) << "the ingest never waited for the held row";
  // Now the cycle: PostgreSQL aborts the ingest (its deadlock check runs after 1 s, this session's after 60 s).
  Status mine = o->Run("UPDATE entries SET threat = threat WHERE expression = $1", {PgParam::Text(names[0])});
  (void)o->Run(mine.ok() ? "COMMIT" : "ROLLBACK");
  ingest.join();
  ASSERT_TRUE(ingested.ok()) << ingested.status().ToString();
  EXPECT_EQ(ingested->entries, 2u);
  EXPECT_EQ(ingested->seen_before, 2u);
}

TEST_F(FleetPg, IngestPublishAndAClientTrustsTheSignedResult) {
  const std::string feed = root_ + "/feed.txt";
  std::vector<std::string> lines = {"evil.example", "http://secure-bank.example/login.php", "198.51.100.0/24"};
  for (int i = 0; i < 200; ++i) lines.push_back("filler" + std::to_string(i) + ".bad.example");
  WriteFeed(feed, lines);
  ASSERT_TRUE(Ingest(feed).ok());

  // Through the command line, as an operator runs it.
  const std::string pub = testing::BinPath("urlguard-publish");
  auto cli = testing::RunCommand(pub + " publish --state '" + conninfo_ + "' --repo '" + repo_ + "' --key '" +
                                 key_path_ + "' --list phishing --fp-rate 0.01");
  ASSERT_EQ(cli.exit_code, 0) << cli.out;
  EXPECT_NE(cli.out.find("published phishing version 1"), std::string::npos) << cli.out;

  auto state = PgState::Open(conninfo_);
  ASSERT_TRUE(state.ok());
  auto v1 = (*state)->ReadVersion("phishing", 1);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->manifest, testing::ReadFileOrDie(PublicFile("manifest.json")));
  EXPECT_EQ(v1->signature, testing::ReadFileOrDie(PublicFile("manifest.sig")));
  EXPECT_TRUE(VerifyManifestSignature({key_->public_key()}, v1->manifest, v1->signature).ok());
  // The full hashes of version 1 are its live entries.
  uint64_t live = 0;
  bool saw_evil = false;
  ASSERT_TRUE((*state)->StreamVersion("phishing", 1, [&](const PgLiveEntry& e) {
    ++live;
    saw_evil |= e.key.expression == "evil.example/" && e.sha256 == Sha256("evil.example/");
  }).ok());
  EXPECT_EQ(live, lines.size());
  EXPECT_TRUE(saw_evil);

  // Remove one entry, add one; version 2 is a diff away.
  lines.erase(lines.begin());
  lines.push_back("fresh.example");
  WriteFeed(feed, lines);
  ASSERT_TRUE(Ingest(feed, true, 1'700'000'200).ok());
  auto r2 = PublishOnce(/*now=*/0);  // the real clock: the client below refuses an expired manifest
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->version, 2u);
  EXPECT_EQ(r2->added[static_cast<int>(LayerKind::kDomain)], 1u);
  EXPECT_EQ(r2->removed[static_cast<int>(LayerKind::kDomain)], 1u);
  ASSERT_EQ(r2->diffs.size(), 1u);
  auto latest = (*state)->LatestVersions();
  ASSERT_TRUE(latest.ok());
  ASSERT_EQ(latest->size(), 1u);
  EXPECT_EQ((*latest)[0].version, 2u);
  EXPECT_EQ((*latest)[0].entries, lines.size());
  EXPECT_EQ((*latest)[0].oldest_first_seen_unix, 1'700'000'200);  // fresh.example: the publish lag's start

  // A client syncs the files (served by the reference server) and trusts the signed version 2.
  ServerOptions so;
  so.repo_dir = repo_;
  auto server = Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  ClientOptions co;
  co.data_dir = root_ + "/client";
  co.server_url = (*server)->base_url();
  co.public_key_pems = {key_->PublicPem()};
  co.lists = {"phishing"};
  co.verify = false;
  auto client = Client::Open(co);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto sync = (*client)->SyncNow();
  ASSERT_TRUE(sync.ok()) << sync.status().ToString();
  ASSERT_EQ(sync->size(), 1u);
  EXPECT_EQ((*sync)[0].result, SyncResult::kUpdated) << (*sync)[0].error;
  EXPECT_EQ((*sync)[0].to_version, 2u);
  EXPECT_EQ((*client)->CheckLocal("http://fresh.example/x").kind, VerdictKind::kHit);
  EXPECT_EQ((*client)->CheckLocal("http://secure-bank.example/login.php").kind, VerdictKind::kHit);
  EXPECT_EQ((*client)->CheckLocal("http://198.51.100.7/").kind, VerdictKind::kHit);
}

TEST_F(FleetPg, TwoPublishersRacingNeverEquivocateOrGoBack) {
  const std::string feed = root_ + "/feed.txt";
  std::vector<std::string> lines;
  for (int i = 0; i < 100; ++i) lines.push_back("race" + std::to_string(i) + ".example");
  WriteFeed(feed, lines);
  ASSERT_TRUE(Ingest(feed).ok());

  constexpr int kRuns = 100;  // in all, over both publishers
  std::atomic<int> next{0};
  std::atomic<bool> done{false};
  std::mutex mu;
  std::map<uint64_t, std::string> published;  // version -> the manifest a publisher committed
  std::vector<std::string> failures;
  auto publisher = [&](int id) {
    uint64_t last = 0;
    while (next.fetch_add(1) < kRuns) {
      auto r = PublishOnce(1'700'000'100 + id);
      std::lock_guard<std::mutex> l(mu);
      if (!r.ok()) {
        failures.push_back(r.status().ToString());
        continue;
      }
      if (r->version <= last) failures.push_back("publisher " + std::to_string(id) + " went back");
      last = r->version;
      if (!published.emplace(r->version, testing::ReadFileOrDie(PublicFile("manifest.json"))).second) {
        failures.push_back("version " + std::to_string(r->version) + " published twice");
      }
    }
  };
  // A client watching the public manifest: the version never goes down, and each version's bytes never change.
  std::map<uint64_t, std::string> seen_by_client;
  std::string client_failure;
  std::thread watcher([&] {
    uint64_t high = 0;
    while (!done.load()) {
      std::string bytes;
      {
        std::ifstream in(PublicFile("manifest.json"), std::ios::binary);
        if (!in) continue;
        std::stringstream ss;
        ss << in.rdbuf();
        bytes = ss.str();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      auto m = ParseManifest(bytes);
      if (!m.ok()) {
        client_failure = "unparsable manifest: " + m.status().ToString();
        return;
      }
      if (m->version < high) client_failure = "the client saw version " + std::to_string(m->version) + " after " + std::to_string(high);
      high = std::max(high, m->version);
      auto [it, fresh] = seen_by_client.emplace(m->version, bytes);
      if (!fresh && it->second != bytes) client_failure = "two manifests for version " + std::to_string(m->version);
    }
  });
  std::thread p1(publisher, 1), p2(publisher, 2);
  p1.join();
  p2.join();
  done = true;
  watcher.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(client_failure, "");
  ASSERT_EQ(published.size(), static_cast<size_t>(kRuns));
  EXPECT_EQ(published.begin()->first, 1u);
  EXPECT_EQ(published.rbegin()->first, static_cast<uint64_t>(kRuns));  // consecutive: 1..100
  auto state = PgState::Open(conninfo_);
  ASSERT_TRUE(state.ok());
  for (const auto& [version, bytes] : seen_by_client) {
    auto committed = (*state)->ReadVersion("phishing", version);
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
    EXPECT_EQ(committed->manifest, bytes) << "version " << version;
  }
  EXPECT_GT(seen_by_client.size(), 1u);
}

#if defined(URLGUARD_FAULT_POINTS)
// The publisher is killed -9 at PgState::CommitVersion's fault points (platform/fault_point.h), armed through the
// environment of the urlguard-publish it runs.
TEST_F(FleetPg, PublisherKilledBeforeOrAfterCommitLeavesNoPartialVersion) {
  const std::string before_commit = std::string(kFaultKillEnvVar) + "=pg.publish.before-commit";
  const std::string after_commit = std::string(kFaultKillEnvVar) + "=pg.publish.after-commit";
  const std::string feed = root_ + "/feed.txt";
  WriteFeed(feed, {"one.example", "two.example", "http://three.example/x"});
  ASSERT_TRUE(Ingest(feed).ok());
  ASSERT_TRUE(PublishOnce().ok());
  const std::string manifest_v1 = testing::ReadFileOrDie(PublicFile("manifest.json"));
  const std::string pub = testing::BinPath("urlguard-publish");
  const std::string publish = " " + pub + " publish --state '" + conninfo_ + "' --repo '" + repo_ + "' --key '" +
                              key_path_ + "' --list phishing";
  auto state = PgState::Open(conninfo_);
  ASSERT_TRUE(state.ok());
  auto last_version = [&]() -> uint64_t {
    auto v = (*state)->LatestVersions();
    return v.ok() && !v->empty() ? (*v)[0].version : 0;
  };

  // Killed before its commit: nobody sees version 2, not PostgreSQL, not the public files.
  WriteFeed(feed, {"one.example", "two.example", "http://three.example/x", "four.example"});
  ASSERT_TRUE(Ingest(feed).ok());
  auto killed = testing::RunCommand(before_commit + publish);
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_EQ(last_version(), 1u);
  EXPECT_EQ(testing::ReadFileOrDie(PublicFile("manifest.json")), manifest_v1);
  auto pending = (*state)->connection()->Exec("SELECT count(*) FROM entries WHERE added_version IS NULL");
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->int64(0, 0), 1);  // four.example still waits for a version

  // The other publisher continues with version 2 (the killed one's session lock died with it).
  auto ok = testing::RunCommand(publish);
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(last_version(), 2u);
  auto v2 = (*state)->ReadVersion("phishing", 2);
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(testing::ReadFileOrDie(PublicFile("manifest.json")), v2->manifest);

  // Killed after its commit, before the manifest files: version 3 exists in PostgreSQL only...
  WriteFeed(feed, {"one.example", "two.example"});
  ASSERT_TRUE(Ingest(feed).ok());
  killed = testing::RunCommand(after_commit + publish);
  EXPECT_NE(killed.exit_code, 0);
  EXPECT_EQ(last_version(), 3u);
  EXPECT_EQ(testing::ReadFileOrDie(PublicFile("manifest.json")), v2->manifest);
  // ...and the next run first repairs the public manifest from PostgreSQL, byte for byte (this run is itself
  // killed before its commit, so what it leaves is the repair alone).
  killed = testing::RunCommand(before_commit + publish);
  EXPECT_NE(killed.exit_code, 0);
  auto v3 = (*state)->ReadVersion("phishing", 3);
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(testing::ReadFileOrDie(PublicFile("manifest.json")), v3->manifest);
  EXPECT_EQ(testing::ReadFileOrDie(PublicFile("manifest.sig")), v3->signature);
  auto m3 = ParseManifest(v3->manifest);
  ASSERT_TRUE(m3.ok());
  for (const ManifestDiff& d : m3->diffs) EXPECT_TRUE(std::filesystem::exists(PublicFile(d.file.path))) << d.file.path;
  EXPECT_TRUE(std::filesystem::exists(PublicFile(m3->snapshot.path)));
  ok = testing::RunCommand(publish);
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(last_version(), 4u);
}
#else
TEST_F(FleetPg, PublisherKilledBeforeOrAfterCommitLeavesNoPartialVersion) {
  GTEST_SKIP() << "built with -DURLGUARD_FAULT_POINTS=OFF: the publisher has no fault point to die at";
}
#endif  // URLGUARD_FAULT_POINTS

TEST_F(FleetPg, AStoreThatIsDownIsAnErrorTheCliReports) {
  // A port nothing listens on (the cluster's port + 1 is not PostgreSQL's).
  const std::string down = "postgresql://postgres@127.0.0.1:" + std::to_string(Cluster()->port() == 65535 ? 1 : Cluster()->port() + 1) + "/x";
  const std::string feed = root_ + "/feed.txt";
  WriteFeed(feed, {"evil.example"});
  const std::string pub = testing::BinPath("urlguard-publish");
  const std::string err = root_ + "/err.txt";
  auto r = testing::RunCommand(pub + " ingest --state '" + down + "' --list phishing --input " + feed, "", err);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(testing::ReadFileOrDie(err).find("PostgreSQL store is down"), std::string::npos) << testing::ReadFileOrDie(err);
  r = testing::RunCommand(pub + " publish --state '" + down + "' --repo '" + repo_ + "' --key '" + key_path_ +
                          "' --list phishing", "", err);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(testing::ReadFileOrDie(err).find("PostgreSQL store is down"), std::string::npos) << testing::ReadFileOrDie(err);
  // --input with --state is a usage error, not silently ignored.
  r = testing::RunCommand(pub + " publish --state '" + conninfo_ + "' --repo '" + repo_ + "' --key '" + key_path_ +
                          "' --list phishing --input " + feed, "", err);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(testing::ReadFileOrDie(err).find("ingest"), std::string::npos);
}

// Fetches GET `path` from the server (plain HTTP on loopback).
std::string HttpGet(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  auto r = c.Get(path);
  return r ? r->body : std::string();
}

TEST_F(FleetPg, VerifyServerAnswersFromPostgresAndKeepsAnsweringThroughARestart) {
  const std::string feed = root_ + "/feed.txt";
  std::vector<std::string> lines = {"evil.example", "http://secure-bank.example/login.php"};
  for (int i = 0; i < 200; ++i) lines.push_back("filler" + std::to_string(i) + ".bad.example");
  WriteFeed(feed, lines);
  ASSERT_TRUE(Ingest(feed).ok());
  ASSERT_TRUE(PublishOnce(/*now=*/0).ok());

  ServerOptions so;
  so.repo_dir = repo_;
  so.state = conninfo_;
  so.hash_refresh_millis = 200;
  auto server = Server::Start(so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  std::string metrics = HttpGet(port, "/metrics");
  EXPECT_NE(metrics.find("urlguard_server_loaded_version{list=\"phishing\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("urlguard_server_store_up 1"), std::string::npos) << metrics;

  // A client with verification on: a listed URL is confirmed by the server's full hashes (from PostgreSQL).
  auto verified = [&](const std::string& dir, const std::string& url) {
    ClientOptions co;
    co.data_dir = root_ + "/" + dir;
    co.server_url = (*server)->base_url();
    co.public_key_pems = {key_->PublicPem()};
    co.lists = {"phishing"};
    co.verify = true;
    co.verify_deadline_ms = 3000;
    auto client = Client::Open(co);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    if (!client.ok()) return VerdictKind::kSafe;
    auto sync = (*client)->SyncNow();
    EXPECT_TRUE(sync.ok());
    Verdict v = (*client)->Check(url);
    EXPECT_EQ(v.error, "");
    return v.kind;
  };
  EXPECT_EQ(verified("c1", "http://evil.example/"), VerdictKind::kMalicious);

  // PostgreSQL goes down: the server says so, and keeps answering from the version it holds.
  ASSERT_TRUE(Cluster()->Stop());
  for (int i = 0; i < 50 && HttpGet(port, "/metrics").find("urlguard_server_store_up 0") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  metrics = HttpGet(port, "/metrics");
  EXPECT_NE(metrics.find("urlguard_server_store_up 0"), std::string::npos) << metrics;
  EXPECT_EQ(verified("c2", "http://secure-bank.example/login.php"), VerdictKind::kMalicious);

  // Back: the next version is loaded (completely, then swapped in) and answered for.
  ASSERT_TRUE(Cluster()->StartAgain()) << Cluster()->LogTail();
  lines.push_back("fresh.example");
  WriteFeed(feed, lines);
  ASSERT_TRUE(Ingest(feed).ok());
  ASSERT_TRUE(PublishOnce(/*now=*/0).ok());
  for (int i = 0; i < 100 && HttpGet(port, "/metrics").find("urlguard_server_loaded_version{list=\"phishing\"} 2") ==
                                 std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  metrics = HttpGet(port, "/metrics");
  EXPECT_NE(metrics.find("urlguard_server_loaded_version{list=\"phishing\"} 2"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("urlguard_server_store_up 1"), std::string::npos) << metrics;
  EXPECT_EQ(verified("c3", "http://fresh.example/"), VerdictKind::kMalicious);
  (*server)->Stop();
}

TEST_F(FleetPg, VerifyServerDoesNotStartWithoutItsStore) {
  ServerOptions so;
  std::filesystem::create_directories(repo_ + "/public");
  so.repo_dir = repo_;
  so.state = "postgresql://postgres@127.0.0.1:" + std::to_string(Cluster()->port() + 1) + "/x";
  auto server = Server::Start(so);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kUnavailable) << server.status().ToString();
}

}  // namespace
}  // namespace urlguard
