// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The fault-injecting Env the tests share: step counting, each kind of fault, short writes on a full disk,
// and the power-loss model. The wrapper it builds on forwards what it does not override.
#include "platform/fault_injection_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::testing::HasSubstr;
using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::TempDir;
using ::urlguard::testing::WriteFileOrDie;

class FaultInjectionEnvTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.Join(name); }
  // create, append, sync, close: four steps.
  Status WriteFile(const std::string& name, std::string_view data) {
    auto f = env_.NewWritableFile(Path(name), false);
    if (!f.ok()) return f.status();
    URLGUARD_RETURN_IF_ERROR((*f)->Append(data));
    URLGUARD_RETURN_IF_ERROR((*f)->Sync());
    return (*f)->Close();
  }

  TempDir dir_{"fault_injection_env_test"};
  FaultInjectionEnv env_;
};

TEST_F(FaultInjectionEnvTest, CountsAndLogsEveryMutatingStep) {
  ASSERT_TRUE(WriteFile("a", "x").ok());
  ASSERT_TRUE(env_.RenameFile(Path("a"), Path("b")).ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  ASSERT_TRUE(env_.ReadFile(Path("b"), 10).ok());  // reads are not steps
  EXPECT_EQ(env_.steps(), 6);
  const std::vector<std::string> log = env_.log();
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[0], "1 create " + Path("a"));
  EXPECT_EQ(log[4], "5 rename " + Path("a") + " -> " + Path("b"));
}

TEST_F(FaultInjectionEnvTest, FailStepFailsExactlyThatStepWithoutEffect) {
  env_.FailStep(2, Status::IoError("EIO"));  // the append
  auto f = env_.NewWritableFile(Path("a"), false);
  ASSERT_TRUE(f.ok());
  Status s = (*f)->Append("lost");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_THAT(s.message(), HasSubstr("injected at append"));
  EXPECT_TRUE((*f)->Append("kept").ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(ReadFileOrDie(Path("a")), "kept");
}

TEST_F(FaultInjectionEnvTest, CrashAtStepFailsThatStepAndEveryLaterOne) {
  env_.CrashAtStep(3);
  EXPECT_FALSE(WriteFile("a", "x").ok());  // the sync (step 3) fails
  EXPECT_THAT(env_.RenameFile(Path("a"), Path("b")).message(), HasSubstr("simulated crash"));
  EXPECT_FALSE(env_.RemoveFile(Path("a")).ok());
  EXPECT_TRUE(env_.FileExists(Path("a")));
  env_.ClearFaults();
  EXPECT_TRUE(env_.RemoveFile(Path("a")).ok());
}

TEST_F(FaultInjectionEnvTest, FailOpNthAndEvery) {
  env_.FailOp(FaultOp::kCreate, 2, Status::IoError("second create"));
  EXPECT_TRUE(WriteFile("a", "1").ok());
  EXPECT_EQ(WriteFile("b", "2").code(), StatusCode::kIoError);
  EXPECT_FALSE(env_.FileExists(Path("b")));
  EXPECT_TRUE(WriteFile("c", "3").ok());  // the rule fired once
  env_.FailOp(FaultOp::kRename, 0, Status::IoError("every rename"));
  EXPECT_FALSE(env_.RenameFile(Path("a"), Path("x")).ok());
  EXPECT_FALSE(env_.RenameFile(Path("c"), Path("x")).ok());
  EXPECT_TRUE(WriteFile("d", "4").ok());           // other kinds are untouched
  env_.FailOp(FaultOp::kRename, 0, Status::Ok());  // an ok status removes the rule
  EXPECT_TRUE(env_.RenameFile(Path("a"), Path("x")).ok());
}

TEST_F(FaultInjectionEnvTest, FullDiskWritesWhatFitsThenFails) {
  env_.SetDiskSpace(5);
  auto f = env_.NewWritableFile(Path("a"), false);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("abc").ok());
  Status s = (*f)->Append("defgh");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("No space left"));
  EXPECT_EQ((*f)->Append("i").code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(ReadFileOrDie(Path("a")), "abcde");  // a short write
  env_.SetDiskSpace(std::nullopt);
  EXPECT_TRUE(WriteFile("b", "plenty").ok());
}

