// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The front half of a lookup, alone: canonicalization, then the lookup expressions and their XXH3 keys, over
// the browsing URLs of bench/lookup_bench (the same generator and seed), with no list to build first, so it
// runs in seconds and under callgrind.
//
// Stages (ns per URL, median of the rounds, wall and this thread's CPU time; the machine is often shared, so
// compare CPU time, or callgrind instruction counts with --stage):
//   canon            Canonicalize(): the fast path for already-canonical URLs, the full algorithm otherwise
//   canon_full       internal::CanonicalizeFullPath(): the full algorithm for every URL (the baseline the
//                    fast path is measured against; both give the same output, url_canon_test checks it)
//   canon_expr_keys  Canonicalize() + FilterChain::HashExpressions() (one XXH3 list): what a lookup does
//                    before its first probe
//   one_by_one       Canonicalize() + MakeExpressions() + one Xxh3Key() call per expression (what
//                    HashExpressions did before it hashed the list in one loop)
//
// Before/after of issue 20 (callgrind instructions per URL over the first 50 000 URLs, same machine): canon
// 2 079 -> 1 213, canon_expr_keys 3 647 -> 1 888 (the old MakeExpressions copied every expression whole).
// About a third of what remains in canon is the 1% of IDN hosts, whose labels go through libidn2 (about
// 32 000 instructions each).
//
//   canon_bench [--json] [--urls N] [--rounds R] [--stage NAME]
// --json (or URLGUARD_BENCH_JSON=1) prints the rows canon_ns and canon_expr_keys_ns as JSON objects for
// bench/perf_table.py, with the baselines of the same run. --stage runs one stage once over the URLs and
// prints nothing else, for `valgrind --tool=callgrind --toggle-collect='*RunStage*'`.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/cpu_time.h"
#include "bench/corpus.h"
#include "client/filter_chain.h"
#include "core/key_hash.h"
#include "core/snapshot.h"
#include "publish/list_builder.h"
#include "url/entry.h"
#include "url/url_canon.h"

