// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::SyncEngine — the single writer of a data directory: it downloads signed list updates (a diff when
// the server has one from the installed version, else the full snapshot), verifies them, installs them
// atomically, and keeps each list's schedule (poll every ~30 minutes with jitter, or at the publisher's cadence when
// the manifest's minimum wait is shorter, back off on failures, honour Retry-After) in the data directory so it survives restarts. See docs/architecture.md
// and docs/data-dir.md.
//
//   urlguard::SyncOptions o;
//   o.data_dir = "/var/lib/urlguard";
//   o.server_url = "https://lists.example.net";
//   o.trusted_keys = *urlguard::TrustedKeys::LoadFiles({"publisher.pub.pem"});
//   auto engine = urlguard::SyncEngine::Open(o);          // takes the directory's lock
//   for (;;) {
//     for (const urlguard::SyncReport& r : (*engine)->RunDue(/*force=*/false)) Log(urlguard::RenderSyncReportText(r));
//     SleepUntil((*engine)->NextDueUnix());
//   }
//
// Readers (urlguard::Client, in any process) see each installed generation without waiting for the writer.
//
// Thread safety: a SyncEngine is driven by one thread at a time (not thread-safe). Different processes are kept
// apart by the data directory's lock: a second Open fails while one engine lives.
#ifndef URLGUARD_SYNC_H_
#define URLGUARD_SYNC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "urlguard/export.h"
#include "urlguard/keys.h"
#include "urlguard/status.h"

namespace urlguard {

class Env;

// What a sync attempt of one list did. Callers branch on this; SyncResultName() is for output only.
enum class SyncResult : uint8_t {
  kNone = 0,         // no attempt yet (ListStatus only)
  kOk = 1,           // the last attempt succeeded, updated or already current (ListStatus only: the persisted
                     // schedule does not keep which of the two it was)
  kUpdated = 2,      // a new version was verified and installed
  kUpToDate = 3,     // the server's manifest names the installed version
  kNotModified = 4,  // the server answered 304 Not Modified to the conditional manifest request
  kFailed = 5,       // the attempt failed (SyncReport::error / ListStatus::last_sync_error says why)
  kUnsubscribed = 6,  // SyncReport only: a newer signed list index no longer names the list; it was removed
};
constexpr int kSyncResultCount = 7;  // the values above: for arrays indexed by SyncResult
// "none", "ok", "updated", "up_to_date", "not_modified", "failed", "unsubscribed". Never null.
URLGUARD_EXPORT const char* SyncResultName(SyncResult result);

// The outcome of one sync attempt of one list.
struct SyncReport {
  std::string list;                         // "" for the list discovery step (SyncOptions::lists), always kFailed
  SyncResult result = SyncResult::kFailed;  // kUpdated, kUpToDate, kNotModified, kFailed or kUnsubscribed
  uint64_t from_version = 0;                // installed before (0: none)
  uint64_t to_version = 0;                  // installed after (kUpdated), or the server's current version
  bool used_diff = false;                   // kUpdated by applying a diff (else a full snapshot)
  uint64_t bytes = 0;                       // bytes downloaded (compressed, on the wire)
  std::string error;                        // kFailed: the Status text, e.g. "permission_denied: untrusted key"
  // The list discovery step failed because the server's list index names more lists than a client keeps (256,
  // docs/list-index.md §4): the index is refused whole, the subscriptions stay as they were.
  bool over_list_limit = false;
  // Manifest format 2 (docs/manifest-format.md §8.3): the range diffs applied (1 or 2; 0 for a format 1
  // pass) and the bytes of the diff files downloaded. With used_diff false and diffs 1, the checkpoint snapshot
  // was downloaded and the diff from the checkpoint applied to it.
  uint32_t diffs = 0;
  uint64_t diff_bytes = 0;
};

struct SyncOptions {
  std::string data_dir;              // required; created (with parents; itself 0700) when create_data_dir.
                                     // Refused when another user owns it or its group or others may write it.
  std::string server_url;            // required: the update server's base URL (http or https)
  TrustedKeys trusted_keys;          // required (non-empty): who may sign lists
  // Lists to subscribe to and keep current: recorded in data_dir (docs/data-dir.md §8) before any download, so
  // one whose first sync fails stays subscribed, makes every Client verdict stale and is retried by every pass.
  // Empty: every list subscribed in data_dir; when none is, or they came from it, every list the server's signed
  // list index names (docs/list-index.md), fetched and verified with trusted_keys by every RunDue: a list it adds
  // is subscribed, a list it drops is unsubscribed and removed (a kUnsubscribed report). A failed discovery is one
  // kFailed report with an empty `list`, retried with the failure backoff; the subscribed lists still run.
  std::vector<std::string> lists;
  std::string ca_bundle;             // "" = the system's CA store
  std::string proxy;                 // "" = libcurl's default: http_proxy, https_proxy, ALL_PROXY, no_proxy
                                     // (docs/sync-protocol.md); e.g. "http://proxy.example:3128"
  bool create_data_dir = false;      // create a missing data_dir
  bool group_readable_data_dir = false;  // a new data_dir is 0750 (its group may read) instead of 0700
  Env* env = nullptr;                // file system, clock and randomness; nullptr = the process default. Not owned;
                                     // must outlive the engine.
};

class URLGUARD_EXPORT SyncEngine {
 public:
  // Opens (and recovers after a crash) the data directory and takes its single-writer lock for the engine's
  // lifetime. No network access (list discovery waits for RunDue). Failures: kInvalidArgument without a server
  // URL or a trusted key, or for an invalid list name; kResourceExhausted when `lists` and the lists already
  // subscribed are more than 256; kFailedPrecondition "another urlguard process ..." when
  // the lock is held; kIoError / kCorruption for a directory that cannot be read or repaired. Recoverable
  // oddities (a damaged schedule file, leftover temporary files) are not failures: see warnings().
  static Result<std::unique_ptr<SyncEngine>> Open(const SyncOptions& options);
  ~SyncEngine();  // releases the lock
  SyncEngine(const SyncEngine&) = delete;
  SyncEngine& operator=(const SyncEngine&) = delete;

  // Runs one attempt for every list whose next attempt is due now (every list when `force`), in list-name order,
  // then saves the schedule. Per-list failures are reports (kFailed), never a Status: the engine stays usable and
  // backs the failing list off. Blocks for the downloads (each bounded by its timeouts and size caps).
  std::vector<SyncReport> RunDue(bool force);
  // The same at the given clock (unix seconds): for tests and callers that drive time themselves.
  std::vector<SyncReport> RunDueAt(int64_t now_unix, bool force);

  // The earliest next attempt over the subscribed lists (unix seconds).
  int64_t NextDueUnix() const;
  // The subscribed lists, sorted by name.
  std::vector<std::string> lists() const;
  // Recoverable problems met so far (oldest first), one human-readable line each.
  const std::vector<std::string>& warnings() const;

 private:
  struct Impl;
  explicit SyncEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlguard

#endif  // URLGUARD_SYNC_H_
