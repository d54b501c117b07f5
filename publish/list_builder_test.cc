// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// ListBuilder's sizing keeps the per-URL false-positive target for every URL up to the Safe Browsing maximum of
// 5 whole-host + 25 other expressions (core/probe_model.h), at every list size and layer mix.
#include "publish/list_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "core/byte_io.h"

namespace urlguard {
namespace {

void AddMix(ListBuilder* b, uint64_t domains, uint64_t urls, uint64_t ips) {
  for (uint64_t i = 0; i < domains; ++i) ASSERT_TRUE(b->Add("d" + std::to_string(i) + ".example.com").ok());
  for (uint64_t i = 0; i < urls; ++i) ASSERT_TRUE(b->Add("u" + std::to_string(i) + ".example.net/a/b.html").ok());
  for (uint64_t i = 0; i < ips; ++i) {
    ASSERT_TRUE(b->Add("10." + std::to_string(i / 65536 % 256) + "." + std::to_string(i / 256 % 256) + "." +
                       std::to_string(i % 256)).ok());
  }
}

TEST(ListBuilderSizing, UniverseIsProbesTimesEntriesOverRate) {
  IpPrefixLengths none;
  EXPECT_EQ(UniverseForCount(LayerKind::kDomain, 1000000, none, 0.001), 5000000000u);
  EXPECT_EQ(UniverseForCount(LayerKind::kUrl, 1000000, none, 0.001), 25000000000u);
  EXPECT_EQ(UniverseForCount(LayerKind::kDomain, 1000000, none, 0.001, kLegacyProbeModel), 2500000000u);
  EXPECT_EQ(UniverseForCount(LayerKind::kUrl, 1000000, none, 0.001, kLegacyProbeModel), 6000000000u);
  // Rounded up, never down: a layer never gets a smaller universe (a higher rate) than k N / p.
  EXPECT_EQ(UniverseForCount(LayerKind::kDomain, 3, none, 0.7), 22u);  // 5 * 3 / 0.7 = 21.43
  EXPECT_EQ(UniverseForCount(LayerKind::kUrl, 0, none, 0.5), 50u);     // N counts as at least 1
}

// For each size and mix: the rate the built layers give a URL at the maximum (5 domain, 25 url probes, or an IP
// host's probes) is at most p, from the fingerprint counts the builder reports (no sampling).
TEST(ListBuilderSizing, HeaviestUrlStaysWithinTargetAtEverySize) {
  const double p = 0.001;
  struct Mix {
    uint64_t domains, urls, ips;
  } mixes[] = {{1, 0, 0}, {0, 1, 0}, {400, 550, 50}, {4000, 5500, 500}, {12345, 0, 0}, {0, 23456, 0}, {7, 30011, 3}};
  for (const Mix& m : mixes) {
    ListBuilder b;
    AddMix(&b, m.domains, m.urls, m.ips);
    BuildOptions o;
    o.list_name = "sizing";
    o.fp_rate = p;
    LayerBuildStats stats[3];
    auto content = b.Finish(o, stats);
    ASSERT_TRUE(content.ok()) << content.status().ToString();
    const double heaviest_name = 5 * stats[0].expected_fp_per_probe + 25 * stats[1].expected_fp_per_probe;
    const double heaviest_ip = 1 * stats[0].expected_fp_per_probe + 5 * stats[1].expected_fp_per_probe +
                               1 * stats[2].expected_fp_per_probe;  // one prefix length (/32) in these lists
    // (1 + 1e-12: the stats are doubles; a one-entry list sits exactly at p.)
    EXPECT_LE(heaviest_name, p * (1 + 1e-12)) << m.domains << "/" << m.urls << "/" << m.ips;
    EXPECT_LE(heaviest_ip, p * (1 + 1e-12)) << m.domains << "/" << m.urls << "/" << m.ips;

    // The rule before issue 20 did not hold there whenever url entries dominate: 25 probes against a layer
    // sized for 6.
    BuildOptions legacy = o;
    legacy.probes = kLegacyProbeModel;
    LayerBuildStats old_stats[3];
    ASSERT_TRUE(b.Finish(legacy, old_stats).ok());
    const double old_heaviest = 5 * old_stats[0].expected_fp_per_probe + 25 * old_stats[1].expected_fp_per_probe;
    if (m.urls > m.domains) {
      EXPECT_GT(old_heaviest, 2 * p) << m.domains << "/" << m.urls;
    }
  }
}

// Sampled: random keys (hence random "URLs" of 5 + 25 expressions, none listed) against the fingerprints the
// builder made. Expected rate <= p (exactly p * (n_d + n_u) / N here); 20000 URLs at p = 0.01 give ~200 false
// hits, binomial sd ~14, so p * 20000 + 60 is 4 sd above the expectation; the legacy sizing expects ~600.
TEST(ListBuilderSizing, SampledHeaviestUrlRate) {
  const double p = 0.01;
  ListBuilder b;
  AddMix(&b, 20000, 30000, 0);
  BuildOptions o;
  o.list_name = "sampled";
  o.fp_rate = p;
  auto count_false = [&](const BuildOptions& opts) {
    LayerBuildStats stats[3];
    auto content = b.Finish(opts, stats);
    EXPECT_TRUE(content.ok());
    if (!content.ok()) return uint64_t{0};
    const LayerContent* layer[2] = {nullptr, nullptr};
    for (const LayerContent& l : content->layers) {
      if (l.kind != LayerKind::kIp) layer[static_cast<int>(l.kind)] = &l;
    }
    std::mt19937_64 rng(42);
    uint64_t flagged = 0;
    for (int url = 0; url < 20000; ++url) {
      bool hit = false;
      for (int probe = 0; probe < 30; ++probe) {
        const LayerContent& l = *layer[probe < 5 ? static_cast<int>(LayerKind::kDomain) : static_cast<int>(LayerKind::kUrl)];
        const uint64_t fp = MulHi64(rng(), l.universe);
        hit |= std::binary_search(l.fingerprints.begin(), l.fingerprints.end(), fp);
      }
      flagged += hit;
    }
    return flagged;
  };
  const uint64_t now = count_false(o);
  BuildOptions legacy = o;
  legacy.probes = kLegacyProbeModel;
  const uint64_t before = count_false(legacy);
  EXPECT_LT(now, static_cast<uint64_t>(p * 20000 + 60));
  EXPECT_GT(before, static_cast<uint64_t>(2 * p * 20000));
}

}  // namespace
}  // namespace urlguard
