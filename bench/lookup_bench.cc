// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The engine benchmark: sizes, false-positive rates and lookup speed of urlguard's filter chain on a realistic
// generated list (default 10 M entries; URLGUARD_BENCH_ENTRIES overrides), side by side in the same run with
//   - a blocked Bloom filter at the same target (the classic alternative),
//   - std::unordered_set of full SHA-256 hashes (exact, in memory),
//   - an SQLite table indexed on the hash (the naive "query a database per request" design).
//   - urlguard's own format version 1 (SHA-256 local keys), the "before" of the XXH3 keys of version 2.
// It first prints a table (bytes, bits per entry, measured false-positive rates, open time), then the headline
// rows (median ns per URL end to end on one thread with wall and CPU time, URLs/s on two threads, each with its
// baselines), then runs the timing benchmarks through Google Benchmark (ns per URL, ns per probe, batch, scan).
// With --json (or URLGUARD_BENCH_JSON=1) it prints only the headline rows, one JSON object per line on stdout
// (bench/perf_table.py collects them), the tables go to stderr and Google Benchmark is not run.
// Release build: cmake -DCMAKE_BUILD_TYPE=Release -DURLGUARD_BUILD_BENCH=ON; run build/bench/lookup_bench.
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "bench/corpus.h"
#include "bench/json_row.h"
#include "core/byte_io.h"
#include "url/entry.h"
#include "client/filter_chain.h"
#include "core/key_hash.h"
#include "core/sha256.h"
#include "core/snapshot.h"
#include "url/url_canon.h"
#include "url/url_extract.h"
#include "platform/env.h"
#include "publish/list_builder.h"
#include "urlguard/checker.h"

