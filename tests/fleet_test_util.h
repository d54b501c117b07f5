// Copyright urlguard authors.
//
// Test helpers for the fleet (docs/fleet.md): child processes started for real (redis-server, nginx,
// urlguard-server), free loopback ports, and a Redis on 127.0.0.1 that a test can stop and restart on the
// same port. Used by publish/redis_guard_test.cc, tests/fleet_test.cc and bench/fleet_load_bench.cc.
#ifndef URLGUARD_TESTS_FLEET_TEST_UTIL_H_
#define URLGUARD_TESTS_FLEET_TEST_UTIL_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "tests/test_util.h"
#include <thread>
#include <vector>

namespace urlguard::testing {

inline constexpr char kRedisServerBinary[] = "/usr/bin/redis-server";
inline constexpr char kNginxBinary[] = "/usr/sbin/nginx";

inline bool CanConnect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// Polls `ready` every 20 ms for up to `millis`.
template <typename F>
bool WaitFor(F ready, int millis) {
  for (int waited = 0; waited <= millis; waited += 20) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// One child process: argv[0] is a path; stdout and stderr go to `log`. Killed (SIGKILL) and reaped when
// destroyed if still running.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Kill(SIGKILL); }

  bool Start(const std::vector<std::string>& args, const std::string& log) {
    Kill(SIGKILL);
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    return pid_ > 0;
  }
  bool running() {
    if (pid_ <= 0) return false;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  // Sends `sig` and reaps the child (SIGKILL after 10 s if it has not exited).
  void Kill(int sig) {
    if (pid_ <= 0) return;
    kill(pid_, sig);
    for (int i = 0; i < 500; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

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
