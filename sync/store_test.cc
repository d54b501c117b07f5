// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The data directory (D/current's bytes are format/current_record_test.cc): recovery at open, and crash safety of Install() proven with
// a fault-injecting Env on real files: an I/O failure at every step, a process crash at every step, and a
// power loss at every step (everything not yet fsynced is thrown away) all leave a directory that opens to
// the old or the new state, never a broken one.
#include "sync/store.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/byte_io.h"
#include "core/snapshot.h"
#include "platform/fault_injection_env.h"
#include "urlguard/client.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

namespace fs = std::filesystem;
using ::urlguard::testing::FilesBelow;
using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::ScratchDir;
using ::urlguard::testing::SourcePath;
using ::urlguard::testing::WriteFileOrDie;

// ---- test data
// ---------------------------------------------------------------------------------------------

// A small valid snapshot of `list` at `version`; `seed` varies the content.
std::string MakeSnapshot(const std::string& list, uint64_t version, uint64_t seed) {
  SnapshotContent c;
  c.list_name = list;
  c.version = version;
  c.created_unix = 1700000000 + static_cast<int64_t>(version);
  LayerContent domain;
  domain.kind = LayerKind::kDomain;
  domain.universe = 1 << 20;
  for (uint64_t i = 0; i < 50 + seed % 7; ++i) domain.fingerprints.push_back(i * 997 + seed * 13 + 1);
  domain.entries = domain.fingerprints.size();
  c.layers.push_back(domain);
  LayerContent url;
  url.kind = LayerKind::kUrl;
  url.universe = 1 << 24;
  for (uint64_t i = 0; i < 20; ++i) url.fingerprints.push_back(i * 40111 + seed);
  url.entries = url.fingerprints.size();
  c.layers.push_back(url);
  auto bytes = BuildSnapshot(c);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return *bytes;
}

Sha256Digest Trailer(const std::string& snapshot) {
  Sha256Digest d;
  std::memcpy(d.data(), snapshot.data() + snapshot.size() - 32, 32);
  return d;
}

// What the updater hands to Install() for `snapshot`.
InstalledList Meta(const std::string& list, uint64_t version, const std::string& snapshot,
                   const std::string& manifest_tag = "") {
  InstalledList m;
  m.list = list;
  m.version = version;
  m.state_sha256 = Trailer(snapshot);
  m.manifest_sha256 = Sha256("manifest " + list + " " + std::to_string(version) + manifest_tag);
  m.created_unix = 1700000000 + static_cast<int64_t>(version);
  m.expires_unix = m.created_unix + 86400;
  m.emergency = version % 2 == 0;
  m.min_wait_seconds = 1800;
  return m;
}

void CopyTree(const std::string& from, const std::string& to) {
  fs::remove_all(to);
  fs::copy(from, to, fs::copy_options::recursive);
}

// The fault-injecting Env on real files: a failure, a crash or a power loss at any step.
using FaultEnv = FaultInjectionEnv;

// ---- helpers on stores -----------------------------------------------------------------------------------

std::unique_ptr<Store> OpenOrDie(const std::string& dir, Env* env = Env::Default()) {
  auto s = Store::Open(env, dir);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

// The state a fresh Open() of `dir` finds, after checking that it is self-consistent: D/current (if any)
// equals it, every installed file opens with its checksum, and nothing but named files is left in lists/.
StoreState ReopenAndCheck(const std::string& dir) {
  auto store = OpenOrDie(dir);
  if (store == nullptr) return {};
  const StoreState& st = store->state();
  auto on_disk = ReadStoreState(Env::Default(), dir);
  if (on_disk.ok()) {
    EXPECT_EQ(*on_disk, st);
  } else {
    EXPECT_EQ(on_disk.status().code(), StatusCode::kNotFound);
    EXPECT_TRUE(st.lists.empty());
  }
  std::set<std::string> expected_files = {"lock"};
  if (on_disk.ok()) expected_files.insert("current");
  for (const ListState& l : st.lists) {
    if (!l.installed) continue;
    expected_files.insert(l.installed->file);
    auto mapped = Env::Default()->MapReadOnly(store->PathOf(*l.installed));
    EXPECT_TRUE(mapped.ok());
    if (mapped.ok()) {
      auto view = SnapshotView::Open((*mapped)->data(), (*mapped)->size(), true);
      EXPECT_TRUE(view.ok()) << view.status().ToString();
    }
  }
  EXPECT_EQ(FilesBelow(dir), expected_files);
  return st;
}

// ---- Store: open, install, read ----------------------------------------------------------------------

TEST(Store, FreshDirectoryInstallAndRead) {
  const std::string dir = ScratchDir("store-fresh") + "/D";
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->state(), StoreState());
  EXPECT_TRUE(store->warnings().empty());
  EXPECT_EQ(ReadStoreState(Env::Default(), dir).status().code(), StatusCode::kNotFound);

  const std::string s1 = MakeSnapshot("phishing", 1, 1);
  ASSERT_TRUE(store->Install(Meta("phishing", 1, s1), s1).ok());
  const InstalledList* in = store->state().FindInstalled("phishing");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->version, 1u);
  EXPECT_EQ(in->file, "lists/phishing/1.ugs");
  EXPECT_EQ(in->entries[0], 51u);  // read from the snapshot, not from the caller
  EXPECT_EQ(in->entries[1], 20u);
  EXPECT_EQ(in->entries[2], 0u);
  EXPECT_EQ(store->state().generation, 1u);
  EXPECT_EQ(ReadFileOrDie(store->PathOf(*in)), s1);
  auto read = ReadStoreState(Env::Default(), dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, store->state());

  // A reader maps version 1; version 2 replaces it; the reader's mapping stays valid.
  auto old_map = Env::Default()->MapReadOnly(store->PathOf(*in));
  ASSERT_TRUE(old_map.ok());
  const std::string s2 = MakeSnapshot("phishing", 2, 2);
  ASSERT_TRUE(store->Install(Meta("phishing", 2, s2), s2).ok());
  EXPECT_EQ(store->state().generation, 2u);
  EXPECT_FALSE(fs::exists(dir + "/lists/phishing/1.ugs"));
  EXPECT_TRUE(SnapshotView::Open((*old_map)->data(), (*old_map)->size(), true).ok());
  read = ReadStoreState(Env::Default(), dir);
  ASSERT_TRUE(read.ok());
  EXPECT_NE(read->generation, 1u);  // how readers notice
  EXPECT_EQ(read->FindInstalled("phishing")->version, 2u);
  EXPECT_EQ(read->Find("phishing")->high_water_version, 2u);

  // A second list.
  const std::string m1 = MakeSnapshot("malware", 5, 3);
  ASSERT_TRUE(store->Install(Meta("malware", 5, m1), m1).ok());
  ASSERT_EQ(store->state().lists.size(), 2u);
  EXPECT_EQ(store->state().lists[0].list, "malware");  // sorted
  store.reset();
  EXPECT_EQ(ReopenAndCheck(dir), *ReadStoreState(Env::Default(), dir));
}

