// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// RunPublishLoop (include/urlguard/publish.h): a version every N seconds from the change files ingestors drop into
// a spool. Why a spool of files: an ingestor (a feed poller, a web form, `urlguard-publish update`-style fetching)
// needs nothing but rename(2) to hand over a change, and a crash of either side leaves every change in exactly
// one of incoming/, claimed/, done/ or rejected/.
//
// The claim protocol, each step durable (file written, directory fsynced) before the next:
//   1. marker claimed/target-V, V = committed + 1     (a crash here: an empty claim, dropped at the next cycle)
//   2. rename incoming/X -> claimed/X for every file  (a crash here: the rest is claimed at the next cycle)
//   3. Publish(add = claimed/*.add, remove = claimed/*.remove); its commit is manifest.json's rename
//   4. rename claimed/X -> done/X, then remove the marker
// At every cycle's start a marker with V <= the committed version means step 3 happened: step 4 is finished;
// a marker with V > committed means it did not: the batch is published again. An incremental version is
// previous - remove + add, so the batch published again gives the same content as if the crash had not happened.
#include "publish/publish_loop.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "feeds/feeds.h"
#include "format/manifest.h"
#include "format/repository_files.h"
#include "platform/fault_point.h"
#include "publish/publisher.h"
#include "signing/signer.h"
#include "urlguard/publish.h"

namespace urlguard {

namespace {

constexpr char kAddSuffix[] = ".add";
constexpr char kRemoveSuffix[] = ".remove";
constexpr char kMarkerPrefix[] = "target-";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::string SpoolIncomingDir(const std::string& spool) { return JoinPath(spool, "incoming"); }
std::string SpoolClaimedDir(const std::string& spool) { return JoinPath(spool, "claimed"); }
std::string SpoolDoneDir(const std::string& spool) { return JoinPath(spool, "done"); }
std::string SpoolRejectedDir(const std::string& spool) { return JoinPath(spool, "rejected"); }
std::string SpoolLockPath(const std::string& spool) { return JoinPath(spool, "loop.lock"); }
std::string SpoolRefreshFilePath(const std::string& spool) { return JoinPath(spool, "refresh.remove"); }

bool IsSpoolChangeFileName(std::string_view name) {
  if (name.empty() || name[0] == '.' || name.find('/') != std::string_view::npos) return false;
  for (std::string_view suffix : {std::string_view(kAddSuffix), std::string_view(kRemoveSuffix)}) {
    if (name.size() > suffix.size() && EndsWith(name, suffix)) return true;
  }
  return false;
}

bool IsSpoolAddFileName(std::string_view name) { return EndsWith(name, kAddSuffix); }

std::string ClaimMarkerName(uint64_t target_version) { return kMarkerPrefix + std::to_string(target_version); }

std::optional<uint64_t> ParseClaimMarkerName(std::string_view name) {
  const std::string_view prefix = kMarkerPrefix;
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 20 || digits[0] == '0') return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;  // over 2^64-1
    v = v * 10 + d;
  }
  return v;
}

std::string UnusedNameIn(Env* env, const std::string& dir, const std::string& name) {
  if (!env->FileExists(JoinPath(dir, name))) return name;
  // "NAME.add" -> "NAME-2.add": the suffix keeps saying what the file does.
  const size_t dot = name.rfind('.');
  const std::string stem = dot == std::string::npos ? name : name.substr(0, dot);
  const std::string ext = dot == std::string::npos ? "" : name.substr(dot);
  for (uint64_t n = 2;; ++n) {
    std::string candidate = stem + "-" + std::to_string(n) + ext;
    if (!env->FileExists(JoinPath(dir, candidate))) return candidate;
  }
}

