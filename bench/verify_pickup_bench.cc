// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// verify_pickup_bench: how long a file-backed verify server (server/file_hash_source.h) takes to answer for a
// new version after the publisher commits it (issue 17's target: <= 5 s at 100 M entries, without reading the
// base), with today's behaviour (validating a whole new V.ugh) measured in the same run as the baseline.
//
//   verify_pickup_bench [--records N] [--delta M] [--deltas K] [--dir DIR] [--json]
//
// It writes (once, cached in DIR, default /tmp/urlguard-pickup-bench-N) a base 1.ugh of N records (default
// 10 M; deterministic keys, generated in order so nothing is sorted in memory), then
//   1. full reload: opens a FileHashSource on it, i.e. maps and fully validates the base (the page cache is
//      warm from writing or an earlier run: the cold cost is higher, bounded by the disk's read rate);
//   2. pick-up: K times (default 10) writes a delta V.ughd of M records (default 50 k: half puts of new keys,
//      half deletes of base keys) into a staging directory, renames it into the list directory (t0), and
//      calls Refresh() until Loaded() reports V (t1). t1 - t0 is the pick-up; the server's refresher polls every
//      hash_refresh_millis (1 s by default), which adds at most that much in a running server;
//   3. lookups: 5-prefix lookups (one in five a stored prefix) on the base alone and on base + K deltas.
//
// --json (or URLGUARD_BENCH_JSON=1) prints one JSON row per line for bench/perf_table.py:
//   verify_pickup_ms          the slowest of the K pick-ups; baselines: full_reload_ms (same run), first_ms
//   verify_full_reload_ms     mapping and validating the base (today's per-version cost)
//   verify_overlay_lookup_ns  one 5-prefix lookup on base + K deltas; baselines: base_only_ns
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench/json_row.h"
#include "core/sha256.h"
#include "format/full_hash_file.h"
#include "format/repository_files.h"
#include "platform/env.h"
#include "server/file_hash_source.h"

namespace urlguard {
namespace {

constexpr char kList[] = "bench";

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Base key i of n: the first 8 bytes (big-endian) in [i * step, (i + 1) * step), so keys come out ascending and
// uniform; the rest pseudo-random. Odd i are url-layer, even domain-layer.
Sha256Digest BaseKey(uint64_t i, uint64_t n) {
  const uint64_t step = ~uint64_t{0} / n;
  const uint64_t head = i * step + SplitMix(i) % step;
  Sha256Digest d{};
  for (int b = 0; b < 8; ++b) d[b] = static_cast<uint8_t>(head >> (56 - 8 * b));
  for (int w = 0; w < 3; ++w) {
    const uint64_t r = SplitMix(i * 4 + w + 1);
    for (int b = 0; b < 8; ++b) d[8 + w * 8 + b] = static_cast<uint8_t>(r >> (8 * b));
  }
  return d;
}
LayerKind BaseLayer(uint64_t i) { return i % 2 ? LayerKind::kUrl : LayerKind::kDomain; }

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

long MaxRssMb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

int Run(int argc, char** argv) {
  uint64_t n = 10000000, m = 50000, k = 10;
  std::string dir;
  bool json = std::getenv("URLGUARD_BENCH_JSON") != nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--records") n = std::strtoull(next(), nullptr, 10);
    else if (a == "--delta") m = std::strtoull(next(), nullptr, 10);
    else if (a == "--deltas") k = std::strtoull(next(), nullptr, 10);
    else if (a == "--dir") dir = next();
    else if (a == "--json") json = true;
    else {
      std::fprintf(stderr, "usage: verify_pickup_bench [--records N] [--delta M] [--deltas K] [--dir DIR] [--json]\n");
      return 2;
    }
  }
  if (n < 2 || m < 2 || k < 1) return 2;
  if (dir.empty()) dir = "/tmp/urlguard-pickup-bench-" + std::to_string(n);
  Env* env = Env::Default();
  const std::string lists = JoinPath(dir, "lists");
  const std::string list_dir = JoinPath(lists, kList);
  const std::string staging = JoinPath(dir, "staging");
  // Deltas of an earlier run go: the bench starts from the base alone.
  if (auto names = env->ListDir(list_dir); names.ok()) {
    for (const std::string& f : *names) {
      if (f != FullHashFileName(1)) (void)env->RemoveFile(JoinPath(list_dir, f));
    }
  }
  if (!env->CreateDirs(list_dir).ok() || !env->CreateDirs(staging).ok()) {
    std::fprintf(stderr, "cannot create %s\n", dir.c_str());
    return 1;
  }

  const std::string base_path = JoinPath(list_dir, FullHashFileName(1));
  bool have_base = false;
  if (auto mapped = env->MapReadOnly(base_path); mapped.ok()) {
    auto view = FullHashFileView::Open((*mapped)->data(), (*mapped)->size(), false);
    have_base = view.ok() && view->records() == n;
  }
  if (!have_base) {
    const auto t0 = std::chrono::steady_clock::now();
    auto w = FullHashFileWriter::Create(env, base_path, kList, 1, {"malware", "phishing"}, n);
    if (!w.ok()) return 1;
    for (uint64_t i = 0; i < n; ++i) {
      if (!w->Add(BaseKey(i, n), BaseLayer(i), static_cast<uint16_t>(i % 2)).ok()) return 1;
    }
    if (!w->Finish().ok()) return 1;
    std::fprintf(stderr, "wrote %s (%llu records) in %.1f s\n", base_path.c_str(),
                 static_cast<unsigned long long>(n), Seconds(t0, std::chrono::steady_clock::now()));
  }

