// Copyright urlguard authors.
//
// verify_load_bench: the verify API under load (docs/architecture.md §6, §8). Not a Google Benchmark: it prepares a
// repository with a full-hash store of N hashes (deterministic), measures the store alone, and serves it so
// that an external load generator (wrk) can measure the HTTP path. bench/verify_load.md has the numbers and
// the exact commands.
//
//   verify_load_bench DIR [hashes] [serve_seconds] [port]     (defaults: 1000000 0 0)
//
// 1. Writes DIR/public/v1/lists/{phishing,malware}/manifest.json and DIR/private/hashes.sqlite with `hashes`
//    records (SHA-256 of "bench-<i>.example/<i % 7>"; three in four phishing, one in four malware) unless the
//    store already holds them, and reports how long ReplaceList took.
// 2. Store lookups per second (5 prefixes per lookup, one in five a stored prefix) for 1 and 2 threads with a
//    connection pool of 1 (one connection behind the pool's mutex) and of 4: the measurement behind
//    publish/hash_store.h's choice.
// 3. Writes DIR/verify.lua, a wrk script that POSTs 1000 different bodies of 1-5 prefixes (20 % stored).
// 4. With serve_seconds > 0: runs the server (throttle threshold 59: the guard is consulted on every
//    request but never refuses) for that long, printing "listening on http://127.0.0.1:PORT" first.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/sha256.h"
#include "platform/env.h"
#include "bench/sqlite_hash_store.h"
#include "urlguard/server.h"

namespace urlguard {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

Sha256Digest BenchHash(uint64_t i) {
  return Sha256("bench-" + std::to_string(i) + ".example/" + std::to_string(i % 7));
}

int Fail(const Status& s) {
  std::fprintf(stderr, "verify_load_bench: %s\n", s.ToString().c_str());
  return 1;
}

// One in five prefixes is stored (a random stored hash), the rest random.
uint32_t ProbePrefix(uint64_t hashes, std::mt19937_64& rng) {
  if (rng() % 5 == 0) return DigestPrefix32(BenchHash(rng() % hashes));
  return static_cast<uint32_t>(rng());
}

Status BuildRepository(const std::string& dir, uint64_t hashes) {
  Env* env = Env::Default();
  const uint64_t malware = hashes / 4, phishing = hashes - malware;
  for (const auto& [list, count] :
       {std::pair<std::string, uint64_t>{"phishing", phishing}, {"malware", malware}}) {
    const std::string list_dir = dir + "/public/v1/lists/" + list;
    URLGUARD_RETURN_IF_ERROR(env->CreateDirs(list_dir));
    URLGUARD_RETURN_IF_ERROR(
        WriteFileAtomic(env, list_dir + "/manifest.json",
                        "{\"list\": \"" + list +
                            "\", \"version\": 1, \"entries\": {\"url\": " + std::to_string(count) + "}}"));
  }
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(dir + "/private"));
  URLGUARD_ASSIGN_OR_RETURN(auto store,
                            FullHashStore::Open(dir + "/private/hashes.sqlite", /*read_only=*/false));
  URLGUARD_ASSIGN_OR_RETURN(uint64_t have_phishing, store->CountList("phishing"));
  URLGUARD_ASSIGN_OR_RETURN(uint64_t have_malware, store->CountList("malware"));
  if (have_phishing == phishing && have_malware == malware) {
    std::printf("store: %s already holds %llu hashes\n", (dir + "/private/hashes.sqlite").c_str(),
                static_cast<unsigned long long>(hashes));
    return Status::Ok();
  }
  std::vector<FullHashRecord> p, m;
  for (uint64_t i = 0; i < hashes; ++i) {
    if (i % 4 == 3) {
      m.push_back({BenchHash(i), "malware", LayerKind::kUrl, "malware"});
    } else {
      p.push_back(
          {BenchHash(i), "phishing", i % 2 ? LayerKind::kUrl : LayerKind::kDomain, "social_engineering"});
    }
  }
  const auto start = Clock::now();
  URLGUARD_RETURN_IF_ERROR(store->ReplaceList("phishing", p));
  URLGUARD_RETURN_IF_ERROR(store->ReplaceList("malware", m));
  const auto built = Clock::now();
  // A second version of phishing with 1 % of it replaced (what a publisher run usually costs), then back.
  std::vector<FullHashRecord> p2 = p;
  for (size_t i = 0; i < p2.size() / 100; ++i) p2[i].sha256 = Sha256("replacement-" + std::to_string(i));
  URLGUARD_RETURN_IF_ERROR(store->ReplaceList("phishing", p2));
  const auto updated = Clock::now();
  URLGUARD_RETURN_IF_ERROR(store->ReplaceList("phishing", p));
  std::printf(
      "store: %llu hashes written in %.2f s; replacing 1%% of phishing took %.2f s, and back %.2f s\n",
      static_cast<unsigned long long>(hashes), Seconds(start, built), Seconds(built, updated),
      Seconds(updated, Clock::now()));
  return Status::Ok();
}

