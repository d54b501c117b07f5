// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/publisher.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <climits>
#include <cstring>
#include <functional>
#include <deque>
#include <optional>
#include <thread>

#include <zlib.h>
#include <map>
#include <set>

#include "core/diff_codec.h"
#include "core/fingerprint_set.h"
#include "core/set_digest.h"
#include "core/byte_io.h"
#include "url/entry.h"
#include "core/snapshot.h"
#include "core/snapshot_writer.h"
#include "core/thread_annotations.h"
#include "platform/fault_point.h"
#include "platform/file_sink.h"
#include "format/deflate.h"
#include "format/manifest.h"
#include "format/repository_files.h"
#include "publish/entry_list.h"
#include "feeds/feed_check.h"
#include "format/full_hash_file.h"
#include "publish/list_index_writer.h"
#include "publish/repo_lock.h"
#include "publish/list_builder.h"
#include "publish/ingest.h"
#include "publish/seen_filter.h"
#include "publish/lsm_state.h"
#include "publish/catchup.h"
#include "publish/range_version.h"
#include "publish/state_delta.h"
#include "publish/state_file.h"
#include "publish/version_merge.h"

namespace urlguard {
namespace {

constexpr int kDeflateLevel = 9;
// A list keeps its universes while its size needs no more than them and they are at most this many times what
// it needs (false positives a little lower than the target are fine; far lower wastes bytes).
constexpr double kMaxUniverseSlack = 2.0;
// A new universe is sized with this headroom so that growth does not force a full snapshot every version.
constexpr double kUniverseHeadroom = 1.1;
// The seen filter's first stage holds 1 M keys at 1e-4 (it grows in stages beyond); its count-min sketch counts
// runs per key within 1e-5 of all sightings with 99% confidence: 2.4 MB + 11 MB on disk.
constexpr uint64_t kSeenInitialCapacity = 1'000'000;
constexpr double kSeenFpRate = 1e-4;
constexpr double kSeenCountEps = 1e-5;
constexpr double kSeenCountDelta = 0.01;

struct OpenSnapshot {
  uint64_t version = 0;
  std::unique_ptr<MappedFile> file;
  SnapshotView view;
};

Result<OpenSnapshot> OpenPrivateSnapshot(Env* env, const std::string& dir, uint64_t version) {
  OpenSnapshot s;
  s.version = version;
  std::string path = JoinPath(dir, PrivateSnapshotFileName(version));
  auto mapped = env->MapReadOnly(path);
  if (!mapped.ok()) return mapped.status();
  s.file = std::move(mapped).value();
  auto view = SnapshotView::Open(s.file->data(), s.file->size(), /*verify_checksum=*/true);
  if (!view.ok()) return view.status().WithContext(path);
  s.view = *view;
  // Verifying read every page; a diff reads the layers again in order. Hand them back meanwhile (large lists).
  ReleaseMappedPages(*s.file, 0, s.file->size());
  return s;
}

// Versions of the private copies, ascending.
std::vector<uint64_t> PrivateVersions(Env* env, const std::string& dir) {
  std::vector<uint64_t> versions;
  auto names = env->ListDir(dir);
  if (!names.ok()) return versions;
  for (const std::string& n : *names) {
    if (auto v = ParsePrivateSnapshotFileName(n)) versions.push_back(*v);
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

uint64_t LayerUniverse(const SnapshotView& v, LayerKind kind) {
  const LayerView* l = v.layer(kind);
  return l != nullptr && l->filter == FilterKind::kFingerprintArray ? l->fingerprints.universe() : 0;
}

// Writes zlib(`data`) to `path` (atomically: a temporary file, fsync, rename) through a 1 MiB output buffer, so the
// compressed copy is never held whole; fills `ref`'s size, SHA-256 and inflated size. Same bytes as DeflateBytes.
Status WriteDeflated(Env* env, const std::string& path, std::string_view data, ManifestFile* ref,
                     const std::function<void(size_t)>& consumed = nullptr) {
  constexpr size_t kChunk = size_t{1} << 20;
  URLGUARD_ASSIGN_OR_RETURN(auto file, CreateTempFile(env, path + ".tmp"));
  z_stream z{};
  if (deflateInit(&z, kDeflateLevel) != Z_OK) return Status::Internal("deflateInit failed");
  Sha256Hasher hasher;
  std::string out(kChunk, '\0');
  uint64_t written = 0;
  size_t in_offset = 0;
  int rc = Z_OK;
  Status status;
  do {
    if (z.avail_in == 0 && in_offset < data.size()) {
      if (consumed && in_offset > 0) consumed(in_offset);
      const size_t piece = std::min<size_t>(data.size() - in_offset, kChunk);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_offset));
      z.avail_in = static_cast<uInt>(piece);
      in_offset += piece;
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(kChunk);
    rc = deflate(&z, in_offset == data.size() ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      status = Status::Internal("deflate failed");
      break;
    }
    std::string_view piece(out.data(), kChunk - z.avail_out);
    hasher.Update(piece);
    written += piece.size();
    status = file->Append(piece);
  } while (status.ok() && rc != Z_STREAM_END);
  deflateEnd(&z);
  if (status.ok()) status = file->Sync();
  if (status.ok()) status = file->Close();
  if (status.ok()) status = env->RenameFile(path + ".tmp", path);
  if (!status.ok()) {
    (void)env->RemoveFile(path + ".tmp");
    return status.WithContext(path);
  }
  ref->size = written;
  ref->sha256 = hasher.Finish();
  ref->inflated_size = data.size();
  return env->SyncDir(DirName(path));
}

// The same from a mapped file, handing each deflated megabyte of the mapping back to the kernel
// (ReleaseMappedPages), so a large snapshot is never resident whole.
Status WriteDeflated(Env* env, const std::string& path, const MappedFile& file, ManifestFile* ref) {
  return WriteDeflated(env, path, std::string_view(reinterpret_cast<const char*>(file.data()), file.size()), ref,
                       [&file](size_t done) { ReleaseMappedPages(file, 0, done); });
}

Status WritePublic(Env* env, const std::string& path, std::string_view bytes) {
  return WriteFileAtomic(env, path, bytes);
}

// Per-layer counts and the ip layer's prefix lengths of a merged record stream.
struct LayerCounts {
  uint64_t entries[3] = {0, 0, 0};
  IpPrefixLengths ip_prefixes;
  void Add(const KeyRecord& r) {
    ++entries[r.layer];
    if (r.layer == static_cast<uint8_t>(LayerKind::kIp)) {
      if (r.ipv6) {
        ip_prefixes.AddV6(r.prefix_length);
      } else {
        ip_prefixes.AddV4(r.prefix_length);
      }
    }
  }
  uint64_t total() const { return entries[0] + entries[1] + entries[2]; }
};

// Second pass over the merged records (tmp/merged.run, provisional threat ids): writes the private state file
// with the final threat table and ids, and counts each layer's distinct fingerprints under `universe`.
Status WriteStateFile(Env* env, const std::string& merged_path, const std::string& state_path,
                      const std::string& list, uint64_t version, const std::vector<std::string>& final_threats,
                      const std::vector<uint16_t>& final_id, const uint64_t universe[3], uint64_t fp_counts[3]) {
  URLGUARD_ASSIGN_OR_RETURN(auto state, StateFileWriter::Create(env, state_path, list, version, final_threats));
  URLGUARD_ASSIGN_OR_RETURN(auto reader, RunFileReader::Open(merged_path, sizeof(KeyRecord), kStateBufferBytes));
  bool have_last[3] = {false, false, false};
  uint64_t last[3] = {0, 0, 0};
  KeyRecord r;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, reader->Next(&r));
    if (!has) break;
    r.threat = final_id[r.threat];
    URLGUARD_RETURN_IF_ERROR(state->Add(r));
    // Keys ascend within a layer and MulHi64 is monotone: equal neighbours are the only collisions.
    const uint64_t fp = MulHi64(r.key, universe[r.layer]);
    if (!have_last[r.layer] || last[r.layer] != fp) ++fp_counts[r.layer];
    have_last[r.layer] = true;
    last[r.layer] = fp;
  }
  return state->Finish();
}

// Third pass: the snapshot, streamed from the state file by core/snapshot_writer.h (memory: its buffers).
// Returns the state hash (the snapshot's trailing SHA-256).
// `state_path` is a state file, or (`merged_run`) the run of merged records an incremental version writes no state
// file from: the same records in the same order.
Result<Sha256Digest> WriteSnapshotFromState(Env* env, const std::string& state_path, const std::string& snapshot_path,
                                            const BuildOptions& bo, const LayerCounts& counts,
                                            const uint64_t fp_counts[3], bool merged_run = false) {
  std::vector<StreamLayerSpec> specs;
  for (int li = 0; li < 3; ++li) {
    if (fp_counts[li] == 0) continue;
    StreamLayerSpec spec;
    spec.kind = static_cast<LayerKind>(li);
    spec.filter = FilterKind::kFingerprintArray;
    spec.universe = bo.universe_override[li];
    spec.entries = fp_counts[li];
    if (spec.kind == LayerKind::kIp) spec.ip_prefixes = counts.ip_prefixes;
    specs.push_back(spec);
  }
  SnapshotHeaderFields header;
  header.list_name = bo.list_name;
  header.version = bo.version;
  header.created_unix = bo.created_unix;
  header.key_hash = kPublisherKeyHash;
  // The writer is pure (core/byte_sink.h): the file, its spills next to it, the sync and the rename are ours.
  const std::string tmp = snapshot_path + ".tmp";
  URLGUARD_ASSIGN_OR_RETURN(auto file, CreateTempFile(env, tmp));
  WritableFileSink sink(file.get());
  TempFileSpills spills(env, tmp);
  auto write = [&]() -> Result<Sha256Digest> {
    URLGUARD_ASSIGN_OR_RETURN(auto writer, SnapshotWriter::Create(&sink, &spills, header, specs));
    std::unique_ptr<StateFileReader> state;
    std::unique_ptr<RunFileReader> run;
    if (merged_run) {
      URLGUARD_ASSIGN_OR_RETURN(run, RunFileReader::Open(state_path, sizeof(KeyRecord), kStateBufferBytes));
    } else {
      URLGUARD_ASSIGN_OR_RETURN(state, StateFileReader::Open(state_path));
    }
    auto next = [&](KeyRecord* out) { return merged_run ? run->Next(out) : state->Next(out); };
    int layer = specs.empty() ? 0 : static_cast<int>(specs.front().kind);
    size_t spec_index = 0;
    bool have_last = false;
    uint64_t last = 0;
    KeyRecord r;
    for (;;) {
      URLGUARD_ASSIGN_OR_RETURN(bool has, next(&r));
      if (!has) break;
      if (r.layer != layer) {
        URLGUARD_RETURN_IF_ERROR(writer->NextLayer());
        layer = static_cast<int>(specs[++spec_index].kind);
        have_last = false;
        if (r.layer != layer) return Status::Internal("state file layers out of order");
      }
      const uint64_t fp = MulHi64(r.key, specs[spec_index].universe);
      if (have_last && fp == last) continue;
      URLGUARD_RETURN_IF_ERROR(writer->Add(fp));
      have_last = true;
      last = fp;
    }
    URLGUARD_ASSIGN_OR_RETURN(Sha256Digest digest, writer->Finish());
    Status s = file->Sync();
    if (s.ok()) s = file->Close();
    if (!s.ok()) return s.WithContext(tmp);
    file.reset();
    URLGUARD_RETURN_IF_ERROR(env->RenameFile(tmp, snapshot_path));
    return digest;
  };
  Result<Sha256Digest> digest = write();
  if (!digest.ok()) {
    file.reset();
    (void)env->RemoveFile(tmp);
    return digest.status();
  }
  Status s = env->SyncDir(DirName(snapshot_path));
  if (!s.ok()) return s.WithContext(snapshot_path + " renamed, but not yet durable");
  return digest;
}

// MakeLayerDiff (core/diff_codec.h) over two mapped layers, streaming: only the changes are held. Either layer may
// be missing (null): an empty set.
LayerDiff StreamLayerDiff(LayerKind kind, uint64_t universe, const LayerView* old_layer, const LayerView* new_layer) {
  LayerDiff d;
  d.layer = kind;
  d.universe = universe;
  std::optional<FingerprintSetCursor> oc, nc;
  if (old_layer != nullptr) oc.emplace(old_layer->fingerprints);
  if (new_layer != nullptr) nc.emplace(new_layer->fingerprints);
  uint64_t ov = 0, nv = 0;
  bool oh = oc && oc->Next(&ov), nh = nc && nc->Next(&nv);
  uint64_t i = 0;
  while (oh || nh) {
    if (!nh || (oh && ov < nv)) {
      d.removed_positions.push_back(i++);
      oh = oc->Next(&ov);
    } else if (!oh || nv < ov) {
      d.added.push_back(nv);
      nh = nc->Next(&nv);
    } else {
      ++i;
      oh = oc->Next(&ov);
      nh = nc->Next(&nv);
    }
  }
  d.old_count = old_layer != nullptr ? old_layer->fingerprints.size() : 0;
  d.new_count = new_layer != nullptr ? new_layer->fingerprints.size() : 0;
  return d;
}

// Writes the DNS export's entry list (publish/entry_list.h) from the merged clear records, streaming.
Status WriteEntryListFrom(Env* env, const std::string& path, const std::string& list, uint64_t version,
                          uint64_t url_entries, ClearVersionMerge* clear) {
  ClearRecord c;
  return WriteEntryListFile(env, path, list, version, url_entries, [&](bool* ip, std::string* value) -> Result<bool> {
    URLGUARD_ASSIGN_OR_RETURN(bool has, clear->Next(&c));
    if (has) {
      *ip = c.kind != 0;
      value->assign(c.view());
    }
    return has;
  });
}

// The version's full-hash file (format/full_hash_file.h) from records in (sha256, layer) order, streaming. Counts
// the run's keys for the seen filter (the first 8 bytes of each SHA-256, so already ascending) and, when `spool`,
// writes the distinct ones to tmp/seen.run for QueryAndRecordSeen. Needs no seen filter: it runs beside the snapshot
// chain while the filter (and its lock) is taken only afterwards, as before.
Status WriteFullHashes(Env* env, const std::string& path, const std::string& tmp_dir, const std::string& list,
                       uint64_t version, uint64_t expected_records, const std::vector<std::string>& threats,
                       const std::vector<uint16_t>& final_id, ShaSorter* by_sha, bool spool, SeenRunSummary* run) {
  URLGUARD_ASSIGN_OR_RETURN(FullHashFileWriter hashes,
                            FullHashFileWriter::Create(env, path, list, version, threats, expected_records));
  const std::string seen_run = JoinPath(tmp_dir, kSeenRunFileName);
  std::unique_ptr<RunFileWriter> keys;
  if (spool) {
    URLGUARD_ASSIGN_OR_RETURN(keys, RunFileWriter::Create(env, seen_run));
  }
  *run = SeenRunSummary{};
  bool have_last = false;
  uint64_t last = 0;
  KeyRecord r;
  Sha256Digest sha;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, by_sha->Next(&r));
    if (!has) break;
    std::memcpy(sha.data(), r.sha256, 32);
    URLGUARD_RETURN_IF_ERROR(hashes.Add(sha, static_cast<LayerKind>(r.layer), final_id[r.threat]));
    const uint64_t key = DigestPrefix64(sha);
    ++run->keys;
    if (have_last && key == last) {
      ++run->duplicates;
      continue;
    }
    have_last = true;
    last = key;
    ++run->distinct;
    if (keys) URLGUARD_RETURN_IF_ERROR(keys->Append(&key, sizeof(key)));
  }
  if (keys) URLGUARD_RETURN_IF_ERROR(keys->Close());
  return hashes.Finish();
}

