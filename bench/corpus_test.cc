// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The scale corpus keeps its promises (bench/corpus.h): unique keys by construction, the 40/55/5 mix, every
// entry valid, version 2 = version 1 - removed + added, browsing hit URLs that do hit, determinism.
#include "bench/corpus.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <unordered_set>

#include "url/entry.h"
#include "url/url_canon.h"
#include "platform/env.h"
#include "urlguard/checker.h"
#include "urlguard/publish.h"

namespace urlguard::bench {
namespace {

constexpr uint64_t kEntries = 200000;

TEST(ListCorpusTest, EntriesAreValidUniqueAndMixed) {
  const ListCorpus list(1);
  std::unordered_set<std::string> keys;
  uint64_t per_layer[3] = {0, 0, 0};
  for (uint64_t i = 0; i < kEntries; ++i) {
    const std::string e = list.Entry(i);
    ASSERT_LE(e.size(), ListCorpus::kMaxEntryBytes) << e;
    auto key = EntryKeyFor(e);
    ASSERT_TRUE(key.ok()) << i << ": " << e << ": " << key.status().ToString();
    ASSERT_TRUE(keys.insert(key->expression).second) << "entry " << i << " repeats a key: " << e;
    ++per_layer[static_cast<int>(key->layer)];
  }
  EXPECT_EQ(per_layer[static_cast<int>(LayerKind::kDomain)], kEntries * 40 / 100);
  EXPECT_EQ(per_layer[static_cast<int>(LayerKind::kUrl)], kEntries * 55 / 100);
  EXPECT_EQ(per_layer[static_cast<int>(LayerKind::kIp)], kEntries * 5 / 100);
}

TEST(ListCorpusTest, DeterministicAndSeeded) {
  const ListCorpus a(1), b(1), c(2);
  int differ = 0;
  for (uint64_t i : {uint64_t{0}, uint64_t{1}, uint64_t{999}, uint64_t{123456789}, ListCorpus::kMaxEntries - 1}) {
    EXPECT_EQ(a.Entry(i), b.Entry(i));
    differ += a.Entry(i) != c.Entry(i);
  }
  EXPECT_EQ(differ, 5);
}

TEST(ListCorpusTest, FarIndicesStayUnique) {
  // Indices near the top of the range (the affine maps and the token wrap nowhere below kMaxEntries).
  const ListCorpus list(1);
  std::set<std::string> keys;
  for (uint64_t i = ListCorpus::kMaxEntries - 50000; i < ListCorpus::kMaxEntries; ++i) {
    auto key = EntryKeyFor(list.Entry(i));
    ASSERT_TRUE(key.ok()) << list.Entry(i);
    ASSERT_TRUE(keys.insert(key->expression).second) << list.Entry(i);
  }
  for (uint64_t i = 0; i < 50000; ++i) {
    ASSERT_EQ(keys.count(EntryKeyFor(list.Entry(i))->expression), 0u) << list.Entry(i);
  }
}

TEST(ChangeSetTest, VersionTwoIsVersionOneMinusRemovedPlusAdded) {
  const ChangeSet changes(kEntries, 2500, 3000);
  uint64_t removed = 0, added = 0, v2 = 0;
  for (uint64_t i = 0; i < changes.end(); ++i) {
    EXPECT_FALSE(changes.Removed(i) && changes.Added(i));
    removed += changes.Removed(i);
    added += changes.Added(i);
    v2 += !changes.Removed(i);
  }
  EXPECT_EQ(removed, 2500u);
  EXPECT_EQ(added, 3000u);
  EXPECT_EQ(v2, kEntries - 2500 + 3000);
  EXPECT_EQ(ChangeSet(10, 0, 0).end(), 10u);
  EXPECT_FALSE(ChangeSet(10, 0, 0).Removed(9));
  // All removed: every index of version 1.
  const ChangeSet all(7, 7, 0);
  for (uint64_t i = 0; i < 7; ++i) EXPECT_TRUE(all.Removed(i));
}

// A snapshot of the first `entries` entries, built by the public API from a plain feed.
std::string BuildList(const ListCorpus& list, uint64_t entries, const std::string& name) {
  const char* tmp = std::getenv("URLGUARD_TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  (void)Env::Default()->CreateDirs(dir);
  const std::string feed = dir + "/" + name + ".txt", out = dir + "/" + name + ".ugs";
  std::string text;
  for (uint64_t i = 0; i < entries; ++i) {
    list.AppendEntry(i, &text);
    text.push_back('\n');
  }
  EXPECT_TRUE(WriteFileAtomic(Env::Default(), feed, text).ok());
  SnapshotBuildOptions o;
  o.list = "bench";
  o.inputs = {"plain:" + feed};
  o.out_path = out;
  auto report = BuildSnapshotFile(o);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  if (report.ok()) {
    EXPECT_EQ(report->rejected, 0u);
    EXPECT_EQ(report->entries[0] + report->entries[1] + report->entries[2], entries);
  }
  return out;
}

TEST(BrowsingCorpusTest, HitUrlsHitAndCleanUrlsMostlyDoNot) {
  constexpr uint64_t kListed = 20000, kUrls = 20000;
  const ListCorpus list(1);
  auto checker = Checker::Open({BuildList(list, kListed, "corpus_test_list")});
  ASSERT_TRUE(checker.ok()) << checker.status().ToString();
  const BrowsingCorpus hits(&list, kListed, 1.0), clean(&list, kListed, 0.0);
  uint64_t clean_hits = 0;
  for (uint64_t j = 0; j < kUrls; ++j) {
    std::string h, c;
    hits.AppendUrl(j, &h);
    clean.AppendUrl(j, &c);
    EXPECT_EQ((*checker)->Check(h).kind, VerdictKind::kHit) << h;
    const Verdict v = (*checker)->Check(c);
    EXPECT_NE(v.kind, VerdictKind::kInvalid) << c << ": " << v.error;
    clean_hits += v.kind == VerdictKind::kHit;
  }
  // The list is sized for 0.1% false positives per URL (20 expected of 20000); names are random, so a true hit
  // by chance is rarer still. 60 is 9 standard deviations above 20.
  EXPECT_LT(clean_hits, 60u);
}

TEST(BrowsingCorpusTest, HitRateIsAsAsked) {
  const ListCorpus list(1);
  const BrowsingCorpus none(&list, kEntries, 0.0), some(&list, kEntries, 0.1);
  int replaced = 0;
  for (uint64_t j = 0; j < 20000; ++j) {
    std::string a, c;
    none.AppendUrl(j, &a);
    some.AppendUrl(j, &c);
    replaced += c != a;  // a hit draw replaces the clean URL; otherwise the same draws give the same URL
  }
  // 10% of 20000, binomial standard deviation 42: 6 sigma either way.
  EXPECT_GT(replaced, 2000 - 260);
  EXPECT_LT(replaced, 2000 + 260);
}

TEST(BrowsingCorpusTest, DeepMixProbesMoreThanTheBenchMix) {
  // The deep mix's promise (corpus.h): 3-6 host labels (2-5 host strings), 2-8 path segments, queries on 70%,
  // no IP hosts; it exists to probe more than the bench mix, near the Safe Browsing maximum on its heavy end.
  const ListCorpus list(1);
  const BrowsingCorpus bench(&list, kEntries, 0.0, 7), deep(&list, kEntries, 0.0, 7, BrowsingMix::kDeep);
  constexpr int kUrls = 20000;
  CanonicalUrl canon;
  ExpressionList exprs;
  uint64_t bench_url_probes = 0, deep_url_probes = 0, deep_domain_probes = 0, at_max = 0, with_query = 0;
  for (uint64_t j = 0; j < kUrls; ++j) {
    std::string b, d;
    bench.AppendUrl(j, &b);
    deep.AppendUrl(j, &d);
    ASSERT_TRUE(Canonicalize(b, &canon).ok()) << b;
    MakeExpressions(canon, &exprs);
    for (size_t i = 0; i < exprs.size(); ++i) bench_url_probes += !exprs.is_host_root(i);
    ASSERT_TRUE(Canonicalize(d, &canon).ok()) << d;
    ASSERT_EQ(canon.host_kind, HostKind::kName) << d;
    with_query += d.find('?') != std::string::npos;
    MakeExpressions(canon, &exprs);
    ASSERT_GE(exprs.host_count(), 2u) << d;
    ASSERT_LE(exprs.host_count(), 5u) << d;
    uint64_t dp = 0, up = 0;
    for (size_t i = 0; i < exprs.size(); ++i) (exprs.is_host_root(i) ? dp : up) += 1;
    ASSERT_EQ(dp, exprs.host_count()) << d;
    ASSERT_GE(up, 2 * dp) << d;  // at least "/a/" and the exact path under every host
    deep_domain_probes += dp;
    deep_url_probes += up;
    at_max += dp == 5 && up == 25;
  }
  // Query on 70% (binomial sd 65 of 20000: 6 sd either way).
  EXPECT_NEAR(static_cast<double>(with_query), 0.7 * kUrls, 400);
  // The bench mix makes about 4.3 url probes per URL; the deep mix several times that, and some URLs reach the
  // 5 x 25 maximum.
  EXPECT_LT(bench_url_probes, 5u * kUrls);
  EXPECT_GT(deep_url_probes, 2 * bench_url_probes);
  EXPECT_GT(deep_domain_probes, 3u * kUrls);
  EXPECT_GT(at_max, 0u);
}

}  // namespace
}  // namespace urlguard::bench
