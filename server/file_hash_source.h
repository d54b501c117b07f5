// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// FileHashSource: the verify API's answers from full-hash files (format/full_hash_file.h). For every list
// directory under REPO/private/lists/ it serves version X = a base B.ugh plus the delta files (B, X]
// (V.ughd, docs/full-hash-format.md "Delta files"), and answers for X only once the base and every delta
// through X are mapped and fully validated (checksum, record order, buckets, ops). Refresh() picks up newer
// versions and swaps them in atomically, so a lookup sees either the old set of versions or the new one, never
// a file being checked.
//
// Why base + deltas (issue 17): at 100 M entries a V.ugh is 3.9 GB; validating it takes tens of seconds. A
// version's delta holds only what changed (a 50 k-change version: 1.8 MB), so picking up version X + 1 costs
// validating that delta and merging it into the overlay below: O(changes), without reading the base again.
//
//   * Deltas: V.ughd with V = X + 1, X + 2, ... (consecutive, each naming base_version V - 1) are validated once
//     when they appear. A missing delta stops the list at the last version before the gap; a corrupt one is
//     reported (like a rejected base: once) and never re-read; in both cases the list keeps answering for its
//     last fully loaded version until a base at or past the gap appears.
//   * Overlay: the loaded deltas merged into one sorted in-memory array (36 bytes per record, with a bucket
//     index like the file's), normalized against the base: a put equal to the base record and a delete of a key
//     the base does not hold are dropped, so the overlay is exactly the difference between base and X. A
//     lookup is one base lookup plus one overlay lookup per prefix, however many deltas are loaded. A new delta
//     builds a new overlay by a merge, O(overlay + delta). Memory: at most kMaxFullHashOverlayRecords records
//     (36 B each, plus 4 B x 2^bits of index); the publisher's compaction (a new base every
//     --checkpoint-changes changes, 1 M by default: ~40 MB of overlay) keeps it far below; past the cap a list
//     stops at its last version (kResourceExhausted) until a new base arrives.
//   * New base (a compaction wrote B'.ugh): if B' is past the served version (no delta leads there, e.g. the
//     publisher writes full files only) it is loaded in Refresh(), as before deltas existed. If B' is at or
//     below the served version, a background thread maps and validates it while Refresh() keeps picking up
//     deltas; once validated, its overlay is built from the deltas (B', ...] (read again: O(changes since B'))
//     and it is swapped in when it reaches the served version. Served versions never go back.
//
// Thread safety: Lookup(), Loaded() and AppendMetrics() from any number of threads; Refresh() and
// WaitForBackgroundLoad() from one thread at a time (refresh_mutex_), concurrently with lookups.
#ifndef URLGUARD_SERVER_FILE_HASH_SOURCE_H_
#define URLGUARD_SERVER_FILE_HASH_SOURCE_H_

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/thread_annotations.h"
#include "format/full_hash_file.h"
#include "server/verify_hash_source.h"
#include "urlguard/env.h"

namespace urlguard {

// The most records one list's delta overlay holds (36 bytes each): 16 M records, 604 MB plus a 64 MiB index.
constexpr uint64_t kMaxFullHashOverlayRecords = uint64_t{1} << 24;

class FileHashSource : public VerifyHashSource {
 public:
  // Loads the newest valid V.ugh of every list under `lists_dir` (REPO/private/lists) and its consecutive valid
  // deltas. A missing `lists_dir` or a list without any valid base is not an error: that list is simply not
  // answered for until Refresh() finds one. `env` is not owned and must outlive the source.
  // `max_overlay_records` caps each list's overlay (tests pass a small one).
  static std::unique_ptr<FileHashSource> Open(Env* env, std::string lists_dir,
                                              uint64_t max_overlay_records = kMaxFullHashOverlayRecords);
  ~FileHashSource() override;  // waits for a background base load in progress

