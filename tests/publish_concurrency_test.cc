// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Publishers of different lists side by side on one repository (issue 22, item 1; docs/repository-layout.md,
// "Locks"): real `urlguard-publish publish` processes, one per list, started together round after round for
// hundreds of versions in all. After every round each list's new version is checked exactly against the entries
// that list was given (the domain layer's fingerprints, decoded, equal those of its own entries and no others'),
// its manifest signature verifies, and the signed index of lists verifies and names every list's new version.
// The same with `--state postgresql://` (each round: `ingest` then `publish` per list, the lists at once) on a
// throwaway PostgreSQL cluster (tests/pg_cluster.h; skipped when PostgreSQL is not installed).
// A publish run's exit status says whether its version was committed: a failure after the commit (here: the
// index cannot be written) is a warning with exit status 0, and the version is served.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <cstring>
#include <string>
#include <vector>

#include "url/entry.h"
#include "core/key_hash.h"
#include "core/snapshot.h"
#include "format/bounded_inflate.h"
#include "format/list_index.h"
#include "format/manifest.h"
#include "format/signature.h"
#include "platform/env.h"
#include "pg/pg_connection.h"
#include "signing/signer.h"
#include "tests/pg_cluster.h"
#include "sync/apply.h"
#include "tests/test_util.h"
#include "urlguard/publish.h"

namespace urlguard {
namespace {

constexpr int kBaseEntries = 4;   // in every version of a list
constexpr int kRoundEntries = 4;  // only in one round's version

std::vector<std::string> Entries(const std::string& list, int round) {
  std::vector<std::string> out;
  for (int i = 0; i < kBaseEntries; ++i) out.push_back("base" + std::to_string(i) + "." + list + ".example");
  for (int i = 0; i < kRoundEntries; ++i) {
    out.push_back("r" + std::to_string(round) + "x" + std::to_string(i) + "." + list + ".example");
  }
  return out;
}

// Starts argv[0] with stdout and stderr into `log`.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) _exit(126);
  dup2(fd, 1);
  dup2(fd, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

int Wait(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Repo {
  std::string dir;
  std::string key_path;
  PublicKey public_key;

  explicit Repo(const std::string& name) : dir(testing::ScratchDir(name) + "/repo") {
    auto files = GenerateKeyPair(testing::ScratchDir(name + "-key"));
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    key_path = files->private_key_path;
    auto key = SigningKey::FromPem(testing::ReadFileOrDie(key_path));
    EXPECT_TRUE(key.ok());
    public_key = key->public_key();
  }

  std::string ListFile(const std::string& list, const std::string& name) const {
    return dir + "/public/v1/lists/" + list + "/" + name;
  }

  std::vector<std::string> PublishArgs(const std::string& list, const std::string& feed) const {
    return {testing::BinPath("urlguard-publish"), "publish", "--repo", dir, "--key", key_path, "--list", list,
            "--input", "plain:" + feed};
  }
};

// The list's served version: signature, number, and the domain layer's fingerprints exactly those of `entries`.
void ExpectServedVersion(const Repo& repo, const std::string& list, uint64_t version,
                         const std::vector<std::string>& entries) {
  SCOPED_TRACE(list + " version " + std::to_string(version));
  const std::string bytes = testing::ReadFileOrDie(repo.ListFile(list, "manifest.json"));
  const std::string sig = testing::ReadFileOrDie(repo.ListFile(list, "manifest.sig"));
  ASSERT_TRUE(VerifyManifestSignature({repo.public_key}, bytes, sig).ok());
  auto m = ParseManifest(bytes);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->list, list);
  ASSERT_EQ(m->version, version);
  const std::string wire = testing::ReadFileOrDie(repo.ListFile(list, m->snapshot.path));
  ASSERT_EQ(Sha256(wire), m->snapshot.sha256);
  auto raw = InflateBounded(wire, m->snapshot.inflated_size);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE(CheckSnapshotAgainstManifest(*raw, *m).ok());
  std::vector<uint64_t> aligned((raw->size() + 7) / 8);
  std::memcpy(aligned.data(), raw->data(), raw->size());
  auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(aligned.data()), raw->size(), true);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->list_name(), list);
  const LayerView* domains = view->layer(LayerKind::kDomain);
  ASSERT_NE(domains, nullptr);
  ASSERT_EQ(domains->filter, FilterKind::kFingerprintArray);
  std::vector<uint64_t> want;
  for (const std::string& e : entries) {
    auto k = EntryKeyFor(e);
    ASSERT_TRUE(k.ok()) << e;
    want.push_back(domains->fingerprints.FingerprintOf(KeyHash(view->key_hash(), k->expression)));
  }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  std::vector<uint64_t> got;
  domains->fingerprints.Decode(&got);
  EXPECT_EQ(got, want) << "the snapshot holds other entries than the list's own";
  for (LayerKind other : {LayerKind::kUrl, LayerKind::kIp}) {
    const LayerView* l = view->layer(other);
    EXPECT_TRUE(l == nullptr || l->entries == 0);
  }
}

// The index: its signature verifies and it names each list at `versions[list]`.
void ExpectIndex(const Repo& repo, const std::vector<std::pair<std::string, uint64_t>>& versions) {
  const std::string bytes = testing::ReadFileOrDie(repo.dir + "/public/v1/lists/index.json");
  const std::string sig = testing::ReadFileOrDie(repo.dir + "/public/v1/lists/index.sig");
  auto index = VerifyAndParseListIndex({repo.public_key}, bytes, sig);
  ASSERT_TRUE(index.ok()) << "index.sig does not verify index.json: " << index.status().ToString();
  ASSERT_EQ(index->lists.size(), versions.size());
  for (size_t i = 0; i < versions.size(); ++i) {
    EXPECT_EQ(index->lists[i].name, versions[i].first);
    EXPECT_EQ(index->lists[i].version, versions[i].second) << versions[i].first;
  }
}

// `rounds` rounds: in each, every list's feed gets that round's entries and `run(list, feed)` (the argv of one
// process) runs for all lists at once; then every list must serve its own new version and the index all of them.
void PublishRounds(const Repo& repo, const std::vector<std::string>& lists, int rounds,
                   const std::function<std::vector<std::string>(const std::string&, const std::string&)>& run) {
  const std::string feeds = testing::ScratchDir("publish-concurrency-feeds");
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<pid_t> pids;
    for (const std::string& list : lists) {
      const std::string feed = feeds + "/" + list + ".txt";
      std::string text;
      for (const std::string& e : Entries(list, round)) text += e + "\n";
      testing::WriteFileOrDie(feed, text);
      pids.push_back(Spawn(run(list, feed), feeds + "/" + list + ".log"));
    }
    std::vector<std::pair<std::string, uint64_t>> versions;
    for (size_t i = 0; i < lists.size(); ++i) {
      const int rc = Wait(pids[i]);
      ASSERT_EQ(rc, 0) << lists[i] << ": " << testing::ReadFileOrDie(feeds + "/" + lists[i] + ".log");
      versions.emplace_back(lists[i], static_cast<uint64_t>(round) + 1);
    }
    for (const std::string& list : lists) {
      ExpectServedVersion(repo, list, static_cast<uint64_t>(round) + 1, Entries(list, round));
    }
    ExpectIndex(repo, versions);
    if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) return;
  }
}

