// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for urlguard-server's request routing (server/server_app.h ServerApp::HandleHead and
// Handle): arbitrary method, target, headers and body reach every route (static files with traversal
// attempts, ranges and If-None-Match; the verify API in both forms; metrics; health) of a server on a small
// real repository in a temporary directory. Must never crash, hang, leak or trip a sanitizer, and must keep
// the contracts: a status in 100..599; no answer ever carries the secret file outside public/; a static 2xx
// answer's file slice lies inside its mapping.
//
// Input: "METHOD\nTARGET\nName: value\n...\n\nBODY" (missing parts are empty).
// Build: CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DURLGUARD_FUZZ=ON -DURLGUARD_BUILD_TESTS=OFF
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "core/sha256.h"
#include "http/request.h"
#include "platform/env.h"
#include "publish/full_hash_list.h"
#include "server/server_app.h"
#include "urlguard/server.h"

namespace {

constexpr char kSecret[] = "FUZZ-SECRET-OUTSIDE-PUBLIC";

void Check(bool condition) {
  if (!condition) std::abort();
}

urlguard::ServerApp* App() {
  static urlguard::ServerApp* app = [] {
    using namespace urlguard;
    Env* env = Env::Default();
    char tmpl[] = "/tmp/server_routing_fuzz.XXXXXX";
    Check(mkdtemp(tmpl) != nullptr);
    const std::string repo = tmpl;
    Check(env->CreateDirs(repo + "/public/v1/lists/phishing").ok());
    Check(env->CreateDirs(repo + "/private/lists/phishing").ok());
    Check(WriteFileAtomic(env, repo + "/public/v1/lists/phishing/manifest.json",
                          R"({"version": 7, "entries": {"url": 1}})")
              .ok());
    Check(WriteFileAtomic(env, repo + "/public/v1/lists/phishing/snapshot-7.ugs", std::string(70000, 'S')).ok());
    Check(WriteFileAtomic(env, repo + "/secret.txt", kSecret).ok());
    Check(symlink("../secret.txt", (repo + "/public/link-out").c_str()) == 0);
    {
      std::vector<FullHashRecord> records = {{Sha256("evil.example/"), "phishing", LayerKind::kDomain, "x"}};
      Check(WriteFullHashList(env, repo + "/private/lists/phishing/7.ugh", "phishing", 7, &records).ok());
    }
    ServerOptions options;
    options.repo_dir = repo;
    options.throttle_threshold = 59;
    options.max_requests_per_second = 0;
    auto created = ServerApp::Create(options, env);
    Check(created.ok());
    return std::move(created).value().release();
  }();
  return app;
}

std::string_view NextLine(std::string_view* rest) {
  const size_t nl = rest->find('\n');
  const std::string_view line = rest->substr(0, nl);
  *rest = nl == std::string_view::npos ? std::string_view() : rest->substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  urlguard::HttpRequest req;
  req.method = std::string(NextLine(&rest));
  req.target = std::string(NextLine(&rest));
  const size_t question = req.target.find('?');
  req.path = urlguard::PercentDecode(std::string_view(req.target).substr(0, question), false);
  if (question != std::string::npos) req.query = req.target.substr(question + 1);
  while (!rest.empty()) {
    const std::string_view line = NextLine(&rest);
    if (line.empty()) break;
    const size_t colon = line.find(':');
    req.headers.emplace_back(std::string(line.substr(0, colon)),
                             colon == std::string_view::npos ? std::string() : std::string(line.substr(colon + 1)));
  }
  req.peer_address = "127.0.0.1";
  urlguard::ServerApp* app = App();
  auto early = app->HandleHead(req);
  req.body = std::string(rest);
  const urlguard::HttpResponse res = early ? std::move(*early) : app->Handle(req);
  Check(res.status >= 100 && res.status <= 599);
  Check(res.body.find(kSecret) == std::string::npos);
  if (res.file != nullptr) {
    Check(res.file_length > 0 && res.file_offset + res.file_length <= res.file->size());
    const std::string_view served(reinterpret_cast<const char*>(res.file->data()) + res.file_offset,
                                  res.file_length);
    Check(served.find(kSecret) == std::string_view::npos);
  }
  return 0;
}
