// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// fleet_load_bench: verify requests per second through nginx over 3 verify servers against 1 server direct,
// in the same run on the same machine (docs/fleet.md, docs/performance.md "Fleet"). Everything is real and on
// 127.0.0.1: redis-server (the shared guard of every server), 3 urlguard-server processes, nginx rendered from
// packaging/nginx/urlguard.conf by scripts/fleet.sh (its per-client rate limit raised out of the way: every
// request of the bench comes from one address).
//
//   fleet_load_bench [--seconds S] [--threads T] [--hashes N] [--workers W] [--json]   (defaults: 5 8 100000 2)
//
// W is each server's --workers (event threads). A verify request's event thread waits for the guard's Redis
// round trip, so with the Redis guard a server's throughput is about W / round-trip time.
//
// Load: T threads, each with one keep-alive connection, POST /v1/verify with 5 prefixes (one in five a listed
// hash's), as fast as answers come; every answer must be 200 (anything else is counted and fails the run).
// Phases, each S seconds after a 1 s warm-up: "direct1" (one server, no proxy) then "nginx3", both with the
// guard on Redis (the server's threshold and per-second cap are off, so the guard is consulted on every request
// and never refuses), then "direct1, local guard" (a fourth server with --guard local: the shared guard's cost). Prints wall time, requests, requests/s, and the CPU seconds the servers, nginx and Redis
// used (from /proc) plus the load generator's own, since the machine is shared: on one machine three servers
// share the same cores, so the nginx row shows the proxy's cost, not a fleet's capacity (that needs machines).
// With --json (or URLGUARD_BENCH_JSON=1): one JSON row per line, "fleet_rps_nginx3" (baseline: direct1) and
// "fleet_rps_direct1" (baseline: the local guard) (bench/perf_table.py collects them).
#include <dirent.h>
#include <sys/stat.h>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_time.h"
#include "core/sha256.h"
#include "platform/env.h"
#include "publish/publisher.h"
#include "signing/signer.h"
#include "tests/fleet_test_util.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ChildProcess;
using testing::WaitFor;

struct Args {
  int seconds = 5;
  int threads = 8;
  int hashes = 100000;
  int workers = 2;  // each server's --workers (its default)
  bool json = false;
};

// CPU seconds (user + system) of `pid` and, when `children`, of its direct children (nginx's workers).
double CpuSeconds(pid_t pid, bool children) {
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  auto read_stat = [&](const std::string& path, pid_t* ppid) -> double {
    std::ifstream in(path);
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = s.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream f(s.substr(close + 2));
    std::string field;
    std::vector<std::string> v;
    while (f >> field) v.push_back(field);
    if (v.size() < 13) return 0;
    if (ppid != nullptr) *ppid = static_cast<pid_t>(std::stol(v[1]));
    return (std::stod(v[11]) + std::stod(v[12])) / tick;  // utime, stime (fields 14, 15)
  };
  double total = read_stat("/proc/" + std::to_string(pid) + "/stat", nullptr);
  if (!children) return total;
  DIR* d = opendir("/proc");
  if (d == nullptr) return total;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    pid_t ppid = 0;
    const double cpu = read_stat(std::string("/proc/") + e->d_name + "/stat", &ppid);
    if (ppid == pid) total += cpu;
  }
  closedir(d);
  return total;
}


struct PhaseResult {
  double wall = 0;
  uint64_t requests = 0;
  uint64_t errors = 0;
  double fleet_cpu = 0;  // servers + nginx + redis
  double client_cpu = 0;
  double rps() const { return wall > 0 ? static_cast<double>(requests) / wall : 0; }
};

// The load: `threads` keep-alive connections to `port` for warm-up + `seconds`.
PhaseResult Load(int port, const Args& args, const std::vector<std::string>& listed_prefixes,
                 const std::function<double()>& fleet_cpu) {
  std::atomic<bool> measuring{false}, stop{false};
  std::atomic<uint64_t> requests{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < args.threads; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client c("127.0.0.1", port);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);  // headers and body are two writes: without it, Nagle + delayed ACK add 40 ms
      c.set_read_timeout(10);
      std::mt19937_64 rng(7 + t);
      char hex[16];
      while (!stop.load(std::memory_order_relaxed)) {
        std::string body = "{\"prefixes\":[";
        for (int i = 0; i < 5; ++i) {
          if (i > 0) body += ',';
          if (rng() % 5 == 0) {
            body += "\"" + listed_prefixes[rng() % listed_prefixes.size()] + "\"";
          } else {
            std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(rng()));
            body += "\"" + std::string(hex) + "\"";
          }
        }
        body += "]}";
        auto r = c.Post("/v1/verify", body, "application/json");
        if (!measuring.load(std::memory_order_relaxed)) continue;
        if (r && r->status == 200) {
          requests.fetch_add(1, std::memory_order_relaxed);
        } else {
          errors.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));  // warm-up: connections, caches
  PhaseResult r;
  const double cpu0 = fleet_cpu(), self0 = bench::ProcessCpuSeconds();
  const auto t0 = Clock::now();
  measuring.store(true);
  std::this_thread::sleep_for(std::chrono::seconds(args.seconds));
  measuring.store(false);
  r.wall = std::chrono::duration<double>(Clock::now() - t0).count();
  r.fleet_cpu = fleet_cpu() - cpu0;
  r.client_cpu = bench::ProcessCpuSeconds() - self0;
  r.requests = requests.load();
  r.errors = errors.load();
  stop.store(true);
  for (auto& t : threads) t.join();
  return r;
}

