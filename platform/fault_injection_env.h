// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// FaultInjectionEnv: an Env over real files (any target Env) that fails on purpose, for crash-safety and
// error-path tests. The tests share this one instead of each hand-rolling its own.
//
// Every mutating call is one numbered step, counted from 1 since construction: NewWritableFile and
// NewExclusiveFile ("create"), WritableFile::Append/Sync/Close, RenameFile, RemoveFile, CreateDirs,
// RemoveDir, SyncDir. Reads, clocks and the rest are forwarded untouched (override them in a subclass).
// A step can be made to fail, without any effect, in four ways:
//   - FailStep(n, status): exactly step n fails with `status`.
//   - CrashAtStep(n): step n and every later one fail, as if the process had died before step n.
//   - FailOp(op, nth, status): the nth call of one kind (kRename, kAppend...) from now on fails; nth 0 makes
//     every call of that kind fail until ClearFaults().
//   - SetDiskSpace(bytes): appends may write `bytes` more in total; the append that does not fit writes
//     the part that fits (a short write) and fails with kResourceExhausted, as on a full disk.
// PowerLoss() then throws away what the POSIX durability model does not guarantee: file data written but
// not fsynced since (the file keeps only its first half), and directory changes (renames, removals, new
// directories) not followed by an fsync of their directory (undone, newest first).
//
// Thread safety: every method may be called from any thread (one mutex guards the bookkeeping); PowerLoss()
// must not race with writes.
#ifndef URLGUARD_PLATFORM_FAULT_INJECTION_ENV_H_
#define URLGUARD_PLATFORM_FAULT_INJECTION_ENV_H_

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/thread_annotations.h"
#include "urlguard/env.h"

namespace urlguard {

// The kinds of mutating calls, for FailOp().
enum class FaultOp : int {
  kCreate = 0,  // NewWritableFile, NewExclusiveFile
  kAppend,
  kSync,  // WritableFile::Sync
  kClose,
  kRename,
  kRemove,  // RemoveFile
  kCreateDirs,
  kRemoveDir,
  kSyncDir,
};
inline constexpr int kFaultOpCount = 9;

// "create", "append", ...: the word each step of that kind starts with in log().
const char* FaultOpName(FaultOp op);

class FaultInjectionEnv : public EnvWrapper {
 public:
  explicit FaultInjectionEnv(Env* target = Env::Default());
  ~FaultInjectionEnv() override;

  // Steps taken so far, and one line per step ("3 rename /d/a.tmp -> /d/a").
  int steps() const;
  std::vector<std::string> log() const;

  // Makes exactly step `step` fail with `status` (its message gets "injected at <step>" in front).
  void FailStep(int step, Status status);
  // Makes step `step` and every later one fail with kIoError ("simulated crash at ...").
  void CrashAtStep(int step);
  // Makes the `nth` call of kind `op` from now on (1: the next one) fail with `status`; `nth` 0: every
  // call of that kind. An ok `status` removes the rule for `op`.
  void FailOp(FaultOp op, int nth, Status status);
  // FailOp(FaultOp::kAppend, 0, status): every write fails, e.g. with kResourceExhausted (disk full).
  void FailEveryAppend(Status status) { FailOp(FaultOp::kAppend, 0, std::move(status)); }
  // Limits what appends may still write, in total, to `bytes` (nullopt: no limit).
  void SetDiskSpace(std::optional<uint64_t> bytes);
  // Removes every FailStep, CrashAtStep, FailOp and SetDiskSpace rule. Steps keep counting.
  void ClearFaults();

  // Undoes what was not made durable (see the top of this file), then forgets it.
  void PowerLoss();

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool private_file) override;
  Result<std::unique_ptr<WritableFile>> NewExclusiveFile(const std::string& path, bool private_file) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status RemoveFile(const std::string& path) override;
  Status CreateDirs(const std::string& path, bool private_dir) override;
  Status RemoveDir(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;

 private:
  class File;
  struct Rename {
    std::string from, to;
    std::optional<std::string> old_to;  // what `to` held before, if anything
  };
  struct Removed {
    std::string path, content;
  };
  struct OpRule {
    int countdown = -1;  // -1: no rule; 0: every call; n: the nth call from now
    Status status;
  };

  // Counts one step of kind `op`; the Status the call must return instead of doing its work, or ok.
  Status Step(FaultOp op, const std::string& what) EXCLUDES(mu_);
  // How many of `want` bytes an append may write now; fills `*full` when that is fewer than `want`.
  size_t TakeDiskSpace(size_t want, Status* full) EXCLUDES(mu_);
  void MarkUnsynced(const std::string& path) EXCLUDES(mu_);
  void MarkSynced(const std::string& path) EXCLUDES(mu_);
  Result<std::unique_ptr<WritableFile>> Wrap(Result<std::unique_ptr<WritableFile>> file,
                                             const std::string& path);
  std::optional<std::string> ReadAll(const std::string& path);
  void WriteAll(const std::string& path, std::string_view data);
  void RemoveTree(const std::string& path);

  mutable Mutex mu_;
  int steps_ GUARDED_BY(mu_) = 0;
  std::vector<std::string> log_ GUARDED_BY(mu_);
  int fail_step_ GUARDED_BY(mu_) = 0;
  Status fail_status_ GUARDED_BY(mu_);
  int crash_step_ GUARDED_BY(mu_) = 0;
  std::array<OpRule, kFaultOpCount> op_rules_ GUARDED_BY(mu_);
  std::optional<uint64_t> disk_space_ GUARDED_BY(mu_);
  std::set<std::string> unsynced_ GUARDED_BY(mu_);  // files with data not fsynced
  std::vector<Rename> renames_ GUARDED_BY(mu_);     // not yet made durable by SyncDir
  std::vector<Removed> removes_ GUARDED_BY(mu_);
  std::vector<std::string> new_dirs_ GUARDED_BY(mu_);
};

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_FAULT_INJECTION_ENV_H_
