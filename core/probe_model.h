// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Probes per URL that the filters are sized for (publish/list_builder.h builds to them; `urlguard plan` reports
// them).
//
// A URL probes the domain layer once per whole-host expression ("a.b.c/", one per host string: at most 5) and
// the url layer once per other expression (host strings x the other path strings: at most 5 x 5 = 25); the
// Safe Browsing expansion stops at 5 hosts x 6 paths (url/url_canon.h, kMaxExpressions = 30). The builder gives
// layer L the universe U_L = k_L N / p (list_builder.h), so a URL that makes d domain and u url probes is flagged
// falsely with probability at most
//     p * (d / k_domain * n_domain / N  +  u / k_url * n_url / N)   <=   p * max(d / k_domain, u / k_url).
// Sizing for the maximum (k_domain = 5, k_url = 25) therefore holds the target p for EVERY URL, whatever its shape
// and whatever the list's layer mix: a rate that holds on anyone's traffic, not only on traffic shaped like ours.
//
// The price, measured with bench/fp_bench (docs/scale.md §3): +1.0 bit per domain entry and +2.06 bits per url
// entry over the rule before issue 20 (2.5 and 6 probes: the mean of bench/'s browsing corpus, 1.86 and 4.28,
// plus a margin), x1.0996 bytes for ListCorpus's 40% domain / 55% url / 5% ip mix. That rule gave 0.106% per
// URL on held-out traffic with --fp-rate 0.001; it is kept as kLegacyProbeModel for the benchmarks' baselines.
//
// An IP-host URL probes its ip layer once per prefix length present, so that layer is sized with its own
// prefix-length count (which is also its maximum), and makes one domain probe and at most 5 url probes.
#ifndef URLGUARD_CORE_PROBE_MODEL_H_
#define URLGUARD_CORE_PROBE_MODEL_H_

namespace urlguard {

// Probes per URL in the domain and url layers that a sizing is made for.
struct ProbeModel {
  double domain;
  double url;
};

// What every list is sized for: the Safe Browsing maximum, 5 host strings x (1 + 5) path strings.
constexpr ProbeModel kSizingProbeModel = {5.0, 25.0};
// The rule before issue 20 (about the mean of bench/'s browsing corpus plus 35%): for baselines only.
constexpr ProbeModel kLegacyProbeModel = {2.5, 6.0};

// The sizing's probe counts under their older names (client/filter_plan.cc, the benchmarks).
constexpr double kExpectedDomainProbes = kSizingProbeModel.domain;
constexpr double kExpectedUrlProbes = kSizingProbeModel.url;

}  // namespace urlguard

#endif  // URLGUARD_CORE_PROBE_MODEL_H_
