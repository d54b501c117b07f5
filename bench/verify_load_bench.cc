// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// verify_load_bench: the verify API under load, with its baseline in the same run (docs/verify-server.md,
// docs/performance.md). Not a Google Benchmark: it builds a repository of N full hashes (deterministic), then
//   1. times lookups alone: the mapped full-hash files (server/file_hash_source.h) against the SQLite store
//      they replaced (bench/sqlite_hash_store.h), 5 prefixes per lookup, one in five a stored prefix;
//   2. serves each source in this process through the real server stack (ServerApp on the http/ layer) and
//      loads it from a cheap C++ client in this process: one thread, epoll, C keep-alive connections, one request
//      in flight per connection, 1000 different POST bodies of 1-5 prefixes (20 % stored). It reports requests
//      per second (wall), and CPU per request of the server threads and of the client thread separately
//      (getrusage minus the client thread's CLOCK_THREAD_CPUTIME_ID), since the machine is shared.
//
//   verify_load_bench [--hashes N] [--seconds S] [--connections C] [--workers W] [--dir DIR] [--no-sqlite]
//                     [--serve SECONDS] [--load PORT [--requests N]] [--head-bytes N] [--json]
//
// --json (or URLGUARD_BENCH_JSON=1) prints one JSON row per line for bench/perf_table.py:
//   verify_rps            req/s, file source; baselines: sqlite_store (same run)
//   verify_rps_<size>     the same, named by hash count (verify_rps_1m, verify_rps_10m, verify_rps_100m)
//   verify_server_cpu_us  server CPU per request; baselines: sqlite_store
//   verify_server_allocs  server malloc/calloc/realloc calls per request; baselines: sqlite_store
//   verify_lookup_us      one 5-prefix lookup, no HTTP; baselines: sqlite_store
// --serve S: instead of measuring, serve the file source on 127.0.0.1 for S seconds (for wrk or callgrind);
// --load PORT: only the load generator, against that port (e.g. a --serve process under valgrind); with
// --requests N it sends exactly N requests and stops (instructions per request = callgrind total / N).
// --head-bytes N: also serve with max_head_bytes N (MHD's per-connection pool, zeroed after every request; the
// server's default is 32 KiB) and print that run beside the default one.
// The repository is cached in DIR (default /tmp/urlguard-verify-bench-N) across runs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_time.h"
#include "bench/sqlite_hash_store.h"
#include "core/sha256.h"
#include "format/full_hash_file.h"
#include "http/http_server.h"
#include "http/listen_address.h"
#include "platform/env.h"
#include "server/file_hash_source.h"
#include "server/server_app.h"
#include "urlguard/server.h"

// ---- Allocation counting --------------------------------------------------------------------------------
// glibc lets a program interpose malloc, calloc, realloc and free (the GNU C Library manual, "Replacing
// malloc"); these count calls per thread slot (no shared cache line on the hot path) and forward to glibc's
// allocator. The server's allocations per request = all counted calls during a run minus the load generator's
// thread's, divided by the requests.
extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void __libc_free(void*);

namespace {
constexpr int kAllocSlots = 128;
struct alignas(64) AllocSlot {
  std::atomic<uint64_t> calls{0};
};
AllocSlot g_alloc_slots[kAllocSlots];
std::atomic<int> g_next_alloc_slot{0};
thread_local int t_alloc_slot = -1;  // constant-initialized: no allocation on first use

inline void CountAlloc() {
  if (t_alloc_slot < 0) t_alloc_slot = g_next_alloc_slot.fetch_add(1, std::memory_order_relaxed) % kAllocSlots;
  g_alloc_slots[t_alloc_slot].calls.fetch_add(1, std::memory_order_relaxed);
}

uint64_t TotalAllocs() {
  uint64_t total = 0;
  for (const AllocSlot& s : g_alloc_slots) total += s.calls.load(std::memory_order_relaxed);
  return total;
}

// This thread's allocations so far.
uint64_t ThreadAllocs() {
  return t_alloc_slot < 0 ? 0 : g_alloc_slots[t_alloc_slot].calls.load(std::memory_order_relaxed);
}
}  // namespace

extern "C" void* malloc(size_t n) {
  CountAlloc();
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t n, size_t size) {
  CountAlloc();
  return __libc_calloc(n, size);
}
extern "C" void* realloc(void* p, size_t n) {
  CountAlloc();
  return __libc_realloc(p, n);
}
extern "C" void free(void* p) { __libc_free(p); }

