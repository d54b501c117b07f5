// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// FileHashSource: the verify API's answers from full-hash files (format/full_hash_file.h). For every list
// directory under REPO/private/lists/ it maps the newest V.ugh, validates it completely (checksum, record order,
// buckets) and only then answers from it; Refresh() picks up newer versions the same way and swaps them in
// atomically, so a lookup sees either the old set of versions or the new one, never a file being checked.
// A file that fails validation is skipped (and not checked again) while the previous version keeps answering.
//
// Memory: the files are mapped read-only and shared with the page cache; a lookup touches about two cache lines
// per list and prefix (the bucket index entry and the records).
//
// Thread safety: Lookup() and Loaded() from any number of threads; Refresh() from one thread at a time
// (refresh_mutex_), concurrently with lookups.
#ifndef URLGUARD_SERVER_FILE_HASH_SOURCE_H_
#define URLGUARD_SERVER_FILE_HASH_SOURCE_H_

#include <set>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/thread_annotations.h"
#include "format/full_hash_file.h"
#include "server/verify_hash_source.h"
#include "urlguard/env.h"

namespace urlguard {

class FileHashSource : public VerifyHashSource {
 public:
  // Loads the newest valid V.ugh of every list under `lists_dir` (REPO/private/lists). A missing `lists_dir`
  // or a list without any valid file is not an error: that list is simply not answered for until Refresh()
  // finds one. `env` is not owned and must outlive the source.
  static std::unique_ptr<FileHashSource> Open(Env* env, std::string lists_dir);

  // Rescans `lists_dir` and swaps in every newer valid version (never an older one; a list whose directory
  // has no .ugh file any more stops being answered for). Ok, or the first problem met (a file that failed
  // validation, named with its path); the other lists are refreshed regardless.
  Status Refresh() override;

  Status Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const override;
  std::vector<LoadedListVersion> Loaded() const override;

 private:
  struct List {
    std::string name;
    uint64_t version = 0;
    std::shared_ptr<MappedFile> file;
    FullHashFileView view;
  };
  struct Table {
    std::vector<List> lists;  // sorted by name
  };

  FileHashSource(Env* env, std::string lists_dir) : env_(env), lists_dir_(std::move(lists_dir)) {}
  std::shared_ptr<const Table> Current() const EXCLUDES(table_mutex_);
  // The newest valid version of list `name` newer than `loaded` (0: none loaded), into *out. False: none.
  bool LoadNewest(const std::string& name, uint64_t loaded, List* out, Status* problem)
      REQUIRES(refresh_mutex_);

  Env* const env_;
  const std::string lists_dir_;

  mutable Mutex table_mutex_;
  // The pointer is guarded; the table itself is immutable.
  std::shared_ptr<const Table> table_ GUARDED_BY(table_mutex_) = std::make_shared<const Table>();

  Mutex refresh_mutex_;  // also serializes Refresh()
  // (list, version) files that failed validation.
  std::set<std::pair<std::string, uint64_t>> rejected_ GUARDED_BY(refresh_mutex_);
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_FILE_HASH_SOURCE_H_
