// Copyright urlguard authors.
#include "sync/syncer.h"

#include <algorithm>

#include "core/list_name.h"
#include "sync/list_discovery.h"
#include "sync/updater.h"

namespace urlguard {

Result<std::unique_ptr<Syncer>> Syncer::Open(Env* env, const SyncerOptions& options) {
  if (options.server_url.empty()) return Status::InvalidArgument("no server URL to sync from");
  if (options.trusted_keys.empty()) return Status::InvalidArgument("no trusted public key: give --public-key");
  for (const std::string& l : options.lists) {
    if (!IsValidListName(l)) return Status::InvalidArgument("invalid list name: " + l);
  }
  std::unique_ptr<Syncer> s(new Syncer());
  s->env_ = env;
  s->options_ = options;
  s->rand_ = EnvUniformSource(env);
  StoreOptions store_options;
  store_options.dir_mode = options.dir_mode;
  auto store = Store::Open(env, options.data_dir, store_options);
  if (!store.ok()) return store.status();
  s->store_ = std::move(store).value();
  for (const std::string& w : s->store_->warnings()) s->warnings_.push_back(w);
  // Signed high-water resets from accepted key rotation statements (format/key_rotation.h).
  for (const HighWaterReset& r : options.high_water_resets) {
    bool applied = false;
    Status reset = s->store_->ResetHighWater(r.list, r.max_version, r.not_before_unix, &applied);
    if (!reset.ok()) return reset;
    if (applied) {
      s->warnings_.push_back("list " + r.list + ": high-water mark lowered to " + std::to_string(r.max_version) +
                             " by a signed key rotation statement");
    }
  }
  auto fetcher = NewCurlFetcher(options.fetch);
  if (!fetcher.ok()) return fetcher.status();
  s->fetcher_ = std::move(fetcher).value();
  LoadedSyncState loaded = LoadSyncState(env, options.data_dir);
  if (!loaded.warning.ok()) s->warnings_.push_back(loaded.warning.ToString());
  s->schedule_ = std::move(loaded.lists);
  std::vector<std::string> lists = options.lists;
  if (lists.empty()) {
    for (const ListState& l : s->store_->state().lists) lists.push_back(l.list);
  }
  const int64_t now = env->NowUnixSeconds();
  // Nothing given, nothing installed: the first RunDue asks the server's list index (sync/list_discovery.h).
  s->discover_ = lists.empty();
  s->discovery_.next_attempt_unix = now;
  std::vector<ListSyncState> subscribed;
  for (const std::string& l : lists) {
    ListSyncState* st = FindOrAddListSyncState(&s->schedule_, l);
    st->next_attempt_unix = StartupAttemptTime(*st, now, s->rand_);
    subscribed.push_back(*st);
  }
  std::sort(subscribed.begin(), subscribed.end(),
            [](const ListSyncState& a, const ListSyncState& b) { return a.list < b.list; });
  s->schedule_ = std::move(subscribed);
  return s;
}

std::vector<SyncReport> Syncer::RunDue(int64_t now, bool force) {
  std::vector<SyncReport> reports;
  if (discover_ && (force || discovery_.next_attempt_unix <= now)) {
    Status discovered = Discover(now);
    if (!discovered.ok()) {
      SyncReport r;
      r.list = "";  // the discovery step, not a list
      r.error = discovered.ToString();
      RecordSyncFailure(&discovery_, now, r.error, /*min_wait_seconds=*/0, /*retry_after_seconds=*/-1, rand_);
      reports.push_back(std::move(r));
      return reports;
    }
    force = true;  // the new subscriptions run now
  }
  UpdaterOptions uo;
  uo.server_base_url = options_.server_url;
  uo.trusted_keys = options_.trusted_keys;
  for (ListSyncState& st : schedule_) {
    if (!force && st.next_attempt_unix > now) continue;
    SyncOutcome out = SyncList(*fetcher_, *store_, uo, st.list, st.manifest_etag, now);
    SyncReport r;
    r.list = st.list;
    r.from_version = out.from_version;
    r.to_version = out.to_version;
    r.used_diff = out.used_diff;
    r.bytes = out.bytes_downloaded;
    switch (out.kind) {
      case SyncOutcome::kUpdated: r.result = SyncResult::kUpdated; break;
      case SyncOutcome::kNotModified: r.result = SyncResult::kNotModified; break;
      case SyncOutcome::kUpToDate: r.result = SyncResult::kUpToDate; break;
      case SyncOutcome::kFailed: r.result = SyncResult::kFailed; break;
    }
    if (out.kind == SyncOutcome::kFailed) {
      r.error = out.error.ToString();
      RecordSyncFailure(&st, now, r.error, out.min_wait_seconds, out.retry_after_seconds, rand_);
    } else {
      if (!out.etag.empty() || out.kind != SyncOutcome::kNotModified) st.manifest_etag = out.etag;
      RecordSyncSuccess(&st, now, out.kind == SyncOutcome::kNotModified, out.min_wait_seconds,
                        out.retry_after_seconds, rand_);
    }
    reports.push_back(std::move(r));
  }
  Status saved = SaveSyncState(env_, options_.data_dir, schedule_);
  if (!saved.ok()) warnings_.push_back("could not save the sync schedule: " + saved.ToString());
  return reports;
}

Status Syncer::Discover(int64_t now) {
  URLGUARD_ASSIGN_OR_RETURN(ListIndex index, FetchListIndex(*fetcher_, options_.server_url, options_.trusted_keys));
  if (index.lists.empty()) return Status::NotFound("list index: the server publishes no list");
  for (const ListIndexEntry& e : index.lists) {  // names validated by the parser, sorted and unique
    ListSyncState st;
    st.list = e.name;
    st.next_attempt_unix = now;
    schedule_.push_back(std::move(st));
  }
  discover_ = false;
  return Status::Ok();
}

int64_t Syncer::NextDue() const {
  int64_t next = discover_ ? discovery_.next_attempt_unix : INT64_MAX;
  for (const ListSyncState& st : schedule_) next = std::min(next, st.next_attempt_unix);
  return next;
}

}  // namespace urlguard
