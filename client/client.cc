// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The public Client (include/urlguard/client.h): lookups against the current Generation (client/generation_slots.h),
// the verification path for local hits (client/verifier.h), and the wiring of its background threads and of
// SyncNow (urlguard/sync.h).
#include "urlguard/client.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <unordered_set>

#include "url/entry.h"
#include "client/filter_chain.h"
#include "core/sha256.h"
#include "core/snapshot.h"
#include "core/thread_annotations.h"
#include "format/signature.h"
#include "platform/env.h"
#include "sync/data_dir_guard.h"
#include "sync/fetcher.h"
#include "client/generation.h"
#include "client/generation_slots.h"
#include "client/list_status.h"
#include "client/local_verdict.h"
#include "platform/periodic_thread.h"
#include "client/result_cache.h"
#include "sync/scheduler.h"
#include "sync/store.h"
#include "sync/syncer.h"
#include "sync/time_floor.h"
#include "sync/trusted_keys_access.h"
#include "client/verifier.h"
#include "platform/work_queue.h"

namespace urlguard {
namespace {

constexpr auto kWatchInterval = std::chrono::milliseconds(500);
constexpr int64_t kReadyPollMillis = 200;  // WaitUntilReady looks this often
constexpr size_t kMaxAllowlistEntries = 100000;

struct DigestHash {
  size_t operator()(const Sha256Digest& d) const { return static_cast<size_t>(DigestPrefix64(d)); }
};

LookupScratch& ThreadScratch() {
  thread_local LookupScratch scratch;
  return scratch;
}

}  // namespace

struct Client::Impl {
  ClientOptions options;
  Env* env = nullptr;
  GenerationSlots current;  // Publish() is serialized by refresh_mu (and Open, before any reader exists)
  std::unordered_set<Sha256Digest, DigestHash> allowlist;
  std::unique_ptr<ResultCache> cache;
  std::unique_ptr<Fetcher> fetcher;  // verification (deadline-bound timeouts); null when offline
  std::vector<PublicKey> keys;

  // Counters (relaxed: statistics only).
  mutable std::atomic<uint64_t> lookups{0};
  mutable std::atomic<uint64_t> by_verdict[6] = {};
  mutable std::atomic<uint64_t> verifications{0};
  mutable std::atomic<uint64_t> verification_failures{0};
  mutable std::atomic<uint64_t> verification_ns{0};
  std::atomic<uint64_t> swaps{0};

  Mutex refresh_mu;  // serializes Refresh (watcher vs explicit calls)
  // D, held open since the trust check (docs/data-dir.md §1.1): every read below D goes through it, so a rename
  // of D or a parent afterwards cannot make this reader load another directory. Null while D did not exist;
  // set once (Open or the first Refresh that finds D), then kept.
  mutable Mutex held_mu;
  std::shared_ptr<Directory> held GUARDED_BY(held_mu);

  std::shared_ptr<Directory> Held() const EXCLUDES(held_mu) {
    MutexLock l(&held_mu);
    return held;
  }
  // Holds D when it is not held yet: ok with nothing held when D does not exist (yet); else the trust check's
  // refusal. Once held, re-checks D's own owner and mode on the held descriptor.
  Status HoldDataDir() EXCLUDES(held_mu) {
    if (std::shared_ptr<Directory> d = Held(); d != nullptr) {
      return CheckHeldDataDir(d.get(), options.data_dir, DataDirAccess::kRead);
    }
    auto d = OpenTrustedDataDir(env, options.data_dir, DataDirAccess::kRead);
    if (!d.ok()) return d.status().code() == StatusCode::kNotFound ? Status::Ok() : d.status();
    MutexLock l(&held_mu);
    held = std::move(d).value();
    return Status::Ok();
  }
  // Background threads; stopped (reset) first in ~Client, before the members they use go away.
  std::unique_ptr<PeriodicThread> watcher;  // follows new generations
  std::unique_ptr<WorkQueue> async;         // CheckAsync

