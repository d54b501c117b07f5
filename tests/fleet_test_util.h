// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Test helpers for the fleet (docs/fleet.md): child processes started for real (redis-server, nginx,
// urlguard-server; ChildProcess, tests/child_process.h), free loopback ports, and a Redis on 127.0.0.1 that a
// test can stop and restart on the same port. Used by server/redis_guard_test.cc, tests/fleet_test.cc and
// bench/fleet_load_bench.cc.
#ifndef URLGUARD_TESTS_FLEET_TEST_UTIL_H_
#define URLGUARD_TESTS_FLEET_TEST_UTIL_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "tests/child_process.h"
#include "tests/test_util.h"
#include <thread>
#include <vector>

namespace urlguard::testing {

inline constexpr char kRedisServerBinary[] = "/usr/bin/redis-server";
inline constexpr char kNginxBinary[] = "/usr/sbin/nginx";

// Polls `ready` every 20 ms for up to `millis`.
template <typename F>
bool WaitFor(F ready, int millis) {
  for (int waited = 0; waited <= millis; waited += 20) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// redis-server on 127.0.0.1:port, in the foreground, no persistence. Stop() and Start() again reuse the port.
class RedisProcess {
 public:
  static bool Available() { return access(kRedisServerBinary, X_OK) == 0; }

  // Picks a free port on the first call.
  bool Start(const std::string& dir) {
    if (port_ < 0) port_ = FreeLoopbackPort();
    log_ = dir + "/redis.log";
    if (!child_.Start({kRedisServerBinary, "--port", std::to_string(port_), "--bind", "127.0.0.1",
                       "--save", "", "--appendonly", "no", "--dir", dir, "--protected-mode", "yes"},
                      log_)) {
      return false;
    }
    return WaitFor([&] { return CanConnect(port_); }, 5000);
  }
  void Stop() { child_.Kill(SIGKILL); }
  int port() const { return port_; }
  pid_t pid() const { return child_.pid(); }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  const std::string& log() const { return log_; }

 private:
  ChildProcess child_;
  int port_ = -1;
  std::string log_;
};

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_FLEET_TEST_UTIL_H_
