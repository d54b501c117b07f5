// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::Daemon (include/urlguard/daemon.h): the sync loop step, readiness, the loopback API routing and its
// bodies.
#include "urlguard/daemon.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/thread_annotations.h"
#include "daemon/metrics.h"
#include "urlguard/env.h"
#include "urlguard/keys.h"
#include "urlguard/render.h"

namespace urlguard {

struct Daemon::Impl {
  DaemonOptions options;
  Env* env = nullptr;                  // options.env or the default; the clock of Handle and Tick
  SyncOptions sync_options;
  std::unique_ptr<SyncEngine> engine;  // Tick/Reload thread only
  std::unique_ptr<Client> client;      // thread-safe
  std::atomic<uint64_t> sync_attempts[kSyncResultCount] = {};  // by SyncResult; relaxed (statistics only)
  std::atomic<uint64_t> list_limit_refusals{0};  // list indexes refused for naming more lists than a client keeps
  size_t warnings_logged = 0;                    // of engine->warnings(); Tick/Reload thread only

  // Readiness. ready_cv wakes WaitUntilReady after each pass and on CancelWaits.
  mutable Mutex ready_mu;
  mutable CondVar ready_cv;
  // engine->lists() after Open and after each pass; empty: not known yet.
  std::vector<std::string> subscribed GUARDED_BY(ready_mu);
  bool waits_cancelled GUARDED_BY(ready_mu) = false;

