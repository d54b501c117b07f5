// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// ResultCache: the client's SQLite cache of verification answers (docs/architecture.md §3 step 5, §6), the file
// D/cache.sqlite of the data directory. A local filter hit (a true threat, or a false positive at about 0.1%
// of clean URLs) is decided from this cache first and only then by asking the verification API
// (client/verifier.h).
//
// What it stores (docs/cache-schema.md specifies every column; fixtures/golden/cache_schema.sql pins it):
//   positive entries, one per (full hash, list, list version, layer): "this full hash is in the list",
//     with the server's threat name and an expiry (now + the match's cache_seconds);
//   negative entries, one per (4-byte prefix, list, list version): "the server returned every full hash
//     of the list with this prefix, so a full hash with the prefix and no positive entry is not in the
//     list", with an expiry (now + negative_cache_seconds).
// Both are keyed to the version of the local list the hit came from: an answer recorded under version 5 never
// answers for version 6, so a list change is never hidden by an old "safe" (nor by an old "malicious").
//
// How Find() decides, for (full hash H, list L, version V, now):
//   1. a live positive entry for (H, L, V)                -> kMalicious (its threat);
//   2. a positive entry for (H, L, V) that has expired    -> kUnknown (the negative entry of the same
//                                                            answer must not turn a known threat "safe");
//   3. a live negative entry for (prefix(H), L, V)        -> kSafe;
//   4. otherwise                                          -> kUnknown.
// A writer must therefore store an answer's positive entries before its negative entries (Decide() does), and
// Find() reads in one transaction.
// Deleting a positive entry (expiry purge, eviction) deletes the negative entries of its (prefix, list,
// version) in the same transaction (a schema trigger), for the same reason as step 2.
//
// It is only a cache, so it never fails: Open() always returns a usable object. A file that is not a SQLite
// database, carries another schema or is damaged is renamed aside (path + ".bad") and recreated; a file that
// is locked by another connection past the busy timeout, a directory that cannot be created or any other I/O
// failure gives a disabled cache that answers kUnknown and drops stores, and Open() tries again on a later
// call once kCacheReopenIntervalSeconds have passed. A store that meets a lock (another process writing)
// waits at most the busy timeout and is dropped. status() reports the most recent problem.
//
// Size: each table holds at most max_rows rows (kMaxCacheRows by default). Every store first deletes the
// expired rows of both tables and, when its insert takes its table past the cap, the table's oldest stored
// rows (least recently stored or refreshed), all in one transaction, so the cap holds after every store.
//
// Thread safety: every method may be called from any thread; mutex_ serializes them on the one connection.
// Several processes may share the file (SQLite WAL: readers never wait for the writer).
//
// Changes the on-disk format: the schema. Bump kResultCacheSchemaVersion, update docs/cache-schema.md and
// regenerate the golden fixture (URLGUARD_UPDATE_GOLDEN=1). A file of another version is rebuilt, never read.
#ifndef URLGUARD_CLIENT_RESULT_CACHE_H_
#define URLGUARD_CLIENT_RESULT_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/list_name.h"
#include "core/sha256.h"
#include "core/thread_annotations.h"
#include "urlguard/status.h"

namespace urlguard {

class Env;

// Stored in `PRAGMA user_version`.
constexpr int kResultCacheSchemaVersion = 1;
// Default cap on the rows of each of the two tables. Measured (docs/cache-schema.md §6): a full cache of
// 100000 + 100000 rows is a 32 MB file (a positive row takes about 230 bytes with its indexes, a negative row
// about 95). Real caches stay far smaller: entries expire within the server's cache durations (an hour or
// less), and every store purges the expired ones.
constexpr size_t kMaxCacheRows = 100000;
// How long a statement waits for another connection's lock before the operation is dropped. Small: the cache
// is a shortcut, and a store waits for it only after a network round trip anyway.
constexpr int kCacheBusyTimeoutMs = 50;
// A disabled cache (locked or unwritable at open) tries to open again at most this often.
constexpr int64_t kCacheReopenIntervalSeconds = 60;
// Threat names: 1 to 64 bytes of [a-z0-9_-] (the same rule as list names and the server's threat names).

// True for 1-64 bytes of [a-z0-9_-].

// True for "domain", "url" and "ip" (core/layer_kind.h LayerKindName).
bool IsValidLayerLabel(std::string_view layer);

// The 4-byte prefix of a full hash as the verify API sends it: its first 4 bytes as a big-endian integer.

struct ResultCacheOptions {
  // Rows per table, >= 1.
  size_t max_rows = kMaxCacheRows;
  // SQLite busy timeout, >= 0.
  int busy_timeout_ms = kCacheBusyTimeoutMs;
  // File operations around the database (creating the directory, renaming a bad file aside) and the monotonic
  // clock of the reopen interval. nullptr: Env::Default(). Not owned; must outlive the cache.
  Env* env = nullptr;
};

class ResultCache {
 public:
  enum class Answer { kUnknown, kMalicious, kSafe };
  struct Lookup {
    Answer answer = Answer::kUnknown;
    std::string list, threat;  // kMalicious: the list asked for and the stored threat name; else empty
  };

