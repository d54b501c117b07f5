// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Filter sizing: what a list of N entries costs at a per-URL false-positive rate, for each filter structure
// urlguard can build, next to the classic Bloom formulas and the information-theoretic limit (`urlguard plan`).
//
// A URL makes one filter probe per lookup expression (its whole-host and host+path expressions), each of which may
// hit falsely. Lists are sized for the Safe Browsing maximum, 5 host strings x 6 path strings = 30 probes (5
// whole-host, 25 others), so the per-probe rate is the per-URL target divided by 30 and the target holds for every
// URL, whatever its shape; a typical URL (about 6 probes) is flagged at about a fifth of it (docs/scale.md §3).
//
// Thread safety: pure functions.
#ifndef URLGUARD_PLAN_H_
#define URLGUARD_PLAN_H_

#include <cstdint>
#include <string>

#include "urlguard/export.h"
#include "urlguard/status.h"

namespace urlguard {

// One structure's cost.
struct FilterCost {
  double bits_per_entry = 0;
  double total_megabytes = 0;     // 10^6 bytes
  double hashes = 0;              // hash functions (Bloom structures; 0 for the fingerprint array)
  double fp_rate_per_url = 0;     // the resulting false-positive rate per URL
};

struct FilterPlan {
  uint64_t entries = 0;
  double fp_rate_per_url = 0;     // the target
  double probes_per_url = 0;      // probes per URL the sizing holds for: sized_domain_probes + sized_url_probes
  double sized_domain_probes = 0; // whole-host expressions (domain layer), at most 5
  double sized_url_probes = 0;    // the other expressions (url layer), at most 25
  double fp_rate_per_probe = 0;   // fp_rate_per_url / probes_per_url
  double typical_probes_per_url = 0;   // a typical browsing URL's probes (bench/'s browsing corpus mean)
  double typical_fp_rate_per_url = 0;  // what such a URL sees with the fingerprint array
  FilterCost classic_bloom;       // m = -n ln p / (ln 2)^2, k = (m/n) ln 2
  FilterCost blocked_bloom;       // one cache line per key (what --filter blocked-bloom builds)
  FilterCost fingerprint_array;   // the default structure: exact on fingerprints, diffs apply to it
  uint64_t fingerprint_universe = 0;  // U = n / p_probe
  FilterCost limit;               // log2(1/p_probe) bits per entry
};

// Sizes every structure for `entries` entries at `fp_rate_per_url`. kInvalidArgument unless entries > 0 and
// 0 < fp_rate_per_url < 1.
URLGUARD_EXPORT Result<FilterPlan> PlanFilter(uint64_t entries, double fp_rate_per_url);

// The plan as the table `urlguard plan` prints (several lines, ending in '\n').
URLGUARD_EXPORT std::string RenderFilterPlanText(const FilterPlan& plan);

}  // namespace urlguard

#endif  // URLGUARD_PLAN_H_
