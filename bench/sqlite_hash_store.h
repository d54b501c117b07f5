// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// FullHashStore: the SQLite full-hash store that answered the verify API until the mapped full-hash files
// (format/full_hash_file.h) replaced it. Kept ONLY as bench/verify_load_bench's baseline, measured in the same
// run: it is not part of any library or binary. Every list's full 32-byte keys in one SQLite file; "which full
// hashes start with these 4-byte prefixes?" is one B-tree descent per prefix.
//
// Layout: one WITHOUT ROWID
// table clustered on (prefix, sha256, list_id, layer), so a prefix lookup is one B-tree descent and a short
// range scan; list names live in a small side table. WAL journal mode, so the publisher's ReplaceList never
// blocks the server's readers and readers always see a whole list version.
//
// Thread safety: every method may be called from any number of threads at once. Each call borrows one SQLite
// connection (with its prepared statements) from a small pool for its duration; pool_mutex_ guards only the
// pool's bookkeeping. Why a pool and not one connection behind a mutex: SQLite's WAL readers run in parallel,
// one connection does not. Measured (bench/verify_load_bench, 1 M-hash store, 5-prefix lookups, 2 threads, on
// the project's 2-core machine while other jobs kept its load average near 7): pool of 4, 57-61 k lookups/s;
// one connection, 47-55 k/s (10-20 % less; a single thread does 50-58 k/s either way). The server sizes the
// pool to its worker count. Each connection also costs a page cache (16 MiB cap) and a mapping of the file.
// ReplaceList calls are serialized in-process by write_mutex_ (SQLite would serialize them anyway, but
// through its busy timeout, which a long write could exceed).
//
// Changes the on-disk format: the schema. Bump kHashStoreSchemaVersion and regenerate the golden test's
// fixture (URLGUARD_UPDATE_GOLDEN=1).
#ifndef URLGUARD_BENCH_SQLITE_HASH_STORE_H_
#define URLGUARD_BENCH_SQLITE_HASH_STORE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/layer_kind.h"
#include "core/list_name.h"
#include "core/sha256.h"
#include "publish/full_hash_list.h"
#include "urlguard/status.h"

namespace urlguard {

// Stored in `PRAGMA user_version`. A file with another nonzero version is refused.
constexpr int kHashStoreSchemaVersion = 1;
// How long a statement waits for another process's lock before failing with kUnavailable.
constexpr int kHashStoreBusyTimeoutMs = 5000;
// LookupPrefixes accepts at most this many prefixes per call (the verify API sends at most 30).
constexpr size_t kMaxSqliteLookupPrefixes = 1024;
// LookupPrefixes fails with kResourceExhausted rather than return more records than this. With uniformly
// distributed keys a 4-byte prefix matches n / 2^32 records on average (0.002 for a million keys).
constexpr size_t kMaxSqliteLookupRecords = 100000;
// Threat names: 1 to 64 bytes of [a-z0-9_-] (like list names), so they need no escaping anywhere.
// Connections a store opens at most (they are opened on demand).
constexpr int kDefaultHashStoreConnections = 4;
constexpr int kMaxHashStoreConnections = 64;

// FullHashRecord: publish/full_hash_list.h.

class FullHashStore {
 public:
  ~FullHashStore();
  FullHashStore(const FullHashStore&) = delete;
  FullHashStore& operator=(const FullHashStore&) = delete;

  // Opens the store at `path`. Read-write: creates the file and the schema when missing and switches the file
  // to WAL mode. Read-only: the file must exist and carry this schema version (the directory must be
  // writable, or the -shm file exist, for SQLite's WAL index). `max_connections` (1 ..
  // kMaxHashStoreConnections) bounds the connection pool. Failures: kNotFound (read-only and no file),
  // kFailedPrecondition (another schema version), kCorruption (not a SQLite file, or tables missing),
  // kInvalidArgument (bad max_connections), kIoError.
  static Result<std::unique_ptr<FullHashStore>> Open(const std::string& path, bool read_only,
                                                     int max_connections = kDefaultHashStoreConnections);

  // Makes `records` the complete set of `list` in one transaction: rows no longer present are deleted, new
  // ones inserted, changed threat names updated (so the WAL grows with the change, not with the list). Every
  // record's `list` must equal `list`; a (sha256, layer) pair given twice keeps the last record's threat. An
  // empty vector removes the list. Readers see either the old set or the new one. Cost: one scan of the whole
  // table (there is no index by list) plus the changes. Failures: kInvalidArgument (bad list or threat name,
  // bad layer, record of another list; nothing is written), kFailedPrecondition (store opened read-only),
  // kUnavailable (another process held the lock past the busy timeout), kIoError / kCorruption from SQLite.
  Status ReplaceList(const std::string& list, const std::vector<FullHashRecord>& records);

  // Every record whose first 4 bytes (big-endian) equal one of `prefixes`, read in one transaction (one
  // consistent version of every list). Duplicate prefixes are looked up once. Order: by sha256, then list,
  // then layer. Failures: kInvalidArgument (more than kMaxSqliteLookupPrefixes), kResourceExhausted (more than
  // kMaxSqliteLookupRecords matches), kCorruption (a stored row breaks the schema's invariants), kUnavailable or
  // kIoError (SQLite).
  Result<std::vector<FullHashRecord>> LookupPrefixes(const std::vector<uint32_t>& prefixes) const;

  // Number of records of `list`; 0 for a list never stored or emptied. O(1) (kept in the lists table).
  Result<uint64_t> CountList(const std::string& list) const;

  // Names of the stored lists, sorted.
  Result<std::vector<std::string>> ListNames() const;

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }

 private:
  class Connection;
  // Returns the connection to the pool when destroyed.
  class Lease;

  FullHashStore(std::string path, bool read_only, int max_connections);
  Result<Lease> Acquire() const;
  void Release(std::unique_ptr<Connection> connection) const;

  const std::string path_;
  const bool read_only_;
  const int max_connections_;

  mutable std::mutex pool_mutex_;  // guards idle_ and open_connections_
  mutable std::condition_variable pool_cv_;
  mutable std::vector<std::unique_ptr<Connection>> idle_;
  mutable int open_connections_ = 0;  // idle plus borrowed

  std::mutex write_mutex_;  // serializes ReplaceList calls; guards no data
};

}  // namespace urlguard

#endif  // URLGUARD_BENCH_SQLITE_HASH_STORE_H_
