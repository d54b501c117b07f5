// Copyright urlguard authors.
//
// `urlguardd`: the sync daemon. It keeps a data directory current from a signed update server (every 30 minutes
// with jitter, backing off on failures), and answers lookups for programs that do not link the library over a
// loopback HTTP API:
//   GET /v1/check?url=URL   -> the JSON verdict (same shape as `urlguard check --json`)
//   GET /status             -> per-list version, entries, age, expiry, last sync result, next sync
//   GET /metrics            -> Prometheus text format
//
//   urlguardd --data-dir D --server URL --public-key PUB.pem [--list NAME...] [--listen 127.0.0.1:PORT]
//
// systemd: Type=notify (READY=1 once the lists are mapped and the API listens; a no-op without NOTIFY_SOCKET),
// SIGHUP re-reads the data directory and the public keys, SIGTERM/SIGINT stop cleanly. See
// packaging/urlguardd.service.
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "format/key_rotation.h"
#include "format/signature.h"
#include "platform/env.h"
#include "sync/syncer.h"
#include "urlguard/client.h"

namespace {

using Json = nlohmann::json;

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reload{false};

void OnSignal(int sig) {
  if (sig == SIGHUP) {
    g_reload = true;
  } else {
    g_stop = true;
  }
}

void Log(const std::string& msg) {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  std::fprintf(stderr, "%s urlguardd: %s\n", buf, msg.c_str());
}

// sd_notify without libsystemd: one datagram to $NOTIFY_SOCKET ('@' = abstract namespace). No-op when unset.
void Notify(const std::string& state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return;
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = std::strlen(path);
  if (len >= sizeof addr.sun_path) {
    ::close(fd);
    return;
  }
  std::memcpy(addr.sun_path, path, len);
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';
  ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr),
           static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len));
  ::close(fd);
}

Json VerdictJson(const std::string& input, const urlguard::Verdict& v) {
  Json j;
  j["input"] = input;
  j["verdict"] = urlguard::VerdictKindName(v.kind);
  if (!v.matches.empty()) {
    j["list"] = v.list.empty() ? v.matches.front().list : v.list;
    j["layer"] = urlguard::LayerName(v.matches.front().layer);
    j["expression"] = v.matches.front().expression;
  } else {
    j["list"] = nullptr;
    j["layer"] = nullptr;
    j["expression"] = nullptr;
  }
  j["threat"] = v.threat.empty() ? Json(nullptr) : Json(v.threat);
  j["stale"] = v.stale;
  j["allowlisted"] = v.allowlisted;
  j["error"] = v.error.empty() ? Json(nullptr) : Json(v.error);
  return j;
}

struct SyncCounters {
  std::mutex mu;  // guards by_result
  std::map<std::string, uint64_t> by_result;
};

std::string Metrics(const urlguard::Client& client, SyncCounters& sync) {
  std::ostringstream o;
  urlguard::ClientStats s = client.Stats();
  o << "# HELP urlguard_lookups_total Lookups answered, by verdict.\n# TYPE urlguard_lookups_total counter\n";
  for (int i = 0; i < 6; ++i) {
    o << "urlguard_lookups_total{verdict=\"" << urlguard::VerdictKindName(static_cast<urlguard::VerdictKind>(i))
      << "\"} " << s.by_verdict[i] << '\n';
  }
  o << "# HELP urlguard_verifications_total Verification API requests.\n# TYPE urlguard_verifications_total counter\n"
    << "urlguard_verifications_total " << s.verifications << '\n'
    << "# HELP urlguard_verification_failures_total Verification requests without a usable answer.\n"
    << "# TYPE urlguard_verification_failures_total counter\n"
    << "urlguard_verification_failures_total " << s.verification_failures << '\n'
    << "# HELP urlguard_verification_seconds Time spent in verification requests.\n"
    << "# TYPE urlguard_verification_seconds summary\n"
    << "urlguard_verification_seconds_sum " << s.verification_seconds << '\n'
    << "urlguard_verification_seconds_count " << s.verifications << '\n'
    << "# HELP urlguard_cache_hits_total Result cache hits.\n# TYPE urlguard_cache_hits_total counter\n"
    << "urlguard_cache_hits_total " << s.cache_hits << '\n'
    << "# HELP urlguard_cache_misses_total Result cache misses.\n# TYPE urlguard_cache_misses_total counter\n"
    << "urlguard_cache_misses_total " << s.cache_misses << '\n';
  o << "# HELP urlguard_sync_attempts_total Sync passes, by result.\n# TYPE urlguard_sync_attempts_total counter\n";
  {
    std::lock_guard<std::mutex> l(sync.mu);
    for (const char* r : {"updated", "not_modified", "up_to_date", "failed"}) {
      o << "urlguard_sync_attempts_total{result=\"" << r << "\"} " << sync.by_result[r] << '\n';
    }
  }
  const int64_t now = std::time(nullptr);
  o << "# HELP urlguard_list_version Installed version of each list.\n# TYPE urlguard_list_version gauge\n";
  auto lists = client.Lists();
  for (const auto& l : lists) o << "urlguard_list_version{list=\"" << l.name << "\"} " << l.version << '\n';
  o << "# HELP urlguard_list_entries Entries in each list.\n# TYPE urlguard_list_entries gauge\n";
  for (const auto& l : lists) o << "urlguard_list_entries{list=\"" << l.name << "\"} " << l.entries << '\n';
  o << "# HELP urlguard_list_age_seconds Seconds since the installed version was created.\n"
       "# TYPE urlguard_list_age_seconds gauge\n";
  for (const auto& l : lists) {
    o << "urlguard_list_age_seconds{list=\"" << l.name << "\"} " << (l.version ? now - l.created_unix : 0) << '\n';
  }
  o << "# HELP urlguard_list_stale 1 when the list is past its signed expiry.\n# TYPE urlguard_list_stale gauge\n";
  for (const auto& l : lists) o << "urlguard_list_stale{list=\"" << l.name << "\"} " << (l.stale ? 1 : 0) << '\n';
  return o.str();
}

