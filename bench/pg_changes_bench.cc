// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// pg_changes_bench: how a PostgreSQL-backed verify server (server/pg_hash_source.h) picks up a new version
// (issue 17: "PostgreSQL-backed servers read the change log, not the whole version"). Starts a throwaway
// PostgreSQL 15 cluster on 127.0.0.1 (tests/pg_cluster.h), ingests N entries into one list and publishes them
// as version 1 (PgState directly, no files), opens two sources at version 1, then for each of `--versions`
// versions of C changes (C/2 new entries, C/2 removed) measures, in the same run:
//   - full:       a source with use_change_log = false: Refresh() reads every entry live at the new version
//                 (StreamVersion), the behaviour before issue 17;
//   - change log: the default source: Refresh() reads PgState::StreamChanges(loaded, new) and merges it into its
//                 overlay.
// For each: pick-up wall time, this process's CPU seconds (the PostgreSQL backend's are not included), and rows
// read from PostgreSQL. Both sources must then answer the same records for a sample of prefixes (checked; the
// bench fails otherwise). It also prints the change-log query's plan at this size (PgState::ExplainChanges).
//
//   pg_changes_bench [--entries N] [--changes C] [--versions K] [--json]   (defaults 1000000, 10000, 3)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/cpu_time.h"
#include "pg/pg_state.h"
#include "server/pg_hash_source.h"
#include "tests/pg_cluster.h"
#include "url/entry.h"

