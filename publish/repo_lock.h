// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The repository's lock files (docs/repository-layout.md, "Locks"): which file guards what, and a wait for a lock
// that another publisher holds for a short step. Publishers of different lists run side by side on one
// repository; each repository-wide file has its own lock, taken only around the step that writes it:
//
//   REPO/private/lists/LIST/publish.lock   one publisher per list (refused at once when held: a second run of one
//                                          list has nothing to add)
//   REPO/private/index.lock                the list index (public/v1/lists/index.json + index.sig) is rebuilt
//                                          from every list's manifest and written under it (waited for)
//   REPO/private/seen.lock                 private/seen.bin is loaded, updated and saved under it (waited for)
//   REPO/private/feeds/update.lock         one `urlguard-publish update` run (publish/feed_update.h; refused at once)
//
// Every lock is Env::LockFile's (an open-file-description lock: released when the holder exits or is killed).
// Their paths are made where every repository name is, format/repository_files.h (ListPublishLockPath,
// IndexLockPath, SeenLockPath, FeedUpdateLockPath): a lock file is a repository file like any other.
//
// Thread safety: the functions share no state.
#ifndef URLGUARD_PUBLISH_REPO_LOCK_H_
#define URLGUARD_PUBLISH_REPO_LOCK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "platform/env.h"
#include "urlguard/status.h"

namespace urlguard {

// How often LockFileWaiting tries again while the lock is held.
constexpr int64_t kLockRetryMillis = 5;
// How long a publisher waits for the index lock (a rebuild reads a few hundred manifests at most) and for the seen
// filter's lock (held while another list's run records its keys: seconds, minutes for 100 M entries).
constexpr int64_t kIndexLockWaitMillis = 60 * 1000;
constexpr int64_t kSeenLockWaitMillis = 30 * 60 * 1000;

// Takes the exclusive lock on `path` (Env::LockFile), trying again every kLockRetryMillis while another holder has
// it, for at most `wait_millis` by the Env's monotonic clock. kFailedPrecondition when still held then (naming the
// path); Env::LockFile's other errors at once.
Result<std::unique_ptr<FileLock>> LockFileWaiting(Env* env, const std::string& path, int64_t wait_millis);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_REPO_LOCK_H_