namespace urlguard {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }


// User and system CPU seconds of this process (RUSAGE_SELF) or this thread (RUSAGE_THREAD).
void CpuSplit(int who, double* user, double* sys) {
  rusage u{};
  getrusage(who, &u);
  *user = static_cast<double>(u.ru_utime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec) * 1e-6;
  *sys = static_cast<double>(u.ru_stime.tv_sec) + static_cast<double>(u.ru_stime.tv_usec) * 1e-6;
}


Sha256Digest BenchHash(uint64_t i) { return Sha256("bench-" + std::to_string(i) + ".example/" + std::to_string(i % 7)); }

// Three in four hashes are phishing (half domain, half url layer), one in four malware.
const char* ListOf(uint64_t i) { return i % 4 == 3 ? "malware" : "phishing"; }
LayerKind LayerOf(uint64_t i) { return i % 4 == 3 || i % 2 == 1 ? LayerKind::kUrl : LayerKind::kDomain; }

int Fail(const Status& s) {
  std::fprintf(stderr, "verify_load_bench: %s\n", s.ToString().c_str());
  return 1;
}

// One in five prefixes is stored (a random stored hash), the rest random.
uint32_t ProbePrefix(uint64_t hashes, std::mt19937_64& rng) {
  if (rng() % 5 == 0) return DigestPrefix32(BenchHash(rng() % hashes));
  return static_cast<uint32_t>(rng());
}

// Writes DIR/public/ and DIR/private/lists/{phishing,malware}/1.ugh unless they already hold `hashes` records.
Status BuildFiles(const std::string& dir, uint64_t hashes) {
  Env* env = Env::Default();
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(dir + "/public"));
  auto existing = FileHashSource::Open(env, dir + "/private/lists");
  uint64_t have = 0;
  for (const LoadedListVersion& l : existing->Loaded()) have += l.records;
  if (have == hashes) return Status::Ok();
  const auto start = Clock::now();
  for (const char* list : {"phishing", "malware"}) {
    struct Rec {
      Sha256Digest sha;
      LayerKind layer;
    };
    std::vector<Rec> recs;
    for (uint64_t i = 0; i < hashes; ++i) {
      if (std::strcmp(ListOf(i), list) == 0) recs.push_back({BenchHash(i), LayerOf(i)});
    }
    std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) {
      return a.sha != b.sha ? a.sha < b.sha : a.layer < b.layer;
    });
    const std::string list_dir = dir + "/private/lists/" + list;
    URLGUARD_RETURN_IF_ERROR(env->CreateDirs(list_dir));
    const std::string threat = std::strcmp(list, "malware") == 0 ? "malware" : "social_engineering";
    URLGUARD_ASSIGN_OR_RETURN(auto writer,
                              FullHashFileWriter::Create(env, list_dir + "/1.ugh", list, 1, {threat}, recs.size()));
    for (const Rec& r : recs) URLGUARD_RETURN_IF_ERROR(writer.Add(r.sha, r.layer, 0));
    URLGUARD_RETURN_IF_ERROR(writer.Finish());
  }
  std::printf("full-hash files: %llu hashes written in %.2f s\n", static_cast<unsigned long long>(hashes),
              Seconds(start, Clock::now()));
  return Status::Ok();
}

Status BuildSqlite(const std::string& path, uint64_t hashes) {
  URLGUARD_ASSIGN_OR_RETURN(auto store, FullHashStore::Open(path, /*read_only=*/false));
  URLGUARD_ASSIGN_OR_RETURN(uint64_t have_phishing, store->CountList("phishing"));
  URLGUARD_ASSIGN_OR_RETURN(uint64_t have_malware, store->CountList("malware"));
  if (have_phishing + have_malware == hashes) return Status::Ok();
  const auto start = Clock::now();
  for (const char* list : {"phishing", "malware"}) {
    std::vector<FullHashRecord> recs;
    const std::string threat = std::strcmp(list, "malware") == 0 ? "malware" : "social_engineering";
    for (uint64_t i = 0; i < hashes; ++i) {
      if (std::strcmp(ListOf(i), list) == 0) recs.push_back({BenchHash(i), list, LayerOf(i), threat});
    }
    URLGUARD_RETURN_IF_ERROR(store->ReplaceList(list, recs));
  }
  std::printf("sqlite baseline: %llu hashes written in %.2f s\n", static_cast<unsigned long long>(hashes),
              Seconds(start, Clock::now()));
  return Status::Ok();
}