namespace {

// The canonical serialization (docs/manifest-format.md §3) puts each top-level member on its own line indented
// by two spaces; nested members are indented deeper, so "\n  \"version\": " names the top-level one only.
std::optional<uint64_t> CanonicalTopLevelUint(std::string_view json, std::string_view member) {
  const std::string needle = "\n  \"" + std::string(member) + "\": ";
  const size_t at = json.find(needle);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + needle.size();
  uint64_t v = 0;
  size_t digits = 0;
  for (; i < json.size() && json[i] >= '0' && json[i] <= '9' && digits < 20; ++i, ++digits) {
    const uint64_t d = static_cast<uint64_t>(json[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  if (digits == 0) return std::nullopt;
  return v;
}

}  // namespace

Result<ManifestVersion> ReadCommittedVersion(Env* env, const std::string& repo_dir, const std::string& list) {
  const std::string path = JoinPath(PublicListDir(repo_dir, list), kManifestFileName);
  auto bytes = env->ReadFile(path, kMaxManifestBytes);
  if (!bytes.ok()) {
    if (bytes.status().code() == StatusCode::kNotFound) return ManifestVersion{};
    return bytes.status().WithContext(path);
  }
  auto v = ParseCommittedVersion(*bytes);
  if (!v.ok()) return v.status().WithContext(path);
  return v;
}

Result<ManifestVersion> ParseCommittedVersion(std::string_view bytes) {
  auto m = ParseManifest(bytes);
  if (m.ok()) return ManifestVersion{m->version, m->created_unix};
  if (bytes.size() > kMaxManifestBytes) return m.status();
  auto version = CanonicalTopLevelUint(bytes, "version");
  auto created = CanonicalTopLevelUint(bytes, "created_unix");
  if (!version || *version == 0 || !created || *created > static_cast<uint64_t>(INT64_MAX)) return m.status();
  return ManifestVersion{*version, static_cast<int64_t>(*created)};
}

AfterCommitThread::AfterCommitThread(std::function<void()> fn) : fn_(std::move(fn)), thread_([this] { Run(); }) {}

AfterCommitThread::~AfterCommitThread() {
  {
    MutexLock l(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  thread_.join();
}

void AfterCommitThread::Trigger() {
  {
    MutexLock l(&mu_);
    pending_ = true;
  }
  cv_.SignalAll();
}

uint64_t AfterCommitThread::runs() const {
  MutexLock l(&mu_);
  return runs_;
}

void AfterCommitThread::Run() {
  MutexLock l(&mu_);
  for (;;) {
    while (!pending_ && !stop_) cv_.Wait(&mu_);
    if (!pending_) return;  // stopping, nothing left to run
    pending_ = false;
    mu_.Unlock();
    fn_();
    mu_.Lock();
    ++runs_;
  }
}

int64_t SecondsToCadenceSlot(int64_t now_unix, int64_t created_unix, int64_t every_seconds) {
  constexpr int64_t kNoClock = int64_t{1} << 40;
  if (every_seconds < 1 || now_unix < 0 || now_unix >= kNoClock || created_unix < 0 || created_unix >= kNoClock) {
    return 0;
  }
  return ((created_unix - now_unix) % every_seconds + every_seconds) % every_seconds;
}

namespace {

Env* OrDefault(Env* env) { return env != nullptr ? env : Env::Default(); }

// What claimed/ holds.
struct ClaimedBatch {
  std::vector<uint64_t> markers;   // target versions (one, except after a crash between two marker steps)
  std::vector<std::string> files;  // change file names, sorted
};

class Loop {
 public:
  Loop(const PublishLoopOptions& o, Env* env, SigningKey key)
      : o_(o), env_(env), key_(std::move(key)), incoming_(SpoolIncomingDir(o.spool_dir)),
        claimed_(SpoolClaimedDir(o.spool_dir)), done_(SpoolDoneDir(o.spool_dir)),
        rejected_(SpoolRejectedDir(o.spool_dir)) {}

  void set_after_commit(AfterCommitThread* t) { after_commit_ = t; }
  PublishLoopSummary& summary() { return summary_; }

  // One cycle: finish or publish what is claimed, claim what came in, publish one version (or a refresh when due),
  // stamped with `cycle_unix` (its created_unix; 0: the Env's clock).
  Status Cycle(int64_t cycle_unix) {
    auto committed = ReadCommittedVersion(env_, o_.publish.repo_dir, o_.publish.list);
    if (!committed.ok()) return committed.status();
    auto batch = ReadClaimed();
    if (!batch.ok()) return batch.status();
    if (!batch->markers.empty() &&
        *std::max_element(batch->markers.begin(), batch->markers.end()) <= committed->version) {
      // Step 3 happened and the process stopped before step 4 ended: finish it.
      URLGUARD_RETURN_IF_ERROR(FinishBatch(&*batch));
    }
    const bool recovered = !batch->files.empty();

    auto names = env_->ListDir(incoming_);
    if (!names.ok()) return names.status().WithContext(incoming_);
    std::vector<std::string> incoming;
    for (const std::string& n : *names) {
      if (IsSpoolChangeFileName(n)) incoming.push_back(n);
    }
    const uint64_t target = committed->version + 1;
    if (!incoming.empty() || !batch->files.empty()) {
      URLGUARD_RETURN_IF_ERROR(SetMarker(&*batch, target));  // step 1
    }
    if (!incoming.empty()) {  // step 2
      for (const std::string& n : incoming) {
        const std::string dest = UnusedNameIn(env_, claimed_, n);
        URLGUARD_RETURN_IF_ERROR(env_->RenameFile(JoinPath(incoming_, n), JoinPath(claimed_, dest)));
        batch->files.push_back(dest);
      }
      URLGUARD_RETURN_IF_ERROR(env_->SyncDir(claimed_));
      URLGUARD_RETURN_IF_ERROR(env_->SyncDir(incoming_));
    }
    if (batch->files.empty()) {
      URLGUARD_RETURN_IF_ERROR(RemoveMarkers(&*batch));
      return MaybeRefresh(*committed, cycle_unix);
    }
    URLGUARD_FAULT_POINT("publish.loop.after-claim");
    return PublishBatch(&*batch, recovered, cycle_unix);
  }

 private:
  Result<ClaimedBatch> ReadClaimed() {
    auto names = env_->ListDir(claimed_);
    if (!names.ok()) return names.status().WithContext(claimed_);
    ClaimedBatch b;
    for (const std::string& n : *names) {
      if (auto v = ParseClaimMarkerName(n)) {
        b.markers.push_back(*v);
      } else if (IsSpoolChangeFileName(n)) {
        b.files.push_back(n);
      }
    }
    return b;
  }

  Status SetMarker(ClaimedBatch* b, uint64_t target) {
    if (b->markers.size() == 1 && b->markers[0] == target) return Status::Ok();
    URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env_, JoinPath(claimed_, ClaimMarkerName(target)), ""));
    URLGUARD_RETURN_IF_ERROR(env_->SyncDir(claimed_));
    for (uint64_t v : b->markers) {
      if (v != target) URLGUARD_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(claimed_, ClaimMarkerName(v))));
    }
    b->markers = {target};
    return env_->SyncDir(claimed_);
  }

  Status RemoveMarkers(ClaimedBatch* b) {
    if (b->markers.empty()) return Status::Ok();
    for (uint64_t v : b->markers) URLGUARD_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(claimed_, ClaimMarkerName(v))));
    b->markers.clear();
    return env_->SyncDir(claimed_);
  }

