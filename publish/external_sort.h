// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// ExternalSorter: sorts more fixed-size records than memory may hold, and drops duplicates on the way out.
//
// Why: the publisher's memory must not grow with the list (docs/repository-layout.md, "memory budget"). Records
// are appended into per-writer buffers; a full buffer is sorted, de-duplicated and written to a run file in a
// temporary directory ("spilled"); at the end the runs are merged k-way through a heap, reading each run through
// a small buffer. When nothing spilled, the buffers are merged in memory and no file is written, so a small
// input costs no I/O. The classic external merge sort (Knuth, TAOCP vol. 3, §5.4.1): with budget M and n bytes
// of records, n / M runs and one merge pass as long as n / M <= M / kMinRunReadBuffer (1 GiB budget, 64 KiB
// buffers: 16 k runs, i.e. 16 TB); beyond that, runs are merged in groups first.
//
// Order and duplicates: `Less` must be a strict total order on distinct records (so the result does not depend
// on which writer or thread added what); `Same` says two records are the same item. Records that are Same must be
// adjacent under Less, and the first of them in Less order is the one kept: put the tie-breaker (e.g. "the later
// input line wins") into Less.
//
// Memory: the buffers of all writers together hold at most `memory_budget` bytes of records; the merge reads
// every run through a buffer of memory_budget / (runs + 1) bytes (clamped to [kMinRunReadBuffer,
// kMaxRunReadBuffer]). Run files (format: the records back to back, docs/repository-layout.md) are removed by the
// destructor; a killed process leaves them in temp_dir, which its owner empties at its next start.
//
// Thread safety: Add(w, ...) for different writers w may run concurrently; everything else from one thread,
// after every Add has returned. Finish sorts the writers' buffers on a thread each (writers - 1 of its own).
#ifndef URLGUARD_PUBLISH_EXTERNAL_SORT_H_
#define URLGUARD_PUBLISH_EXTERNAL_SORT_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <queue>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/thread_annotations.h"
#include "format/repository_files.h"
#include "platform/env.h"
#include "platform/sequential_file.h"
#include "urlguard/status.h"

namespace urlguard {

// Smallest and largest read buffer per run during a merge.
constexpr size_t kMinRunReadBuffer = size_t{64} << 10;
constexpr size_t kMaxRunReadBuffer = size_t{4} << 20;
// Write buffer of a run file.
constexpr size_t kRunWriteBuffer = size_t{1} << 20;
// Smallest budget accepted (below it every few records would make a run).
constexpr size_t kMinSortBudget = size_t{1} << 20;

// Appends fixed-size records to a new file, buffered. Not thread-safe.
class RunFileWriter {
 public:
  static Result<std::unique_ptr<RunFileWriter>> Create(Env* env, const std::string& path);
  Status Append(const void* data, size_t size);
  Status Close();  // flushes and closes; no fsync (runs are scratch: a crash discards them anyway)

 private:
  explicit RunFileWriter(std::unique_ptr<WritableFile> file) : file_(std::move(file)) {}
  std::unique_ptr<WritableFile> file_;
  std::string buffer_;
};

// Reads fixed-size records from a run file through a buffer. Not thread-safe.
class RunFileReader {
 public:
  static Result<std::unique_ptr<RunFileReader>> Open(const std::string& path, size_t record_size, size_t buffer);
  // Copies the next record to `out`; false at the end. kCorruption when the file ends inside a record.
  Result<bool> Next(void* out);

 private:
  RunFileReader(std::unique_ptr<SequentialFile> file, size_t record_size, size_t buffer)
      : file_(std::move(file)), record_size_(record_size), buffer_(buffer / record_size * record_size) {}
  std::unique_ptr<SequentialFile> file_;
  size_t record_size_;
  std::vector<uint8_t> buffer_;
  size_t pos_ = 0;
  size_t end_ = 0;
};

template <typename Record, typename Less, typename Same>
class ExternalSorter {
  static_assert(std::is_trivially_copyable_v<Record>, "records are written to run files as bytes");

 public:
  struct Options {
    std::string temp_dir;     // must exist; run files are named PREFIX-N.run inside it
    std::string prefix = "sort";
    size_t memory_budget = size_t{1} << 30;  // bytes of buffered records, all writers together
    int writers = 1;
  };

  ExternalSorter(Env* env, Options options) : env_(env), options_(std::move(options)) {
    assert(options_.writers >= 1);
    options_.memory_budget = std::max(options_.memory_budget, kMinSortBudget);
    writer_capacity_ = std::max<size_t>(1, options_.memory_budget / sizeof(Record) /
                                               static_cast<size_t>(options_.writers));
    buffers_.resize(static_cast<size_t>(options_.writers));
    added_.resize(static_cast<size_t>(options_.writers));
  }
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;
  ~ExternalSorter() {
    sources_.clear();
    for (const std::string& path : run_paths_) (void)env_->RemoveFile(path);
  }

