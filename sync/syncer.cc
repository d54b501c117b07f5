// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync/syncer.h"

#include <algorithm>

#include "core/list_name.h"
#include "format/list_index.h"
#include "sync/list_discovery.h"
#include "sync/updater.h"

namespace urlguard {
namespace {

bool ByList(const Subscription& a, const Subscription& b) { return a.list < b.list; }

const Subscription* FindSubscription(const std::vector<Subscription>& subs, const std::string& list) {
  auto it = std::lower_bound(subs.begin(), subs.end(), Subscription{list, SubscriptionOrigin::kList}, ByList);
  return it != subs.end() && it->list == list ? &*it : nullptr;
}

// Adds `list` to the sorted `subs` with `origin`; a user's subscription (kList) wins over the index's. True when
// `subs` changed.
bool Subscribe(std::vector<Subscription>* subs, const std::string& list, SubscriptionOrigin origin) {
  auto it = std::lower_bound(subs->begin(), subs->end(), Subscription{list, origin}, ByList);
  if (it != subs->end() && it->list == list) {
    if (origin != SubscriptionOrigin::kList || it->origin == SubscriptionOrigin::kList) return false;
    it->origin = SubscriptionOrigin::kList;
    return true;
  }
  subs->insert(it, Subscription{list, origin});
  return true;
}

Status TooManySubscriptions(size_t n) { return ListLimitError("subscribing to", n); }

}  // namespace

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
  // The Store holds D open; the sync state and subscriptions below are reached through it (store_->dir()).
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
  LoadedSyncState loaded = LoadSyncState(env, s->store_->dir());
  if (!loaded.warning.ok()) s->warnings_.push_back(loaded.warning.ToString());

  // The subscriptions: D/subscriptions, or for a directory without one (written before subscriptions were
  // state) or with a damaged one, every list it installed or scheduled, as the user's.
  bool changed = false;
  auto subs = ReadSubscriptions(env, s->store_->dir());
  if (subs.ok()) {
    s->subs_ = std::move(subs).value();
  } else {
    if (subs.status().code() != StatusCode::kNotFound) {
      s->warnings_.push_back(subs.status().ToString() + ": rebuilt from the installed and scheduled lists");
    }
    for (const ListState& l : s->store_->state().lists) changed |= Subscribe(&s->subs_, l.list, SubscriptionOrigin::kList);
    for (const ListSyncState& l : loaded.lists) changed |= Subscribe(&s->subs_, l.list, SubscriptionOrigin::kList);
  }
  for (const std::string& l : options.lists) changed |= Subscribe(&s->subs_, l, SubscriptionOrigin::kList);
  if (s->subs_.size() > kMaxLists) return TooManySubscriptions(s->subs_.size());
  // Recorded before any download: a list whose first sync fails is still subscribed (stale until installed).
  if (changed) URLGUARD_RETURN_IF_ERROR(WriteSubscriptions(env, s->store_->dir(), s->subs_));

  const int64_t now = env->NowUnixSeconds();
  s->discover_ = options.lists.empty() &&
                 (s->subs_.empty() || std::any_of(s->subs_.begin(), s->subs_.end(), [](const Subscription& x) {
                    return x.origin == SubscriptionOrigin::kIndex;
                  }));
  s->discovery_.next_attempt_unix = now;
  for (const Subscription& sub : s->subs_) {
    ListSyncState st = *FindOrAddListSyncState(&loaded.lists, sub.list);
    if (st.next_attempt_unix != 0) s->persisted_due_[sub.list] = st.next_attempt_unix;
    st.next_attempt_unix = StartupAttemptTime(st, now, s->rand_);
    s->schedule_.push_back(std::move(st));  // subs_ is sorted by name, and so is schedule_
  }
  return s;
}

bool Syncer::Selected(const std::string& list) const {
  return options_.lists.empty() ||
         std::find(options_.lists.begin(), options_.lists.end(), list) != options_.lists.end();
}

SyncReport ToSyncReport(const std::string& list, const SyncOutcome& out) {
  SyncReport r;
  r.list = list;
  switch (out.kind) {
    case SyncOutcome::kUpdated: r.result = SyncResult::kUpdated; break;
    case SyncOutcome::kNotModified: r.result = SyncResult::kNotModified; break;
    case SyncOutcome::kUpToDate: r.result = SyncResult::kUpToDate; break;
    case SyncOutcome::kFailed: r.result = SyncResult::kFailed; break;
  }
  r.from_version = out.from_version;
  r.to_version = out.to_version;
  r.used_diff = out.used_diff;
  r.bytes = out.bytes_downloaded;
  r.diffs = out.range_diffs;
  r.diff_bytes = out.diff_bytes;
  if (out.kind == SyncOutcome::kFailed) r.error = out.error.ToString();
  // over_list_limit is the list discovery step's (RunDue); a list's pass never sets it.
  return r;
}

