// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The server side end to end: fixture feeds of every format -> two successive publishes into a repository ->
// the diff applied to the first state gives exactly the second state's SHA-256; signatures verify; the seen
// filter remembers; the full-hash store answers prefixes.
#include <gtest/gtest.h>

#include <cstring>

#include "core/diff_codec.h"
#include "core/snapshot.h"
#include "format/bounded_inflate.h"
#include "format/manifest.h"
#include "format/signature.h"
#include "platform/env.h"
#include "format/full_hash_file.h"
#include "publish/publisher.h"
#include "signing/signer.h"
#include "sync/apply.h"
#include "tests/test_util.h"
#include "urlguard/checker.h"

namespace urlguard {
namespace {

FeedSpec Spec(const std::string& spec) {
  auto s = ParseFeedSpec(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << s.status().ToString();
  return *s;
}

std::vector<FeedSpec> AllFixtureFeeds() {
  const std::string d = testing::SourcePath("fixtures/feeds/");
  return {Spec("plain:" + d + "plain.txt"),          Spec("hosts:" + d + "hosts.txt"),
          Spec("abp:" + d + "abp.txt"),              Spec("phishtank-csv:" + d + "phishtank.csv"),
          Spec("phishtank-json:" + d + "phishtank.json"), Spec("urlhaus-csv:" + d + "urlhaus.csv"),
          Spec("openphish:" + d + "openphish_feed.txt"), Spec("drop-json:" + d + "drop_v4.json"),
          Spec("drop-txt:" + d + "drop.txt"),        Spec("csv:indicator:" + d + "generic.csv")};
}

struct Repo {
  std::string dir;
  SigningKey key = std::move(SigningKey::Generate()).value();
  Env* env = Env::Default();

  Result<PublishReport> Publish(const std::vector<FeedSpec>& inputs, int64_t now, bool emergency = false) {
    PublishOptions o;
    o.repo_dir = dir;
    o.list = "phishing";
    o.inputs = inputs;
    o.now_unix = now;
    o.emergency = emergency;
    return urlguard::Publish(env, key, o);
  }
  std::string Public(const std::string& name) { return JoinPath(PublicListDir(dir, "phishing"), name); }
  Manifest LoadManifest() {
    std::string bytes = testing::ReadFileOrDie(Public("manifest.json"));
    std::string sig = testing::ReadFileOrDie(Public("manifest.sig"));
    EXPECT_TRUE(VerifyManifestSignature({key.public_key()}, bytes, sig).ok());
    auto m = ParseManifest(bytes);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return *m;
  }
  std::string Inflated(const ManifestFile& f) {
    std::string wire = testing::ReadFileOrDie(Public(f.path));
    EXPECT_EQ(wire.size(), f.size);
    EXPECT_EQ(Sha256(wire), f.sha256);
    auto bytes = InflateBounded(wire, f.inflated_size);
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    return *bytes;
  }
};

TEST(PublishE2E, EveryFeedFormatPublishesAndTwoVersionsDiffExactly) {
  Repo repo;
  repo.dir = testing::ScratchDir("publish-e2e");
  auto feeds = AllFixtureFeeds();
  auto r1 = repo.Publish(feeds, 1700000000);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->version, 1u);
  EXPECT_GT(r1->entries[0] + r1->entries[1] + r1->entries[2], 20u);
  EXPECT_GT(r1->entries[static_cast<int>(LayerKind::kIp)], 0u);  // DROP ranges
  EXPECT_EQ(r1->seen_before, 0u);
  EXPECT_GT(r1->rejected, 0u);  // the fixtures contain documented bad lines
  Manifest m1 = repo.LoadManifest();
  std::string s1 = repo.Inflated(m1.snapshot);
  ASSERT_TRUE(CheckSnapshotAgainstManifest(s1, m1).ok());

  // Version 2: one feed fewer (entries disappear), one extra file (entries appear).
  std::string extra = repo.dir + "/extra.txt";
  testing::WriteFileOrDie(extra, "brand-new-phish.example\nhttp://another.example/login\n198.51.100.0/24\n");
  std::vector<FeedSpec> feeds2(feeds.begin() + 1, feeds.end());
  feeds2.push_back(Spec("plain:" + extra));
  auto r2 = repo.Publish(feeds2, 1700003600);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->version, 2u);
  EXPECT_FALSE(r2->first_version);
  EXPECT_GT(r2->added[0] + r2->added[1] + r2->added[2], 0u);
  EXPECT_GT(r2->removed[0] + r2->removed[1] + r2->removed[2], 0u);
  EXPECT_GT(r2->seen_before, 0u);
  EXPECT_GT(r2->new_keys, 0u);
  ASSERT_EQ(r2->diffs.size(), 1u);

