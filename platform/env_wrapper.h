// Copyright urlguard authors.
//
// EnvWrapper: an Env that forwards every call to a target Env. Derive from it and override only what a
// test (or an embedder) wants to change, e.g. a clock the test moves or a rename that fails:
//
//   class SlowClockEnv : public EnvWrapper {
//    public:
//     SlowClockEnv() : EnvWrapper(Env::Default()) {}
//     uint64_t NowMonotonicNanos() override { return nanos.load(); }
//     std::atomic<uint64_t> nanos{0};
//   };
//
// When Env gains a method, add its forwarder here: every other Env built on this one keeps compiling.
//
// Thread safety: as safe as the target; overrides must add their own locking.
#ifndef URLGUARD_PLATFORM_ENV_WRAPPER_H_
#define URLGUARD_PLATFORM_ENV_WRAPPER_H_

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/env.h"

namespace urlguard {

class EnvWrapper : public Env {
 public:
  // Forwards to `target`, which is not owned and must outlive this object.
  explicit EnvWrapper(Env* target) : target_(target) { assert(target != nullptr); }

  Env* target() const { return target_; }

  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return target_->ReadFile(path, max_bytes);
  }
  Result<std::unique_ptr<MappedFile>> MapReadOnly(const std::string& path) override {
    return target_->MapReadOnly(path);
  }
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool private_file) override {
    return target_->NewWritableFile(path, private_file);
  }
  Result<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path,
                                                         bool private_file) override {
    return target_->NewExclusiveFile(path, private_file);
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    return target_->RenameFile(from, to);
  }
  Status RemoveFile(const std::string& path) override { return target_->RemoveFile(path); }
  Status CreateDirs(const std::string& path, bool private_dir) override {
    return target_->CreateDirs(path, private_dir);
  }
  Status RemoveDir(const std::string& path) override { return target_->RemoveDir(path); }
  Status SyncDir(const std::string& dir) override { return target_->SyncDir(dir); }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override { return target_->ListDir(dir); }
  bool FileExists(const std::string& path) override { return target_->FileExists(path); }
  Result<FileInfo> Stat(const std::string& path) override { return target_->Stat(path); }
  Result<std::string> RealPath(const std::string& path) override { return target_->RealPath(path); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return target_->LockFile(path);
  }
  int64_t NowUnixSeconds() override { return target_->NowUnixSeconds(); }
  uint64_t NowMonotonicNanos() override { return target_->NowMonotonicNanos(); }
  void RandomBytes(void* out, size_t size) override { target_->RandomBytes(out, size); }
  std::optional<std::string> GetEnvVar(const std::string& name) override { return target_->GetEnvVar(name); }
  Status NotifyServiceManager(std::string_view state) override {
    return target_->NotifyServiceManager(state);
  }
  Result<std::unique_ptr<SignalSet>> WatchSignals(const std::vector<int>& signal_numbers) override {
    return target_->WatchSignals(signal_numbers);
  }

 private:
  Env* const target_;
};

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_ENV_WRAPPER_H_
