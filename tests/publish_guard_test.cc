// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The publication guard of `urlguard-publish publish` and `ingest` (docs/feeds.md, "The publication guard"),
// end to end through the real binary as an operator runs it: an input that looks like an HTML page, has no
// entry or is mostly rejected lines is refused (exit 3) and a full version that would remove more than
// --max-removal of the list is refused (exit 5), nothing committed either way: the served manifest still
// names the previous version and no file of the refused one is left in the repository. With files, and with a
// real PostgreSQL state (tests/pg_cluster.h).
#include <gtest/gtest.h>

#include <filesystem>

#include "pg/pg_connection.h"
#include "tests/feed_test_util.h"
#include "tests/pg_cluster.h"
#include "tests/test_util.h"
#include "urlguard/publish.h"

namespace urlguard {
namespace {

using testing::Domains;

const char kErrorPage[] =
    "<!DOCTYPE html>\n<html><head><title>503 Service Unavailable</title></head>\n<body>try "
    "later</body></html>\n";

class PublishGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("publish-guard");
    repo_ = dir_ + "/repo";
    feed_ = dir_ + "/feed.txt";
    auto keys = GenerateKeyPair(dir_ + "/keys");
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    key_ = keys->private_key_path;
  }

  // `urlguard-publish SUBCOMMAND ARGS`; stderr into *err.
  testing::RunResult Cli(const std::string& subcommand, const std::string& args, std::string* err) {
    const std::string err_path = dir_ + "/err.txt";
    std::string cmd = testing::BinPath("urlguard-publish") + " " + subcommand + " ";
    if (subcommand == "publish") cmd += "--repo " + repo_ + " --key " + key_ + " --list phishing ";
    auto r = testing::RunCommand(cmd + args, "", err_path);
    *err = testing::ReadFileOrDie(err_path);
    return r;
  }

  // The version the served manifest names (0: none).
  uint64_t ServedVersion() {
    const std::string path = repo_ + "/public/v1/lists/phishing/manifest.json";
    if (!std::filesystem::exists(path)) return 0;
    const std::string text = testing::ReadFileOrDie(path);
    const size_t at = text.find("\"version\":");
    if (at == std::string::npos) return 0;
    return std::stoull(text.substr(at + 10));
  }

  // Domains in version V's private entry list (-1: no such version).
  int PublishedEntries(uint64_t version) {
    const std::string path = repo_ + "/private/lists/phishing/" + std::to_string(version) + ".entries";
    if (!std::filesystem::exists(path)) return -1;
    const std::string text = testing::ReadFileOrDie(path);
    int n = 0;
    for (size_t p = text.find("\ndomain "); p != std::string::npos; p = text.find("\ndomain ", p + 1)) ++n;
    return n;
  }

  bool AnyFileOfVersion(uint64_t v) {
    const std::string priv = repo_ + "/private/lists/phishing/" + std::to_string(v);
    return std::filesystem::exists(priv + ".ugs") || std::filesystem::exists(priv + ".state") ||
           std::filesystem::exists(repo_ + "/public/v1/lists/phishing/snapshot-" + std::to_string(v) +
                                   ".ugs.z");
  }

  std::string dir_, repo_, key_, feed_;
};

