// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync/store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/ascii.h"
#include "core/sha256.h"
#include "core/snapshot.h"
#include "platform/env.h"

namespace urlguard {
namespace {

constexpr std::string_view kCurrentTmpSuffix = ".tmp";
constexpr std::string_view kCorruptSuffix = ".corrupt";
// Snapshot files are checksummed this many bytes at a time (see VerifySnapshotFile).
constexpr size_t kVerifyChunkBytes = size_t{128} << 10;

}  // namespace

Result<StoreState> ReadStoreState(Env* env, const std::string& dir) {
  const std::string path = JoinPath(dir, std::string(kCurrentFileName));
  auto bytes = env->ReadFile(path, kMaxCurrentBytes);
  if (!bytes.ok()) return bytes.status();
  auto state = ParseStoreState(*bytes);
  if (!state.ok()) return state.status().WithContext(path);
  return state;
}

// ---- Store ----------------------------------------------------------------------------------------------

Store::Store(Env* env, std::unique_ptr<Directory> held, std::unique_ptr<Directory> lists,
             std::unique_ptr<FileLock> lock)
    : env_(env), held_(std::move(held)), dir_(held_->path()), lists_(std::move(lists)), lock_(std::move(lock)) {}

std::string Store::Below(const std::string& rel) const {
  const std::string prefix = std::string(kListsDirName) + "/";
  if (rel.compare(0, prefix.size(), prefix) == 0) return JoinPath(lists_->path(), rel.substr(prefix.size()));
  return JoinPath(dir_, rel);
}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(Env* env, const std::string& named_dir, const StoreOptions& options) {
  URLGUARD_RETURN_IF_ERROR(CreateDataDir(env, named_dir, options.dir_mode));
  // From here on D is the directory the trust walk ends holding; `dir` names that inode, not the path.
  auto held = OpenTrustedDataDir(env, named_dir, DataDirAccess::kWrite);
  if (!held.ok()) return held.status();
  const std::string dir = (*held)->path();
  // Damage that would fail every later open: a FIFO, socket or directory where D/lock or D/lists belongs
  // (nothing but a regular file can hold the lock, so removing one takes no lock from anybody).
  std::vector<std::string> repaired;
  const std::string lock_path = JoinPath(dir, std::string(kLockFileName));
  bool removed = false;
  URLGUARD_RETURN_IF_ERROR(RemoveIfNotRegularFile(env, lock_path, &removed));
  if (removed) repaired.push_back("removed " + std::string(kLockFileName) + " (not a regular file)");
  auto lock = env->LockFile(lock_path);
  if (!lock.ok()) {
    if (lock.status().code() == StatusCode::kFailedPrecondition) {
      return Status::FailedPrecondition("another urlguard process is syncing this data directory: " + named_dir);
    }
    return lock.status();
  }
  const std::string lists_dir = JoinPath(dir, std::string(kListsDirName));
  if (auto info = env->Stat(lists_dir); info.ok() && !info->is_dir) {
    URLGUARD_RETURN_IF_ERROR(RemoveTree(env, lists_dir));
    repaired.push_back("removed " + std::string(kListsDirName) + " (not a directory)");
  }
  if (!env->FileExists(lists_dir)) {
    URLGUARD_RETURN_IF_ERROR(env->CreateDirs(lists_dir));
    URLGUARD_RETURN_IF_ERROR(env->SyncDir(dir));  // the new lists/ entry survives a power loss
  }
  auto lists = (*held)->OpenDirectoryAt(std::string(kListsDirName));  // O_NOFOLLOW
  if (!lists.ok()) return lists.status().WithContext("data directory " + named_dir);
  std::unique_ptr<Store> store(
      new Store(env, std::move(held).value(), std::move(lists).value(), std::move(lock).value()));
  store->warnings_ = std::move(repaired);
  URLGUARD_RETURN_IF_ERROR(NameHeldDataDir(store->Recover(), dir, named_dir));
  // Recovery's warnings name files the way the user knows them.
  for (std::string& w : store->warnings_) {
    w = NameHeldDataDir(Status::IoError(w), dir, named_dir).message();
  }
  return store;
}

namespace {

// Maps the file at `path` and checks that it is a valid snapshot (full checksum) of `list` at `version`
// whose state SHA-256 is `state_sha256`. On success fills *entries from its layers.
Status VerifySnapshotFile(Env* env, const std::string& path, std::string_view list, uint64_t version,
                          const Sha256Digest& state_sha256, std::array<uint64_t, kLayerKindCount>* entries) {
  auto mapped = env->MapReadOnly(path);
  if (!mapped.ok()) return mapped.status();
  const MappedFile& m = **mapped;
  auto view = SnapshotView::Open(m.data(), m.size(), /*verify_checksum=*/false);
  if (!view.ok()) return view.status();
  // The full SHA-256, as SnapshotView::VerifyChecksum computes it, but in pieces whose pages go back to the
  // kernel once hashed: verifying a 100 M-entry list must not make it resident (docs/performance.md).
  ReleaseMappedPages(m, 0, m.size());  // the index pages Open() read
  Sha256Hasher hasher;
  const size_t content = m.size() - 32;
  for (size_t off = 0; off < content; off += kVerifyChunkBytes) {
    const size_t n = std::min(kVerifyChunkBytes, content - off);
    hasher.Update(m.data() + off, n);
    ReleaseMappedPages(m, off, n);
  }
  if (hasher.Finish() != view->checksum()) {
    return Status::Corruption("snapshot: content checksum mismatch (corrupt file)");
  }
  if (view->list_name() != list) {
    return Status::Corruption("snapshot of list '" + std::string(view->list_name()) + "'");
  }
  if (view->version() != version) {
    return Status::Corruption("snapshot of version " + std::to_string(view->version()));
  }
  if (view->checksum() != state_sha256) {
    return Status::Corruption("state SHA-256 differs from the expected one");
  }
  if (entries != nullptr) {
    for (int k = 0; k < kLayerKindCount; ++k) {
      const LayerView* layer = view->layer(static_cast<LayerKind>(k));
      (*entries)[k] = layer != nullptr ? layer->entries : 0;
    }
  }
  return Status::Ok();
}

}  // namespace

Status Store::Recover() {
  const std::string current = JoinPath(dir_, std::string(kCurrentFileName));
  bool need_write = false;
  // A FIFO, socket, device or directory at D/current is damage like a bad checksum, but there is nothing to
  // set aside: it is removed (a link or directory tree without following anything) and every list fetched.
  bool removed = false;
  URLGUARD_RETURN_IF_ERROR(RemoveIfNotRegularFile(env_, current, &removed));
  if (removed) {
    uint64_t random = 0;
    env_->RandomBytes(&random, sizeof random);
    state_.generation = (random >> 2) | 1;
    need_write = true;
    warnings_.push_back("current: not a regular file; removed; starting with no list installed (every list is "
                        "fetched again, high-water marks lost)");
  }
  auto bytes = env_->ReadFile(current, kMaxCurrentBytes);
  if (!bytes.ok() && bytes.status().code() != StatusCode::kNotFound &&
      bytes.status().code() != StatusCode::kResourceExhausted) {
    return bytes.status();
  }
  if (bytes.ok() || bytes.status().code() == StatusCode::kResourceExhausted) {
    auto parsed = bytes.ok() ? ParseStoreState(*bytes) : Result<StoreState>(bytes.status());
    if (parsed.ok()) {
      state_ = std::move(parsed).value();
    } else {
      // Set it aside for a post-mortem, and start over: every list is fetched again.
      URLGUARD_RETURN_IF_ERROR(env_->RenameFile(current, current + std::string(kCorruptSuffix)));
      uint64_t random = 0;
      env_->RandomBytes(&random, sizeof random);
      state_ = StoreState();
      state_.generation = (random >> 2) | 1;
      need_write = true;
      warnings_.push_back(
          "current: " + parsed.status().ToString() + "; set aside as current" + std::string(kCorruptSuffix) +
          "; starting with no list installed (every list is fetched again, high-water marks lost)");
    }
  }

  // Every installed file must be there and intact, or its list is dropped (its high-water mark kept).
  StoreState next = state_;
  for (ListState& s : next.lists) {
    if (!s.installed.has_value()) continue;
    const InstalledList& in = *s.installed;
    Status ok =
        VerifySnapshotFile(env_, Below(in.file), in.list, in.version, in.state_sha256, nullptr);
    if (ok.ok()) continue;
    warnings_.push_back("list " + in.list + ": state file " + in.file + " is missing or corrupt (" +
                        ok.ToString() + "); dropped, the next sync fetches it again (high-water mark " +
                        std::to_string(s.high_water_version) + " kept)");
    s.installed.reset();
    need_write = true;
  }
  if (need_write) {
    ++next.generation;
    bool replaced = false;
    URLGUARD_RETURN_IF_ERROR(WriteState(next, &replaced));
  }

  // Leftovers of an interrupted Install(): temporary files and files no record names.
  if (env_->FileExists(current + std::string(kCurrentTmpSuffix))) {
    (void)env_->RemoveFile(current + std::string(kCurrentTmpSuffix));
  }
  const std::string lists_dir = lists_->path();
  auto names = env_->ListDir(lists_dir);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    const std::string sub = JoinPath(lists_dir, name);
    // Not a directory (a file, or a symlink, which is never followed: its target's files are not ours to
    // remove): nothing of ours.
    auto sub_info = env_->Stat(sub);
    auto files = sub_info.ok() && sub_info->is_dir ? env_->ListDir(sub)
                                                   : Result<std::vector<std::string>>(Status::NotFound(sub));
    if (!files.ok()) {
      if (RemoveTree(env_, sub).ok()) warnings_.push_back("removed stray file lists/" + name);
      continue;
    }
    const InstalledList* in = state_.FindInstalled(name);
    for (const std::string& f : *files) {
      const std::string rel = std::string(kListsDirName) + "/" + name + "/" + f;
      // Only a regular file belongs here: a directory at an install path would fail every later rename to it.
      bool removed = false;
      if (RemoveIfNotRegularFile(env_, JoinPath(sub, f), &removed).ok() && removed) {
        warnings_.push_back("removed " + rel + " (not a regular file)");
        continue;
      }
      if (in != nullptr && rel == in->file) continue;
      // *.tmp, and the spill files of a SnapshotWriter (*.tmp.unary, *.tmp.rem): an interrupted install.
      const bool temporary = EndsWith(f, kCurrentTmpSuffix) || f.find(".tmp.") != std::string::npos;
      if (env_->RemoveFile(JoinPath(sub, f)).ok() && !temporary) {
        warnings_.push_back("removed " + rel + " (not named by current)");
      }
    }
  }
  return Status::Ok();
}