// Calls `each` for every key of a spool file, in order, after prefetching the seen filter's memory for the key
// kAhead places later: each key reads a block per Bloom stage and a counter per sketch row, all at random, and at
// 10 M keys the filter is far larger than the cache, so overlapping the misses of several keys is what pays.
template <typename Fn>
Status ForEachSpooledKey(const std::string& path, const SeenFilter& seen, bool sketch, Fn each) {
  constexpr size_t kChunk = 4096, kAhead = 8;
  URLGUARD_ASSIGN_OR_RETURN(auto reader, RunFileReader::Open(path, sizeof(uint64_t), kMinRunReadBuffer));
  std::vector<uint64_t> chunk;
  chunk.reserve(kChunk);
  bool more = true;
  while (more) {
    chunk.clear();
    uint64_t key;
    while (chunk.size() < kChunk) {
      URLGUARD_ASSIGN_OR_RETURN(more, reader->Next(&key));
      if (!more) break;
      chunk.push_back(key);
    }
    for (size_t i = 0; i < chunk.size() && i < kAhead; ++i) seen.Prefetch(chunk[i], sketch);
    for (size_t i = 0; i < chunk.size(); ++i) {
      if (i + kAhead < chunk.size()) seen.Prefetch(chunk[i + kAhead], sketch);
      each(chunk[i]);
    }
  }
  return Status::Ok();
}

// Records the run spooled by WriteFullHashes in the seen filter the way SeenFilter::RecordRun does: every distinct
// key is queried before any is recorded (so no key of this run influences another's answer), then each is recorded,
// its Bloom insertion deferred so that the run's new keys enter the stages in SeenInsertionRank order, not in the
// spool's ascending order (which overloaded a key range of every stage: publish/seen_filter.h, "Insertion order";
// 8 bytes per new key meanwhile). The spool is removed.
Status QueryAndRecordSeen(Env* env, const std::string& tmp_dir, SeenFilter* seen, SeenRunSummary* run) {
  const std::string seen_run = JoinPath(tmp_dir, kSeenRunFileName);
  // Query reads the sketch only after a Bloom hit (rare on a first run): prefetch the stages only.
  Status s = ForEachSpooledKey(seen_run, *seen, /*sketch=*/false, [&](uint64_t key) {
    if (seen->Query(key).seen_before) {
      ++run->seen_before;
    } else {
      ++run->new_keys;
    }
  });
  std::vector<uint64_t> pending;
  if (s.ok()) {
    pending.reserve(run->new_keys);
    s = ForEachSpooledKey(seen_run, *seen, /*sketch=*/true,
                          [&](uint64_t key) { (void)seen->RecordDeferringBloom(key, &pending); });
  }
  if (s.ok()) seen->InsertDeferred(&pending);
  (void)env->RemoveFile(seen_run);
  return s;
}

// Hands records to a sorter on a thread of its own, in blocks, when `threaded`: the sorter's spills (a sort of up to
// its budget, then a write) overlap the producer (the merge) instead of stopping it. Records reach the sorter in
// the order given, through writer 0, so its runs and output are those of calling Add directly; unthreaded, that is
// what it does. Not thread-safe: one producer.
class SorterFeed {
 public:
  SorterFeed(ShaSorter* sorter, bool threaded) : sorter_(sorter), threaded_(threaded) {
    if (threaded_) {
      block_.reserve(kBlockRecords);
      thread_ = std::thread([this] { Consume(); });
    }
  }
  SorterFeed(const SorterFeed&) = delete;
  SorterFeed& operator=(const SorterFeed&) = delete;
  ~SorterFeed() { (void)Finish(); }

  Status Add(const KeyRecord& r) {
    if (!threaded_) return sorter_->Add(0, r);
    block_.push_back(r);
    if (block_.size() < kBlockRecords) return Status::Ok();
    return Hand(false);
  }
  // Hands the last block over and waits until the sorter has every record; the sorter's first error.
  Status Finish() {
    if (!threaded_) return Status::Ok();
    if (thread_.joinable()) {
      (void)Hand(true);
      thread_.join();
    }
    MutexLock lock(&mutex_);
    return error_;
  }

 private:
  // 8 Ki records (448 KiB) a block; at most two blocks wait, so the feed holds about 1.3 MiB beyond the sorter's
  // budget.
  static constexpr size_t kBlockRecords = size_t{1} << 13;
  static constexpr size_t kMaxWaiting = 2;

  Status Hand(bool last) EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    while (waiting_.size() >= kMaxWaiting && error_.ok()) changed_.Wait(&mutex_);
    if (!error_.ok()) return error_;
    waiting_.push_back(std::move(block_));
    block_ = std::vector<KeyRecord>();
    if (!last) block_.reserve(kBlockRecords);
    done_ = last;
    changed_.SignalAll();
    return Status::Ok();
  }

  void Consume() EXCLUDES(mutex_) {
    for (;;) {
      std::vector<KeyRecord> block;
      {
        MutexLock lock(&mutex_);
        while (waiting_.empty() && !done_) changed_.Wait(&mutex_);
        if (waiting_.empty()) return;
        block = std::move(waiting_.front());
        waiting_.pop_front();
        changed_.SignalAll();
      }
      Status s;
      for (const KeyRecord& r : block) {
        s = sorter_->Add(0, r);
        if (!s.ok()) break;
      }
      if (!s.ok()) {
        MutexLock lock(&mutex_);
        error_ = std::move(s);
        changed_.SignalAll();
        return;
      }
    }
  }

  ShaSorter* sorter_;
  const bool threaded_;
  std::vector<KeyRecord> block_;  // the producer's block being filled
  std::thread thread_;
  Mutex mutex_;
  CondVar changed_;  // a block was handed over or taken, the last one was handed over, or the sorter failed
  std::deque<std::vector<KeyRecord>> waiting_ GUARDED_BY(mutex_);
  bool done_ GUARDED_BY(mutex_) = false;
  Status error_ GUARDED_BY(mutex_);
};

// Runs `f` on every return path (e.g. joins a thread whose job's captures must outlive it: declare this after them).
struct OnExit {
  std::function<void()> f;
  ~OnExit() { f(); }
};

// The new version's number: one more than the last version the store committed (fleet mode,
// format/version_store.h), else one more than the newest private copy.
uint64_t AllocateVersion(const VersionStore* store, const CommittedVersion& committed,
                         const std::vector<uint64_t>& versions) {
  if (store != nullptr) return committed.version + 1;
  return versions.empty() ? 1 : versions.back() + 1;
}

// Step 5: the manifest and its signature, written last so every file they name exists. A client that reads the new
// manifest with the old signature (or the reverse) sees a bad signature and retries later.
// The commit point: without a store, the rename of manifest.json (before it, nothing is committed: an error is
// returned); with a version store, the store's commit (the files below only show the version: when writing them
// fails afterwards, the version is committed all the same, `*after_commit` says what failed and the list's next
// run writes them from the store).
Status CommitManifest(Env* env, const SigningKey& key, const std::string& public_dir, const Manifest& m,
                      VersionStore* store, std::string* after_commit) {
  URLGUARD_RETURN_IF_ERROR(ValidateManifest(m));
  std::string manifest = SerializeManifest(m);
  std::string signature = MakeManifestSignatureFile(key, manifest);
  if (store != nullptr) {
    URLGUARD_RETURN_IF_ERROR(store->CommitVersion({m.list, m.version, manifest, signature, m.state_sha256}));
  }
  Status written = WritePublic(env, JoinPath(public_dir, kManifestSignatureFileName), signature);
  if (written.ok()) written = WritePublic(env, JoinPath(public_dir, kManifestFileName), manifest);
  if (!written.ok() && store != nullptr) {
    *after_commit = "version " + std::to_string(m.version) + " is committed in the version store, but its manifest "
                    "files were not written (the next publish run of " + m.list + " writes them): " +
                    written.ToString();
    return Status::Ok();
  }
  return written;
}

// The guard's input check (docs/feeds.md, "The publication guard") on the feeds one IngestFeeds call read.
Status CheckInputs(const PublishOptions& o, const std::vector<FeedSpec>& specs, const IngestReport& ingest) {
  if (!o.check_inputs) return Status::Ok();
  for (size_t i = 0; i < specs.size() && i < ingest.feeds.size(); ++i) {
    const bool accepted = std::find(o.accepted_inputs.begin(), o.accepted_inputs.end(), specs[i].path) !=
                          o.accepted_inputs.end();
    Status s = CheckInputFile(specs[i].path, ingest.feeds[i], o.max_rejected_fraction, accepted);
    if (!s.ok()) {
      if (o.refusal != nullptr) *o.refusal = PublishRefusal::kInputRefused;
      return s;
    }
  }
  return Status::Ok();
}

// Counts the previous version's entries that the new version no longer has (the removal cap, docs/feeds.md,
// "The publication guard"): walks the previous state file beside the merged records, both in (layer, key,
// SHA-256) order.
class RemovedCounter {
 public:
  // `previous`: the previous version's records in ByLayerKey order (a LsmState cursor).
  explicit RemovedCounter(std::function<Result<bool>(KeyRecord*)> previous) : previous_(std::move(previous)) {}

  // `r`: the next merged record of the new version.
  Status Next(const KeyRecord& r) {
    for (;;) {
      URLGUARD_RETURN_IF_ERROR(Peek());
      if (!has_) return Status::Ok();
      const int c = CompareEntry(head_, r);
      if (c > 0) return Status::Ok();
      if (c < 0) ++removed_;
      ready_ = false;
      if (c == 0) return Status::Ok();
    }
  }
  // After the last merged record: the rest of the previous version left.
  Status Finish() {
    for (;;) {
      URLGUARD_RETURN_IF_ERROR(Peek());
      if (!has_) return Status::Ok();
      ++removed_;
      ready_ = false;
    }
  }
  uint64_t removed() const { return removed_; }
  uint64_t previous_records() const { return previous_records_; }  // after Finish()

 private:
  Status Peek() {
    if (ready_) return Status::Ok();
    URLGUARD_ASSIGN_OR_RETURN(has_, previous_(&head_));
    if (has_) ++previous_records_;
    ready_ = true;
    return Status::Ok();
  }

  std::function<Result<bool>(KeyRecord*)> previous_;
  KeyRecord head_;
  bool has_ = false, ready_ = false;
  uint64_t removed_ = 0;
  uint64_t previous_records_ = 0;
};

// The effective change of an incremental version (design17 §1), from the sorted added and removed entries and
// lookups in the previous version's state: O(changes log N), whatever the list's size. The rules are
// VersionMerge's (publish/version_merge.h): an added entry is put when it was absent or had another threat name
// (an entry both removed and added keeps the added record); a removed entry is deleted when it was present.
// Records come out in ByLayerKey order, unique, `reserved` = DeltaOp, a put's threat indexing `threats` (the
// names the puts use, sorted).
struct EffectiveChange {
  std::vector<KeyRecord> records;
  std::vector<std::string> threats;
  uint64_t puts = 0, deletes = 0;
  // Per layer, the entries the version adds (absent before; a put may also only change a listed entry's threat)
  // and removes: what the entry-list delta is checked against.
  std::array<uint64_t, kLayerKindCount> entries_added{}, entries_removed{};
  // Given a universe: for each of `records`, the entries of the state before in its key's fingerprint range
  // (TouchedFingerprintsOf), found by the lookup that found the record's entry (LsmState::FindInKeyRange).
  std::vector<uint64_t> before_in_range;
  // The domain and ip entries looked up (added or removed), ascending, `reserved` 1 when listed before: the
  // entry-list delta's answers (EntryListDeltaOf), without looking them up again.
  std::vector<KeyRecord> looked_up;
};

// `universe` (a format 2 version: the checkpoint's) also fills before_in_range; without it (nullptr) every
// lookup is a Find.
Result<EffectiveChange> ComputeEffectiveChange(const LsmState& previous, KeySorter* added,
                                               const std::vector<std::string>& added_names, KeySorter* removed,
                                               const std::array<uint64_t, kLayerKindCount>* universe = nullptr) {
  EffectiveChange out;
  // The merged stream in batches: each batch's lookups read their base pages ahead together
  // (LsmState::PrefetchLookups), so a cold base costs parallel reads rather than one wait per page.
  constexpr size_t kLookupBatch = 4096;
  struct Pending {
    KeyRecord rec;
    bool added = false;  // an added entry (perhaps removed too: the added record stays); else removed only
    std::optional<KeyRange> range;  // its fingerprint's key range, given a universe for its layer
  };
  // (A layer without a universe has no touched fingerprints: TouchedFingerprintsOf refuses the version.)
  auto range_of = [&](const KeyRecord& e) -> std::optional<KeyRange> {
    if (universe == nullptr || e.layer >= kLayerKindCount || (*universe)[e.layer] == 0) return std::nullopt;
    const uint64_t u = (*universe)[e.layer];
    return KeyRangeOfFingerprint(MulHi64(e.key, u), u);
  };
  std::vector<Pending> batch;
  std::vector<LsmState::LookupKey> lookups;
  LsmState::Finger finger;  // the merged stream ascends: each search starts where the previous one ended
  batch.reserve(kLookupBatch);
  lookups.reserve(kLookupBatch);
  KeyRecord a, r;
  URLGUARD_ASSIGN_OR_RETURN(bool have_a, added->Next(&a));
  URLGUARD_ASSIGN_OR_RETURN(bool have_r, removed->Next(&r));
  while (have_a || have_r) {
    batch.clear();
    lookups.clear();
    while ((have_a || have_r) && batch.size() < kLookupBatch) {
      const int c = !have_a ? 1 : !have_r ? -1 : CompareEntry(a, r);
      batch.push_back({c <= 0 ? a : r, c <= 0, range_of(c <= 0 ? a : r)});
      if (c <= 0) {
        URLGUARD_ASSIGN_OR_RETURN(have_a, added->Next(&a));
      }
      if (c >= 0) {
        URLGUARD_ASSIGN_OR_RETURN(have_r, removed->Next(&r));
      }
    }
    // A lookup of an entry's fingerprint range starts at the range's first key: read ahead from there.
    for (const Pending& p : batch) lookups.push_back({p.rec.layer, p.range ? p.range->first : p.rec.key});
    previous.PrefetchLookups(lookups);
    for (const Pending& p : batch) {
      const KeyRecord& e = p.rec;
      std::optional<KeyRecord> old;
      uint64_t in_range = 0;
      if (p.range) {
        URLGUARD_ASSIGN_OR_RETURN(old, previous.FindInKeyRange(e.layer, e.key, e.sha256, p.range->first,
                                                               p.range->last, &in_range, &finger));
      } else {
        old = previous.Find(e.layer, e.key, e.sha256);
      }
      if (e.layer != static_cast<uint8_t>(LayerKind::kUrl)) {
        KeyRecord seen = e;
        seen.reserved = old ? 1 : 0;
        out.looked_up.push_back(seen);
      }
      const size_t records_before = out.records.size();
      if (p.added) {
        if (!old) ++out.entries_added[e.layer];
        if (!old || previous.threats()[old->threat] != added_names[e.threat]) {
          KeyRecord put = e;
          put.seq = 0;
          put.reserved = static_cast<uint8_t>(DeltaOp::kPut);
          out.records.push_back(put);
          ++out.puts;
        }
      } else if (old) {
        KeyRecord del = *old;
        del.threat = 0;
        del.reserved = static_cast<uint8_t>(DeltaOp::kDelete);
        out.records.push_back(del);
        ++out.deletes;
        ++out.entries_removed[e.layer];
      }
      if (universe != nullptr && out.records.size() != records_before) out.before_in_range.push_back(in_range);
    }
  }
  // The delta's own threat table: the names its puts use, sorted.
  for (const KeyRecord& rec : out.records) {
    if (rec.reserved == static_cast<uint8_t>(DeltaOp::kPut)) out.threats.push_back(added_names[rec.threat]);
  }
  std::sort(out.threats.begin(), out.threats.end());
  out.threats.erase(std::unique(out.threats.begin(), out.threats.end()), out.threats.end());
  for (KeyRecord& rec : out.records) {
    if (rec.reserved != static_cast<uint8_t>(DeltaOp::kPut)) continue;
    rec.threat = static_cast<uint16_t>(std::lower_bound(out.threats.begin(), out.threats.end(),
                                                        added_names[rec.threat]) - out.threats.begin());
  }
  return out;
}

