// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The publishing loop's spool (RunPublishLoop, include/urlguard/publish.h; docs/runbook-publishers.md, "A minute
// cadence"): every name in the spool is made and parsed here, plus the two pieces the loop is built from and a
// test drives alone (the committed version read from the public manifest, the after-commit thread).
//
// Why a marker file and not a record with content: the claim needs exactly one number (the version the claimed
// batch is to become), and a file name carries it with nothing to parse but decimal digits: no byte format to
// version, and the marker is created by an atomic create + directory fsync like every other step of the claim.
//
// Thread safety: the functions are pure or go through the Env; AfterCommitThread as documented on it.
#ifndef URLGUARD_PUBLISH_PUBLISH_LOOP_H_
#define URLGUARD_PUBLISH_PUBLISH_LOOP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "core/thread_annotations.h"
#include "platform/env.h"
#include "urlguard/status.h"

namespace urlguard {

// SPOOL/incoming/, SPOOL/claimed/, SPOOL/done/, SPOOL/rejected/, SPOOL/loop.lock.
std::string SpoolIncomingDir(const std::string& spool);
std::string SpoolClaimedDir(const std::string& spool);
std::string SpoolDoneDir(const std::string& spool);
std::string SpoolRejectedDir(const std::string& spool);
std::string SpoolLockPath(const std::string& spool);
// SPOOL/refresh.remove: the empty change file of a version without change (kept, reused).
std::string SpoolRefreshFilePath(const std::string& spool);

// True for a change file an ingestor finished: "NAME.add" or "NAME.remove" with a non-empty NAME not starting
// with '.' (a dot file is someone's temporary).
bool IsSpoolChangeFileName(std::string_view name);
// True for "NAME.add" (a change file that adds); false for "NAME.remove".
bool IsSpoolAddFileName(std::string_view name);

// The claim marker in SPOOL/claimed/: "target-V", V the version the claimed batch becomes (decimal, no leading
// zero, 1 .. 2^64-1).
std::string ClaimMarkerName(uint64_t target_version);
// V of a marker name; nullopt for any other name.
std::optional<uint64_t> ParseClaimMarkerName(std::string_view name);

// A name for `name` that no file in `dir` has yet: `name` itself, or "STEM-2.EXT", "STEM-3.EXT", ... (two
// ingestors may pick one name on different days; done/ keeps both).
std::string UnusedNameIn(Env* env, const std::string& dir, const std::string& name);

// The list's committed version as its public manifest says (the commit point of a file-state publication).
struct ManifestVersion {
  uint64_t version = 0;      // 0: nothing published yet
  int64_t created_unix = 0;
};
// The version and creation time of manifest bytes: ParseManifest's, or, for a manifest it refuses (e.g. a newer
// format), the canonical top-level "version" and "created_unix" members (the publisher wrote it canonically,
// docs/manifest-format.md §3: top-level members alone are indented by exactly two spaces). kCorruption (or
// ParseManifest's kResourceExhausted) when neither gives a version >= 1. Never reads past `bytes`.
Result<ManifestVersion> ParseCommittedVersion(std::string_view bytes);
// Reads REPO/public/v1/lists/LIST/manifest.json (at most kMaxManifestBytes) and parses it as above. No manifest:
// version 0. Read errors name the file.
Result<ManifestVersion> ReadCommittedVersion(Env* env, const std::string& repo_dir, const std::string& list);

// The loop's cadence: its cycles start at the committed version's created_unix + k*every, so that a restarted
// loop keeps the cadence clients place their polls on (docs/sync-protocol.md §2). Seconds from now_unix to the
// first such time at or after it: 0 .. every-1, also for a created_unix after now (a clock that went back). 0 for
// times outside [0, 2^40) (no clock says so) or every < 1.
int64_t SecondsToCadenceSlot(int64_t now_unix, int64_t created_unix, int64_t every_seconds);

// Runs `fn` on a thread of its own each time Trigger() is called; Trigger() while `fn` runs makes it run once
// more afterwards (triggers coalesce: maintenance such as compaction catches up with every commit at once).
// Destruction waits for a run in progress and a pending one. Trigger() from one thread (the loop's).
class AfterCommitThread {
 public:
  explicit AfterCommitThread(std::function<void()> fn);
  ~AfterCommitThread();
  AfterCommitThread(const AfterCommitThread&) = delete;
  AfterCommitThread& operator=(const AfterCommitThread&) = delete;

  void Trigger();
  uint64_t runs() const;  // completed runs of fn

 private:
  void Run();

  std::function<void()> fn_;
  mutable Mutex mu_;
  CondVar cv_;
  bool pending_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  uint64_t runs_ GUARDED_BY(mu_) = 0;
  std::thread thread_;  // last: starts after the members it uses
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_PUBLISH_LOOP_H_