  // 1. Today's per-version cost: map and validate the whole base.
  auto t0 = std::chrono::steady_clock::now();
  auto source = FileHashSource::Open(env, lists);
  const double full_reload = Seconds(t0, std::chrono::steady_clock::now());
  if (source->Loaded().size() != 1 || source->Loaded()[0].version != 1) {
    std::fprintf(stderr, "the base did not load\n");
    return 1;
  }

  // 3a. Lookups on the base alone.
  std::mt19937_64 rng(7);
  std::vector<std::vector<uint32_t>> queries(4096);
  for (auto& q : queries) {
    for (int j = 0; j < 5; ++j) {
      q.push_back(j == 0 ? DigestPrefix32(BaseKey(rng() % n, n)) : static_cast<uint32_t>(rng()));
    }
  }
  auto time_lookups = [&] {
    VerifyLookup out;
    size_t found = 0;
    const int rounds = 200000;
    const auto a = std::chrono::steady_clock::now();
    for (int r = 0; r < rounds; ++r) {
      if (source->Lookup(queries[r % queries.size()], &out).ok()) found += out.records.size();
    }
    const double ns = Seconds(a, std::chrono::steady_clock::now()) * 1e9 / rounds;
    if (found == 0) std::fprintf(stderr, "no lookup found anything\n");
    return ns;
  };
  const double base_only_ns = time_lookups();

  // 2. Pick-ups.
  std::vector<double> pickups;
  std::vector<std::pair<Sha256Digest, LayerKind>> puts;
  for (uint64_t v = 2; v < 2 + k; ++v) {
    std::map<std::pair<Sha256Digest, LayerKind>, bool> change;  // key -> deleted
    while (change.size() < m) {
      if (change.size() % 2 == 0) {
        Sha256Digest d{};
        for (int w = 0; w < 4; ++w) {
          const uint64_t r = rng();
          std::memcpy(d.data() + 8 * w, &r, 8);
        }
        change[{d, LayerKind::kUrl}] = false;
      } else {
        const uint64_t i = rng() % n;
        change[{BaseKey(i, n), BaseLayer(i)}] = true;
      }
    }
    const std::string staged = JoinPath(staging, FullHashDeltaFileName(v));
    auto w = FullHashFileWriter::CreateDelta(env, staged, kList, v, v - 1, {"malware", "phishing"}, m);
    if (!w.ok()) return 1;
    for (const auto& [key, deleted] : change) {
      if (!w->AddDelta(key.first, key.second, 1, deleted).ok()) return 1;
      if (!deleted && puts.size() < 1000) puts.push_back(key);
    }
    if (!w->Finish().ok()) return 1;
    const auto commit = std::chrono::steady_clock::now();
    if (!env->RenameFile(staged, JoinPath(list_dir, FullHashDeltaFileName(v))).ok()) return 1;
    for (;;) {
      Status s = source->Refresh();
      if (!s.ok()) {
        std::fprintf(stderr, "refresh: %s\n", s.ToString().c_str());
        return 1;
      }
      if (source->Loaded()[0].version == v) break;
    }
    pickups.push_back(Seconds(commit, std::chrono::steady_clock::now()));
  }
  // The source answers for the new keys.
  for (const auto& key : puts) {
    VerifyLookup out;
    const uint32_t p = DigestPrefix32(key.first);
    bool hit = false;
    if (source->Lookup({&p, 1}, &out).ok()) {
      for (const VerifyRecord& r : out.records) hit |= r.sha256 == key.first && r.layer == key.second;
    }
    if (!hit) {
      std::fprintf(stderr, "a put key is not answered\n");
      return 1;
    }
  }
  const double overlay_ns = time_lookups();
  const auto loaded = source->Loaded()[0];
  const double worst = *std::max_element(pickups.begin(), pickups.end());

  char note[400];
  std::snprintf(note, sizeof note,
                "%llu-record base, %llu deltas of %llu records (half puts, half deletes); overlay %llu deltas; "
                "first %.1f ms; Refresh() in a loop (a server polls every 1 s); max RSS %ld MB",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(k),
                static_cast<unsigned long long>(m), static_cast<unsigned long long>(loaded.deltas),
                pickups.front() * 1e3, MaxRssMb());
  bench::PrintJsonRow(json, "verify_pickup_ms", worst * 1e3, "ms",
                      {{"full_reload_ms", full_reload * 1e3}, {"first_ms", pickups.front() * 1e3}}, note);
  bench::PrintJsonRow(json, "verify_full_reload_ms", full_reload * 1e3, "ms", {},
                      "map + validate the whole base (today's per-version cost), warm page cache");
  bench::PrintJsonRow(json, "verify_overlay_lookup_ns", overlay_ns, "ns", {{"base_only_ns", base_only_ns}},
                      "one 5-prefix lookup, base + deltas vs base alone");
  return 0;
}

}  // namespace
}  // namespace urlguard

int main(int argc, char** argv) { return urlguard::Run(argc, argv); }
