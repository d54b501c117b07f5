// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/file_hash_source.h"

#include <algorithm>

#include "core/list_name.h"
#include "format/repository_files.h"
#include "platform/env.h"

namespace urlguard {

namespace {

// Versions of the V.ugh files in `dir`, newest first.
std::vector<uint64_t> FullHashVersions(Env* env, const std::string& dir) {
  std::vector<uint64_t> versions;
  auto names = env->ListDir(dir);
  if (!names.ok()) return versions;
  for (const std::string& n : *names) {
    if (auto v = ParseFullHashFileName(n)) versions.push_back(*v);
  }
  std::sort(versions.rbegin(), versions.rend());
  return versions;
}

}  // namespace

std::unique_ptr<FileHashSource> FileHashSource::Open(Env* env, std::string lists_dir) {
  std::unique_ptr<FileHashSource> source(new FileHashSource(env, std::move(lists_dir)));
  (void)source->Refresh();  // problems are per list; the source answers for what loaded
  return source;
}

std::shared_ptr<const FileHashSource::Table> FileHashSource::Current() const {
  MutexLock lock(&table_mutex_);
  return table_;
}

bool FileHashSource::LoadNewest(const std::string& name, uint64_t loaded, List* out, Status* problem) {
  const std::string dir = JoinPath(lists_dir_, name);
  for (uint64_t v : FullHashVersions(env_, dir)) {
    if (v <= loaded) return false;
    if (rejected_.count({name, v}) != 0) continue;  // checked before: no new file can take its name
    const std::string path = JoinPath(dir, FullHashFileName(v));
    auto mapped = env_->MapReadOnly(path);
    Status s;
    if (mapped.ok()) {
      auto view = FullHashFileView::Open((*mapped)->data(), (*mapped)->size(), /*verify_contents=*/true);
      if (view.ok() && (view->list_name() != name || view->version() != v)) {
        s = Status::Corruption("full-hash file names another list or version");
      } else if (view.ok()) {
        out->name = name;
        out->version = v;
        out->file = std::move(mapped).value();
        out->view = *view;
        return true;
      } else {
        s = view.status();
      }
    } else if (mapped.status().code() == StatusCode::kNotFound) {
      continue;  // removed by the publisher since the listing
    } else {
      s = mapped.status();
    }
    if (problem->ok()) *problem = s.WithContext(path);
    rejected_.insert({name, v});
  }
  return false;
}

Status FileHashSource::Refresh() {
  MutexLock refresh(&refresh_mutex_);
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
  Status problem;
  bool changed = false;
  for (const std::string& name : lists) {
    const auto it = std::find_if(old->lists.begin(), old->lists.end(), [&](const List& l) { return l.name == name; });
    const uint64_t loaded = it == old->lists.end() ? 0 : it->version;
    List fresh;
    if (LoadNewest(name, loaded, &fresh, &problem)) {
      next->lists.push_back(std::move(fresh));
      changed = true;
    } else if (it != old->lists.end() && !FullHashVersions(env_, JoinPath(lists_dir_, name)).empty()) {
      next->lists.push_back(*it);
    } else if (it != old->lists.end()) {
      changed = true;  // its files are gone: the list was withdrawn
    }
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
  for (const List& list : table->lists) {
    out->versions.push_back({list.name, list.version});
    matches.clear();
    for (size_t i = 0; i < *n; ++i) list.view.LookupPrefix(unique[i], &matches);
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
  for (const List& l : Current()->lists) out.push_back({l.name, l.version, l.view.records()});
  return out;
}

}  // namespace urlguard
