// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The data directory's trust walk (docs/data-dir.md §1.1) on real directories and links: the reader's rule for a
// group-readable directory another user's daemon writes, symlink resolution, and the loop limit. The writer's
// rule and the issue 22 cases are in sync/store_test.cc (Store::Open), the readers' in tests/cli_test.cc. Also:
// a FIFO where D/sync-state.json or D/time-floor belongs is read as damage (never waited on) and replaced by the
// next write.
#include "sync/data_dir_guard.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "sync/scheduler.h"
#include "sync/time_floor.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

namespace fs = std::filesystem;
using ::urlguard::testing::ScratchDir;

// A daemon's user writes D (0750) and apps of its group read it. A reader accepts that owner only where nobody
// else could have made D: under a parent writable by others (sticky), only this user or root.
TEST(DataDirGuard, AReaderAcceptsAnotherUsersDirectoryOnlyWhereNobodyElseCouldHaveMadeIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  const std::string root = ScratchDir("guard-reader");
  const std::string d = root + "/D";
  fs::create_directories(d);
  fs::permissions(d, fs::perms(0750));
  ASSERT_EQ(::chown(d.c_str(), 65534, 65534), 0);
  EXPECT_TRUE(OpenTrustedDataDir(Env::Default(), d, DataDirAccess::kRead, nullptr).status().ok());
  Status writer = OpenTrustedDataDir(Env::Default(), d, DataDirAccess::kWrite, nullptr).status();
  EXPECT_EQ(writer.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(writer.message().find("owned by uid 65534"), std::string::npos) << writer.ToString();

  const std::string shared = root + "/shared";
  fs::create_directories(shared + "/D");
  fs::permissions(shared, fs::perms(01777));
  fs::permissions(shared + "/D", fs::perms(0750));
  EXPECT_TRUE(OpenTrustedDataDir(Env::Default(), shared + "/D", DataDirAccess::kRead, nullptr).status().ok());  // root's
  ASSERT_EQ(::chown((shared + "/D").c_str(), 65534, 65534), 0);
  Status reader = OpenTrustedDataDir(Env::Default(), shared + "/D", DataDirAccess::kRead, nullptr).status();
  EXPECT_EQ(reader.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(reader.message().find("chown 0 " + shared + "/D"), std::string::npos) << reader.ToString();
  // Whoever owns it, a D others may write is refused to readers too.
  fs::permissions(d, fs::perms(0770));
  reader = OpenTrustedDataDir(Env::Default(), d, DataDirAccess::kRead, nullptr).status();
  EXPECT_NE(reader.message().find("writable by its group (mode 0770); chmod g-w,o-w " + d), std::string::npos)
      << reader.ToString();
}

// Links (relative and absolute, chained) and ".." are followed the way the kernel follows them; the resolved path
// is the real one.
TEST(DataDirGuard, ResolvesLinksAndDotsLikeTheKernel) {
  const std::string root = ScratchDir("guard-links");
  fs::create_directories(root + "/a/b/D");
  fs::permissions(root + "/a/b/D", fs::perms(0700));
  fs::create_directory_symlink("a/b", root + "/rel");      // relative to the link's directory
  fs::create_directory_symlink(root + "/rel", root + "/abs");  // a chain
  std::string resolved;
  Status s = OpenTrustedDataDir(Env::Default(), root + "/abs/../b/./D", DataDirAccess::kWrite, &resolved).status();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(resolved, fs::canonical(root + "/a/b/D").string());
  EXPECT_EQ(OpenTrustedDataDir(Env::Default(), root + "/abs/missing", DataDirAccess::kRead, nullptr).status().code(),
            StatusCode::kNotFound);
}

TEST(DataDirGuard, ALinkLoopIsRefusedNotFollowedForEver) {
  const std::string root = ScratchDir("guard-loop");
  fs::create_symlink(root + "/y", root + "/x");
  fs::create_symlink(root + "/x", root + "/y");
  Status s = OpenTrustedDataDir(Env::Default(), root + "/x", DataDirAccess::kRead, nullptr).status();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("symbolic links on the way"), std::string::npos) << s.ToString();
}

// Issue 22, item 5: D/sync-state.json or D/time-floor replaced by a FIFO blocked every reader in open(). Each
// counts as missing (the schedule with a warning naming the path) and the next write renames a file over it.
TEST(DataDirGuard, AFifoAtTheScheduleOrTheTimeFloorIsDamageTheNextWriteRepairs) {
  const std::string dir = ScratchDir("guard-fifo");
  ASSERT_EQ(::mkfifo((dir + "/sync-state.json").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((dir + "/time-floor").c_str(), 0600), 0);
  LoadedSyncState loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_TRUE(loaded.lists.empty());
  EXPECT_NE(loaded.warning.message().find(dir + "/sync-state.json: a FIFO, not a regular file"), std::string::npos)
      << loaded.warning.ToString();
  EXPECT_EQ(ReadTimeFloor(Env::Default(), dir), 0);

  ListSyncState state;
  state.list = "phishing";
  state.last_attempt_unix = 1700000000;
  state.last_result = "ok";
  ASSERT_TRUE(SaveSyncState(Env::Default(), dir, {state}).ok());
  ASSERT_TRUE(AdvanceTimeFloor(Env::Default(), dir, 1700000000).ok());
  loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_TRUE(loaded.warning.ok()) << loaded.warning.ToString();
  ASSERT_EQ(loaded.lists.size(), 1u);
  EXPECT_EQ(loaded.lists[0], state);
  EXPECT_EQ(ReadTimeFloor(Env::Default(), dir), 1700000000);
}

}  // namespace
}  // namespace urlguard
