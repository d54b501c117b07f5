// Copyright urlguard authors.
//
// Helpers shared by tests: scratch directories, reading fixtures, running the project's binaries.
#ifndef URLGUARD_TESTS_TEST_UTIL_H_
#define URLGUARD_TESTS_TEST_UTIL_H_

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace urlguard::testing {

// A fresh directory under $URLGUARD_TEST_TMPDIR (or /tmp) unique to this process and `name`.
inline std::string ScratchDir(const std::string& name) {
  const char* base = std::getenv("URLGUARD_TEST_TMPDIR");
  std::string root = base ? base : "/tmp/urlguard-test";
  std::string dir = root + "/" + name + "." + std::to_string(::getpid());
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) std::abort();
  return dir;
}

// A new empty directory under $URLGUARD_TEST_TMPDIR (or /tmp), named PREFIX.XXXXXX (mkdtemp).
inline std::string MakeTempDir(const std::string& prefix) {
  const char* base = std::getenv("URLGUARD_TEST_TMPDIR");
  std::string root = base != nullptr && *base != '\0' ? base : "/tmp";
  if (std::system(("mkdir -p '" + root + "'").c_str()) != 0) std::abort();
  std::string tmpl = root + "/" + prefix + ".XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
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

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_TEST_UTIL_H_