Json StatusJson(const urlguard::Client& client) {
  Json lists = Json::array();
  const int64_t now = std::time(nullptr);
  for (const auto& l : client.Lists()) {
    lists.push_back({{"list", l.name},
                     {"version", l.version},
                     {"entries", l.entries},
                     {"age_seconds", l.version ? now - l.created_unix : 0},
                     {"expires_unix", l.expires_unix},
                     {"stale", l.stale},
                     {"emergency", l.emergency},
                     {"last_sync_unix", l.last_sync_unix},
                     {"last_sync_result", l.last_sync_result},
                     {"last_sync_error", l.last_sync_error},
                     {"next_sync_unix", l.next_sync_unix},
                     {"consecutive_failures", l.consecutive_failures}});
  }
  return {{"lists", lists}, {"generation", client.Stats().generation}};
}

bool ParseListen(const std::string& s, std::string* host, int* port) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos) return false;
  *host = s.substr(0, colon);
  if (host->size() > 2 && host->front() == '[') *host = host->substr(1, host->size() - 2);
  try {
    *port = std::stoi(s.substr(colon + 1));
  } catch (...) {
    return false;
  }
  // Workplace rule and good practice: the lookup API is for local programs only.
  bool loopback = *host == "::1" || *host == "localhost" || host->rfind("127.", 0) == 0;
  return loopback && *port > 0 && *port < 65536;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguardd: keeps a urlguard data directory current and answers lookups on loopback"};
  std::string data_dir, server, listen = "127.0.0.1:8089", ca_bundle;
  std::vector<std::string> key_files, rotation_files, lists;
  app.add_option("--data-dir", data_dir, "data directory (created if missing)")->required();
  app.add_option("--server", server, "update and verification server base URL")->required();
  app.add_option("--public-key", key_files, "trusted Ed25519 public key PEM (repeatable)")
      ->required()
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::ExistingFile);
  app.add_option("--key-rotation", rotation_files, "key rotation statement signed by a trusted key (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::ExistingFile);
  app.add_option("--list", lists, "list to keep current (repeatable; default: those installed)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--listen", listen, "loopback address for the lookup API (default 127.0.0.1:8089)");
  app.add_option("--ca-bundle", ca_bundle, "CA bundle for https (default: the system's)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 4;
  }
  std::string host;
  int port = 0;
  if (!ParseListen(listen, &host, &port)) {
    std::cerr << "urlguardd: --listen must be a loopback address with a port, e.g. 127.0.0.1:8089\n";
    return 4;
  }
  urlguard::Env* env = urlguard::Env::Default();
  auto load_keys = [&](std::vector<urlguard::PublicKey>* keys, std::vector<std::string>* pems) -> urlguard::Status {
    for (const std::string& f : key_files) {
      auto pem = env->ReadFile(f, urlguard::kMaxPemBytes);
      if (!pem.ok()) return pem.status();
      auto k = urlguard::PublicKeyFromPem(*pem);
      if (!k.ok()) return k.status().WithContext(f);
      keys->push_back(*k);
      pems->push_back(*pem);
    }
    // Key rotation (re-read on SIGHUP): new keys only through statements signed by a trusted key, in order.
    std::vector<std::string> statements;
    for (const std::string& f : rotation_files) {
      auto st = env->ReadFile(f, urlguard::kMaxRotationStatementBytes);
      if (!st.ok()) return st.status();
      statements.push_back(*st);
    }
    if (!statements.empty()) {
      auto chain = urlguard::AcceptRotationChain(*keys, statements, env->NowUnixSeconds());
      if (!chain.ok()) return chain.status().WithContext("key rotation refused");
      *keys = *chain;
    }
    return urlguard::Status::Ok();
  };
  std::vector<urlguard::PublicKey> keys;
  std::vector<std::string> pems;
  if (auto s = load_keys(&keys, &pems); !s.ok()) {
    std::cerr << "urlguardd: " << s.ToString() << '\n';
    return 1;
  }
  if (auto s = env->CreateDirs(data_dir); !s.ok()) {
    std::cerr << "urlguardd: " << s.ToString() << '\n';
    return 1;
  }

  urlguard::SyncerOptions so;
  so.data_dir = data_dir;
  so.server_url = server;
  so.trusted_keys = keys;
  so.lists = lists;
  so.fetch.ca_bundle = ca_bundle;
  auto syncer = urlguard::Syncer::Open(env, so);
  if (!syncer.ok()) {
    std::cerr << "urlguardd: " << syncer.status().ToString() << '\n';
    return 1;
  }
  for (const std::string& w : (*syncer)->warnings()) Log("warning: " + w);

  urlguard::ClientOptions co;
  co.data_dir = data_dir;
  co.server_url = server;
  co.public_key_pems = pems;
  co.ca_bundle = ca_bundle;
  auto client = urlguard::Client::Open(co);
  if (!client.ok()) {
    std::cerr << "urlguardd: " << client.status().ToString() << '\n';
    return 1;
  }

  SyncCounters counters;
  httplib::Server api;
  api.Get("/v1/check", [&](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("url")) {
      res.status = 400;
      res.set_content(R"({"error":"missing url parameter"})", "application/json");
      return;
    }
    std::string url = req.get_param_value("url");
    res.set_content(VerdictJson(url, (*client)->Check(url)).dump(-1, ' ', false, Json::error_handler_t::replace),
                    "application/json");
  });
  api.Get("/status", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(StatusJson(**client).dump(2, ' ', false, Json::error_handler_t::replace), "application/json");
  });
  api.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(Metrics(**client, counters), "text/plain; version=0.0.4");
  });
  api.set_payload_max_length(64 << 10);
  if (!api.bind_to_port(host, port)) {
    std::cerr << "urlguardd: cannot listen on " << listen << '\n';
    return 1;
  }
  std::thread api_thread([&] { api.listen_after_bind(); });

  struct sigaction sa{};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);

  auto lists_now = (*client)->Lists();
  Log("serving " + std::to_string(lists_now.size()) + " installed list(s) from " + data_dir + ", lookup API on http://" +
      listen + ", syncing from " + server);
  Notify("READY=1\nSTATUS=serving " + std::to_string(lists_now.size()) + " lists");

  while (!g_stop) {
    if (g_reload.exchange(false)) {
      std::vector<urlguard::PublicKey> new_keys;
      std::vector<std::string> new_pems;
      if (auto s = load_keys(&new_keys, &new_pems); !s.ok()) {
        Log("reload: keeping the old keys: " + s.ToString());
      } else {
        so.trusted_keys = new_keys;
        syncer->reset();  // release the lock, then take it again with the new keys
        auto reopened = urlguard::Syncer::Open(env, so);
        if (!reopened.ok()) {
          Log("reload failed: " + reopened.status().ToString());
          g_stop = true;
          break;
        }
        syncer = std::move(reopened);
      }
      (void)(*client)->Refresh();
      Log("reloaded");
    }
    const int64_t now = env->NowUnixSeconds();
    if (now >= (*syncer)->NextDue()) {
      for (const urlguard::SyncReport& r : (*syncer)->RunDue(now, false)) {
        {
          std::lock_guard<std::mutex> l(counters.mu);
          ++counters.by_result[r.result];
        }
        std::string msg = r.list + ": " + r.result;
        if (r.result == "updated") {
          msg += " " + std::to_string(r.from_version) + " -> " + std::to_string(r.to_version) +
                 (r.used_diff ? " (diff, " : " (snapshot, ") + std::to_string(r.bytes) + " bytes)";
        }
        if (!r.error.empty()) msg += ": " + r.error;
        Log(msg);
      }
      (void)(*client)->Refresh();
      int64_t next = (*syncer)->NextDue();
      Log("next sync in " + std::to_string(next > now ? next - now : 0) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  Notify("STOPPING=1");
  Log("stopping");
  api.stop();
  api_thread.join();
  return 0;
}