// The entry-list delta of an incremental version (publish/entry_list.h, V.entries-delta): the domain and ip
// entries in clear that it adds (absent at V - 1) and removes (present at V - 1), found by looking each added or
// removed name up in the state before the version, and the change of the url-layer count. O(changes log N), as
// the effective change it mirrors: the names are checked against its counts, so the DNS export can never drift
// from what the snapshot lists.
Result<EntryListDelta> EntryListDeltaOf(const LsmState& before, const EffectiveChange& change, ClearSorter* added,
                                        ClearSorter* removed, const std::string& list, uint64_t version) {
  EntryListDelta d;
  d.list = list;
  d.version = version;
  auto present = [&](const ClearRecord& c) {
    // The entry's expression as ingest made it (publish/ingest.cc, RecordEntry): a domain's has its final '/'.
    std::string expression(c.view());
    if (c.kind == 0) expression += '/';
    const Sha256Digest sha = Sha256(expression);
    const uint8_t layer = static_cast<uint8_t>(c.kind == 0 ? LayerKind::kDomain : LayerKind::kIp);
    KeyRecord probe;
    probe.layer = layer;
    probe.key = LocalKeyFor(expression, sha);
    std::memcpy(probe.sha256, sha.data(), 32);
    // The effective change looked every added and removed entry up already; a name it did not see (none should
    // be: ingest makes both records of an entry) is looked up here.
    auto it = std::lower_bound(change.looked_up.begin(), change.looked_up.end(), probe,
                               [](const KeyRecord& a, const KeyRecord& b) { return CompareEntry(a, b) < 0; });
    if (it != change.looked_up.end() && CompareEntry(*it, probe) == 0) return it->reserved == 1;
    return before.Find(layer, probe.key, probe.sha256).has_value();
  };
  ClearRecord a, r;
  URLGUARD_ASSIGN_OR_RETURN(bool have_a, added->Next(&a));
  URLGUARD_ASSIGN_OR_RETURN(bool have_r, removed->Next(&r));
  ClearLess less;
  while (have_a || have_r) {
    const bool take_a = have_a && (!have_r || !less(r, a));
    const bool both = take_a && have_r && !less(a, r);  // added and removed: the added entry stays
    const ClearRecord& c = take_a ? a : r;
    if (take_a != present(c)) {
      std::vector<std::string>& to = c.kind == 0 ? (take_a ? d.added_domains : d.removed_domains)
                                                 : (take_a ? d.added_ip_ranges : d.removed_ip_ranges);
      to.emplace_back(c.view());
    }
    if (take_a) {
      URLGUARD_ASSIGN_OR_RETURN(have_a, added->Next(&a));
    }
    if (!take_a || both) {
      URLGUARD_ASSIGN_OR_RETURN(have_r, removed->Next(&r));
    }
  }
  constexpr int kUrl = static_cast<int>(LayerKind::kUrl);
  uint64_t dns_puts = 0, dns_deletes = 0;
  for (int li = 0; li < kLayerKindCount; ++li) {
    if (li == kUrl) continue;
    dns_puts += change.entries_added[li];
    dns_deletes += change.entries_removed[li];
  }
  d.url_entries_change =
      static_cast<int64_t>(change.entries_added[kUrl]) - static_cast<int64_t>(change.entries_removed[kUrl]);
  if (dns_puts != d.added_domains.size() + d.added_ip_ranges.size() ||
      dns_deletes != d.removed_domains.size() + d.removed_ip_ranges.size()) {
    return Status::Internal("version " + std::to_string(version) + " of " + list + ": the entries in clear disagree "
                            "with the effective change (" + std::to_string(dns_puts) + " added, " +
                            std::to_string(dns_deletes) + " removed)");
  }
  return d;
}

Status WriteStateDelta(Env* env, const std::string& path, const std::string& list, uint64_t version,
                       const EffectiveChange& change) {
  URLGUARD_ASSIGN_OR_RETURN(auto w, StateDeltaWriter::Create(env, path, list, version, change.threats));
  for (const KeyRecord& rec : change.records) {
    URLGUARD_RETURN_IF_ERROR(w->Add(rec, static_cast<DeltaOp>(rec.reserved)));
  }
  return w->Finish();
}

// Each layer's distinct fingerprints under `universe`, over the merged records (ByLayerKey order: keys ascend within
// a layer and MulHi64 is monotone, so equal neighbours are the only collisions). What WriteStateFile counts on its
// way for a full version; an incremental version writes no state file.
Status CountFingerprints(const std::string& merged_path, const uint64_t universe[3], uint64_t fp_counts[3]) {
  URLGUARD_ASSIGN_OR_RETURN(auto reader, RunFileReader::Open(merged_path, sizeof(KeyRecord), kStateBufferBytes));
  bool have_last[3] = {false, false, false};
  uint64_t last[3] = {0, 0, 0};
  KeyRecord r;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, reader->Next(&r));
    if (!has) return Status::Ok();
    const uint64_t fp = MulHi64(r.key, universe[r.layer]);
    if (!have_last[r.layer] || last[r.layer] != fp) ++fp_counts[r.layer];
    have_last[r.layer] = true;
    last[r.layer] = fp;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Manifest format 2 (docs/versions.md): checkpoints, range diffs, and versions that cost what changed.

namespace {

// The newest checkpoint record of the list at or below `at`: its version (0 when there is none).
uint64_t NewestCheckpoint(Env* env, const std::string& private_dir, uint64_t at) {
  uint64_t newest = 0;
  auto names = env->ListDir(private_dir);
  if (!names.ok()) return 0;
  for (const std::string& n : *names) {
    std::optional<uint64_t> v = ParseCheckpointRecordFileName(n);
    if (v && *v <= at && *v > newest) newest = *v;
  }
  return newest;
}

// The catch-up archive's window in touched fingerprints: `configured`, or with 0 (the default) one that follows
// the list: 3/5 of its fingerprints, within [16 Mi, 64 Mi]. A client that missed t touched fingerprints downloads
// a range diff of about 3.7 bytes each, or the checkpoint snapshot at about 2.1 bytes per listed fingerprint
// (docs/versions.md §7b): past t = 0.57 N the snapshot is the smaller, so a longer window serves nobody. The
// ceiling bounds the checkpoint's memory (12 bytes an entry: 768 MB) and covers a 100 M list whole; a 1.2 B list
// keeps about 6.7 hours at 1,400 new entries a second (the floor was the whole window before: 1.7 hours).
constexpr uint64_t kMinCatchupRetention = uint64_t{16} << 20;
constexpr uint64_t kMaxCatchupRetention = uint64_t{64} << 20;
uint64_t CatchupRetention(uint64_t configured, uint64_t listed) {
  if (configured != 0) return configured;
  return std::clamp(listed / 5 * 3, kMinCatchupRetention, kMaxCatchupRetention);
}

// Mapped, not read: the file is immutable once renamed into place, and a copy of it (24 bytes per fingerprint
// touched since the checkpoint) was fresh memory to fault in on every version. Its pages go back as Decode is
// through with them, so the map is held, not the map and its file (an archive of 60 M entries: 720 MB and 1.4 GB).
// `room`: EpochMap::Decode's.
Result<EpochMap> ReadEpochFile(Env* env, const std::string& path, const std::string& list, size_t room = 0) {
  URLGUARD_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, env->MapReadOnly(path));
  auto map = EpochMap::Decode(std::string_view(reinterpret_cast<const char*>(file->data()), file->size()),
                              list, room,
                              [&file](size_t offset, size_t length) { ReleaseMappedPages(*file, offset, length); });
  if (!map.ok()) return Status::Corruption(path + ": " + map.status().message());
  return map;
}

// Writes `map` to `path` (private, atomically) a piece at a time, never its whole file in memory.
Status WriteEpochFile(Env* env, const std::string& path, const EpochMap& map, const std::string& list) {
  auto write = [&](WritableFile& f) {
    return map.EncodeTo(list, [&f](std::string_view piece) { return f.Append(piece); });
  };
  return WriteFileAtomicWith(env, path, write, /*private_file=*/true);
}

// The full-hash delta of a version from its effective change (docs/full-hash-format.md, "Delta files").
Status WriteFullHashDelta(Env* env, const std::string& path, const std::string& list, uint64_t version,
                          const EffectiveChange& change) {
  std::vector<const KeyRecord*> by_sha;
  by_sha.reserve(change.records.size());
  for (const KeyRecord& r : change.records) by_sha.push_back(&r);
  std::sort(by_sha.begin(), by_sha.end(), [](const KeyRecord* a, const KeyRecord* b) {
    int c = std::memcmp(a->sha256, b->sha256, 32);
    return c != 0 ? c < 0 : a->layer < b->layer;
  });
  URLGUARD_ASSIGN_OR_RETURN(auto w, FullHashFileWriter::CreateDelta(env, path, list, version, version - 1,
                                                                    change.threats, by_sha.size()));
  for (const KeyRecord* r : by_sha) {
    Sha256Digest sha;
    std::memcpy(sha.data(), r->sha256, 32);
    const bool deleted = r->reserved == static_cast<uint8_t>(DeltaOp::kDelete);
    URLGUARD_RETURN_IF_ERROR(w.AddDelta(sha, static_cast<LayerKind>(r->layer), deleted ? 0 : r->threat, deleted));
  }
  return w.Finish();
}

// Folds the newest full-hash base at or below `to_version` and the deltas after it into `to_version`.ugh: both are
// sorted by (SHA-256, layer), so a merge; the deltas (small) are folded first into one overlay, the newest record
// of each hash winning.
Status CompactFullHashes(Env* env, const std::string& private_dir, const std::string& list, uint64_t to_version) {
  uint64_t base = 0;
  URLGUARD_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListDir(private_dir));
  for (const std::string& n : names) {
    std::optional<uint64_t> v = ParseFullHashFileName(n);
    if (v && *v <= to_version && *v > base) base = *v;
  }
  if (base == 0) return Status::FailedPrecondition("no full-hash base for list " + list);
  if (base == to_version) return Status::Ok();
  struct Rec {
    Sha256Digest sha;
    uint8_t layer;
    bool deleted;
    std::string threat;
  };
  auto by_hash = [](const Rec& a, const Rec& b) {
    int c = std::memcmp(a.sha.data(), b.sha.data(), 32);
    return c != 0 ? c < 0 : a.layer < b.layer;
  };
  std::vector<Rec> overlay;
  std::set<std::string> threat_set;
  for (uint64_t v = to_version; v > base; --v) {  // newest first: the first record of a hash wins
    URLGUARD_ASSIGN_OR_RETURN(auto file, env->MapReadOnly(JoinPath(private_dir, FullHashDeltaFileName(v))));
    URLGUARD_ASSIGN_OR_RETURN(FullHashFileView view, FullHashFileView::Open(file->data(), file->size(), true));
    if (!view.is_delta() || view.version() != v) return Status::Corruption("full-hash delta " + std::to_string(v));
    std::vector<Rec> mine;
    for (uint64_t i = 0; i < view.records(); ++i) {
      FullHashMatch m = view.RecordAt(i);
      mine.push_back({m.sha256, static_cast<uint8_t>(m.layer), m.deleted, std::string(m.threat)});
    }
    std::vector<Rec> merged;
    std::merge(overlay.begin(), overlay.end(), mine.begin(), mine.end(), std::back_inserter(merged), by_hash);
    // std::merge keeps the first range's element first among equals: the newer one. Drop the older.
    overlay.clear();
    for (Rec& r : merged) {
      if (!overlay.empty() && !by_hash(overlay.back(), r) && !by_hash(r, overlay.back())) continue;
      overlay.push_back(std::move(r));
    }
  }
  URLGUARD_ASSIGN_OR_RETURN(auto base_file, env->MapReadOnly(JoinPath(private_dir, FullHashFileName(base))));
  URLGUARD_ASSIGN_OR_RETURN(FullHashFileView base_view,
                            FullHashFileView::Open(base_file->data(), base_file->size(), false));
  for (std::string_view t : base_view.threat_names()) threat_set.insert(std::string(t));
  for (const Rec& r : overlay) {
    if (!r.deleted) threat_set.insert(r.threat);
  }
  std::vector<std::string> threats(threat_set.begin(), threat_set.end());
  auto id_of = [&](std::string_view name) {
    return static_cast<uint16_t>(std::lower_bound(threats.begin(), threats.end(), name) - threats.begin());
  };
  URLGUARD_ASSIGN_OR_RETURN(auto w, FullHashFileWriter::Create(env, JoinPath(private_dir, FullHashFileName(to_version)),
                                                               list, to_version, threats, base_view.records()));
  size_t o = 0;
  auto emit_overlay = [&](const Rec& r) -> Status {
    if (r.deleted) return Status::Ok();
    return w.Add(r.sha, static_cast<LayerKind>(r.layer), id_of(r.threat));
  };
  // The walk hands the base's pages back to the kernel behind it (they stay in the page cache), or a checkpoint's
  // resident set grew by the whole base: 3.9 GB at 100 M, a publisher loop's 4.1 GB peak (docs/performance.md).
  // Record i starts at or after i / records of the file (the header comes first), so nothing ahead is released.
  constexpr uint64_t kReleaseEvery = uint64_t{1} << 16;
  for (uint64_t i = 0; i < base_view.records(); ++i) {
    if (i % kReleaseEvery == kReleaseEvery - 1) {
      ReleaseMappedPages(*base_file, 0,
                         static_cast<size_t>(static_cast<unsigned __int128>(i) * base_file->size() /
                                             base_view.records()));
    }
    FullHashMatch m = base_view.RecordAt(i);
    Rec b{m.sha256, static_cast<uint8_t>(m.layer), false, {}};
    while (o < overlay.size() && by_hash(overlay[o], b)) URLGUARD_RETURN_IF_ERROR(emit_overlay(overlay[o++]));
    if (o < overlay.size() && !by_hash(b, overlay[o])) {  // the same hash: the delta's record replaces it
      URLGUARD_RETURN_IF_ERROR(emit_overlay(overlay[o++]));
      continue;
    }
    URLGUARD_RETURN_IF_ERROR(w.Add(m.sha256, m.layer, id_of(m.threat)));
  }
  while (o < overlay.size()) URLGUARD_RETURN_IF_ERROR(emit_overlay(overlay[o++]));
  return w.Finish();
}