Status Store::WriteState(const StoreState& next, bool* replaced) {
  *replaced = false;
  const std::string current = JoinPath(dir_, std::string(kCurrentFileName));
  const std::string tmp = current + std::string(kCurrentTmpSuffix);
  const std::string bytes = SerializeStoreState(next);
  Status s;
  {
    auto file = CreateTempFile(env_, tmp);
    if (!file.ok()) return file.status();
    s = (*file)->Append(bytes);
    if (s.ok()) s = (*file)->Sync();
    if (s.ok()) s = (*file)->Close();
  }
  if (s.ok()) s = env_->RenameFile(tmp, current);
  if (!s.ok()) {
    (void)env_->RemoveFile(tmp);
    return s;
  }
  *replaced = true;
  state_ = next;
  s = env_->SyncDir(dir_);
  if (!s.ok()) {
    return s.WithContext(
        "current replaced, but not yet durable (a power loss may bring back the previous state)");
  }
  return Status::Ok();
}

Status Store::Install(const InstalledList& meta, std::string_view snapshot_bytes) {
  return InstallWith(meta, [&](const std::string& path) -> Status {
    auto file = CreateTempFile(env_, path + std::string(kCurrentTmpSuffix));
    if (!file.ok()) return file.status();
    Status s = (*file)->Append(snapshot_bytes);
    if (s.ok()) s = (*file)->Sync();
    if (s.ok()) s = (*file)->Close();
    return s;
  });
}