namespace urlguard {
namespace {

void Die(const Status& s) {
  std::fprintf(stderr, "pg_changes_bench: %s\n", s.ToString().c_str());
  std::exit(1);
}

std::vector<PgIngestEntry> Entries(size_t n, size_t offset) {
  std::vector<PgIngestEntry> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto k = EntryKeyFor("host" + std::to_string(offset + i) + ".changes-" + std::to_string((offset + i) % 997) +
                         ".example");
    if (!k.ok()) std::abort();
    out.push_back({std::move(k).value(), "phishing"});
  }
  return out;
}

void PublishNext(PgState* state, const std::string& list) {
  auto begun = state->BeginPublish(list);
  if (!begun.ok()) Die(begun.status());
  const uint64_t v = begun->version + 1;
  Status s = state->StreamNextVersion(list, v, [](const PgLiveEntry&) {});
  if (!s.ok()) Die(s);
  VersionCommit c;
  c.list = list;
  c.version = v;
  c.manifest = "bench manifest " + std::to_string(v);
  c.signature = "bench";
  s = state->CommitVersion(c);
  if (!s.ok()) Die(s);
  state->EndPublish(list);
}

struct Pickup {
  double wall = 0, cpu = 0;
  uint64_t rows = 0;
};

Pickup Refresh(PgHashSource* source) {
  const uint64_t rows0 = source->stats().rows_read;
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = bench::ProcessCpuSeconds();
  Status s = source->Refresh();
  if (!s.ok()) Die(s);
  Pickup p;
  p.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  p.cpu = bench::ProcessCpuSeconds() - c0;
  p.rows = source->stats().rows_read - rows0;
  return p;
}

int Main(int argc, char** argv) {
  size_t n = 1'000'000, changes = 10'000;
  int versions = 3;
  bool json = std::getenv("URLGUARD_BENCH_JSON") != nullptr && std::strcmp(std::getenv("URLGUARD_BENCH_JSON"), "1") == 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--entries") == 0 && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--changes") == 0 && i + 1 < argc) {
      changes = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--versions") == 0 && i + 1 < argc) {
      versions = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: pg_changes_bench [--entries N] [--changes C] [--versions K] [--json]\n");
      return 4;
    }
  }
  if (changes < 2 || changes / 2 * static_cast<size_t>(versions) > n) {
    std::fprintf(stderr, "pg_changes_bench: --changes must be >= 2 and removals must fit in --entries\n");
    return 4;
  }
  if (!testing::PgCluster::Available()) {
    std::fprintf(stderr, "pg_changes_bench: %s\n", testing::PgCluster::SkipReason().c_str());
    return 1;
  }
  std::string error;
  auto cluster = testing::PgCluster::Start("bench", &error);
  if (!cluster) {
    std::fprintf(stderr, "pg_changes_bench: %s\n", error.c_str());
    return 1;
  }
  auto state = PgState::Open(cluster->conninfo());
  if (!state.ok()) Die(state.status());
  const std::string list = "bench";
  const std::vector<PgIngestEntry> feed = Entries(n, 0);
  auto r = (*state)->IngestFeed(list, "feed-a", feed, 1'700'000'000, /*replace_feed=*/false);
  if (!r.ok()) Die(r.status());
  PublishNext(state->get(), list);
  if (!(*state)->connection()->Run("ANALYZE entries").ok()) std::abort();

  PgHashSourceOptions full_only;
  full_only.use_change_log = false;
  auto full = PgHashSource::Open(cluster->conninfo(), nullptr, full_only);
  if (!full.ok()) Die(full.status());
  auto incremental = PgHashSource::Open(cluster->conninfo());
  if (!incremental.ok()) Die(incremental.status());

  size_t next_new = n, next_removed = 0;
  for (int v = 2; v <= versions + 1; ++v) {
    const std::vector<PgIngestEntry> added = Entries(changes / 2, next_new);
    next_new += changes / 2;
    r = (*state)->IngestFeed(list, "feed-a", added, 1'700'000'000 + v, false);
    if (!r.ok()) Die(r.status());
    std::vector<Sha256Digest> removed;
    for (size_t i = 0; i < changes - changes / 2; ++i) removed.push_back(Sha256(feed[next_removed++ * 7 % n].key.expression));
    auto u = (*state)->RemoveEntries(list, "feed-a", removed);
    if (!u.ok()) Die(u.status());
    PublishNext(state->get(), list);
    if (v == 2) {
      // Statistics that know the version-2 rows, as autovacuum would gather them soon after.
      if (!(*state)->connection()->Run("ANALYZE entries").ok()) std::abort();
      auto plan = (*state)->ExplainChanges(list, 1, 2);
      if (!plan.ok()) Die(plan.status());
      if (!json) std::printf("change-log plan at %zu entries, %zu changes:\n%s\n", n, changes, plan->c_str());
    }
    const Pickup f = Refresh(full->get());
    const Pickup c = Refresh(incremental->get());
    // Same answers: every prefix of the added keys and of a sample of the list.
    std::vector<uint32_t> prefixes;
    for (size_t i = 0; i < added.size() && prefixes.size() < kMaxLookupPrefixes / 2; ++i) {
      const Sha256Digest d = Sha256(added[i].key.expression);
      prefixes.push_back((uint32_t{d[0]} << 24) | (uint32_t{d[1]} << 16) | (uint32_t{d[2]} << 8) | uint32_t{d[3]});
    }
    for (size_t i = 0; prefixes.size() < kMaxLookupPrefixes; ++i) prefixes.push_back(static_cast<uint32_t>(i * 2654435761u));
    VerifyLookup a, b;
    if (!(*full)->Lookup(prefixes, &a).ok() || !(*incremental)->Lookup(prefixes, &b).ok()) std::abort();
    bool same = a.records.size() == b.records.size() && (*full)->Loaded()[0].records == (*incremental)->Loaded()[0].records;
    for (size_t i = 0; same && i < a.records.size(); ++i) {
      same = a.records[i].sha256 == b.records[i].sha256 && a.records[i].threat == b.records[i].threat;
    }
    if (!same) {
      std::fprintf(stderr, "pg_changes_bench: the change-log source answers differently from the full load\n");
      return 1;
    }
    const uint64_t live = (*incremental)->Loaded()[0].records;
    if (json) {
      std::printf("{\"bench\":\"pg_changes\",\"entries\":%llu,\"changes\":%zu,\"version\":%d,"
                  "\"full_wall_s\":%.4f,\"full_cpu_s\":%.4f,\"full_rows\":%llu,"
                  "\"changelog_wall_s\":%.4f,\"changelog_cpu_s\":%.4f,\"changelog_rows\":%llu}\n",
                  static_cast<unsigned long long>(live), changes, v, f.wall, f.cpu,
                  static_cast<unsigned long long>(f.rows), c.wall, c.cpu, static_cast<unsigned long long>(c.rows));
    } else {
      std::printf("version %d (%llu entries, %zu changes): full reload %.3f s wall, %.3f s CPU, %llu rows | "
                  "change log %.4f s wall, %.4f s CPU, %llu rows | %.0fx less wall, %.0fx fewer rows\n",
                  v, static_cast<unsigned long long>(live), changes, f.wall, f.cpu,
                  static_cast<unsigned long long>(f.rows), c.wall, c.cpu, static_cast<unsigned long long>(c.rows),
                  f.wall / std::max(c.wall, 1e-9), static_cast<double>(f.rows) / static_cast<double>(std::max<uint64_t>(c.rows, 1)));
    }
  }
  return 0;
}

}  // namespace
}  // namespace urlguard

int main(int argc, char** argv) { return urlguard::Main(argc, argv); }