  // Opens or creates the cache at `path`, creating its directory when missing. Never fails (see the file
  // comment): the result is always a usable object, disabled when the file cannot be used; status() says why.
  // Waits for a locked file at most options.busy_timeout_ms per attempt (one or two attempts). Invalid
  // options are bugs (assert).
  static std::unique_ptr<ResultCache> Open(const std::string& path, const ResultCacheOptions& options = {});

  ~ResultCache();
  ResultCache(const ResultCache&) = delete;
  ResultCache& operator=(const ResultCache&) = delete;

  // The cached answer for a local hit on `full_hash` in version `list_version` of `list`, at time `now_unix`
  // (see the file comment for the rules). kUnknown when the cache is disabled or any error occurs. Counts a
  // hit (kMalicious or kSafe) or a miss (kUnknown). Changes no entry (a read transaction), but damage it
  // meets is repaired as described above (reopen, and a rebuild when the file is bad).
  Lookup Find(const Sha256Digest& full_hash, const std::string& list, uint64_t list_version,
              int64_t now_unix);

  // Records "full_hash is in `list` (version list_version), layer `layer`, threat `threat`" until
  // `expires_unix`; replaces an entry with the same key. Nothing is stored when expires_unix <= now_unix
  // (a cache duration of 0 means "do not cache"), or when the cache is disabled or locked. Arguments outside
  // the schema (an invalid list, layer or threat label, version 0) are bugs (assert; ignored in release
  // builds).
  void StorePositive(const Sha256Digest& full_hash, const std::string& list, uint64_t list_version,
                     const std::string& layer, const std::string& threat, int64_t expires_unix,
                     int64_t now_unix);

  // Records "the server returned every full hash with `prefix` in `list` (version list_version)" until
  // `expires_unix`; replaces an entry with the same key. Same rules as StorePositive().
  void StoreNegative(uint32_t prefix, const std::string& list, uint64_t list_version, int64_t expires_unix,
                     int64_t now_unix);

  // Ok while the cache opened cleanly and nothing has gone wrong since; otherwise the most recent problem:
  // kCorruption (the file was bad and was rebuilt: the message names where it was moved), kUnavailable
  // (locked past the busy timeout), kIoError (cannot create or write the file, disk full).
  Status status() const;
  // True when the cache is answering (opened, or rebuilt). A disabled cache answers kUnknown.
  bool enabled() const;
  // Find() calls that answered kMalicious or kSafe / that answered kUnknown.
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }
  const std::string& path() const { return path_; }

 private:
  class Db;

  ResultCache(std::string path, const ResultCacheOptions& options);

  // Opens (rebuilding when the file is bad) or leaves the cache disabled; records problems in status_.
  void OpenLocked(bool force_check) REQUIRES(mutex_);
  // Closes a disabled connection and schedules the next attempt.
  void DisableLocked(Status why) REQUIRES(mutex_);
  // True when the cache can serve now (reopening when a disabled cache's interval has passed).
  bool ReadyLocked() REQUIRES(mutex_);
  // Reacts to a failed SQLite call: corruption -> reopen with an integrity check (rebuild if bad); other
  // errors -> status_ only.
  void OnErrorLocked(int rc, std::string_view what) REQUIRES(mutex_);
  void StoreLocked(bool positive, const Sha256Digest* full_hash, uint32_t prefix, const std::string& list,
                   uint64_t list_version, const std::string& layer, const std::string& threat,
                   int64_t expires_unix, int64_t now_unix) REQUIRES(mutex_);

  const std::string path_;
  const ResultCacheOptions options_;
  Env* const env_;

  mutable Mutex mutex_;  // also serializes every SQLite call (they all go through db_)
  std::unique_ptr<Db> db_ GUARDED_BY(mutex_);  // nullptr while disabled
  Status status_ GUARDED_BY(mutex_);
  // Env::NowMonotonicNanos() after which a disabled cache tries to open again.
  uint64_t retry_at_nanos_ GUARDED_BY(mutex_) = 0;

  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

}  // namespace urlguard

#endif  // URLGUARD_CLIENT_RESULT_CACHE_H_