// An unsubscribed list leaves on purpose (sync/subscriptions.h): its record, high-water mark and file go; a reader
// sees a new generation; a failed write of D/current changes nothing; a second removal is a no-op.
TEST(Store, RemoveForgetsAListOnPurposeOrNotAtAll) {
  const std::string dir = ScratchDir("store-remove") + "/D";
  FaultInjectionEnv env;
  auto store = OpenOrDie(dir, &env);
  ASSERT_NE(store, nullptr);
  const std::string p = MakeSnapshot("phishing", 2, 1), m = MakeSnapshot("malware", 3, 2);
  ASSERT_TRUE(store->Install(Meta("phishing", 2, p), p).ok());
  ASSERT_TRUE(store->Install(Meta("malware", 3, m), m).ok());
  const StoreState before = store->state();
  bool removed = true;
  env.FailOp(FaultOp::kRename, 0, Status::IoError("rename: injected"));
  EXPECT_EQ(store->Remove("malware", &removed).code(), StatusCode::kIoError);
  EXPECT_FALSE(removed);
  env.ClearFaults();
  EXPECT_EQ(store->state(), before);
  EXPECT_EQ(*ReadStoreState(Env::Default(), dir), before);
  EXPECT_TRUE(fs::exists(dir + "/lists/malware/3.ugs"));

  ASSERT_TRUE(store->Remove("malware", &removed).ok());
  EXPECT_TRUE(removed);
  EXPECT_EQ(store->state().Find("malware"), nullptr);
  EXPECT_NE(store->state().generation, before.generation);
  EXPECT_FALSE(fs::exists(dir + "/lists/malware/3.ugs"));
  ASSERT_TRUE(store->Remove("malware", &removed).ok());
  EXPECT_FALSE(removed);
  store.reset();
  const StoreState after = ReopenAndCheck(dir);
  ASSERT_EQ(after.lists.size(), 1u);
  EXPECT_EQ(after.lists[0].list, "phishing");
  // Gone with its high-water mark: a later subscription starts afresh.
  auto again = OpenOrDie(dir);
  ASSERT_TRUE(again->Install(Meta("malware", 1, MakeSnapshot("malware", 1, 3)), MakeSnapshot("malware", 1, 3)).ok());
}

TEST(Store, SecondOpenOnOneDirectoryFails) {
  const std::string dir = ScratchDir("store-lock");
  auto first = OpenOrDie(dir);
  ASSERT_NE(first, nullptr);
  auto second = Store::Open(Env::Default(), dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("another urlguard process is syncing this data directory"),
            std::string::npos);
  first.reset();
  EXPECT_TRUE(Store::Open(Env::Default(), dir).ok());  // released with the Store
}