// Whether public file `name` may belong to a checkpoint after `checkpoint` still being made (its snapshot or a
// range diff to it): only a record names them, and it is written last.
bool PendingCheckpointFile(std::string_view name, uint64_t checkpoint) {
  // Its temporary files too ("snapshot-X.ugs.z.tmp" while it deflates): removing one from under the checkpoint
  // failed its rename, so a checkpoint longer than the cadence never completed.
  if (name.ends_with(".tmp")) name.remove_suffix(4);
  uint64_t to = 0;
  if (IsSnapshotFileName(name)) {
    to = std::strtoull(std::string(name.substr(9)).c_str(), nullptr, 10);
  } else if (IsRangeDiffFileName(name)) {
    std::string s(name.substr(6));
    to = std::strtoull(s.substr(s.find('-') + 1).c_str(), nullptr, 10);
  }
  return to > checkpoint;
}

// The version a private temporary file name starts with ("12.state.tmp", "12.ugs.tmp.layer0" -> 12); nullopt for
// any other name.
std::optional<uint64_t> StrayTempFileVersion(std::string_view name) {
  const bool tmp = name.ends_with(".tmp") || name.find(".tmp.") != std::string_view::npos;
  size_t digits = 0;
  while (digits < name.size() && digits < 20 && name[digits] >= '0' && name[digits] <= '9') ++digits;
  if (!tmp || digits == 0 || digits >= name.size() || name[digits] != '.') return std::nullopt;
  return std::strtoull(std::string(name.substr(0, digits)).c_str(), nullptr, 10);
}

// Moves a superseded file into LIST's trash (format/repository_files.h PrivateTrashDir) by rename, O(1), where
// unlinking it would make the version wait while the kernel frees its pages and extents: 0.28 s for a 4.5 GB base
// and 0.24 s for its 3.7 GB full-hash file in a quiet run at 100 M, 2.7 s for the two beside a checkpoint's
// writeback in the freshness run (docs/performance.md "Freshness", session 13). EmptyTrash unlinks it. `tag` keeps
// names from the public and the private directory apart. Falls back to unlinking.
void Discard(Env* env, const std::string& dir, const std::string& name, const std::string& trash, const char* tag) {
  const std::string path = JoinPath(dir, name);
  if (env->CreateDirs(trash, /*private_dir=*/true).ok() &&
      env->RenameFile(path, JoinPath(trash, std::string(tag) + "." + name)).ok()) {
    return;
  }
  (void)env->RemoveFile(path);
}

// The private files of a format 2 list that nothing reads any more once version `version` names checkpoint
// `checkpoint`: bases older than the checkpoint's (state, full hashes, snapshot), the deltas it folded in, epoch
// maps before the previous version's, older archives and records. Failures are ignored (the next run tries again).
// The bases go to `trash` (Discard).
void PruneFormat2Files(Env* env, const std::string& private_dir, const std::string& trash, uint64_t checkpoint,
                       uint64_t version) {
  auto names = env->ListDir(private_dir);
  if (!names.ok()) return;
  bool removed_one = false;
  // Entry lists (the DNS export's, publish/entry_list.h): the newest V.entries at or below the checkpoint starts
  // every chain the export may still need; older lists and the deltas up to it go.
  uint64_t entries_base = 0;
  for (const std::string& n : *names) {
    if (auto v = ParseEntryListFileName(n); v && *v <= checkpoint) entries_base = std::max(entries_base, *v);
  }
  for (const std::string& n : *names) {
    bool drop = false;
    // A temporary file ("V.state.tmp", "V.checkpoint.tmp", a snapshot's "V.ugs.tmp.*" spills) of a version at or
    // before the adopted checkpoint is a killed writer's: only a checkpoint after it may still be writing.
    if (auto v = StrayTempFileVersion(n)) drop = *v <= checkpoint;
    if (auto v = ParseStateFileName(n)) drop = *v < checkpoint;
    if (auto v = ParseFullHashFileName(n)) drop = *v < checkpoint;
    if (auto v = ParsePrivateSnapshotFileName(n)) drop = *v < checkpoint;
    if (auto v = ParseStateDeltaFileName(n)) drop = *v <= checkpoint;
    if (auto v = ParseFullHashDeltaFileName(n)) drop = *v <= checkpoint;
    if (auto v = ParseEpochMapFileName(n)) drop = *v + 1 < version;
    if (auto v = ParseArchiveFileName(n)) drop = *v < checkpoint;
    if (auto v = ParseCheckpointRecordFileName(n)) drop = *v < checkpoint;
    if (auto v = ParseEntryListFileName(n)) drop = *v < entries_base;
    if (auto v = ParseEntryListDeltaFileName(n)) drop = *v <= entries_base;
    if (!drop) continue;
    // The bases (O(N) bytes each) go to the trash; the rest is small.
    if (ParseStateFileName(n) || ParseFullHashFileName(n) || ParsePrivateSnapshotFileName(n) ||
        ParseEntryListFileName(n)) {
      Discard(env, private_dir, n, trash, "private");
    } else {
      (void)env->RemoveFile(JoinPath(private_dir, n));
    }
    if (!removed_one) URLGUARD_FAULT_POINT("publish.prune.after-first-removal");
    removed_one = true;
  }
}

// A checkpoint record keeps a universe for every layer, an empty one too (sized as for one entry more than the
// list's), so the first entry a later version adds to that layer has fingerprints clients can take. Manifests say
// 0 for an empty layer, as the snapshot has none (docs/manifest-format.md).
void SizeEmptyLayers(Manifest* rec, uint64_t total, const IpPrefixLengths& prefixes, double fp_rate) {
  for (int li = 0; li < kLayerKindCount; ++li) {
    if (rec->universe[li] != 0) continue;
    const double u = std::ceil(static_cast<double>(UniverseForCount(static_cast<LayerKind>(li), total + 1, prefixes,
                                                                    fp_rate)) * kUniverseHeadroom);
    rec->universe[li] = u >= 9.2e18 ? (uint64_t{1} << 63) : static_cast<uint64_t>(u);
  }
}

// The public files a format 2 manifest names.
void AddNamedFiles(const Manifest& m, std::set<std::string>* names) {
  if (!m.checkpoint.snapshot.path.empty()) names->insert(m.checkpoint.snapshot.path);
  if (!m.snapshot.path.empty()) names->insert(m.snapshot.path);
  for (const ManifestDiff& d : m.diffs) names->insert(d.file.path);
  for (const ManifestDiff& d : m.large_diffs) names->insert(d.file.path);
}

// The seen filter (publish/seen_filter.h) records what the format 2 versions (from, to] put, each version one run:
// their state deltas' puts (an added entry, or a listed one whose threat changed). A checkpoint does it once for
// all of them, under the repository's seen lock. Run again after a kill between the save and the checkpoint's
// record, it counts those versions twice: counts are approximate, and "never seen" stays exact.
Status RecordSeenSince(Env* env, const PublishOptions& o, const std::string& private_dir, uint64_t from, uint64_t to) {
  std::vector<std::vector<uint64_t>> runs;
  for (uint64_t v = from + 1; v <= to; ++v) {
    URLGUARD_ASSIGN_OR_RETURN(StateDelta d, ReadStateDelta(JoinPath(private_dir, StateDeltaFileName(v)), o.list, v));
    std::vector<uint64_t> keys;
    for (const KeyRecord& r : d.records) {
      if (r.reserved != static_cast<uint8_t>(DeltaOp::kPut)) continue;
      Sha256Digest sha;
      std::memcpy(sha.data(), r.sha256, 32);
      keys.push_back(DigestPrefix64(sha));
    }
    if (!keys.empty()) runs.push_back(std::move(keys));
  }
  if (runs.empty()) return Status::Ok();
  const std::string seen_path = SeenFilterPath(o.repo_dir);
  URLGUARD_ASSIGN_OR_RETURN(auto seen_lock, LockFileWaiting(env, SeenLockPath(o.repo_dir), kSeenLockWaitMillis));
  auto loaded = SeenFilter::Load(env, seen_path);
  if (!loaded.ok() && loaded.status().code() != StatusCode::kNotFound) return loaded.status();
  SeenFilter filter = loaded.ok() ? std::move(loaded).value()
                                  : SeenFilter::Create(kSeenInitialCapacity, kSeenFpRate, kSeenCountEps,
                                                       kSeenCountDelta);
  for (const std::vector<uint64_t>& keys : runs) (void)filter.RecordRun(keys);
  return filter.Save(env, seen_path);
}

// How many times a checkpoint pass beside publishing moves on to a newer committed version (ReadEpochForPass).
constexpr int kMaxCheckpointPassMoves = 8;

// The epoch map of committed version *version, for a checkpoint pass beside publishing. Every version keeps the
// epoch maps of the newest two versions only (PruneFormat2Files), so versions committed between the caller's read
// of the manifest and this read can have removed it (two 100 M versions take a few seconds back to back): then the
// pass moves to the newest committed version, whose map is there, and sets *version to it.
Result<EpochMap> ReadEpochForPass(Env* env, const PublishOptions& o, uint64_t* version) {
  const std::string private_dir = PrivateListDir(o.repo_dir, o.list);
  for (int moves = 0;; ++moves) {
    Result<EpochMap> map = ReadEpochFile(env, JoinPath(private_dir, EpochMapFileName(*version)), o.list);
    if (map.ok() || map.status().code() != StatusCode::kNotFound || moves == kMaxCheckpointPassMoves) return map;
    auto m = ReadListManifest(env, o.repo_dir, o.list);
    if (!m.ok() || m->version <= *version) return map;
    *version = m->version;
  }
}