namespace urlguard::bench {
namespace {


struct Timing {
  double wall_ns = 0;
  double cpu_ns = 0;
};

struct Bench {
  std::vector<std::string> urls;
  std::string snapshot;  // a small XXH3 list, so that HashExpressions computes XXH3 keys
  FilterChain chain;
  LookupScratch s;
  uint64_t sink = 0;
};

// One pass of `stage` over every URL. Not inlined, so that callgrind can collect exactly this.
__attribute__((noinline)) void RunStage(Bench& b, const std::string& stage) {
  uint64_t x = 0;
  if (stage == "canon") {
    for (const std::string& u : b.urls) x += Canonicalize(u, &b.s.url).ok();
  } else if (stage == "canon_full") {
    for (const std::string& u : b.urls) x += internal::CanonicalizeFullPath(u, &b.s.url).ok();
  } else if (stage == "canon_expr_keys") {
    for (const std::string& u : b.urls) {
      if (!Canonicalize(u, &b.s.url).ok()) continue;
      b.chain.HashExpressions(&b.s);
      x += b.s.keys[static_cast<size_t>(KeyHashKind::kXxh3)][0];
    }
  } else if (stage == "one_by_one") {
    for (const std::string& u : b.urls) {
      if (!Canonicalize(u, &b.s.url).ok()) continue;
      MakeExpressions(b.s.url, &b.s.expressions);
      for (size_t e = 0; e < b.s.expressions.size(); ++e) x ^= Xxh3Key(b.s.expressions[e]);
    }
  } else {
    std::fprintf(stderr, "canon_bench: unknown stage %s\n", stage.c_str());
    std::exit(2);
  }
  b.sink += x;
}

Timing Measure(Bench& b, const std::string& stage, int rounds) {
  std::vector<double> wall, cpu;
  for (int r = -1; r < rounds; ++r) {  // one warm-up round
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = ThreadCpuSeconds();
    RunStage(b, stage);
    const double c1 = ThreadCpuSeconds();
    const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r < 0) continue;
    wall.push_back(w * 1e9 / static_cast<double>(b.urls.size()));
    cpu.push_back((c1 - c0) * 1e9 / static_cast<double>(b.urls.size()));
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

void Row(bool json, const char* row, const Timing& t, const char* baseline, const Timing& base,
         const char* note) {
  if (json) {
    std::printf(
        "{\"row\": \"%s\", \"value\": %.1f, \"unit\": \"ns\", \"baselines\": {\"cpu_ns\": %.1f, "
        "\"%s\": %.1f, \"%s_cpu_ns\": %.1f}, \"note\": \"%s\"}\n",
        row, t.wall_ns, t.cpu_ns, baseline, base.wall_ns, baseline, base.cpu_ns, note);
  } else {
    std::printf("%-20s %7.1f ns wall %7.1f ns CPU   %-12s %7.1f ns wall %7.1f ns CPU  (%.2fx CPU)\n", row,
                t.wall_ns, t.cpu_ns, baseline, base.wall_ns, base.cpu_ns, base.cpu_ns / t.cpu_ns);
  }
  std::fflush(stdout);
}

}  // namespace
}  // namespace urlguard::bench

int main(int argc, char** argv) {
  using namespace urlguard;
  using namespace urlguard::bench;
  const char* env_json = std::getenv("URLGUARD_BENCH_JSON");
  bool json = env_json != nullptr && std::strcmp(env_json, "0") != 0;
  size_t n = 200000;
  int rounds = 7;
  std::string stage;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--urls" && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--stage" && i + 1 < argc) {
      stage = argv[++i];
    } else {
      std::fprintf(stderr, "usage: canon_bench [--json] [--urls N] [--rounds R] [--stage NAME]\n");
      return 2;
    }
  }
  Bench b;
  CorpusGenerator browse(2);  // lookup_bench's browsing URLs
  b.urls.reserve(n);
  for (size_t i = 0; i < n; ++i) b.urls.push_back(browse.BrowsingUrl());
  // A small list: what it holds does not matter, only that its keys are XXH3.
  ListBuilder builder;
  CorpusGenerator list(1);
  for (int i = 0; i < 1000; ++i) {
    auto key = EntryKeyFor(list.ListEntry());
    if (key.ok()) builder.AddKey(*key);
  }
  BuildOptions o;
  o.list_name = "canon-bench";
  LayerBuildStats stats[3];
  auto content = builder.Finish(o, stats);
  if (!content.ok()) return 1;
  auto bytes = BuildSnapshot(*content);
  if (!bytes.ok()) return 1;
  b.snapshot = std::move(*bytes);
  auto view =
      SnapshotView::Open(reinterpret_cast<const uint8_t*>(b.snapshot.data()), b.snapshot.size(), false);
  if (!view.ok()) return 1;
  b.chain = FilterChain({*view});

  if (!stage.empty()) {
    RunStage(b, stage);
    return b.sink == 42 ? 1 : 0;
  }
  const Timing canon = Measure(b, "canon", rounds);
  const Timing full = Measure(b, "canon_full", rounds);
  const Timing keys = Measure(b, "canon_expr_keys", rounds);
  const Timing one = Measure(b, "one_by_one", rounds);
  char note[200];
  std::snprintf(note, sizeof note,
                "Canonicalize per URL, %zu lookup_bench browsing URLs; baseline: the full "
                "algorithm for every URL",
                n);
  Row(json, "canon_ns", canon, "full_path", full, note);
  std::snprintf(note, sizeof note,
                "Canonicalize + HashExpressions (XXH3) per URL; baseline: MakeExpressions "
                "then one Xxh3Key call per expression");
  Row(json, "canon_expr_keys_ns", keys, "one_by_one", one, note);
  return b.sink == 42 ? 1 : 0;
}