  Manifest m2 = repo.LoadManifest();
  EXPECT_EQ(m2.version, 2u);
  ASSERT_EQ(m2.diffs.size(), 1u);
  EXPECT_EQ(m2.diffs[0].from_version, 1u);
  auto diff = DecodeDiff(repo.Inflated(m2.diffs[0].file));
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();

  // Apply to state 1: exactly state 2.
  std::vector<uint64_t> aligned((s1.size() + 7) / 8);
  std::memcpy(aligned.data(), s1.data(), s1.size());
  auto v1 = SnapshotView::Open(reinterpret_cast<const uint8_t*>(aligned.data()), s1.size(), true);
  ASSERT_TRUE(v1.ok());
  auto applied = ApplyDiffToSnapshot(*v1, *diff, m2);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(Sha256(applied->data(), applied->size() - 32), m2.state_sha256);
  EXPECT_EQ(*applied, repo.Inflated(m2.snapshot));

  // A diff applied to the wrong base, or a manifest with another state hash, is refused.
  Manifest wrong = m2;
  wrong.state_sha256[0] ^= 1;
  EXPECT_EQ(ApplyDiffToSnapshot(*v1, *diff, wrong).status().code(), StatusCode::kCorruption);
  Diff other_base = *diff;
  other_base.from_version = 7;
  EXPECT_EQ(ApplyDiffToSnapshot(*v1, other_base, m2).status().code(), StatusCode::kCorruption);

  // Bytes too short to be any snapshot are refused before anything is read from them.
  Manifest tiny = m2;
  tiny.state_bytes = 10;
  EXPECT_EQ(CheckSnapshotAgainstManifest(std::string(10, 'x'), tiny).code(), StatusCode::kCorruption);

  // The published state answers lookups.
  std::string state2 = repo.dir + "/state2.ugs";
  testing::WriteFileOrDie(state2, *applied);
  auto checker = Checker::Open({state2});
  ASSERT_TRUE(checker.ok());
  EXPECT_EQ((*checker)->Check("http://brand-new-phish.example/x").kind, VerdictKind::kHit);
  EXPECT_EQ((*checker)->Check("http://198.51.100.77/").kind, VerdictKind::kHit);
  EXPECT_EQ((*checker)->Check("http://www.example.com/").kind, VerdictKind::kSafe);

  // Full hashes for the verify API: the listed expression is there under its prefix.
  auto mapped = repo.env->MapReadOnly(repo.dir + "/private/lists/phishing/2.ugh");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  auto hashes = FullHashFileView::Open((*mapped)->data(), (*mapped)->size(), /*verify_contents=*/true);
  ASSERT_TRUE(hashes.ok()) << hashes.status().ToString();
  EXPECT_EQ(hashes->list_name(), "phishing");
  EXPECT_EQ(hashes->version(), 2u);
  EXPECT_FALSE(repo.env->FileExists(repo.dir + "/private/lists/phishing/1.ugh"));  // older versions go
  Sha256Digest h = Sha256("brand-new-phish.example/");
  std::vector<FullHashMatch> found;
  hashes->LookupPrefix(DigestPrefix32(h), &found);
  bool match = false;
  for (const FullHashMatch& r : found) match |= r.sha256 == h && r.layer == LayerKind::kDomain;
  EXPECT_TRUE(match);

