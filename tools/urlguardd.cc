// Copyright urlguard authors.
//
// `urlguardd`: the sync daemon. It keeps a data directory current from a signed update server (every 30 minutes
// with jitter, backing off on failures), and answers lookups for programs that do not link the library over a
// loopback HTTP API:
//   GET /v1/check?url=URL   -> the JSON verdict (the same object as `urlguard check --json`)
//   GET /status             -> per-list version, entries, age, expiry, last sync result, next sync
//   GET /metrics            -> Prometheus text format
// Everything it computes lives in urlguard::Daemon (include/urlguard/daemon.h); this file parses options, wires
// the daemon to its transport and to signals, and logs.
//
//   urlguardd --data-dir D --server URL --public-key PUB.pem [--list NAME...] [--listen 127.0.0.1:PORT]
//
// systemd: Type=notify (READY=1 once the lists are mapped and the API listens; a no-op without NOTIFY_SOCKET),
// SIGHUP re-reads the data directory and the public keys, SIGTERM/SIGINT stop cleanly. See
// packaging/urlguardd.service.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "urlguard/daemon.h"
#include "urlguard/version.h"

namespace {

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguardd: keeps a urlguard data directory current and answers lookups on loopback"};
  app.set_version_flag("--version", urlguard::VersionString("urlguardd"), "print the version and the format versions");
  urlguard::DaemonOptions options;
  std::string listen = "127.0.0.1:8089";
  auto repeatable = [](CLI::Option* o) {
    return o->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  };
  app.add_option("--data-dir", options.data_dir, "data directory (created if missing)")->required();
  app.add_option("--server", options.server_url, "update and verification server base URL")->required();
  repeatable(app.add_option("--public-key", options.public_key_files, "trusted Ed25519 public key PEM (repeatable)"))
      ->required()
      ->check(CLI::ExistingFile);
  repeatable(app.add_option("--key-rotation", options.rotation_files,
                            "key rotation statement signed by a trusted key (repeatable)"))
      ->check(CLI::ExistingFile);
  repeatable(app.add_option("--list", options.lists,
                            "list to keep current (repeatable; default: those installed, or on a fresh data "
                            "directory every list the server's signed list index names)"));
  app.add_option("--listen", listen, "loopback address for the lookup API (default 127.0.0.1:8089)");
  app.add_option("--ca-bundle", options.ca_bundle, "CA bundle for https (default: the system's)");
  app.add_option("--proxy", options.proxy,
                 "proxy URL, e.g. http://proxy.example:3128 (default: the http_proxy, https_proxy, ALL_PROXY and "
                 "no_proxy environment variables)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 4;
  }
  std::string host;
  int port = 0;
  if (auto s = urlguard::ParseLoopbackListenAddress(listen, &host, &port); !s.ok()) {
    std::cerr << "urlguardd: " << s.message() << '\n';
    return 4;
  }
  options.log = Log;
  auto daemon = urlguard::Daemon::Open(options);
  if (!daemon.ok()) {
    std::cerr << "urlguardd: " << daemon.status().ToString() << '\n';
    return 1;
  }
  std::unique_ptr<urlguard::ApiListener> api = urlguard::NewLoopbackApiListener();
  urlguard::Daemon* d = daemon->get();
  if (auto s = api->Start(host, port, [d](const urlguard::ApiRequest& r) { return d->Handle(r); }); !s.ok()) {
    std::cerr << "urlguardd: " << s.message() << '\n';
    return 1;
  }

  struct sigaction sa{};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);

  const size_t lists = d->installed_lists();
  Log("serving " + std::to_string(lists) + " installed list(s) from " + options.data_dir + ", lookup API on http://" +
      listen + ", syncing from " + options.server_url);
  urlguard::NotifyServiceManager("READY=1\nSTATUS=serving " + std::to_string(lists) + " lists");

  int exit_code = 0;
  while (!g_stop) {
    if (g_reload.exchange(false)) {
      if (auto s = d->Reload(); !s.ok()) {
        Log(s.ToString());
        exit_code = 1;
        break;
      }
    }
    (void)d->Tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  urlguard::NotifyServiceManager("STOPPING=1");
  Log("stopping");
  api->Stop();
  return exit_code;
}