TEST(PublishConcurrency, PublishersOfDifferentListsSideBySideKeepEveryVersionTheirOwn) {
  Repo repo("publish-concurrency");
  // 150 versions, three publishers at a time; the lists sorted, as the index names them.
  PublishRounds(repo, {"malware", "phishing", "spam"}, 50, [&](const std::string& list, const std::string& feed) {
    return repo.PublishArgs(list, feed);
  });
}

TEST(PublishConcurrency, PublishersOfDifferentListsSideBySideOnOnePostgresState) {
  if (!testing::PgCluster::Available()) GTEST_SKIP() << testing::PgCluster::SkipReason();
  std::string error;
  auto cluster = testing::PgCluster::Start("urlguard", &error);
  ASSERT_NE(cluster, nullptr) << error;
  const std::string state = cluster->conninfo_for("urlguard");
  Repo repo("publish-concurrency-pg");
  // Each round one shell per list: ingest the round's feed (replacing the last), then publish. 120 versions.
  PublishRounds(repo, {"malware", "phishing"}, 60, [&](const std::string& list, const std::string& feed) {
    const std::string pub = testing::BinPath("urlguard-publish");
    std::vector<std::string> args = repo.PublishArgs(list, feed);
    args.resize(args.size() - 2);  // no --input: the entries come from PostgreSQL
    std::string publish;
    for (const std::string& a : args) publish += "'" + a + "' ";
    return std::vector<std::string>{"/bin/sh", "-c",
                                    "'" + pub + "' ingest --state '" + state + "' --list " + list + " --input 'plain:" +
                                        feed + "' && " + publish + "--state '" + state + "'"};
  });
}

TEST(PublishConcurrency, AFailureAfterTheCommitIsAWarningAndExitStatusZero) {
  Repo repo("publish-exit-status");
  const std::string feed = testing::ScratchDir("publish-exit-status-feed") + "/feed.txt";
  testing::WriteFileOrDie(feed, "one.example\n");
  std::vector<std::string> args = repo.PublishArgs("phishing", feed);
  std::string command;
  for (const std::string& a : args) command += "'" + a + "' ";
  const std::string err = repo.dir + "-stderr.txt";
  ASSERT_EQ(testing::RunCommand(command, "", err).exit_code, 0) << testing::ReadFileOrDie(err);

  // The index cannot be written now (a directory where its temporary file goes); the manifest can.
  ASSERT_TRUE(Env::Default()->CreateDirs(repo.dir + "/public/v1/lists/index.json.tmp/in-the-way").ok());
  testing::WriteFileOrDie(feed, "one.example\ntwo.example\n");
  auto run = testing::RunCommand(command, "", err);
  const std::string stderr_text = testing::ReadFileOrDie(err);
  EXPECT_EQ(run.exit_code, 0) << stderr_text;  // committed
  EXPECT_NE(stderr_text.find("warning: phishing version 2 is committed"), std::string::npos) << stderr_text;
  EXPECT_NE(stderr_text.find("list index"), std::string::npos) << stderr_text;
  ExpectServedVersion(repo, "phishing", 2, {"one.example", "two.example"});

  // Nothing committed: exit status 1 (the input taken past the guard, which would refuse it with 3, so that the
  // publication itself fails).
  testing::WriteFileOrDie(feed, "not a url\n");
  auto failed = testing::RunCommand(command + "--accept '" + feed + "'", "", err);
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(testing::ReadFileOrDie(err).find("nothing committed"), std::string::npos);
  ExpectServedVersion(repo, "phishing", 2, {"one.example", "two.example"});
}

}  // namespace
}  // namespace urlguard