TEST(Store, InstallRefusesRollbackEquivocationAndBadBytes) {
  const std::string dir = ScratchDir("store-refuse");
  auto store = OpenOrDie(dir);
  const std::string s3 = MakeSnapshot("phishing", 3, 3);
  ASSERT_TRUE(store->Install(Meta("phishing", 3, s3), s3).ok());
  const StoreState before = store->state();
  const std::set<std::string> files = FilesBelow(dir);

  const std::string s2 = MakeSnapshot("phishing", 2, 2);
  Status s = store->Install(Meta("phishing", 2, s2), s2);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("rollback"), std::string::npos) << s.message();
  s = store->Install(Meta("phishing", 3, s3, "other bytes"), s3);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("equivocation"), std::string::npos) << s.message();

  const std::string s4 = MakeSnapshot("phishing", 4, 4);
  InstalledList wrong_hash = Meta("phishing", 4, s4);
  wrong_hash.state_sha256[5] ^= 1;
  EXPECT_EQ(store->Install(wrong_hash, s4).code(), StatusCode::kCorruption);
  EXPECT_EQ(store->Install(Meta("phishing", 5, s4), s4).code(), StatusCode::kCorruption);  // version 4 bytes
  EXPECT_EQ(store->Install(Meta("malware", 4, s4), s4).code(), StatusCode::kCorruption);   // another list
  std::string flipped = s4;
  flipped[200] ^= 0x40;
  EXPECT_EQ(store->Install(Meta("phishing", 4, s4), flipped).code(), StatusCode::kCorruption);
  EXPECT_EQ(store->Install(Meta("phishing", 4, s4), "").code(), StatusCode::kCorruption);
  EXPECT_EQ(store->Install(Meta("Phish", 4, s4), s4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Install(Meta("phishing", 0, s4), s4).code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(store->state(), before);
  EXPECT_EQ(*ReadStoreState(Env::Default(), dir), before);
  EXPECT_EQ(FilesBelow(dir), files);  // nothing left behind

  // The same version with the same manifest bytes is allowed (a repair), and changes nothing visible but the
  // generation.
  ASSERT_TRUE(store->Install(Meta("phishing", 3, s3), s3).ok());
  EXPECT_EQ(store->state().FindInstalled("phishing")->version, 3u);
  EXPECT_EQ(FilesBelow(dir), files);
}

TEST(Store, CorruptOrMissingStateFileIsDroppedAndHighWaterKept) {
  const std::string dir = ScratchDir("store-corrupt");
  {
    auto store = OpenOrDie(dir);
    const std::string p = MakeSnapshot("phishing", 7, 1), m = MakeSnapshot("malware", 3, 2);
    ASSERT_TRUE(store->Install(Meta("phishing", 7, p), p).ok());
    ASSERT_TRUE(store->Install(Meta("malware", 3, m), m).ok());
  }
  const StoreState before = *ReadStoreState(Env::Default(), dir);
  // Flip one byte in the middle of phishing's file; delete malware's.
  {
    std::string path = dir + "/lists/phishing/7.ugs";
    std::string bytes = ReadFileOrDie(path);
    bytes[bytes.size() / 2] ^= 0x01;
    WriteFileOrDie(path, bytes);
    fs::remove(dir + "/lists/malware/3.ugs");
  }
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->warnings().size(), 3u);  // two drops, one removal of the corrupt file
  EXPECT_NE(store->warnings()[0].find("list malware: state file lists/malware/3.ugs is missing or corrupt"),
            std::string::npos)
      << store->warnings()[0];
  EXPECT_NE(store->warnings()[1].find("list phishing: state file lists/phishing/7.ugs"), std::string::npos);
  EXPECT_NE(store->warnings()[1].find("high-water mark 7 kept"), std::string::npos) << store->warnings()[1];
  EXPECT_NE(store->warnings()[2].find("removed lists/phishing/7.ugs"), std::string::npos)
      << store->warnings()[2];
  const StoreState& st = store->state();
  EXPECT_EQ(st.generation, before.generation + 1);
  ASSERT_EQ(st.lists.size(), 2u);
  for (const ListState& l : st.lists) {
    EXPECT_FALSE(l.installed.has_value()) << l.list;
    EXPECT_EQ(l.high_water_version, before.Find(l.list)->high_water_version);
    EXPECT_EQ(l.high_water_manifest_sha256, before.Find(l.list)->high_water_manifest_sha256);
  }
  EXPECT_EQ(*ReadStoreState(Env::Default(), dir), st);  // persisted
  EXPECT_EQ(FilesBelow(dir), (std::set<std::string>{"current", "lock"}));

  // Below the mark is still refused; the same version with the same manifest bytes repairs.
  const std::string p6 = MakeSnapshot("phishing", 6, 6), p7 = MakeSnapshot("phishing", 7, 1);
  EXPECT_EQ(store->Install(Meta("phishing", 6, p6), p6).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store->Install(Meta("phishing", 7, p7), p7).ok());
  EXPECT_EQ(store->state().FindInstalled("phishing")->version, 7u);
  store.reset();
  ReopenAndCheck(dir);
}

