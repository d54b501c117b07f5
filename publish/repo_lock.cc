// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/repo_lock.h"

#include <chrono>
#include <thread>

namespace urlguard {

Result<std::unique_ptr<FileLock>> LockFileWaiting(Env* env, const std::string& path, int64_t wait_millis) {
  const uint64_t deadline = env->NowMonotonicNanos() + static_cast<uint64_t>(wait_millis) * 1000000u;
  for (;;) {
    auto lock = env->LockFile(path);
    if (lock.ok() || lock.status().code() != StatusCode::kFailedPrecondition) return lock;
    if (env->NowMonotonicNanos() >= deadline) {
      return Status::FailedPrecondition(path + ": still locked by another publisher after " +
                                        std::to_string(wait_millis / 1000) + " s");
    }
    // The Env's clock decides when to give up; this wait only decides when to look again (docs/architecture.md §1).
    std::this_thread::sleep_for(std::chrono::milliseconds(kLockRetryMillis));
  }
}

}  // namespace urlguard
