// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// fp_bench: the per-URL false-positive rate that `--fp-rate P` gives on held-out traffic, at 1 M, 10 M and 100 M
// list entries (issue 20, "false-positive sizing that holds"), for the sizing every list gets now
// (kSizingProbeModel: the Safe Browsing maximum of 5 domain and 25 url probes per URL, core/probe_model.h) and,
// measured in the same run as the baseline, the rule before it (kLegacyProbeModel: 2.5 and 6).
//
// For each size N the list is bench/corpus.h's ListCorpus (40% domains, 55% URLs, 5% IPs and ranges), built in
// process by the real ListBuilder (publish/list_builder.h: the same universes the publisher's UniverseForCount
// chooses, without its 10% first-version headroom) into real snapshot bytes, and looked up through the
// client's FilterChain. The traffic is BrowsingCorpus's clean URLs (hit rate 0, seed 7: not the lookup
// benchmarks' seed) of two mixes: "bench" (the shapes the old rule was fitted to) and "deep" (3-6 host labels,
// 2-8 path segments, queries on 70%). A URL counts once however many of its probes hit; a URL one of whose
// expressions is really listed (64-bit key in the builder's sorted keys) is a true hit, not a false positive.
//
//   fp_bench [--entries N[,N...]] [--urls M] [--fp-rate P]
//       defaults: 1000000,10000000,100000000; M = 1000000 per mix; P = 0.001.
//       URLGUARD_BENCH_ENTRIES=N (perf_table.py) runs that one size.
//
// Prints a readable table on stderr and JSON rows (bench/perf_table.py's shape) on stdout:
//   fp_url_pct_<N>_<mix>   measured per-URL rate in %, baseline legacy_sizing_pct, with the probe counts seen
//   fp_bits_per_entry_<N>  snapshot bytes * 8 / N, baseline legacy_sizing (and the ratio)
// 100 M entries need about 3 GB of memory at the peak (the keys, the fingerprints, two snapshots) and a few
// minutes of CPU; the reported times are CPU seconds (bench/cpu_time.h), the machine being shared.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/cpu_time.h"
#include "bench/corpus.h"
#include "client/filter_chain.h"
#include "core/key_hash.h"
#include "core/probe_model.h"
#include "core/snapshot.h"
#include "publish/list_builder.h"
#include "url/entry.h"
#include "url/url_canon.h"

