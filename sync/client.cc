// Copyright urlguard authors.
//
// The public Client: an immutable Generation (mapped state files + filter chain) behind an atomically swapped
// shared_ptr, a watcher thread that swaps in new generations, the verification path (cache, then the verify
// API), an async worker, and SyncNow through a temporary Syncer.
#include "urlguard/client.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/entry.h"
#include "core/filter_chain.h"
#include "core/snapshot.h"
#include "format/signature.h"
#include "platform/env.h"
#include "sync/fetcher.h"
#include "sync/result_cache.h"
#include "sync/scheduler.h"
#include "sync/store.h"
#include "sync/syncer.h"
#include "sync/verifier.h"

namespace urlguard {
namespace {

constexpr auto kWatchInterval = std::chrono::milliseconds(500);
constexpr size_t kMaxAllowlistEntries = 100000;

struct DigestHash {
  size_t operator()(const Sha256Digest& d) const { return static_cast<size_t>(DigestPrefix64(d)); }
};

// One installed state of the data directory. Immutable once built.
struct Generation {
  uint64_t number = 0;
  StoreState state;
  std::vector<std::unique_ptr<MappedFile>> files;
  std::vector<InstalledList> lists;  // parallel to chain.lists()
  FilterChain chain;
};

// How often LoadGeneration re-reads D/current when a file it names is already gone (the writer installed a newer
// version and removed the older file between our read of D/current and our mmap).
constexpr int kLoadAttempts = 8;

Result<std::shared_ptr<const Generation>> LoadGenerationOnce(Env* env, const std::string& dir) {
  auto g = std::make_shared<Generation>();
  auto state = ReadStoreState(env, dir);
  if (!state.ok()) {
    if (state.status().code() == StatusCode::kNotFound) return std::shared_ptr<const Generation>(g);  // nothing yet
    return state.status();
  }
  g->state = *state;
  g->number = state->generation;
  std::vector<SnapshotView> views;
  for (const ListState& l : state->lists) {
    if (!l.installed) continue;
    const InstalledList& inst = *l.installed;
    auto mapped = env->MapReadOnly(JoinPath(dir, inst.file));
    if (!mapped.ok()) return mapped.status();
    // Installed files were verified (full SHA-256) before they became live and are never modified: structure only.
    auto view = SnapshotView::Open((*mapped)->data(), (*mapped)->size(), /*verify_checksum=*/false);
    if (!view.ok()) return view.status().WithContext(inst.file);
    if (view->version() != inst.version || view->checksum() != inst.state_sha256) {
      return Status::Corruption(inst.file + ": not the state D/current names");
    }
    views.push_back(*view);
    g->files.push_back(std::move(mapped).value());
    g->lists.push_back(inst);
  }
  g->chain = FilterChain(std::move(views));
  return std::shared_ptr<const Generation>(g);
}

// A complete generation or an error: never one with a list silently missing (that would turn hits into "safe").
Result<std::shared_ptr<const Generation>> LoadGeneration(Env* env, const std::string& dir) {
  Status last;
  for (int attempt = 0; attempt < kLoadAttempts; ++attempt) {
    auto g = LoadGenerationOnce(env, dir);
    if (g.ok()) return g;
    last = g.status();
    if (last.code() != StatusCode::kNotFound) break;  // only a vanished file is worth re-reading D/current for
  }
  return last;
}

// The current generation, swapped without making lookups wait: a two-slot reader-count scheme (the "left-right"
// pattern). Readers announce themselves on the current slot's counter and re-check the epoch (retrying if a swap
// slipped in); the single writer fills the other slot only after that slot's readers have drained, then bumps
// the epoch. Readers never block or take a lock; the writer waits for lookups of the generation before the previous
// one (microseconds). std::atomic<std::shared_ptr> was the first choice, but libstdc++ 12 implements it with an
// internal spin lock that readers also take, and ThreadSanitizer reports its unsynchronized pointer reads.
class GenerationSlots {
 public:
  class Ref {
   public:
    Ref(const GenerationSlots* s, int slot) : s_(s), slot_(slot) {}
    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    ~Ref() { s_->readers_[slot_].fetch_sub(1, std::memory_order_seq_cst); }
    const Generation& operator*() const { return *s_->slots_[slot_]; }
    const Generation* operator->() const { return s_->slots_[slot_].get(); }