// MakeCheckpoint once the epoch map of `version` is held: the checkpoint's only input a later version removes.
// True when it made one; false when `version` already is the newest checkpoint.
Result<bool> CheckpointFromEpoch(Env* env, const PublishOptions& o, uint64_t version, EpochMap epoch) {
  const std::string private_dir = PrivateListDir(o.repo_dir, o.list);
  const std::string public_dir = PublicListDir(o.repo_dir, o.list);
  const uint64_t previous = NewestCheckpoint(env, private_dir, version);
  if (previous == version) return false;
  if (previous == 0) return Status::FailedPrecondition("list " + o.list + " has no checkpoint: publish it in full "
                                                       "with manifest format 2 first");
  // Before the new bases are written: the disk then holds at most two generations of them. Housekeeping: a
  // trash that cannot be emptied blocks no checkpoint (versions unlink what they supersede when it cannot take it).
  // After the epoch map is read: unlinking a 100 M list's superseded bases takes seconds, while versions go on.
  (void)EmptyTrash(env, o.repo_dir, o.list);
  URLGUARD_ASSIGN_OR_RETURN(Manifest prev_rec,
                            ReadCheckpointRecord(env, JoinPath(private_dir, CheckpointRecordFileName(previous)), o.list));
  if (epoch.version() != version) return Status::Corruption("epoch map of version " + std::to_string(version));
  if (epoch.checkpoint() < previous) epoch.Rebase(previous);
  const int64_t now = o.now_unix != 0 ? o.now_unix : env->NowUnixSeconds();

  // 1-2. The state and the full hashes of `version` as bases (each written by rename).
  URLGUARD_RETURN_IF_ERROR(CompactListState(env, private_dir, o.list, version));
  URLGUARD_FAULT_POINT("publish.checkpoint.after-state-base");
  URLGUARD_RETURN_IF_ERROR(CompactFullHashes(env, private_dir, o.list, version));
  URLGUARD_FAULT_POINT("publish.checkpoint.after-full-hash-base");
  // The DNS export's entry list too, so its chain of deltas stays short (a list published before entry lists were
  // kept has none: its export says so, its checkpoints go on).
  if (Status folded = FoldEntryList(env, private_dir, o.list, version);
      !folded.ok() && folded.code() != StatusCode::kNotFound) {
    return folded;
  }
  URLGUARD_FAULT_POINT("publish.checkpoint.after-entry-list");

  // 3. The snapshot, from the new base: counts first (the writer needs them up front), then the stream.
  const std::string state_path = JoinPath(private_dir, StateFileName(version));
  LayerCounts counts;
  {
    URLGUARD_ASSIGN_OR_RETURN(auto reader, StateFileReader::Open(state_path));
    KeyRecord r;
    for (;;) {
      URLGUARD_ASSIGN_OR_RETURN(bool has, reader->Next(&r));
      if (!has) break;
      counts.Add(r);
    }
  }
  BuildOptions bo;
  bo.list_name = o.list;
  bo.version = version;
  bo.created_unix = now;
  bo.fp_rate = o.fp_rate;
  bool universe_changed = false;
  for (int li = 0; li < kLayerKindCount; ++li) {
    const uint64_t needed = UniverseForCount(static_cast<LayerKind>(li), counts.total(), counts.ip_prefixes, o.fp_rate);
    const uint64_t prev = prev_rec.universe[li];
    // A checkpoint keeps the epoch's universes: the versions published beside it computed their fingerprints
    // under them (a list that outgrew them gets new ones from a full version: docs/versions.md §7b).
    if (prev != 0 || counts.entries[li] == 0) {
      bo.universe_override[li] = prev != 0 ? prev : needed;
    } else {
      double u = std::ceil(static_cast<double>(needed) * kUniverseHeadroom);
      bo.universe_override[li] = u >= 9.2e18 ? (uint64_t{1} << 63) : static_cast<uint64_t>(u);
      universe_changed = true;
    }
  }
  uint64_t fp_counts[3] = {0, 0, 0};
  {  // distinct fingerprints per layer (keys ascend within a layer: equal neighbours are the only collisions)
    URLGUARD_ASSIGN_OR_RETURN(auto reader, StateFileReader::Open(state_path));
    bool have_last[3] = {false, false, false};
    uint64_t last[3] = {0, 0, 0};
    KeyRecord r;
    for (;;) {
      URLGUARD_ASSIGN_OR_RETURN(bool has, reader->Next(&r));
      if (!has) break;
      const uint64_t fp = MulHi64(r.key, bo.universe_override[r.layer]);
      if (!have_last[r.layer] || last[r.layer] != fp) ++fp_counts[r.layer];
      have_last[r.layer] = true;
      last[r.layer] = fp;
    }
  }
  const std::string snapshot_path = JoinPath(private_dir, PrivateSnapshotFileName(version));
  URLGUARD_ASSIGN_OR_RETURN(Sha256Digest state_hash,
                            WriteSnapshotFromState(env, state_path, snapshot_path, bo, counts, fp_counts));
  URLGUARD_FAULT_POINT("publish.checkpoint.after-private-snapshot");
  URLGUARD_ASSIGN_OR_RETURN(OpenSnapshot snap, OpenPrivateSnapshot(env, private_dir, version));
  Manifest rec;
  rec.format = kManifestFormat2;
  rec.list = o.list;
  rec.version = version;
  rec.created_unix = now;
  rec.expires_unix = now + o.expires_in_seconds;
  rec.min_wait_seconds = o.min_wait_seconds;
  rec.emergency = o.emergency;
  rec.ip_prefix_lengths = counts.ip_prefixes.bits;
  rec.checkpoint.version = version;
  rec.checkpoint.state_sha256 = state_hash;
  rec.checkpoint.state_bytes = snap.file->size();
  rec.checkpoint.snapshot.path = SnapshotFileName(version);
  URLGUARD_RETURN_IF_ERROR(
      WriteDeflated(env, JoinPath(public_dir, rec.checkpoint.snapshot.path), *snap.file, &rec.checkpoint.snapshot));
  URLGUARD_FAULT_POINT("publish.checkpoint.after-snapshot");
  const SetDigestInput digest = SetDigestInputOf(snap.view);
  for (int li = 0; li < kLayerKindCount; ++li) {
    rec.entries[li] = digest.layers[li].count;
    rec.universe[li] = digest.universe[li];
  }
  rec.state_digest = SetDigest(digest);
  // The incremental sums and the snapshot must agree: anything else is a bug upstream, never served.
  if (!universe_changed && digest.layers != epoch.sums()) {
    return Status::Corruption("checkpoint " + std::to_string(version) + " of " + o.list +
                              ": the snapshot's fingerprints disagree with the versions' digest sums");
  }

  // 4. The catch-up archive and the to-checkpoint diffs (none across a universe change).
  EpochMap archive(version, digest.layers);
  if (!universe_changed) {
    uint64_t listed = 0;
    for (const LayerSetSum& l : digest.layers) listed += l.count;
    const uint64_t retention = CatchupRetention(o.catchup_retention, listed);
    // The previous archive, with room for the epoch's entries so that Append merges in place (an archive of a
    // 100 M list holds up to 64 Mi entries, 768 MB). The first checkpoint after a full version has none yet.
    auto old = ReadEpochFile(env, JoinPath(private_dir, ArchiveFileName(previous)), o.list, epoch.size());
    if (old.ok() && old->version() == epoch.checkpoint()) {
      archive = std::move(old).value();
      URLGUARD_RETURN_IF_ERROR(archive.Append(epoch, retention));
    } else {
      archive = epoch;
      archive.TrimToTouched(retention);
    }
    RangeDiffTarget target;
    target.list = o.list;
    target.version = version;
    target.universe = digest.universe;
    for (int li = 0; li < kLayerKindCount; ++li) target.count[li] = digest.layers[li].count;
    // A checkpoint of the committed version: the live manifest's to-current diffs (A, version] have the names of
    // the to-checkpoint diffs (A, version], and clients are reading them. Such a file is taken as it is (the same
    // range, the same final presences), never rewritten under a client nor removed (that took a live manifest's
    // diff away whenever it outgrew the new snapshot).
    struct Live {
      ManifestDiff diff;
      bool large = false;
    };
    std::map<std::string, Live> live;
    if (auto bytes = env->ReadFile(JoinPath(public_dir, kManifestFileName), kMaxManifestBytes); bytes.ok()) {
      if (auto m = ParseManifest(*bytes); m.ok() && m->format == kManifestFormat2 && m->version == version) {
        for (const ManifestDiff& d : m->diffs) {
          if (d.to_version == version) live[d.file.path] = {d, false};
        }
        for (const ManifestDiff& d : m->large_diffs) {
          if (d.to_version == version) live[d.file.path] = {d, true};
        }
      }
    }
    // Diffs over the caps every reader takes go to `large_diffs` (docs/manifest-format.md §8.5) while they are
    // smaller than the snapshot: a client away a few hours from a 100 M list would otherwise download the
    // snapshot and the diff from it, up to 3.6x what it missed. Each stream within kMaxDiffEntries + the list's
    // count, half of what a reader takes (LargeRangeDiffValueCap: room for a list that shrinks after C).
    const RangeDiffCaps large{rec.checkpoint.snapshot.size, kMaxDiffEntries + listed};
    std::vector<uint64_t> anchors = archive.Anchors(o.catchup_ratio);
    size_t written = 0;
    for (auto a = anchors.rbegin(); a != anchors.rend(); ++a) {
      if (rec.large_diffs.size() == kMaxManifestLargeDiffs) break;
      auto served = live.find(RangeDiffFileName(*a, version));
      bool is_large = served != live.end() && served->second.large;
      Result<ManifestDiff> md = served != live.end()
                                    ? Result<ManifestDiff>(served->second.diff)
                                    : WriteRangeDiffFile(env, public_dir, archive.Diff(target, *a),
                                                         o.range_diff_value_cap, &large, &is_large);
      if (!md.ok() && md.status().code() == StatusCode::kResourceExhausted) break;
      URLGUARD_RETURN_IF_ERROR(md.status());
      // "publish.checkpoint.after-diff-1", -2, ...: after each to-checkpoint diff, nearest first.
      URLGUARD_FAULT_POINT(("publish.checkpoint.after-diff-" + std::to_string(++written)).c_str());
      // Farther clients take the snapshot: it is smaller.
      if (md->file.size >= rec.checkpoint.snapshot.size) {
        if (served == live.end()) (void)env->RemoveFile(JoinPath(public_dir, md->file.path));
        break;
      }
      (is_large ? rec.large_diffs : rec.diffs).push_back(*md);
    }
    std::reverse(rec.diffs.begin(), rec.diffs.end());
    std::reverse(rec.large_diffs.begin(), rec.large_diffs.end());
  }
  URLGUARD_RETURN_IF_ERROR(WriteEpochFile(env, JoinPath(private_dir, ArchiveFileName(version)), archive, o.list));
  URLGUARD_FAULT_POINT("publish.checkpoint.after-archive");
  for (int li = 0; li < kLayerKindCount; ++li) {
    if (rec.universe[li] == 0) rec.universe[li] = bo.universe_override[li];
  }
  SizeEmptyLayers(&rec, counts.total(), counts.ip_prefixes, o.fp_rate);
  // 5. The seen filter learns what the versions since the previous checkpoint added.
  URLGUARD_RETURN_IF_ERROR(RecordSeenSince(env, o, private_dir, previous, version));
  URLGUARD_FAULT_POINT("publish.checkpoint.after-seen");
  // 6. The record, last: from here on the checkpoint exists and the next version adopts it.
  URLGUARD_FAULT_POINT("publish.checkpoint.before-record");
  // Written whole as `X.checkpoint.tmp` first, so the kill tests can stop the process on either side of the
  // rename that makes the checkpoint exist (a stray .tmp is removed by PruneFormat2Files).
  const std::string record_path = JoinPath(private_dir, CheckpointRecordFileName(version));
  URLGUARD_RETURN_IF_ERROR(WriteCheckpointRecord(env, record_path + ".tmp", rec));
  URLGUARD_FAULT_POINT("publish.checkpoint.before-record-rename");
  URLGUARD_RETURN_IF_ERROR(env->RenameFile(record_path + ".tmp", record_path));
  URLGUARD_FAULT_POINT("publish.checkpoint.after-record-rename");
  URLGUARD_RETURN_IF_ERROR(env->SyncDir(private_dir));
  return true;
}

}  // namespace

Status MakeCheckpoint(Env* env, const PublishOptions& o, uint64_t version) {
  const std::string private_dir = PrivateListDir(o.repo_dir, o.list);
  if (NewestCheckpoint(env, private_dir, version) == version) return Status::Ok();
  URLGUARD_ASSIGN_OR_RETURN(EpochMap epoch,
                            ReadEpochFile(env, JoinPath(private_dir, EpochMapFileName(version)), o.list));
  return CheckpointFromEpoch(env, o, version, std::move(epoch)).status();
}

// Whether the fingerprints touched since `checkpoint` call for a new one: more than options.checkpoint_changes, or
// more than an eighth of the list's fingerprints (at least kMinListCheckpointChanges). The second bound is for
// lists small next to the first: a client far behind takes the checkpoint's snapshot plus the range diff from it,
// and a range diff costs about 3.7 bytes per touched fingerprint where a snapshot costs about 2.1 per listed one
// (measured at 1 M: bench/freshness_bench.py), so t <= N / 8 keeps that pair within 1.22x the snapshot. Each
// checkpoint costs O(N), so this is at most 8 checkpoint records per listed fingerprint changed: bounded work.
constexpr uint64_t kListCheckpointDivisor = 8;
constexpr uint64_t kMinListCheckpointChanges = uint64_t{1} << 16;
bool CheckpointDue(const EpochMap& map, uint64_t checkpoint, uint64_t checkpoint_changes) {
  uint64_t listed = 0;
  for (const LayerSetSum& s : map.sums()) listed += s.count;
  const uint64_t by_list = std::max(listed / kListCheckpointDivisor, kMinListCheckpointChanges);
  return map.TouchedSince(checkpoint) > std::min(checkpoint_changes, by_list);
}

Result<Manifest> ReadListManifest(Env* env, const std::string& repo_dir, const std::string& list) {
  const std::string path = JoinPath(PublicListDir(repo_dir, list), kManifestFileName);
  auto bytes = env->ReadFile(path, kMaxManifestBytes);
  if (!bytes.ok()) return bytes.status().WithContext(path);
  auto m = ParseManifest(*bytes);
  if (!m.ok()) return m.status().WithContext(path);
  return m;
}

Status EmptyTrash(Env* env, const std::string& repo_dir, const std::string& list) {
  const std::string trash = PrivateTrashDir(repo_dir, list);
  auto names = env->ListDir(trash);
  if (!names.ok()) return names.status().code() == StatusCode::kNotFound ? Status::Ok() : names.status();
  for (const std::string& n : *names) {
    Status s = env->RemoveFile(JoinPath(trash, n));
    if (!s.ok() && s.code() != StatusCode::kNotFound) return s.WithContext("emptying " + trash);
  }
  return Status::Ok();
}

Result<bool> MakeCheckpointBeside(Env* env, const PublishOptions& o, uint64_t* version) {
  URLGUARD_ASSIGN_OR_RETURN(EpochMap map, ReadEpochForPass(env, o, version));
  return CheckpointFromEpoch(env, o, *version, std::move(map));
}

Result<bool> MakeCheckpointIfDue(Env* env, const PublishOptions& o, uint64_t* version) {
  const std::string private_dir = PrivateListDir(o.repo_dir, o.list);
  URLGUARD_ASSIGN_OR_RETURN(EpochMap map, ReadEpochForPass(env, o, version));
  (void)EmptyTrash(env, o.repo_dir, o.list);  // housekeeping, after the read: a trash that cannot be emptied blocks nothing
  const uint64_t checkpoint = std::max(map.checkpoint(), NewestCheckpoint(env, private_dir, *version));
  if (checkpoint >= *version || !CheckpointDue(map, checkpoint, o.checkpoint_changes)) return false;
  return CheckpointFromEpoch(env, o, *version, std::move(map));
}