// A directory planted where an installed file belongs (by a bug, a restore tool or another user) is removed
// at the next open: otherwise every later install of that path fails with "Is a directory" for ever.
TEST(Store, DirectoryPlantedAtAnInstallPathIsRemovedAndTheListReinstalls) {
  const std::string dir = ScratchDir("store-planted-dir");
  const std::string p = MakeSnapshot("phishing", 7, 1);
  {
    auto store = OpenOrDie(dir);
    ASSERT_TRUE(store->Install(Meta("phishing", 7, p), p).ok());
  }
  fs::remove(dir + "/lists/phishing/7.ugs");
  fs::create_directories(dir + "/lists/phishing/7.ugs/sub");
  WriteFileOrDie(dir + "/lists/phishing/7.ugs/sub/x", "x");
  fs::create_directories(dir + "/lists/phishing/8.ugs");                  // the next version's path
  fs::create_symlink("/etc/passwd", dir + "/lists/phishing/9.ugs.tmp");  // a link is removed, not followed
  // A list directory that is a link: removed, never listed (recovery would remove its target's files).
  const std::string elsewhere = ScratchDir("store-planted-elsewhere");
  WriteFileOrDie(elsewhere + "/keep.ugs", "not ours");
  fs::create_directory_symlink(elsewhere, dir + "/lists/malware");
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->state().Find("phishing")->installed.has_value());  // dropped, high-water mark kept
  EXPECT_EQ(FilesBelow(dir), (std::set<std::string>{"current", "lock"}));
  EXPECT_TRUE(fs::exists("/etc/passwd"));
  EXPECT_EQ(ReadFileOrDie(elsewhere + "/keep.ugs"), "not ours");
  EXPECT_FALSE(fs::exists(dir + "/lists/malware"));
  ASSERT_TRUE(store->Install(Meta("phishing", 7, p), p).ok());  // the repair works
  const std::string p8 = MakeSnapshot("phishing", 8, 2);
  ASSERT_TRUE(store->Install(Meta("phishing", 8, p8), p8).ok());
  EXPECT_EQ(store->state().FindInstalled("phishing")->version, 8u);
}

// Whoever can write the data directory decides every verdict: one owned by another user or writable by its
// group or the world is refused, with a message that says what to fix.
TEST(Store, RefusesADataDirectoryOthersCanWriteOrOwn) {
  const std::string dir = ScratchDir("store-perms");
  fs::permissions(dir, fs::perms(0775));
  auto s = Store::Open(Env::Default(), dir);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.status().message().find("writable by its group"), std::string::npos) << s.status().ToString();
  fs::permissions(dir, fs::perms(0757));
  s = Store::Open(Env::Default(), dir);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("writable by every user"), std::string::npos) << s.status().ToString();
  fs::permissions(dir, fs::perms(0700));
  if (::geteuid() == 0) {  // only root can give a directory away
    ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
    s = Store::Open(Env::Default(), dir);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
    EXPECT_NE(s.status().message().find("owned by uid 65534"), std::string::npos) << s.status().ToString();
    ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
  }
  EXPECT_TRUE(Store::Open(Env::Default(), dir).ok());
}

// Issue 22, item 4: the writer holds D open from its trust check on. After D's parent is renamed away and another
// directory is put at the old path, an install still lands in the directory the Store checked (the inode it holds),
// and nothing is written into the planted one; so do the sync state and subscriptions reached through dir().
TEST(Store, InstallsIntoTheDirectoryItHoldsAfterItsParentIsRenamedAway) {
  const std::string root = ScratchDir("store-held");
  const std::string d = root + "/p/D";
  auto store = Store::Open(Env::Default(), d);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  fs::rename(root + "/p", root + "/moved");
  fs::create_directories(d);  // the planted directory at the old path
  fs::permissions(d, fs::perms(0700));
  const std::string s1 = MakeSnapshot("phishing", 1, 1);
  ASSERT_TRUE((*store)->Install(Meta("phishing", 1, s1), s1).ok());
  EXPECT_TRUE(fs::is_empty(d)) << "something was written into the planted directory";
  EXPECT_TRUE(fs::exists(root + "/moved/D/current"));
  EXPECT_EQ(ReadFileOrDie(root + "/moved/D/" + (*store)->state().FindInstalled("phishing")->file), s1);
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), JoinPath((*store)->dir(), "sync-state.json"), "{}").ok());
  EXPECT_TRUE(fs::exists(root + "/moved/D/sync-state.json"));
  EXPECT_TRUE(fs::is_empty(d));
}

// The reader side: a Client holds the D its trust check accepted. A D planted at the old path after a rename of
// its parent is never loaded; the next refresh loads what the writer installed into the held directory.
TEST(Store, AReaderRefreshesFromTheDirectoryItHoldsNotOnePlantedAtItsPath) {
  const std::string root = ScratchDir("store-held-reader");
  const std::string d = root + "/p/D";
  const std::string a = MakeSnapshot("phishing", 1, 1);
  {
    auto store = Store::Open(Env::Default(), d);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Install(Meta("phishing", 1, a), a).ok());
  }
  ClientOptions o;
  o.data_dir = d;
  o.watch = false;
  o.verify = false;
  auto client = Client::Open(o);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  fs::rename(root + "/p", root + "/moved");
  {  // the planted D: trusted-looking (this user's, 0700), with a list of its own
    const std::string evil = MakeSnapshot("evil", 7, 7);
    auto planted = Store::Open(Env::Default(), d);
    ASSERT_TRUE(planted.ok()) << planted.status().ToString();
    ASSERT_TRUE((*planted)->Install(Meta("evil", 7, evil), evil).ok());
  }
  {  // the writer, which follows D to where it now is, installs a second list there
    const std::string b = MakeSnapshot("malware", 2, 2);
    auto store = Store::Open(Env::Default(), root + "/moved/D");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Install(Meta("malware", 2, b), b).ok());
  }
  ASSERT_TRUE((*client)->Refresh().ok());
  std::set<std::string> names;
  for (const ListStatus& l : (*client)->Lists()) names.insert(l.name);
  EXPECT_EQ(names, (std::set<std::string>{"malware", "phishing"}));
}

