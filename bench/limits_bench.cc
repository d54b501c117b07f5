// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// limits_bench: this machine's floors for the limit table of docs/performance.md (issue 20), as JSON rows
// (bench/perf_table.py's format) on stdout, a readable table on stderr:
//   - limit_chase_16mb_ns / limit_chase_256mb_ns: one dependent load (a pointer chase over a random cyclic
//     permutation of 64-byte nodes), i.e. what one cache miss costs when nothing overlaps it;
//   - limit_probe_*: one FingerprintSet probe of a 10 M-entry layer (URLGUARD_BENCH_ENTRIES overrides),
//       dependent        each probe's key depends on the last answer: the latency of one probe, no overlap;
//       nopf             independent probes, no prefetch (the out-of-order core overlaps what it can);
//       url_pf           groups of 6 probes (one URL's worth): Prefetch all, then resolve; each group's keys
//                        depend on the previous group's answers, so this is the per-URL floor of the probe stage;
//                        baselines: the same groups without prefetch, and with the prefetch of the block start
//                        only (the pre-issue-20 Prefetch, reimplemented here from the documented body layout);
//       batch_pf         groups of 48 probes (8 URLs, CheckBatch's group): Prefetch all, then resolve.
// Times are this thread's CPU time (CLOCK_THREAD_CPUTIME_ID): stalls on memory count, other engineers' processes
// on the shared cores do not (their cache traffic still does). Medians of 5 (chase) or 7 interleaved rounds.
//   build/bench/limits_bench [--json]
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/cpu_time.h"
#include "bench/json_row.h"
#include "core/byte_io.h"
#include "core/fingerprint_set.h"

