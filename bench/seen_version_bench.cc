// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// seen_version_bench: what the seen filter (publish/seen_filter.h, REPO/private/seen.bin) costs a format 2
// incremental version, which records its added entries there under the seen lock (issue 17): loading seen.bin,
// querying and recording the version's added keys, saving seen.bin again. Loading and saving are O(filter size),
// not O(changes): this measures whether they dominate a version (a 50 k-change version of a 10 M list costs about
// 0.3 s without them).
//
//   seen_version_bench [--entries N] [--added A] [--dir DIR]
//
// Builds a filter with the publisher's parameters (publish/publisher.cc: first stage 1 M keys at 1e-4, count-min
// sketch eps 1e-5, delta 0.01) holding N distinct keys (default 10 M, recorded as one run, as a first full
// version does), saves it to DIR/seen.bin (default /tmp/urlguard-seen-bench), then times one version's steps
// three times: Load, RecordRun of A new keys (default 25 k), Save (WriteFileAtomic: write, fsync, rename). It also
// measures the false-positive rate on 100 k keys never recorded, beside the filter's own expected_fp_rate().
//
// Measured (RelWithDebInfo, the 2-core machine shared with other builds, 2026-11-26): at 10 M keys seen.bin is
// 65.1 MB (4 stages); a version's load 0.79-0.98 s + record 0.04-0.08 s + save 0.34-1.39 s = 1.2-2.4 s, i.e. 4-8x
// the ~0.3 s of a 50 k-change version of a 10 M list: seen.bin dominates it. At 1 M keys: 21.3 MB after the
// version's keys, 0.29-0.41 s. The measured false-positive rate is far above the bound the filter reports: 0 at
// 1 M keys, 2.9e-4 at 1.5 M, 1.5e-2 at 3 M, 0.22 at 10 M, against expected_fp_rate() 1.9e-5 to 4.7e-5 (so about
// a fifth of the new entries of a version of a 10 M list read as "seen before"). Cause: RecordRun inserted the
// run's keys in ascending order, so each stage got a contiguous key range in one fraction of its blocks (fixed:
// publish/seen_filter.h, "Insertion order"). After the fix (same machine and parameters, 2026-11-26): measured
// 0 at 1.5 M, 3e-5 at 3 M, 1e-5 at 10 M keys against expected_fp_rate() 1.9e-5, 3.4e-5, 4.7e-5; a version at 10 M
// load 0.44 s + record 0.04 s + save 0.25 s = 0.73 s (a quieter machine than the run above).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "platform/env.h"
#include "publish/seen_filter.h"

namespace {

uint64_t SplitMix(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t entries = 10'000'000, added = 25'000;
  std::string dir = "/tmp/urlguard-seen-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--entries") == 0) entries = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--added") == 0) added = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--dir") == 0) dir = argv[i + 1];
  }
  urlguard::Env* env = urlguard::Env::Default();
  if (!env->CreateDirs(dir).ok()) return 1;
  const std::string path = dir + "/seen.bin";
  uint64_t seed = 42;
  {
    urlguard::SeenFilter f = urlguard::SeenFilter::Create(1'000'000, 1e-4, 1e-5, 0.01);
    std::vector<uint64_t> keys(entries);
    for (uint64_t& k : keys) k = SplitMix(&seed);
    auto t = std::chrono::steady_clock::now();
    (void)f.RecordRun(keys);
    std::printf("build: %llu keys recorded in %.2f s, %zu stages, expected false-positive rate %.2g%s, seen.bin "
                "%.1f MB\n",
                static_cast<unsigned long long>(entries), Seconds(t), f.stage_count(), f.expected_fp_rate(),
                f.saturated() ? " (saturated)" : "", f.serialized_size() / 1e6);
    // The measured false-positive rate on keys never recorded, in memory and after a save and load.
    uint64_t probe_seed = 7;
    auto fp = [&](const urlguard::SeenFilter& g) {
      uint64_t s = probe_seed, hits = 0;
      for (int i = 0; i < 100000; ++i) hits += g.Query(SplitMix(&s) ^ 0x5555555555555555ULL).seen_before ? 1 : 0;
      return static_cast<double>(hits) / 100000;
    };
    std::printf("measured false-positive rate: %.2g in memory", fp(f));
    if (!f.Save(env, path).ok()) return 1;
    auto loaded = urlguard::SeenFilter::Load(env, path);
    if (!loaded.ok()) return 1;
    std::printf(", %.2g after save and load\n", fp(*loaded));
  }
  for (int round = 0; round < 3; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    auto f = urlguard::SeenFilter::Load(env, path);
    if (!f.ok()) return 1;
    const double load = Seconds(t0);
    std::vector<uint64_t> keys(added);
    for (uint64_t& k : keys) k = SplitMix(&seed);
    auto t1 = std::chrono::steady_clock::now();
    urlguard::SeenRunSummary s = f->RecordRun(keys);
    const double record = Seconds(t1);
    auto t2 = std::chrono::steady_clock::now();
    if (!f->Save(env, path).ok()) return 1;
    const double save = Seconds(t2);
    std::printf("version %d: load %.3f s, record %llu keys (%llu new) %.4f s, save %.3f s (seen.bin %.1f MB); "
                "total %.3f s\n",
                round + 1, load, static_cast<unsigned long long>(added), static_cast<unsigned long long>(s.new_keys),
                record, save, f->serialized_size() / 1e6, load + record + save);
  }
  return 0;
}
