// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Filter sizing for `urlguard plan` (include/urlguard/plan.h).
#include "urlguard/plan.h"

#include <cmath>
#include <cstdio>

#include "core/blocked_bloom.h"
#include "core/fingerprint_set.h"
#include "core/probe_model.h"

namespace urlguard {
namespace {

// Mean probes per URL of bench/'s browsing corpus (1.86 whole-host + 4.28 others; bench/fp_bench prints them).
constexpr double kTypicalProbesPerUrl = 1.86 + 4.28;

}  // namespace

Result<FilterPlan> PlanFilter(uint64_t n, double p) {
  if (n == 0 || !(p > 0 && p < 1)) {
    return Status::InvalidArgument("entries must be > 0 and 0 < fp-rate < 1");
  }
  FilterPlan plan;
  plan.entries = n;
  plan.fp_rate_per_url = p;
  plan.sized_domain_probes = kSizingProbeModel.domain;
  plan.sized_url_probes = kSizingProbeModel.url;
  plan.probes_per_url = plan.sized_domain_probes + plan.sized_url_probes;
  const double probes = plan.probes_per_url;
  const double eps = p / probes;  // the per-probe rate that gives p per URL
  plan.fp_rate_per_probe = eps;
  const double nd = static_cast<double>(n);
  auto mb = [&](double bits_per_entry) { return bits_per_entry * nd / 8 / 1e6; };
  auto per_url = [&](double per_probe) { return 1 - std::pow(1 - per_probe, probes); };

  const double ln2 = std::log(2.0);
  const double m = -nd * std::log(eps) / (ln2 * ln2);
  plan.classic_bloom = {m / nd, mb(m / nd), m / nd * ln2, p};

  // What the list builder uses (--filter blocked-bloom): the blocking penalty included, so the rate holds.
  BloomSizing blocked = SizeBlockedBloomForTarget(n, eps);
  plan.blocked_bloom = {blocked.bits_per_entry, mb(blocked.bits_per_entry), static_cast<double>(blocked.hashes),
                        per_url(blocked.expected_fp_rate)};

  plan.fingerprint_universe = static_cast<uint64_t>(std::ceil(nd / eps));
  const double fa_bits = FingerprintSetBitsPerEntry(n, plan.fingerprint_universe);
  plan.fingerprint_array = {fa_bits, mb(fa_bits), 0,
                            per_url(nd / static_cast<double>(plan.fingerprint_universe))};

  plan.typical_probes_per_url = kTypicalProbesPerUrl;
  plan.typical_fp_rate_per_url = 1 - std::pow(1 - nd / static_cast<double>(plan.fingerprint_universe),
                                              kTypicalProbesPerUrl);

  const double limit = std::log2(1 / eps);
  plan.limit = {limit, mb(limit), 0, p};
  return plan;
}

std::string RenderFilterPlanText(const FilterPlan& plan) {
  std::string out;
  char line[256];
  auto add = [&](int len) { out.append(line, static_cast<size_t>(len) < sizeof line ? len : sizeof line - 1); };
  add(std::snprintf(line, sizeof line,
                    "plan for %llu entries at a per-URL false-positive rate of %g (%.0f probes per URL, %.3g per "
                    "probe)\n\n",
                    static_cast<unsigned long long>(plan.entries), plan.fp_rate_per_url, plan.probes_per_url,
                    plan.fp_rate_per_probe));
  add(std::snprintf(line, sizeof line, "%-34s %12s %12s %10s %16s %14s\n", "structure", "bits/entry", "total MB",
                    "hashes", "probes per URL", "FP per URL"));
  add(std::snprintf(line, sizeof line, "%-34s %12.2f %12.2f %10.2f %16.0f %14.3g\n", "Bloom (classic formulas)",
                    plan.classic_bloom.bits_per_entry, plan.classic_bloom.total_megabytes, plan.classic_bloom.hashes,
                    plan.probes_per_url, plan.classic_bloom.fp_rate_per_url));
  add(std::snprintf(line, sizeof line, "%-34s %12.2f %12.2f %10.0f %16.0f %14.3g\n",
                    "blocked Bloom (one cache line/key)", plan.blocked_bloom.bits_per_entry,
                    plan.blocked_bloom.total_megabytes, plan.blocked_bloom.hashes, plan.probes_per_url,
                    plan.blocked_bloom.fp_rate_per_url));
  add(std::snprintf(line, sizeof line, "%-34s %12.2f %12.2f %10s %16.0f %14.3g\n", "fingerprint array (default)",
                    plan.fingerprint_array.bits_per_entry, plan.fingerprint_array.total_megabytes, "-",
                    plan.probes_per_url, plan.fingerprint_array.fp_rate_per_url));
  add(std::snprintf(line, sizeof line, "%-34s %12.2f %12.2f\n", "information-theoretic limit",
                    plan.limit.bits_per_entry, plan.limit.total_megabytes));
  add(std::snprintf(line, sizeof line,
                    "\nBloom: m = -n ln p / (ln 2)^2, k = (m/n) ln 2. Fingerprint array: universe U = n / p_probe = "
                    "%llu,\n",
                    static_cast<unsigned long long>(plan.fingerprint_universe)));
  out += "cost log2(U/n) + ~2.3 bits per entry, exact on fingerprints (diffs apply to it).\n";
  add(std::snprintf(line, sizeof line,
                    "\nTraffic the rate holds for: every URL. The sizing assumes %.0f whole-host + %.0f other "
                    "expressions\n",
                    plan.sized_domain_probes, plan.sized_url_probes));
  out += "per URL, the Safe Browsing maximum (5 hosts x 6 paths), so no URL probes more (a client checking\n"
         "K lists sees up to K times the rate: each list holds its own target).\n";
  add(std::snprintf(line, sizeof line, "A typical URL (%.1f probes) is flagged at about %.3g.\n",
                    plan.typical_probes_per_url, plan.typical_fp_rate_per_url));
  out += "The publisher splits the target by layer (docs/scale.md section 3).\n";
  return out;
}

}  // namespace urlguard