Result<std::string> Store::ScratchPath(const std::string& list, std::string_view name) {
  if (!IsValidListName(list)) {
    return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: '" + list + "'");
  }
  const std::string list_dir = JoinPath(lists_->path(), list);
  URLGUARD_RETURN_IF_ERROR(env_->CreateDirs(list_dir));
  return JoinPath(list_dir, std::string(name) + std::string(kCurrentTmpSuffix) + ".scratch");
}

Status Store::InstallWith(const InstalledList& meta,
                          const std::function<Status(const std::string& path)>& write) {
  if (!IsValidListName(meta.list)) {
    return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: '" + meta.list + "'");
  }
  if (meta.version == 0) return Status::InvalidArgument("list " + meta.list + ": version 0");
  const ListState* prev = state_.Find(meta.list);
  if (prev != nullptr) {
    if (meta.version < prev->high_water_version) {
      return Status::FailedPrecondition("list " + meta.list + ": version " + std::to_string(meta.version) +
                                        " is below the high-water mark " +
                                        std::to_string(prev->high_water_version) + " (rollback refused)");
    }
    if (meta.version == prev->high_water_version &&
        meta.manifest_sha256 != prev->high_water_manifest_sha256) {
      return Status::FailedPrecondition("list " + meta.list + ": version " + std::to_string(meta.version) +
                                        " was installed from other manifest bytes (equivocation refused)");
    }
  } else if (state_.lists.size() >= kMaxStoreLists) {
    return Status::ResourceExhausted("the data directory already holds " + std::to_string(kMaxStoreLists) +
                                     " lists");
  }
  const std::string old_file = prev != nullptr && prev->installed.has_value() ? prev->installed->file : "";

  // 1. The snapshot file: tmp, fsync, verify what is on disk, rename, fsync its directory.
  // Through the held D/lists: neither a rename of D or a parent nor a link planted at D/lists redirects it.
  const std::string lists_dir = lists_->path();
  const std::string list_dir = JoinPath(lists_dir, meta.list);
  const std::string rel = InstalledFileName(meta.list, meta.version);
  const std::string path = Below(rel);
  const std::string tmp = path + std::string(kCurrentTmpSuffix);
  const std::string context = "installing " + rel;
  URLGUARD_RETURN_IF_ERROR(env_->CreateDirs(list_dir).WithContext(context));
  URLGUARD_RETURN_IF_ERROR(env_->SyncDir(lists_dir).WithContext(context));  // a new list directory is durable

  std::array<uint64_t, kLayerKindCount> entries{};
  Status s = write(path);
  if (s.ok()) s = VerifySnapshotFile(env_, tmp, meta.list, meta.version, meta.state_sha256, &entries);
  if (s.ok()) s = env_->RenameFile(tmp, path);
  if (!s.ok()) {
    (void)env_->RemoveFile(tmp);
    return s.WithContext(context);
  }
  // From here on a failure removes the new file, unless it is (under the same name) the one serving now.
  auto drop_new_file = [&]() {
    if (rel != old_file) (void)env_->RemoveFile(path);
  };
  s = env_->SyncDir(list_dir);
  if (!s.ok()) {
    drop_new_file();
    return s.WithContext(context);
  }

  // 2. The new D/current: the switch.
  StoreState next = state_;
  ++next.generation;
  auto it = std::lower_bound(next.lists.begin(), next.lists.end(), meta.list,
                             [](const ListState& x, const std::string& name) { return x.list < name; });
  if (it == next.lists.end() || it->list != meta.list) {
    it = next.lists.insert(it, ListState());
    it->list = meta.list;
  }
  it->high_water_version = meta.version;
  it->high_water_manifest_sha256 = meta.manifest_sha256;
  InstalledList in = meta;
  in.file = rel;
  in.entries = entries;
  it->installed = std::move(in);
  bool replaced = false;
  s = WriteState(next, &replaced);
  if (!s.ok()) {
    if (!replaced) drop_new_file();
    return s.WithContext(context);
  }

  // 3. The previous version's file: readers that still map it keep their mapping.
  if (!old_file.empty() && old_file != rel) (void)env_->RemoveFile(Below(old_file));
  return Status::Ok();
}

