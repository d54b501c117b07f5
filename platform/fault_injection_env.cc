// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "platform/fault_injection_env.h"

#include <algorithm>
#include <limits>

#include "platform/env.h"

namespace urlguard {

const char* FaultOpName(FaultOp op) {
  switch (op) {
    case FaultOp::kCreate:
      return "create";
    case FaultOp::kAppend:
      return "append";
    case FaultOp::kSync:
      return "sync";
    case FaultOp::kClose:
      return "close";
    case FaultOp::kRename:
      return "rename";
    case FaultOp::kRemove:
      return "remove";
    case FaultOp::kCreateDirs:
      return "mkdir";
    case FaultOp::kRemoveDir:
      return "rmdir";
    case FaultOp::kSyncDir:
      return "syncdir";
  }
  return "?";
}

class FaultInjectionEnv::File final : public WritableFile {
 public:
  File(FaultInjectionEnv* env, std::unique_ptr<WritableFile> base, std::string path)
      : env_(env), base_(std::move(base)), path_(std::move(path)) {}

  Status Append(std::string_view data) override {
    URLGUARD_RETURN_IF_ERROR(env_->Step(FaultOp::kAppend, "append " + path_));
    Status full;
    const size_t n = env_->TakeDiskSpace(data.size(), &full);
    env_->MarkUnsynced(path_);
    URLGUARD_RETURN_IF_ERROR(base_->Append(data.substr(0, n)));
    return full;
  }
  Status Sync() override {
    URLGUARD_RETURN_IF_ERROR(env_->Step(FaultOp::kSync, "sync " + path_));
    URLGUARD_RETURN_IF_ERROR(base_->Sync());
    env_->MarkSynced(path_);
    return Status::Ok();
  }
  Status Close() override {
    URLGUARD_RETURN_IF_ERROR(env_->Step(FaultOp::kClose, "close " + path_));
    return base_->Close();
  }

