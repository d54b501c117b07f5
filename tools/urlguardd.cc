// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `urlguardd`: the sync daemon. It keeps a data directory current from a signed update server (every 30 minutes
// with jitter, or at the cadence a list's manifest names, backing off on failures), and answers lookups for programs that do not link the library over a
// loopback HTTP API:
//   GET /v1/check?url=URL   -> the JSON verdict (the same object as `urlguard check --json`)
//   GET /status             -> per-list version, entries, age, expiry, last sync result, next sync
//   GET /metrics            -> Prometheus text format
// Everything it computes lives in urlguard::Daemon (include/urlguard/daemon.h); this file parses options, wires
// the daemon to its transport and to signals, and logs.
//
//   urlguardd --data-dir D --server URL --public-key PUB.pem [--list NAME...] [--listen 127.0.0.1:PORT]
//             [--wait-for-first-sync[=SECONDS]] [--listen-unix PATH [--unix-group GROUP]]
//
// systemd: Type=notify (READY=1 once the lists are mapped and the API listens; a no-op without NOTIFY_SOCKET;
// with --wait-for-first-sync only once every subscribed list is installed and fresh, or when SECONDS passed),
// SIGHUP re-reads the data directory and the public keys, SIGTERM/SIGINT stop cleanly. See
// packaging/urlguardd.service. The OS is reached through urlguard::Env (include/urlguard/env.h): the service
// manager, the signals (diverted in main before any thread starts, so no thread can die of them) and the clock.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "urlguard/daemon.h"
#include "urlguard/env.h"
#include "urlguard/version.h"

