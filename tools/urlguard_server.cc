// Copyright urlguard authors.
//
// `urlguard-server`: the reference update and verification server (server side, ARCHITECTURE §8).
//
//   urlguard-server --repo DIR --listen 127.0.0.1:PORT [--tls-cert FILE --tls-key FILE] [--throttle N]
//                   [--workers N]
//
// Serves DIR/public/ as static files, the verify API from DIR/private/hashes.sqlite, /metrics and /healthz
// (publish/server.h). Only loopback addresses may be bound. Prints "listening on http://127.0.0.1:PORT"
// (https with TLS) once it accepts connections, and stops cleanly on SIGINT or SIGTERM.
//
// Exit status: 0 stopped by a signal, 1 could not start, 4 bad usage.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "publish/server.h"

namespace {

// Splits "HOST:PORT" or "[V6HOST]:PORT". False when malformed.
bool ParseListen(const std::string& listen, std::string* host, int* port) {
  std::string port_text;
  if (!listen.empty() && listen[0] == '[') {
    const size_t close = listen.find(']');
    if (close == std::string::npos || close + 1 >= listen.size() || listen[close + 1] != ':') return false;
    *host = listen.substr(1, close - 1);
    port_text = listen.substr(close + 2);
  } else {
    const size_t colon = listen.rfind(':');
    if (colon == std::string::npos || listen.find(':') != colon) return false;
    *host = listen.substr(0, colon);
    port_text = listen.substr(colon + 1);
  }
  if (host->empty() || port_text.empty() || port_text.size() > 5) return false;
  int value = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  if (value > 65535) return false;
  *port = value;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguard-server: serves a urlguard repository (static files, verify API, metrics)"};
  std::string repo, listen = "127.0.0.1:8080", tls_cert, tls_key;
  int throttle = 30, workers = 8;
  app.add_option("--repo", repo, "repository directory (public/ and private/hashes.sqlite)")->required();
  app.add_option("--listen", listen,
                 "HOST:PORT to bind; loopback only (127.0.0.0/8 or [::1]); port 0 picks one")
      ->capture_default_str();
  app.add_option("--tls-cert", tls_cert, "PEM certificate (chain) file: serve HTTPS");
  app.add_option("--tls-key", tls_key, "PEM private key file");
  app.add_option("--throttle", throttle,
                 "throttle a client seen in more than N of the last 59 seconds (0-59)")
      ->capture_default_str();
  app.add_option("--workers", workers, "worker threads (connections served at once)")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 4;
  }

  urlguard::ServerOptions options;
  options.repo_dir = repo;
  if (!ParseListen(listen, &options.host, &options.port)) {
    std::fprintf(stderr, "urlguard-server: --listen must be HOST:PORT or [HOST]:PORT, got '%s'\n",
                 listen.c_str());
    return 4;
  }
  options.tls_cert_file = tls_cert;
  options.tls_key_file = tls_key;
  options.throttle_threshold = throttle;
  options.worker_threads = workers;

  // Block the stop signals in every thread (the server's threads inherit this mask), then wait for them here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto server = urlguard::Server::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "urlguard-server: %s\n", server.status().ToString().c_str());
    return server.status().code() == urlguard::StatusCode::kInvalidArgument ? 4 : 1;
  }
  const bool v6 = options.host.find(':') != std::string::npos;
  std::printf("listening on %s://%s%s%s:%d\n", (*server)->tls() ? "https" : "http", v6 ? "[" : "",
              options.host.c_str(), v6 ? "]" : "", (*server)->port());
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::fprintf(stderr, "urlguard-server: signal %d, stopping\n", signal_number);
  (*server)->Stop();
  return 0;
}