// The SQLite store behind the VerifyHashSource interface: what the server did before the full-hash files
// (one LookupPrefixes per request, rows copied into strings).
class SqliteHashSource : public VerifyHashSource {
 public:
  explicit SqliteHashSource(std::unique_ptr<FullHashStore> store) : store_(std::move(store)) {}
  Status Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const override {
    auto found = store_->LookupPrefixes(std::vector<uint32_t>(prefixes.begin(), prefixes.end()));
    if (!found.ok()) return found.status();
    auto held = std::make_shared<std::vector<FullHashRecord>>(std::move(found).value());
    out->records.clear();
    for (const FullHashRecord& r : *held) out->records.push_back({r.sha256, r.list, r.layer, r.threat});
    out->pin = std::move(held);
    return Status::Ok();
  }
  Status Refresh() override { return Status::Ok(); }
  std::vector<LoadedListVersion> Loaded() const override { return {}; }

 private:
  std::unique_ptr<FullHashStore> store_;
};

// Microseconds per 5-prefix lookup on one thread (CPU time), and the matches seen (both sources must agree).
double TimeLookups(const VerifyHashSource& source, uint64_t hashes, uint64_t* matches) {
  constexpr int kLookups = 200000;
  std::mt19937_64 rng(1000);
  std::vector<uint32_t> probes(5 * kLookups);
  for (auto& p : probes) p = ProbePrefix(hashes, rng);
  VerifyLookup out;
  *matches = 0;
  const double start = bench::ThreadCpuSeconds();
  for (int i = 0; i < kLookups; ++i) {
    if (!source.Lookup(std::span<const uint32_t>(probes).subspan(5 * static_cast<size_t>(i), 5), &out).ok()) return -1;
    *matches += out.records.size();
  }
  return (bench::ThreadCpuSeconds() - start) * 1e6 / kLookups;
}

// 1000 different POST requests with 1-5 prefixes each.
std::vector<std::string> MakeRequests(uint64_t hashes) {
  std::mt19937_64 rng(7);
  std::vector<std::string> out;
  for (int i = 0; i < 1000; ++i) {
    const int n = 1 + static_cast<int>(rng() % 5);
    std::string body = "{\"prefixes\": [";
    for (int k = 0; k < n; ++k) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "%08x", ProbePrefix(hashes, rng));
      body += std::string(k ? ", " : "") + "\"" + hex + "\"";
    }
    body += "]}";
    out.push_back("POST /v1/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  }
  return out;
}

struct LoadResult {
  uint64_t ok = 0, errors = 0;
  double wall_seconds = 0, client_cpu_seconds = 0;
  double client_user_seconds = 0, client_sys_seconds = 0;  // RUSAGE_THREAD over the run
  uint64_t client_allocs = 0;                              // the load generator's own allocations in the run
};