  void Log(const std::string& line) const {
    if (options.log) options.log(line);
  }
  // Runs the engine at `now` (logging each report), swaps the result in, publishes the subscribed lists and
  // wakes the waiters. The Tick thread.
  std::vector<SyncReport> RunPass(int64_t now, bool force);
  void PublishSubscribed() EXCLUDES(ready_mu) {
    {
      MutexLock l(&ready_mu);
      subscribed = engine->lists();
    }
    ready_cv.SignalAll();
  }
  // Ready(), and when not, the lists in the way ("" when the subscribed lists are not known yet).
  bool ReadyNow(std::string* why) const EXCLUDES(ready_mu);
};

std::vector<SyncReport> Daemon::Impl::RunPass(int64_t now, bool force) {
  std::vector<SyncReport> reports = engine->RunDueAt(now, force);
  for (const SyncReport& r : reports) {
    sync_attempts[static_cast<int>(r.result)].fetch_add(1, std::memory_order_relaxed);
    if (r.over_list_limit) list_limit_refusals.fetch_add(1, std::memory_order_relaxed);
    Log(RenderSyncReportText(r));
  }
  const std::vector<std::string>& warnings = engine->warnings();
  for (; warnings_logged < warnings.size(); ++warnings_logged) Log("warning: " + warnings[warnings_logged]);
  (void)client->Refresh();
  PublishSubscribed();
  return reports;
}

bool Daemon::Impl::ReadyNow(std::string* why) const {
  std::vector<std::string> names;
  {
    MutexLock l(&ready_mu);
    names = subscribed;
  }
  if (names.empty()) {  // discovery: the list index was not fetched yet
    if (why != nullptr) *why = "the list index was not fetched yet";
    return false;
  }
  std::vector<ListStatus> unready;
  const bool ready = ListsReady(client->Lists(), names, &unready);
  if (why != nullptr) *why = DescribeUnreadyLists(unready);
  return ready;
}

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Daemon::~Daemon() = default;

Result<std::unique_ptr<Daemon>> Daemon::Open(const DaemonOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->env = options.env != nullptr ? options.env : Env::Default();
  auto keys = TrustedKeys::LoadFiles(options.public_key_files, options.rotation_files, options.env);
  if (!keys.ok()) return keys.status();
  SyncOptions& so = impl->sync_options;
  so.data_dir = options.data_dir;
  so.server_url = options.server_url;
  so.trusted_keys = *keys;
  so.lists = options.lists;
  so.ca_bundle = options.ca_bundle;
  so.proxy = options.proxy;
  so.create_data_dir = true;
  so.env = options.env;
  auto engine = SyncEngine::Open(so);
  if (!engine.ok()) return engine.status();
  impl->engine = std::move(engine).value();
  for (const std::string& w : impl->engine->warnings()) impl->Log("warning: " + w);
  impl->warnings_logged = impl->engine->warnings().size();

  ClientOptions co;
  co.data_dir = options.data_dir;
  co.server_url = options.server_url;
  co.trusted_keys = *keys;
  co.lists = options.lists;  // a subscribed list that is not installed makes verdicts stale
  co.ca_bundle = options.ca_bundle;
  co.proxy = options.proxy;
  co.env = options.env;
  auto client = Client::Open(co);
  if (!client.ok()) return client.status();
  impl->client = std::move(client).value();
  impl->PublishSubscribed();
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

ApiResponse Daemon::Handle(const ApiRequest& request) const {
  if (request.method != "GET" && request.method != "HEAD") {
    return {405, "application/json", R"({"error":"method not allowed"})"};
  }
  const int64_t now = impl_->env->NowUnixSeconds();
  if (request.path == "/v1/check") {
    auto it = request.query.find("url");
    if (it == request.query.end()) return {400, "application/json", R"({"error":"missing url parameter"})"};
    CheckOptions o;
    o.want_canonical = true;
    return {200, "application/json", RenderVerdictJson(it->second, impl_->client->Check(it->second, o))};
  }
  if (request.path == "/status") {
    return {200, "application/json",
            RenderListStatusJson(impl_->client->Lists(), impl_->client->Stats().generation, now)};
  }
  if (request.path == "/metrics") {
    SyncAttemptCounts counts;
    for (int i = 0; i < kSyncResultCount; ++i) {
      counts.by_result[i] = impl_->sync_attempts[i].load(std::memory_order_relaxed);
    }
    counts.list_limit_refusals = impl_->list_limit_refusals.load(std::memory_order_relaxed);
    return {200, "text/plain; version=0.0.4",
            RenderDaemonMetrics(impl_->client->Stats(), impl_->client->Lists(), counts, now)};
  }
  return {404, "application/json", R"({"error":"not found"})"};
}

std::vector<SyncReport> Daemon::Tick() {
  const int64_t now = impl_->env->NowUnixSeconds();
  if (now < impl_->engine->NextDueUnix()) return {};
  std::vector<SyncReport> reports = impl_->RunPass(now, /*force=*/false);
  const int64_t next = impl_->engine->NextDueUnix();
  impl_->Log("next sync in " + std::to_string(next > now ? next - now : 0) + " s");
  return reports;
}

std::vector<SyncReport> Daemon::SyncNowUnlessReady() {
  if (Ready()) return {};
  const int64_t now = impl_->env->NowUnixSeconds();
  std::vector<SyncReport> reports = impl_->RunPass(now, /*force=*/true);
  const int64_t next = impl_->engine->NextDueUnix();
  impl_->Log("next sync in " + std::to_string(next > now ? next - now : 0) + " s");
  return reports;
}

bool Daemon::Ready() const { return impl_->ReadyNow(nullptr); }

Status Daemon::WaitUntilReady(int64_t timeout_ms) const {
  if (timeout_ms < 0) return Status::InvalidArgument("WaitUntilReady: negative timeout");
  constexpr int64_t kLookMillis = 200;  // also looks between passes: another process may install the lists
  const uint64_t start = impl_->env->NowMonotonicNanos();
  for (;;) {
    std::string why;
    if (impl_->ReadyNow(&why)) return Status::Ok();
    const int64_t waited_ms = static_cast<int64_t>((impl_->env->NowMonotonicNanos() - start) / 1000000);
    MutexLock l(&impl_->ready_mu);
    if (impl_->waits_cancelled) return Status::FailedPrecondition("stopped waiting for readiness");
    if (waited_ms >= timeout_ms) {
      const std::string waited = timeout_ms % 1000 == 0 ? std::to_string(timeout_ms / 1000) + " s"
                                                        : std::to_string(timeout_ms) + " ms";
      return Status::Unavailable("not ready after " + waited + ": " + why);
    }
    // The wait decides only when to look again; the Env's clock decides the timeout.
    impl_->ready_cv.WaitFor(&impl_->ready_mu,
                            std::chrono::milliseconds(std::min(kLookMillis, timeout_ms - waited_ms)));
  }
}

void Daemon::CancelWaits() {
  {
    MutexLock l(&impl_->ready_mu);
    impl_->waits_cancelled = true;
  }
  impl_->ready_cv.SignalAll();
}

Status Daemon::Reload() {
  auto keys = TrustedKeys::LoadFiles(impl_->options.public_key_files, impl_->options.rotation_files,
                                     impl_->options.env);
  if (!keys.ok()) {
    impl_->Log("reload: keeping the old keys: " + keys.status().ToString());
  } else {
    impl_->sync_options.trusted_keys = *keys;
    impl_->engine.reset();  // release the lock, then take it again with the new keys
    auto reopened = SyncEngine::Open(impl_->sync_options);
    if (!reopened.ok()) return reopened.status().WithContext("reload");
    impl_->engine = std::move(reopened).value();
    impl_->warnings_logged = 0;
    impl_->PublishSubscribed();
  }
  (void)impl_->client->Refresh();
  impl_->Log("reloaded");
  return Status::Ok();
}

size_t Daemon::installed_lists() const {
  const std::vector<ListStatus> lists = impl_->client->Lists();  // also names subscribed lists not installed
  return static_cast<size_t>(
      std::count_if(lists.begin(), lists.end(), [](const ListStatus& l) { return l.version != 0; }));
}

const Client& Daemon::client() const { return *impl_->client; }

}  // namespace urlguard