// A symbolic link planted at D/lists after the Store opened D is not followed by the next install: nothing is
// written where it points (the install fails or replaces the link, but never writes through it).
TEST(Store, ALinkPlantedAtListsAfterOpenIsNotFollowed) {
  const std::string root = ScratchDir("store-held-lists");
  const std::string d = root + "/D";
  auto store = Store::Open(Env::Default(), d);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  fs::create_directories(root + "/elsewhere");
  fs::remove_all(d + "/lists");
  fs::create_directory_symlink(root + "/elsewhere", d + "/lists");
  const std::string s1 = MakeSnapshot("phishing", 1, 1);
  (void)(*store)->Install(Meta("phishing", 1, s1), s1);
  EXPECT_TRUE(fs::is_empty(root + "/elsewhere")) << "the install followed a link planted at D/lists";
}

// Issue 22, item 4: the check covered D only. A D under a world-writable parent without the sticky bit was
// accepted, and another user renamed it away and put their own (own key, own server) in its place. Every
// directory from "/" down must be writable by nobody else unless sticky; the message names the fix.
TEST(Store, RefusesADataDirectoryUnderAParentOthersCanWrite) {
  const std::string root = ScratchDir("store-parent");
  const std::string pub = root + "/pub";
  fs::create_directories(pub);
  fs::permissions(pub, fs::perms(0777));
  auto s = Store::Open(Env::Default(), pub + "/D");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.status().message().find("its parent " + pub + " is writable by every user (mode 0777) without the "
                                      "sticky bit"),
            std::string::npos)
      << s.status().ToString();
  EXPECT_NE(s.status().message().find("chmod g-w,o-w " + pub + " (or chmod +t " + pub + ")"), std::string::npos);
  EXPECT_FALSE(fs::exists(pub + "/D/lock"));  // refused before anything was written into it
  // A grandparent counts as much as the parent; group-writable as much as world-writable.
  fs::create_directories(pub + "/sub");
  fs::permissions(pub + "/sub", fs::perms(0755));
  fs::permissions(pub, fs::perms(0775));
  s = Store::Open(Env::Default(), pub + "/sub/D");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(pub + " is writable by its group"), std::string::npos) << s.status().ToString();
  // Sticky (like /tmp): others cannot rename or remove what they do not own; accepted.
  fs::permissions(pub, fs::perms(01777));
  EXPECT_TRUE(Store::Open(Env::Default(), pub + "/D").ok());
  EXPECT_TRUE(Store::Open(Env::Default(), pub + "/sub/D").ok());
  // A relative path is walked from the working directory, which is checked like the rest.
  fs::permissions(pub, fs::perms(0777));
  const fs::path cwd = fs::current_path();
  fs::current_path(pub + "/sub");
  s = Store::Open(Env::Default(), "D");
  fs::current_path(cwd);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(pub + " is writable by every user"), std::string::npos) << s.status().ToString();
  if (::geteuid() == 0) {  // a parent owned by another (non-root) user is theirs to rename things in
    fs::permissions(pub, fs::perms(0755));
    ASSERT_EQ(::chown(pub.c_str(), 65534, 65534), 0);
    s = Store::Open(Env::Default(), pub + "/D");
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("its parent " + pub + " is owned by uid 65534"), std::string::npos)
        << s.status().ToString();
    ASSERT_EQ(::chown(pub.c_str(), 0, 0), 0);
  }
}

// Issue 22, item 4: `urlguard sync --data-dir st/D`, where st is sticky and st/D a symlink another user made,
// wrote current, lists/, lock and the state into the link's target (root's 0700 directory). A link is followed
// only when this user or root owns it.
TEST(Store, RefusesASymlinkAnotherUserOwns) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a symlink to another user (lchown)";
  const std::string root = ScratchDir("store-link");
  const std::string st = root + "/st";
  const std::string target = root + "/roots-private";
  fs::create_directories(st);
  fs::permissions(st, fs::perms(01777));
  fs::create_directories(target);
  fs::permissions(target, fs::perms(0700));
  fs::create_directory_symlink(target, st + "/D");
  ASSERT_EQ(::lchown((st + "/D").c_str(), 65534, 65534), 0);
  auto s = Store::Open(Env::Default(), st + "/D");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.status().message().find(st + "/D is a symbolic link owned by uid 65534"), std::string::npos)
      << s.status().ToString();
  EXPECT_TRUE(fs::is_empty(target));  // nothing written through the link
  // A link on the way (not only the last component) is judged the same.
  s = Store::Open(Env::Default(), st + "/D/sub");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("symbolic link owned by uid 65534"), std::string::npos) << s.status().ToString();
  // The user's own link is followed.
  ASSERT_EQ(::lchown((st + "/D").c_str(), 0, 0), 0);
  EXPECT_TRUE(Store::Open(Env::Default(), st + "/D").ok());
  EXPECT_TRUE(fs::exists(target + "/lock"));
}

