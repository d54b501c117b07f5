// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/file_hash_source.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/list_name.h"
#include "format/repository_files.h"
#include "http/prometheus.h"
#include "platform/env.h"

namespace urlguard {

struct FileHashSource::Base {
  uint64_t version = 0;
  std::shared_ptr<MappedFile> file;
  FullHashFileView view;
};

// The deltas (base, version] merged, normalized against the base: every record differs from the base (a put of
// a key the base lacks or holds with another threat; a delete of a key the base holds).
struct FileHashSource::Overlay {
  static constexpr uint8_t kDeleted = 1;  // Record::flags: the key is absent at the served version
  static constexpr uint8_t kInBase = 2;   // Record::flags: the base holds the key
  struct Record {
    uint8_t key[33];  // sha256, layer: strictly ascending
    uint8_t flags;
    uint16_t threat;  // index into `threats` (puts)
  };
  static_assert(sizeof(Record) == 36, "overlay records are 36 bytes (the memory bound in the header)");

  std::vector<Record> records;
  std::vector<uint32_t> index;  // index[b]: the first record whose prefix's top `bucket_bits` bits are >= b
  uint32_t bucket_bits = 0;
  std::vector<std::string> threats;  // stable: the overlay is immutable once built
  uint64_t added = 0;                // puts of keys the base lacks
  uint64_t removed = 0;              // deletes