// The load generator: one thread, epoll, `connections` keep-alive connections with one request in flight each.
// With max_requests > 0 it stops after that many answers (a fixed count, for callgrind), else after `seconds`.
LoadResult RunLoad(int port, int connections, double seconds, const std::vector<std::string>& requests,
                   uint64_t max_requests = 0) {
  LoadResult result;
  struct Conn {
    int fd = -1;
    std::string in;
    size_t next = 0;
  };
  std::vector<Conn> conns(static_cast<size_t>(connections));
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  size_t counter = 0;
  auto send_next = [&](Conn& c) {
    if (max_requests > 0 && counter >= max_requests) return;  // exactly max_requests are sent
    const std::string& r = requests[counter++ % requests.size()];
    if (::send(c.fd, r.data(), r.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(r.size())) ++result.errors;
  };
  for (size_t i = 0; i < conns.size(); ++i) {
    Conn& c = conns[i];
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ++result.errors;
      continue;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
    c.in.reserve(8192);
  }
  const double cpu_start = bench::ThreadCpuSeconds();
  double user_start, sys_start;
  CpuSplit(RUSAGE_THREAD, &user_start, &sys_start);
  const uint64_t allocs_start = ThreadAllocs();
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (Conn& c : conns) {
    if (c.fd >= 0) send_next(c);
  }
  epoll_event events[256];
  char buf[65536];
  uint64_t loops = 0;
  while (true) {
    if (max_requests > 0 ? result.ok + result.errors >= max_requests : (++loops & 63) == 0 && Clock::now() >= end) {
      break;
    }
    const int n = epoll_wait(ep, events, 256, 100);
    for (int e = 0; e < n; ++e) {
      Conn& c = conns[events[e].data.u64];
      const ssize_t got = ::recv(c.fd, buf, sizeof(buf), 0);
      if (got <= 0) {
        ++result.errors;
        epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
        continue;
      }
      c.in.append(buf, static_cast<size_t>(got));
      // Complete responses: a head, then Content-Length bytes.
      while (true) {
        const size_t head_end = c.in.find("\r\n\r\n");
        if (head_end == std::string::npos) break;
        const size_t cl = c.in.find("Content-Length: ");
        if (cl == std::string::npos || cl > head_end) {
          ++result.errors;
          c.in.clear();
          break;
        }
        const size_t length = std::strtoull(c.in.c_str() + cl + 16, nullptr, 10);
        if (c.in.size() < head_end + 4 + length) break;
        if (c.in.compare(0, 12, "HTTP/1.1 200") == 0) {
          ++result.ok;
        } else {
          ++result.errors;
        }
        c.in.erase(0, head_end + 4 + length);
        send_next(c);
      }
    }
  }
  result.wall_seconds = Seconds(start, Clock::now());
  result.client_cpu_seconds = bench::ThreadCpuSeconds() - cpu_start;
  double user_end, sys_end;
  CpuSplit(RUSAGE_THREAD, &user_end, &sys_end);
  result.client_user_seconds = user_end - user_start;
  result.client_sys_seconds = sys_end - sys_start;
  result.client_allocs = ThreadAllocs() - allocs_start;
  for (Conn& c : conns) {
    if (c.fd >= 0) ::close(c.fd);
  }
  ::close(ep);
  return result;
}

struct HttpRun {
  double rps = 0, server_cpu_us = 0, client_cpu_us = 0;
  double server_user_us = 0, server_sys_us = 0;  // the server's CPU per request split (getrusage)
  double server_allocs = 0;                      // the server's malloc/calloc/realloc calls per request
  uint64_t errors = 0;
};

// head_bytes > 0 overrides the server's max_head_bytes (MHD's per-connection pool, which MHD zeroes at the end of
// every request: a measurement of that cost, not a setting the server uses).
Result<HttpRun> Serve(const std::string& dir, std::unique_ptr<VerifyHashSource> source, int workers, int connections,
                      double seconds, const std::vector<std::string>& requests, size_t head_bytes = 0) {
  ServerOptions options;
  options.repo_dir = dir;
  options.throttle_threshold = 59;   // the abuse guard stays on every request's path but never refuses
  options.max_requests_per_second = 0;  // (one client address here)
  options.worker_threads = workers;
  URLGUARD_ASSIGN_OR_RETURN(auto app, ServerApp::Create(options, Env::Default(), std::move(source)));
  URLGUARD_ASSIGN_OR_RETURN(ListenAddress listen, ParseLoopbackListenAddress("127.0.0.1:0"));
  ServerApp* a = app.get();
  HttpServerOptions http_options = ServerHttpOptions(options, listen);
  if (head_bytes > 0) http_options.max_head_bytes = head_bytes;
  URLGUARD_ASSIGN_OR_RETURN(
      auto http, HttpServer::Start(
                     http_options, [a](const HttpRequest& req) { return a->Handle(req); },
                     [a](const HttpRequest& head) { return a->HandleHead(head); }));
  RunLoad(http->port(), connections, 0.3, requests);  // warm-up: connections, caches, page faults
  LoadResult load;
  const double cpu_start = bench::ProcessCpuSeconds();
  double user_start, sys_start;
  CpuSplit(RUSAGE_SELF, &user_start, &sys_start);
  const uint64_t allocs_start = TotalAllocs();
  std::thread client([&] { load = RunLoad(http->port(), connections, seconds, requests); });
  client.join();
  const double cpu = bench::ProcessCpuSeconds() - cpu_start;
  // Thread creation and join allocate a little; over ~10^5 requests that is noise.
  const uint64_t allocs = TotalAllocs() - allocs_start;
  double user_end, sys_end;
  CpuSplit(RUSAGE_SELF, &user_end, &sys_end);
  http->Stop();
  HttpRun run;
  run.errors = load.errors;
  const double n = static_cast<double>(std::max<uint64_t>(load.ok, 1));
  run.rps = static_cast<double>(load.ok) / load.wall_seconds;
  run.client_cpu_us = load.client_cpu_seconds * 1e6 / n;
  run.server_cpu_us = (cpu - load.client_cpu_seconds) * 1e6 / n;
  run.server_user_us = (user_end - user_start - load.client_user_seconds) * 1e6 / n;
  run.server_sys_us = (sys_end - sys_start - load.client_sys_seconds) * 1e6 / n;
  run.server_allocs = static_cast<double>(allocs - load.client_allocs) / n;
  return run;
}

std::string SizeName(uint64_t hashes) {
  if (hashes % 1000000 == 0) return std::to_string(hashes / 1000000) + "m";
  if (hashes % 1000 == 0) return std::to_string(hashes / 1000) + "k";
  return std::to_string(hashes);
}

int Main(int argc, char** argv) {
  uint64_t hashes = 1000000;
  double seconds = 5;
  int connections = 8, workers = 2, serve = 0, load_port = 0;
  uint64_t max_requests = 0;
  size_t head_bytes = 0;
  bool sqlite = true, json = std::getenv("URLGUARD_BENCH_JSON") != nullptr;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--hashes") hashes = std::strtoull(next(), nullptr, 10);
    else if (a == "--seconds") seconds = std::atof(next());
    else if (a == "--connections") connections = std::atoi(next());
    else if (a == "--workers") workers = std::atoi(next());
    else if (a == "--dir") dir = next();
    else if (a == "--no-sqlite") sqlite = false;
    else if (a == "--serve") serve = std::atoi(next());
    else if (a == "--json") json = true;
    else if (a == "--load") load_port = std::atoi(next());
    else if (a == "--requests") max_requests = std::strtoull(next(), nullptr, 10);
    else if (a == "--head-bytes") head_bytes = std::strtoull(next(), nullptr, 10);
    else {
      std::fprintf(stderr,
                   "usage: verify_load_bench [--hashes N] [--seconds S] [--connections C] [--workers W] [--dir DIR]"
                   " [--no-sqlite] [--serve SECONDS] [--load PORT [--requests N]] [--head-bytes N] [--json]\n");
      return 4;
    }
  }
  if (hashes < 4 || connections < 1 || workers < 1 || seconds <= 0) {
    return Fail(Status::InvalidArgument("bad arguments"));
  }
  if (load_port > 0) {  // only the load generator, against a server started elsewhere
    const LoadResult r = RunLoad(load_port, connections, seconds, MakeRequests(hashes), max_requests);
    std::printf("load: %.0f req/s, client CPU %.1f us/req, %llu errors\n", static_cast<double>(r.ok) / r.wall_seconds,
                r.client_cpu_seconds * 1e6 / static_cast<double>(std::max<uint64_t>(r.ok, 1)),
                static_cast<unsigned long long>(r.errors));
    return r.errors == 0 ? 0 : 1;
  }
  if (dir.empty()) dir = "/tmp/urlguard-verify-bench-" + SizeName(hashes);
  if (Status s = BuildFiles(dir, hashes); !s.ok()) return Fail(s);
  Env* env = Env::Default();
  if (serve > 0) {
    ServerOptions options;
    options.repo_dir = dir;
    options.listen = "127.0.0.1:0";
    options.throttle_threshold = 59;
    options.max_requests_per_second = 0;
    options.worker_threads = workers;
    auto server = Server::Start(options);
    if (!server.ok()) return Fail(server.status());
    std::printf("listening on http://127.0.0.1:%d\n", (*server)->port());
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(serve));
    return 0;
  }
  const std::string sqlite_path = dir + "/baseline-hashes.sqlite";
  if (sqlite) {
    if (Status s = BuildSqlite(sqlite_path, hashes); !s.ok()) return Fail(s);
  }
  const std::vector<std::string> requests = MakeRequests(hashes);

  // 1. Lookups alone.
  auto files = FileHashSource::Open(env, dir + "/private/lists");
  uint64_t file_matches = 0, sqlite_matches = 0;
  const double file_us = TimeLookups(*files, hashes, &file_matches);
  double sqlite_us = 0;
  if (sqlite) {
    auto store = FullHashStore::Open(sqlite_path, /*read_only=*/true, workers);
    if (!store.ok()) return Fail(store.status());
    SqliteHashSource source(std::move(store).value());
    sqlite_us = TimeLookups(source, hashes, &sqlite_matches);
    if (sqlite_matches != file_matches) {
      return Fail(Status::Internal("the sources disagree: " + std::to_string(file_matches) + " vs " +
                                   std::to_string(sqlite_matches) + " matches"));
    }
  }
  std::printf("lookup, 5 prefixes, 1 thread (CPU): full-hash files %.2f us", file_us);
  if (sqlite) std::printf(", sqlite %.2f us (%.0fx)", sqlite_us, sqlite_us / file_us);
  std::printf("; %llu matches in 200000 lookups\n", static_cast<unsigned long long>(file_matches));

  // 2. Through HTTP.
  auto file_run = Serve(dir, FileHashSource::Open(env, dir + "/private/lists"), workers, connections, seconds, requests);
  if (!file_run.ok()) return Fail(file_run.status());
  // The same with a smaller MHD pool (--head-bytes): what zeroing the pool per request costs.
  HttpRun small_pool_run;
  if (head_bytes > 0) {
    auto run = Serve(dir, FileHashSource::Open(env, dir + "/private/lists"), workers, connections, seconds, requests,
                     head_bytes);
    if (!run.ok()) return Fail(run.status());
    small_pool_run = *run;
  }
  HttpRun sqlite_run;
  if (sqlite) {
    auto store = FullHashStore::Open(sqlite_path, /*read_only=*/true, workers);
    if (!store.ok()) return Fail(store.status());
    auto run = Serve(dir, std::make_unique<SqliteHashSource>(std::move(store).value()), workers, connections, seconds,
                     requests);
    if (!run.ok()) return Fail(run.status());
    sqlite_run = *run;
  }
  double load1 = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load1) != 1) load1 = 0;
    std::fclose(f);
  }
  const unsigned cores = std::thread::hardware_concurrency();
  auto print_run = [&](const char* name, const HttpRun& r) {
    std::printf("http %-12s %8.0f req/s  server CPU %5.1f us/req (user %.1f, sys %.1f), %.2f allocations/req  "
                "client CPU %5.1f us/req  errors %llu\n",
                name, r.rps, r.server_cpu_us, r.server_user_us, r.server_sys_us, r.server_allocs, r.client_cpu_us,
                static_cast<unsigned long long>(r.errors));
  };
  std::printf("%llu hashes, %d connections, %d workers, %.0f s per run, %u cores, load average %.1f\n",
              static_cast<unsigned long long>(hashes), connections, workers, seconds, cores, load1);
  print_run("files", *file_run);
  if (head_bytes > 0) print_run(("head " + std::to_string(head_bytes)).c_str(), small_pool_run);
  if (sqlite) print_run("sqlite", sqlite_run);
  if (json) {
    const std::string size = SizeName(hashes);
    char note[256];
    std::snprintf(note, sizeof(note),
                  "%s hashes, loopback, %d conns, %d workers, 1-5 prefixes; server %.1f us CPU/req (user %.1f, sys "
                  "%.1f), %.1f allocations/req; client %.1f; load avg %.1f on %u cores",
                  size.c_str(), connections, workers, file_run->server_cpu_us, file_run->server_user_us,
                  file_run->server_sys_us, file_run->server_allocs, file_run->client_cpu_us, load1, cores);
    auto row = [&](const std::string& id, double value, const char* unit, double baseline) {
      std::printf("{\"row\": \"%s\", \"value\": %.2f, \"unit\": \"%s\", \"baselines\": {", id.c_str(), value, unit);
      if (sqlite) std::printf("\"sqlite_store\": %.2f", baseline);
      std::printf("}, \"note\": \"%s\"}\n", note);
    };
    row("verify_rps", file_run->rps, "req/s", sqlite_run.rps);
    row("verify_rps_" + size, file_run->rps, "req/s", sqlite_run.rps);
    row("verify_server_cpu_us", file_run->server_cpu_us, "us", sqlite_run.server_cpu_us);
    row("verify_lookup_us", file_us, "us", sqlite_us);
    // malloc/calloc/realloc calls of the server per request (MHD's and nlohmann's included); baseline: the
    // SQLite-backed server of the same run.
    row("verify_server_allocs", file_run->server_allocs, "allocations", sqlite_run.server_allocs);
  }
  return file_run->errors == 0 && sqlite_run.errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace urlguard

int main(int argc, char** argv) { return urlguard::Main(argc, argv); }
