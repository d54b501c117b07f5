// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// VerifyHashSource: where the verify API's answers come from. "Which full hashes start with these 4-byte
// prefixes, in the list versions I have completely loaded?" The file-backed source (server/file_hash_source.h)
// maps REPO/private/lists/LIST/V.ugh; other implementations (a database-loaded one for stateless verify
// servers) plug in behind the same two calls.
//
// Contract for every implementation: a source answers only from list versions it has fully loaded and
// validated, never from a partial one; one Lookup() sees one consistent set of versions (a version swap
// between two prefixes of the same request is impossible); Lookup() may be called from any number of threads
// at once and should not allocate once `out` has grown to its working size.
#ifndef URLGUARD_SERVER_VERIFY_HASH_SOURCE_H_
#define URLGUARD_SERVER_VERIFY_HASH_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/layer_kind.h"
#include "core/sha256.h"
#include "urlguard/status.h"

namespace urlguard {

class PrometheusText;  // http/prometheus.h

// The most prefixes one Lookup() accepts (the verify API sends at most 30).
constexpr size_t kMaxLookupPrefixes = 1024;
// Lookup() fails with kResourceExhausted rather than return more records than this. With uniform keys a
// 4-byte prefix matches n / 2^32 records on average (0.02 for 100 M keys).
constexpr size_t kMaxLookupRecords = 100000;

// One full hash of one list layer. `list` and `threat` point into memory kept alive by VerifyLookup::pin.
struct VerifyRecord {
  Sha256Digest sha256{};
  std::string_view list;
  LayerKind layer = LayerKind::kUrl;
  std::string_view threat;
};

// A list version one Lookup() answered from. `list` points into memory kept alive by VerifyLookup::pin.
struct VerifyListVersion {
  std::string_view list;
  uint64_t version = 0;
};

// A Lookup() result. Reuse one per thread: `records` and `versions` keep their capacity between calls.
struct VerifyLookup {
  std::vector<VerifyRecord> records;
  // Every list version the lookup answered from (the same consistent set as `records`), sorted by list name.
  // The verify response names them, so a client at a newer version of a list knows this answer is behind it
  // (docs/verify-server.md).
  std::vector<VerifyListVersion> versions;
  // Keeps the loaded versions that `records` point into alive until the next Lookup() or reset.
  std::shared_ptr<const void> pin;
};

// A list version a source answers for.
struct LoadedListVersion {
  std::string list;
  uint64_t version = 0;
  uint64_t records = 0;
  uint64_t deltas = 0;  // delta files stacked on the loaded base (a file-backed source; 0 otherwise)
};

class VerifyHashSource {
 public:
  virtual ~VerifyHashSource() = default;

  // Replaces out->records with every record whose first 4 bytes (big-endian) equal one of `prefixes`, from
  // every list this source has loaded, ordered by (sha256, list, layer); duplicate prefixes count once; and
  // out->versions with the list versions those records were looked up in (every loaded list, even one
  // without a match).
  // Failures: kInvalidArgument (more than kMaxLookupPrefixes), kResourceExhausted (more than kMaxLookupRecords
  // matches), kUnavailable (the backing store cannot answer now; retry later).
  virtual Status Lookup(std::span<const uint32_t> prefixes, VerifyLookup* out) const = 0;

  // Loads newer list versions when there are (validating them completely first) and swaps them in. Called
  // periodically by the server from one thread, concurrently with Lookup(). Ok, or the first problem met
  // (the versions already loaded keep answering).
  virtual Status Refresh() = 0;

  // The list versions Lookup() answers from right now, sorted by list name.
  virtual std::vector<LoadedListVersion> Loaded() const = 0;

  // Source-specific Prometheus samples for /metrics (a database-backed source: store up/down, latency, loaded
  // versions, publish lag). Default: none.
  virtual void AppendMetrics(PrometheusText* /*out*/) const {}
};

// The shared part of Lookup() for implementations: sorts and de-duplicates `prefixes` into `*unique` (a small
// caller buffer of at least prefixes.size()) and returns how many remain; kInvalidArgument past
// kMaxLookupPrefixes.
Result<size_t> UniquePrefixes(std::span<const uint32_t> prefixes, uint32_t* unique);
// Sorts records by (sha256, list, layer), as Lookup() promises.
void SortVerifyRecords(std::vector<VerifyRecord>* records);

}  // namespace urlguard

#endif  // URLGUARD_SERVER_VERIFY_HASH_SOURCE_H_