 private:
  FaultInjectionEnv* env_;
  std::unique_ptr<WritableFile> base_;
  std::string path_;
};

FaultInjectionEnv::FaultInjectionEnv(Env* target) : EnvWrapper(target) {}
FaultInjectionEnv::~FaultInjectionEnv() = default;

int FaultInjectionEnv::steps() const {
  MutexLock l(&mu_);
  return steps_;
}

std::vector<std::string> FaultInjectionEnv::log() const {
  MutexLock l(&mu_);
  return log_;
}

void FaultInjectionEnv::FailStep(int step, Status status) {
  MutexLock l(&mu_);
  fail_step_ = step;
  fail_status_ = std::move(status);
}

void FaultInjectionEnv::CrashAtStep(int step) {
  MutexLock l(&mu_);
  crash_step_ = step;
}

void FaultInjectionEnv::FailOp(FaultOp op, int nth, Status status) {
  MutexLock l(&mu_);
  OpRule& rule = op_rules_[static_cast<size_t>(op)];
  if (status.ok() || nth < 0) {
    rule = OpRule{};
    return;
  }
  rule.countdown = nth;
  rule.status = std::move(status);
}

void FaultInjectionEnv::SetDiskSpace(std::optional<uint64_t> bytes) {
  MutexLock l(&mu_);
  disk_space_ = bytes;
}

void FaultInjectionEnv::ClearFaults() {
  MutexLock l(&mu_);
  fail_step_ = 0;
  fail_status_ = Status::Ok();
  crash_step_ = 0;
  op_rules_ = {};
  disk_space_.reset();
}

Status FaultInjectionEnv::Step(FaultOp op, const std::string& what) {
  MutexLock l(&mu_);
  ++steps_;
  log_.push_back(std::to_string(steps_) + " " + what);
  if (crash_step_ > 0 && steps_ >= crash_step_) return Status::IoError("simulated crash at " + what);
  if (steps_ == fail_step_) return fail_status_.WithContext("injected at " + what);
  OpRule& rule = op_rules_[static_cast<size_t>(op)];
  if (rule.countdown == 0) return rule.status;
  if (rule.countdown > 0 && --rule.countdown == 0) {
    Status s = std::move(rule.status);
    rule = OpRule{};
    return s;
  }
  return Status::Ok();
}

size_t FaultInjectionEnv::TakeDiskSpace(size_t want, Status* full) {
  MutexLock l(&mu_);
  if (!disk_space_.has_value()) return want;
  const uint64_t n = std::min<uint64_t>(want, *disk_space_);
  *disk_space_ -= n;
  if (n < want) *full = Status::ResourceExhausted("write: No space left on device (injected)");
  return static_cast<size_t>(n);
}

void FaultInjectionEnv::MarkUnsynced(const std::string& path) {
  MutexLock l(&mu_);
  unsynced_.insert(path);
}

void FaultInjectionEnv::MarkSynced(const std::string& path) {
  MutexLock l(&mu_);
  unsynced_.erase(path);
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::Wrap(Result<std::unique_ptr<WritableFile>> file,
                                                              const std::string& path) {
  if (!file.ok()) return file.status();
  MarkUnsynced(path);  // created or truncated: not durable yet
  return std::unique_ptr<WritableFile>(new File(this, std::move(file).value(), path));
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewWritableFile(const std::string& path,
                                                                         bool private_file) {
  URLGUARD_RETURN_IF_ERROR(Step(FaultOp::kCreate, "create " + path));
  return Wrap(target()->NewWritableFile(path, private_file), path);
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewExclusiveFile(const std::string& path,
                                                                          bool private_file) {
  URLGUARD_RETURN_IF_ERROR(Step(FaultOp::kCreate, "create " + path));
  return Wrap(target()->NewExclusiveFile(path, private_file), path);
}

Status FaultInjectionEnv::RenameFile(const std::string& from, const std::string& to) {
  URLGUARD_RETURN_IF_ERROR(Step(FaultOp::kRename, "rename " + from + " -> " + to));
  Rename r{from, to, ReadAll(to)};
  URLGUARD_RETURN_IF_ERROR(target()->RenameFile(from, to));
  MutexLock l(&mu_);
  renames_.push_back(std::move(r));
  if (unsynced_.erase(from) > 0) {
    unsynced_.insert(to);
  } else {
    unsynced_.erase(to);
  }
  return Status::Ok();
}

Status FaultInjectionEnv::RemoveFile(const std::string& path) {
  URLGUARD_RETURN_IF_ERROR(Step(FaultOp::kRemove, "remove " + path));
  std::string content = ReadAll(path).value_or("");
  URLGUARD_RETURN_IF_ERROR(target()->RemoveFile(path));
  MutexLock l(&mu_);
  removes_.push_back({path, std::move(content)});
  unsynced_.erase(path);
  return Status::Ok();
}

Status FaultInjectionEnv::CreateDirs(const std::string& path, bool private_dir) {
  URLGUARD_RETURN_IF_ERROR(Step(FaultOp::kCreateDirs, "mkdir " + path));
  std::vector<std::string> created;  // innermost first
  for (std::string p = path; !p.empty() && p != "." && p != "/" && !target()->FileExists(p); p = DirName(p)) {
    created.push_back(p);
  }
  URLGUARD_RETURN_IF_ERROR(target()->CreateDirs(path, private_dir));
  MutexLock l(&mu_);
  for (auto it = created.rbegin(); it != created.rend(); ++it) new_dirs_.push_back(*it);
  return Status::Ok();
}

Status FaultInjectionEnv::RemoveDir(const std::string& path) {
  URLGUARD_RETURN_IF_ERROR(Step(FaultOp::kRemoveDir, "rmdir " + path));
  return target()->RemoveDir(path);  // not undone by PowerLoss(): nothing in urlguard relies on it
}

Status FaultInjectionEnv::SyncDir(const std::string& dir) {
  URLGUARD_RETURN_IF_ERROR(Step(FaultOp::kSyncDir, "syncdir " + dir));
  URLGUARD_RETURN_IF_ERROR(target()->SyncDir(dir));
  MutexLock l(&mu_);
  std::erase_if(renames_, [&](const Rename& r) { return DirName(r.to) == dir; });
  std::erase_if(removes_, [&](const Removed& r) { return DirName(r.path) == dir; });
  std::erase_if(new_dirs_, [&](const std::string& d) { return DirName(d) == dir; });
  return Status::Ok();
}

void FaultInjectionEnv::PowerLoss() {
  std::set<std::string> unsynced;
  std::vector<Rename> renames;
  std::vector<Removed> removes;
  std::vector<std::string> new_dirs;
  {
    MutexLock l(&mu_);
    unsynced.swap(unsynced_);
    renames.swap(renames_);
    removes.swap(removes_);
    new_dirs.swap(new_dirs_);
  }
  for (const std::string& path : unsynced) {
    std::optional<std::string> data = ReadAll(path);
    if (data.has_value()) WriteAll(path, std::string_view(*data).substr(0, data->size() / 2));
  }
  for (auto it = renames.rbegin(); it != renames.rend(); ++it) {
    std::string moved = ReadAll(it->to).value_or("");
    if (it->old_to.has_value()) {
      WriteAll(it->to, *it->old_to);
    } else {
      (void)target()->RemoveFile(it->to);
    }
    WriteAll(it->from, moved);
  }
  for (auto it = removes.rbegin(); it != removes.rend(); ++it) WriteAll(it->path, it->content);
  for (auto it = new_dirs.rbegin(); it != new_dirs.rend(); ++it) RemoveTree(*it);
}

// The helpers below bypass the fault rules and the step count: they stand for the disk itself.

std::optional<std::string> FaultInjectionEnv::ReadAll(const std::string& path) {
  auto data = target()->ReadFile(path, std::numeric_limits<size_t>::max());
  if (!data.ok()) return std::nullopt;
  return std::move(data).value();
}

void FaultInjectionEnv::WriteAll(const std::string& path, std::string_view data) {
  auto file = target()->NewWritableFile(path, false);
  if (!file.ok()) return;
  (void)(*file)->Append(data);
  (void)(*file)->Close();
}

void FaultInjectionEnv::RemoveTree(const std::string& path) {
  auto info = target()->Stat(path);
  if (!info.ok()) return;
  if (info->is_dir) {
    auto names = target()->ListDir(path);
    if (names.ok()) {
      for (const std::string& name : *names) RemoveTree(JoinPath(path, name));
    }
    (void)target()->RemoveDir(path);
  } else {
    (void)target()->RemoveFile(path);
  }
}

}  // namespace urlguard
