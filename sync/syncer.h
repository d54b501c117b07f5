// Copyright urlguard authors.
//
// Syncer: the single writer of a data directory. It holds the directory's lock (through Store) for its whole
// life, and runs sync passes (sync/updater.h) for each subscribed list when the schedule (sync/scheduler.h) says
// they are due, persisting the schedule in D/sync-state.json so it survives restarts.
// The engine behind the public urlguard::SyncEngine (include/urlguard/sync.h), which urlguardd, `urlguard sync`
// and Client::SyncNow use.
//
// Thread safety: not thread-safe; one thread drives a Syncer.
#ifndef URLGUARD_SYNC_SYNCER_H_
#define URLGUARD_SYNC_SYNCER_H_

#include <memory>
#include <string>
#include <vector>

#include "format/signature.h"
#include "platform/env.h"
#include "sync/fetcher.h"
#include "format/key_rotation.h"
#include "sync/scheduler.h"
#include "sync/store.h"
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
  // Empty: the lists installed in the directory; when none is installed either, the lists the server's signed
  // list index names (sync/list_discovery.h), fetched by the first RunDue.
  std::vector<std::string> lists;
  FetcherOptions fetch;
};

class Syncer {
 public:
  // Opens (and recovers) the data directory and takes its lock: kFailedPrecondition when another process syncs
  // it. kInvalidArgument without a server URL or a key, or for an invalid list name. No network access: with no
  // list given and none installed, the first RunDue discovers them.
  static Result<std::unique_ptr<Syncer>> Open(Env* env, const SyncerOptions& options);

  // Runs every list whose next attempt is due at `now` (all of them when `force`). Saves the schedule.
  // While lists are still to be discovered, first fetches the list index (when due, or `force`): on success the
  // lists it names are subscribed and run in the same pass; on failure the one report has an empty `list`, and
  // the next attempt backs off like a failed list (sync/scheduler.h).
  std::vector<SyncReport> RunDue(int64_t now, bool force);
  // The earliest next attempt over the subscribed lists, or of the list discovery (unix seconds).
  int64_t NextDue() const;

  const Store& store() const { return *store_; }
  const std::vector<ListSyncState>& schedule() const { return schedule_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Syncer() = default;
  // Fetches the list index and subscribes to every list it names (schedule_ is empty before).
  Status Discover(int64_t now);
  Env* env_ = nullptr;
  SyncerOptions options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Fetcher> fetcher_;
  std::vector<ListSyncState> schedule_;
  bool discover_ = false;         // no list given or installed: subscribe to the server's list index
  ListSyncState discovery_;       // its attempts and backoff (list ""; never persisted)
  std::vector<std::string> warnings_;
  UniformSource rand_;
};

}  // namespace urlguard

#endif  // URLGUARD_SYNC_SYNCER_H_