namespace {

// What Publish has set up before it reads inputs, handed to the format 2 path.
struct RunContext {
  std::string public_dir, private_dir, tmp_dir, threat_default;
  int64_t now = 0;
  int threads = 1;
  size_t budget = 0;
  std::function<void(PublishPhase, std::string_view)> phase;
};

// An incremental version of manifest format 2 (docs/versions.md §3): reads the change, looks it up in the state,
// writes the version's delta, full-hash delta, epoch map and range diffs, and commits a format 2 manifest. Nothing
// here reads or writes the whole list.
Result<PublishReport> PublishRangeVersion(Env* env, const SigningKey& key, const PublishOptions& o,
                                          const RunContext& run) {
  if (o.version_store != nullptr) return Status::InvalidArgument("manifest format 2 needs the file state");
  PublishReport report;
  report.first_version = false;
  auto prev_manifest_bytes = env->ReadFile(JoinPath(run.public_dir, kManifestFileName), kMaxManifestBytes);
  if (!prev_manifest_bytes.ok()) {
    return Status::FailedPrecondition("an incremental version needs a previous one: publish with --input first");
  }
  URLGUARD_ASSIGN_OR_RETURN(Manifest prev, ParseManifest(*prev_manifest_bytes));
  if (prev.format != kManifestFormat2) {
    return Status::FailedPrecondition("list " + o.list + " is published with manifest format " +
                                      std::to_string(prev.format) + ": publish it in full with --manifest-format 2 "
                                      "first (a checkpoint)");
  }
  const uint64_t last = prev.version;
  const uint64_t version = last + 1;
  report.version = version;

  // 1. The change: added and removed entries, sorted.
  run.phase(PublishPhase::kParse, "feeds");
  IngestOptions io;
  io.threads = run.threads;
  io.block_bytes = o.block_bytes != 0 ? o.block_bytes : kDefaultIngestBlockBytes;
  io.default_threat = run.threat_default;
  io.max_problems = kMaxReportedFeedProblems;
  auto add_report = [&](IngestReport& in) {
    report.input_lines += in.lines;
    report.input_entries += in.entries;
    report.rejected += in.rejected;
    for (FeedProblem& p : in.problems) {
      if (report.problems.size() < kMaxReportedFeedProblems) report.problems.push_back(std::move(p));
    }
  };
  ThreatTable threats, removed_threats;
  KeySorter keys(env, {run.tmp_dir, "keys", run.budget / 10 * 4, run.threads});
  ClearSorter clear(env, {run.tmp_dir, "clear", run.budget / 20, run.threads});
  KeySorter removed_keys(env, {run.tmp_dir, "rmkeys", run.budget / 10, run.threads});
  ClearSorter removed_clear(env, {run.tmp_dir, "rmclear", run.budget / 20, run.threads});
  {
    IngestReport ingest;
    io.first_feed_index = 1;
    URLGUARD_RETURN_IF_ERROR(IngestFeeds(env, o.add_inputs, io, &threats, &keys, &clear, &ingest, nullptr));
    URLGUARD_RETURN_IF_ERROR(CheckInputs(o, o.add_inputs, ingest));
    add_report(ingest);
  }
  {
    IngestReport ingest;
    io.first_feed_index = 1 + o.add_inputs.size();
    URLGUARD_RETURN_IF_ERROR(
        IngestFeeds(env, o.remove_inputs, io, &removed_threats, &removed_keys, &removed_clear, &ingest, nullptr));
    URLGUARD_RETURN_IF_ERROR(CheckInputs(o, o.remove_inputs, ingest));
    add_report(ingest);
  }
  run.phase(PublishPhase::kSortMerge, "sorting");
  URLGUARD_RETURN_IF_ERROR(keys.Finish());
  URLGUARD_RETURN_IF_ERROR(removed_keys.Finish());
  URLGUARD_RETURN_IF_ERROR(clear.Finish());
  URLGUARD_RETURN_IF_ERROR(removed_clear.Finish());

  // 2. The checkpoint this version names (a newer one than the previous manifest's is adopted here): its universes
  // size the fingerprints the version touches.
  uint64_t checkpoint = NewestCheckpoint(env, run.private_dir, last);
  if (checkpoint == 0) return Status::FailedPrecondition("list " + o.list + " has no checkpoint record");
  URLGUARD_ASSIGN_OR_RETURN(
      Manifest rec, ReadCheckpointRecord(env, JoinPath(run.private_dir, CheckpointRecordFileName(checkpoint)), o.list));
  report.checkpoint = checkpoint;

  // 3. The effective change, by lookups in the state at `last` (each also counting the entries of its key's
  // fingerprint range, for step 4); the version's delta.
  run.phase(PublishPhase::kSortMerge, "effective change");
  URLGUARD_ASSIGN_OR_RETURN(auto before, LsmState::Open(env, run.private_dir, o.list, last));
  URLGUARD_ASSIGN_OR_RETURN(EffectiveChange change,
                            ComputeEffectiveChange(*before, &keys, threats.names(), &removed_keys, &rec.universe));
  report.delta_puts = change.puts;
  report.delta_deletes = change.deletes;
  run.phase(PublishPhase::kWrite, "state delta");
  URLGUARD_RETURN_IF_ERROR(
      WriteStateDelta(env, JoinPath(run.private_dir, StateDeltaFileName(version)), o.list, version, change));
  run.phase(PublishPhase::kWrite, "full-hash delta");
  URLGUARD_RETURN_IF_ERROR(
      WriteFullHashDelta(env, JoinPath(run.private_dir, FullHashDeltaFileName(version)), o.list, version, change));
  // The DNS export's change (publish/entry_list.h): V.entries-delta, read after the newest V.entries.
  run.phase(PublishPhase::kWrite, "entry list delta");
  URLGUARD_ASSIGN_OR_RETURN(EntryListDelta entries_delta,
                            EntryListDeltaOf(*before, change, &clear, &removed_clear, o.list, version));
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, JoinPath(run.private_dir, EntryListDeltaFileName(version)),
                                           SerializeEntryListDelta(std::move(entries_delta)), /*private_file=*/true));

  // 4. The touched fingerprints and the epoch map.
  run.phase(PublishPhase::kWrite, "epoch map");
  URLGUARD_ASSIGN_OR_RETURN(EpochMap map,
                            ReadEpochFile(env, JoinPath(run.private_dir, EpochMapFileName(last)), o.list,
                                          change.records.size()));  // room for this version's touched
  if (map.version() != last) return Status::Corruption("epoch map of version " + std::to_string(last));
  if (map.checkpoint() < checkpoint) map.Rebase(checkpoint);
  URLGUARD_ASSIGN_OR_RETURN(std::vector<TouchedFingerprint> touched,
                            TouchedFingerprintsOf(change.records, change.before_in_range, rec.universe));
  URLGUARD_RETURN_IF_ERROR(map.Apply(version, touched));
  report.touched = touched.size();
  for (const TouchedFingerprint& t : touched) {
    if (t.before && !t.after) ++report.removed[static_cast<int>(t.layer)];
    if (!t.before && t.after) ++report.added[static_cast<int>(t.layer)];
  }
  URLGUARD_RETURN_IF_ERROR(WriteEpochFile(env, JoinPath(run.private_dir, EpochMapFileName(version)), map, o.list));

  // 5. The manifest: V's counts and digest, the checkpoint, its to-checkpoint diffs, the range diffs to V.
  Manifest m;
  m.format = kManifestFormat2;
  m.list = o.list;
  m.version = version;
  m.created_unix = run.now;
  m.expires_unix = run.now + o.expires_in_seconds;
  m.min_wait_seconds = o.min_wait_seconds;
  m.emergency = o.emergency;
  m.checkpoint = rec.checkpoint;
  SetDigestInput digest;
  digest.layers = map.sums();
  for (int li = 0; li < kLayerKindCount; ++li) {
    m.entries[li] = map.sums()[li].count;
    // An empty layer has no fingerprint array in a client's snapshot: universe 0 there, as in the digest.
    m.universe[li] = m.entries[li] == 0 ? 0 : rec.universe[li];
    digest.universe[li] = m.universe[li];
    report.entries[li] = m.entries[li];  // distinct fingerprints: entries sharing one count once
  }
  m.state_digest = SetDigest(digest);
  // The ip prefix lengths only grow between checkpoints (a bit without entries costs a client a probe, a missing
  // one a miss): the checkpoint's, the previous version's, and those of this version's puts.
  IpPrefixLengths prefixes;
  prefixes.bits = rec.ip_prefix_lengths;
  for (size_t i = 0; i < prefixes.bits.size(); ++i) {
    prefixes.bits[i] |= prev.checkpoint.version == checkpoint ? prev.ip_prefix_lengths[i] : 0;
  }
  for (const KeyRecord& r : change.records) {
    if (r.layer != static_cast<uint8_t>(LayerKind::kIp) || r.reserved != static_cast<uint8_t>(DeltaOp::kPut)) continue;
    if (r.ipv6) {
      prefixes.AddV6(r.prefix_length);
    } else {
      prefixes.AddV4(r.prefix_length);
    }
  }
  m.ip_prefix_lengths = prefixes.bits;
  for (const ManifestDiff& d : rec.diffs) {
    if (d.from_version < checkpoint) m.diffs.push_back(d);  // the first hop of clients behind the checkpoint
  }
  for (const ManifestDiff& d : rec.large_diffs) {
    if (d.from_version < checkpoint) m.large_diffs.push_back(d);  // the same, over the regular caps
  }
  RangeDiffTarget target;
  target.list = o.list;
  target.version = version;
  target.universe = rec.universe;
  for (int li = 0; li < kLayerKindCount; ++li) target.count[li] = map.sums()[li].count;
  run.phase(PublishPhase::kWrite, "range diffs");
  const std::vector<uint64_t> anchors = map.Anchors(o.catchup_ratio);
  bool too_large = false;  // no diff from the checkpoint can carry the version
  {
    std::vector<RangeDiff> diffs = map.Diffs(target, anchors);  // one pass over the map for every anchor
    for (size_t ai = 0; ai < anchors.size(); ++ai) {
      const uint64_t a = anchors[ai];
      auto md = WriteRangeDiffFile(env, run.public_dir, std::move(diffs[ai]), o.range_diff_value_cap);
      if (!md.ok() && md.status().code() == StatusCode::kResourceExhausted) {
        if (a != checkpoint) continue;  // clients at or after `a` take a farther anchor's diff
        too_large = true;               // the first anchor (ascending): nothing written yet
        break;
      }
      URLGUARD_RETURN_IF_ERROR(md.status());
      m.diffs.push_back(*md);
      report.diffs.push_back({a, md->file.size, map.TouchedSince(a)});
    }
  }
  if (too_large) {
    // A version whose changes since the checkpoint no range diff can carry (a batch of millions of entries: more
    // values in a stream than a client takes, or more bytes) leaves new clients no way from the checkpoint's
    // snapshot to it. It becomes a checkpoint itself, before its commit (docs/versions.md §5b): O(N) once, where
    // failing would stall the list behind a batch that fails every time. Every file the checkpoint reads (V.delta,
    // V.ughd, V.entries-delta, V.epoch) is written; the manifest is the checkpoint record's, with this run's
    // times, and names the to-V diffs the catch-up archive allows.
    run.phase(PublishPhase::kWrite, "checkpoint (the version's own)");
    URLGUARD_RETURN_IF_ERROR(MakeCheckpoint(env, o, version));
    URLGUARD_ASSIGN_OR_RETURN(
        Manifest own, ReadCheckpointRecord(env, JoinPath(run.private_dir, CheckpointRecordFileName(version)), o.list));
    if (own.version != version || own.checkpoint.version != version) {
      return Status::Corruption("checkpoint record of version " + std::to_string(version) + " names another version");
    }
    own.created_unix = m.created_unix;
    own.expires_unix = m.expires_unix;
    own.min_wait_seconds = m.min_wait_seconds;
    own.emergency = m.emergency;
    for (int li = 0; li < kLayerKindCount; ++li) {
      if (own.entries[li] == 0) own.universe[li] = 0;  // as the record's digest has them (SizeEmptyLayers)
    }
    m = std::move(own);
    checkpoint = version;
    map.Rebase(version);
    report.checkpoint = version;
    report.checkpointed = true;
    report.diffs.clear();  // the version's own diffs: none (the archive's to-V diffs are the checkpoint's)
  }
  if (m.diffs.size() > kMaxManifestDiffsFormat2) {  // keep the checkpoint's hop and the nearest anchors
    m.diffs.erase(m.diffs.begin(), m.diffs.begin() + static_cast<ptrdiff_t>(m.diffs.size() - kMaxManifestDiffsFormat2));
  }
  std::sort(m.diffs.begin(), m.diffs.end(), [](const ManifestDiff& a, const ManifestDiff& b) {
    return a.to_version != b.to_version ? a.to_version < b.to_version : a.from_version < b.from_version;
  });

  // The seen filter learns the version's additions at the next checkpoint (RecordSeenSince), not here: loading and
  // saving seen.bin costs what it holds (0.7 s at 10 M keys, growing with the history), more than the rest of a
  // version that costs what changed.
  report.seen_at_checkpoint = true;

  // 6. Commit; then the index and what no manifest names any more.
  report.manifest_path = JoinPath(run.public_dir, kManifestFileName);
  std::string after_commit;
  run.phase(PublishPhase::kSign, "manifest");
  URLGUARD_RETURN_IF_ERROR(CommitManifest(env, key, run.public_dir, m, nullptr, &after_commit));
  report.committed = true;
  run.phase(PublishPhase::kSign, "list index");
  if (auto index = WriteListIndex(env, key, o.repo_dir, run.now); !index.ok()) {
    report.warnings.push_back("the list index was not rewritten (the next publication of any list rewrites it; or "
                              "run `urlguard-publish index`): " + index.status().ToString());
  }
  std::set<std::string> keep = {kManifestFileName, kManifestSignatureFileName, RpzFileName(o.list)};
  AddNamedFiles(m, &keep);
  AddNamedFiles(prev, &keep);  // clients that read the previous manifest may be downloading its files
  const std::string trash = PrivateTrashDir(o.repo_dir, o.list);
  if (auto names = env->ListDir(run.public_dir); names.ok()) {
    for (const std::string& n : *names) {
      // A checkpoint being made beside this run writes its files before its record names them: leave the files
      // of any version after the adopted checkpoint to a later run.
      if (keep.count(n) != 0 || PendingCheckpointFile(n, checkpoint)) continue;
      if (IsSnapshotFileName(n)) {
        Discard(env, run.public_dir, n, trash, "public");
      } else {
        (void)env->RemoveFile(JoinPath(run.public_dir, n));
      }
    }
  }
  PruneFormat2Files(env, run.private_dir, trash, checkpoint, version);
  (void)RemoveTree(env, run.tmp_dir);

  // 7. A checkpoint when the touched fingerprints since the last one have grown (the loop runs it on its own
  // thread instead: checkpoint_inline false).
  const bool due = CheckpointDue(map, checkpoint, o.checkpoint_changes);
  report.checkpoint_due = due && !o.checkpoint_inline;
  if (due && o.checkpoint_inline) {
    run.phase(PublishPhase::kWrite, "checkpoint");
    Status made = MakeCheckpoint(env, o, version);
    if (made.ok()) {
      report.checkpointed = true;
    } else {
      report.warnings.push_back("checkpoint not made (the next version tries again): " + made.ToString());
    }
  }
  return report;
}

}  // namespace