  // Rescans `lists_dir`: loads new deltas, newer bases (see the file comment) and swaps in every newer fully
  // loaded version (never an older one; a list whose directory has no .ugh file any more stops being answered
  // for). Ok, or the first problem met (a file that failed validation, a gap in the deltas, the overlay cap),
  // named with its path; the other lists are refreshed regardless.
  Status Refresh() override;

  Status Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const override;
  // `deltas`: how many delta files the served version stacks on its base.
  std::vector<LoadedListVersion> Loaded() const override;
  // urlguard_server_loaded_version, urlguard_server_loaded_deltas, urlguard_server_overlay_records (per list),
  // urlguard_server_hash_files_rejected_total.
  void AppendMetrics(PrometheusText* out) const override;

  // Waits until a background base load in progress has finished (its result is taken by the next Refresh()).
  // For tests and benchmarks.
  void WaitForBackgroundLoad();

  struct Base;     // one mapped, validated V.ugh
  struct Overlay;  // merged deltas
  struct Files;    // a list directory's base and delta versions

 private:
  struct List {
    std::string name;
    uint64_t version = 0;                     // served: the base's version plus `deltas`
    uint64_t deltas = 0;                      // delta files merged into `overlay`
    std::shared_ptr<const Base> base;         // never null
    std::shared_ptr<const Overlay> overlay;   // never null (empty without deltas)
    uint64_t records() const;
  };
  struct Table {
    std::vector<List> lists;  // sorted by name
  };

  FileHashSource(Env* env, std::string lists_dir, uint64_t max_overlay_records)
      : env_(env), lists_dir_(std::move(lists_dir)), max_overlay_records_(max_overlay_records) {}
  std::shared_ptr<const Table> Current() const EXCLUDES(table_mutex_);
  // Merges the deltas after list->version that exist, in order, into its overlay. True if it advanced.
  bool Extend(const Files& files, List* list, Status* problem) REQUIRES(refresh_mutex_);
  // Takes a finished background load's result into candidates_ (or rejected_).
  void CollectBackgroundLoad(Status* problem) REQUIRES(refresh_mutex_);
  void StartBackgroundLoad(const std::string& name, uint64_t version) REQUIRES(refresh_mutex_);
  void Reject(const std::string& path, const Status& s, Status* problem) REQUIRES(refresh_mutex_);

  Env* const env_;
  const std::string lists_dir_;
  const uint64_t max_overlay_records_;

  mutable Mutex table_mutex_;
  // The pointer is guarded; the table itself is immutable.
  std::shared_ptr<const Table> table_ GUARDED_BY(table_mutex_) = std::make_shared<const Table>();

  Mutex refresh_mutex_;  // serializes Refresh() and guards the bookkeeping below
  // (list, version) bases and deltas that failed validation: never read again.
  std::set<std::pair<std::string, uint64_t>> rejected_ GUARDED_BY(refresh_mutex_);
  std::set<std::pair<std::string, uint64_t>> rejected_deltas_ GUARDED_BY(refresh_mutex_);
  // Missing deltas already reported (a gap is reported once, and checked again at every Refresh()).
  std::set<std::pair<std::string, uint64_t>> reported_gaps_ GUARDED_BY(refresh_mutex_);
  // Per list: a newer base validated in the background, with the deltas after it, waiting to reach the served
  // version.
  std::map<std::string, List> candidates_ GUARDED_BY(refresh_mutex_);
  std::thread loader_ GUARDED_BY(refresh_mutex_);  // the background base load, at most one at a time
  std::atomic<uint64_t> rejected_files_{0};

  Mutex loader_mutex_;  // guards the background load's result
  std::string loader_list_ GUARDED_BY(loader_mutex_);
  uint64_t loader_version_ GUARDED_BY(loader_mutex_) = 0;
  bool loader_done_ GUARDED_BY(loader_mutex_) = false;
  Status loader_status_ GUARDED_BY(loader_mutex_);
  std::shared_ptr<const Base> loader_base_ GUARDED_BY(loader_mutex_);
};

}  // namespace urlguard

#endif  // URLGUARD_SERVER_FILE_HASH_SOURCE_H_