std::vector<SyncReport> Syncer::RunDue(int64_t now, bool force) {
  std::vector<SyncReport> reports;
  if (discover_ && (force || discovery_.next_attempt_unix <= now)) {
    std::vector<SyncReport> dropped;
    Status discovered = Discover(now, &dropped);
    if (!discovered.ok()) {
      SyncReport r;
      r.list = "";  // the discovery step, not a list
      r.error = discovered.ToString();
      r.over_list_limit = IsListLimitError(discovered);
      RecordSyncFailure(&discovery_, now, r.error, /*min_wait_seconds=*/0, /*retry_after_seconds=*/-1, rand_);
      reports.push_back(std::move(r));
      if (subs_.empty()) return reports;  // nothing to sync yet
    } else {
      RecordSyncSuccess(&discovery_, now, /*not_modified=*/false, /*min_wait_seconds=*/0,
                        /*retry_after_seconds=*/-1, rand_);
    }
    for (SyncReport& r : dropped) reports.push_back(std::move(r));
  }
  UpdaterOptions uo;
  uo.server_base_url = options_.server_url;
  uo.trusted_keys = options_.trusted_keys;
  // Each list's pass runs at its own time: `now` plus the time the passes before it took (a 200 MB snapshot of
  // one list can take minutes). Its manifest's Date is compared with that time, so the clock offset, and the
  // place of the list's next poll on the publisher's clock, do not carry the earlier lists' downloads.
  const int64_t pass_clock = env_->NowUnixSeconds();
  for (ListSyncState& st : schedule_) {
    if (!Selected(st.list)) continue;
    if (!force && st.next_attempt_unix > now) continue;
    const int64_t list_now = now + std::max<int64_t>(0, env_->NowUnixSeconds() - pass_clock);
    SyncOutcome out = SyncList(*fetcher_, *store_, uo, st.list, st.manifest_etag, list_now);
    SyncReport r = ToSyncReport(st.list, out);
    if (out.kind == SyncOutcome::kFailed) {
      RecordSyncFailure(&st, list_now, r.error, out.min_wait_seconds, out.retry_after_seconds, rand_);
    } else {
      if (!out.etag.empty() || out.kind != SyncOutcome::kNotModified) st.manifest_etag = out.etag;
      // The client's place in the cadence is where the previous process scheduled this poll, not where the
      // start rule moved it (a `urlguard sync --once` from a timer starts a process per poll).
      if (auto due = persisted_due_.find(st.list); due != persisted_due_.end()) st.next_attempt_unix = due->second;
      PublisherClock publisher;
      publisher.created_unix = out.created_unix;
      if (out.server_date_unix >= 0) publisher.clock_offset_seconds = out.server_date_unix - list_now;
      RecordSyncSuccess(&st, list_now, out.kind == SyncOutcome::kNotModified, out.min_wait_seconds,
                        out.retry_after_seconds, rand_, publisher);
    }
    persisted_due_.erase(st.list);
    reports.push_back(std::move(r));
  }
  Status saved = SaveSyncState(env_, store_->dir(), schedule_);
  if (!saved.ok()) warnings_.push_back("could not save the sync schedule: " + saved.ToString());
  return reports;
}

Status Syncer::Discover(int64_t now, std::vector<SyncReport>* reports) {
  URLGUARD_ASSIGN_OR_RETURN(FetchedListIndex fetched, FetchListIndexIfChanged(*fetcher_, options_.server_url,
                                                                              options_.trusted_keys, index_etag_));
  if (fetched.not_modified) return Status::Ok();
  const ListIndex& index = fetched.index;
  if (index.lists.empty()) return Status::NotFound("list index: the server publishes no list");
  // The user's subscriptions stay; the index's are what it names now.
  std::vector<Subscription> next;
  for (const Subscription& sub : subs_) {
    if (sub.origin == SubscriptionOrigin::kList) next.push_back(sub);
  }
  for (const ListIndexEntry& e : index.lists) Subscribe(&next, e.name, SubscriptionOrigin::kIndex);
  if (next.size() > kMaxLists) {
    return TooManySubscriptions(next.size()).WithContext("list index (" + std::to_string(index.lists.size()) +
                                                         " lists) and --list");
  }
  if (next != subs_) URLGUARD_RETURN_IF_ERROR(WriteSubscriptions(env_, store_->dir(), next));
  subs_ = std::move(next);
  index_etag_ = fetched.etag;
  // Unsubscribed on purpose: every list of the store the subscriptions no longer name (dropped by this index,
  // or by an earlier one whose removal failed) leaves the store, so it neither serves nor turns stale unsynced.
  std::vector<std::string> gone;
  for (const ListState& l : store_->state().lists) {
    if (FindSubscription(subs_, l.list) == nullptr) gone.push_back(l.list);
  }
  for (const ListSyncState& st : schedule_) {
    if (FindSubscription(subs_, st.list) == nullptr && store_->state().Find(st.list) == nullptr) {
      gone.push_back(st.list);
    }
  }
  std::sort(gone.begin(), gone.end());
  for (const std::string& list : gone) {
    SyncReport r;
    r.list = list;
    r.result = SyncResult::kUnsubscribed;
    const InstalledList* installed = store_->state().FindInstalled(list);
    r.from_version = installed != nullptr ? installed->version : 0;
    Status removed = store_->Remove(list, nullptr);
    if (!removed.ok()) {
      r.result = SyncResult::kFailed;
      r.error = removed.ToString();
    }
    reports->push_back(std::move(r));
  }
  // The schedule follows the subscriptions; a new list is due now.
  std::vector<ListSyncState> schedule;
  for (const Subscription& sub : subs_) {
    auto it = std::find_if(schedule_.begin(), schedule_.end(),
                           [&](const ListSyncState& st) { return st.list == sub.list; });
    if (it != schedule_.end()) {
      schedule.push_back(std::move(*it));
    } else {
      ListSyncState st;
      st.list = sub.list;
      st.next_attempt_unix = now;
      schedule.push_back(std::move(st));
    }
  }
  schedule_ = std::move(schedule);
  return Status::Ok();
}

int64_t Syncer::NextDue() const {
  int64_t next = discover_ ? discovery_.next_attempt_unix : INT64_MAX;
  for (const ListSyncState& st : schedule_) {
    if (Selected(st.list)) next = std::min(next, st.next_attempt_unix);
  }
  return next;
}

}  // namespace urlguard