Result<PublishReport> Publish(Env* env, const SigningKey& key, const PublishOptions& o, const ProgressFn& progress) {
  if (o.refusal != nullptr) *o.refusal = PublishRefusal::kNone;
  if (!IsValidListName(o.list)) return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: " + o.list);
  const bool incremental = !o.add_inputs.empty() || !o.remove_inputs.empty();
  if (incremental && !o.inputs.empty()) {
    return Status::InvalidArgument("give either inputs (a full version) or added/removed feeds (an incremental one)");
  }
  if (o.entry_source && (incremental || !o.inputs.empty())) {
    return Status::InvalidArgument("entries come from the version store: no inputs or added/removed feeds");
  }
  if (!incremental && o.inputs.empty() && !o.entry_source) return Status::InvalidArgument("no inputs");
  if (o.expires_in_seconds <= 0) return Status::InvalidArgument("expiry must be in the future");
  if (o.expires_in_seconds > kMaxManifestLifetimeSeconds) {  // clients refuse longer-lived manifests
    return Status::InvalidArgument("expiry more than " + std::to_string(kMaxManifestLifetimeSeconds) +
                                   " s after creation: clients refuse such manifests (format/manifest.h)");
  }
  if (o.keep > kMaxManifestDiffs) return Status::InvalidArgument("--keep is at most " + std::to_string(kMaxManifestDiffs));
  const std::string threat_default = o.default_threat.empty() ? o.list : o.default_threat;
  if (!IsValidThreatName(threat_default)) return Status::InvalidArgument("invalid threat name: " + threat_default);

  const std::string public_dir = PublicListDir(o.repo_dir, o.list);
  const std::string private_dir = PrivateListDir(o.repo_dir, o.list);
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(public_dir));
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(private_dir));
  // One publisher per list (publish/repo_lock.h); publishers of other lists run side by side. With a version
  // store, its per-list lock serializes publishers instead (format/version_store.h).
  std::unique_ptr<FileLock> lock;
  if (o.version_store == nullptr) {
    auto file_lock = env->LockFile(ListPublishLockPath(o.repo_dir, o.list));
    if (!file_lock.ok()) {
      return file_lock.status().WithContext("another urlguard-publish is publishing " + o.list + " in " + o.repo_dir);
    }
    lock = std::move(file_lock).value();
  }
  CommittedVersion committed;
  if (o.version_store != nullptr) {
    auto begun = o.version_store->BeginPublish(o.list);
    if (!begun.ok()) return begun.status();
    committed = std::move(begun).value();
  }
  struct EndRun {  // releases the store's lock on every return
    VersionStore* store;
    const std::string& list;
    ~EndRun() {
      if (store != nullptr) store->EndPublish(list);
    }
  } end_run{o.version_store, o.list};
  // A kill between the store's commit and the manifest write left the public manifest behind: repair it first
  // (the same bytes the store committed), so clients see the committed version whatever this run does.
  if (committed.version != 0) {
    auto on_disk = env->ReadFile(JoinPath(public_dir, kManifestFileName), kMaxManifestBytes);
    if (!on_disk.ok() || *on_disk != committed.manifest) {
      URLGUARD_RETURN_IF_ERROR(
          WritePublic(env, JoinPath(public_dir, kManifestSignatureFileName), committed.signature));
      URLGUARD_RETURN_IF_ERROR(WritePublic(env, JoinPath(public_dir, kManifestFileName), committed.manifest));
    }
  }

  PublishReport report;
  const int64_t now = o.now_unix != 0 ? o.now_unix : env->NowUnixSeconds();

  // 0. Scratch space, the list's own (other lists' publishers use theirs at the same time): a killed run's spill
  // files are removed here.
  const std::string tmp_dir = PrivateTmpDir(o.repo_dir, o.list);
  URLGUARD_RETURN_IF_ERROR(RemoveTree(env, tmp_dir));
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(tmp_dir, /*private_dir=*/true));
  const int threads = std::max(1, o.threads);
  const size_t budget = std::max(o.memory_budget, kMinSortBudget * 4);

  // Progress: each phase and step as it begins (include/urlguard/publish.h, PublishPhaseFn).
  // URLGUARD_PUBLISH_STAGES=1 prints each step's wall and process CPU time (all threads) to stderr when the next
  // one begins: where a run's time goes, for bench/publish_bench.py --stages.
  struct StageClock {
    bool on = std::getenv("URLGUARD_PUBLISH_STAGES") != nullptr;
    std::string step;
    std::chrono::steady_clock::time_point wall;
    std::clock_t cpu = 0;
    void Next(std::string_view next) {
      if (!on) return;
      const auto now_wall = std::chrono::steady_clock::now();
      const std::clock_t now_cpu = std::clock();
      if (!step.empty()) {
        std::fprintf(stderr, "stage %-22s wall %7.3f s  cpu %7.3f s\n", step.c_str(),
                     std::chrono::duration<double>(now_wall - wall).count(),
                     static_cast<double>(now_cpu - cpu) / CLOCKS_PER_SEC);
      }
      step = std::string(next);
      wall = now_wall;
      cpu = now_cpu;
    }
    ~StageClock() { Next({}); }
  } stage_clock;
  auto phase = [&o, &stage_clock](PublishPhase p, std::string_view step, uint64_t done = 0) {
    if (done == 0) stage_clock.Next(step);
    if (o.phase_progress) o.phase_progress(p, step, done);
  };

  // Manifest format 2: an incremental version costs what changed (docs/versions.md §3). A list published in format
  // 2 stays in it until a full version says otherwise.
  bool format2 = o.manifest_format == kManifestFormat2;
  if (incremental && !format2 && o.version_store == nullptr) {
    auto current = env->ReadFile(JoinPath(public_dir, kManifestFileName), kMaxManifestBytes);
    if (current.ok()) {
      auto parsed = ParseManifest(*current);
      format2 = parsed.ok() && parsed->format == kManifestFormat2;
    }
  }
  if (incremental && format2) {
    RunContext run{public_dir, private_dir, tmp_dir, threat_default, now, threads, budget,
                   [&phase](PublishPhase p, std::string_view step) { phase(p, step); }};
    return PublishRangeVersion(env, key, o, run);
  }

  // 1. Read and parse every input into sorted runs of fixed-size records (publish/ingest.h).
  phase(PublishPhase::kParse, "feeds");
  IngestOptions io;
  io.threads = threads;
  io.block_bytes = o.block_bytes != 0 ? o.block_bytes : kDefaultIngestBlockBytes;
  io.default_threat = threat_default;
  io.max_problems = kMaxReportedFeedProblems;
  const std::function<void(uint64_t)> progress_fn = progress ? std::function<void(uint64_t)>(progress) : nullptr;
  auto add_report = [&](IngestReport& in) {
    report.input_lines += in.lines;
    report.input_entries += in.entries;
    report.rejected += in.rejected;
    for (FeedProblem& p : in.problems) {
      if (report.problems.size() < kMaxReportedFeedProblems) report.problems.push_back(std::move(p));
    }
  };
  ThreatTable threats;
  KeySorter keys(env, {tmp_dir, "keys", budget / 10 * 4, threads});
  ClearSorter clear(env, {tmp_dir, "clear", budget / 10 * 2, threads});
  {
    // Incremental: the added feeds come after the state (their records win over the state's), numbered from 1.
    io.first_feed_index = incremental ? 1 : 0;
    IngestReport ingest;
    if (o.entry_source) {
      // Fleet mode: the store's live entries (already canonical keys), numbered in the order they come.
      uint64_t n = 0;
      Status added = Status::Ok();
      URLGUARD_RETURN_IF_ERROR(o.entry_source([&](const EntryKey& k, const std::string& threat) {
        if (!added.ok()) return;
        ++ingest.entries;
        const std::string& name = !threat.empty() && IsValidThreatName(threat) ? threat : threat_default;
        added = AddEntryRecord(k, name, MakeSeq(0, ++n), /*writer=*/0, &threats, &keys, &clear);
        if (progress_fn && (n & 0xffff) == 0) progress_fn(n);
      }));
      URLGUARD_RETURN_IF_ERROR(added);
    } else {
      URLGUARD_RETURN_IF_ERROR(IngestFeeds(env, incremental ? o.add_inputs : o.inputs, io, &threats, &keys, &clear,
                                           &ingest, progress_fn));
      URLGUARD_RETURN_IF_ERROR(CheckInputs(o, incremental ? o.add_inputs : o.inputs, ingest));
    }
    add_report(ingest);
  }
  if (!incremental && keys.added() == 0) return Status::InvalidArgument("no valid entry in the inputs");
  phase(PublishPhase::kSortMerge, "sorting");
  URLGUARD_RETURN_IF_ERROR(keys.Finish());
  URLGUARD_RETURN_IF_ERROR(clear.Finish());
  // Removed entries (incremental): their own small sorters; threat names do not matter for a removal.
  ThreatTable removed_threats;
  KeySorter removed_keys(env, {tmp_dir, "rmkeys", budget / 10, threads});
  ClearSorter removed_clear(env, {tmp_dir, "rmclear", budget / 20, threads});
  if (incremental) {
    phase(PublishPhase::kParse, "removed entries");
    IngestReport ingest;
    io.first_feed_index = 1 + o.add_inputs.size();
    URLGUARD_RETURN_IF_ERROR(IngestFeeds(env, o.remove_inputs, io, &removed_threats, &removed_keys, &removed_clear,
                                         &ingest, progress_fn));
    URLGUARD_RETURN_IF_ERROR(CheckInputs(o, o.remove_inputs, ingest));
    add_report(ingest);
    phase(PublishPhase::kSortMerge, "sorting removed entries");
    URLGUARD_RETURN_IF_ERROR(removed_keys.Finish());
    URLGUARD_RETURN_IF_ERROR(removed_clear.Finish());
  }

  // 2. The version number (and the previous versions: diff bases and universes).
  std::vector<uint64_t> versions = PrivateVersions(env, private_dir);
  if (o.version_store != nullptr) {  // copies above the last committed version are a killed run's leftovers
    std::erase_if(versions, [&](uint64_t v) { return v > committed.version; });
  }
  std::vector<OpenSnapshot> previous;  // newest last
  for (size_t i = versions.size() > o.keep ? versions.size() - o.keep : 0; i < versions.size(); ++i) {
    auto s = OpenPrivateSnapshot(env, private_dir, versions[i]);
    if (!s.ok()) return s.status();
    previous.push_back(std::move(s).value());
  }
  uint64_t version = AllocateVersion(o.version_store, committed, versions);
  // Manifest format 2 keeps private snapshot copies of checkpoints only: the public manifest says which version was
  // committed last, and a full version after incremental ones must follow it, never go back.
  if (o.version_store == nullptr) {
    auto current = env->ReadFile(JoinPath(public_dir, kManifestFileName), kMaxManifestBytes);
    if (current.ok()) {
      auto parsed = ParseManifest(*current);
      if (parsed.ok() && parsed->version >= version) version = parsed->version + 1;
    }
  }
  report.version = version;
  report.first_version = previous.empty();

  // 3. The merged records, in (layer, key) order: a scratch copy with provisional threat ids (the union of every
  // name in play), the counts, the threat names actually used, and the second order (by SHA-256).
  // An incremental version (design17 §1): its effective change, found by lookups in the previous version's state
  // (base + deltas, publish/lsm_state.h), is written as V.delta; the new version's records are then the state at V,
  // walked from the base and the deltas. No state file is read whole or rewritten.
  std::unique_ptr<EntryListReader> old_entries;
  std::vector<std::string> union_threats = threats.names();  // provisional id = position
  std::unique_ptr<LsmState> new_state;
  std::optional<LsmState::Cursor> new_cursor;
  if (incremental) {
    if (versions.empty()) {
      return Status::FailedPrecondition("an incremental version needs a previous one: publish with --input first");
    }
    const uint64_t base = versions.back();
    {
      phase(PublishPhase::kSortMerge, "effective change");
      URLGUARD_ASSIGN_OR_RETURN(auto previous_state, LsmState::Open(env, private_dir, o.list, base));
      URLGUARD_ASSIGN_OR_RETURN(EffectiveChange change,
                                ComputeEffectiveChange(*previous_state, &keys, threats.names(), &removed_keys));
      // With a version store the version may skip numbers this directory never published: those kept `base`'s
      // content here (an empty delta each), as the incremental version before deltas took `base`'s state file.
      for (uint64_t v = base + 1; v < version; ++v) {
        URLGUARD_RETURN_IF_ERROR(
            WriteStateDelta(env, JoinPath(private_dir, StateDeltaFileName(v)), o.list, v, EffectiveChange{}));
      }
      URLGUARD_RETURN_IF_ERROR(
          WriteStateDelta(env, JoinPath(private_dir, StateDeltaFileName(version)), o.list, version, change));
      URLGUARD_FAULT_POINT("publish.incremental.after-delta");
      // The verify servers' change (design17 §2), beside the whole V.ugh that servers still read until they map
      // deltas (server/, issue 17).
      URLGUARD_RETURN_IF_ERROR(
          WriteFullHashDelta(env, JoinPath(private_dir, FullHashDeltaFileName(version)), o.list, version, change));
      report.delta_puts = change.puts;
      report.delta_deletes = change.deletes;
    }
    URLGUARD_ASSIGN_OR_RETURN(new_state, LsmState::Open(env, private_dir, o.list, version));
    new_cursor.emplace(new_state.get());
    union_threats = new_state->threats();
    URLGUARD_ASSIGN_OR_RETURN(old_entries, EntryListReader::Open(JoinPath(private_dir, EntryListFileName(base))));
    if (union_threats.size() > kMaxThreatNames) return Status::ResourceExhausted("too many threat names");
  }
  // The removal cap (docs/feeds.md, "The publication guard") of a full version from files: the previous
  // version's state (base + deltas), walked beside the merge. (With a version store, the store's entry source
  // applies the cap: publish/pg_publish.cc.)
  std::unique_ptr<LsmState> previous_state;
  std::optional<LsmState::Cursor> previous_cursor;
  std::optional<RemovedCounter> removed_counter;
  // A previous version published before state files were kept has none: its successor is not capped.
  if (o.cap_removal && !incremental && o.version_store == nullptr && !versions.empty()) {
    auto opened = LsmState::Open(env, private_dir, o.list, versions.back());
    if (!opened.ok() && opened.status().code() != StatusCode::kFailedPrecondition) return opened.status();
    if (opened.ok()) {
      previous_state = std::move(opened).value();
      previous_cursor.emplace(previous_state.get());
      removed_counter.emplace([&previous_cursor](KeyRecord* r) { return previous_cursor->Next(r); });
    }
  }
  // A full version: the added records are the whole content.
  VersionMerge merged_keys(nullptr, {}, nullptr, &keys);
  auto next_record = [&](KeyRecord* r) -> Result<bool> {
    return new_cursor ? new_cursor->Next(r) : merged_keys.Next(r);
  };
  ShaSorter by_sha(env, {tmp_dir, "sha", budget / 10 * 4, 1});
  LayerCounts counts;
  std::vector<bool> used(union_threats.size());
  const std::string merged_path = JoinPath(tmp_dir, kMergedRunFileName);
  {
    URLGUARD_ASSIGN_OR_RETURN(auto merged, RunFileWriter::Create(env, merged_path));
    // With two threads or more, the SHA-256 order's spills (sorts of up to 40% of the budget) run beside the merge.
    SorterFeed sha_feed(&by_sha, threads >= 2);
    KeyRecord r;
    phase(PublishPhase::kSortMerge, "merging");
    for (uint64_t n = 1;; ++n) {
      URLGUARD_ASSIGN_OR_RETURN(bool has, next_record(&r));
      if (!has) break;
      if ((n & 0xffff) == 0) phase(PublishPhase::kSortMerge, "merging", n);
      r.seq = 0;
      if (removed_counter) URLGUARD_RETURN_IF_ERROR(removed_counter->Next(r));
      used[r.threat] = true;
      counts.Add(r);
      URLGUARD_RETURN_IF_ERROR(merged->Append(&r, sizeof(r)));
      URLGUARD_RETURN_IF_ERROR(sha_feed.Add(r));
    }
    URLGUARD_RETURN_IF_ERROR(sha_feed.Finish());
    URLGUARD_RETURN_IF_ERROR(merged->Close());
  }
  if (counts.total() == 0) return Status::InvalidArgument("no valid entry in the new version");
  if (removed_counter) {
    URLGUARD_RETURN_IF_ERROR(removed_counter->Finish());
    Status capped =
        CheckVersionRemoval(o.list, version, removed_counter->removed(), removed_counter->previous_records(),
                            o.max_removal);
    if (!capped.ok()) {  // nothing but scratch files written yet: the served version stays
      if (o.refusal != nullptr) *o.refusal = PublishRefusal::kLargeRemoval;
      return capped;
    }
  }
  std::vector<std::string> final_threats;
  for (size_t i = 0; i < union_threats.size(); ++i) {
    if (used[i]) final_threats.push_back(union_threats[i]);
  }
  std::sort(final_threats.begin(), final_threats.end());
  std::vector<uint16_t> final_id(union_threats.size());
  for (size_t i = 0; i < union_threats.size(); ++i) {
    final_id[i] = static_cast<uint16_t>(std::lower_bound(final_threats.begin(), final_threats.end(),
                                                         union_threats[i]) - final_threats.begin());
  }
  report.spilled_runs = keys.spilled_runs() + clear.spilled_runs() + removed_keys.spilled_runs() +
                        removed_clear.spilled_runs();

  BuildOptions bo;
  bo.list_name = o.list;
  bo.version = version;
  bo.created_unix = now;
  bo.fp_rate = o.fp_rate;
  for (int li = 0; li < kLayerKindCount; ++li) {
    LayerKind kind = static_cast<LayerKind>(li);
    uint64_t needed = UniverseForCount(kind, counts.total(), counts.ip_prefixes, o.fp_rate);
    uint64_t prev = previous.empty() ? 0 : LayerUniverse(previous.back().view, kind);
    if (prev != 0 && prev >= needed && static_cast<double>(prev) <= kMaxUniverseSlack * static_cast<double>(needed)) {
      bo.universe_override[li] = prev;
    } else {
      double u = std::ceil(static_cast<double>(needed) * kUniverseHeadroom);
      bo.universe_override[li] = u >= 9.2e18 ? (uint64_t{1} << 63) : static_cast<uint64_t>(u);
      if (prev != 0 && counts.entries[li] != 0) report.universe_changed = true;
    }
  }
  for (int li = 0; li < 3; ++li) report.entries[li] = counts.entries[li];
  // 4 (begun early). Full hashes for the verify API (V.ugh, docs/full-hash-format.md; servers pick it up by
  // themselves): they need only the SHA-256 order and the final threat ids, so with two threads or more they run
  // beside the state file, snapshot, entry list and compressed snapshot below (the two chains take similar time).
  // What the run commits is unchanged: the seen filter (a version store keeps the seen counts itself) is taken,
  // queried and recorded, and older versions' .ugh files go, only after every file below was written.
  SeenRunSummary run;
  Status hashes_status;
  auto write_hashes = [&]() -> Status {
    URLGUARD_RETURN_IF_ERROR(by_sha.Finish());
    return WriteFullHashes(env, JoinPath(private_dir, FullHashFileName(version)), tmp_dir, o.list, version,
                           counts.total(), final_threats, final_id, &by_sha,
                           /*spool=*/o.version_store == nullptr, &run);
  };
  std::thread hashes_thread;
  bool hashes_kept = false;  // until the files below are written: a failed run leaves no V.ugh of its version
  OnExit join_hashes{[&] {
    if (hashes_thread.joinable()) hashes_thread.join();
    if (!hashes_kept) (void)env->RemoveFile(JoinPath(private_dir, FullHashFileName(version)));
  }};
  if (threads >= 2) hashes_thread = std::thread([&] { hashes_status = write_hashes(); });

  // The private state file (final threat ids), counting each layer's distinct fingerprints on the way (distinct
  // keys may share one: the snapshot writer needs the exact count up front).
  const std::string state_path = JoinPath(private_dir, StateFileName(version));
  uint64_t fp_counts[3] = {0, 0, 0};
  // A full version writes a new base (the state file); an incremental one has written its delta already.
  if (incremental) {
    phase(PublishPhase::kWrite, "fingerprint counts");
    URLGUARD_RETURN_IF_ERROR(CountFingerprints(merged_path, bo.universe_override, fp_counts));
  } else {
    phase(PublishPhase::kWrite, "state file");
    URLGUARD_RETURN_IF_ERROR(WriteStateFile(env, merged_path, state_path, o.list, version, final_threats, final_id,
                                            bo.universe_override, fp_counts));
    (void)env->RemoveFile(merged_path);
  }
  const std::string snapshot_path = JoinPath(private_dir, PrivateSnapshotFileName(version));
  phase(PublishPhase::kWrite, "snapshot");
  URLGUARD_ASSIGN_OR_RETURN(Sha256Digest state_hash,
                            WriteSnapshotFromState(env, incremental ? merged_path : state_path, snapshot_path, bo,
                                                   counts, fp_counts, /*merged_run=*/incremental));
  if (incremental) (void)env->RemoveFile(merged_path);
  ClearVersionMerge merged_clear(old_entries.get(), incremental ? &removed_clear : nullptr, &clear);
  phase(PublishPhase::kWrite, "entry list");
  URLGUARD_RETURN_IF_ERROR(WriteEntryListFrom(env, JoinPath(private_dir, EntryListFileName(version)), o.list, version,
                                              counts.entries[static_cast<int>(LayerKind::kUrl)], &merged_clear));
  URLGUARD_ASSIGN_OR_RETURN(OpenSnapshot current, OpenPrivateSnapshot(env, private_dir, version));
  report.snapshot_bytes = current.file->size();

  // 3. Static files: snapshot, then diffs from each kept version whose universes match.
  Manifest m;
  m.list = o.list;
  m.version = version;
  m.created_unix = now;
  m.expires_unix = now + o.expires_in_seconds;
  m.min_wait_seconds = o.min_wait_seconds;
  m.emergency = o.emergency;
  m.state_sha256 = state_hash;
  m.state_bytes = current.file->size();
  m.ip_prefix_lengths = counts.ip_prefixes.bits;
  for (int li = 0; li < 3; ++li) {
    m.entries[li] = fp_counts[li];
    m.universe[li] = fp_counts[li] == 0 ? 0 : bo.universe_override[li];
  }
  m.snapshot.path = SnapshotFileName(version);
  phase(PublishPhase::kWrite, "compressed snapshot");
  URLGUARD_RETURN_IF_ERROR(WriteDeflated(env, JoinPath(public_dir, m.snapshot.path), *current.file, &m.snapshot));
  report.snapshot_wire_bytes = m.snapshot.size;

  for (const OpenSnapshot& prev : previous) {
    phase(PublishPhase::kWrite, "diff from version " + std::to_string(prev.version));
    Diff diff;
    diff.list_name = o.list;
    diff.from_version = prev.version;
    diff.to_version = version;
    // Fingerprints of another key hash (a format 1 snapshot) are other numbers: no diff, the snapshot instead.
    bool compatible = prev.view.key_hash() == current.view.key_hash();
    uint64_t changed = 0;
    for (int li = 0; li < 3 && compatible; ++li) {
      LayerKind kind = static_cast<LayerKind>(li);
      const LayerView* old_layer = prev.view.layer(kind);
      if (old_layer != nullptr && old_layer->filter != FilterKind::kFingerprintArray) compatible = false;
      uint64_t old_u = LayerUniverse(prev.view, kind);
      uint64_t new_u = fp_counts[li] == 0 ? 0 : bo.universe_override[li];
      if (old_u == 0 && new_u == 0) continue;
      if (old_u != 0 && new_u != 0 && old_u != new_u) {
        compatible = false;
        break;
      }
      LayerDiff d = StreamLayerDiff(kind, new_u != 0 ? new_u : old_u, old_layer, current.view.layer(kind));
      changed += d.added.size() + d.removed_positions.size();
      if (&prev == &previous.back()) {
        report.added[li] = d.added.size();
        report.removed[li] = d.removed_positions.size();
      }
      diff.layers.push_back(std::move(d));
    }
    if (!compatible || !ValidateDiff(diff).ok()) continue;
    std::string bytes = EncodeDiff(diff);
    if (bytes.size() > kMaxDiffBytes) continue;  // clients take the snapshot instead
    ManifestDiff md;
    md.from_version = prev.version;
    md.file.path = DiffFileName(prev.version, version);
    URLGUARD_RETURN_IF_ERROR(WriteDeflated(env, JoinPath(public_dir, md.file.path), bytes, &md.file));
    m.diffs.push_back(md);
    report.diffs.push_back({prev.version, md.file.size, changed});
  }

  // 4. The full hashes are written before the manifest, so that no client holds a version whose hashes no server
  // can confirm; then the seen filter records the run. Older versions' .ugh files go: a server that still maps one
  // keeps its mapping.
  phase(PublishPhase::kWrite, "full hashes");
  if (hashes_thread.joinable()) {
    hashes_thread.join();
  } else {
    hashes_status = write_hashes();
  }
  URLGUARD_RETURN_IF_ERROR(hashes_status);
  hashes_kept = true;
  phase(PublishPhase::kWrite, "seen filter");
  const std::string seen_path = SeenFilterPath(o.repo_dir);
  std::optional<SeenFilter> filter;
  std::unique_ptr<FileLock> seen_lock;  // seen.bin is the repository's, shared by every list's publisher
  if (o.version_store == nullptr) {
    URLGUARD_ASSIGN_OR_RETURN(seen_lock, LockFileWaiting(env, SeenLockPath(o.repo_dir), kSeenLockWaitMillis));
    auto seen = SeenFilter::Load(env, seen_path);
    if (!seen.ok() && seen.status().code() != StatusCode::kNotFound) return seen.status();
    filter.emplace(seen.ok() ? std::move(seen).value()
                             : SeenFilter::Create(kSeenInitialCapacity, kSeenFpRate, kSeenCountEps, kSeenCountDelta));
    URLGUARD_RETURN_IF_ERROR(QueryAndRecordSeen(env, tmp_dir, &*filter, &run));
  }
  for (uint64_t v : versions) (void)env->RemoveFile(JoinPath(private_dir, FullHashFileName(v)));
  report.new_keys = run.new_keys;
  report.seen_before = run.seen_before;
  if (filter) {
    phase(PublishPhase::kWrite, "seen filter save");
    URLGUARD_RETURN_IF_ERROR(filter->Save(env, seen_path));
  }
  seen_lock.reset();

  // Manifest format 2: a full version is a checkpoint (docs/versions.md §5): its snapshot is the checkpoint's, an
  // empty epoch map and archive start at it, and its record is written before the manifest names it. Clients of
  // earlier versions take the snapshot (there is no archive across a full version).
  if (o.manifest_format == kManifestFormat2) {
    if (o.version_store != nullptr) return Status::InvalidArgument("manifest format 2 needs the file state");
    const SetDigestInput digest = SetDigestInputOf(current.view);
    Manifest v2 = m;
    v2.format = kManifestFormat2;
    v2.checkpoint.version = version;
    v2.checkpoint.snapshot = m.snapshot;
    v2.checkpoint.state_sha256 = m.state_sha256;
    v2.checkpoint.state_bytes = m.state_bytes;
    v2.snapshot = {};
    v2.state_sha256 = {};
    v2.state_bytes = 0;
    v2.diffs.clear();
    v2.state_digest = SetDigest(digest);
    for (int li = 0; li < kLayerKindCount; ++li) v2.universe[li] = digest.universe[li];
    EpochMap empty(version, digest.layers);
    URLGUARD_RETURN_IF_ERROR(WriteEpochFile(env, JoinPath(private_dir, EpochMapFileName(version)), empty, o.list));
    URLGUARD_RETURN_IF_ERROR(WriteEpochFile(env, JoinPath(private_dir, ArchiveFileName(version)), empty, o.list));
    Manifest record = v2;
    for (int li = 0; li < kLayerKindCount; ++li) {
      if (record.universe[li] == 0) record.universe[li] = bo.universe_override[li];
    }
    SizeEmptyLayers(&record, counts.total(), counts.ip_prefixes, o.fp_rate);
    URLGUARD_RETURN_IF_ERROR(
        WriteCheckpointRecord(env, JoinPath(private_dir, CheckpointRecordFileName(version)), record));
    for (const OpenSnapshot& p : previous) (void)env->RemoveFile(JoinPath(public_dir, DiffFileName(p.version, version)));
    m = std::move(v2);
    report.checkpoint = version;
  }

  // 5. The manifest and its signature: written last, so every file they name exists. A client that reads the new
  // manifest with the old signature (or the reverse) sees a bad signature and retries later.
  report.manifest_path = JoinPath(public_dir, kManifestFileName);
  std::string after_commit;
  phase(PublishPhase::kSign, "manifest");
  URLGUARD_RETURN_IF_ERROR(CommitManifest(env, key, public_dir, m, o.version_store, &after_commit));
  // The version is committed: from here on nothing fails the run (clients may already hold the version). What goes
  // wrong is a warning in the report; the next run of any list repeats every step below.
  report.committed = true;
  if (!after_commit.empty()) report.warnings.push_back(after_commit);
  // The signed index of every list the repository serves (docs/list-index.md), now naming this version.
  phase(PublishPhase::kSign, "list index");
  if (auto index = WriteListIndex(env, key, o.repo_dir, now); !index.ok()) {
    report.warnings.push_back("the list index was not rewritten (the next publication of any list rewrites it; or "
                              "run `urlguard-publish index`): " + index.status().ToString());
  }

  // 6. Forget what no manifest names: private copies beyond the last `keep` diff bases, public files other than
  // the current manifest's (the previous snapshot is kept one more version for clients mid-download).
  for (uint64_t v : versions) {
    if (v + o.keep < version) {
      (void)env->RemoveFile(JoinPath(private_dir, PrivateSnapshotFileName(v)));
      (void)env->RemoveFile(JoinPath(private_dir, EntryListFileName(v)));
    }
  }
  // 7. The state (publish/lsm_state.h): fold the deltas into a new base once they have grown (after the commit: a
  // compaction never delays a version), then drop superseded bases and deltas past their retention.
  // TODO(issue 17): run the compaction on a background thread of the publisher loop instead of here.
  if (new_state) {
    new_cursor.reset();
    const bool by_ratio =
        o.compact_ratio != 0 && new_state->overlay_records() * o.compact_ratio > new_state->base_records();
    const bool by_count = o.compact_max_deltas != 0 && new_state->delta_count() >= o.compact_max_deltas;
    new_state.reset();
    if (by_ratio || by_count) {
      phase(PublishPhase::kWrite, "compaction");
      Status compacted = CompactListState(env, private_dir, o.list, version);
      if (compacted.ok()) {
        report.compacted = true;
      } else {
        report.warnings.push_back("the list's state was not compacted (the next version tries again): " +
                                  compacted.ToString());
      }
    }
  }
  const uint64_t keep_deltas_from = version >= o.keep_deltas ? version - o.keep_deltas + 1 : 0;
  if (Status pruned = PruneListState(env, private_dir, o.list, version, keep_deltas_from); !pruned.ok()) {
    report.warnings.push_back("old state files were not removed: " + pruned.ToString());
  }
  if (auto listed = env->ListDir(private_dir); listed.ok()) {
    for (const std::string& n : *listed) {
      std::optional<uint64_t> v = ParseFullHashDeltaFileName(n);
      if (v && *v < keep_deltas_from) (void)env->RemoveFile(JoinPath(private_dir, n));
    }
  }
  auto names = env->ListDir(public_dir);
  if (names.ok()) {
    for (const std::string& n : *names) {
      // LIST.rpz: the DNS export (urlguard-publish export), rewritten by its own command.
      bool keep = n == kManifestFileName || n == kManifestSignatureFileName || n == m.snapshot.path ||
                  n == m.checkpoint.snapshot.path ||
                  n == RpzFileName(o.list) || (!versions.empty() && n == SnapshotFileName(versions.back()));
      for (const ManifestDiff& d : m.diffs) keep |= n == d.file.path;
      for (const ManifestDiff& d : m.large_diffs) keep |= n == d.file.path;
      if (!keep) (void)env->RemoveFile(JoinPath(public_dir, n));
    }
  }
  (void)RemoveTree(env, tmp_dir);
  return report;
}

Result<std::vector<int64_t>> SeenCounts(Env* env, const std::string& repo_dir, const std::vector<std::string>& entries) {
  auto seen = SeenFilter::Load(env, SeenFilterPath(repo_dir));
  if (!seen.ok()) return seen.status();
  std::vector<int64_t> out;
  for (const std::string& e : entries) {
    auto k = EntryKeyFor(e);
    if (!k.ok()) {
      out.push_back(-1);
      continue;
    }
    Sighting s = seen->Query(SeenKeyFor(k->expression));
    out.push_back(s.seen_before ? static_cast<int64_t>(std::max<uint64_t>(1, s.approx_count_before)) : 0);
  }
  return out;
}

}  // namespace urlguard