   private:
    const GenerationSlots* s_;
    int slot_;
  };

  Ref Acquire() const {
    for (;;) {
      uint64_t e = epoch_.load(std::memory_order_seq_cst);
      int slot = static_cast<int>(e & 1);
      readers_[slot].fetch_add(1, std::memory_order_seq_cst);
      if (epoch_.load(std::memory_order_seq_cst) == e) return Ref(this, slot);
      readers_[slot].fetch_sub(1, std::memory_order_seq_cst);  // a swap slipped in: use the new slot
    }
  }

  // Single writer (callers serialize).
  void Publish(std::shared_ptr<const Generation> next) {
    uint64_t e = epoch_.load(std::memory_order_seq_cst);
    int target = static_cast<int>((e + 1) & 1);
    while (readers_[target].load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    slots_[target] = std::move(next);  // the old generation in this slot (two swaps ago) is freed here
    epoch_.fetch_add(1, std::memory_order_seq_cst);
  }

 private:
  std::atomic<uint64_t> epoch_{0};
  mutable std::atomic<uint64_t> readers_[2] = {0, 0};
  std::shared_ptr<const Generation> slots_[2] = {std::make_shared<Generation>(), std::make_shared<Generation>()};
};

}  // namespace

struct Client::Impl {
  ClientOptions options;
  Env* env = Env::Default();
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

  // Watcher thread.
  std::mutex watch_mu;  // guards stop_watch; the condition variable wakes the watcher early
  std::condition_variable watch_cv;
  bool stop_watch = false;
  std::thread watcher;
  std::mutex refresh_mu;  // serializes Refresh (watcher vs explicit calls)

  // Async worker.
  mutable std::mutex queue_mu;  // guards queue and stop_worker
  mutable std::condition_variable queue_cv;
  mutable std::deque<std::pair<std::string, std::function<void(Verdict)>>> queue;
  bool stop_worker = false;
  std::thread worker;