Status MeasureStore(const std::string& dir, uint64_t hashes) {
  for (int pool : {1, 4}) {
    URLGUARD_ASSIGN_OR_RETURN(auto store, FullHashStore::Open(dir + "/private/hashes.sqlite", true, pool));
    for (int threads : {1, 2}) {
      constexpr int kLookupsPerThread = 100000;
      std::atomic<uint64_t> matches{0};
      std::atomic<bool> failed{false};
      const auto start = Clock::now();
      std::vector<std::thread> workers;
      for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          std::mt19937_64 rng(1000 + t);
          std::vector<uint32_t> prefixes(5);
          for (int i = 0; i < kLookupsPerThread; ++i) {
            for (auto& p : prefixes) p = ProbePrefix(hashes, rng);
            auto got = store->LookupPrefixes(prefixes);
            if (!got.ok()) {
              failed = true;
              return;
            }
            matches += got->size();
          }
        });
      }
      for (auto& w : workers) w.join();
      const double s = Seconds(start, Clock::now());
      if (failed) return Status::Internal("lookup failed");
      std::printf(
          "store lookups (5 prefixes): pool %d, %d thread(s): %.0f lookups/s (%.1f us each), %llu matches\n",
          pool, threads, threads * kLookupsPerThread / s, s * 1e6 / kLookupsPerThread,
          static_cast<unsigned long long>(matches.load()));
    }
  }
  return Status::Ok();
}

// Writes DIR/NAME: a wrk script POSTing 1000 different verify bodies of min_prefixes..max_prefixes prefixes.
Status WriteWrkScript(const std::string& dir, const std::string& name, uint64_t hashes, int min_prefixes,
                      int max_prefixes) {
  std::mt19937_64 rng(7);
  std::string lua =
      "-- wrk script written by bench/verify_load_bench.cc: POSTs 1000 different verify bodies.\n";
  lua += "local bodies = {\n";
  for (int i = 0; i < 1000; ++i) {
    const int n = min_prefixes + static_cast<int>(rng() % static_cast<uint64_t>(max_prefixes - min_prefixes + 1));
    std::string body = "{\"prefixes\": [";
    for (int k = 0; k < n; ++k) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "%08x", ProbePrefix(hashes, rng));
      body += std::string(k ? ", " : "") + "\"" + hex + "\"";
    }
    body += "]}";
    std::string escaped;
    for (char c : body) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    lua += "  \"" + escaped + "\",\n";
  }
  lua += "}\nlocal counter = 0\n";
  lua += "request = function()\n  counter = counter + 1\n";
  lua +=
      "  return wrk.format(\"POST\", \"/v1/verify\", {[\"Content-Type\"] = \"application/json\"}, "
      "bodies[(counter % #bodies) + 1])\nend\n";
  lua +=
      "response = function(status, headers, body)\n  if status ~= 200 then\n"
      "    io.stderr:write(\"unexpected status \" .. status .. \"\\n\")\n  end\nend\n";
  return WriteFileAtomic(Env::Default(), dir + "/" + name, lua);
}

Status WriteWrkScripts(const std::string& dir, uint64_t hashes) {
  URLGUARD_RETURN_IF_ERROR(WriteWrkScript(dir, "verify.lua", hashes, 1, 5));
  URLGUARD_RETURN_IF_ERROR(WriteWrkScript(dir, "verify1.lua", hashes, 1, 1));
  return WriteWrkScript(dir, "verify5.lua", hashes, 5, 5);
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: verify_load_bench DIR [hashes] [serve_seconds] [port]\n");
    return 4;
  }
  const std::string dir = argv[1];
  const uint64_t hashes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1000000;
  const int serve_seconds = argc > 3 ? std::atoi(argv[3]) : 0;
  const int port = argc > 4 ? std::atoi(argv[4]) : 0;
  if (hashes < 4) return Fail(Status::InvalidArgument("hashes must be at least 4"));
  if (Status s = BuildRepository(dir, hashes); !s.ok()) return Fail(s);
  if (Status s = MeasureStore(dir, hashes); !s.ok()) return Fail(s);
  if (Status s = WriteWrkScripts(dir, hashes); !s.ok()) return Fail(s);
  std::printf("wrk scripts: %s/verify.lua (1-5 prefixes), verify1.lua (1), verify5.lua (5)\n", dir.c_str());
  if (serve_seconds <= 0) return 0;

  ServerOptions options;
  options.repo_dir = dir;
  options.listen = "127.0.0.1:" + std::to_string(port);
  options.throttle_threshold = 59;
  options.max_requests_per_second = 0;  // wrk is one client address: keep the window on the path, no rate cap
  auto server = Server::Start(options);
  if (!server.ok()) return Fail(server.status());
  std::printf("listening on http://127.0.0.1:%d\n", (*server)->port());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(serve_seconds));
  (*server)->Stop();
  return 0;
}

}  // namespace
}  // namespace urlguard

int main(int argc, char** argv) { return urlguard::Main(argc, argv); }