namespace urlguard::bench {
namespace {

bool g_json = false;


template <typename Fn>
double MedianNs(int rounds, uint64_t ops, Fn fn) {
  std::vector<double> v;
  fn();  // warm-up
  for (int r = 0; r < rounds; ++r) {
    const double t0 = ThreadCpuSeconds() * 1e9;
    fn();
    v.push_back((ThreadCpuSeconds() * 1e9 - t0) / static_cast<double>(ops));
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Row(const char* row, double value, const char* unit, const Baselines& bases, const char* note) {
  PrintJsonRow(g_json, row, value, unit, bases, note);
}

// Anonymous memory of `bytes`, asking for transparent 2 MB pages when `huge` (it stays 4 KB pages where the
// kernel's THP setting is "never"). Never freed: a bench.
uint64_t* Allocate(size_t bytes, bool huge) {
  const size_t kHuge = 2u << 20;
  bytes = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::abort();
  auto* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + kHuge - 1) / kHuge * kHuge);
  madvise(aligned, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  std::memset(aligned, 0, bytes);
  return reinterpret_cast<uint64_t*>(aligned);
}

// ns per dependent load over `bytes` of 64-byte nodes linked in one random cycle (Sattolo's shuffle).
double PointerChase(size_t bytes, bool huge) {
  const size_t nodes = bytes / 64;
  std::vector<uint64_t> order(nodes);
  for (size_t i = 0; i < nodes; ++i) order[i] = i;
  std::mt19937_64 rng(7);
  for (size_t i = nodes - 1; i > 0; --i) std::swap(order[i], order[rng() % i]);  // one cycle through all
  uint64_t* mem = Allocate(nodes * 64, huge);
  for (size_t i = 0; i < nodes; ++i) mem[order[i] * 8] = order[(i + 1) % nodes] * 8;
  const uint64_t steps = 4000000;
  uint64_t p = 0;
  const double ns = MedianNs(5, steps, [&] {
    for (uint64_t s = 0; s < steps; ++s) p = mem[p];
  });
  if (p == 1) std::puts("");  // keeps the chase
  return ns;
}

// The pre-issue-20 FingerprintSetView::Prefetch: the unary word and the remainder word at the start of the
// probe's 128-bucket block. Reads the body layout of docs/snapshot-format.md.
struct BlockStartPrefetch {
  const uint8_t* samples;
  const uint8_t* unary;
  const uint8_t* remainders;
  uint32_t r;
  uint64_t sample_count;
  explicit BlockStartPrefetch(const uint8_t* d) {
    r = LoadLE32(d + 24);
    sample_count = LoadLE64(d + 32);
    const uint64_t unary_words = LoadLE64(d + 40);
    samples = d + kFingerprintSetHeaderBytes;
    unary = samples + (sample_count * 4 + 7) / 8 * 8;
    remainders = unary + unary_words * 8;
  }
  void operator()(uint64_t fp) const {
    const uint64_t block = (fp >> r) >> 7;
    if (block + 1 >= sample_count) return;
    const uint64_t first = LoadLE32(samples + block * 4);
    __builtin_prefetch(unary + ((first + (block << 7)) >> 6) * 8);
    __builtin_prefetch(remainders + ((first * r) >> 6) * 8);
  }
};

enum class Pf { kNone, kBlockStart, kFull, kTwoPass };

}  // namespace
}  // namespace urlguard::bench

int main(int argc, char** argv) {
  using namespace urlguard;
  using namespace urlguard::bench;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) g_json = true;
  }
  if (const char* e = std::getenv("URLGUARD_BENCH_JSON"); e != nullptr && std::strcmp(e, "0") != 0) g_json = true;
  uint64_t n = 10000000;
  if (const char* e = std::getenv("URLGUARD_BENCH_ENTRIES")) n = std::strtoull(e, nullptr, 10);

  const double chase16 = PointerChase(16u << 20, false);
  const double chase256 = PointerChase(256u << 20, false);
  const double chase16_huge = PointerChase(16u << 20, true);
  const double chase256_huge = PointerChase(256u << 20, true);
  Row("limit_chase_16mb_ns", chase16, "ns", {{"chase_256mb_ns", chase256}, {"huge_pages", chase16_huge}},
      "one dependent load, random 64-byte nodes over 16 MB, 4 KB pages (thread CPU time)");
  Row("limit_chase_256mb_ns", chase256, "ns", {{"chase_16mb_ns", chase16}, {"huge_pages", chase256_huge}},
      "one dependent load, random 64-byte nodes over 256 MB, 4 KB pages: DRAM latency + TLB miss");

  // A layer as the builder sizes a 10 M list for --fp-rate 0.001 over ~8.5 probes per URL.
  const uint64_t universe = n * 8500;
  std::mt19937_64 rng(11);
  std::vector<uint64_t> fps(n);
  for (auto& f : fps) f = rng() % universe;
  std::sort(fps.begin(), fps.end());
  fps.erase(std::unique(fps.begin(), fps.end()), fps.end());
  const std::string body = BuildFingerprintSet(fps, universe);
  std::vector<uint64_t>().swap(fps);
  // Two copies: in 4 KB pages (what a mapped snapshot file gets) and in transparent huge pages.
  uint64_t* small_copy = Allocate(body.size(), false);
  uint64_t* huge_copy = Allocate(body.size(), true);
  std::memcpy(small_copy, body.data(), body.size());
  std::memcpy(huge_copy, body.data(), body.size());
  auto view_or = FingerprintSetView::Open(reinterpret_cast<const uint8_t*>(small_copy), body.size());
  auto huge_or = FingerprintSetView::Open(reinterpret_cast<const uint8_t*>(huge_copy), body.size());
  if (!view_or.ok() || !huge_or.ok()) {
    std::fprintf(stderr, "open: %s\n", view_or.status().message().c_str());
    return 1;
  }
  const FingerprintSetView small_view = *view_or;
  const FingerprintSetView huge_view = *huge_or;
  const BlockStartPrefetch old_pf(reinterpret_cast<const uint8_t*>(small_copy));
  constexpr size_t kKeys = 1 << 22;
  std::vector<uint64_t> fp_keys(kKeys);
  for (auto& k : fp_keys) k = small_view.FingerprintOf(rng());
  const uint64_t probes = 3000000;

  // Every variant runs one round in turn (7 rounds, medians), so load from other processes on the shared
  // cores falls on all of them alike.
  uint64_t sink = 0;
  auto round_ns = [&](size_t g, Pf pf, bool huge) {
    const FingerprintSetView& view = huge ? huge_view : small_view;
    const double t0 = ThreadCpuSeconds() * 1e9;
    if (g == 0) {  // dependent single probes
      uint64_t i = 0;
      for (uint64_t p = 0; p < probes; ++p) i = (i + 1 + view.ContainsFingerprint(fp_keys[i & (kKeys - 1)])) * 0x9e37;
      sink += i;
    } else if (g == 1) {  // independent, no prefetch
      for (uint64_t p = 0; p < probes; ++p) sink += view.ContainsFingerprint(fp_keys[p & (kKeys - 1)]);
    } else {  // groups of g, each group's keys chained on the last group's answers (groups do not overlap)
      uint64_t base = 0;
      for (uint64_t p = 0; p < probes; p += g) {
        const uint64_t* k = &fp_keys[base & (kKeys - 1) & ~uint64_t{63}];
        if (pf == Pf::kTwoPass) {
          for (size_t j = 0; j < g; ++j) view.PrefetchSample(k[j]);
          for (size_t j = 0; j < g; ++j) view.Prefetch(k[j]);
        } else if (pf == Pf::kFull) {
          for (size_t j = 0; j < g; ++j) view.Prefetch(k[j]);
        } else if (pf == Pf::kBlockStart) {
          for (size_t j = 0; j < g; ++j) old_pf(k[j]);
        }
        uint64_t hits = 0;
        for (size_t j = 0; j < g; ++j) hits += view.ContainsFingerprint(k[j]);
        base = (base + 64 + hits) * 0x9e3779b1;
      }
      sink += base;
    }
    return (ThreadCpuSeconds() * 1e9 - t0) / static_cast<double>(probes);
  };
  struct Variant {
    size_t g;
    Pf pf;
    bool huge;
    std::vector<double> ns;
  };
  std::vector<Variant> vs = {{0, Pf::kNone, false, {}},       {1, Pf::kNone, false, {}},
                             {6, Pf::kNone, false, {}},       {6, Pf::kBlockStart, false, {}},
                             {6, Pf::kFull, false, {}},       {48, Pf::kNone, false, {}},
                             {48, Pf::kBlockStart, false, {}}, {48, Pf::kFull, false, {}},
                             {0, Pf::kNone, true, {}},        {6, Pf::kFull, true, {}},
                             {48, Pf::kFull, true, {}},       {6, Pf::kTwoPass, false, {}},
                             {48, Pf::kTwoPass, false, {}}};
  for (int r = -1; r < 7; ++r) {
    for (Variant& v : vs) {
      const double ns = round_ns(v.g, v.pf, v.huge);
      if (r >= 0) v.ns.push_back(ns);
    }
  }
  auto med = [&](size_t i) {
    std::vector<double> x = vs[i].ns;
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  const double dependent = med(0), nopf = med(1), url_none = med(2), url_old = med(3), url_pf = med(4);
  const double batch_none = med(5), batch_old = med(6), batch_pf = med(7);
  const double dependent_huge = med(8), url_pf_huge = med(9), batch_pf_huge = med(10);
  const double url_two = med(11), batch_two = med(12);
  char note[256];
  std::snprintf(note, sizeof note, "one probe of a %llu-entry layer (%.1f MB body), its key chained on the last answer",
                static_cast<unsigned long long>(small_view.size()), static_cast<double>(body.size()) / 1e6);
  Row("limit_probe_dependent_ns", dependent, "ns", {{"chase_256mb_ns", chase256}, {"huge_pages", dependent_huge}},
      note);
  Row("limit_probe_nopf_ns", nopf, "ns", {{"dependent_ns", dependent}}, "independent probes, no prefetch");
  Row("limit_probe_url_pf_ns", url_pf * 6, "ns", {{"no_prefetch", url_none * 6}, {"block_start_prefetch", url_old * 6},
                                                    {"huge_pages", url_pf_huge * 6},
                                                    {"samples_first", url_two * 6}},
      "6 probes (one URL): Prefetch all then resolve, ns per group; groups chained");
  Row("limit_probe_batch_pf_ns", batch_pf, "ns", {{"no_prefetch", batch_none}, {"block_start_prefetch", batch_old},
                                                 {"huge_pages", batch_pf_huge},
                                                 {"samples_first", batch_two}},
      "48 probes (8 URLs, CheckBatch's group): Prefetch all then resolve, ns per probe; groups chained");
  if (sink == 42) std::puts("");
  return 0;
}