// Issue 22, item 5: a FIFO where D/current, D/lock or an installed list file belongs made `sync` block in
// open() for ever (holding D/lock). Now each is damage: removed, and the list fetched again.
TEST(Store, AFifoInTheDataDirectoryIsRepairedNotWaitedFor) {
  const std::string dir = ScratchDir("store-fifo");
  const std::string p = MakeSnapshot("phishing", 7, 1);
  const std::string m = MakeSnapshot("malware", 3, 2);
  {
    auto store = OpenOrDie(dir);
    ASSERT_TRUE(store->Install(Meta("phishing", 7, p), p).ok());
    ASSERT_TRUE(store->Install(Meta("malware", 3, m), m).ok());
  }
  // An installed list file: dropped (high-water mark kept) and removed.
  fs::remove(dir + "/lists/malware/3.ugs");
  ASSERT_EQ(::mkfifo((dir + "/lists/malware/3.ugs").c_str(), 0600), 0);
  {
    auto store = OpenOrDie(dir);
    ASSERT_NE(store, nullptr);
    EXPECT_FALSE(store->state().Find("malware")->installed.has_value());
    EXPECT_EQ(store->state().Find("malware")->high_water_version, 3u);
    EXPECT_TRUE(store->state().FindInstalled("phishing") != nullptr);
  }
  EXPECT_FALSE(fs::exists(dir + "/lists/malware/3.ugs"));
  // D/current and D/lock: readers get an error naming the path at once; the writer starts over.
  fs::remove(dir + "/current");
  ASSERT_EQ(::mkfifo((dir + "/current").c_str(), 0600), 0);
  fs::remove(dir + "/lock");
  ASSERT_EQ(::mkfifo((dir + "/lock").c_str(), 0600), 0);
  auto read = ReadStoreState(Env::Default(), dir);
  EXPECT_EQ(read.status().code(), StatusCode::kIoError);
  EXPECT_NE(read.status().message().find(dir + "/current: a FIFO"), std::string::npos) << read.status().ToString();
  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->state().lists.empty());
  EXPECT_EQ(*ReadStoreState(Env::Default(), dir), store->state());
  EXPECT_EQ(FilesBelow(dir), (std::set<std::string>{"current", "lock"}));
  bool warned = false;
  for (const std::string& w : store->warnings()) warned |= w.find("current: not a regular file") != std::string::npos;
  EXPECT_TRUE(warned);
  ASSERT_TRUE(store->Install(Meta("phishing", 7, p), p).ok());  // the repair works
}

// A new data directory is 0700 (0750 on request) whatever the umask.
TEST(Store, NewDataDirectoryIsPrivateWhateverTheUmask) {
  const std::string root = ScratchDir("store-new-dir");
  const mode_t old_umask = ::umask(0);
  auto a = Store::Open(Env::Default(), root + "/a");
  StoreOptions group;
  group.dir_mode = DataDirMode::kGroupReadable;
  auto b = Store::Open(Env::Default(), root + "/b", group);
  ::umask(old_umask);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(static_cast<unsigned>(fs::status(root + "/a").permissions()), 0700u);
  EXPECT_EQ(static_cast<unsigned>(fs::status(root + "/b").permissions()), 0750u);
}

TEST(Store, CorruptCurrentIsSetAsideAndStartsOver) {
  const std::string dir = ScratchDir("store-current");
  {
    auto store = OpenOrDie(dir);
    const std::string p = MakeSnapshot("phishing", 2, 1);
    ASSERT_TRUE(store->Install(Meta("phishing", 2, p), p).ok());
  }
  std::string bytes = ReadFileOrDie(dir + "/current");
  bytes[40] ^= 0x20;
  WriteFileOrDie(dir + "/current", bytes);
  EXPECT_EQ(ReadStoreState(Env::Default(), dir).status().code(), StatusCode::kCorruption);

  auto store = OpenOrDie(dir);
  ASSERT_NE(store, nullptr);
  ASSERT_GE(store->warnings().size(), 1u);
  EXPECT_NE(store->warnings()[0].find("checksum mismatch"), std::string::npos) << store->warnings()[0];
  EXPECT_NE(store->warnings()[0].find("current.corrupt"), std::string::npos);
  EXPECT_TRUE(store->state().lists.empty());
  EXPECT_NE(store->state().generation, 0u);
  EXPECT_EQ(ReadFileOrDie(dir + "/current.corrupt"), bytes);
  EXPECT_EQ(*ReadStoreState(Env::Default(), dir), store->state());
  EXPECT_EQ(FilesBelow(dir), (std::set<std::string>{"current", "current.corrupt", "lock"}));
}