TEST_F(FaultInjectionEnvTest, FailEveryAppendIsADiskFullSwitch) {
  env_.FailEveryAppend(Status::ResourceExhausted("ENOSPC"));
  EXPECT_EQ(WriteFile("a", "x").code(), StatusCode::kResourceExhausted);
  env_.FailEveryAppend(Status::Ok());
  EXPECT_TRUE(WriteFile("a", "x").ok());
}

TEST_F(FaultInjectionEnvTest, PowerLossDropsWhatWasNotMadeDurable) {
  // Synced data and a synced rename survive.
  ASSERT_TRUE(WriteFile("durable.tmp", "0123456789").ok());
  ASSERT_TRUE(env_.RenameFile(Path("durable.tmp"), Path("durable")).ok());
  ASSERT_TRUE(env_.SyncDir(dir_.path()).ok());
  // Unsynced data keeps its first half; an unsynced rename, removal and new directory are undone.
  {
    auto f = env_.NewWritableFile(Path("unsynced"), false);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append("abcdef").ok());
    ASSERT_TRUE((*f)->Close().ok());
  }
  WriteFileOrDie(Path("old"), "old content");
  WriteFileOrDie(Path("removed"), "still here after power loss");
  ASSERT_TRUE(WriteFile("new", "new content").ok());
  ASSERT_TRUE(env_.RenameFile(Path("new"), Path("old")).ok());
  ASSERT_TRUE(env_.RemoveFile(Path("removed")).ok());
  ASSERT_TRUE(env_.CreateDirs(Path("d1/d2"), false).ok());
  WriteFileOrDie(Path("d1/d2/f"), "");
  env_.PowerLoss();
  EXPECT_EQ(ReadFileOrDie(Path("durable")), "0123456789");
  EXPECT_EQ(ReadFileOrDie(Path("unsynced")), "abc");
  EXPECT_EQ(ReadFileOrDie(Path("old")), "old content");
  EXPECT_EQ(ReadFileOrDie(Path("new")), "new content");
  EXPECT_EQ(ReadFileOrDie(Path("removed")), "still here after power loss");
  EXPECT_FALSE(env_.FileExists(Path("d1")));
  // Forgotten afterwards: a second power loss changes nothing.
  env_.PowerLoss();
  EXPECT_EQ(ReadFileOrDie(Path("unsynced")), "abc");
}

TEST_F(FaultInjectionEnvTest, ForwardsEverythingElse) {
  WriteFileOrDie(Path("f"), "data");
  EXPECT_EQ(*env_.ReadFile(Path("f"), 10), "data");
  EXPECT_TRUE(env_.Stat(Path("f"))->is_regular);
  EXPECT_EQ(*env_.RealPath(Path("f")), *Env::Default()->RealPath(Path("f")));
  EXPECT_EQ(*env_.ListDir(dir_.path()), std::vector<std::string>{"f"});
  EXPECT_GT(env_.NowUnixSeconds(), 1700000000);
  EXPECT_EQ(env_.steps(), 0);
}

// Files below a held directory are reached through the Env's own methods (Directory::path()), so the faults a
// wrapping Env injects reach them: the fault-injection tests of the data directory keep covering its writes.
TEST_F(FaultInjectionEnvTest, FaultsReachFilesBelowAHeldDirectory) {
  auto d = env_.OpenDirectory(dir_.path());
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  env_.FailOp(FaultOp::kRename, 1, Status::IoError("rename refused"));
  Status s = WriteFileAtomic(&env_, JoinPath((*d)->path(), "f"), "data");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_THAT(s.message(), HasSubstr("rename refused"));
  EXPECT_FALSE(Env::Default()->FileExists(Path("f")));
  EXPECT_THAT(env_.log().back(), HasSubstr((*d)->path()));
  ASSERT_TRUE(WriteFileAtomic(&env_, JoinPath((*d)->path(), "f"), "data").ok());
  EXPECT_EQ(ReadFileOrDie(Path("f")), "data");
}

}  // namespace
}  // namespace urlguard
