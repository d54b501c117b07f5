// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// tests/child_process.h: a child runs in a process group of its own; stopping it ends the whole group (what the
// child started goes too), and a child outlives neither a stop nor the death of the thread that started it.
// Real processes: /bin/sh starting a `sleep` in the background, as nginx's master starts its workers.
#include "tests/child_process.h"

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "tests/test_util.h"

namespace urlguard::testing {
namespace {

// True while `pid` exists and is not a zombie (a killed orphan waits for init to reap it).
bool Alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// Polls up to 10 s for `pid` to be gone.
bool GoneWithin10s(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (!Alive(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The pid a shell child wrote into `path` (polls up to 10 s for the file).
pid_t ReadPid(const std::string& path) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(path);
    pid_t pid = -1;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// A shell that starts `sleep 300` in the background (its pid into `pid_file`) and waits for it: a master with
// one worker. The shell ignores SIGTERM, as a master busy elsewhere would, so only the group SIGKILL ends it.
std::vector<std::string> MasterWithWorker(const std::string& pid_file) {
  return {"/bin/sh", "-c", "trap '' TERM; sleep 300 & echo $! > '" + pid_file + "'; wait"};
}

TEST(ChildProcess, RunsInItsOwnProcessGroup) {
  ChildProcess child;
  ASSERT_TRUE(child.Start({"/bin/sleep", "300"}, "/dev/null"));
  EXPECT_EQ(getpgid(child.pid()), child.pid());
  EXPECT_NE(getpgid(child.pid()), getpgid(0));
  const pid_t pid = child.pid();
  child.Kill(SIGTERM);
  EXPECT_FALSE(Alive(pid));
}

// Killing only the child (main's ChildProcess: kill(pid, SIGKILL)) left the worker running, orphaned.
TEST(ChildProcess, SigkillEndsTheWorkersToo) {
  const std::string dir = ScratchDir("child-process");
  ChildProcess master;
  ASSERT_TRUE(master.Start(MasterWithWorker(dir + "/worker.pid"), dir + "/log"));
  const pid_t worker = ReadPid(dir + "/worker.pid");
  ASSERT_GT(worker, 0);
  ASSERT_TRUE(Alive(worker));
  master.Kill(SIGKILL);
  EXPECT_TRUE(GoneWithin10s(worker)) << "worker " << worker << " outlived its master's stop";
  if (Alive(worker)) kill(worker, SIGKILL);
}

// A master that ignores SIGTERM: the bounded wait ends, then SIGKILL to the group; Stop says it had to kill.
TEST(ChildProcess, StopKillsTheGroupAfterTheWait) {
  const std::string dir = ScratchDir("child-process");
  ChildProcess master;
  ASSERT_TRUE(master.Start(MasterWithWorker(dir + "/worker.pid"), dir + "/log"));
  const pid_t worker = ReadPid(dir + "/worker.pid");
  ASSERT_GT(worker, 0);
  const pid_t pid = master.pid();
  EXPECT_EQ(master.Stop(SIGTERM, 200), -1);
  EXPECT_FALSE(Alive(pid));
  EXPECT_TRUE(GoneWithin10s(worker));
  if (Alive(worker)) kill(worker, SIGKILL);
}

// A child that exits by itself: its exit code comes back, and what it left in its group is ended.
TEST(ChildProcess, ExitCodeAndWhatTheChildLeftBehind) {
  const std::string dir = ScratchDir("child-process");
  ChildProcess child;
  ASSERT_TRUE(child.Start({"/bin/sh", "-c", "sleep 300 & echo $! > '" + dir + "/left.pid'; exit 3"}, dir + "/log"));
  EXPECT_EQ(child.Wait(10000), 3);
  const pid_t left = ReadPid(dir + "/left.pid");
  ASSERT_GT(left, 0);
  EXPECT_TRUE(GoneWithin10s(left)) << "what the child left in its group survived";
  if (Alive(left)) kill(left, SIGKILL);
}

// A test process that dies without stopping its children (a crash, a ctest timeout's SIGKILL): the children get
// SIGTERM (PR_SET_PDEATHSIG) and go. Here a forked copy of this process starts a server and dies at once.
TEST(ChildProcess, ChildGetsSigtermWhenItsStarterDies) {
  const std::string dir = ScratchDir("child-process");
  const std::string pid_file = dir + "/server.pid";
  const pid_t starter = fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {
    const pid_t server = StartInOwnProcessGroup({"/bin/sleep", "300"});
    // Until the server runs `sleep` (exec done, so its death signal is set), then die.
    for (int i = 0; i < 500; ++i) {
      std::ifstream comm("/proc/" + std::to_string(server) + "/comm");
      std::string name;
      if (std::getline(comm, name) && name == "sleep") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ofstream(pid_file) << server << "\n";
    _exit(0);  // no destructor, no stop: as if killed
  }
  int status = 0;
  ASSERT_EQ(waitpid(starter, &status, 0), starter);
  const pid_t server = ReadPid(pid_file);
  ASSERT_GT(server, 0);
  EXPECT_TRUE(GoneWithin10s(server)) << "the server outlived the process that started it";
  if (Alive(server)) kill(server, SIGKILL);
}

TEST(ChildProcess, ChildGetsTheExtraEnvironment) {
  const std::string dir = ScratchDir("child-process");
  ChildOptions options;
  options.stdout_path = dir + "/out";
  options.env = {{"URLGUARD_CHILD_TEST", "one"}, {"HOME", "/nonexistent-home"}};
  const pid_t pid = StartInOwnProcessGroup({"/bin/sh", "-c", "echo \"$URLGUARD_CHILD_TEST $HOME\""}, options);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(StopProcessGroup(pid, 0, 10000), 0);
  EXPECT_EQ(ReadFileOrDie(dir + "/out"), "one /nonexistent-home\n");
}

}  // namespace
}  // namespace urlguard::testing