  Verdict Decide(const std::vector<LocalHit>& hits, Verdict v) const;
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() {
  impl_->watcher.reset();
  impl_->async.reset();  // runs the queued checks first
}

Result<std::unique_ptr<Client>> Client::Open(const ClientOptions& options) {
  if (options.data_dir.empty()) return Status::InvalidArgument("no data directory");
  if (options.verify_deadline_ms <= 0) return Status::InvalidArgument("verify deadline must be positive");
  if (options.max_negative_cache_seconds < 0 || options.max_negative_cache_seconds > kMaxVerifyCacheSeconds) {
    return Status::InvalidArgument("max_negative_cache_seconds must be 0 .. " +
                                   std::to_string(kMaxVerifyCacheSeconds));
  }
  if (options.allowlist.size() > kMaxAllowlistEntries) return Status::InvalidArgument("allowlist too long");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->env = options.env != nullptr ? options.env : Env::Default();
  for (const std::string& e : options.allowlist) {
    auto key = EntryKeyFor(e);
    if (!key.ok()) return key.status().WithContext("allowlist entry '" + e + "'");
    impl->allowlist.insert(Sha256(key->expression));
  }
  impl->keys = internal::TrustedKeysAccess::Keys(options.trusted_keys);
  for (const std::string& pem : options.public_key_pems) {
    auto k = PublicKeyFromPem(pem);
    if (!k.ok()) return k.status().WithContext("public key");
    impl->keys.push_back(*k);
  }
  // A reader trusts D as much as the writer does (docs/data-dir.md §1.1): `check` and `status` used to answer
  // from a copy `sync` refuses. A D that does not exist yet loads as empty; Refresh checks again.
  // From the trust check on, D is the directory held (Impl::held), whatever is renamed along its path later.
  URLGUARD_RETURN_IF_ERROR(impl->HoldDataDir());
  {
    const std::shared_ptr<Directory> held = impl->Held();
    // Nothing held: D does not exist, and loads as an empty generation.
    const std::string dir = held != nullptr ? held->path() : options.data_dir;
    auto gen = LoadGeneration(impl->env, dir);
    if (!gen.ok()) return NameHeldDataDir(gen.status(), dir, options.data_dir).WithContext(options.data_dir);
    impl->current.Publish(*gen);
  }
  impl->cache = ResultCache::Open(JoinPath(options.data_dir, "cache.sqlite"));
  if (!options.server_url.empty() && options.verify) {
    FetcherOptions fo;
    fo.total_timeout_ms = options.verify_deadline_ms;
    fo.connect_timeout_ms = std::min<long>(options.verify_deadline_ms, 10000);
    fo.ca_bundle = options.ca_bundle;
    fo.proxy = options.proxy;
    fo.env = impl->env;
    auto f = NewCurlFetcher(fo);
    if (!f.ok()) return f.status();
    impl->fetcher = std::move(f).value();
  }
  std::unique_ptr<Client> client(new Client(std::move(impl)));
  Client* raw = client.get();
  if (options.watch) {
    raw->impl_->watcher = std::make_unique<PeriodicThread>(kWatchInterval, [raw] { (void)raw->Refresh(); });
  }
  raw->impl_->async = std::make_unique<WorkQueue>(options.async_queue_capacity);
  return client;
}

Status Client::Refresh() {
  MutexLock l(&impl_->refresh_mu);
  // Every read goes to the D held since the trust check: a D renamed away and replaced by another user's (a
  // rename in a parent that became writable, a link swapped) is never loaded. D's own owner and mode are checked
  // again on the held descriptor; a refusal keeps the generation loaded from the trusted D serving.
  URLGUARD_RETURN_IF_ERROR(impl_->HoldDataDir());
  const std::shared_ptr<Directory> held = impl_->Held();
  if (held == nullptr) return Status::Ok();  // D does not exist (yet)
  const std::string& dir = held->path();
  auto state = ReadStoreState(impl_->env, dir);
  if (!state.ok() && state.status().code() != StatusCode::kNotFound) {
    return NameHeldDataDir(state.status(), dir, impl_->options.data_dir);
  }
  // A new subscription (recorded before its first download, sync/subscriptions.h) changes no generation, and
  // may come before anything is installed.
  const std::vector<std::string> subscribed = ReadSubscribedLists(impl_->env, dir);
  {
    auto cur = impl_->current.Acquire();
    if (!state.ok()) {  // nothing installed (yet): only new subscriptions are news
      if (!cur->state.lists.empty() || subscribed == cur->subscribed) return Status::Ok();
    } else if (state->generation == cur->number && !cur->state.lists.empty() == !state->lists.empty() &&
               subscribed == cur->subscribed) {
      return Status::Ok();
    }
  }
  auto gen = LoadGeneration(impl_->env, dir);
  if (!gen.ok()) return NameHeldDataDir(gen.status(), dir, impl_->options.data_dir);  // the current generation keeps serving; the watcher tries again
  impl_->current.Publish(*gen);  // lookups in flight finish on the old generation
  impl_->swaps.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Verdict Client::CheckLocal(std::string_view url, const CheckOptions& options) const {
  auto g = impl_->current.Acquire();
  LookupScratch& s = ThreadScratch();
  Status canon = g->chain.LookupUrl(url, &s);
  Verdict v = LocalVerdict(*g, canon, s, options.want_canonical);
  if (v.kind != VerdictKind::kInvalid) v.stale = AnyStale(*g, impl_->options.lists, impl_->env->NowUnixSeconds());
  return v;
}

Verdict Client::Check(std::string_view url, const CheckOptions& options) const {
  Verdict v;
  std::vector<LocalHit> hits;
  {
    auto g = impl_->current.Acquire();
    LookupScratch& s = ThreadScratch();
    Status canon = g->chain.LookupUrl(url, &s);
    v = LocalVerdict(*g, canon, s, options.want_canonical);
    if (v.kind != VerdictKind::kInvalid) {
      v.stale = AnyStale(*g, impl_->options.lists, impl_->env->NowUnixSeconds());
      // The allowlist overrides: any of the URL's own expressions listed there lets it through.
      bool allowed = false;
      for (size_t i = 0; i < s.expressions.size() && !allowed && !impl_->allowlist.empty(); ++i) {
        allowed = impl_->allowlist.count(Sha256(s.expressions[i])) > 0;  // only when an allowlist is set
      }
      if (allowed) {
        v.kind = VerdictKind::kSafe;
        v.allowlisted = true;
      }
      if (v.kind == VerdictKind::kHit) hits = LocalHits(*g, s);
    }
  }  // the generation is released before any cache or network work
  impl_->lookups.fetch_add(1, std::memory_order_relaxed);
  if (v.kind == VerdictKind::kHit) v = impl_->Decide(hits, std::move(v));
  impl_->by_verdict[static_cast<int>(v.kind)].fetch_add(1, std::memory_order_relaxed);
  return v;
}

Verdict Client::Impl::Decide(const std::vector<LocalHit>& hits, Verdict v) const {
  const int64_t now = env->NowUnixSeconds();
  const uint64_t t0 = env->NowMonotonicNanos();
  Fetcher* f = options.verify ? fetcher.get() : nullptr;
  CachePolicy policy;
  policy.max_negative_cache_seconds = options.max_negative_cache_seconds;
  DecideResult d = urlguard::Decide(hits, now, cache.get(), f, options.server_url, policy);
  if (!d.from_cache && f != nullptr && !d.emergency) {
    verifications.fetch_add(1, std::memory_order_relaxed);
    verification_ns.fetch_add(env->NowMonotonicNanos() - t0, std::memory_order_relaxed);
    if (!d.error.ok()) verification_failures.fetch_add(1, std::memory_order_relaxed);
  }
  v.from_cache = d.from_cache;
  v.emergency = d.emergency;
  switch (d.decision) {
    case Decision::kSafe:
    case Decision::kSafeVerified:
      v.kind = VerdictKind::kSafeVerified;
      break;
    case Decision::kMalicious:
      v.kind = VerdictKind::kMalicious;
      v.list = d.list;
      v.threat = d.threat;
      break;
    case Decision::kUnverifiedHit:
      v.kind = VerdictKind::kUnverifiedHit;
      if (!d.error.ok()) v.error = d.error.ToString();
      break;
  }
  return v;
}

bool Client::CheckAsync(std::string url, std::function<void(Verdict)> done) const {
  return impl_->async->Push([this, url = std::move(url), done = std::move(done)] { done(Check(url)); });
}

Result<std::vector<SyncReport>> Client::SyncNow() {
  SyncOptions so;
  so.data_dir = impl_->options.data_dir;
  so.server_url = impl_->options.server_url;
  so.trusted_keys = internal::TrustedKeysAccess::Make(impl_->keys);
  so.lists = impl_->options.lists;
  so.ca_bundle = impl_->options.ca_bundle;
  so.proxy = impl_->options.proxy;
  so.env = impl_->env;
  std::vector<SyncReport> reports;
  {
    auto engine = SyncEngine::Open(so);
    if (!engine.ok()) return engine.status();
    reports = (*engine)->RunDue(/*force=*/true);
  }  // release the lock before swapping in
  URLGUARD_RETURN_IF_ERROR(Refresh());
  return reports;
}

std::vector<ListStatus> Client::Lists() const {
  StoreState state;
  int64_t floor = 0;
  std::vector<std::string> subscribed = impl_->options.lists;
  {
    auto g = impl_->current.Acquire();
    state = g->state;  // a copy: no file I/O while holding a generation
    floor = g->time_floor;
    subscribed.insert(subscribed.end(), g->subscribed.begin(), g->subscribed.end());
  }
  LoadedSyncState sched;  // nothing scheduled while D does not exist
  if (const std::shared_ptr<Directory> held = impl_->Held(); held != nullptr) {
    sched = LoadSyncState(impl_->env, held->path());
  }
  return ComposeListStatus(state, sched.lists, TrustedNow(impl_->env->NowUnixSeconds(), floor), subscribed);
}

Status Client::WaitUntilReady(int64_t timeout_ms) {
  if (timeout_ms < 0) return Status::InvalidArgument("WaitUntilReady: negative timeout");
  const uint64_t start = impl_->env->NowMonotonicNanos();
  for (;;) {
    // A failed refresh keeps the old generation and the next look tries again; the timeout names the failure
    // (a refused or unreadable D would otherwise read as lists merely not installed yet).
    const Status refreshed = Refresh();
    std::vector<ListStatus> unready;
    if (ListsReady(Lists(), impl_->options.lists, &unready)) return Status::Ok();
    const uint64_t waited_ms = (impl_->env->NowMonotonicNanos() - start) / 1000000;
    if (waited_ms >= static_cast<uint64_t>(timeout_ms)) {
      std::string why = unready.empty() ? std::string("no list installed") : DescribeUnreadyLists(unready);
      if (!refreshed.ok()) why += "; the last refresh failed: " + refreshed.ToString();
      return Status::Unavailable("not ready after " + std::to_string(timeout_ms) + " ms: " + why);
    }
    // The wait decides only when to look again; the Env's clock decides the timeout (docs/architecture.md §1).
    std::this_thread::sleep_for(std::chrono::milliseconds(
        std::min<uint64_t>(kReadyPollMillis, static_cast<uint64_t>(timeout_ms) - waited_ms)));
  }
}

bool ListsReady(const std::vector<ListStatus>& lists, const std::vector<std::string>& subscribed,
                std::vector<ListStatus>* unready) {
  std::vector<ListStatus> in_the_way;
  if (subscribed.empty()) {
    for (const ListStatus& l : lists) {
      if (l.stale) in_the_way.push_back(l);
    }
  } else {
    std::vector<std::string> names = subscribed;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (const std::string& name : names) {
      auto it = std::find_if(lists.begin(), lists.end(), [&](const ListStatus& l) { return l.name == name; });
      if (it != lists.end() && !it->stale) continue;
      if (it != lists.end()) {
        in_the_way.push_back(*it);
      } else {
        ListStatus missing;
        missing.name = name;
        missing.stale = true;
        missing.stale_reason = StaleReason::kNotInstalled;
        in_the_way.push_back(std::move(missing));
      }
    }
  }
  std::sort(in_the_way.begin(), in_the_way.end(),
            [](const ListStatus& a, const ListStatus& b) { return a.name < b.name; });
  const bool ready = in_the_way.empty() && !(subscribed.empty() && lists.empty());
  if (unready != nullptr) *unready = std::move(in_the_way);
  return ready;
}

std::string DescribeUnreadyLists(const std::vector<ListStatus>& unready) {
  std::string out;
  for (const ListStatus& l : unready) {
    if (!out.empty()) out += ", ";
    const char* reason = StaleReasonName(l.stale_reason);
    out += l.name + " (" + (*reason != '\0' ? reason : "stale") + ")";
  }
  return out;
}

ClientStats Client::Stats() const {
  ClientStats s;
  s.lookups = impl_->lookups.load(std::memory_order_relaxed);
  for (int i = 0; i < 6; ++i) s.by_verdict[i] = impl_->by_verdict[i].load(std::memory_order_relaxed);
  s.verifications = impl_->verifications.load(std::memory_order_relaxed);
  s.verification_failures = impl_->verification_failures.load(std::memory_order_relaxed);
  s.verification_seconds = static_cast<double>(impl_->verification_ns.load(std::memory_order_relaxed)) / 1e9;
  s.cache_hits = impl_->cache ? impl_->cache->hits() : 0;
  s.cache_misses = impl_->cache ? impl_->cache->misses() : 0;
  s.generation = impl_->current.Acquire()->number;
  s.swaps = impl_->swaps.load(std::memory_order_relaxed);
  return s;
}

}  // namespace urlguard