// Issue 19's exact example through `publish --input`: 1,000 domains as version 1, then the same file replaced
// by what a failing upstream returns (three lines of it, then an HTML error page). Before the guard: "5
// lines, 3 entries, 2 rejected", exit 0, version 2 with 997 removed.
TEST_F(PublishGuard, IssueNineteenErrorPageIsRefused) {
  std::string err;
  testing::WriteFileOrDie(feed_, Domains(1000));
  auto first = Cli("publish", "--input " + feed_, &err);
  ASSERT_EQ(first.exit_code, 0) << first.out << err;
  ASSERT_EQ(ServedVersion(), 1u);

  testing::WriteFileOrDie(feed_, Domains(3) + kErrorPage);
  auto second = Cli("publish", "--input " + feed_, &err);
  EXPECT_EQ(second.exit_code, 3) << second.out << err;
  EXPECT_NE(err.find(feed_ + ": refused: looks like an HTML page"), std::string::npos) << err;
  EXPECT_NE(err.find("nothing committed"), std::string::npos) << err;
  EXPECT_NE(err.find("--accept " + feed_), std::string::npos) << err;
  EXPECT_EQ(ServedVersion(), 1u);
  EXPECT_EQ(PublishedEntries(1), 1000);
  EXPECT_FALSE(AnyFileOfVersion(2));

  // The next good file publishes version 2 as usual.
  testing::WriteFileOrDie(feed_, Domains(1000, 5));
  auto third = Cli("publish", "--input " + feed_, &err);
  EXPECT_EQ(third.exit_code, 0) << third.out << err;
  EXPECT_EQ(ServedVersion(), 2u);
  EXPECT_EQ(PublishedEntries(2), 1000);
}

TEST_F(PublishGuard, EmptyAndMostlyRejectedInputsAreRefusedUnlessAccepted) {
  std::string err;
  testing::WriteFileOrDie(feed_, "");
  auto empty = Cli("publish", "--input " + feed_, &err);
  EXPECT_EQ(empty.exit_code, 3) << err;
  EXPECT_NE(err.find("refused: empty"), std::string::npos) << err;
  EXPECT_EQ(ServedVersion(), 0u);

  // 2 entries, 3 bad lines: 60% rejected, above the default 25%.
  testing::WriteFileOrDie(feed_, "a.example\nb.example\nnot a domain\nhttp://\n!!!\n");
  auto mostly = Cli("publish", "--input plain:" + feed_, &err);
  EXPECT_EQ(mostly.exit_code, 3) << err;
  EXPECT_NE(err.find("3 of 5 lines rejected (60%"), std::string::npos) << err;
  EXPECT_EQ(ServedVersion(), 0u);

  // Taken on purpose: by its path, or by the argument as given. An --accept naming no input is a mistake.
  auto wrong = Cli("publish", "--input plain:" + feed_ + " --accept " + dir_ + "/other.txt", &err);
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(err.find("not one of the inputs"), std::string::npos) << err;
  auto accepted = Cli("publish", "--input plain:" + feed_ + " --accept plain:" + feed_, &err);
  EXPECT_EQ(accepted.exit_code, 0) << err;
  EXPECT_EQ(ServedVersion(), 1u);
  EXPECT_EQ(PublishedEntries(1), 2);
}

// A clean list that shrank by 90%: refused with the counts, nothing committed; --allow-large-removal (or a
// larger
// --max-removal) publishes it. Removing at most 100 entries is always allowed.
TEST_F(PublishGuard, LargeRemovalIsRefusedUntilAllowed) {
  std::string err;
  testing::WriteFileOrDie(feed_, Domains(1000));
  ASSERT_EQ(Cli("publish", "--input " + feed_, &err).exit_code, 0) << err;

  testing::WriteFileOrDie(feed_, Domains(100));
  auto refused = Cli("publish", "--input " + feed_, &err);
  EXPECT_EQ(refused.exit_code, 5) << refused.out << err;
  EXPECT_NE(
      err.find("phishing version 2 refused: it would remove 900 of the previous version's 1000 entries (90%"),
      std::string::npos)
      << err;
  EXPECT_NE(err.find("--allow-large-removal"), std::string::npos) << err;
  EXPECT_EQ(ServedVersion(), 1u);
  EXPECT_FALSE(AnyFileOfVersion(2));

  auto low_cap = Cli("publish", "--input " + feed_ + " --max-removal 0.5", &err);
  EXPECT_EQ(low_cap.exit_code, 5) << err;
  auto allowed = Cli("publish", "--input " + feed_ + " --allow-large-removal", &err);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << err;
  EXPECT_EQ(ServedVersion(), 2u);
  EXPECT_EQ(PublishedEntries(2), 100);

  // 100 entries to 0 + 60 new: 100 removed, the floor; 100 to 60 by --max-removal 0.9 likewise.
  testing::WriteFileOrDie(feed_, Domains(60, 5000));
  auto floor = Cli("publish", "--input " + feed_, &err);
  EXPECT_EQ(floor.exit_code, 0) << err;
  EXPECT_EQ(ServedVersion(), 3u);
}