  // Step 4: the committed batch's files to done/, then the marker, then done/ pruned.
  Status FinishBatch(ClaimedBatch* b) {
    for (const std::string& n : b->files) {
      const std::string dest = UnusedNameIn(env_, done_, n);
      URLGUARD_RETURN_IF_ERROR(env_->RenameFile(JoinPath(claimed_, n), JoinPath(done_, dest)));
    }
    b->files.clear();
    URLGUARD_RETURN_IF_ERROR(env_->SyncDir(done_));
    URLGUARD_RETURN_IF_ERROR(env_->SyncDir(claimed_));
    URLGUARD_RETURN_IF_ERROR(RemoveMarkers(b));
    return PruneDone();
  }

  Status PruneDone() {
    auto names = env_->ListDir(done_);
    if (!names.ok()) return names.status().WithContext(done_);
    if (names->size() <= kPublishLoopDoneKept) return Status::Ok();
    std::vector<std::pair<int64_t, std::string>> by_age;
    for (const std::string& n : *names) {
      auto info = env_->Stat(JoinPath(done_, n));
      by_age.emplace_back(info.ok() ? info->mtime_unix : 0, n);
    }
    std::sort(by_age.begin(), by_age.end());
    for (size_t i = 0; i + kPublishLoopDoneKept < by_age.size(); ++i) {
      Status s = env_->RemoveFile(JoinPath(done_, by_age[i].second));
      if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
    }
    return Status::Ok();
  }

