// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The PostgreSQL change log (PgState::StreamChanges, schema migration 2) and the verify server's table that
// follows it (server/pg_hash_source.h), on a real PostgreSQL 15 (tests/pg_cluster.h):
//   - the change log against a brute-force model over random versions (adds, removes, re-adds, an entry added
//     and removed inside one range), for every (from, newest) pair;
//   - its plan uses the migration-2 indexes, not a scan of the list;
//   - a v1 database (as an older urlguard left it) migrates to v2 with its data and versions intact;
//   - a source that follows several versions by change log answers every prefix exactly like a fresh full load,
//     also across overlay folds;
//   - PostgreSQL going down in the middle of a change-log load: the old version keeps answering, the new one is
//     answered only once completely loaded.
// Skipped (with the reason) only when the PostgreSQL server binaries are not installed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "pg/pg_state.h"
#include "server/pg_hash_source.h"
#include "tests/pg_cluster.h"
#include "tests/test_util.h"
#include "url/entry.h"

namespace urlguard {
namespace {

using testing::PgCluster;

PgCluster* Cluster() {
  static std::unique_ptr<PgCluster> cluster = [] {
    std::string error;
    auto c = PgCluster::Start("urlguard", &error);
    if (!c) std::fprintf(stderr, "PgCluster::Start: %s\n", error.c_str());
    return c;
  }();
  return cluster.get();
}

std::string NewDatabase(const std::string& name) {
  auto admin = PgConnection::Connect(Cluster()->conninfo_for("postgres"));
  EXPECT_TRUE(admin.ok()) << admin.status().ToString();
  EXPECT_TRUE((*admin)->Run("DROP DATABASE IF EXISTS \"" + name + "\"").ok());
  Status s = (*admin)->Run("CREATE DATABASE \"" + name + "\"");
  EXPECT_TRUE(s.ok()) << s.ToString();
  return Cluster()->conninfo_for(name);
}

std::string ReadGolden(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string out, line;
  while (std::getline(in, line)) {
    if (!line.starts_with("#")) out += line + "\n";
  }
  return out;
}

uint32_t Prefix32(const Sha256Digest& d) {
  return (uint32_t{d[0]} << 24) | (uint32_t{d[1]} << 16) | (uint32_t{d[2]} << 8) | uint32_t{d[3]};
}

// A key of the pool: its ingest form and what a version holds for it.
struct PoolKey {
  PgIngestEntry entry;
  Sha256Digest sha256{};
};

// The pool: domains, URLs and IP ranges (three layers), threats fixed per key.
std::vector<PoolKey> Pool(size_t n, const std::string& tag) {
  std::vector<PoolKey> out;
  for (size_t i = 0; i < n; ++i) {
    std::string text;
    switch (i % 3) {
      case 0: text = "k" + std::to_string(i) + "." + tag + ".example"; break;
      case 1: text = "http://k" + std::to_string(i) + "." + tag + ".example/login.php?id=" + std::to_string(i); break;
      default: text = "10." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256) + ".0/24"; break;
    }
    auto k = EntryKeyFor(text);
    EXPECT_TRUE(k.ok()) << text;
    PoolKey p;
    p.entry = {std::move(k).value(), i % 4 == 0 ? "malware" : "phishing"};
    p.sha256 = Sha256(p.entry.key.expression);
    out.push_back(std::move(p));
  }
  return out;
}

// What a version holds: sha256 -> (layer, threat).
using Model = std::map<Sha256Digest, std::pair<LayerKind, std::string>>;

class PgChanges : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PgCluster::Available()) GTEST_SKIP() << PgCluster::SkipReason();
    ASSERT_NE(Cluster(), nullptr) << "PostgreSQL is installed but would not start";
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string db;
    for (char c : std::string(info->name())) db.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    conninfo_ = NewDatabase("c_" + db);
    auto st = PgState::Open(conninfo_);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    state_ = std::move(st).value();
  }

  // Lists `keys` in `list` (feed "f", add-only) and updates the model of what is listed.
  void Add(const std::string& list, const std::vector<const PoolKey*>& keys) {
    std::vector<PgIngestEntry> entries;
    for (const PoolKey* k : keys) {
      entries.push_back(k->entry);
      listed_[list][k->sha256] = {k->entry.key.layer, k->entry.threat};
    }
    auto r = state_->IngestFeed(list, "f", entries, 1'700'000'000, /*replace_feed=*/false);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  void Remove(const std::string& list, const std::vector<const PoolKey*>& keys) {
    std::vector<Sha256Digest> shas;
    for (const PoolKey* k : keys) {
      shas.push_back(k->sha256);
      listed_[list].erase(k->sha256);
    }
    auto r = state_->RemoveEntries(list, "f", shas);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  // One publish run as the publisher does it (without files): the next version of `list`, committed.
  uint64_t Publish(const std::string& list, PgState* state = nullptr) {
    if (state == nullptr) state = state_.get();
    auto begun = state->BeginPublish(list);
    EXPECT_TRUE(begun.ok()) << begun.status().ToString();
    const uint64_t v = begun->version + 1;
    uint64_t live = 0;
    Status s = state->StreamNextVersion(list, v, [&](const PgLiveEntry&) { ++live; });
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(live, listed_[list].size());
    VersionCommit c;
    c.list = list;
    c.version = v;
    c.manifest = "manifest " + std::to_string(v);
    c.signature = "signature";
    s = state->CommitVersion(c);
    EXPECT_TRUE(s.ok()) << s.ToString();
    state->EndPublish(list);
    versions_[list][v] = listed_[list];
    return v;
  }

  // The change log (from, to] applied with set semantics to the model of `from`; also returns the rows read.
  Model Apply(const std::string& list, uint64_t from, uint64_t to, std::vector<PgChangedEntry>* rows) {
    Model m = from == 0 ? Model{} : versions_[list][from];
    Status s = state_->StreamChanges(list, from, to, [&](const PgChangedEntry& e) {
      rows->push_back(e);
      if (e.live) {
        m[e.sha256] = {e.layer, e.threat};
      } else {
        m.erase(e.sha256);
      }
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return m;
  }

  std::string conninfo_;
  std::unique_ptr<PgState> state_;
  std::map<std::string, Model> listed_;                           // list -> listed now
  std::map<std::string, std::map<uint64_t, Model>> versions_;     // list -> version -> content
};

TEST_F(PgChanges, ChangeLogMatchesABruteForceModelForEveryRange) {
  const std::vector<PoolKey> pool = Pool(300, "model");
  std::mt19937_64 rng(17);
  auto pick = [&](size_t n) {
    std::vector<const PoolKey*> out;
    for (size_t i = 0; i < n; ++i) out.push_back(&pool[rng() % pool.size()]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  constexpr int kVersions = 12;
  for (int step = 1; step <= kVersions; ++step) {
    Add("phishing", pick(rng() % 60));
    std::vector<const PoolKey*> remove;
    for (const PoolKey* k : pick(120)) {
      if (listed_["phishing"].count(k->sha256) != 0 && rng() % 2 == 0) remove.push_back(k);
    }
    Remove("phishing", remove);
    if (step % 3 == 0) {  // listed and unlisted again before the publish: not a change of this version
      auto flicker = pick(10);
      std::vector<const PoolKey*> fresh;
      for (const PoolKey* k : flicker) {
        if (listed_["phishing"].count(k->sha256) == 0) fresh.push_back(k);
      }
      Add("phishing", fresh);
      Remove("phishing", fresh);
    }
    if (step % 4 == 2) {  // some listed entries change threat: a change of this version, presence unchanged
      std::vector<PgIngestEntry> retyped;
      for (const PoolKey* k : pick(30)) {
        auto it = listed_["phishing"].find(k->sha256);
        if (it == listed_["phishing"].end()) continue;
        PgIngestEntry e = k->entry;
        e.threat = it->second.second == "phishing" ? "malware" : "phishing";
        it->second.second = e.threat;
        retyped.push_back(e);
      }
      ASSERT_FALSE(retyped.empty());
      auto r = state_->IngestFeed("phishing", "f", retyped, 1'700'000'000, /*replace_feed=*/false);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
    // Another list changes too: its rows must never appear in this list's log.
    Add("other", pick(5));
    Publish("other");
    const uint64_t to = Publish("phishing");
    ASSERT_EQ(to, static_cast<uint64_t>(step));

    for (uint64_t from = 0; from <= to; ++from) {
      SCOPED_TRACE("(" + std::to_string(from) + ", " + std::to_string(to) + "]");
      std::vector<PgChangedEntry> rows;
      EXPECT_EQ(Apply("phishing", from, to, &rows), versions_["phishing"][to]);
      // Strict sha256 order, and only keys touched in the range (a version in (from, to] changed their presence):
      // the log costs what changed.
      std::set<Sha256Digest> touched;
      for (uint64_t v = from + 1; v <= to; ++v) {
        const Model empty;
        const Model& before = v == 1 ? empty : versions_["phishing"][v - 1];
        const Model& after = versions_["phishing"][v];
        for (const auto& [sha, value] : before) {
          auto it = after.find(sha);
          if (it == after.end() || it->second != value) touched.insert(sha);
        }
        for (const auto& [sha, _] : after) {
          if (before.count(sha) == 0) touched.insert(sha);
        }
      }
      for (size_t i = 0; i < rows.size(); ++i) {
        if (i > 0) {
          EXPECT_LT(rows[i - 1].sha256, rows[i].sha256);
        }
        EXPECT_EQ(touched.count(rows[i].sha256), 1u) << ToHex(rows[i].sha256);
      }
      if (from == to) {
        EXPECT_TRUE(rows.empty());
      }
    }
  }
  // Re-adds happened (the pool is small): some key left a version and came back in a later one.
  int readded = 0;
  for (const PoolKey& k : pool) {
    bool was = false, left = false;
    for (uint64_t v = 1; v <= kVersions; ++v) {
      const bool in = versions_["phishing"][v].count(k.sha256) != 0;
      if (was && !in) left = true;
      if (left && in) {
        ++readded;
        break;
      }
      was = was || in;
    }
  }
  EXPECT_GT(readded, 0);

  // Failure paths.
  auto fail = [&](uint64_t from, uint64_t to) {
    return state_->StreamChanges("phishing", from, to, [](const PgChangedEntry&) {}).code();
  };
  EXPECT_EQ(fail(3, 2), StatusCode::kInvalidArgument);
  EXPECT_EQ(fail(1, kVersions + 1), StatusCode::kNotFound);
  EXPECT_EQ(fail(0, 0), StatusCode::kNotFound);
  EXPECT_EQ(fail(1, kVersions - 1), StatusCode::kFailedPrecondition);  // not the newest
  EXPECT_EQ(state_->StreamChanges("nosuchlist", 0, 1, [](const PgChangedEntry&) {}).code(), StatusCode::kNotFound);
  EXPECT_EQ(state_->StreamChanges("Bad List", 0, 1, [](const PgChangedEntry&) {}).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(PgChanges, ChangeLogPlanUsesTheMigrationIndexes) {
  // 20 000 entries in version 1, 100 changes in version 2: with statistics, PostgreSQL must read the changes
  // through entries_added_version / entries_removed_version, not scan the list.
  const std::vector<PoolKey> pool = Pool(20'100, "plan");
  std::vector<const PoolKey*> first, second, gone;
  for (size_t i = 0; i < 20'000; ++i) first.push_back(&pool[i]);
  for (size_t i = 20'000; i < pool.size(); ++i) second.push_back(&pool[i]);
  for (size_t i = 0; i < 50; ++i) gone.push_back(&pool[i * 7]);
  Add("phishing", first);
  Publish("phishing");
  Add("phishing", second);
  Remove("phishing", gone);
  Publish("phishing");
  ASSERT_TRUE(state_->connection()->Run("ANALYZE entries").ok());
  auto plan = state_->ExplainChanges("phishing", 1, 2);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_NE(plan->find("entries_added_version"), std::string::npos) << *plan;
  EXPECT_NE(plan->find("entries_removed_version"), std::string::npos) << *plan;
  EXPECT_NE(plan->find("entries_threat_version"), std::string::npos) << *plan;
  EXPECT_EQ(plan->find("Seq Scan"), std::string::npos) << *plan;
  EXPECT_EQ(plan->find("entries_pkey"), std::string::npos) << *plan;
  std::printf("change-log plan, 20 000 entries, 150 changes:\n%s", plan->c_str());
  std::vector<PgChangedEntry> rows;
  EXPECT_EQ(Apply("phishing", 1, 2, &rows), versions_["phishing"][2]);
  EXPECT_EQ(rows.size(), 150u);
}

TEST_F(PgChanges, AVersion1DatabaseMigratesToVersion2WithItsData) {
  const std::string conninfo = NewDatabase("c_migrate_v1_data");
  auto v1 = PgState::OpenAtSchemaVersionForTesting(conninfo, 1);
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  auto version = (*v1)->SchemaVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, 1);
  auto dump1 = (*v1)->DumpSchema();
  ASSERT_TRUE(dump1.ok());
  EXPECT_EQ(*dump1, ReadGolden(testing::SourcePath("fixtures/golden/postgres_schema_v1.txt")));
  EXPECT_EQ(PgState::OpenAtSchemaVersionForTesting(conninfo, kPgSchemaVersion + 1).status().code(),
            StatusCode::kInvalidArgument);

  // Two versions as the v1 code left them (its rows, written by SQL: today's ingest and publish write v2
  // columns): keys 0..29 added at 1, 30..39 added at 2, 0..4 removed at 2.
  const std::vector<PoolKey> pool = Pool(40, "migrate");
  PgConnection* c = (*v1)->connection();
  for (size_t i = 0; i < pool.size(); ++i) {
    const PoolKey& k = pool[i];
    Status s = c->Run(
        "INSERT INTO entries (list, sha256, expression, layer, threat, feeds, first_seen, last_seen, listed,"
        " added_version, removed_version) VALUES ('phishing', $1, $2, $3, $4, ARRAY['f'], now(), now(), $5, $6, $7)",
        {PgParam::Bytes(std::string_view(reinterpret_cast<const char*>(k.sha256.data()), 32)),
         PgParam::Text(k.entry.key.expression), PgParam::Int(static_cast<int>(k.entry.key.layer)),
         PgParam::Text(k.entry.threat), PgParam::Text(i < 5 ? "false" : "true"), PgParam::Int(i < 30 ? 1 : 2),
         i < 5 ? PgParam::Int(2) : PgParam::Null()});
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (i < 30) versions_["phishing"][1][k.sha256] = {k.entry.key.layer, k.entry.threat};
    if (i >= 5) versions_["phishing"][2][k.sha256] = {k.entry.key.layer, k.entry.threat};
  }
  for (int v = 1; v <= 2; ++v) {
    Status s = c->Run(
        "INSERT INTO list_versions (list, version, manifest, signature, state_sha256, entries)"
        " VALUES ('phishing', $1, 'm', 's', $2, $3)",
        {PgParam::Int(v), PgParam::Bytes(std::string(32, '\0')), PgParam::Int(v == 1 ? 30 : 35)});
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // Opened by this code: migrated to v2, the same data, the change log works on the old rows, and the next
  // version is published with v2's columns.
  auto v2 = PgState::Open(conninfo);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  version = (*v2)->SchemaVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, kPgSchemaVersion);
  auto dump2 = (*v2)->DumpSchema();
  ASSERT_TRUE(dump2.ok());
  EXPECT_EQ(*dump2, ReadGolden(testing::SourcePath("fixtures/golden/postgres_schema_v" +
                                                   std::to_string(kPgSchemaVersion) + ".txt")));
  state_ = std::move(v2).value();
  for (uint64_t from = 0; from <= 2; ++from) {
    std::vector<PgChangedEntry> rows;
    EXPECT_EQ(Apply("phishing", from, 2, &rows), versions_["phishing"][2]) << from;
  }
  auto latest = state_->LatestVersions();
  ASSERT_TRUE(latest.ok());
  ASSERT_EQ(latest->size(), 1u);
  EXPECT_EQ((*latest)[0].version, 2u);
  EXPECT_EQ((*latest)[0].entries, 35u);
  listed_["phishing"] = versions_["phishing"][2];
  Add("phishing", {&pool[0]});
  Remove("phishing", {&pool[39]});
  EXPECT_EQ(Publish("phishing"), 3u);
  for (uint64_t from = 0; from <= 3; ++from) {
    std::vector<PgChangedEntry> rows;
    EXPECT_EQ(Apply("phishing", from, 3, &rows), versions_["phishing"][3]) << from;
  }
}

// Every record a source returns for `prefixes`, as comparable values, and the versions it answered for.
using Answer = std::pair<std::vector<std::tuple<Sha256Digest, std::string, LayerKind, std::string>>,
                         std::vector<std::pair<std::string, uint64_t>>>;
Answer LookupAll(const VerifyHashSource& source, const std::vector<uint32_t>& prefixes) {
  Answer a;
  for (size_t start = 0; start < prefixes.size(); start += kMaxLookupPrefixes) {
    const size_t n = std::min(kMaxLookupPrefixes, prefixes.size() - start);
    VerifyLookup out;
    Status s = source.Lookup(std::span<const uint32_t>(prefixes.data() + start, n), &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    for (const VerifyRecord& r : out.records) {
      a.first.emplace_back(r.sha256, std::string(r.list), r.layer, std::string(r.threat));
    }
    a.second.clear();
    for (const VerifyListVersion& v : out.versions) a.second.emplace_back(std::string(v.list), v.version);
  }
  std::sort(a.first.begin(), a.first.end());
  return a;
}

// What the model says `prefixes` must find.
std::vector<std::tuple<Sha256Digest, std::string, LayerKind, std::string>> Expected(
    const std::map<std::string, Model>& lists, const std::vector<uint32_t>& prefixes) {
  std::set<uint32_t> wanted(prefixes.begin(), prefixes.end());
  std::vector<std::tuple<Sha256Digest, std::string, LayerKind, std::string>> out;
  for (const auto& [name, model] : lists) {
    for (const auto& [sha, v] : model) {
      if (wanted.count(Prefix32(sha)) != 0) out.emplace_back(sha, name, v.first, v.second);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

class PgChangesServer : public PgChanges {
 protected:
  // Random changes to "phishing" and, every other version, to "malware": returns nothing, updates the models.
  void RandomVersion(std::mt19937_64* rng, const std::vector<PoolKey>& pool) {
    std::vector<const PoolKey*> add, remove;
    for (size_t i = 0; i < 40; ++i) add.push_back(&pool[(*rng)() % pool.size()]);
    std::sort(add.begin(), add.end());
    add.erase(std::unique(add.begin(), add.end()), add.end());
    Add("phishing", add);
    for (const PoolKey& k : pool) {
      if (listed_["phishing"].count(k.sha256) != 0 && (*rng)() % 6 == 0) remove.push_back(&k);
    }
    Remove("phishing", remove);
    // A few listed entries change threat (presence unchanged): answers must show the new one.
    std::vector<PgIngestEntry> retyped;
    for (const PoolKey& k : pool) {
      auto it = listed_["phishing"].find(k.sha256);
      if (it == listed_["phishing"].end() || (*rng)() % 20 != 0) continue;
      PgIngestEntry e = k.entry;
      e.threat = it->second.second == "phishing" ? "social_engineering" : "phishing";
      it->second.second = e.threat;
      retyped.push_back(e);
    }
    auto r = state_->IngestFeed("phishing", "f", retyped, 1'700'000'000, /*replace_feed=*/false);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    Publish("phishing");
  }
  std::vector<uint32_t> Prefixes(const std::vector<PoolKey>& pool, std::mt19937_64* rng) {
    std::vector<uint32_t> out;
    for (const PoolKey& k : pool) out.push_back(Prefix32(k.sha256));
    for (int i = 0; i < 200; ++i) out.push_back(static_cast<uint32_t>((*rng)()));
    return out;
  }
  std::map<std::string, Model> Current() {
    std::map<std::string, Model> out;
    for (const auto& [list, versions] : versions_) out[list] = versions.rbegin()->second;
    return out;
  }
};

TEST_F(PgChangesServer, FollowsVersionsByChangeLogAndAnswersLikeAFullLoad) {
  const std::vector<PoolKey> pool = Pool(400, "server");
  std::mt19937_64 rng(4242);
  std::vector<const PoolKey*> first, malware;
  for (size_t i = 0; i < 200; ++i) first.push_back(&pool[i]);
  for (size_t i = 150; i < 260; ++i) malware.push_back(&pool[i]);
  Add("phishing", first);
  Publish("phishing");
  Add("malware", malware);  // another list with the same keys: answers name both lists
  Publish("malware");

  PgHashSourceOptions options;
  options.fold_min_records = 1 << 20;  // no fold here
  auto source = PgHashSource::Open(conninfo_, nullptr, options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const std::vector<uint32_t> prefixes = Prefixes(pool, &rng);
  for (int v = 2; v <= 7; ++v) {
    SCOPED_TRACE("version " + std::to_string(v));
    RandomVersion(&rng, pool);
    if (v % 2 == 0) {
      Remove("malware", {&pool[150 + v]});
      Publish("malware");
    }
    ASSERT_TRUE((*source)->Refresh().ok());
    PgHashSourceOptions full_only;
    full_only.use_change_log = false;
    auto fresh = PgHashSource::Open(conninfo_, nullptr, full_only);
    ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
    const Answer followed = LookupAll(**source, prefixes);
    EXPECT_EQ(followed, LookupAll(**fresh, prefixes));
    EXPECT_EQ(followed.first, Expected(Current(), prefixes));
    ASSERT_EQ(followed.second.size(), 2u);
    EXPECT_EQ(followed.second[1], std::make_pair(std::string("phishing"), static_cast<uint64_t>(v)));
    for (const LoadedListVersion& l : (*source)->Loaded()) {
      EXPECT_EQ(l.records, Current()[l.list].size()) << l.list;
    }
  }
  const PgHashSourceStats stats = (*source)->stats();
  EXPECT_EQ(stats.full_loads, 2u);     // the first load of each list
  EXPECT_EQ(stats.change_loads, 9u);   // 6 phishing versions, 3 malware versions
  EXPECT_EQ(stats.change_log_fallbacks, 0u);
  EXPECT_EQ(stats.folds, 0u);
  EXPECT_LT(stats.changes_read, stats.rows_read);
  PrometheusText text;
  (*source)->AppendMetrics(&text);
  EXPECT_NE(text.text().find("urlguard_server_store_change_loads_total 9"), std::string::npos) << text.text();
  EXPECT_NE(text.text().find("urlguard_server_store_full_loads_total 2"), std::string::npos) << text.text();
}

TEST_F(PgChangesServer, OverlayFoldsIntoANewBaseAndAnswersTheSame) {
  const std::vector<PoolKey> pool = Pool(300, "fold");
  std::mt19937_64 rng(99);
  std::vector<const PoolKey*> first;
  for (size_t i = 0; i < 150; ++i) first.push_back(&pool[i]);
  Add("phishing", first);
  Publish("phishing");
  PgHashSourceOptions options;
  options.fold_min_records = 30;  // a base of ~150: folds every few versions
  options.fold_base_divisor = 1000;
  auto source = PgHashSource::Open(conninfo_, nullptr, options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const std::vector<uint32_t> prefixes = Prefixes(pool, &rng);
  for (int v = 2; v <= 8; ++v) {
    RandomVersion(&rng, pool);
    ASSERT_TRUE((*source)->Refresh().ok());
    EXPECT_EQ(LookupAll(**source, prefixes).first, Expected(Current(), prefixes)) << v;
  }
  const PgHashSourceStats stats = (*source)->stats();
  EXPECT_GE(stats.folds, 2u);
  EXPECT_EQ(stats.full_loads, 1u);
  EXPECT_EQ(stats.change_loads, 7u);
  // After a fold the overlay starts again from the new base.
  PrometheusText text;
  (*source)->AppendMetrics(&text);
  EXPECT_NE(text.text().find("urlguard_server_store_overlay_folds_total " + std::to_string(stats.folds)),
            std::string::npos)
      << text.text();
}

TEST_F(PgChangesServer, AChangeLogThatDoesNotAddUpIsLoadedWholeAndABadVersionNotAtAll) {
  const std::vector<PoolKey> pool = Pool(80, "fallback");
  std::vector<const PoolKey*> first, second, third;
  for (size_t i = 0; i < 50; ++i) first.push_back(&pool[i]);
  for (size_t i = 50; i < 60; ++i) second.push_back(&pool[i]);
  for (size_t i = 60; i < 70; ++i) third.push_back(&pool[i]);
  Add("phishing", first);
  Publish("phishing");
  auto source = PgHashSource::Open(conninfo_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::vector<uint32_t> prefixes;
  for (const PoolKey& k : pool) prefixes.push_back(Prefix32(k.sha256));

  // Version 2's change log misses an entry (its row claims an older added_version): the count check catches it
  // and the version is loaded whole, in the same refresh.
  Add("phishing", second);
  Publish("phishing");
  ASSERT_TRUE(state_->connection()
                  ->Run("UPDATE entries SET added_version = 1 WHERE sha256 = $1",
                        {PgParam::Bytes(std::string_view(reinterpret_cast<const char*>(pool[55].sha256.data()), 32))})
                  .ok());
  Status s = (*source)->Refresh();
  ASSERT_TRUE(s.ok()) << s.ToString();
  PgHashSourceStats stats = (*source)->stats();
  EXPECT_EQ(stats.change_log_fallbacks, 1u);
  EXPECT_EQ(stats.full_loads, 2u);
  EXPECT_EQ(stats.change_loads, 0u);
  EXPECT_EQ((*source)->Loaded().at(0).version, 2u);
  EXPECT_EQ(LookupAll(**source, prefixes).first, Expected(Current(), prefixes));

  // Version 3's row counts one entry too many: neither the change log nor a full load adds up, so version 3 is
  // never answered for; version 2 keeps answering.
  Add("phishing", third);
  Publish("phishing");
  ASSERT_TRUE(state_->connection()->Run("UPDATE list_versions SET entries = entries + 1 WHERE version = 3").ok());
  s = (*source)->Refresh();
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_EQ((*source)->Loaded().at(0).version, 2u);
  EXPECT_EQ(LookupAll(**source, prefixes).first, Expected({{"phishing", versions_["phishing"][2]}}, prefixes));
  stats = (*source)->stats();
  EXPECT_EQ(stats.change_log_fallbacks, 2u);
  EXPECT_EQ(stats.full_loads, 2u);
}

TEST_F(PgChangesServer, PostgresDownMidChangeLogKeepsTheOldVersionAnswering) {
  // More changes than one FETCH (kPgFetchRows) returns, so PostgreSQL stops between two fetches of the log.
  const size_t n = kPgFetchRows + 5000;
  const std::vector<PoolKey> pool = Pool(2 * n, "down");
  std::vector<const PoolKey*> first, second;
  for (size_t i = 0; i < n; ++i) first.push_back(&pool[i]);
  for (size_t i = n; i < 2 * n; ++i) second.push_back(&pool[i]);
  Add("phishing", first);
  Publish("phishing");

  std::atomic<bool> armed{false};
  std::atomic<uint64_t> rows{0};
  PgHashSourceOptions options;
  options.on_row_read = [&] {
    ++rows;
    if (armed && rows == 10) {
      armed = false;
      EXPECT_TRUE(Cluster()->Stop());
    }
  };
  auto source = PgHashSource::Open(conninfo_, nullptr, options);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  std::vector<uint32_t> old_prefixes = {Prefix32(pool[0].sha256), Prefix32(pool[n - 1].sha256)};
  std::vector<uint32_t> new_prefixes = {Prefix32(pool[n].sha256), Prefix32(pool[2 * n - 1].sha256)};

  Add("phishing", second);
  Remove("phishing", {&pool[0]});
  Publish("phishing");
  rows = 0;
  armed = true;
  Status s = (*source)->Refresh();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_GE(rows.load(), 10u);
  EXPECT_LT(rows.load(), n + 1);  // stopped in the middle of the log
  // Version 1, whole, still answers; nothing of version 2 does.
  auto loaded = (*source)->Loaded();
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].version, 1u);
  EXPECT_EQ(loaded[0].records, n);
  Answer a = LookupAll(**source, old_prefixes);
  EXPECT_EQ(a.first, Expected({{"phishing", versions_["phishing"][1]}}, old_prefixes));
  EXPECT_EQ(a.second, (std::vector<std::pair<std::string, uint64_t>>{{"phishing", 1}}));
  EXPECT_TRUE(LookupAll(**source, new_prefixes).first.empty());
  EXPECT_EQ((*source)->stats().change_loads, 0u);

  // Back: version 2 from the change log, complete.
  ASSERT_TRUE(Cluster()->StartAgain()) << Cluster()->LogTail();
  s = (*source)->Refresh();
  ASSERT_TRUE(s.ok()) << s.ToString();
  loaded = (*source)->Loaded();
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].version, 2u);
  EXPECT_EQ(loaded[0].records, 2 * n - 1);
  EXPECT_EQ((*source)->stats().change_loads, 1u);
  std::vector<uint32_t> all = old_prefixes;
  all.insert(all.end(), new_prefixes.begin(), new_prefixes.end());
  EXPECT_EQ(LookupAll(**source, all).first, Expected(Current(), all));
}

}  // namespace
}  // namespace urlguard
