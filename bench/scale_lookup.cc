// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// scale_lookup: lookup cost per URL against list files of any size (the scale benchmark's lookup row). Unlike
// lookup_bench it builds nothing: it maps existing snapshot files (a publisher's private copy or a client's
// installed list) through the public Checker, so it runs at 100 M entries in the memory of the mapping.
//
//   scale_lookup [--json] [--seconds S] URLS_FILE SNAPSHOT...      (one URL per line; S default 1)
//
// 1. First pass over every URL (cold: page faults on the mapping, first use of the thread's buffers).
// 2. Repeated passes for at least S seconds (warm). Both report wall and thread CPU ns per URL
//    (CLOCK_THREAD_CPUTIME_ID): on a shared machine the CPU figure is the steadier one.
// One thread, Check() per URL (no batching), hits counted so the work cannot be optimised away.
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/cpu_time.h"
#include "urlguard/checker.h"

namespace {

using urlguard::bench::ThreadCpuSeconds;

// URLs read from the file: 1 M lines at most (about 60 MB), each at most 8 KiB (the Checker's own cap).
constexpr size_t kMaxUrls = 1000000;
constexpr size_t kMaxUrlBytes = 8192;


double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Pass {
  double wall_ns = 0, cpu_ns = 0;
  uint64_t lookups = 0, hits = 0;
};

Pass Run(const urlguard::Checker& checker, const std::vector<std::string>& urls, double min_seconds) {
  Pass p;
  const double w0 = WallSeconds(), c0 = ThreadCpuSeconds();
  double elapsed = 0;
  do {
    for (const std::string& u : urls) {
      p.hits += checker.Check(u).kind == urlguard::VerdictKind::kHit;
      ++p.lookups;
    }
    elapsed = WallSeconds() - w0;
  } while (elapsed < min_seconds);
  p.wall_ns = elapsed * 1e9 / static_cast<double>(p.lookups);
  p.cpu_ns = (ThreadCpuSeconds() - c0) * 1e9 / static_cast<double>(p.lookups);
  return p;
}

int Main(int argc, char** argv) {
  bool json = std::getenv("URLGUARD_BENCH_JSON") != nullptr && std::strcmp(std::getenv("URLGUARD_BENCH_JSON"), "1") == 0;
  double seconds = 1;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::strtod(argv[++i], nullptr);
    } else {
      args.emplace_back(argv[i]);
    }
  }
  if (args.size() < 2) {
    std::fprintf(stderr, "usage: scale_lookup [--json] [--seconds S] URLS_FILE SNAPSHOT...\n");
    return 4;
  }
  std::ifstream in(args[0]);
  if (!in) {
    std::fprintf(stderr, "scale_lookup: cannot read %s\n", args[0].c_str());
    return 1;
  }
  std::vector<std::string> urls;
  std::string line;
  while (urls.size() < kMaxUrls && std::getline(in, line)) {
    if (!line.empty() && line.size() <= kMaxUrlBytes) urls.push_back(line);
  }
  if (urls.empty()) {
    std::fprintf(stderr, "scale_lookup: no URLs in %s\n", args[0].c_str());
    return 1;
  }
  auto checker = urlguard::Checker::Open(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!checker.ok()) {
    std::fprintf(stderr, "scale_lookup: %s\n", checker.status().ToString().c_str());
    return 1;
  }
  const Pass cold = Run(**checker, urls, 0);
  const Pass warm = Run(**checker, urls, seconds);
  if (json) {
    std::printf("{\"row\": \"scale_lookup.warm_cpu_ns\", \"value\": %.1f, \"unit\": \"ns\", \"baselines\": "
                "{\"wall\": %.1f, \"cold cpu\": %.1f, \"cold wall\": %.1f}, \"note\": \"%zu URLs, %llu lookups, "
                "%.4f hit, one thread\"}\n",
                warm.cpu_ns, warm.wall_ns, cold.cpu_ns, cold.wall_ns, urls.size(),
                static_cast<unsigned long long>(warm.lookups),
                static_cast<double>(warm.hits) / static_cast<double>(warm.lookups));
  } else {
    std::printf("lookup per URL over %zu URLs (%.2f%% hit), one thread:\n"
                "  first pass: %.0f ns wall, %.0f ns CPU\n  warm (%llu lookups): %.0f ns wall, %.0f ns CPU\n",
                urls.size(), 100.0 * static_cast<double>(cold.hits) / static_cast<double>(cold.lookups), cold.wall_ns,
                cold.cpu_ns, static_cast<unsigned long long>(warm.lookups), warm.wall_ns, warm.cpu_ns);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
