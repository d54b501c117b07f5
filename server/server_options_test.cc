// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The public ServerOptions (include/urlguard/server.h) crosses into the http/ layer's HttpServerOptions by a copy
// (server/server_app.cc ServerHttpOptions): http/ serves urlguardd too and must not see the verify server's own
// fields, so the twin stays. These tests fail when a ServerOptions field is added and not carried.
#include <gtest/gtest.h>

#include "server/server_app.h"
#include "tests/field_count.h"
#include "urlguard/server.h"

namespace urlguard {
namespace {

using testing::FieldCount;

// Where each ServerOptions field goes. Adding a field stops the build here: carry it (to HttpServerOptions in
// ServerHttpOptions, checked below, or to the verify handler in ServerApp::Create), then count it in.
//   to HttpServerOptions (ServerHttpOptions; checked below): max_body_bytes, worker_threads, max_connections,
//     max_connections_per_address, idle_timeout_seconds, head_deadline_seconds, body_deadline_seconds
//   parsed by Server::Start into the `listen` argument and tls_*_pem (server/server.cc): listen, tls_cert_file,
//     tls_key_file
//   ServerApp::Create (server/server_app.cc; server/server_test.cc): repo_dir, throttle_threshold,
//     max_requests_per_second, throttle_clients_per_second, trusted_proxies, guard, clock, negative_cache_seconds,
//     positive_cache_seconds, hash_refresh_millis, state
static_assert(FieldCount<ServerOptions>() == 21,
              "ServerOptions changed: carry the new field and list it in server/server_options_test.cc");

TEST(ServerHttpOptions, CarriesEveryConnectionField) {
  ServerOptions o;
  // Each a value no default has, and no two alike, so a field copied into the wrong place shows.
  o.max_body_bytes = 4099;
  o.worker_threads = 7;
  o.max_connections = 1234;
  o.max_connections_per_address = 17;
  o.idle_timeout_seconds = 41;
  o.head_deadline_seconds = 43;
  o.body_deadline_seconds = 47;
  ListenAddress listen;
  listen.host = "::1";
  listen.port = 8443;
  listen.ipv6 = true;
  const HttpServerOptions h = ServerHttpOptions(o, listen);
  EXPECT_EQ(h.max_body_bytes, 4099u);
  EXPECT_EQ(h.event_threads, 7);
  EXPECT_EQ(h.max_connections, 1234u);
  EXPECT_EQ(h.max_connections_per_address, 17u);
  EXPECT_EQ(h.idle_timeout_seconds, 41);
  EXPECT_EQ(h.head_deadline_seconds, 43);
  EXPECT_EQ(h.body_deadline_seconds, 47);
  EXPECT_EQ(h.listen.host, "::1");
  EXPECT_EQ(h.listen.port, 8443);
  EXPECT_TRUE(h.listen.ipv6);
  // What the verify server does not set keeps the http/ layer's default (no Unix socket; TLS is added by
  // Server::Start from the files).
  EXPECT_TRUE(h.unix_path.empty());
  EXPECT_TRUE(h.tls_cert_pem.empty());
}

}  // namespace
}  // namespace urlguard
