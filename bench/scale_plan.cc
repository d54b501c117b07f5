// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// scale_plan: the list-file arithmetic behind docs/scale.md — for list sizes far beyond what a benchmark run can
// build (100 M, 1.2 B), the bytes and false-positive rates the publisher's sizing rule gives, computed with the
// library's own functions rather than re-derived: universes as publish/list_builder.cc chooses them
// (U_L = k_L * N / p, k_L from core/probe_model.h; the ip layer's k is its number of prefix lengths) and bits per
// entry from FingerprintSetBitsPerEntry (core/fingerprint_set.h: r + 1 + Q/n (1 + 32/128) plus the header).
// The layer mix is bench/corpus.h's ListCorpus (40% domain, 55% url, 5% ip with /32, /24 and /128 entries).
//
//   scale_plan [--fp-rate P] [--json] [N ...]        (default: 1e6 1e7 1e8 1.2e9, p = 0.001)
//
// Prints one line per N and layer; with --json (or URLGUARD_BENCH_JSON=1) one JSON row per N instead.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/fingerprint_set.h"
#include "core/probe_model.h"

namespace urlguard::bench {
namespace {

struct LayerShare {
  const char* name;
  double share;   // of the entries
  double probes;  // k_L: expected probes per URL
};

// ListCorpus's mix; the ip layer holds /32 and /24 IPv4 entries (two prefix lengths) and /128 IPv6 ones (one).
constexpr LayerShare kLayers[] = {{"domain", 0.40, kExpectedDomainProbes},
                                  {"url", 0.55, kExpectedUrlProbes},
                                  {"ip", 0.05, 2.0}};

// Measured browsing probes per URL (bench/lookup_bench on the browsing corpus; core/probe_model.h): the
// per-URL rate a real browsing mix sees, below the sizing target.
constexpr double kMeasuredProbes[] = {1.86, 4.28, 0.02 * 2};

int Main(int argc, char** argv) {
  double p = 0.001;
  bool json = std::getenv("URLGUARD_BENCH_JSON") != nullptr && std::strcmp(std::getenv("URLGUARD_BENCH_JSON"), "1") == 0;
  std::vector<double> sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--fp-rate") == 0 && i + 1 < argc) {
      p = std::strtod(argv[++i], nullptr);
    } else {
      sizes.push_back(std::strtod(argv[i], nullptr));
    }
  }
  if (!(p > 0 && p < 1)) {
    std::fprintf(stderr, "scale_plan: --fp-rate must be between 0 and 1\n");
    return 4;
  }
  if (sizes.empty()) sizes = {1e6, 1e7, 1e8, 1.2e9};
  if (!json) std::printf("%14s %-7s %14s %18s %10s %12s %14s\n", "entries", "layer", "n", "universe", "bits/entry",
                         "FP/probe", "bytes");
  for (double size : sizes) {
    const uint64_t total = static_cast<uint64_t>(size);
    double bits = 0, fp_target = 0, fp_browsing = 0;
    bool fits = true;
    for (size_t l = 0; l < std::size(kLayers); ++l) {
      const uint64_t n = static_cast<uint64_t>(static_cast<double>(total) * kLayers[l].share);
      const double u_real = kLayers[l].probes * static_cast<double>(total) / p;
      const uint64_t u = static_cast<uint64_t>(u_real);
      const double bpe = FingerprintSetBitsPerEntry(n, u);
      const double fp_probe = static_cast<double>(n) / static_cast<double>(u);
      bits += bpe * static_cast<double>(n);
      fp_target += kLayers[l].probes * fp_probe;
      fp_browsing += kMeasuredProbes[l] * fp_probe;
      if (n > kMaxLayerEntries) fits = false;
      if (!json) {
        std::printf("%14llu %-7s %14llu %18llu %10.2f %12.3g %14.0f%s\n", static_cast<unsigned long long>(total),
                    kLayers[l].name, static_cast<unsigned long long>(n), static_cast<unsigned long long>(u), bpe,
                    fp_probe, bpe * static_cast<double>(n) / 8, n > kMaxLayerEntries ? "  (over kMaxLayerEntries)" : "");
      }
    }
    const double bytes = bits / 8;
    const double per_entry = bits / static_cast<double>(total);
    if (json) {
      std::printf("{\"row\": \"scale_plan.list_bytes.%gM\", \"value\": %.0f, \"unit\": \"B\", \"baselines\": {}, "
                  "\"note\": \"%.3f bits per entry, per-URL FP %.3g at the sizing probes (target %g), %.3g with the "
                  "measured browsing probes%s\"}\n",
                  size / 1e6, bytes, per_entry, fp_target, p, fp_browsing, fits ? "" : "; a layer exceeds kMaxLayerEntries");
    } else {
      std::printf("%14llu %-7s %14s %18s %10.2f %12s %14.0f  FP per URL %.3g (sizing), %.3g (measured probes)\n",
                  static_cast<unsigned long long>(total), "all", "", "", per_entry, "", bytes, fp_target, fp_browsing);
    }
  }
  return 0;
}

}  // namespace
}  // namespace urlguard::bench

int main(int argc, char** argv) { return urlguard::bench::Main(argc, argv); }
