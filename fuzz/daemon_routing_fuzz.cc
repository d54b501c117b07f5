// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for urlguardd's lookup-API routing: arbitrary method, target and headers go through exactly
// what the transport runs after http/'s own checks (daemon/api_http.h: RefuseApiHead, ToApiRequest,
// Daemon::Handle, ToHttpResponse) against a daemon on a small real data directory (one list published and
// synced once from an in-process urlguard-server on 127.0.0.1, which keeps answering verification requests).
// The Host allowlist the transport applies before routing (http/framing.h IsAllowedLoopbackHost) is run on
// every Host value too. Must never crash, hang, leak or trip a sanitizer, and must keep the contracts:
//   - a status in 100..599; no answer carries an Access-Control-* header (the API grants no CORS access);
//   - any method but GET/HEAD is refused at head time (405), never routed;
//   - a JSON answer (every route but /metrics) is one valid JSON value;
//   - a Host naming a non-loopback name is never allowed.
//
// Input: "METHOD\nTARGET\nName: value\n...\n" (missing parts are empty).
// Build: CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DURLGUARD_FUZZ=ON -DURLGUARD_BUILD_TESTS=OFF
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "daemon/api_http.h"
#include "http/framing.h"
#include "http/request.h"
#include "platform/env.h"
#include "feeds/feeds.h"
#include "publish/publisher.h"
#include "signing/signer.h"
#include "urlguard/daemon.h"
#include "urlguard/keys.h"
#include "urlguard/server.h"
#include "urlguard/sync.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

urlguard::Daemon* TheDaemon() {
  static urlguard::Daemon* daemon = [] {
    using namespace urlguard;
    Env* env = Env::Default();
    char tmpl[] = "/tmp/daemon_routing_fuzz.XXXXXX";
    Check(mkdtemp(tmpl) != nullptr);
    const std::string root = tmpl;
    auto key = SigningKey::Generate();
    Check(key.ok());
    Check(WriteFileAtomic(env, root + "/pub.pem", key->PublicPem()).ok());
    Check(WriteFileAtomic(env, root + "/feed.txt", "evil.example\nhttp://bank.example/login.php\n203.0.113.0/24\n")
              .ok());
    PublishOptions po;
    po.repo_dir = root + "/repo";
    po.list = "phishing";
    auto feed = ParseFeedSpec("plain:" + root + "/feed.txt");
    Check(feed.ok());
    po.inputs = {*feed};
    Check(Publish(env, *key, po).ok());
    ServerOptions so;
    so.repo_dir = po.repo_dir;
    auto server = Server::Start(so);
    Check(server.ok());
    const std::string url = "http://127.0.0.1:" + std::to_string((*server)->port());
    static Server* const kServer = server->release();  // serves verification requests for the whole run
    (void)kServer;
    DaemonOptions options;
    options.data_dir = root + "/data";
    options.server_url = url;
    options.public_key_files = {root + "/pub.pem"};
    options.lists = {"phishing"};
    {
      auto keys = TrustedKeys::LoadFiles(options.public_key_files, {}, env);
      Check(keys.ok());
      SyncOptions sync;
      sync.data_dir = options.data_dir;
      sync.server_url = url;
      sync.trusted_keys = *keys;
      sync.lists = options.lists;
      sync.create_data_dir = true;
      auto engine = SyncEngine::Open(sync);
      Check(engine.ok());
      const auto reports = (*engine)->RunDueAt(env->NowUnixSeconds(), /*force=*/true);
      Check(reports.size() == 1 && reports[0].result == SyncResult::kUpdated);
    }
    auto opened = Daemon::Open(options);
    Check(opened.ok());
    Check((*opened)->installed_lists() == 1);
    return std::move(opened).value().release();
  }();
  return daemon;
}

std::string_view NextLine(std::string_view* rest) {
  const size_t nl = rest->find('\n');
  const std::string_view line = rest->substr(0, nl);
  *rest = nl == std::string_view::npos ? std::string_view() : rest->substr(nl + 1);
  return line;
}

bool IsLoopbackName(std::string_view host) {
  // What IsAllowedLoopbackHost may allow: a bracketed IPv6 literal, a dotted IPv4 literal or "localhost".
  const size_t colon = host.rfind(':');
  std::string_view name = host.front() == '[' ? host.substr(0, host.find(']') + 1) : host.substr(0, colon);
  if (name == "[::1]" || urlguard::EqualsIgnoreCase(name, "localhost")) return true;
  if (!name.empty() && name.front() == '[') return true;  // other IPv6 spellings of ::1
  return name.find_first_not_of("0123456789.") == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;  // kApiMaxHeadBytes: http/ refuses longer heads
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  urlguard::HttpRequest req;
  req.method = std::string(NextLine(&rest));
  req.target = std::string(NextLine(&rest));
  const size_t question = req.target.find('?');
  req.path = urlguard::PercentDecode(std::string_view(req.target).substr(0, question), false);
  if (question != std::string::npos) req.query = req.target.substr(question + 1);
  while (!rest.empty()) {
    const std::string_view line = NextLine(&rest);
    const size_t colon = line.find(':');
    std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);  // as MHD
    req.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  req.peer_address = "127.0.0.1";
  for (std::string_view host : req.Headers("Host")) {
    if (urlguard::IsAllowedLoopbackHost(host, 8089)) {
      if (host.empty() || !IsLoopbackName(host)) {
        std::fprintf(stderr, "allowed a non-loopback Host: '%.*s'\n", static_cast<int>(host.size()), host.data());
        std::abort();
      }
    }
  }

  urlguard::HttpResponse res;
  if (auto early = urlguard::RefuseApiHead(req)) {
    res = std::move(*early);
  } else {
    Check(req.method == "GET" || req.method == "HEAD");
    res = urlguard::ToHttpResponse(TheDaemon()->Handle(urlguard::ToApiRequest(req)));
  }
  Check(res.status >= 100 && res.status <= 599);
  if (req.method != "GET" && req.method != "HEAD") Check(res.status == 405);
  bool json = false;
  for (const auto& [name, value] : res.headers) {
    Check(name.size() < 14 || !urlguard::EqualsIgnoreCase(std::string_view(name).substr(0, 14), "access-control"));
    if (urlguard::EqualsIgnoreCase(name, "Content-Type") && value == "application/json") json = true;
  }
  if (json) Check(nlohmann::json::accept(res.body));
  return 0;
}
