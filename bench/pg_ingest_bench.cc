// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// pg_ingest_bench: how fast feeds go into the PostgreSQL state (pg/pg_state.h, issue 10: "millions of
// changes an hour fit on one PostgreSQL node"). Starts a throwaway PostgreSQL 15 cluster on 127.0.0.1
// (tests/pg_cluster.h), then, in the same run:
//   - batched:  PgState::IngestFeed of N new entries (COPY into a temp table + one INSERT ... ON CONFLICT per
//               kPgIngestBatchRows), then the same N again (all known: the seen-count update path), then the
//               same feed with 10 % of it replaced (N/10 removals + N/10 additions);
//   - verify lookups: a 5-prefix lookup as one PostgreSQL query per request against the in-memory table that
//               PgHashSource keeps (why urlguard-server --state loads versions into memory);
//   - baseline: one INSERT ... ON CONFLICT round trip per entry (the naive way), on a sample of N/20 entries,
//               in one transaction, into another list.
// Reports entries/s by wall time and the CPU seconds of this process and of its PostgreSQL backend (the
// machine is shared: wall time alone misleads).
//
//   pg_ingest_bench [--entries N] [--json]      (N default 500000; --json or URLGUARD_BENCH_JSON=1: JSON rows)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/cpu_time.h"
#include "url/entry.h"
#include "pg/pg_state.h"
#include "tests/pg_cluster.h"

namespace urlguard {
namespace {


// utime + stime of another process, from /proc (the PostgreSQL backend serving our connection).
double OtherCpuSeconds(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = s.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(s.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::strtod(field.c_str(), nullptr);
    if (i == 15) stime = std::strtod(field.c_str(), nullptr);
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct Measure {
  double wall = 0, cpu_client = 0, cpu_server = 0;
};

template <typename F>
Measure Time(int64_t backend, F&& f) {
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = bench::ProcessCpuSeconds(), s0 = OtherCpuSeconds(backend);
  f();
  Measure m;
  m.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  m.cpu_client = bench::ProcessCpuSeconds() - c0;
  m.cpu_server = OtherCpuSeconds(backend) - s0;
  return m;
}

std::vector<PgIngestEntry> Entries(size_t n, size_t offset) {
  std::vector<PgIngestEntry> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto k = EntryKeyFor("host" + std::to_string(offset + i) + ".bench-" + std::to_string((offset + i) % 997) +
                         ".example");
    if (!k.ok()) std::abort();
    out.push_back({std::move(k).value(), "phishing"});
  }
  return out;
}

void Die(const Status& s) {
  std::fprintf(stderr, "pg_ingest_bench: %s\n", s.ToString().c_str());
  std::exit(1);
}

int Main(int argc, char** argv) {
  size_t n = 500000;
  bool json = std::getenv("URLGUARD_BENCH_JSON") != nullptr && std::strcmp(std::getenv("URLGUARD_BENCH_JSON"), "1") == 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--entries") == 0 && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: pg_ingest_bench [--entries N] [--json]\n");
      return 4;
    }
  }
  if (!testing::PgCluster::Available()) {
    std::fprintf(stderr, "pg_ingest_bench: %s\n", testing::PgCluster::SkipReason().c_str());
    return 1;
  }
  std::string error;
  auto cluster = testing::PgCluster::Start("bench", &error);
  if (!cluster) {
    std::fprintf(stderr, "pg_ingest_bench: %s\n", error.c_str());
    return 1;
  }
  auto state = PgState::Open(cluster->conninfo());
  if (!state.ok()) Die(state.status());
  auto pid = (*state)->connection()->Exec("SELECT pg_backend_pid()");
  if (!pid.ok()) Die(pid.status());
  const int64_t backend = pid->int64(0, 0);