  // Adds one record through writer `writer`. Spills the writer's buffer when it is full.
  Status Add(int writer, const Record& record) {
    std::vector<Record>& buf = buffers_[static_cast<size_t>(writer)];
    if (buf.capacity() < writer_capacity_) buf.reserve(writer_capacity_);
    buf.push_back(record);
    ++added_[static_cast<size_t>(writer)];
    if (buf.size() >= writer_capacity_) return Spill(&buf);
    return Status::Ok();
  }

  // Ends the input and prepares the merge: sorts what is buffered, and spills it when anything spilled before
  // (so the merge buffers get the memory).
  Status Finish() EXCLUDES(runs_mutex_) {
    // Every Add has returned: runs_mutex_ is uncontended from here on (taken for the analysis).
    const bool spilled = RunCount() > 0;
    // One thread per non-empty buffer (the caller's and writers - 1 more: as many as added concurrently), each
    // sorting (and spilling) its own: a buffer is one run either way, so the result is the same.
    std::vector<std::vector<Record>*> pending;
    for (std::vector<Record>& buf : buffers_) {
      if (!buf.empty()) pending.push_back(&buf);
    }
    std::vector<Status> finished(pending.size());
    auto finish_one = [&](size_t i) {
      if (spilled) {
        finished[i] = Spill(pending[i]);
      } else {
        SortUnique(pending[i]);
      }
    };
    {
      std::vector<std::thread> helpers;
      for (size_t i = 1; i < pending.size(); ++i) helpers.emplace_back(finish_one, i);
      if (!pending.empty()) finish_one(0);
      for (std::thread& t : helpers) t.join();
    }
    for (Status& s : finished) URLGUARD_RETURN_IF_ERROR(s);
    if (spilled) {
      // The merge buffers get the memory: give the (now empty) record buffers back.
      for (std::vector<Record>& buf : buffers_) std::vector<Record>().swap(buf);
      size_t fan_in = std::max<size_t>(2, options_.memory_budget / kMinRunReadBuffer);
      while (RunCount() > fan_in) URLGUARD_RETURN_IF_ERROR(MergeFirstRuns(fan_in));
      size_t read_buffer =
          std::clamp(options_.memory_budget / (RunCount() + 1), kMinRunReadBuffer, kMaxRunReadBuffer);
      MutexLock lock(&runs_mutex_);
      for (const std::string& path : run_paths_) {
        URLGUARD_ASSIGN_OR_RETURN(auto reader, RunFileReader::Open(path, sizeof(Record), read_buffer));
        sources_.push_back(Source{std::move(reader), nullptr, 0, Record{}});
      }
    } else {
      for (std::vector<Record>& buf : buffers_) {
        if (!buf.empty()) sources_.push_back(Source{nullptr, &buf, 0, Record{}});
      }
    }
    for (size_t i = 0; i < sources_.size(); ++i) {
      URLGUARD_ASSIGN_OR_RETURN(bool has, Advance(&sources_[i]));
      if (has) heap_.push(i);
    }
    return Status::Ok();
  }

  // The next record of the merged, de-duplicated output; false at the end.
  Result<bool> Next(Record* out) {
    while (!heap_.empty()) {
      size_t i = heap_.top();
      heap_.pop();
      Record r = sources_[i].current;
      URLGUARD_ASSIGN_OR_RETURN(bool has, Advance(&sources_[i]));
      if (has) heap_.push(i);
      if (emitted_ && Same()(last_, r)) continue;
      last_ = r;
      emitted_ = true;
      *out = r;
      return true;
    }
    // Drained: give the buffers back now (the publisher keeps a drained sorter alive while the next one merges).
    std::vector<Source>().swap(sources_);
    for (std::vector<Record>& buf : buffers_) std::vector<Record>().swap(buf);
    return false;
  }

  uint64_t added() const {  // records given to Add, duplicates included
    uint64_t n = 0;
    for (uint64_t a : added_) n += a;
    return n;
  }
  // Runs written, intermediate merges included.
  size_t spilled_runs() const EXCLUDES(runs_mutex_) {
    MutexLock lock(&runs_mutex_);
    return spilled_runs_;
  }