// Incremental versions are exempt: --remove names what leaves.
TEST_F(PublishGuard, IncrementalRemoveIsExempt) {
  std::string err;
  testing::WriteFileOrDie(feed_, Domains(1000));
  ASSERT_EQ(Cli("publish", "--input " + feed_, &err).exit_code, 0) << err;
  const std::string gone = dir_ + "/gone.txt";
  testing::WriteFileOrDie(gone, Domains(900));
  auto r = Cli("publish", "--remove " + gone, &err);
  EXPECT_EQ(r.exit_code, 0) << r.out << err;
  EXPECT_EQ(PublishedEntries(2), 100);
  // An --add file is an input like any other: an error page is refused.
  const std::string page = dir_ + "/page.txt";
  testing::WriteFileOrDie(page, kErrorPage);
  EXPECT_EQ(Cli("publish", "--add " + page, &err).exit_code, 3) << err;
  EXPECT_EQ(ServedVersion(), 2u);
}

// The PostgreSQL state: ingest refuses the error page (nothing ingested, the feed's entries stay listed), and
// a publish whose ingested changes would remove 90% of the list is refused (rolled back, the changes stay
// pending) until --allow-large-removal.
TEST_F(PublishGuard, PostgresStateIngestCheckAndRemovalCap) {
  using testing::PgCluster;
  if (!PgCluster::Available()) GTEST_SKIP() << PgCluster::SkipReason();
  std::string error;
  auto cluster = PgCluster::Start("urlguard_guard", &error);
  ASSERT_NE(cluster, nullptr) << error;
  const std::string state = "--state " + cluster->conninfo() + " ";
  std::string err;
  testing::WriteFileOrDie(feed_, Domains(1000));
  ASSERT_EQ(Cli("ingest", state + "--list phishing --input " + feed_, &err).exit_code, 0) << err;
  ASSERT_EQ(Cli("publish", state, &err).exit_code, 0) << err;
  ASSERT_EQ(ServedVersion(), 1u);

  testing::WriteFileOrDie(feed_, Domains(3) + kErrorPage);
  auto page = Cli("ingest", state + "--list phishing --input " + feed_, &err);
  EXPECT_EQ(page.exit_code, 3) << err;
  EXPECT_NE(err.find("looks like an HTML page"), std::string::npos) << err;
  EXPECT_NE(err.find("nothing ingested"), std::string::npos) << err;
  auto conn = PgConnection::Connect(cluster->conninfo());
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto listed = (*conn)->Exec("SELECT count(*) FROM entries WHERE list = 'phishing' AND listed", {});
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->int64(0, 0), 1000);

  testing::WriteFileOrDie(feed_, Domains(100));
  ASSERT_EQ(Cli("ingest", state + "--list phishing --input " + feed_, &err).exit_code, 0) << err;
  auto refused = Cli("publish", state, &err);
  EXPECT_EQ(refused.exit_code, 5) << refused.out << err;
  EXPECT_NE(err.find("would remove 900 of the previous version's 1000 entries"), std::string::npos) << err;
  auto versions = (*conn)->Exec("SELECT max(version) FROM list_versions WHERE list = 'phishing'", {});
  ASSERT_TRUE(versions.ok()) << versions.status().ToString();
  EXPECT_EQ(versions->int64(0, 0), 1);
  EXPECT_EQ(ServedVersion(), 1u);

  auto allowed = Cli("publish", state + "--allow-large-removal", &err);
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << err;
  EXPECT_EQ(ServedVersion(), 2u);
  auto live = (*conn)->Exec("SELECT entries FROM list_versions WHERE list = 'phishing' AND version = 2", {});
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_EQ(live->int64(0, 0), 100);
}

}  // namespace
}  // namespace urlguard