Status Store::ResetHighWater(const std::string& list, uint64_t max_version, int64_t not_before_unix,
                             bool* applied) {
  if (applied != nullptr) *applied = false;
  if (max_version == 0) return Status::InvalidArgument("high-water reset of " + list + " to 0");
  const ListState* cur = state_.Find(list);
  if (cur == nullptr || cur->high_water_version <= max_version) return Status::Ok();
  if (cur->installed.has_value() && cur->installed->version == cur->high_water_version &&
      cur->installed->created_unix >= not_before_unix) {
    return Status::Ok();  // the high-water manifest came after the statement: the genuine publisher's
  }
  StoreState next = state_;
  ++next.generation;
  for (ListState& l : next.lists) {
    if (l.list != list) continue;
    l.high_water_version = max_version;
    l.high_water_manifest_sha256 = Sha256Digest{};
    if (l.installed.has_value() && l.installed->version > max_version) l.installed.reset();
    if (l.installed.has_value() && l.installed->version == max_version) {
      l.high_water_manifest_sha256 = l.installed->manifest_sha256;
    }
  }
  bool replaced = false;
  URLGUARD_RETURN_IF_ERROR(WriteState(next, &replaced).WithContext("high-water reset of " + list));
  if (applied != nullptr) *applied = true;
  return Status::Ok();
}

Status Store::Remove(const std::string& list, bool* removed) {
  if (removed != nullptr) *removed = false;
  const ListState* cur = state_.Find(list);
  if (cur == nullptr) return Status::Ok();
  const std::string old_file = cur->installed.has_value() ? cur->installed->file : "";
  StoreState next = state_;
  ++next.generation;
  next.lists.erase(std::remove_if(next.lists.begin(), next.lists.end(),
                                  [&](const ListState& l) { return l.list == list; }),
                   next.lists.end());
  bool replaced = false;
  Status s = WriteState(next, &replaced);
  if (replaced && removed != nullptr) *removed = true;
  URLGUARD_RETURN_IF_ERROR(s.WithContext("removing list " + list));
  // Readers that still map the file keep their mapping.
  if (!old_file.empty()) (void)env_->RemoveFile(Below(old_file));
  return Status::Ok();
}

}  // namespace urlguard
