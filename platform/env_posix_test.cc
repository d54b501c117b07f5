// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The POSIX Env on real files, sockets and signals: every method, its error paths, and the file hardening
// (temporary files that a planted symlink cannot redirect, private modes whatever the umask, the private
// directory check).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "platform/env.h"
#include "platform/fault_injection_env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::testing::HasSubstr;
using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::TempDir;
using ::urlguard::testing::WriteFileOrDie;

uint32_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return static_cast<uint32_t>(st.st_mode & 07777);
}

// Sets the process umask for one test.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

// Sets (or unsets, with nullptr) an environment variable for one test.
class ScopedEnvVar {
 public:
  ScopedEnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnvVar() {
    if (old_.has_value()) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class EnvPosixTest : public ::testing::Test {
 protected:
  Env* env_ = Env::Default();
  TempDir dir_{"env_posix_test"};
  std::string Path(const std::string& name) const { return dir_.Join(name); }
};

// ---- directory handles ------------------------------------------------------------------------------------

// A held directory keeps naming the inode it opened: after the directory is renamed away and another is made at
// its old path, files reached through path() are read and written in the held one, never in the new one.
TEST_F(EnvPosixTest, ADirectoryHandleKeepsNamingTheInodeItOpened) {
  ASSERT_EQ(::mkdir(Path("d").c_str(), 0700), 0);
  WriteFileOrDie(Path("d/f"), "held");
  auto d = env_->OpenDirectory(Path("d"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(::rename(Path("d").c_str(), Path("moved").c_str()), 0);
  ASSERT_EQ(::mkdir(Path("d").c_str(), 0700), 0);
  WriteFileOrDie(Path("d/f"), "planted");
  EXPECT_EQ(*env_->ReadFile(JoinPath((*d)->path(), "f"), 100), "held");
  ASSERT_TRUE(WriteFileAtomic(env_, JoinPath((*d)->path(), "g"), "new").ok());
  EXPECT_EQ(ReadFileOrDie(Path("moved/g")), "new");
  EXPECT_FALSE(env_->FileExists(Path("d/g")));
  ASSERT_TRUE(env_->RenameFile(JoinPath((*d)->path(), "g"), JoinPath((*d)->path(), "h")).ok());
  EXPECT_EQ(ReadFileOrDie(Path("moved/h")), "new");
  auto info = (*d)->Stat();
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->is_dir);
  EXPECT_EQ(info->mode, 0700u);
  EXPECT_EQ(env_->OpenDirectory(Path("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->OpenDirectory(Path("moved/f")).status().code(), StatusCode::kFailedPrecondition);
}

// The operations relative to a held directory never follow a symlink: StatAt and ReadLinkAt see the link itself,
// OpenDirectoryAt refuses it; a name must be one component.
TEST_F(EnvPosixTest, DirectoryHandleOperationsDoNotFollowSymlinks) {
  ASSERT_EQ(::mkdir(Path("d").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(Path("d/sub").c_str(), 0750), 0);
  ASSERT_EQ(::mkdir(Path("target").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(Path("target").c_str(), Path("d/link").c_str()), 0);
  WriteFileOrDie(Path("d/file"), "x");
  auto d = env_->OpenDirectory(Path("d"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  auto link = (*d)->StatAt("link");
  ASSERT_TRUE(link.ok());
  EXPECT_TRUE(link->is_symlink);
  EXPECT_EQ(*(*d)->ReadLinkAt("link"), Path("target"));
  EXPECT_EQ((*d)->ReadLinkAt("file").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*d)->ReadLinkAt("missing").status().code(), StatusCode::kNotFound);
  Status followed = (*d)->OpenDirectoryAt("link").status();
  EXPECT_EQ(followed.code(), StatusCode::kFailedPrecondition) << followed.ToString();
  EXPECT_THAT(followed.message(), HasSubstr("not following it"));
  EXPECT_EQ((*d)->OpenDirectoryAt("file").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*d)->OpenDirectoryAt("missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ((*d)->OpenDirectoryAt("sub/..").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*d)->StatAt("").status().code(), StatusCode::kInvalidArgument);
  auto sub = (*d)->OpenDirectoryAt("sub");
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  EXPECT_EQ((*sub)->Stat()->mode, 0750u);
  auto up = (*sub)->OpenDirectoryAt("..");
  ASSERT_TRUE(up.ok());
  EXPECT_TRUE((*up)->StatAt("file")->is_regular);
}

// ---- reading ----------------------------------------------------------------------------------------------

TEST_F(EnvPosixTest, ReadFileReturnsTheBytesUpToTheCap) {
  const std::string data("a\0b\xff", 4);
  WriteFileOrDie(Path("f"), data);
  auto read = env_->ReadFile(Path("f"), 4);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, data);
  WriteFileOrDie(Path("empty"), "");
  EXPECT_EQ(*env_->ReadFile(Path("empty"), 0), "");
}

TEST_F(EnvPosixTest, ReadFileErrors) {
  WriteFileOrDie(Path("f"), "12345");
  auto over = env_->ReadFile(Path("f"), 4);
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(over.status().message(), HasSubstr("cap of 4"));
  auto missing = env_->ReadFile(Path("missing"), 100);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(Path("missing")));
  EXPECT_EQ(env_->ReadFile(dir_.path(), size_t{1} << 20).status().code(), StatusCode::kIoError);
  EXPECT_EQ(env_->ReadFile(dir_.path(), 100).status().code(), StatusCode::kIoError);  // not "over the cap"
  // A character device is not a file to read (it has no size, and opening some has effects).
  auto device = env_->ReadFile("/dev/zero", 4096);
  EXPECT_EQ(device.status().code(), StatusCode::kIoError);
  EXPECT_THAT(device.status().message(), HasSubstr("/dev/zero: a character device, not a regular file"));
}

// A FIFO planted where a file belongs (D/current, D/sync-state.json, a list file) used to block the open of
// every reader and writer for ever (open(O_RDONLY) waits for a writer; the sync held D/lock meanwhile). Every
// open is non-blocking and refuses what is not a regular file, naming its path and type. On the code before,
// each of these calls blocks (the test then hangs until ctest's timeout).
TEST_F(EnvPosixTest, NoOpenBlocksOnAFifoAndNonRegularFilesAreRefused) {
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0600), 0);
  auto read = env_->ReadFile(Path("fifo"), 100);
  EXPECT_EQ(read.status().code(), StatusCode::kIoError);
  EXPECT_THAT(read.status().message(), HasSubstr(Path("fifo") + ": a FIFO, not a regular file"));
  auto mapped = env_->MapReadOnly(Path("fifo"));
  EXPECT_EQ(mapped.status().code(), StatusCode::kIoError);
  EXPECT_THAT(mapped.status().message(), HasSubstr(Path("fifo")));
  // Open for writing: with no reader the FIFO refuses a non-blocking open (ENXIO); with one, fstat does.
  auto written = env_->NewWritableFile(Path("fifo"), false);
  EXPECT_EQ(written.status().code(), StatusCode::kIoError);
  EXPECT_THAT(written.status().message(), HasSubstr(Path("fifo")));
  const int reader = ::open(Path("fifo").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  written = env_->NewWritableFile(Path("fifo"), true);
  EXPECT_EQ(written.status().code(), StatusCode::kIoError);
  EXPECT_THAT(written.status().message(), HasSubstr(Path("fifo") + ": a FIFO, not a regular file"));
  // A lock file that is a FIFO: opening it read-write does not block, but it is not a lock file.
  auto lock = env_->LockFile(Path("fifo"));
  EXPECT_EQ(lock.status().code(), StatusCode::kIoError);
  EXPECT_THAT(lock.status().message(), HasSubstr("a FIFO"));
  ::close(reader);
  // A socket: open() itself fails (ENXIO), with the path.
  const int sock = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(Path("sock").size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, Path("sock").c_str(), Path("sock").size() + 1);
  ASSERT_EQ(::bind(sock, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(env_->ReadFile(Path("sock"), 100).status().code(), StatusCode::kIoError);
  EXPECT_THAT(env_->ReadFile(Path("sock"), 100).status().message(), HasSubstr(Path("sock")));
  EXPECT_FALSE(env_->MapReadOnly(Path("sock")).ok());
  ::close(sock);
  // A regular file opened this way reads and writes normally (O_NONBLOCK was cleared).
  auto file = env_->NewWritableFile(Path("f"), false);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Append("bytes").ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(*env_->ReadFile(Path("f"), 100), "bytes");
}

TEST_F(EnvPosixTest, MapReadOnlyOutlivesRenameAndUnlink) {
  WriteFileOrDie(Path("f"), "mapped bytes");
  auto map = env_->MapReadOnly(Path("f"));
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  WriteFileOrDie(Path("g"), "other");
  ASSERT_TRUE(env_->RenameFile(Path("g"), Path("f")).ok());
  ASSERT_TRUE(env_->RemoveFile(Path("f")).ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>((*map)->data()), (*map)->size()), "mapped bytes");
}

TEST_F(EnvPosixTest, MapReadOnlyErrors) {
  WriteFileOrDie(Path("empty"), "");
  EXPECT_EQ(env_->MapReadOnly(Path("empty")).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(env_->MapReadOnly(Path("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->MapReadOnly(dir_.path()).status().code(), StatusCode::kIoError);
}

// ---- writing ----------------------------------------------------------------------------------------------

TEST_F(EnvPosixTest, NewWritableFileTruncatesAndWrites) {
  WriteFileOrDie(Path("f"), "a much longer old content");
  auto f = env_->NewWritableFile(Path("f"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE((*f)->Append("new ").ok());
  ASSERT_TRUE((*f)->Append("").ok());
  ASSERT_TRUE((*f)->Append("bytes").ok());
  ASSERT_TRUE((*f)->Sync().ok());
  ASSERT_TRUE((*f)->Close().ok());
  EXPECT_EQ(ReadFileOrDie(Path("f")), "new bytes");
  EXPECT_EQ(env_->NewWritableFile(Path("no/such/dir/f")).status().code(), StatusCode::kNotFound);
}

TEST_F(EnvPosixTest, PrivateFileIsExactly0600WhateverTheUmask) {
  ScopedUmask umask(022);
  auto shared = env_->NewWritableFile(Path("shared"));
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(ModeOf(Path("shared")), 0644u);
  // An existing world-readable file becomes private when reopened as private.
  WriteFileOrDie(Path("key"), "old");
  ASSERT_EQ(::chmod(Path("key").c_str(), 0666), 0);
  auto key = env_->NewWritableFile(Path("key"), /*private_file=*/true);
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(ModeOf(Path("key")), 0600u);
  // An umask that strips the owner's write bit does not make a private file unwritable.
  ScopedUmask strict(0277);
  auto fresh = env_->NewExclusiveFile(Path("fresh"), /*private_file=*/true);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(ModeOf(Path("fresh")), 0600u);
}

TEST_F(EnvPosixTest, NewExclusiveFileNeverOpensWhatExists) {
  WriteFileOrDie(Path("exists"), "keep");
  auto again = env_->NewExclusiveFile(Path("exists"));
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition) << again.status().ToString();
  EXPECT_EQ(ReadFileOrDie(Path("exists")), "keep");
  // A symlink, dangling or not, is not followed: neither its target nor a new file behind it is touched.
  WriteFileOrDie(Path("target"), "secret");
  ASSERT_EQ(::symlink(Path("target").c_str(), Path("link").c_str()), 0);
  ASSERT_EQ(::symlink(Path("nowhere").c_str(), Path("dangling").c_str()), 0);
  EXPECT_FALSE(env_->NewExclusiveFile(Path("link")).ok());
  EXPECT_FALSE(env_->NewExclusiveFile(Path("dangling")).ok());
  EXPECT_EQ(ReadFileOrDie(Path("target")), "secret");
  EXPECT_FALSE(env_->FileExists(Path("nowhere")));
}

TEST_F(EnvPosixTest, WriteFileAtomicDoesNotFollowASymlinkPlantedAtTheTemporaryName) {
  WriteFileOrDie(Path("victim"), "do not touch");
  ASSERT_EQ(::symlink(Path("victim").c_str(), Path("state.json.tmp").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(env_, Path("state.json"), "new state").ok());
  EXPECT_EQ(ReadFileOrDie(Path("victim")), "do not touch");
  EXPECT_EQ(ReadFileOrDie(Path("state.json")), "new state");
  EXPECT_FALSE(env_->FileExists(Path("state.json.tmp")));
  auto info = env_->Stat(Path("state.json"));
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->is_regular);
  // A dangling link planted there does not create its target either.
  ASSERT_EQ(::symlink(Path("created-by-attacker").c_str(), Path("state.json.tmp").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(env_, Path("state.json"), "again").ok());
  EXPECT_FALSE(env_->FileExists(Path("created-by-attacker")));
  EXPECT_EQ(ReadFileOrDie(Path("state.json")), "again");
}

TEST_F(EnvPosixTest, WriteFileAtomicReplacesAStaleTemporaryFileAndKeepsPrivacy) {
  ScopedUmask umask(022);
  WriteFileOrDie(Path("key.tmp"), "stale half-written content from a crash");
  ASSERT_TRUE(WriteFileAtomic(env_, Path("key"), "k", /*private_file=*/true).ok());
  EXPECT_EQ(ReadFileOrDie(Path("key")), "k");
  EXPECT_EQ(ModeOf(Path("key")), 0600u);
  EXPECT_FALSE(env_->FileExists(Path("key.tmp")));
}

TEST_F(EnvPosixTest, WriteFileAtomicFailureKeepsTheOldFileAndRemovesTheTemporaryFile) {
  WriteFileOrDie(Path("f"), "old");
  FaultInjectionEnv faulty(env_);
  faulty.FailOp(FaultOp::kRename, 1, Status::IoError("EIO"));
  Status s = WriteFileAtomic(&faulty, Path("f"), "new");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(ReadFileOrDie(Path("f")), "old");
  EXPECT_FALSE(env_->FileExists(Path("f.tmp")));
}

// ---- rename and remove ------------------------------------------------------------------------------------

TEST_F(EnvPosixTest, RenameReplacesAcrossDirectories) {
  ASSERT_TRUE(env_->CreateDirs(Path("a")).ok());
  ASSERT_TRUE(env_->CreateDirs(Path("b")).ok());
  WriteFileOrDie(Path("a/f"), "moved");
  WriteFileOrDie(Path("b/g"), "replaced");
  ASSERT_TRUE(env_->RenameFile(Path("a/f"), Path("b/g")).ok());
  EXPECT_EQ(ReadFileOrDie(Path("b/g")), "moved");
  EXPECT_FALSE(env_->FileExists(Path("a/f")));
  Status missing = env_->RenameFile(Path("a/f"), Path("b/h"));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("rename"));
}

TEST_F(EnvPosixTest, RenameAcrossFileSystemsFails) {
  // /dev/shm is a tmpfs on Linux; the test directory normally is not.
  struct stat here, shm;
  if (::stat(dir_.path().c_str(), &here) != 0 || ::stat("/dev/shm", &shm) != 0 || here.st_dev == shm.st_dev ||
      ::access("/dev/shm", W_OK) != 0) {
    GTEST_SKIP() << "no second writable file system at /dev/shm";
  }
  WriteFileOrDie(Path("f"), "x");
  const std::string there = "/dev/shm/urlguard-env-test-" + std::to_string(::getpid());
  Status s = env_->RenameFile(Path("f"), there);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();  // EXDEV
  EXPECT_TRUE(env_->FileExists(Path("f")));
  (void)env_->RemoveFile(there);
}

TEST_F(EnvPosixTest, RemoveFileRemovesALinkNotItsTarget) {
  WriteFileOrDie(Path("target"), "t");
  ASSERT_EQ(::symlink(Path("target").c_str(), Path("link").c_str()), 0);
  ASSERT_TRUE(env_->RemoveFile(Path("link")).ok());
  EXPECT_EQ(ReadFileOrDie(Path("target")), "t");
  EXPECT_EQ(env_->RemoveFile(Path("link")).code(), StatusCode::kNotFound);
}

// ---- directories ------------------------------------------------------------------------------------------

TEST_F(EnvPosixTest, CreateDirsMakesEveryLevel) {
  ScopedUmask umask(022);
  ASSERT_TRUE(env_->CreateDirs(Path("x/y/z")).ok());
  EXPECT_TRUE(env_->Stat(Path("x/y/z"))->is_dir);
  EXPECT_EQ(ModeOf(Path("x")), 0755u);
  EXPECT_TRUE(env_->CreateDirs(Path("x/y/z")).ok());   // exists: fine
  EXPECT_TRUE(env_->CreateDirs(Path("x/y/z/")).ok());  // trailing slash
  WriteFileOrDie(Path("file"), "");
  EXPECT_EQ(env_->CreateDirs(Path("file")).code(), StatusCode::kIoError);
  EXPECT_FALSE(env_->CreateDirs(Path("file/sub")).ok());
  EXPECT_EQ(env_->CreateDirs("").code(), StatusCode::kInvalidArgument);
}

TEST_F(EnvPosixTest, PrivateDirsAre0700WhateverTheUmask) {
  {
    ScopedUmask umask(022);
    ASSERT_TRUE(env_->CreateDirs(Path("p/q"), /*private_dir=*/true).ok());
    EXPECT_EQ(ModeOf(Path("p")), 0700u);
    EXPECT_EQ(ModeOf(Path("p/q")), 0700u);
  }
  ScopedUmask strict(0377);
  ASSERT_TRUE(env_->CreateDirs(Path("r"), /*private_dir=*/true).ok());
  EXPECT_EQ(ModeOf(Path("r")), 0700u);
}

TEST_F(EnvPosixTest, RemoveDirAndSyncDir) {
  ASSERT_TRUE(env_->CreateDirs(Path("d")).ok());
  WriteFileOrDie(Path("d/f"), "");
  EXPECT_TRUE(env_->SyncDir(Path("d")).ok());
  EXPECT_EQ(env_->RemoveDir(Path("d")).code(), StatusCode::kIoError);  // not empty
  ASSERT_TRUE(env_->RemoveFile(Path("d/f")).ok());
  EXPECT_TRUE(env_->RemoveDir(Path("d")).ok());
  EXPECT_EQ(env_->RemoveDir(Path("d")).code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->SyncDir(Path("d")).code(), StatusCode::kNotFound);
}

TEST_F(EnvPosixTest, ListDirIsSortedWithoutDots) {
  for (const char* name : {"b", "a", "C", "a.tmp", "0"}) WriteFileOrDie(Path(name), "");
  ASSERT_TRUE(env_->CreateDirs(Path("sub")).ok());
  auto names = env_->ListDir(dir_.path());
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"0", "C", "a", "a.tmp", "b", "sub"}));
  EXPECT_EQ(env_->ListDir(Path("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(env_->ListDir(Path("sub"))->empty());
}

// ---- metadata ---------------------------------------------------------------------------------------------

TEST_F(EnvPosixTest, StatOfFileDirAndSymlink) {
  ScopedUmask umask(022);
  WriteFileOrDie(Path("f"), "12345");
  ASSERT_EQ(::chmod(Path("f").c_str(), 0640), 0);
  auto f = env_->Stat(Path("f"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->size, 5u);
  EXPECT_TRUE(f->is_regular);
  EXPECT_FALSE(f->is_dir);
  EXPECT_FALSE(f->is_symlink);
  EXPECT_EQ(f->mode, 0640u);
  EXPECT_EQ(f->uid, static_cast<uint32_t>(::geteuid()));
  EXPECT_LE(std::llabs(f->mtime_unix - static_cast<int64_t>(::time(nullptr))), 60);

  auto d = env_->Stat(dir_.path());
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->is_dir);
  EXPECT_FALSE(d->is_regular);

  ASSERT_EQ(::symlink("f", Path("link").c_str()), 0);
  auto l = env_->Stat(Path("link"));
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->is_symlink);  // the link itself, not the file it names
  EXPECT_FALSE(l->is_regular);
  EXPECT_EQ(l->size, 1u);  // strlen("f")

  EXPECT_EQ(env_->Stat(Path("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(env_->FileExists(Path("link")));
  EXPECT_FALSE(env_->FileExists(Path("missing")));
}

TEST_F(EnvPosixTest, RealPathResolvesLinksAndDots) {
  ASSERT_TRUE(env_->CreateDirs(Path("a/b")).ok());
  WriteFileOrDie(Path("a/b/f"), "");
  ASSERT_EQ(::symlink(Path("a/b").c_str(), Path("ln").c_str()), 0);
  auto expected = env_->RealPath(Path("a/b/f"));
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(expected->front(), '/');
  EXPECT_EQ(*env_->RealPath(Path("ln/f")), *expected);
  EXPECT_EQ(*env_->RealPath(Path("a/b/../b/./f")), *expected);
  EXPECT_EQ(env_->RealPath(Path("ln/missing")).status().code(), StatusCode::kNotFound);
}

TEST_F(EnvPosixTest, CheckPrivateDirRefusesWhatOthersCanWrite) {
  ASSERT_TRUE(env_->CreateDirs(Path("private"), /*private_dir=*/true).ok());
  EXPECT_TRUE(CheckPrivateDir(env_, Path("private")).ok());
  ASSERT_EQ(::chmod(Path("private").c_str(), 0755), 0);  // readable by all is fine
  EXPECT_TRUE(CheckPrivateDir(env_, Path("private")).ok());
  ASSERT_EQ(::symlink(Path("private").c_str(), Path("link").c_str()), 0);
  EXPECT_TRUE(CheckPrivateDir(env_, Path("link")).ok());  // judged by what it points to

  ASSERT_TRUE(env_->CreateDirs(Path("group")).ok());
  ASSERT_EQ(::chmod(Path("group").c_str(), 0770), 0);
  Status group = CheckPrivateDir(env_, Path("group"));
  EXPECT_EQ(group.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(group.message(), HasSubstr("0770"));
  ASSERT_EQ(::chmod(Path("group").c_str(), 01777), 0);  // sticky /tmp-like: still refused
  EXPECT_EQ(CheckPrivateDir(env_, Path("group")).code(), StatusCode::kPermissionDenied);

  WriteFileOrDie(Path("file"), "");
  EXPECT_EQ(CheckPrivateDir(env_, Path("file")).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(CheckPrivateDir(env_, Path("missing")).code(), StatusCode::kNotFound);
}

TEST_F(EnvPosixTest, SetPermissionsSetsExactlyTheModeWhateverTheUmask) {
  ASSERT_TRUE(env_->CreateDirs(Path("d")).ok());
  const mode_t old_umask = ::umask(077);
  Status s = env_->SetPermissions(Path("d"), 0750);
  ::umask(old_umask);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(env_->Stat(Path("d"))->mode, 0750u);
  EXPECT_EQ(env_->SetPermissions(Path("missing"), 0700).code(), StatusCode::kNotFound);
}

TEST_F(EnvPosixTest, RemoveTreeRemovesEverythingButNeverFollowsALink) {
  ASSERT_TRUE(env_->CreateDirs(Path("outside")).ok());
  WriteFileOrDie(Path("outside/keep"), "keep");
  ASSERT_TRUE(env_->CreateDirs(Path("tree/a/b")).ok());
  WriteFileOrDie(Path("tree/a/b/f"), "x");
  WriteFileOrDie(Path("tree/g"), "y");
  ASSERT_EQ(::symlink(Path("outside").c_str(), Path("tree/a/link").c_str()), 0);
  ASSERT_EQ(::mkfifo(Path("tree/fifo").c_str(), 0600), 0);
  ASSERT_TRUE(RemoveTree(env_, Path("tree")).ok());
  EXPECT_EQ(env_->Stat(Path("tree")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadFileOrDie(Path("outside/keep")), "keep");  // the link went, not its target's content
  EXPECT_TRUE(RemoveTree(env_, Path("tree")).ok());          // nothing there: ok
  ASSERT_EQ(::symlink(Path("outside").c_str(), Path("top-link").c_str()), 0);
  ASSERT_TRUE(RemoveTree(env_, Path("top-link")).ok());
  EXPECT_TRUE(env_->FileExists(Path("outside/keep")));

  std::string deep = Path("deep");
  for (int i = 0; i <= kMaxRemoveTreeDepth; ++i) deep += "/d";
  ASSERT_TRUE(env_->CreateDirs(deep).ok());
  EXPECT_EQ(RemoveTree(env_, Path("deep")).code(), StatusCode::kResourceExhausted);
}

TEST_F(EnvPosixTest, CheckPrivateDirRefusesADirectoryOwnedByAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  ASSERT_TRUE(env_->CreateDirs(Path("theirs"), /*private_dir=*/true).ok());
  ASSERT_EQ(::chown(Path("theirs").c_str(), 65534, 65534), 0);  // nobody
  Status s = CheckPrivateDir(env_, Path("theirs"));
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("owned by uid 65534"));
}

// ---- locks, clocks, randomness ----------------------------------------------------------------------------

TEST_F(EnvPosixTest, LockFileExcludesASecondHolderUntilReleased) {
  auto first = env_->LockFile(Path("lock"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = env_->LockFile(Path("lock"));
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  first->reset();
  auto third = env_->LockFile(Path("lock"));
  EXPECT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(env_->LockFile(Path("no/such/dir/lock")).status().code(), StatusCode::kNotFound);
}

TEST_F(EnvPosixTest, LockFileRefusesASymlink) {
  ASSERT_EQ(::symlink(Path("elsewhere").c_str(), Path("lock").c_str()), 0);
  EXPECT_EQ(env_->LockFile(Path("lock")).status().code(), StatusCode::kIoError);  // ELOOP
  EXPECT_FALSE(env_->FileExists(Path("elsewhere")));
}

TEST_F(EnvPosixTest, ClocksAndRandomness) {
  const int64_t wall = env_->NowUnixSeconds();
  EXPECT_LE(std::llabs(wall - static_cast<int64_t>(::time(nullptr))), 2);
  uint64_t last = env_->NowMonotonicNanos();
  for (int i = 0; i < 1000; ++i) {
    const uint64_t now = env_->NowMonotonicNanos();
    EXPECT_GE(now, last);
    last = now;
  }
  unsigned char a[32] = {}, b[32] = {}, zero[32] = {};
  env_->RandomBytes(a, sizeof a);
  env_->RandomBytes(b, sizeof b);
  EXPECT_NE(std::memcmp(a, b, sizeof a), 0);  // 2^-256 chance of a false failure
  EXPECT_NE(std::memcmp(a, zero, sizeof a), 0);
  env_->RandomBytes(nullptr, 0);
}

// ---- the process ------------------------------------------------------------------------------------------

TEST_F(EnvPosixTest, GetEnvVar) {
  {
    ScopedEnvVar set("URLGUARD_ENV_TEST_VAR", "value with spaces");
    EXPECT_EQ(env_->GetEnvVar("URLGUARD_ENV_TEST_VAR"), "value with spaces");
  }
  {
    ScopedEnvVar empty("URLGUARD_ENV_TEST_VAR", "");
    EXPECT_EQ(env_->GetEnvVar("URLGUARD_ENV_TEST_VAR"), "");
  }
  ScopedEnvVar unset("URLGUARD_ENV_TEST_VAR", nullptr);
  EXPECT_EQ(env_->GetEnvVar("URLGUARD_ENV_TEST_VAR"), std::nullopt);
}

// A datagram socket standing in for systemd's notification socket.
class NotifySocket {
 public:
  // `name`: a path, or "@..." for the abstract namespace.
  explicit NotifySocket(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    if (name[0] == '@') addr.sun_path[0] = '\0';
    const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
  }
  ~NotifySocket() { ::close(fd_); }

  // The next datagram, waiting up to 5 s ("" on timeout).
  std::string Receive() {
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }

 private:
  int fd_ = -1;
};

TEST_F(EnvPosixTest, NotifyServiceManagerIsANoOpWithoutNotifySocket) {
  {
    ScopedEnvVar unset("NOTIFY_SOCKET", nullptr);
    EXPECT_TRUE(env_->NotifyServiceManager("READY=1").ok());
  }
  ScopedEnvVar empty("NOTIFY_SOCKET", "");
  EXPECT_TRUE(env_->NotifyServiceManager("READY=1").ok());
}

TEST_F(EnvPosixTest, NotifyServiceManagerSendsOneDatagramToAPathSocket) {
  const std::string path = Path("notify.sock");
  NotifySocket socket(path);
  ScopedEnvVar var("NOTIFY_SOCKET", path.c_str());
  ASSERT_TRUE(env_->NotifyServiceManager("READY=1\nSTATUS=serving 2 lists").ok());
  EXPECT_EQ(socket.Receive(), "READY=1\nSTATUS=serving 2 lists");
  ASSERT_TRUE(env_->NotifyServiceManager("STOPPING=1").ok());
  EXPECT_EQ(socket.Receive(), "STOPPING=1");
}

TEST_F(EnvPosixTest, NotifyServiceManagerSendsToAnAbstractSocket) {
  const std::string name = "@urlguard-env-test-" + std::to_string(::getpid());
  NotifySocket socket(name);
  ScopedEnvVar var("NOTIFY_SOCKET", name.c_str());
  ASSERT_TRUE(env_->NotifyServiceManager("READY=1").ok());
  EXPECT_EQ(socket.Receive(), "READY=1");
}

TEST_F(EnvPosixTest, NotifyServiceManagerErrors) {
  {
    ScopedEnvVar nobody("NOTIFY_SOCKET", Path("nobody.sock").c_str());
    EXPECT_EQ(env_->NotifyServiceManager("READY=1").code(), StatusCode::kUnavailable);
  }
  {
    ScopedEnvVar relative("NOTIFY_SOCKET", "relative.sock");
    EXPECT_EQ(env_->NotifyServiceManager("READY=1").code(), StatusCode::kInvalidArgument);
  }
  const std::string too_long = "/" + std::string(sizeof(sockaddr_un::sun_path), 'x');
  ScopedEnvVar long_name("NOTIFY_SOCKET", too_long.c_str());
  EXPECT_EQ(env_->NotifyServiceManager("READY=1").code(), StatusCode::kInvalidArgument);
}

bool IsBlocked(int sig) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}

TEST_F(EnvPosixTest, WatchSignalsReportsWhichSignalArrived) {
  ASSERT_FALSE(IsBlocked(SIGHUP));
  auto signals = env_->WatchSignals({SIGTERM, SIGINT, SIGHUP});
  ASSERT_TRUE(signals.ok()) << signals.status().ToString();
  EXPECT_TRUE(IsBlocked(SIGHUP));
  EXPECT_EQ(*(*signals)->Wait(0), 0);   // nothing pending
  EXPECT_EQ(*(*signals)->Wait(20), 0);  // times out
  ASSERT_EQ(::kill(::getpid(), SIGHUP), 0);
  EXPECT_EQ(*(*signals)->Wait(5000), SIGHUP);
  ASSERT_EQ(::raise(SIGTERM), 0);  // would end the test process if it were not diverted
  ASSERT_EQ(::raise(SIGINT), 0);
  std::vector<int> got = {*(*signals)->Wait(5000), *(*signals)->Wait(5000)};
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int>{SIGINT, SIGTERM}));
  EXPECT_EQ(*(*signals)->Wait(0), 0);
  signals->reset();
  EXPECT_FALSE(IsBlocked(SIGHUP));  // the mask is restored
  EXPECT_FALSE(IsBlocked(SIGTERM));
}

TEST_F(EnvPosixTest, WatchSignalsRefusesWhatCannotBeCaught) {
  EXPECT_EQ(env_->WatchSignals({}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(env_->WatchSignals({SIGHUP, SIGKILL}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(env_->WatchSignals({SIGSTOP}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(env_->WatchSignals({100000}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(IsBlocked(SIGHUP));  // a refused call changes nothing
}

}  // namespace
}  // namespace urlguard