  const std::vector<PgIngestEntry> feed = Entries(n, 0);
  Result<PgIngestReport> r = Status::Ok();
  const Measure fresh = Time(backend, [&] { r = (*state)->IngestFeed("bench", "feed-a", feed, 1'700'000'000, true); });
  if (!r.ok()) Die(r.status());
  const Measure again = Time(backend, [&] { r = (*state)->IngestFeed("bench", "feed-a", feed, 1'700'000'100, true); });
  if (!r.ok()) Die(r.status());
  std::vector<PgIngestEntry> churned(feed.begin() + static_cast<std::ptrdiff_t>(n / 10), feed.end());
  for (PgIngestEntry& e : Entries(n / 10, n)) churned.push_back(std::move(e));
  const Measure churn = Time(backend, [&] { r = (*state)->IngestFeed("bench", "feed-a", churned, 1'700'000'200, true); });
  if (!r.ok()) Die(r.status());
  const uint64_t churn_changes = r->new_entries + r->removed;

  // Baseline: one round trip per entry.
  const std::vector<PgIngestEntry> sample = Entries(std::max<size_t>(n / 20, 1), 10 * n);
  const Measure naive = Time(backend, [&] {
    PgConnection* c = (*state)->connection();
    if (!c->Run("BEGIN").ok()) std::abort();
    for (const PgIngestEntry& e : sample) {
      const Sha256Digest d = Sha256(e.key.expression);
      Status s = c->Run(
          "INSERT INTO entries AS e (list, sha256, expression, layer, threat, feeds, first_seen, last_seen)"
          " VALUES ('naive', $1, $2, $3, $4, ARRAY['feed-a'], now(), now())"
          " ON CONFLICT (list, sha256) DO UPDATE SET seen_count = e.seen_count + 1, last_seen = EXCLUDED.last_seen",
          {PgParam::Bytes(std::string_view(reinterpret_cast<const char*>(d.data()), d.size())),
           PgParam::Text(e.key.expression), PgParam::Int(static_cast<int>(e.key.layer)), PgParam::Text(e.threat)});
      if (!s.ok()) Die(s);
    }
    if (!c->Run("COMMIT").ok()) std::abort();
  });

  // Verify servers: a query per verify request (5 prefixes, one range scan of the primary key each, one round
  // trip) against the in-memory table PgHashSource keeps (binary search of a sorted array), same keys.
  constexpr int kLookups = 2000;
  std::vector<Sha256Digest> sorted;
  sorted.reserve(feed.size());
  for (const PgIngestEntry& e : feed) sorted.push_back(Sha256(e.key.expression));
  for (const PgIngestEntry& e : churned) sorted.push_back(Sha256(e.key.expression));  // every key of the list
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::sort(sorted.begin(), sorted.end());
  auto prefix_of = [](const Sha256Digest& d) {
    return (uint32_t{d[0]} << 24) | (uint32_t{d[1]} << 16) | (uint32_t{d[2]} << 8) | uint32_t{d[3]};
  };
  uint64_t pg_hits = 0, mem_hits = 0;
  const Measure per_query = Time(backend, [&] {
    PgConnection* c = (*state)->connection();
    for (int i = 0; i < kLookups; ++i) {
      std::string sql = "SELECT sha256, layer, threat FROM entries WHERE list = 'bench' AND removed_version IS NULL AND (";
      std::vector<PgParam> params;
      for (int j = 0; j < 5; ++j) {
        const Sha256Digest& d = sorted[(static_cast<size_t>(i) * 7919 + static_cast<size_t>(j) * 104729) % sorted.size()];
        std::string lo(reinterpret_cast<const char*>(d.data()), 4);
        uint32_t p = prefix_of(d) + 1;
        std::string hi = {static_cast<char>(p >> 24), static_cast<char>(p >> 16), static_cast<char>(p >> 8),
                          static_cast<char>(p)};
        if (j != 0) sql += " OR ";
        sql += "(sha256 >= $" + std::to_string(2 * j + 1) + " AND sha256 < $" + std::to_string(2 * j + 2) + ")";
        params.push_back(PgParam::Bytes(lo));
        params.push_back(PgParam::Bytes(hi));
      }
      auto r = c->Exec(sql + ")", params);
      if (!r.ok()) Die(r.status());
      pg_hits += static_cast<uint64_t>(r->rows());
    }
  });
  const Measure in_memory = Time(backend, [&] {
    for (int i = 0; i < kLookups; ++i) {
      for (int j = 0; j < 5; ++j) {
        const uint32_t p = prefix_of(sorted[(static_cast<size_t>(i) * 7919 + static_cast<size_t>(j) * 104729) % sorted.size()]);
        auto it = std::lower_bound(sorted.begin(), sorted.end(), p,
                                   [&](const Sha256Digest& d, uint32_t q) { return prefix_of(d) < q; });
        for (; it != sorted.end() && prefix_of(*it) == p; ++it) ++mem_hits;
      }
    }
  });
  if (pg_hits != mem_hits) {
    std::fprintf(stderr, "pg_ingest_bench: the query found %llu records, the table %llu\n",
                 static_cast<unsigned long long>(pg_hits), static_cast<unsigned long long>(mem_hits));
    return 1;
  }
  const double query_us = per_query.wall * 1e6 / kLookups;
  const double query_cpu_us = (per_query.cpu_client + per_query.cpu_server) * 1e6 / kLookups;
  const double memory_us = in_memory.wall * 1e6 / kLookups;

  const double eps_fresh = static_cast<double>(n) / fresh.wall;
  const double eps_again = static_cast<double>(n) / again.wall;
  const double eps_churn = static_cast<double>(churned.size()) / churn.wall;
  const double eps_naive = static_cast<double>(sample.size()) / naive.wall;
  auto line = [](const char* what, size_t rows, const Measure& m) {
    std::printf("%-44s %9zu rows  %7.2f s wall  %8.0f entries/s  cpu: client %.2f s, postgres %.2f s = %8.0f "
                "entries per cpu second\n",
                what, rows, m.wall, static_cast<double>(rows) / m.wall, m.cpu_client, m.cpu_server,
                static_cast<double>(rows) / (m.cpu_client + m.cpu_server));
  };
  if (json) {
    std::printf("{\"row\": \"pg_ingest_eps\", \"value\": %.0f, \"unit\": \"entries/s\", \"baselines\": "
                "{\"one_upsert_per_entry\": %.0f}, \"note\": \"%zu new entries, batched COPY + INSERT ON CONFLICT; "
                "cpu client %.2f s, postgres %.2f s (%.0f entries per cpu second; baseline %.0f), wall %.2f s\"}\n",
                eps_fresh, eps_naive, n, fresh.cpu_client, fresh.cpu_server,
                static_cast<double>(n) / (fresh.cpu_client + fresh.cpu_server),
                static_cast<double>(sample.size()) / (naive.cpu_client + naive.cpu_server), fresh.wall);
    std::printf("{\"row\": \"pg_ingest_eps_known\", \"value\": %.0f, \"unit\": \"entries/s\", \"baselines\": "
                "{\"one_upsert_per_entry\": %.0f}, \"note\": \"%zu entries all seen before (seen-count updates)\"}\n",
                eps_again, eps_naive, n);
    std::printf("{\"row\": \"pg_ingest_eps_churn\", \"value\": %.0f, \"unit\": \"entries/s\", \"baselines\": "
                "{\"one_upsert_per_entry\": %.0f}, \"note\": \"feed re-ingested with %llu changes (10%% replaced)\"}\n",
                eps_churn, eps_naive, static_cast<unsigned long long>(churn_changes));
    std::printf("{\"row\": \"pg_verify_query_us\", \"value\": %.1f, \"unit\": \"us\", \"baselines\": "
                "{\"in_memory_table\": %.2f}, \"note\": \"5-prefix verify lookup over %zu keys as one PostgreSQL "
                "query per request (cpu %.1f us client+server) vs the in-memory table urlguard-server --state keeps\"}\n",
                query_us, memory_us, n, query_cpu_us);
  } else {
    std::printf("PostgreSQL ingest (throwaway cluster on 127.0.0.1, fsync off), %zu entries\n", n);
    line("batched, all new", n, fresh);
    line("batched, all seen before", n, again);
    line("batched, 10% replaced", churned.size(), churn);
    line("baseline: one upsert round trip per entry", sample.size(), naive);
    std::printf("batched / baseline: %.1fx\n", eps_fresh / eps_naive);
    std::printf("verify lookup (5 prefixes, %zu keys): one PostgreSQL query %.1f us wall (%.1f us cpu client+server); "
                "in-memory table %.2f us\n", n, query_us, query_cpu_us, memory_us);
  }
  return 0;
}

}  // namespace
}  // namespace urlguard

int main(int argc, char** argv) { return urlguard::Main(argc, argv); }
