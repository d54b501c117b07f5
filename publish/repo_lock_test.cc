// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The repository's locks (publish/repo_lock.h): a wait that gives up when the lock stays held, takes it once the
// holder lets go, and passes other errors through at once. (That publishers use the locks:
// tests/publish_concurrency_test.cc.)
#include "publish/repo_lock.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/test_util.h"

namespace urlguard {
namespace {

TEST(RepoLock, AWaitGivesUpWhileTheLockStaysHeld) {
  Env* env = Env::Default();
  const std::string path = testing::ScratchDir("repo_lock") + "/x.lock";
  auto held = env->LockFile(path);
  ASSERT_TRUE(held.ok());
  auto waited = LockFileWaiting(env, path, /*wait_millis=*/20);
  EXPECT_EQ(waited.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(waited.status().message().find(path), std::string::npos);
}

TEST(RepoLock, AWaitTakesTheLockOnceTheHolderLetsGo) {
  Env* env = Env::Default();
  const std::string path = testing::ScratchDir("repo_lock") + "/x.lock";
  auto held = env->LockFile(path);
  ASSERT_TRUE(held.ok());
  std::thread holder([&held] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    held->reset();
  });
  auto waited = LockFileWaiting(env, path, /*wait_millis=*/60'000);
  holder.join();
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_EQ(env->LockFile(path).status().code(), StatusCode::kFailedPrecondition);  // now ours
}

TEST(RepoLock, OtherErrorsAreNotWaitedFor) {
  Env* env = Env::Default();
  const std::string path = testing::ScratchDir("repo_lock") + "/no-such-dir/x.lock";
  EXPECT_NE(LockFileWaiting(env, path, 60'000).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace urlguard
