// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The one way tests start and stop other programs (servers, daemons, tools): each child runs in a process group
// of its own, and stopping it signals the whole group, so whatever the child started (nginx's workers, a
// shell's pipeline) goes with it. A test stops everything it starts; tests/leftover_processes.sh checks that
// (ctest `fleet_leaves_no_process`, and the end of scripts/test.sh).
//
// Why the group: nginx's master forks its workers and, killed with SIGKILL, cannot take them down; the workers
// lived on, orphaned, after every fleet test. Signalling the group reaches them directly.
//
// Stopping, in this order (StopProcessGroup):
//   1. `sig` to the group (SIGTERM for a clean stop; SIGKILL for a `kill -9` fault);
//   2. up to a bounded wait for the leader (the child) to exit. It stays a zombie, unreaped, so its pid, which
//      is the group's id, cannot be taken by a new process meanwhile;
//   3. SIGKILL to the group: every member still there (a worker that ignored or outlived the signal);
//   4. the leader reaped.
// A child that leaves the group on purpose (setsid: PostgreSQL's postmaster under pg_ctl) is out of reach;
// its owner stops it by its own means (tests/pg_cluster.cc: pg_ctl stop, then the postmaster pid).
//
// The child also gets SIGTERM when the thread that started it dies (PR_SET_PDEATHSIG): a test process killed by
// a ctest timeout or a crash still takes its servers down (nginx's master stops its workers on SIGTERM).
// Because the signal follows the starting *thread*, start children from a thread that outlives them (a test's
// main thread), not from a short-lived worker thread.
//
// Everything between fork and exec is async-signal-safe (argv and envp are built before the fork), so a test
// may start a child while its other threads run (tests/fleet_test.cc restarts a server under load).
//
// Thread safety: a ChildProcess is driven by one thread at a time.
#ifndef URLGUARD_TESTS_CHILD_PROCESS_H_
#define URLGUARD_TESTS_CHILD_PROCESS_H_

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace urlguard::testing {

// Where a child's standard streams go and what it gets in its environment besides ours.
struct ChildOptions {
  std::string stdout_path;  // appended to; empty: inherited from the test
  std::string stderr_path;  // appended to; empty: inherited from the test
  std::string stdin_path = "/dev/null";  // empty: inherited
  std::vector<std::pair<std::string, std::string>> env;  // set (or replaced) in the child's environment
};

// Forks and execs args[0] (a path, no $PATH search) with `args` as its argv, as the leader of a new process group
// (its pid is the group id). Returns the pid, or -1 when fork failed; an exec that fails ends the child with
// exit code 127. The caller must stop it with StopProcessGroup (ChildProcess does).
inline pid_t StartInOwnProcessGroup(const std::vector<std::string>& args, const ChildOptions& options = {}) {
  if (args.empty()) return -1;
  // Everything the child needs, built before the fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    bool replaced = false;
    for (const auto& kv : options.env) {
      const size_t n = kv.first.size();
      if (std::strncmp(*e, kv.first.c_str(), n) == 0 && (*e)[n] == '=') replaced = true;
    }
    if (!replaced) env_strings.emplace_back(*e);
  }
  for (const auto& kv : options.env) env_strings.push_back(kv.first + "=" + kv.second);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings = args;
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid != 0) {
    // Also set here (either order wins the race): the group exists before the caller can signal it.
    if (pid > 0) ::setpgid(pid, pid);
    return pid;
  }
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl: nobody would stop us
  auto redirect = [](const std::string& path, int flags, int target) {
    if (path.empty()) return;
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) ::_exit(127);
    if (fd != target) {
      ::dup2(fd, target);
      ::close(fd);
    }
  };
  redirect(options.stdin_path, O_RDONLY, 0);
  redirect(options.stdout_path, O_WRONLY | O_CREAT | O_APPEND, 1);
  if (options.stderr_path == options.stdout_path && !options.stderr_path.empty()) {
    ::dup2(1, 2);
  } else {
    redirect(options.stderr_path, O_WRONLY | O_CREAT | O_APPEND, 2);
  }
  ::execve(argv[0], argv.data(), envp.data());
  ::_exit(127);
}

// The exit code of a waitpid status: the code when the process exited, 128 + the signal when a signal ended it.
inline int ExitCodeOf(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// Stops the process group led by `pid` (a child of this process started by StartInOwnProcessGroup): sends `sig`
// to the group (none when `sig` is 0: just waits), waits up to `wait_millis` for the leader to exit, then
// SIGKILLs what is left of the group and reaps the leader. Returns the leader's exit code (ExitCodeOf), or -1
// when it had not exited by itself within the wait (it was killed).
inline int StopProcessGroup(pid_t pid, int sig, int wait_millis) {
  if (pid <= 0) return -1;
  if (sig != 0) ::kill(-pid, sig);
  bool exited = false;
  for (int waited = 0;; waited += 10) {
    siginfo_t info{};
    // WNOWAIT: the leader stays a zombie, so the group id cannot be reused before the SIGKILL below.
    const int r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid) {
      exited = true;
      break;
    }
    if (r != 0 && errno != EINTR) return -1;  // not our child (already reaped): its group id may be another's now
    if (waited >= wait_millis) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid, SIGKILL);  // the members that outlived the leader (or the leader itself after the wait)
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r != pid || !exited) return -1;
  return ExitCodeOf(status);
}

// One child process in its own process group (see the file comment). Stopped with its group (SIGKILL) when
// destroyed if still running.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Kill(SIGKILL); }

  // Starts args[0] (a path) with stdout and stderr appended to `log`; a child still running from an earlier
  // Start is stopped first. False when fork failed (an exec failure shows as exit code 127).
  bool Start(const std::vector<std::string>& args, const std::string& log) {
    ChildOptions options;
    options.stdout_path = log;
    options.stderr_path = log;
    return Start(args, options);
  }
  bool Start(const std::vector<std::string>& args, const ChildOptions& options) {
    Kill(SIGKILL);
    pid_ = StartInOwnProcessGroup(args, options);
    return pid_ > 0;
  }
  // True while the child has not exited. A child found exited is stopped as Stop does (what is left of its
  // group killed, the child reaped).
  bool running() {
    if (pid_ <= 0) return false;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_) {
      Stop(0, 0);
      return false;
    }
    return true;
  }
  // Sends `sig` to the child's group and stops it: SIGKILL to the group after 10 s if the child has not exited
  // by then, and to whatever of the group outlived it in any case; the child is reaped.
  void Kill(int sig) { Stop(sig, 10000); }
  // The same with a chosen wait; returns the child's exit code (ExitCodeOf), -1 when it had to be killed after
  // the wait or was not running.
  int Stop(int sig, int wait_millis) {
    if (pid_ <= 0) return -1;
    exit_code_ = StopProcessGroup(pid_, sig, wait_millis);
    pid_ = -1;
    return exit_code_;
  }
  // Waits up to `wait_millis` for the child to exit by itself (no signal), then stops its group as Stop does.
  int Wait(int wait_millis) { return Stop(0, wait_millis); }
  // The pid (also the process group id) while running, else -1.
  pid_t pid() const { return pid_; }
  // The exit code of the last stop or observed exit (ExitCodeOf), -1 when none or killed.
  int exit_code() const { return exit_code_; }

 private:
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_CHILD_PROCESS_H_
