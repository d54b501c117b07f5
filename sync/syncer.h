// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Syncer: the single writer of a data directory. It holds the directory's lock (through Store) for its whole
// life, and runs sync passes (sync/updater.h) for each subscribed list when the schedule (sync/scheduler.h) says
// they are due, persisting the schedule in D/sync-state.json so it survives restarts.
//
// Subscriptions are state (sync/subscriptions.h): the lists given (SyncerOptions::lists) are recorded in
// D/subscriptions at Open, the lists of the server's signed list index when a pass fetches it, both BEFORE any
// download, so a list whose first sync fails stays subscribed (stale for every reader, retried by every pass).
// Without `lists`, the index is fetched on every pass (conditionally) while any subscription came from it, or
// while there is none: a list it adds is subscribed, a list it drops is unsubscribed and removed from the store
// (reported as kUnsubscribed). kMaxLists (core/list_name.h) bounds the index, D/current, D/sync-state.json and
// D/subscriptions alike: an index that names more is refused whole (a failed report with over_list_limit), and
// the subscriptions stay as they were.
// The engine behind the public urlguard::SyncEngine (include/urlguard/sync.h), which urlguardd, `urlguard sync`
// and Client::SyncNow use.
//
// Thread safety: not thread-safe; one thread drives a Syncer.
#ifndef URLGUARD_SYNC_SYNCER_H_
#define URLGUARD_SYNC_SYNCER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "format/signature.h"
#include "platform/env.h"
#include "sync/fetcher.h"
#include "format/key_rotation.h"
#include "sync/scheduler.h"
#include "sync/store.h"
#include "sync/subscriptions.h"
#include "sync/updater.h"
#include "urlguard/status.h"
#include "urlguard/sync.h"

namespace urlguard {

struct SyncerOptions {
  std::string data_dir;
  std::string server_url;
  std::vector<PublicKey> trusted_keys;  // manifest keys: AcceptTrustChain(...).keys (retired keys left out)
  // From AcceptTrustChain(...).resets: applied to the data directory at Open (Store::ResetHighWater).
  std::vector<HighWaterReset> high_water_resets;
  DataDirMode dir_mode = DataDirMode::kPrivate;  // for a new data directory (0700, or 0750)
  // Lists to subscribe to (kList) and run. Empty: every subscribed list (D/subscriptions; a directory written
  // before that file existed: its installed lists), and the server's signed list index (sync/list_discovery.h)
  // fetched by every RunDue while the subscriptions came from it or there are none.
  std::vector<std::string> lists;
  FetcherOptions fetch;
};

// The public report (include/urlguard/sync.h) of one list's pass: its outcome's kind as the result, versions,
// whether a diff was used, the bytes downloaded, and the error's text when it failed. The outcome's other fields
// stay inside (the Syncer's schedule uses them). sync/syncer_test.cc fails when a SyncReport field is added and
// not carried.
SyncReport ToSyncReport(const std::string& list, const SyncOutcome& outcome);

class Syncer {
 public:
  // Opens (and recovers) the data directory and takes its lock: kFailedPrecondition when another process syncs
  // it. kInvalidArgument without a server URL or a key, or for an invalid list name; kResourceExhausted when
  // the lists given and those already subscribed are more than kMaxLists together. Records the given lists in
  // D/subscriptions (the Env's errors when that fails). No network access: the index waits for RunDue.
  // A damaged D/subscriptions is a warning: the subscriptions are rebuilt from the installed and scheduled
  // lists (as the user's).
  static Result<std::unique_ptr<Syncer>> Open(Env* env, const SyncerOptions& options);

  // Runs every list whose next attempt is due at `now` (all of them when `force`). Saves the schedule.
  // Each list's pass is timed at `now` plus the Env's clock elapsed since the call began (never less than `now`):
  // its expiry checks, its sync times and its clock offset (the manifest's Date minus that time) are its own,
  // whatever the lists before it downloaded.
  // When the index is followed (see above), first fetches it (when due, or `force`): on success D/subscriptions
  // is rewritten first, each list it drops gets a kUnsubscribed report, and each list it adds runs in the same
  // pass; on failure one kFailed report with an empty `list` comes first, the next attempt of the index backs
  // off like a failed list (sync/scheduler.h), and the subscribed lists still run.
  std::vector<SyncReport> RunDue(int64_t now, bool force);
  // The earliest next attempt over the subscribed lists, or of the list discovery (unix seconds).
  int64_t NextDue() const;

  const Store& store() const { return *store_; }
  // The schedule of every subscribed list, sorted by name.
  const std::vector<ListSyncState>& schedule() const { return schedule_; }
  const std::vector<Subscription>& subscriptions() const { return subs_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Syncer() = default;
  // Fetches the list index and follows it: subscribes to what it adds (due at `now`), unsubscribes what it
  // drops (one kUnsubscribed report each in *reports). kResourceExhausted (IsListLimitError or the union with
  // the user's lists) leaves everything as it was.
  Status Discover(int64_t now, std::vector<SyncReport>* reports);
  bool Selected(const std::string& list) const;
  Env* env_ = nullptr;
  SyncerOptions options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Fetcher> fetcher_;
  std::vector<Subscription> subs_;       // D/subscriptions, sorted by name
  std::vector<ListSyncState> schedule_;  // one per subscription, sorted by name
  // Per list, the next attempt D/sync-state.json held at Open, until the list's first pass: StartupAttemptTime
  // moves the in-memory one, and the poll's place in the publisher's cadence (sync/scheduler.h) comes from it.
  std::map<std::string, int64_t> persisted_due_;
  bool discover_ = false;    // follow the server's list index (no list given; none subscribed, or from the index)
  ListSyncState discovery_;  // its attempts and backoff (list ""; never persisted)
  std::string index_etag_;   // the ETag of the index last followed ("" = none): the next fetch is conditional
  std::vector<std::string> warnings_;
  UniformSource rand_;
};

}  // namespace urlguard

#endif  // URLGUARD_SYNC_SYNCER_H_