 private:
  struct Source {
    std::unique_ptr<RunFileReader> file;
    std::vector<Record>* memory;
    size_t pos;
    Record current;
  };
  struct HeapLess {
    const std::vector<Source>* sources;
    bool operator()(size_t a, size_t b) const {  // min-heap by record, then by source index
      const Record& ra = (*sources)[a].current;
      const Record& rb = (*sources)[b].current;
      if (Less()(rb, ra)) return true;
      if (Less()(ra, rb)) return false;
      return a > b;
    }
  };

  static void SortUnique(std::vector<Record>* buf) {
    std::sort(buf->begin(), buf->end(), Less());
    buf->erase(std::unique(buf->begin(), buf->end(), Same()), buf->end());
  }

  Result<bool> Advance(Source* s) {
    if (s->memory != nullptr) {
      if (s->pos >= s->memory->size()) return false;
      s->current = (*s->memory)[s->pos++];
      return true;
    }
    return s->file->Next(&s->current);
  }

  size_t RunCount() const EXCLUDES(runs_mutex_) {
    MutexLock lock(&runs_mutex_);
    return run_paths_.size();
  }

  std::string NewRunPath() EXCLUDES(runs_mutex_) {
    MutexLock lock(&runs_mutex_);
    std::string path = JoinPath(options_.temp_dir, SortRunFileName(options_.prefix, next_run_++));
    run_paths_.push_back(path);
    ++spilled_runs_;
    return path;
  }

  Status Spill(std::vector<Record>* buf) {
    SortUnique(buf);
    std::string path = NewRunPath();
    URLGUARD_ASSIGN_OR_RETURN(auto w, RunFileWriter::Create(env_, path));
    URLGUARD_RETURN_IF_ERROR(w->Append(buf->data(), buf->size() * sizeof(Record)));
    URLGUARD_RETURN_IF_ERROR(w->Close());
    buf->clear();
    return Status::Ok();
  }

  // Replaces the first `count` runs by their merge (de-duplicated), appended as a new run.
  Status MergeFirstRuns(size_t count) EXCLUDES(runs_mutex_) {
    std::vector<std::string> inputs;
    {
      MutexLock lock(&runs_mutex_);
      inputs.assign(run_paths_.begin(), run_paths_.begin() + static_cast<std::ptrdiff_t>(count));
      run_paths_.erase(run_paths_.begin(), run_paths_.begin() + static_cast<std::ptrdiff_t>(count));
    }
    std::vector<Source> saved;
    saved.swap(sources_);
    size_t read_buffer = std::max(kMinRunReadBuffer, options_.memory_budget / (count + 1));
    for (const std::string& path : inputs) {
      URLGUARD_ASSIGN_OR_RETURN(auto reader, RunFileReader::Open(path, sizeof(Record), read_buffer));
      sources_.push_back(Source{std::move(reader), nullptr, 0, Record{}});
    }
    heap_ = Heap(HeapLess{&sources_});
    for (size_t i = 0; i < sources_.size(); ++i) {
      URLGUARD_ASSIGN_OR_RETURN(bool has, Advance(&sources_[i]));
      if (has) heap_.push(i);
    }
    emitted_ = false;
    std::string out_path = NewRunPath();
    URLGUARD_ASSIGN_OR_RETURN(auto w, RunFileWriter::Create(env_, out_path));
    Record r;
    for (;;) {
      URLGUARD_ASSIGN_OR_RETURN(bool has, Next(&r));
      if (!has) break;
      URLGUARD_RETURN_IF_ERROR(w->Append(&r, sizeof(Record)));
    }
    URLGUARD_RETURN_IF_ERROR(w->Close());
    sources_.swap(saved);
    emitted_ = false;
    for (const std::string& path : inputs) (void)env_->RemoveFile(path);
    return Status::Ok();
  }

  using Heap = std::priority_queue<size_t, std::vector<size_t>, HeapLess>;

  Env* env_;
  Options options_;
  size_t writer_capacity_ = 0;  // records per writer buffer
  std::vector<std::vector<Record>> buffers_;  // one per writer; buffers_[w] is touched only by writer w's thread
  // Contended only by concurrent spills during Add; taken uncontended after that.
  mutable Mutex runs_mutex_;
  std::vector<std::string> run_paths_ GUARDED_BY(runs_mutex_);
  uint64_t next_run_ GUARDED_BY(runs_mutex_) = 0;
  size_t spilled_runs_ GUARDED_BY(runs_mutex_) = 0;
  std::vector<uint64_t> added_;  // per writer, like buffers_
  std::vector<Source> sources_;
  Heap heap_{HeapLess{&sources_}};
  Record last_{};
  bool emitted_ = false;
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_EXTERNAL_SORT_H_