int Run(const Args& args) {
  if (!testing::RedisProcess::Available() || access(testing::kNginxBinary, X_OK) != 0) {
    std::fprintf(stderr, "fleet_load_bench: needs redis-server and nginx (scripts/install-deps.sh)\n");
    return 1;
  }
  testing::TempDir dir("fleet-bench");
  const std::string root = dir.path();
  chmod(root.c_str(), 0755);

  // A list of `hashes` hosts; the prefixes of their full hashes are what a client would send on a local hit.
  SigningKey key = std::move(SigningKey::Generate()).value();
  std::string feed;
  std::vector<std::string> listed;
  for (int i = 0; i < args.hashes; ++i) {
    const std::string host = "bench" + std::to_string(i) + ".example";
    feed += host + "\n";
    if (i % 97 == 0) listed.push_back(ToHex(Sha256(host + "/")).substr(0, 8));
  }
  testing::WriteFileOrDie(root + "/feed.txt", feed);
  PublishOptions po;
  po.repo_dir = root + "/repo";
  po.list = "phishing";
  po.inputs = {*ParseFeedSpec("plain:" + root + "/feed.txt")};
  if (Status s = Publish(Env::Default(), key, po).status(); !s.ok()) {
    std::fprintf(stderr, "fleet_load_bench: publish: %s\n", s.ToString().c_str());
    return 1;
  }
  testing::RunCommand("chmod -R o+rX '" + root + "/repo/public'");

  testing::RedisProcess redis;
  if (!redis.Start(root)) {
    std::fprintf(stderr, "fleet_load_bench: redis-server did not start\n");
    return 1;
  }
  // servers[0..2]: the fleet (guard on Redis); servers[3]: the same server with the in-process guard, for the
  // guard's cost.
  ChildProcess servers[4];
  std::vector<int> ports;
  for (int i = 0; i < 4; ++i) {
    const std::string log = root + "/server-" + std::to_string(i) + ".log";
    testing::WriteFileOrDie(log, "");
    servers[i].Start({std::string(URLGUARD_BINARY_DIR) + "/bin/urlguard-server", "--repo", root + "/repo",
                      "--listen", "127.0.0.1:0", "--guard", i < 3 ? redis.url() + "?timeout_ms=200" : "local",
                      "--trusted-proxy",
                      "127.0.0.1", "--throttle", "59", "--max-requests-per-second", "0", "--max-connections-per-address",
                      "1024", "--workers", std::to_string(args.workers)},
                     log);
    std::smatch m;
    std::string text;
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    if (!WaitFor([&] {
          text = testing::ReadFileOrDie(log);
          return std::regex_search(text, m, listening);
        }, 10000)) {
      std::fprintf(stderr, "fleet_load_bench: urlguard-server did not start:\n%s\n", text.c_str());
      return 1;
    }
    ports.push_back(std::stoi(m[1]));
  }
  const int nginx_port = testing::FreeLoopbackPort();
  std::string render = std::string(URLGUARD_SOURCE_DIR) + "/scripts/fleet.sh render-nginx " +
                       std::to_string(nginx_port) + " " + root + "/repo/public 1000000r/s " + root;
  for (int i = 0; i < 3; ++i) render += " " + std::to_string(ports[i]);
  const auto conf = testing::RunCommand(render);
  if (conf.exit_code != 0) {
    std::fprintf(stderr, "fleet_load_bench: fleet.sh render-nginx failed\n");
    return 1;
  }
  // The bench's connections all come from one address: lift the per-address connection cap with the rate.
  std::string text = std::regex_replace(conf.out, std::regex("limit_conn urlguard_conn 64;"),
                                        "limit_conn urlguard_conn 4096;");
  testing::WriteFileOrDie(root + "/urlguard.conf", text);
  std::filesystem::create_directories(root + "/nginx-tmp");
  testing::WriteFileOrDie(root + "/nginx.conf",
                          std::string(geteuid() == 0 ? "user nobody nogroup;\n" : "") +
                              "daemon off;\nworker_processes 2;\npid " + root + "/nginx.pid;\nerror_log " + root +
                              "/nginx.error.log warn;\nevents { worker_connections 4096; }\nhttp {\n"
                              "  client_body_temp_path " + root + "/nginx-tmp/body;\n  proxy_temp_path " + root +
                              "/nginx-tmp/proxy;\n  fastcgi_temp_path " + root + "/nginx-tmp/fcgi;\n"
                              "  uwsgi_temp_path " + root + "/nginx-tmp/uwsgi;\n  scgi_temp_path " + root +
                              "/nginx-tmp/scgi;\n  include " + root + "/urlguard.conf;\n}\n");
  ChildProcess nginx;
  nginx.Start({testing::kNginxBinary, "-p", root, "-c", root + "/nginx.conf"}, root + "/nginx.out");
  if (!WaitFor([&] { return testing::CanConnect(nginx_port); }, 10000)) {
    std::fprintf(stderr, "fleet_load_bench: nginx did not start\n");
    return 1;
  }
  auto fleet_cpu = [&] {
    double cpu = CpuSeconds(nginx.pid(), /*children=*/true);
    for (auto& s : servers) cpu += CpuSeconds(s.pid(), false);
    cpu += CpuSeconds(redis.pid(), false);
    return cpu;
  };

  const PhaseResult direct = Load(ports[0], args, listed, fleet_cpu);
  const PhaseResult proxied = Load(nginx_port, args, listed, fleet_cpu);
  const PhaseResult local = Load(ports[3], args, listed, [&] { return CpuSeconds(servers[3].pid(), false); });

  const unsigned cores = std::thread::hardware_concurrency();
  double load1 = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load1) != 1) load1 = 0;
    std::fclose(f);
  }
  const char* env_json = std::getenv("URLGUARD_BENCH_JSON");
  const bool json = args.json || (env_json != nullptr && std::strcmp(env_json, "1") == 0);
  char note[512];
  std::snprintf(note, sizeof note,
                "%d threads x keep-alive POST /v1/verify (5 prefixes), %d s each, guard on Redis, %d workers/server; %u cores, "
                "loadavg %.1f; fleet CPU s: direct1 %.2f, nginx3 %.2f; client CPU s: %.2f, %.2f",
                args.threads, args.seconds, args.workers, cores, load1, direct.fleet_cpu, proxied.fleet_cpu, direct.client_cpu,
                proxied.client_cpu);
  if (json) {
    std::printf("{\"row\": \"fleet_rps_nginx3\", \"value\": %.0f, \"unit\": \"req/s\", \"baselines\": "
                "{\"fleet_rps_direct1\": %.0f}, \"note\": \"%s\"}\n",
                proxied.rps(), direct.rps(), note);
    std::printf("{\"row\": \"fleet_rps_direct1\", \"value\": %.0f, \"unit\": \"req/s\", \"baselines\": "
                "{\"fleet_rps_direct1_local_guard\": %.0f}, \"note\": \"%s\"}\n",
                direct.rps(), local.rps(), note);
  } else {
    std::printf("%-22s %8s %10s %10s %8s %14s %12s\n", "phase", "wall s", "requests", "req/s", "errors",
                "fleet CPU s", "client CPU s");
    for (const auto& [name, r] : {std::pair<const char*, const PhaseResult&>{"direct1 (1 server)", direct},
                                  {"nginx3 (3 servers)", proxied},
                                  {"direct1, local guard", local}}) {
      std::printf("%-22s %8.2f %10llu %10.0f %8llu %14.2f %12.2f\n", name, r.wall,
                  static_cast<unsigned long long>(r.requests), r.rps(), static_cast<unsigned long long>(r.errors),
                  r.fleet_cpu, r.client_cpu);
    }
    std::printf("machine: %u cores, load average %.1f\n", cores, load1);
  }
  return direct.errors + proxied.errors + local.errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace urlguard

int main(int argc, char** argv) {
  urlguard::Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&](int* out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fleet_load_bench: %s needs a value\n", a.c_str());
        std::exit(4);
      }
      *out = std::atoi(argv[++i]);
    };
    if (a == "--seconds") {
      next(&args.seconds);
    } else if (a == "--threads") {
      next(&args.threads);
    } else if (a == "--hashes") {
      next(&args.hashes);
    } else if (a == "--workers") {
      next(&args.workers);
    } else if (a == "--json") {
      args.json = true;
    } else {
      std::fprintf(stderr, "usage: fleet_load_bench [--seconds S] [--threads T] [--hashes N] [--workers W] [--json]\n");
      return 4;
    }
  }
  if (args.seconds < 1 || args.threads < 1 || args.hashes < 1) {
    std::fprintf(stderr, "fleet_load_bench: values must be positive\n");
    return 4;
  }
  return urlguard::Run(args);
}
