// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `urlguard-server`: the reference update and verification server (include/urlguard/server.h,
// docs/verify-server.md). This file only parses options and wires them into urlguard::Server.
//
//   urlguard-server --repo DIR --listen 127.0.0.1:PORT [--state postgresql://...] [--tls-cert FILE --tls-key FILE] [--throttle N]
//                   [--max-requests-per-second N] [--guard local|redis://HOST:PORT] [--trusted-proxy ADDR]... [--workers N]
//                   [--max-connections N] [--max-connections-per-address N]
//
// Prints "listening on http://127.0.0.1:PORT" (https with TLS) once it accepts connections, and stops
// cleanly on SIGINT or SIGTERM.
//
// Exit status: 0 stopped by a signal, 1 could not start (or could not wait for signals), 4 bad usage.
#include <signal.h>
#include <urlguard/env.h>
#include <urlguard/server.h>
#include <urlguard/version.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"urlguard-server: serves a urlguard repository (static files, verify API, metrics)"};
  app.set_version_flag("--version", urlguard::VersionString("urlguard-server"), "print the version and formats");
  urlguard::ServerOptions options;
  options.listen = "127.0.0.1:8080";
  app.add_option("--repo", options.repo_dir, "repository directory (public/ is served; private/lists/LIST/V.ugh answer /v1/verify)")
      ->required();
  app.add_option("--state", options.state,
                 "postgresql://... : answer /v1/verify from the publishers' PostgreSQL state (each list's newest "
                 "committed version, loaded into memory) instead of REPO/private/lists");
  app.add_option("--listen", options.listen,
                 "IPV4:PORT or [IPV6]:PORT to bind; numeric loopback only (127.0.0.0/8 or [::1]); port 0 picks one")
      ->capture_default_str();
  app.add_option("--tls-cert", options.tls_cert_file, "PEM certificate (chain) file: serve HTTPS");
  app.add_option("--tls-key", options.tls_key_file, "PEM private key file");
  app.add_option("--throttle", options.throttle_threshold,
                 "throttle a client address seen in more than N of the last 59 seconds (0-59)")
      ->capture_default_str();
  app.add_option("--max-requests-per-second", options.max_requests_per_second,
                 "throttle a client address for the rest of a second after N verify requests in it (0: off)")
      ->capture_default_str();
  app.add_option("--guard", options.guard,
                 "abuse guard windows: local (this process) or redis://HOST:PORT[/DB][?timeout_ms=N] (shared by a fleet; falls "
                 "back to local while Redis is down)")
      ->capture_default_str();
  app.add_option("--trusted-proxy", options.trusted_proxies,
                 "address of a reverse proxy whose X-Forwarded-For is believed (repeatable)");
  app.add_option("--workers", options.worker_threads, "event threads (each serves many connections)")
      ->capture_default_str();
  app.add_option("--max-connections", options.max_connections, "connections at once")->capture_default_str();
  app.add_option("--max-connections-per-address", options.max_connections_per_address,
                 "connections at once from one client address")
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 4;
  }

  // Divert the stop signals before any thread starts (the server's threads inherit the mask), then wait for
  // them here.
  auto stop_signals = urlguard::Env::Default()->WatchSignals({SIGINT, SIGTERM});
  if (!stop_signals.ok()) {
    std::fprintf(stderr, "urlguard-server: %s\n", stop_signals.status().ToString().c_str());
    return 1;
  }

  auto server = urlguard::Server::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "urlguard-server: %s\n", server.status().ToString().c_str());
    return server.status().code() == urlguard::StatusCode::kInvalidArgument ? 4 : 1;
  }
  std::printf("listening on %s\n", (*server)->base_url().c_str());
  std::fflush(stdout);

  // The wait fails only if the kernel refuses it (exit 1); *stop_signals is destroyed last, after Stop().
  auto signal_number = (*stop_signals)->Wait(-1);
  if (!signal_number.ok()) {
    std::fprintf(stderr, "urlguard-server: %s, stopping\n", signal_number.status().ToString().c_str());
  } else {
    std::fprintf(stderr, "urlguard-server: signal %d, stopping\n", *signal_number);
  }
  (*server)->Stop();
  return signal_number.ok() ? 0 : 1;
}
