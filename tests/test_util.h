// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Helpers shared by tests: scratch directories, reading fixtures, running the project's binaries.
// Fault injection lives in platform/fault_injection_env.h (the urlguard_test_support library) and EnvWrapper in
// include/urlguard/env.h.
#ifndef URLGUARD_TESTS_TEST_UTIL_H_
#define URLGUARD_TESTS_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace urlguard::testing {

// The root for scratch files: $URLGUARD_TEST_TMPDIR (CTest sets it to <build>/testtmp), else
// /tmp/urlguard-test. Created on first use.
inline std::string TestTmpRoot() {
  const char* base = std::getenv("URLGUARD_TEST_TMPDIR");
  std::string root = base != nullptr && *base != '\0' ? base : "/tmp/urlguard-test";
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec) {
    std::fprintf(stderr, "cannot create %s: %s\n", root.c_str(), ec.message().c_str());
    std::abort();
  }
  return root;
}

// The one scratch-directory helper of the tests: a new empty directory TestTmpRoot()/PREFIX.XXXXXX
// (mkdtemp: unique even across concurrent test processes), removed with everything in it when the object
// is destroyed, unless $URLGUARD_KEEP_TEST_TMPDIR is set (to look at what a failing test left).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = TestTmpRoot() + "/" + prefix + ".XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror(("mkdtemp " + tmpl).c_str());
      std::abort();
    }
    path_ = std::move(tmpl);
  }
  ~TempDir() {
    const char* keep = std::getenv("URLGUARD_KEEP_TEST_TMPDIR");
    if (keep != nullptr && *keep != '\0') return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);  // best effort: a test may have left a read-only directory
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The path of a new TempDir that lives until the process exits, for tests that only need a path.
inline std::string ScratchDir(const std::string& name) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<TempDir>> dirs;  // destroyed (and removed) at exit
  std::lock_guard<std::mutex> l(mu);
  dirs.push_back(std::make_unique<TempDir>(name));
  return dirs.back()->path();
}

// The regular files below `dir`, relative to it, sorted.
inline std::set<std::string> FilesBelow(const std::string& dir) {
  std::set<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files.insert(std::filesystem::relative(e.path(), dir).string());
  }
  return files;
}

inline std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::abort();
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFileOrDie(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
  if (!out) std::abort();
}

// A port nothing listens on right now (bound to 127.0.0.1 and released; another process may take it in
// between, which the callers' start loops retry).
inline int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// True when something accepts a TCP connection on 127.0.0.1:port right now (how the tests see that a server
// they started is up).
inline bool CanConnect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

inline std::string SourcePath(const std::string& relative) { return std::string(URLGUARD_SOURCE_DIR) + "/" + relative; }
inline std::string BinPath(const std::string& tool) { return std::string(URLGUARD_BINARY_DIR) + "/bin/" + tool; }

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
};

// Runs a shell command line, capturing stdout (stderr goes to `stderr_file` when given, else passes through).
inline RunResult RunCommand(const std::string& command, const std::string& stdin_text = "",
                     const std::string& stderr_file = "") {
  std::string cmd = command;
  std::string in_file;
  if (!stdin_text.empty()) {
    in_file = ScratchDir("stdin") + "/in.txt";
    WriteFileOrDie(in_file, stdin_text);
    cmd += " < '" + in_file + "'";
  } else {
    cmd += " < /dev/null";
  }
  if (!stderr_file.empty()) cmd += " 2> '" + stderr_file + "'";
  RunResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// n bytes of noise, the same for the same seed (incompressible input for codec tests).
inline std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// n bytes of text shaped like a URL list: compressible, but not trivially.
inline std::string Compressible(size_t n) {
  std::string s;
  s.reserve(n);
  for (size_t i = 0; s.size() < n; ++i) s += "evil" + std::to_string(i % 977) + ".example/login.php\n";
  s.resize(n);
  return s;
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_TEST_UTIL_H_