  bool Accepted(const std::string& name) const {
    const std::string path = JoinPath(claimed_, name);
    for (const std::string& a : o_.publish.accept) {
      if (a == name || a == path || a == JoinPath(incoming_, name)) return true;
    }
    return false;
  }

  PublishOptions BaseOptions(int64_t cycle_unix) const {
    PublishOptions po;
    CopyListPublishOptions(o_.publish, &po);
    po.min_wait_seconds = static_cast<uint32_t>(o_.every_seconds);
    po.now_unix = cycle_unix;
    // Checkpoints (manifest format 2) run on the maintenance thread, never inside a version.
    po.checkpoint_inline = false;
    return po;
  }

  // Step 3 (with the guard's refusals taken out one file at a time) and step 4.
  Status PublishBatch(ClaimedBatch* b, bool recovered, int64_t cycle_unix) {
    int64_t oldest_mtime = INT64_MAX;
    for (const std::string& n : b->files) {
      auto info = env_->Stat(JoinPath(claimed_, n));
      if (info.ok()) oldest_mtime = std::min(oldest_mtime, info->mtime_unix);
    }
    const auto started = std::chrono::steady_clock::now();
    for (;;) {
      PublishOptions po = BaseOptions(cycle_unix);
      for (const std::string& n : b->files) {
        FeedSpec spec;  // format auto-detected, as a bare --add PATH
        spec.path = JoinPath(claimed_, n);
        (IsSpoolAddFileName(n) ? po.add_inputs : po.remove_inputs).push_back(spec);
        if (Accepted(n)) po.accepted_inputs.push_back(spec.path);
      }
      PublishRefusal refusal = PublishRefusal::kNone;
      po.refusal = &refusal;
      auto r = Publish(env_, key_, po, o_.publish.progress);
      if (r.ok()) {
        URLGUARD_FAULT_POINT("publish.loop.after-commit");
        const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
        const uint64_t files = b->files.size();
        URLGUARD_RETURN_IF_ERROR(FinishBatch(b));
        PublishLoopVersion v;
        v.report = ToListPublishReport(*r);
        v.files = files;
        v.recovered = recovered;
        v.publish_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        v.ingest_to_commit_seconds = oldest_mtime == INT64_MAX ? 0 : std::max(0.0, now - static_cast<double>(oldest_mtime));
        Committed(v);
        return Status::Ok();
      }
      // Whose fault: the guard names the refused input "PATH: refused: ..." (feeds/feed_check.h CheckInputFile);
      // a file that cannot be read as a feed at all (a broken gzip stream: kCorruption; over the feed caps:
      // kResourceExhausted) is named "PATH: ..." too. Either way the file, not the cycle, is bad: publishing it
      // again would fail again, so it leaves the batch. Other failures (I/O, the list's lock) are the cycle's.
      const StatusCode code = r.status().code();
      std::string mark;
      if (refusal == PublishRefusal::kInputRefused) {
        mark = ": refused";
      } else if (code == StatusCode::kCorruption || code == StatusCode::kResourceExhausted) {
        mark = ": ";
      } else {
        return r.status();
      }
      auto it = std::find_if(b->files.begin(), b->files.end(), [&](const std::string& n) {
        return r.status().message().find(JoinPath(claimed_, n) + mark) != std::string::npos;
      });
      if (it == b->files.end()) return r.status();
      URLGUARD_RETURN_IF_ERROR(Reject(*it, r.status().message()));
      b->files.erase(it);
      if (b->files.empty()) return RemoveMarkers(b);
    }
  }