namespace {

// How long the main loop waits for a signal between two sync checks.
constexpr int64_t kTickMillis = 200;
// --wait-for-first-sync without a value, and its largest value.
constexpr int64_t kDefaultWaitSeconds = 120;
constexpr int64_t kMaxWaitSeconds = 24 * 60 * 60;
// How much longer than the wait systemd is asked to give the start-up (EXTEND_TIMEOUT_USEC).
constexpr int64_t kStartTimeoutMarginSeconds = 30;

void Log(const std::string& msg) {
  const std::time_t t = static_cast<std::time_t>(urlguard::Env::Default()->NowUnixSeconds());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::fprintf(stderr, "%s urlguardd: %s\n", buf, msg.c_str());
}

void Notify(urlguard::Env* env, const std::string& state) {
  if (auto s = env->NotifyServiceManager(state); !s.ok()) Log("cannot notify the service manager: " + s.ToString());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguardd: keeps a urlguard data directory current and answers lookups on loopback"};
  app.set_version_flag("--version", urlguard::VersionString("urlguardd"), "print the version and the format versions");
  urlguard::DaemonOptions options;
  std::string listen = "127.0.0.1:8089";
  std::string listen_unix, unix_group;
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
  app.add_option("--listen", listen,
                 "numeric loopback address for the lookup API: 127.x.y.z:PORT or [::1]:PORT (default 127.0.0.1:8089; "
                 "port 0 picks one)");
  auto* unix_option = app.add_option(
      "--listen-unix", listen_unix,
      "also answer the lookup API on a Unix-domain socket at this absolute path (mode 0660; connections are "
      "capped per peer uid, so one user's programs cannot starve another's)");
  app.add_option("--unix-group", unix_group, "group of the --listen-unix socket (default: the daemon's group)")
      ->needs(unix_option);
  app.add_option("--ca-bundle", options.ca_bundle, "CA bundle for https (default: the system's)");
  int64_t wait_seconds = 0;
  CLI::Option* wait_for_first_sync =
      app.add_option("--wait-for-first-sync", wait_seconds,
                     "say READY=1 to systemd only once every subscribed list is installed and fresh, or after SECONDS "
                     "(default " + std::to_string(kDefaultWaitSeconds) + "); the first sync then runs at once")
          ->expected(0, 1)
          ->default_str(std::to_string(kDefaultWaitSeconds))
          ->check(CLI::Range(int64_t{1}, kMaxWaitSeconds));
  app.add_option("--proxy", options.proxy,
                 "proxy URL, e.g. http://proxy.example:3128 (default: the http_proxy, https_proxy, ALL_PROXY and "
                 "no_proxy environment variables)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 4;
  }
  auto api = urlguard::NewLoopbackApiListener(listen);
  if (!api.ok()) {
    std::cerr << "urlguardd: --listen " << listen << ": " << api.status().message() << '\n';
    return 4;
  }
  std::unique_ptr<urlguard::ApiListener> unix_api;
  if (!listen_unix.empty()) {
    auto created = urlguard::NewUnixApiListener(listen_unix, unix_group);
    if (!created.ok()) {
      std::cerr << "urlguardd: --listen-unix " << listen_unix << ": " << created.status().message() << '\n';
      return 4;
    }
    unix_api = std::move(created).value();
  }
  urlguard::Env* env = urlguard::Env::Default();
  options.env = env;
  // Before any thread starts (the daemon's and the listener's inherit the mask).
  auto signals = env->WatchSignals({SIGTERM, SIGINT, SIGHUP});
  if (!signals.ok()) {
    std::cerr << "urlguardd: " << signals.status().ToString() << '\n';
    return 1;
  }
  options.log = Log;
  auto daemon = urlguard::Daemon::Open(options);
  if (!daemon.ok()) {
    std::cerr << "urlguardd: " << daemon.status().ToString() << '\n';
    return 1;
  }
  urlguard::Daemon* d = daemon->get();
  if (auto s = (*api)->Start([d](const urlguard::ApiRequest& r) { return d->Handle(r); }); !s.ok()) {
    std::cerr << "urlguardd: " << s.ToString() << '\n';
    return 1;
  }
  if (unix_api) {
    if (auto s = unix_api->Start([d](const urlguard::ApiRequest& r) { return d->Handle(r); }); !s.ok()) {
      std::cerr << "urlguardd: --listen-unix " << listen_unix << ": " << s.ToString() << '\n';
      return 1;
    }
  }

  const size_t lists = d->installed_lists();
  Log("serving " + std::to_string(lists) + " installed list(s) from " + options.data_dir + ", lookup API on " +
      (*api)->url() + (unix_api ? " and " + unix_api->url() : "") + ", syncing from " + options.server_url);
  // --wait-for-first-sync: READY=1 comes from `readiness` once every subscribed list is installed (or the wait is
  // over), while this thread runs the first sync at once and then the usual loop.
  std::thread readiness;
  if (wait_for_first_sync->count() > 0 && !d->Ready()) {
    Log("waiting up to " + std::to_string(wait_seconds) + " s for the first sync before telling systemd READY=1");
    Notify(env, "EXTEND_TIMEOUT_USEC=" + std::to_string((wait_seconds + kStartTimeoutMarginSeconds) * 1000000) +
                    "\nSTATUS=waiting for the first sync (up to " + std::to_string(wait_seconds) + " s)");
    readiness = std::thread([d, env, wait_seconds] {
      const urlguard::Status ready = d->WaitUntilReady(wait_seconds * 1000);
      if (ready.code() == urlguard::StatusCode::kFailedPrecondition) return;  // stopping before READY
      const std::string serving = "serving " + std::to_string(d->installed_lists()) + " lists";
      if (ready.ok()) {
        Log("ready: every subscribed list is installed");
        Notify(env, "READY=1\nSTATUS=" + serving);
      } else {
        Log(ready.message() + "; ready anyway, the lists named are stale in /status");
        Notify(env, "READY=1\nSTATUS=" + serving + "; " + ready.message());
      }
    });
    (void)d->SyncNowUnlessReady();
  } else {
    Notify(env, "READY=1\nSTATUS=serving " + std::to_string(lists) + " lists");
  }

  int exit_code = 0;
  while (true) {
    auto signal = (*signals)->Wait(kTickMillis);
    if (!signal.ok()) {
      Log(signal.status().ToString());
      exit_code = 1;
      break;
    }
    if (*signal == SIGTERM || *signal == SIGINT) break;
    if (*signal == SIGHUP) {
      if (auto s = d->Reload(); !s.ok()) {
        Log(s.ToString());
        exit_code = 1;
        break;
      }
    }
    (void)d->Tick();
  }
  d->CancelWaits();
  if (readiness.joinable()) readiness.join();
  Notify(env, "STOPPING=1");
  Log("stopping");
  (*api)->Stop();
  if (unix_api) unix_api->Stop();
  return exit_code;
}