namespace urlguard::bench {
namespace {


// A snapshot built from the list with one sizing, held in 8-byte-aligned memory, and a chain over it.
struct Built {
  std::vector<uint64_t> words;
  uint64_t bytes = 0;
  double fp_per_probe[3] = {0, 0, 0};
  FilterChain chain;
};

std::unique_ptr<Built> Build(ListBuilder* builder, double fp_rate, const ProbeModel& model) {
  BuildOptions o;
  o.list_name = "fp-bench";
  o.fp_rate = fp_rate;
  o.probes = model;
  LayerBuildStats stats[3];
  auto content = builder->Finish(o, stats);
  if (!content.ok()) {
    std::fprintf(stderr, "fp_bench: %s\n", content.status().ToString().c_str());
    std::exit(1);
  }
  auto bytes = BuildSnapshot(*content);
  if (!bytes.ok()) std::abort();
  *content = SnapshotContent();  // the fingerprints: 8 bytes per entry, freed before the next build
  auto b = std::make_unique<Built>();
  b->bytes = bytes->size();
  b->words.resize((bytes->size() + 7) / 8);
  std::memcpy(b->words.data(), bytes->data(), bytes->size());
  bytes->clear();
  bytes->shrink_to_fit();
  for (int l = 0; l < 3; ++l) b->fp_per_probe[l] = stats[l].expected_fp_per_probe;
  auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(b->words.data()), b->bytes, false);
  if (!view.ok()) std::abort();
  b->chain = FilterChain({*view});
  return b;
}

bool Listed(const ListBuilder& builder, LayerKind layer, uint64_t key) {
  const std::vector<uint64_t>& keys = builder.keys(layer);
  return std::binary_search(keys.begin(), keys.end(), key);
}

// True when some expression of the URL in `s` (after a Probe) is really on the list.
bool TrulyListed(const ListBuilder& builder, const LookupScratch& s) {
  const uint64_t* keys = s.keys[static_cast<size_t>(KeyHashKind::kXxh3)];
  for (size_t i = 0; i < s.expressions.size(); ++i) {
    if (Listed(builder, s.expressions.is_host_root(i) ? LayerKind::kDomain : LayerKind::kUrl, keys[i])) return true;
  }
  if (s.url.host_kind != HostKind::kName) {
    const bool v6 = s.url.host_kind == HostKind::kIpv6;
    char buf[kMaxIpExpressionBytes];
    for (int len = v6 ? 128 : 32; len >= 0; --len) {
      if (Listed(builder, LayerKind::kIp, Xxh3Key(std::string_view(buf, IpPrefixExpression(s.url.ip, v6, len, buf))))) {
        return true;
      }
    }
  }
  return false;
}

struct MixResult {
  uint64_t urls = 0, canon_failed = 0, true_hits = 0;
  uint64_t fp_new = 0, fp_legacy = 0;
  uint64_t domain_probes = 0, url_probes = 0, ip_probes = 0;
  uint64_t max_domain = 0, max_url = 0;
  uint64_t at_max = 0;  // URLs with 5 domain and 25 url probes (the Safe Browsing maximum)
  uint64_t url_hist[31] = {};
  double predicted_new = 0, predicted_legacy = 0;  // sum over URLs of the model's per-URL rate
  double cpu_s = 0;
};

uint64_t Percentile(const uint64_t hist[31], uint64_t total, double q) {
  uint64_t acc = 0;
  for (int i = 0; i <= 30; ++i) {
    acc += hist[i];
    if (static_cast<double>(acc) >= q * static_cast<double>(total)) return static_cast<uint64_t>(i);
  }
  return 30;
}

MixResult Measure(const ListBuilder& builder, const ListCorpus& list, uint64_t entries, BrowsingMix mix,
                  uint64_t urls, const Built& fresh, const Built& legacy, int ip_lengths) {
  MixResult r;
  BrowsingCorpus corpus(&list, entries, 0.0, /*seed=*/7, mix);
  LookupScratch s;
  std::string url;
  const double cpu0 = ProcessCpuSeconds();
  for (uint64_t j = 0; j < urls; ++j) {
    url.clear();
    corpus.AppendUrl(j, &url);
    ++r.urls;
    if (!fresh.chain.LookupUrl(url, &s).ok()) {
      ++r.canon_failed;
      continue;
    }
    const bool hit_new = s.hit_count > 0;
    legacy.chain.Probe(&s);
    const bool hit_legacy = s.hit_count > 0;
    uint64_t d = 0, u = 0;
    for (size_t i = 0; i < s.expressions.size(); ++i) (s.expressions.is_host_root(i) ? d : u) += 1;
    const uint64_t ip = s.url.host_kind != HostKind::kName ? static_cast<uint64_t>(ip_lengths) : 0;
    r.domain_probes += d;
    r.url_probes += u;
    r.ip_probes += ip;
    r.max_domain = std::max(r.max_domain, d);
    r.max_url = std::max(r.max_url, u);
    r.at_max += d == 5 && u == 25;
    ++r.url_hist[std::min<uint64_t>(u, 30)];
    auto predicted = [&](const Built& b) {
      return static_cast<double>(d) * b.fp_per_probe[0] + static_cast<double>(u) * b.fp_per_probe[1] +
             static_cast<double>(ip) * b.fp_per_probe[2];
    };
    r.predicted_new += predicted(fresh);
    r.predicted_legacy += predicted(legacy);
    if ((hit_new || hit_legacy) && TrulyListed(builder, s)) {
      ++r.true_hits;
      continue;
    }
    r.fp_new += hit_new;
    r.fp_legacy += hit_legacy;
  }
  r.cpu_s = ProcessCpuSeconds() - cpu0;
  return r;
}

std::vector<uint64_t> ParseSizes(const char* text) {
  std::vector<uint64_t> out;
  const char* p = text;
  while (*p != '\0') {
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    if (end == p) break;
    out.push_back(static_cast<uint64_t>(v));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

int Main(int argc, char** argv) {
  std::vector<uint64_t> sizes = {1000000, 10000000, 100000000};
  uint64_t urls = 1000000;
  double fp_rate = 0.001;
  if (const char* e = std::getenv("URLGUARD_BENCH_ENTRIES"); e != nullptr && *e != '\0') sizes = ParseSizes(e);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--entries") == 0 && i + 1 < argc) {
      sizes = ParseSizes(argv[++i]);
    } else if (std::strcmp(argv[i], "--urls") == 0 && i + 1 < argc) {
      urls = static_cast<uint64_t>(std::strtod(argv[++i], nullptr));
    } else if (std::strcmp(argv[i], "--fp-rate") == 0 && i + 1 < argc) {
      fp_rate = std::strtod(argv[++i], nullptr);
    } else {
      std::fprintf(stderr, "usage: fp_bench [--entries N[,N...]] [--urls M] [--fp-rate P]\n");
      return 2;
    }
  }
  if (sizes.empty() || urls == 0 || !(fp_rate > 0 && fp_rate < 1)) {
    std::fprintf(stderr, "fp_bench: bad --entries, --urls or --fp-rate\n");
    return 2;
  }
  const ListCorpus list(1);
  std::fprintf(stderr, "fp_bench: --fp-rate %g, %llu clean URLs per mix; sizing %g domain + %g url probes (legacy %g + %g)\n",
               fp_rate, static_cast<unsigned long long>(urls), kSizingProbeModel.domain, kSizingProbeModel.url,
               kLegacyProbeModel.domain, kLegacyProbeModel.url);
  for (uint64_t n : sizes) {
    if (n == 0 || n > ListCorpus::kMaxEntries) continue;
    double cpu0 = ProcessCpuSeconds();
    ListBuilder builder;
    std::string entry;
    for (uint64_t i = 0; i < n; ++i) {
      entry.clear();
      list.AppendEntry(i, &entry);
      if (!builder.Add(entry).ok()) std::abort();
    }
    const double add_s = ProcessCpuSeconds() - cpu0;
    cpu0 = ProcessCpuSeconds();
    std::unique_ptr<Built> legacy = Build(&builder, fp_rate, kLegacyProbeModel);
    std::unique_ptr<Built> fresh = Build(&builder, fp_rate, kSizingProbeModel);
    const double build_s = ProcessCpuSeconds() - cpu0;
    // The ip layer's probes per IP-host URL: its prefix-length count (what the builder sized it with).
    int ip_lengths = 0;
    if (const LayerView* ip = fresh->chain.lists()[0].layer(LayerKind::kIp)) {
      int v4 = 0, v6 = 0;
      for (int l = 0; l <= 32; ++l) v4 += ip->ip_prefixes.HasV4(l);
      for (int l = 0; l <= 128; ++l) v6 += ip->ip_prefixes.HasV6(l);
      ip_lengths = std::max(v4, v6);
    }
    const double bpe_new = static_cast<double>(fresh->bytes) * 8 / static_cast<double>(n);
    const double bpe_old = static_cast<double>(legacy->bytes) * 8 / static_cast<double>(n);
    std::fprintf(stderr, "\n%llu entries: add %.1f s CPU, two builds %.1f s CPU; %.3f bits/entry (legacy %.3f, x%.4f)\n",
                 static_cast<unsigned long long>(n), add_s, build_s, bpe_new, bpe_old, bpe_new / bpe_old);
    std::printf("{\"row\": \"fp_bits_per_entry_%llu\", \"value\": %.4f, \"unit\": \"bits/entry\", "
                "\"baselines\": {\"legacy_sizing\": %.4f, \"ratio\": %.4f}, \"bytes\": %llu, \"legacy_bytes\": %llu, "
                "\"note\": \"snapshot bytes * 8 / entries, ListCorpus mix\"}\n",
                static_cast<unsigned long long>(n), bpe_new, bpe_old, bpe_new / bpe_old,
                static_cast<unsigned long long>(fresh->bytes), static_cast<unsigned long long>(legacy->bytes));
    std::fflush(stdout);
    for (BrowsingMix mix : {BrowsingMix::kBench, BrowsingMix::kDeep}) {
      const char* mix_name = mix == BrowsingMix::kBench ? "bench" : "deep";
      const MixResult r = Measure(builder, list, n, mix, urls, *fresh, *legacy, ip_lengths);
      const double probed = static_cast<double>(r.urls - r.canon_failed);
      const double clean = static_cast<double>(r.urls - r.canon_failed - r.true_hits);
      const double pct_new = 100.0 * static_cast<double>(r.fp_new) / clean;
      const double pct_old = 100.0 * static_cast<double>(r.fp_legacy) / clean;
      const uint64_t probed_n = r.urls - r.canon_failed;
      std::fprintf(stderr,
                   "  %-5s: per URL %.4f%% (legacy sizing %.4f%%; model predicts %.4f%% / %.4f%%), %llu / %llu false; "
                   "probes per URL domain %.2f url %.2f ip %.3f, url probes p50 %llu p90 %llu p99 %llu max %llu, "
                   "%.2f%% at the 5 x 25 maximum; %.1f s CPU\n",
                   mix_name, pct_new, pct_old, 100 * r.predicted_new / probed, 100 * r.predicted_legacy / probed,
                   static_cast<unsigned long long>(r.fp_new), static_cast<unsigned long long>(r.fp_legacy),
                   static_cast<double>(r.domain_probes) / probed, static_cast<double>(r.url_probes) / probed,
                   static_cast<double>(r.ip_probes) / probed,
                   static_cast<unsigned long long>(Percentile(r.url_hist, probed_n, 0.5)),
                   static_cast<unsigned long long>(Percentile(r.url_hist, probed_n, 0.9)),
                   static_cast<unsigned long long>(Percentile(r.url_hist, probed_n, 0.99)),
                   static_cast<unsigned long long>(r.max_url), 100.0 * static_cast<double>(r.at_max) / probed,
                   r.cpu_s);
      std::printf("{\"row\": \"fp_url_pct_%llu_%s\", \"value\": %.5f, \"unit\": \"%%\", "
                  "\"baselines\": {\"legacy_sizing_pct\": %.5f, \"target_pct\": %.5f, \"predicted_pct\": %.5f, "
                  "\"legacy_predicted_pct\": %.5f}, \"urls\": %llu, \"false_positives\": %llu, "
                  "\"legacy_false_positives\": %llu, \"true_hits\": %llu, \"domain_probes\": %.3f, "
                  "\"url_probes\": %.3f, \"url_probes_p99\": %llu, \"bits_per_entry\": %.4f, "
                  "\"legacy_bits_per_entry\": %.4f, \"cpu_s\": %.2f, \"note\": \"clean URLs flagged, each once\"}\n",
                  static_cast<unsigned long long>(n), mix_name, pct_new, pct_old, fp_rate * 100,
                  100 * r.predicted_new / probed, 100 * r.predicted_legacy / probed,
                  static_cast<unsigned long long>(r.urls), static_cast<unsigned long long>(r.fp_new),
                  static_cast<unsigned long long>(r.fp_legacy), static_cast<unsigned long long>(r.true_hits),
                  static_cast<double>(r.domain_probes) / probed, static_cast<double>(r.url_probes) / probed,
                  static_cast<unsigned long long>(Percentile(r.url_hist, probed_n, 0.99)), bpe_new, bpe_old, r.cpu_s);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace urlguard::bench

int main(int argc, char** argv) { return urlguard::bench::Main(argc, argv); }