TEST(Store, OpenRemovesLeftovers) {
  const std::string dir = ScratchDir("store-leftovers");
  {
    auto store = OpenOrDie(dir);
    const std::string p = MakeSnapshot("phishing", 2, 1);
    ASSERT_TRUE(store->Install(Meta("phishing", 2, p), p).ok());
  }
  WriteFileOrDie(dir + "/current.tmp", "half");
  WriteFileOrDie(dir + "/lists/phishing/3.ugs.tmp", "half");
  WriteFileOrDie(dir + "/lists/phishing/checkpoint-3.tmp.scratch", "half");  // a scratch file (ScratchPath)
  WriteFileOrDie(dir + "/lists/phishing/1.ugs", "old");
  fs::create_directories(dir + "/lists/gone");
  WriteFileOrDie(dir + "/lists/gone/4.ugs", "x");
  WriteFileOrDie(dir + "/lists/stray", "x");
  WriteFileOrDie(dir + "/sync-state.json", "{}");  // not the store's: kept
  auto store = OpenOrDie(dir);
  EXPECT_EQ(FilesBelow(dir), (std::set<std::string>{"current", "lock", "lists/phishing/2.ugs", "sync-state.json"}));
  EXPECT_EQ(store->warnings().size(), 3u);  // 1.ugs, gone/4.ugs, stray (tmp files silently)
}

// A pass's scratch file lives in its list's directory, made for it when the list has none yet, under a name the
// next Open removes (above).
TEST(Store, ScratchPathsAreInTheListsDirectoryUnderATemporaryName) {
  const std::string dir = ScratchDir("store-scratch");
  auto store = OpenOrDie(dir);
  auto path = store->ScratchPath("phishing", "checkpoint-8");
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_TRUE(fs::is_directory(dir + "/lists/phishing"));
  WriteFileOrDie(*path, "x");
  EXPECT_TRUE(fs::exists(dir + "/lists/phishing/checkpoint-8.tmp.scratch"));
  EXPECT_EQ(store->ScratchPath("../x", "checkpoint-8").status().code(), StatusCode::kInvalidArgument);
  store.reset();
  store = OpenOrDie(dir);
  EXPECT_FALSE(fs::exists(dir + "/lists/phishing/checkpoint-8.tmp.scratch"));
  EXPECT_TRUE(store->warnings().empty());
}

// ---- crash safety -------------------------------------------------------------------------------------

// A directory with phishing v1 installed, and the snapshot of v2.
struct Fixture {
  std::string base;
  std::string v2 = MakeSnapshot("phishing", 2, 2);
  StoreState old_state;
  StoreState new_state;
  int install_steps = 0;

  explicit Fixture(const std::string& name, bool empty_base = false) {
    base = ScratchDir(name) + "/base";
    {
      auto store = OpenOrDie(base);
      if (!empty_base) {
        const std::string v1 = MakeSnapshot("phishing", 1, 1);
        EXPECT_TRUE(store->Install(Meta("phishing", 1, v1), v1).ok());
      }
      old_state = store->state();
    }
    // The reference run: no faults.
    const std::string ref = base + "-ref";
    CopyTree(base, ref);
    FaultEnv env;
    auto store = OpenOrDie(ref, &env);
    const int open_steps = env.steps();
    EXPECT_TRUE(store->Install(Meta("phishing", 2, v2), v2).ok());
    install_steps = env.steps() - open_steps;
    new_state = store->state();
  }
};

// A power loss (or process crash) at every step of Install(), for an update and for a first install.
void CrashAtEveryStep(bool empty_base, bool power_loss) {
  Fixture f(
      std::string("store-crash-") + (empty_base ? "first" : "update") + (power_loss ? "-power" : "-proc"),
      empty_base);
  ASSERT_GE(f.install_steps, 12);
  std::vector<char> outcome;  // 'o' old, 'n' new, per crash step
  for (int k = 1; k <= f.install_steps + 1; ++k) {
    const std::string dir = f.base + "-k" + std::to_string(k);
    CopyTree(f.base, dir);
    {
      FaultEnv env;
      auto store = OpenOrDie(dir, &env);
      ASSERT_NE(store, nullptr);
      env.CrashAtStep(env.steps() + k);
      Status s = store->Install(Meta("phishing", 2, f.v2), f.v2);
      if (s.ok()) {
        EXPECT_EQ(store->state(), f.new_state);  // only the removal of the old file may fail unreported
      }
      if (power_loss) env.PowerLoss();
      // The process is gone: the Store is destroyed without any further write (every step fails).
    }
    StoreState got = ReopenAndCheck(dir);
    SCOPED_TRACE("crash at step " + std::to_string(k));
    if (got == f.old_state) {
      outcome.push_back('o');
    } else if (got == f.new_state) {
      outcome.push_back('n');
    } else {
      ADD_FAILURE() << "neither the old nor the new state after a crash at step " << k;
      outcome.push_back('?');
    }
    fs::remove_all(dir);
  }
  const std::string seq(outcome.begin(), outcome.end());
  // The switch happens exactly once, at the rename of D/current (made durable by the fsync of D).
  EXPECT_EQ(seq.find('?'), std::string::npos) << seq;
  EXPECT_EQ(seq.front(), 'o') << seq;
  EXPECT_EQ(seq.back(), 'n') << seq;
  EXPECT_EQ(seq.find("no"), std::string::npos) << "went back to the old state: " << seq;
  std::printf("outcome per crash step (o old, n new): %s\n", seq.c_str());
}

TEST(StoreCrash, PowerLossAtEveryStepOfAnUpdate) { CrashAtEveryStep(false, true); }
TEST(StoreCrash, PowerLossAtEveryStepOfAFirstInstall) { CrashAtEveryStep(true, true); }
TEST(StoreCrash, ProcessCrashAtEveryStepOfAnUpdate) { CrashAtEveryStep(false, false); }