  Status Reject(const std::string& name, const std::string& why) {
    const std::string dest = JoinPath(rejected_, UnusedNameIn(env_, rejected_, name));
    URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env_, dest + ".why", why + "\n"));
    URLGUARD_RETURN_IF_ERROR(env_->RenameFile(JoinPath(claimed_, name), dest));
    URLGUARD_RETURN_IF_ERROR(env_->SyncDir(rejected_));
    URLGUARD_RETURN_IF_ERROR(env_->SyncDir(claimed_));
    ++summary_.rejected_files;
    if (o_.on_rejected) o_.on_rejected(PublishLoopRejection{dest, why});
    return Status::Ok();
  }

  // Without files: a version with no change once the current one is old enough, so clients never see it expire.
  Status MaybeRefresh(const ManifestVersion& committed, int64_t cycle_unix) {
    const int64_t after = o_.refresh_after_seconds > 0 ? o_.refresh_after_seconds : o_.publish.expires_in_seconds / 2;
    if (env_->NowUnixSeconds() - committed.created_unix < after) return Status::Ok();
    const std::string path = SpoolRefreshFilePath(o_.spool_dir);
    if (!env_->FileExists(path)) URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env_, path, ""));
    PublishOptions po = BaseOptions(cycle_unix);
    FeedSpec spec;
    spec.format = FeedFormat::kPlain;
    spec.path = path;
    po.remove_inputs.push_back(spec);
    po.accepted_inputs.push_back(path);  // empty on purpose
    const auto started = std::chrono::steady_clock::now();
    auto r = Publish(env_, key_, po, o_.publish.progress);
    if (!r.ok()) return r.status().WithContext("refreshing before expiry");
    PublishLoopVersion v;
    v.report = ToListPublishReport(*r);
    v.refresh = true;
    v.publish_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    Committed(v);
    return Status::Ok();
  }

  void Committed(const PublishLoopVersion& v) {
    ++summary_.versions;
    summary_.files += v.files;
    if (o_.on_version) o_.on_version(v);
    if (after_commit_ != nullptr) after_commit_->Trigger();
  }

  const PublishLoopOptions& o_;
  Env* env_;
  SigningKey key_;
  const std::string incoming_, claimed_, done_, rejected_;
  AfterCommitThread* after_commit_ = nullptr;
  PublishLoopSummary summary_;
};

}  // namespace