  // Appends the records whose prefix is `prefix`, deletes included (flagged), in key order.
  void Lookup(uint32_t prefix, std::vector<FullHashMatch>* out) const;
};

namespace {

uint32_t PrefixOfKey(const uint8_t* key) {
  return (uint32_t{key[0]} << 24) | (uint32_t{key[1]} << 16) | (uint32_t{key[2]} << 8) | uint32_t{key[3]};
}

int CompareKey(const FullHashMatch& a, const FullHashMatch& b) {
  const int c = std::memcmp(a.sha256.data(), b.sha256.data(), 32);
  if (c != 0) return c;
  return static_cast<int>(a.layer) - static_cast<int>(b.layer);
}

}  // namespace

void FileHashSource::Overlay::Lookup(uint32_t prefix, std::vector<FullHashMatch>* out) const {
  if (records.empty()) return;
  const uint32_t b = prefix >> (32 - bucket_bits);
  for (uint32_t i = index[b]; i < index[b + 1]; ++i) {
    const Record& r = records[i];
    const uint32_t p = PrefixOfKey(r.key);
    if (p < prefix) continue;
    if (p > prefix) break;
    FullHashMatch& m = out->emplace_back();
    std::memcpy(m.sha256.data(), r.key, 32);
    m.layer = static_cast<LayerKind>(r.key[32]);
    m.deleted = (r.flags & kDeleted) != 0;
    if (!m.deleted) m.threat = threats[r.threat];
  }
}

uint64_t FileHashSource::List::records() const { return base->view.records() + overlay->added - overlay->removed; }

// A list directory's files: base versions newest first, delta versions.
struct FileHashSource::Files {
  std::string dir;
  std::vector<uint64_t> bases;
  std::set<uint64_t> deltas;
};

namespace {

FileHashSource::Files ListFiles(Env* env, const std::string& dir) {
  FileHashSource::Files f;
  f.dir = dir;
  auto names = env->ListDir(dir);
  if (!names.ok()) return f;
  for (const std::string& n : *names) {
    if (auto v = ParseFullHashFileName(n)) f.bases.push_back(*v);
    if (auto v = ParseFullHashDeltaFileName(n)) f.deltas.insert(*v);
  }
  std::sort(f.bases.rbegin(), f.bases.rend());
  return f;
}

// Maps and fully validates base file `path` of list `name`, version `version`. kNotFound when it is gone.
Result<std::shared_ptr<const FileHashSource::Base>> LoadBase(Env* env, const std::string& path,
                                                              const std::string& name, uint64_t version) {
  auto mapped = env->MapReadOnly(path);
  if (!mapped.ok()) return mapped.status();
  auto view = FullHashFileView::Open((*mapped)->data(), (*mapped)->size(), /*verify_contents=*/true);
  if (!view.ok()) return view.status();
  if (view->is_delta()) return Status::Corruption("full-hash file is a delta file under a base file's name");
  if (view->list_name() != name || view->version() != version) {
    return Status::Corruption("full-hash file names another list or version");
  }
  auto base = std::make_shared<FileHashSource::Base>();
  base->version = version;
  base->file = std::move(mapped).value();
  base->view = *view;
  return std::shared_ptr<const FileHashSource::Base>(std::move(base));
}

// The new overlay: `old` with `delta` applied on top (the delta's record for a key replaces the old one),
// normalized against `base`. kResourceExhausted past `max_records` or 65536 threat names.
Result<std::shared_ptr<const FileHashSource::Overlay>> MergeDelta(const FileHashSource::Base& base,
                                                                   const FileHashSource::Overlay& old,
                                                                   const FullHashFileView& delta,
                                                                   uint64_t max_records) {
  using Overlay = FileHashSource::Overlay;
  auto next = std::make_shared<Overlay>();
  next->threats = old.threats;
  // The delta's threat ids in the new overlay's table.
  std::vector<std::pair<std::string_view, uint16_t>> remap;
  for (std::string_view t : delta.threat_names()) {
    auto it = std::find(next->threats.begin(), next->threats.end(), t);
    if (it == next->threats.end()) {
      if (next->threats.size() > 0xffff) return Status::ResourceExhausted("more than 65536 threat names");
      next->threats.emplace_back(t);
      it = next->threats.end() - 1;
    }
    remap.emplace_back(t, static_cast<uint16_t>(it - next->threats.begin()));
  }
  const uint64_t n = delta.records();
  next->records.reserve(std::min<uint64_t>(old.records.size() + n, max_records));
  std::vector<FullHashMatch> in_base;
  size_t i = 0;
  uint64_t j = 0;
  while (i < old.records.size() || j < n) {
    FullHashMatch d;
    bool take_delta = j < n;
    bool replaces = false;
    if (j < n) {
      d = delta.RecordAt(j);
      if (i < old.records.size()) {
        int c = std::memcmp(old.records[i].key, d.sha256.data(), 32);
        if (c == 0) c = static_cast<int>(old.records[i].key[32]) - static_cast<int>(d.layer);
        take_delta = c >= 0;
        replaces = c == 0;
      }
    }
    if (!take_delta) {
      next->records.push_back(old.records[i++]);
    } else {
      if (replaces) ++i;  // the delta's record for the key is the newer one
      ++j;
      // Normalize against the base.
      in_base.clear();
      base.view.LookupPrefix(DigestPrefix32(d.sha256), &in_base);
      const FullHashMatch* b = nullptr;
      for (const FullHashMatch& m : in_base) {
        if (CompareKey(m, d) == 0) b = &m;
      }
      if (d.deleted ? b == nullptr : (b != nullptr && b->threat == d.threat)) continue;  // same as the base
      Overlay::Record r{};
      std::memcpy(r.key, d.sha256.data(), 32);
      r.key[32] = static_cast<uint8_t>(d.layer);
      r.flags = static_cast<uint8_t>((d.deleted ? Overlay::kDeleted : 0) | (b != nullptr ? Overlay::kInBase : 0));
      if (!d.deleted) {
        for (const auto& [name, id] : remap) {
          if (name == d.threat) r.threat = id;
        }
      }
      next->records.push_back(r);
    }
    if (next->records.size() > max_records) {
      return Status::ResourceExhausted("the merged deltas exceed " + std::to_string(max_records) +
                                       " records (kMaxFullHashOverlayRecords): waiting for a compacted base");
    }
  }
  next->records.shrink_to_fit();
  for (const Overlay::Record& r : next->records) {
    if (r.flags & Overlay::kDeleted) {
      ++next->removed;
    } else if (!(r.flags & Overlay::kInBase)) {
      ++next->added;
    }
  }
  // The bucket index, as the file's (docs/full-hash-format.md).
  next->bucket_bits = FullHashBucketBitsFor(next->records.size());
  next->index.assign((size_t{1} << next->bucket_bits) + 1, 0);
  for (const Overlay::Record& r : next->records) ++next->index[(PrefixOfKey(r.key) >> (32 - next->bucket_bits)) + 1];
  for (size_t b = 1; b < next->index.size(); ++b) next->index[b] += next->index[b - 1];
  return std::shared_ptr<const Overlay>(std::move(next));
}

}  // namespace

std::unique_ptr<FileHashSource> FileHashSource::Open(Env* env, std::string lists_dir,
                                                     uint64_t max_overlay_records) {
  std::unique_ptr<FileHashSource> source(new FileHashSource(env, std::move(lists_dir), max_overlay_records));
  (void)source->Refresh();  // problems are per list; the source answers for what loaded
  return source;
}

FileHashSource::~FileHashSource() { WaitForBackgroundLoad(); }

void FileHashSource::WaitForBackgroundLoad() {
  MutexLock refresh(&refresh_mutex_);
  if (loader_.joinable()) loader_.join();
}

std::shared_ptr<const FileHashSource::Table> FileHashSource::Current() const {
  MutexLock lock(&table_mutex_);
  return table_;
}

void FileHashSource::Reject(const std::string& path, const Status& s, Status* problem) {
  if (problem->ok()) *problem = s.WithContext(path);
  rejected_files_.fetch_add(1, std::memory_order_relaxed);
}

bool FileHashSource::Extend(const Files& files, List* list, Status* problem) {
  bool advanced = false;
  for (;;) {
    const uint64_t v = list->version + 1;
    const std::string path = JoinPath(files.dir, FullHashDeltaFileName(v));
    if (rejected_deltas_.count({list->name, v}) != 0) break;
    if (files.deltas.count(v) == 0) {
      // A gap: a later delta exists without this one. Reported once; the list waits at its version.
      const auto later = files.deltas.upper_bound(v);
      if (later != files.deltas.end() && reported_gaps_.insert({list->name, v}).second && problem->ok()) {
        *problem = Status::NotFound("missing full-hash delta file (a later one exists)").WithContext(path);
      }
      break;
    }
    auto mapped = env_->MapReadOnly(path);
    if (!mapped.ok() && mapped.status().code() == StatusCode::kNotFound) break;  // removed since the listing
    Status s = mapped.status();
    Result<FullHashFileView> view = Status::Internal("unset");
    if (s.ok()) {
      view = FullHashFileView::Open((*mapped)->data(), (*mapped)->size(), /*verify_contents=*/true);
      s = view.status();
    }
    if (s.ok() && !view->is_delta()) s = Status::Corruption("full-hash delta file is a base file");
    if (s.ok() && (view->list_name() != list->name || view->version() != v || view->base_version() != v - 1)) {
      s = Status::Corruption("full-hash delta file names another list, version or base version");
    }
    if (!s.ok()) {
      rejected_deltas_.insert({list->name, v});
      Reject(path, s, problem);
      break;
    }
    auto merged = MergeDelta(*list->base, *list->overlay, *view, max_overlay_records_);
    if (!merged.ok()) {  // the cap: not the file's fault, so not rejected; retried at each Refresh()
      if (problem->ok()) *problem = merged.status().WithContext(path);
      break;
    }
    // The delta's bytes are not needed any more (the overlay copied its records): the mapping is dropped.
    list->overlay = std::move(merged).value();
    list->version = v;
    ++list->deltas;
    advanced = true;
  }
  return advanced;
}

void FileHashSource::StartBackgroundLoad(const std::string& name, uint64_t version) {
  {
    MutexLock lock(&loader_mutex_);
    loader_list_ = name;
    loader_version_ = version;
    loader_done_ = false;
    loader_base_.reset();
    loader_status_ = Status::Ok();
  }
  const std::string path = JoinPath(JoinPath(lists_dir_, name), FullHashFileName(version));
  loader_ = std::thread([this, path, name, version] {
    auto base = LoadBase(env_, path, name, version);
    MutexLock lock(&loader_mutex_);
    if (base.ok()) {
      loader_base_ = std::move(base).value();
    } else {
      loader_status_ = base.status();
    }
    loader_done_ = true;
  });
}

void FileHashSource::CollectBackgroundLoad(Status* problem) {
  std::string name;
  uint64_t version = 0;
  Status s;
  std::shared_ptr<const Base> base;
  {
    MutexLock lock(&loader_mutex_);
    if (!loader_done_) return;  // none started, or still running
    loader_done_ = false;       // taken (WaitForBackgroundLoad() may have joined the thread already)
    name = loader_list_;
    version = loader_version_;
    s = loader_status_;
    base = std::move(loader_base_);
  }
  if (loader_.joinable()) loader_.join();
  if (base != nullptr) {
    List candidate;
    candidate.name = name;
    candidate.version = version;
    candidate.base = std::move(base);
    candidate.overlay = std::make_shared<const Overlay>();
    candidates_[name] = std::move(candidate);
  } else if (s.code() != StatusCode::kNotFound) {  // a base removed since: nothing to reject
    rejected_.insert({name, version});
    Reject(JoinPath(JoinPath(lists_dir_, name), FullHashFileName(version)), s, problem);
  }
}

Status FileHashSource::Refresh() {
  MutexLock refresh(&refresh_mutex_);
  Status problem;
  CollectBackgroundLoad(&problem);
  const std::shared_ptr<const Table> old = Current();
  auto names = env_->ListDir(lists_dir_);
  std::vector<std::string> lists;
  if (names.ok()) {
    for (const std::string& n : *names) {
      if (IsValidListName(n)) lists.push_back(n);
    }
  }
  std::sort(lists.begin(), lists.end());
  auto next = std::make_shared<Table>();
  bool changed = false;
  for (const std::string& name : lists) {
    const auto it =
        std::find_if(old->lists.begin(), old->lists.end(), [&](const List& l) { return l.name == name; });
    const Files files = ListFiles(env_, JoinPath(lists_dir_, name));
    if (files.bases.empty()) {  // no base file any more: the list was withdrawn
      candidates_.erase(name);
      if (it != old->lists.end()) changed = true;
      continue;
    }
    std::optional<List> list;
    if (it != old->lists.end()) {
      list = *it;
      if (Extend(files, &*list, &problem)) changed = true;
    }
    // The newest base not known to be bad.
    uint64_t newest = 0;
    for (uint64_t v : files.bases) {
      if (rejected_.count({name, v}) == 0) {
        newest = v;
        break;
      }
    }
    if (newest != 0 && (!list || newest > list->version)) {
      // A base past the served version (no delta leads there): load it now, as before deltas existed.
      for (uint64_t v : files.bases) {
        if (list && v <= list->version) break;
        if (rejected_.count({name, v}) != 0) continue;
        const std::string path = JoinPath(files.dir, FullHashFileName(v));
        auto base = LoadBase(env_, path, name, v);
        if (!base.ok()) {
          if (base.status().code() == StatusCode::kNotFound) continue;  // removed since the listing
          rejected_.insert({name, v});
          Reject(path, base.status(), &problem);
          continue;
        }
        List fresh;
        fresh.name = name;
        fresh.version = v;
        fresh.base = std::move(base).value();
        fresh.overlay = std::make_shared<const Overlay>();
        Extend(files, &fresh, &problem);
        list = std::move(fresh);
        candidates_.erase(name);
        changed = true;
        break;
      }
    } else if (list && newest > list->base->version) {
      // A compacted base at or below the served version: validated in the background, swapped in once it and
      // its deltas reach the served version.
      auto cand = candidates_.find(name);
      if (cand != candidates_.end()) {
        Extend(files, &cand->second, &problem);
        if (cand->second.version >= list->version) {
          list = std::move(cand->second);
          candidates_.erase(cand);
          changed = true;
        }
      }
      cand = candidates_.find(name);
      const bool loading = loader_.joinable();
      if (!loading && (cand == candidates_.end() || cand->second.base->version < newest)) {
        StartBackgroundLoad(name, newest);
      }
    }
    if (list) next->lists.push_back(std::move(*list));
  }
  for (auto c = candidates_.begin(); c != candidates_.end();) {  // lists whose directory went away
    c = std::binary_search(lists.begin(), lists.end(), c->first) ? std::next(c) : candidates_.erase(c);
  }
  if (next->lists.size() != old->lists.size()) changed = true;
  if (changed) {
    MutexLock lock(&table_mutex_);
    table_ = std::move(next);
  }
  return problem;
}

Status FileHashSource::Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const {
  uint32_t unique[kMaxLookupPrefixes];
  auto n = UniquePrefixes(prefixes, unique);
  if (!n.ok()) return n.status();
  std::shared_ptr<const Table> table = Current();
  out->records.clear();
  out->versions.clear();
  thread_local std::vector<FullHashMatch> matches;
  thread_local std::vector<FullHashMatch> from_base;
  thread_local std::vector<FullHashMatch> from_overlay;
  for (const List& list : table->lists) {
    out->versions.push_back({list.name, list.version});
    matches.clear();
    for (size_t i = 0; i < *n; ++i) {
      if (list.overlay->records.empty()) {
        list.base->view.LookupPrefix(unique[i], &matches);
        continue;
      }
      // Both sides are in key order: merge them; the overlay's record for a key replaces the base's, and a
      // delete hides it.
      from_base.clear();
      from_overlay.clear();
      list.base->view.LookupPrefix(unique[i], &from_base);
      list.overlay->Lookup(unique[i], &from_overlay);
      size_t b = 0, o = 0;
      while (b < from_base.size() || o < from_overlay.size()) {
        const int c = b == from_base.size()      ? 1
                      : o == from_overlay.size() ? -1
                                                 : CompareKey(from_base[b], from_overlay[o]);
        if (c < 0) {
          matches.push_back(from_base[b++]);
          continue;
        }
        if (c == 0) ++b;
        if (!from_overlay[o].deleted) matches.push_back(from_overlay[o]);
        ++o;
      }
    }
    if (out->records.size() + matches.size() > kMaxLookupRecords) {
      out->records.clear();
      return Status::ResourceExhausted("more than " + std::to_string(kMaxLookupRecords) + " matches");
    }
    for (const FullHashMatch& m : matches) out->records.push_back({m.sha256, list.name, m.layer, m.threat});
  }
  if (table->lists.size() > 1) SortVerifyRecords(&out->records);
  out->pin = std::move(table);
  return Status::Ok();
}

std::vector<LoadedListVersion> FileHashSource::Loaded() const {
  std::vector<LoadedListVersion> out;
  for (const List& l : Current()->lists) out.push_back({l.name, l.version, l.records(), l.deltas});
  return out;
}

void FileHashSource::AppendMetrics(PrometheusText* out) const {
  std::shared_ptr<const Table> table = Current();
  out->Family("urlguard_server_loaded_version", "The list version this server answers for (fully loaded).",
              MetricType::kGauge);
  for (const List& l : table->lists) {
    out->Sample("urlguard_server_loaded_version", {{"list", l.name}}, static_cast<double>(l.version));
  }
  out->Family("urlguard_server_loaded_deltas",
              "Full-hash delta files the served version stacks on its base (0 after a compaction).",
              MetricType::kGauge);
  for (const List& l : table->lists) {
    out->Sample("urlguard_server_loaded_deltas", {{"list", l.name}}, static_cast<double>(l.deltas));
  }
  out->Family("urlguard_server_overlay_records",
              "Records of the in-memory overlay of merged deltas (36 bytes each).", MetricType::kGauge);
  for (const List& l : table->lists) {
    out->Sample("urlguard_server_overlay_records", {{"list", l.name}},
                static_cast<double>(l.overlay->records.size()));
  }
  out->Counter("urlguard_server_hash_files_rejected_total",
               "Full-hash base and delta files that failed validation (never answered from).",
               rejected_files_.load(std::memory_order_relaxed));
}

}  // namespace urlguard