  // Seen filter: an entry of version 1 only is still "seen" though no longer listed.
  auto counts = SeenCounts(repo.env, repo.dir, {"brand-new-phish.example", "never-ever.example", "not a url"});
  ASSERT_TRUE(counts.ok());
  EXPECT_GE((*counts)[0], 1);
  EXPECT_EQ((*counts)[1], 0);
  EXPECT_EQ((*counts)[2], -1);
}

TEST(PublishE2E, KeepsDiffsFromTheLastKVersionsAndCleansUp) {
  Repo repo;
  repo.dir = testing::ScratchDir("publish-keep");
  std::string feed = repo.dir + "/feed.txt";
  std::string entries;
  for (int v = 1; v <= 8; ++v) {
    entries += "host" + std::to_string(v) + ".example\n";
    testing::WriteFileOrDie(feed, entries);
    PublishOptions o;
    o.repo_dir = repo.dir;
    o.list = "phishing";
    o.inputs = {Spec("plain:" + feed)};
    o.keep = 3;
    o.now_unix = 1700000000 + v * 100;
    auto r = Publish(repo.env, repo.key, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  Manifest m = repo.LoadManifest();
  EXPECT_EQ(m.version, 8u);
  ASSERT_LE(m.diffs.size(), 3u);
  auto names = repo.env->ListDir(PublicListDir(repo.dir, "phishing"));
  ASSERT_TRUE(names.ok());
  for (const std::string& n : *names) {
    bool named = n == "manifest.json" || n == "manifest.sig" || n == m.snapshot.path || n == "snapshot-7.ugs.z";
    for (const auto& d : m.diffs) named |= n == d.file.path;
    EXPECT_TRUE(named) << "stale public file " << n;
  }
}

TEST(PublishE2E, BadInputsFailCleanlyAndEmergencyIsSigned) {
  Repo repo;
  repo.dir = testing::ScratchDir("publish-bad");
  std::string bad = repo.dir + "/bad.txt";
  testing::WriteFileOrDie(bad, "not a url\nalso not\n");
  auto r = repo.Publish({Spec("plain:" + bad)}, 1700000000);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(repo.env->FileExists(repo.Public("manifest.json")));  // nothing served
  auto missing = repo.Publish({Spec("plain:" + repo.dir + "/missing.txt")}, 1700000000);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  std::string good = repo.dir + "/good.txt";
  testing::WriteFileOrDie(good, "evil.example\n");
  ASSERT_TRUE(repo.Publish({Spec("plain:" + good)}, 1700000000, /*emergency=*/true).ok());
  Manifest m = repo.LoadManifest();
  EXPECT_TRUE(m.emergency);
  EXPECT_EQ(m.expires_unix, 1700000000 + 24 * 3600);

  // Two publishers of one list at once: the second is refused while the first holds the list's lock. A publisher
  // of another list goes ahead meanwhile (publish/repo_lock.h).
  auto lock = repo.env->LockFile(repo.dir + "/private/lists/phishing/publish.lock");
  ASSERT_TRUE(lock.ok());
  EXPECT_EQ(repo.Publish({Spec("plain:" + good)}, 1700000100).status().code(), StatusCode::kFailedPrecondition);
  PublishOptions other;
  other.repo_dir = repo.dir;
  other.list = "malware";
  other.inputs = {Spec("plain:" + good)};
  other.now_unix = 1700000100;
  auto malware = urlguard::Publish(repo.env, repo.key, other);
  ASSERT_TRUE(malware.ok()) << malware.status().ToString();
  EXPECT_TRUE(malware->committed);
  EXPECT_TRUE(malware->warnings.empty());
}

}  // namespace
}  // namespace urlguard