namespace urlguard::bench {
namespace {

constexpr double kFpTarget = 0.001;
constexpr size_t kBrowsingUrls = 1000000;

struct DigestHash {
  size_t operator()(const Sha256Digest& d) const { return static_cast<size_t>(DigestPrefix64(d)); }
};

struct World {
  uint64_t entries = 0;
  std::string dir;
  std::string fa_path, bloom_path, v1_path, sqlite_path;
  std::unique_ptr<Checker> fa, bloom, v1;  // v1: format version 1, SHA-256 keys
  std::unique_ptr<MappedFile> fa_map;
  FilterChain fa_chain;                    // the same list as `fa`, for the per-step benchmarks
  std::unordered_set<Sha256Digest, DigestHash> exact;
  sqlite3* db = nullptr;
  sqlite3_stmt* lookup = nullptr;
  std::vector<std::string> urls;        // clean browsing URLs
  std::vector<std::string> messages;    // chat messages, 3 URLs each
  std::vector<uint64_t> random_keys;    // for ns per probe
  double size_mb = 0, bloom_size_mb = 0, exact_size_mb = 0, fp_per_url = 0, bloom_fp_per_url = 0;
};

World* g_world = nullptr;
bool g_json = false;
FILE* g_out = stdout;  // the human-readable tables: stderr in --json mode

double Seconds(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

std::string WriteList(World& w, const SnapshotContent& content, const std::string& name) {
  auto bytes = BuildSnapshot(content);
  if (!bytes.ok()) std::abort();
  std::string path = w.dir + "/" + name + ".ugs";
  if (!WriteFileAtomic(Env::Default(), path, *bytes).ok()) std::abort();
  return path;
}

// Counts the URL's expressions whose exact key is listed (a true hit) — the ground truth for false positives.
bool TrulyListed(const World& w, std::string_view url, LookupScratch* s) {
  if (!Canonicalize(url, &s->url).ok()) return false;
  MakeExpressions(s->url, &s->expressions);
  for (size_t i = 0; i < s->expressions.size(); ++i) {
    if (w.exact.count(Sha256(s->expressions[i]))) return true;
  }
  if (s->url.host_kind != HostKind::kName) {
    char buf[kMaxIpExpressionBytes];
    bool v6 = s->url.host_kind == HostKind::kIpv6;
    for (int len = v6 ? 128 : 32; len >= 0; --len) {
      if (w.exact.count(Sha256(buf, IpPrefixExpression(s->url.ip, v6, len, buf)))) return true;
    }
  }
  return false;
}

void Setup(World& w) {
  const char* env_n = std::getenv("URLGUARD_BENCH_ENTRIES");
  w.entries = env_n ? std::strtoull(env_n, nullptr, 10) : 10000000;
  w.dir = "/tmp/urlguard-bench";
  (void)Env::Default()->CreateDirs(w.dir);

  std::fprintf(g_out, "== urlguard lookup benchmark: %llu list entries, %zu browsing URLs, target %.3g per URL ==\n\n",
              static_cast<unsigned long long>(w.entries), kBrowsingUrls, kFpTarget);
  // 1. Generate and build. Both structures from the same builder contents.
  auto t0 = std::chrono::steady_clock::now();
  CorpusGenerator gen(1);
  ListBuilder builder;                                  // XXH3 keys: format version 2
  ListBuilder v1_builder(KeyHashKind::kSha256Prefix);  // the same list as format version 1
  std::vector<Sha256Digest> digests;
  digests.reserve(w.entries);
  uint64_t rejected = 0;
  for (uint64_t i = 0; i < w.entries; ++i) {
    std::string e = gen.ListEntry();
    auto key = EntryKeyFor(e);
    if (!key.ok()) {
      ++rejected;
      continue;
    }
    builder.AddKey(*key);
    v1_builder.AddKey(*key);
    digests.push_back(Sha256(key->expression));
  }
  double gen_s = Seconds(t0);
  ListBuilder bloom_builder = builder;
  BuildOptions o;
  o.list_name = "bench";
  o.fp_rate = kFpTarget;
  LayerBuildStats stats[3];
  auto t1 = std::chrono::steady_clock::now();
  auto fa_content = builder.Finish(o, stats);
  double build_s = Seconds(t1);
  LayerBuildStats v1stats[3];
  auto v1_content = v1_builder.Finish(o, v1stats);
  if (!v1_content.ok()) std::abort();
  w.v1_path = WriteList(w, *v1_content, "bench-v1");
  v1_builder = ListBuilder();
  o.filter = FilterKind::kBlockedBloom;
  LayerBuildStats bstats[3];
  auto bloom_content = bloom_builder.Finish(o, bstats);
  if (!fa_content.ok() || !bloom_content.ok()) std::abort();
  w.fa_path = WriteList(w, *fa_content, "bench-fa");
  w.bloom_path = WriteList(w, *bloom_content, "bench-bloom");
  std::fprintf(g_out, "generated + canonicalized + hashed %llu entries in %.1f s (%llu rejected); sized + built in %.1f s\n",
              static_cast<unsigned long long>(digests.size()), gen_s, static_cast<unsigned long long>(rejected),
              build_s);
  for (int i = 0; i < 3; ++i) {
    std::fprintf(g_out, "  layer %-6s %9llu keys, universe %llu, expected false hits per probe %.3g\n",
                LayerKindName(static_cast<LayerKind>(i)), static_cast<unsigned long long>(stats[i].entries),
                static_cast<unsigned long long>(stats[i].universe), stats[i].expected_fp_per_probe);
  }

  // 2. Baselines: exact set and SQLite.
  w.exact.reserve(digests.size());
  for (const auto& d : digests) w.exact.insert(d);
  w.sqlite_path = w.dir + "/bench.sqlite";
  std::remove(w.sqlite_path.c_str());
  sqlite3_open(w.sqlite_path.c_str(), &w.db);
  sqlite3_exec(w.db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
                     "CREATE TABLE hashes(hash BLOB PRIMARY KEY) WITHOUT ROWID;", nullptr, nullptr, nullptr);
  sqlite3_exec(w.db, "BEGIN", nullptr, nullptr, nullptr);
  sqlite3_stmt* ins;
  sqlite3_prepare_v2(w.db, "INSERT OR IGNORE INTO hashes VALUES(?)", -1, &ins, nullptr);
  for (const auto& d : digests) {
    sqlite3_bind_blob(ins, 1, d.data(), 32, SQLITE_STATIC);
    sqlite3_step(ins);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  sqlite3_exec(w.db, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_prepare_v2(w.db, "SELECT 1 FROM hashes WHERE hash = ?", -1, &w.lookup, nullptr);
  digests.clear();
  digests.shrink_to_fit();

  // 3. Open (median of 15) and sizes.
  auto open_ms = [&](bool verify) {
    std::vector<double> t;
    for (int i = 0; i < 15; ++i) {
      auto a = std::chrono::steady_clock::now();
      OpenOptions oo;
      oo.verify_checksum = verify;
      auto c = Checker::Open({w.fa_path}, oo);
      benchmark::DoNotOptimize(c.ok() && (*c)->Check("http://example.com/").kind == VerdictKind::kSafe);
      t.push_back(Seconds(a) * 1000);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  double open_fast = open_ms(false), open_verified = open_ms(true);
  OpenOptions fast;
  fast.verify_checksum = false;
  w.fa = std::move(Checker::Open({w.fa_path}, fast)).value();
  w.bloom = std::move(Checker::Open({w.bloom_path}, fast)).value();
  w.v1 = std::move(Checker::Open({w.v1_path}, fast)).value();
  w.fa_map = std::move(Env::Default()->MapReadOnly(w.fa_path)).value();
  w.fa_chain = FilterChain({*SnapshotView::Open(w.fa_map->data(), w.fa_map->size(), false)});

  // 4. Browsing URLs; measured false-positive rates.
  CorpusGenerator browse(2);
  w.urls.reserve(kBrowsingUrls);
  for (size_t i = 0; i < kBrowsingUrls; ++i) w.urls.push_back(browse.BrowsingUrl());
  LookupScratch s;
  uint64_t fa_fp = 0, bloom_fp = 0, true_hits = 0, domain_probes = 0, url_probes = 0, canon_ok = 0;
  for (const std::string& u : w.urls) {
    bool truth = TrulyListed(w, u, &s);
    if (Canonicalize(u, &s.url).ok()) {
      ++canon_ok;
      MakeExpressions(s.url, &s.expressions);
      for (size_t i = 0; i < s.expressions.size(); ++i) (s.expressions.is_host_root(i) ? domain_probes : url_probes)++;
    }
    if (truth) {
      ++true_hits;
      continue;
    }
    fa_fp += w.fa->Check(u).kind == VerdictKind::kHit;
    bloom_fp += w.bloom->Check(u).kind == VerdictKind::kHit;
  }
  const double clean = static_cast<double>(w.urls.size() - true_hits);
  // Per-probe rate: random 64-bit keys against the url layer of each structure.
  auto fa_list = std::move(Checker::Open({w.fa_path}, fast)).value();
  std::vector<uint8_t> raw;
  std::mt19937_64 rng(3);
  w.random_keys.resize(1 << 20);
  for (auto& k : w.random_keys) k = rng();
  auto map_fa = Env::Default()->MapReadOnly(w.fa_path);
  auto map_bl = Env::Default()->MapReadOnly(w.bloom_path);
  auto view_fa = SnapshotView::Open((*map_fa)->data(), (*map_fa)->size(), false);
  auto view_bl = SnapshotView::Open((*map_bl)->data(), (*map_bl)->size(), false);
  const LayerView* ufa = view_fa->layer(LayerKind::kUrl);
  const LayerView* ubl = view_bl->layer(LayerKind::kUrl);
  uint64_t probe_fa = 0, probe_bl = 0;
  const uint64_t probe_n = 20000000;
  for (uint64_t i = 0; i < probe_n; ++i) {
    uint64_t k = rng();
    probe_fa += ufa->fingerprints.MayContain(k);
    probe_bl += ubl->bloom.MayContain(k);
  }
  const double fa_bytes = static_cast<double>(view_fa->byte_size());
  const double bl_bytes = static_cast<double>(view_bl->byte_size());
  const double n = static_cast<double>(view_fa->total_entries());
  const double ideal_bits = std::log2(1 / (kFpTarget / ((kExpectedDomainProbes + kExpectedUrlProbes))));

  std::fprintf(g_out, "\nbrowsing corpus: %zu URLs (%llu canonicalize), %.2f whole-host + %.2f other expressions per URL, "
              "%llu truly listed (excluded)\n\n",
              w.urls.size(), static_cast<unsigned long long>(canon_ok), static_cast<double>(domain_probes) / canon_ok,
              static_cast<double>(url_probes) / canon_ok, static_cast<unsigned long long>(true_hits));
  std::fprintf(g_out, "%-32s %14s %12s %16s %16s\n", "structure", "bytes", "bits/entry", "FP per probe*", "FP per URL");
  std::fprintf(g_out, "%-32s %14.0f %12.2f %16.3g %16.3g  (%llu / %.0f)\n", "fingerprint array (default)", fa_bytes,
              fa_bytes * 8 / n, static_cast<double>(probe_fa) / probe_n, fa_fp / clean,
              static_cast<unsigned long long>(fa_fp), clean);
  std::fprintf(g_out, "%-32s %14.0f %12.2f %16.3g %16.3g  (%llu / %.0f)\n", "blocked Bloom (same target)", bl_bytes,
              bl_bytes * 8 / n, static_cast<double>(probe_bl) / probe_n, bloom_fp / clean,
              static_cast<unsigned long long>(bloom_fp), clean);
  std::fprintf(g_out, "%-32s %14.0f %12.2f %16s %16s\n", "unordered_set of SHA-256 (exact)", n * 32, 256.0, "0", "0");
  std::fprintf(g_out, "%-32s %14s %12s %16s %16s\n", "SQLite table (exact)", "(on disk)", "-", "0", "0");
  std::fprintf(g_out, "%-32s %14.0f %12.2f   (log2(1/eps) at %.0f probes per URL)\n", "information-theoretic bound",
              n * ideal_bits / 8, ideal_bits, kExpectedDomainProbes + kExpectedUrlProbes);
  std::fprintf(g_out, "* url layer, random keys\n\nopen to first lookup (median of 15): %.3f ms structural checks only, "
              "%.2f ms with full SHA-256 verification\n\n",
              open_fast, open_verified);

  CorpusGenerator chat(4);
  for (int i = 0; i < 100000; ++i) w.messages.push_back(chat.ChatMessage(3));

  w.size_mb = fa_bytes / 1e6;
  w.bloom_size_mb = bl_bytes / 1e6;
  w.exact_size_mb = n * 32 / 1e6;
  w.fp_per_url = fa_fp / clean;
  w.bloom_fp_per_url = bloom_fp / clean;
}

// ---- headline rows (the table): medians with wall and CPU time ----------------------------------

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double wall_ns = 0;  // per URL, median of the rounds
  double cpu_ns = 0;   // per URL, median of the rounds (this thread's CPU time)
};

// Runs fn(url) over `per_round` consecutive browsing URLs (each round starts where the last ended), `rounds`
// times; returns the median ns per URL. One warm-up round first.
template <typename Fn>
Timing PerUrl(size_t per_round, int rounds, Fn fn) {
  const std::vector<std::string>& urls = g_world->urls;
  size_t i = 0;
  std::vector<double> wall, cpu;
  for (int r = -1; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = ThreadCpuSeconds();
    for (size_t k = 0; k < per_round; ++k) {
      fn(urls[i]);
      if (++i == urls.size()) i = 0;
    }
    const double c1 = ThreadCpuSeconds();
    if (r < 0) continue;
    wall.push_back(Seconds(t0) * 1e9 / static_cast<double>(per_round));
    cpu.push_back((c1 - c0) * 1e9 / static_cast<double>(per_round));
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

// Two threads, each checking `per_thread` URLs from its own offset: total URLs per second of wall time, and the
// CPU seconds the threads used per URL.
struct Throughput {
  double urls_per_s = 0;
  double cpu_ns = 0;
};
Throughput TwoThreads(const Checker& c, size_t per_thread) {
  std::vector<Throughput> best;
  for (int round = 0; round < 3; ++round) {
    double cpu[2] = {0, 0};
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        const double c0 = ThreadCpuSeconds();
        size_t i = static_cast<size_t>(t) * 499979;
        for (size_t k = 0; k < per_thread; ++k) {
          benchmark::DoNotOptimize(c.Check(g_world->urls[i % g_world->urls.size()]));
          ++i;
        }
        cpu[t] = ThreadCpuSeconds() - c0;
      });
    }
    for (auto& th : threads) th.join();
    const double wall = Seconds(t0);
    best.push_back({2.0 * static_cast<double>(per_thread) / wall,
                    (cpu[0] + cpu[1]) * 1e9 / (2.0 * static_cast<double>(per_thread))});
  }
  std::sort(best.begin(), best.end(), [](const Throughput& a, const Throughput& b) { return a.urls_per_s < b.urls_per_s; });
  return best[1];  // the median of 3
}

// The exact baselines: the same canonicalization and expressions, then SHA-256 and an exact lookup per
// expression (what those designs store). is_listed(digest) for each.
template <typename IsListed>
bool ExactLookup(std::string_view url, LookupScratch* s, IsListed is_listed) {
  bool hit = false;
  if (Canonicalize(url, &s->url).ok()) {
    MakeExpressions(s->url, &s->expressions);
    for (size_t e = 0; e < s->expressions.size(); ++e) hit |= is_listed(Sha256(s->expressions[e]));
  }
  return hit;
}

bool SqliteListed(const Sha256Digest& digest) {
  sqlite3_bind_blob(g_world->lookup, 1, digest.data(), 32, SQLITE_STATIC);
  const bool found = sqlite3_step(g_world->lookup) == SQLITE_ROW;
  sqlite3_reset(g_world->lookup);
  return found;
}

void PrintRow(const char* row, double value, const char* unit, const Baselines& baselines, const std::string& note) {
  PrintJsonRow(g_json, row, value, unit, baselines, note);
  std::fflush(stdout);
}

void HeadlineRows() {
  World& w = *g_world;
  std::fprintf(g_out, "\n== headline rows (median of 7 rounds; wall and CPU time per URL) ==\n");
  const size_t kRound = 200000;
  LookupScratch s;
  const Timing fa = PerUrl(kRound, 7, [&](std::string_view u) { benchmark::DoNotOptimize(w.fa->Check(u)); });
  const Timing bloom = PerUrl(kRound, 7, [&](std::string_view u) { benchmark::DoNotOptimize(w.bloom->Check(u)); });
  const Timing v1 = PerUrl(kRound, 7, [&](std::string_view u) { benchmark::DoNotOptimize(w.v1->Check(u)); });
  const Timing exact = PerUrl(kRound, 7, [&](std::string_view u) {
    benchmark::DoNotOptimize(ExactLookup(u, &s, [&](const Sha256Digest& d) { return w.exact.count(d) > 0; }));
  });
  const Timing sql = PerUrl(kRound / 20, 3, [&](std::string_view u) {
    benchmark::DoNotOptimize(ExactLookup(u, &s, SqliteListed));
  });
  char note[256];
  std::snprintf(note, sizeof note,
                "%llu entries, one thread, Checker::Check end to end; CPU %.3f us (bloom %.3f, unordered_set %.3f, "
                "sqlite %.3f, v1 %.3f)",
                static_cast<unsigned long long>(w.entries), fa.cpu_ns / 1e3, bloom.cpu_ns / 1e3, exact.cpu_ns / 1e3,
                sql.cpu_ns / 1e3, v1.cpu_ns / 1e3);
  PrintRow("lookup_1t_us", fa.wall_ns / 1e3, "us",
           {{"blocked_bloom", bloom.wall_ns / 1e3}, {"unordered_set_sha256", exact.wall_ns / 1e3},
            {"sqlite", sql.wall_ns / 1e3}, {"urlguard_v1_sha256_keys", v1.wall_ns / 1e3}},
           note);
  // The batch path (Checker::CheckBatch, what `urlguard check -` uses): 64 URLs per call, ns per URL.
  std::vector<std::string_view> batch;
  std::vector<Verdict> verdicts;
  const Timing fa_batch = PerUrl(kRound, 7, [&](std::string_view u) {
    batch.push_back(u);
    if (batch.size() == 64) {
      w.fa->CheckBatch(batch, &verdicts);
      benchmark::DoNotOptimize(verdicts.data());
      batch.clear();
    }
  });
  std::snprintf(note, sizeof note, "Checker::CheckBatch, 64 URLs per call, one thread; CPU %.3f us (Check %.3f)",
                fa_batch.cpu_ns / 1e3, fa.cpu_ns / 1e3);
  PrintRow("lookup_batch_1t_us", fa_batch.wall_ns / 1e3, "us", {{"check_one_by_one", fa.wall_ns / 1e3}}, note);
  const Throughput t2 = TwoThreads(*w.fa, 1000000);
  const Throughput t2_bloom = TwoThreads(*w.bloom, 1000000);
  const Throughput t2_v1 = TwoThreads(*w.v1, 1000000);
  std::snprintf(note, sizeof note, "two threads, median of 3 runs of 2 x 1 M URLs; CPU %.3f us per URL (v1 %.3f)",
                t2.cpu_ns / 1e3, t2_v1.cpu_ns / 1e3);
  PrintRow("lookup_2t_mups", t2.urls_per_s / 1e6, "M URLs/s",
           {{"blocked_bloom", t2_bloom.urls_per_s / 1e6}, {"urlguard_v1_sha256_keys", t2_v1.urls_per_s / 1e6}}, note);
  PrintRow("lookup_size_mb", w.size_mb, "MB", {{"blocked_bloom", w.bloom_size_mb}, {"unordered_set_sha256", w.exact_size_mb}},
           "snapshot file for the list (unordered_set: keys only)");
  PrintRow("lookup_fp_per_url_pct", w.fp_per_url * 100, "%", {{"blocked_bloom", w.bloom_fp_per_url * 100}},
           "measured on 1 M generated browsing URLs, truly listed ones excluded");
  // Where the time goes.
  CanonicalUrl cu;
  const Timing canon = PerUrl(kRound, 5, [&](std::string_view u) { benchmark::DoNotOptimize(Canonicalize(u, &cu).ok()); });
  std::snprintf(note, sizeof note, "Canonicalize only; CPU %.0f ns", canon.cpu_ns);
  PrintRow("lookup_canonicalize_ns", canon.wall_ns, "ns", {}, note);
  const Timing xxh = PerUrl(kRound, 5, [&](std::string_view u) {
    if (Canonicalize(u, &s.url).ok()) {
      MakeExpressions(s.url, &s.expressions);
      uint64_t x = 0;
      for (size_t e = 0; e < s.expressions.size(); ++e) x ^= Xxh3Key(s.expressions[e]);
      benchmark::DoNotOptimize(x);
    }
  });
  const Timing sha = PerUrl(kRound, 5, [&](std::string_view u) {
    if (Canonicalize(u, &s.url).ok()) {
      MakeExpressions(s.url, &s.expressions);
      uint64_t x = 0;
      for (size_t e = 0; e < s.expressions.size(); ++e) x ^= Sha256PrefixKey(s.expressions[e]);
      benchmark::DoNotOptimize(x);
    }
  });
  std::snprintf(note, sizeof note,
                "canonicalize + expressions + key hash of every expression (XXH3 vs SHA-256); CPU %.0f ns (SHA-256 "
                "%.0f ns)", xxh.cpu_ns, sha.cpu_ns);
  PrintRow("lookup_canon_expr_hash_ns", xxh.wall_ns, "ns", {{"sha256_keys", sha.wall_ns}}, note);
}

void BM_CheckUrl(benchmark::State& state, int which) {
  const Checker& c = which == 1 ? *g_world->bloom : which == 2 ? *g_world->v1 : *g_world->fa;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c.Check(g_world->urls[i]));
    if (++i == g_world->urls.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_CheckUrl, fingerprint_array, 0)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(BM_CheckUrl, blocked_bloom, 1)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(BM_CheckUrl, v1_sha256_keys, 2)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_CheckBatch(benchmark::State& state) {
  const size_t batch = static_cast<size_t>(state.range(0));
  std::vector<std::string_view> views;
  std::vector<Verdict> out;
  size_t i = 0;
  for (auto _ : state) {
    views.clear();
    for (size_t k = 0; k < batch; ++k) {
      views.push_back(g_world->urls[i]);
      if (++i == g_world->urls.size()) i = 0;
    }
    g_world->fa->CheckBatch(views, &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch));
}
BENCHMARK(BM_CheckBatch)->Arg(64);

void BM_CheckUrlThreads(benchmark::State& state) {
  size_t i = static_cast<size_t>(state.thread_index()) * 99991;
  for (auto _ : state) {
    benchmark::DoNotOptimize(g_world->fa->Check(g_world->urls[i % g_world->urls.size()]));
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CheckUrlThreads)->Threads(2)->UseRealTime();

// The parts of a lookup, to see where the time goes.
void BM_Canonicalize(benchmark::State& state) {
  CanonicalUrl u;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(Canonicalize(g_world->urls[i], &u).ok());
    if (++i == g_world->urls.size()) i = 0;
  }
}
BENCHMARK(BM_Canonicalize);

void BM_CanonicalizeAndHash(benchmark::State& state) {
  LookupScratch s;
  size_t i = 0;
  for (auto _ : state) {
    if (Canonicalize(g_world->urls[i], &s.url).ok()) g_world->fa_chain.HashExpressions(&s);
    benchmark::DoNotOptimize(s.keys[1][0]);
    if (++i == g_world->urls.size()) i = 0;
  }
}
BENCHMARK(BM_CanonicalizeAndHash);

void BM_Probe(benchmark::State& state, bool bloom) {
  auto mapped = Env::Default()->MapReadOnly(bloom ? g_world->bloom_path : g_world->fa_path);
  auto view = SnapshotView::Open((*mapped)->data(), (*mapped)->size(), false);
  const LayerView* l = view->layer(LayerKind::kUrl);
  size_t i = 0;
  for (auto _ : state) {
    uint64_t k = g_world->random_keys[i++ & ((1 << 20) - 1)];
    benchmark::DoNotOptimize(bloom ? l->bloom.MayContain(k) : l->fingerprints.MayContain(k));
  }
}
BENCHMARK_CAPTURE(BM_Probe, fingerprint_array, false);
BENCHMARK_CAPTURE(BM_Probe, blocked_bloom, true);

// Baselines with the same canonicalization and hashing, then an exact lookup per expression:
// is_listed(digest) for each.
template <typename IsListed>
void RunExactBaseline(benchmark::State& state, IsListed is_listed) {
  LookupScratch s;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ExactLookup(g_world->urls[i], &s, is_listed));
    if (++i == g_world->urls.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_CheckUrlUnorderedSet(benchmark::State& state) {
  RunExactBaseline(state, [](const auto& digest) { return g_world->exact.count(digest) > 0; });
}
BENCHMARK(BM_CheckUrlUnorderedSet);

void BM_CheckUrlSqlite(benchmark::State& state) {
  RunExactBaseline(state, SqliteListed);
}
BENCHMARK(BM_CheckUrlSqlite);

void BM_ScanMessages(benchmark::State& state) {
  ExtractResult found;
  size_t i = 0;
  for (auto _ : state) {
    ExtractUrls(g_world->messages[i], &found);
    for (size_t k = 0; k < found.urls.size(); ++k) benchmark::DoNotOptimize(g_world->fa->Check(found.url(k)));
    if (++i == g_world->messages.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("items = messages of 3 URLs");
}
BENCHMARK(BM_ScanMessages);

}  // namespace
}  // namespace urlguard::bench

int main(int argc, char** argv) {
  namespace b = urlguard::bench;
  const char* env_json = std::getenv("URLGUARD_BENCH_JSON");
  b::g_json = env_json != nullptr && std::strcmp(env_json, "0") != 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      b::g_json = true;
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      break;
    }
  }
  if (b::g_json) b::g_out = stderr;
  benchmark::Initialize(&argc, argv);
  b::World world;
  b::g_world = &world;
  b::Setup(world);
  b::HeadlineRows();
  if (b::g_json) return 0;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
