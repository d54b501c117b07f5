// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// StartReferenceServer: the reference update server (include/urlguard/server.h) serving a repository on
// loopback, the way the end-to-end tests start it. Header-only; the test links urlguard_server.
#ifndef URLGUARD_TESTS_REFERENCE_SERVER_UTIL_H_
#define URLGUARD_TESTS_REFERENCE_SERVER_UTIL_H_

#include <memory>
#include <string>

#include "urlguard/server.h"
#include "urlguard/status.h"

namespace urlguard::testing {

// Serves the published repository `repo_dir` on 127.0.0.1 at a port the kernel picks, with every other option
// at its default; clients reach it at (*server)->base_url() ("http://127.0.0.1:PORT"). Fails as Server::Start
// does (the status names why).
inline Result<std::unique_ptr<Server>> StartReferenceServer(const std::string& repo_dir) {
  ServerOptions options;
  options.repo_dir = repo_dir;
  return Server::Start(options);
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_REFERENCE_SERVER_UTIL_H_