  static std::vector<LocalHit> LocalHits(const Generation& g, const LookupScratch& s);
  Verdict Decide(const std::vector<LocalHit>& hits, Verdict v) const;
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() {
  {
    std::lock_guard<std::mutex> l(impl_->watch_mu);
    impl_->stop_watch = true;
  }
  impl_->watch_cv.notify_all();
  if (impl_->watcher.joinable()) impl_->watcher.join();
  {
    std::lock_guard<std::mutex> l(impl_->queue_mu);
    impl_->stop_worker = true;
  }
  impl_->queue_cv.notify_all();
  if (impl_->worker.joinable()) impl_->worker.join();
}

Result<std::unique_ptr<Client>> Client::Open(const ClientOptions& options) {
  if (options.data_dir.empty()) return Status::InvalidArgument("no data directory");
  if (options.verify_deadline_ms <= 0) return Status::InvalidArgument("verify deadline must be positive");
  if (options.allowlist.size() > kMaxAllowlistEntries) return Status::InvalidArgument("allowlist too long");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  for (const std::string& e : options.allowlist) {
    auto key = EntryKeyFor(e);
    if (!key.ok()) return key.status().WithContext("allowlist entry '" + e + "'");
    impl->allowlist.insert(Sha256(key->expression));
  }
  for (const std::string& pem : options.public_key_pems) {
    auto k = PublicKeyFromPem(pem);
    if (!k.ok()) return k.status().WithContext("public key");
    impl->keys.push_back(*k);
  }
  auto gen = LoadGeneration(impl->env, options.data_dir);
  if (!gen.ok()) return gen.status().WithContext(options.data_dir);
  impl->current.Publish(*gen);
  impl->cache = ResultCache::Open(JoinPath(options.data_dir, "cache.sqlite"));
  if (!options.server_url.empty() && options.verify) {
    FetcherOptions fo;
    fo.total_timeout_ms = options.verify_deadline_ms;
    fo.connect_timeout_ms = std::min<long>(options.verify_deadline_ms, 10000);
    fo.ca_bundle = options.ca_bundle;
    fo.proxy = options.proxy;
    auto f = NewCurlFetcher(fo);
    if (!f.ok()) return f.status();
    impl->fetcher = std::move(f).value();
  }
  std::unique_ptr<Client> client(new Client(std::move(impl)));
  Impl* raw = client->impl_.get();
  if (options.watch) {
    raw->watcher = std::thread([client_ptr = client.get(), raw] {
      std::unique_lock<std::mutex> l(raw->watch_mu);
      while (!raw->stop_watch) {
        raw->watch_cv.wait_for(l, kWatchInterval);
        if (raw->stop_watch) break;
        l.unlock();
        (void)client_ptr->Refresh();
        l.lock();
      }
    });
  }
  raw->worker = std::thread([client_ptr = client.get(), raw] {
    for (;;) {
      std::pair<std::string, std::function<void(Verdict)>> job;
      {
        std::unique_lock<std::mutex> l(raw->queue_mu);
        raw->queue_cv.wait(l, [raw] { return raw->stop_worker || !raw->queue.empty(); });
        if (raw->queue.empty()) return;  // stopping and drained
        job = std::move(raw->queue.front());
        raw->queue.pop_front();
      }
      job.second(client_ptr->Check(job.first));
    }
  });
  return client;
}

Status Client::Refresh() {
  std::lock_guard<std::mutex> l(impl_->refresh_mu);
  auto state = ReadStoreState(impl_->env, impl_->options.data_dir);
  if (!state.ok()) return state.status().code() == StatusCode::kNotFound ? Status::Ok() : state.status();
  {
    auto cur = impl_->current.Acquire();
    if (state->generation == cur->number && !cur->state.lists.empty() == !state->lists.empty()) return Status::Ok();
  }
  auto gen = LoadGeneration(impl_->env, impl_->options.data_dir);
  if (!gen.ok()) return gen.status();  // the current generation keeps serving; the watcher tries again
  impl_->current.Publish(*gen);  // lookups in flight finish on the old generation
  impl_->swaps.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

namespace {

LookupScratch& ThreadScratch() {
  thread_local LookupScratch scratch;
  return scratch;
}

bool AnyStale(const Generation& g, int64_t now) {
  if (g.lists.empty()) return true;  // nothing installed yet: nothing can be confidently safe
  for (const InstalledList& l : g.lists) {
    if (now >= l.expires_unix) return true;
  }
  return false;
}

// A local verdict from a lookup: safe / hit / invalid, with matches filled for hits.
Verdict LocalVerdict(const Generation& g, const Status& canon, const LookupScratch& s) {
  Verdict v;
  if (!canon.ok()) {
    v.kind = VerdictKind::kInvalid;
    v.error = canon.message();
    return v;
  }
  if (s.hit_count == 0) return v;
  v.kind = VerdictKind::kHit;
  for (size_t i = 0; i < s.hit_count; ++i) {
    const LookupHit& h = s.hits[i];
    Match m;
    m.list = g.lists[h.list].list;
    m.list_version = g.lists[h.list].version;
    m.layer = static_cast<Layer>(h.layer);
    if (h.expression == kIpExpression) {
      char buf[kMaxIpExpressionBytes];
      m.expression.assign(buf, IpPrefixExpression(s.url.ip, s.url.host_kind == HostKind::kIpv6, h.prefix_length, buf));
    } else {
      m.expression = std::string(s.expressions[h.expression]);
    }
    m.sha256_hex = ToHex(h.key);
    v.matches.push_back(std::move(m));
  }
  return v;
}

}  // namespace

Verdict Client::CheckLocal(std::string_view url) const {
  auto g = impl_->current.Acquire();
  LookupScratch& s = ThreadScratch();
  Status canon = g->chain.LookupUrl(url, &s);
  Verdict v = LocalVerdict(*g, canon, s);
  if (v.kind != VerdictKind::kInvalid) v.stale = AnyStale(*g, impl_->env->NowUnixSeconds());
  return v;
}

Verdict Client::Check(std::string_view url) const {
  Verdict v;
  std::vector<LocalHit> hits;
  {
    auto g = impl_->current.Acquire();
    LookupScratch& s = ThreadScratch();
    Status canon = g->chain.LookupUrl(url, &s);
    v = LocalVerdict(*g, canon, s);
    if (v.kind != VerdictKind::kInvalid) {
      v.stale = AnyStale(*g, impl_->env->NowUnixSeconds());
      // The allowlist overrides: any of the URL's own expressions listed there lets it through.
      bool allowed = false;
      for (size_t i = 0; i < s.expressions.size() && !allowed && !impl_->allowlist.empty(); ++i) {
        allowed = impl_->allowlist.count(s.digests[i]) > 0;
      }
      if (allowed) {
        v.kind = VerdictKind::kSafe;
        v.allowlisted = true;
      }
      if (v.kind == VerdictKind::kHit) hits = Impl::LocalHits(*g, s);
    }
  }  // the generation is released before any cache or network work
  impl_->lookups.fetch_add(1, std::memory_order_relaxed);
  if (v.kind == VerdictKind::kHit) v = impl_->Decide(hits, std::move(v));
  impl_->by_verdict[static_cast<int>(v.kind)].fetch_add(1, std::memory_order_relaxed);
  return v;
}

std::vector<LocalHit> Client::Impl::LocalHits(const Generation& g, const LookupScratch& s) {
  std::vector<LocalHit> hits;
  for (size_t i = 0; i < s.hit_count; ++i) {
    const LookupHit& h = s.hits[i];
    LocalHit lh;
    lh.list = g.lists[h.list].list;
    lh.list_version = g.lists[h.list].version;
    lh.full_hash = h.key;
    lh.emergency = g.lists[h.list].emergency;
    hits.push_back(std::move(lh));
  }
  return hits;
}

Verdict Client::Impl::Decide(const std::vector<LocalHit>& hits, Verdict v) const {
  const int64_t now = env->NowUnixSeconds();
  auto t0 = std::chrono::steady_clock::now();
  Fetcher* f = options.verify ? fetcher.get() : nullptr;
  DecideResult d = urlguard::Decide(hits, now, cache.get(), f, options.server_url);
  if (!d.from_cache && f != nullptr && !d.emergency) {
    verifications.fetch_add(1, std::memory_order_relaxed);
    verification_ns.fetch_add(static_cast<uint64_t>(
                                  std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
                                      .count()),
                              std::memory_order_relaxed);
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
  {
    std::lock_guard<std::mutex> l(impl_->queue_mu);
    if (impl_->stop_worker || impl_->queue.size() >= impl_->options.async_queue_capacity) return false;
    impl_->queue.emplace_back(std::move(url), std::move(done));
  }
  impl_->queue_cv.notify_one();
  return true;
}

Result<std::vector<SyncReport>> Client::SyncNow() {
  SyncerOptions so;
  so.data_dir = impl_->options.data_dir;
  so.server_url = impl_->options.server_url;
  so.trusted_keys = impl_->keys;
  so.lists = impl_->options.lists;
  so.fetch.ca_bundle = impl_->options.ca_bundle;
  so.fetch.proxy = impl_->options.proxy;
  auto syncer = Syncer::Open(impl_->env, so);
  if (!syncer.ok()) return syncer.status();
  std::vector<SyncReport> reports = (*syncer)->RunDue(impl_->env->NowUnixSeconds(), /*force=*/true);
  syncer->reset();  // release the lock before swapping in
  URLGUARD_RETURN_IF_ERROR(Refresh());
  return reports;
}

std::vector<ListStatus> Client::Lists() const {
  const StoreState state = impl_->current.Acquire()->state;  // a copy: no file I/O while holding a generation
  LoadedSyncState sched = LoadSyncState(impl_->env, impl_->options.data_dir);
  const int64_t now = impl_->env->NowUnixSeconds();
  std::vector<ListStatus> out;
  for (const ListState& l : state.lists) {
    ListStatus st;
    st.name = l.list;
    if (l.installed) {
      const InstalledList& i = *l.installed;
      st.version = i.version;
      for (uint64_t e : i.entries) st.entries += e;
      st.created_unix = i.created_unix;
      st.expires_unix = i.expires_unix;
      st.stale = now >= i.expires_unix;
      st.emergency = i.emergency;
    } else {
      st.stale = true;
    }
    for (const ListSyncState& s : sched.lists) {
      if (s.list != l.list) continue;
      st.last_sync_unix = s.last_attempt_unix;
      st.last_sync_result = s.last_result;
      st.last_sync_error = s.last_error;
      st.next_sync_unix = s.next_attempt_unix;
      st.consecutive_failures = s.consecutive_failures;
    }
    out.push_back(std::move(st));
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