TEST(StoreCrash, TheModelCatchesAMissingFsync) {
  // The power-loss model is strict enough to matter: a file renamed into place without an fsync comes back
  // truncated, and a rename without an fsync of its directory is undone.
  const std::string dir = ScratchDir("store-model");
  FaultEnv env;
  auto f = env.NewWritableFile(dir + "/a.tmp", false);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append("0123456789").ok());
  ASSERT_TRUE((*f)->Close().ok());
  ASSERT_TRUE(env.RenameFile(dir + "/a.tmp", dir + "/a").ok());
  ASSERT_TRUE(env.SyncDir(dir).ok());
  WriteFileOrDie(dir + "/b", "old");
  ASSERT_TRUE(env.RenameFile(dir + "/a", dir + "/b").ok());  // not followed by SyncDir
  env.PowerLoss();
  EXPECT_EQ(ReadFileOrDie(dir + "/a"), "01234");  // the unsynced data lost its second half
  EXPECT_EQ(ReadFileOrDie(dir + "/b"), "old");    // the rename was undone
}

TEST(StoreCrash, FailureAtEveryStepLeavesOldOrNewAndTheStoreUsable) {
  Fixture f("store-fail");
  for (int n = 1; n <= f.install_steps; ++n) {
    SCOPED_TRACE("failure at step " + std::to_string(n));
    const std::string dir = f.base + "-n" + std::to_string(n);
    CopyTree(f.base, dir);
    {
      FaultEnv env;
      auto store = OpenOrDie(dir, &env);
      ASSERT_NE(store, nullptr);
      env.FailStep(env.steps() + n, Status::IoError("injected"));
      Status s = store->Install(Meta("phishing", 2, f.v2), f.v2);
      const bool is_new = store->state() == f.new_state;
      EXPECT_TRUE(is_new || store->state() == f.old_state);
      if (!is_new) {
        EXPECT_FALSE(s.ok());
      }
      // Whatever happened, state() is what a reader sees.
      auto disk = ReadStoreState(Env::Default(), dir);
      ASSERT_TRUE(disk.ok());
      EXPECT_EQ(*disk, store->state());
      for (const std::string& file : FilesBelow(dir)) EXPECT_EQ(file.find(".tmp"), std::string::npos) << file;
      if (!is_new) {
        EXPECT_FALSE(fs::exists(dir + "/lists/phishing/2.ugs"));
      }
      // The same store goes on: the retry installs version 2.
      ASSERT_TRUE(store->Install(Meta("phishing", 2, f.v2), f.v2).ok());
      EXPECT_EQ(store->state().FindInstalled("phishing")->version, 2u);
    }
    const StoreState after = ReopenAndCheck(dir);
    EXPECT_EQ(after.FindInstalled("phishing")->version, 2u);
    fs::remove_all(dir);
  }
}

TEST(StoreCrash, DiskFullLeavesTheOldState) {
  Fixture f("store-full");
  const std::string dir = f.base;
  FaultEnv env;
  auto store = OpenOrDie(dir, &env);
  env.FailEveryAppend(Status::ResourceExhausted("write: No space left on device"));
  Status s = store->Install(Meta("phishing", 2, f.v2), f.v2);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_EQ(store->state(), f.old_state);
  EXPECT_EQ(*ReadStoreState(Env::Default(), dir), f.old_state);
  EXPECT_EQ(FilesBelow(dir), (std::set<std::string>{"current", "lock", "lists/phishing/1.ugs"}));
  store.reset();
  EXPECT_EQ(ReopenAndCheck(dir), f.old_state);
}

TEST(StoreCrash, PowerLossDuringRecoveryConverges) {
  // Open() drops a corrupt list and writes the new D/current; a power loss at any step of that still ends,
  // after the next Open(), in the same state.
  const std::string base = ScratchDir("store-recover") + "/base";
  {
    auto store = OpenOrDie(base);
    const std::string p = MakeSnapshot("phishing", 4, 1);
    ASSERT_TRUE(store->Install(Meta("phishing", 4, p), p).ok());
  }
  std::string path = base + "/lists/phishing/4.ugs";
  std::string bytes = ReadFileOrDie(path);
  bytes[100] ^= 1;
  WriteFileOrDie(path, bytes);
  const std::string ref = base + "-ref";
  CopyTree(base, ref);
  FaultEnv ref_env;
  StoreState expected = OpenOrDie(ref, &ref_env)->state();
  ASSERT_FALSE(expected.lists[0].installed.has_value());
  const int steps = ref_env.steps();
  ASSERT_GE(steps, 6);
  for (int k = 1; k <= steps; ++k) {
    SCOPED_TRACE("crash at step " + std::to_string(k));
    const std::string dir = base + "-k" + std::to_string(k);
    CopyTree(base, dir);
    {
      FaultEnv env;
      env.CrashAtStep(k);
      auto store = Store::Open(&env, dir);  // may fail: it crashed
      env.PowerLoss();
    }
    EXPECT_EQ(ReopenAndCheck(dir), expected);
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace urlguard