Result<PublishLoopSummary> RunPublishLoop(const PublishLoopOptions& o) {
  Env* env = OrDefault(o.publish.env);
  if (o.spool_dir.empty()) return Status::InvalidArgument("the loop needs a spool directory");
  if (o.min_every_seconds < 1 || o.every_seconds < o.min_every_seconds) {
    return Status::InvalidArgument("--every must be at least " + std::to_string(std::max<int64_t>(o.min_every_seconds, 1)) +
                                   " seconds");
  }
  if (o.every_seconds > kMaxManifestMinWaitSeconds) {
    return Status::InvalidArgument("--every must be at most " + std::to_string(kMaxManifestMinWaitSeconds) +
                                   " seconds (the manifests' min_wait_seconds)");
  }
  if (!o.publish.inputs.empty() || !o.publish.add.empty() || !o.publish.remove.empty()) {
    return Status::InvalidArgument("the loop takes its changes from the spool, not --input/--add/--remove");
  }
  if (!o.publish.state.empty()) {
    return Status::InvalidArgument(
        "the loop publishes a file-state list; with --state, run ingest and publish --state on a timer "
        "(docs/runbook-publishers.md)");
  }
  if (o.publish.expires_in_seconds <= 0) return Status::InvalidArgument("the expiry must be positive");
  if (!(o.publish.max_removal >= 0.0 && o.publish.max_removal <= 1.0)) {
    return Status::InvalidArgument("--max-removal takes a fraction 0 .. 1");
  }
  for (const std::string& dir : {SpoolIncomingDir(o.spool_dir), SpoolClaimedDir(o.spool_dir),
                                 SpoolDoneDir(o.spool_dir), SpoolRejectedDir(o.spool_dir)}) {
    URLGUARD_RETURN_IF_ERROR(env->CreateDirs(dir).WithContext(dir));
  }
  auto lock = env->LockFile(SpoolLockPath(o.spool_dir));
  if (!lock.ok()) {
    if (lock.status().code() == StatusCode::kFailedPrecondition) {
      return Status::FailedPrecondition("another loop holds " + SpoolLockPath(o.spool_dir));
    }
    return lock.status();
  }
  auto key = LoadSigningKey(env, o.publish.private_key_path);
  if (!key.ok()) return key.status();
  auto committed = ReadCommittedVersion(env, o.publish.repo_dir, o.publish.list);
  if (!committed.ok()) return committed.status();
  if (committed->version == 0) {
    return Status::FailedPrecondition("list " + o.publish.list +
                                      " has no version yet: publish a first one with --input, then start the loop");
  }

  Loop loop(o, env, std::move(*key));
  std::unique_ptr<AfterCommitThread> after_commit;
  // Maintenance after each commit: the caller's, else a checkpoint of a manifest format 2 list when it is due
  // (docs/versions.md §5), beside the next versions.
  std::function<void()> maintenance = o.after_commit;
  if (!maintenance) {
    maintenance = [&o] {
      PublishOptions po;
      CopyListPublishOptions(o.publish, &po);
      po.min_wait_seconds = static_cast<uint32_t>(o.every_seconds);
      Env* env = o.publish.env != nullptr ? o.publish.env : Env::Default();
      auto manifest = env->ReadFile(JoinPath(PublicListDir(po.repo_dir, po.list), kManifestFileName), kMaxManifestBytes);
      if (!manifest.ok()) return;
      auto m = ParseManifest(*manifest);
      if (!m.ok() || m->format != kManifestFormat2) return;
      uint64_t version = m->version;
      auto made = MakeCheckpointIfDue(env, po, &version);
      if (!made.ok() && o.on_error) o.on_error(made.status().WithContext("checkpoint"));
    };
  }
  if (maintenance) {
    after_commit = std::make_unique<AfterCommitThread>(maintenance);
    loop.set_after_commit(after_commit.get());
  }
  PublishLoopSummary& summary = loop.summary();
  auto wait = [&o](int64_t ms) {
    if (o.wait) return o.wait(ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return false;
  };
  // The cadence (docs/runbook-publishers.md, "A minute cadence"): slot k starts at the committed version's
  // created_unix + k*every on the wall clock, kept on the monotonic clock from the first one, and its version is
  // stamped with the slot's second. A restart or a long cycle would otherwise start a new cadence, and every
  // client would take a new place once (docs/sync-protocol.md §2): one version a cadence late for the fleet.
  const uint64_t every_ns = static_cast<uint64_t>(o.every_seconds) * 1000000000u;
  int64_t slot_unix = env->NowUnixSeconds();
  const int64_t first_wait = SecondsToCadenceSlot(slot_unix, committed->created_unix, o.every_seconds);
  slot_unix += first_wait;
  if (o.on_start) o.on_start(slot_unix, first_wait);
  bool stop = first_wait > 0 && wait(first_wait * 1000);
  uint64_t slot_mono = env->NowMonotonicNanos();
  while (!stop) {
    ++summary.cycles;
    // The slot's second, unless the wall clock no longer agrees with it (stepped, or the process was stopped):
    // then the clock's, and the cadence goes on from there.
    const int64_t wall = env->NowUnixSeconds();
    if (wall < slot_unix - 1 || wall > slot_unix + 2) {
      slot_unix = wall;
      slot_mono = env->NowMonotonicNanos();
    }
    Status s = loop.Cycle(slot_unix);
    if (!s.ok()) {
      ++summary.failed_cycles;
      if (o.on_error) o.on_error(s);
    }
    if (o.max_cycles != 0 && summary.cycles >= o.max_cycles) break;
    // The next slot after now: a version's own time does not stretch the cadence, and a cycle that ran past the
    // next slot skips it rather than start off the cadence.
    const uint64_t now = env->NowMonotonicNanos();
    const uint64_t slots = (now > slot_mono ? (now - slot_mono) / every_ns : 0) + 1;
    summary.skipped_slots += slots - 1;
    slot_mono += slots * every_ns;
    slot_unix += static_cast<int64_t>(slots) * o.every_seconds;
    stop = wait(static_cast<int64_t>((slot_mono - now + 999999) / 1000000));
  }
  after_commit.reset();  // waits for maintenance in progress
  return summary;
}

}  // namespace urlguard
