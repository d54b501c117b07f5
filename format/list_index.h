// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The list index: one small signed JSON document naming every list a server publishes, with each list's current
// version and freshness (docs/list-index.md specifies every field, limit and byte of the canonical form). A
// client whose data directory has no list yet, and which was not told which lists to keep, subscribes to the
// names it lists (sync/list_discovery.h).
//
// Trust: the index only decides WHICH lists a client subscribes to. Each list's own signed manifest still
// decides what gets installed (rollback, equivocation and freshness checks included), so a stale or replayed
// index can at worst subscribe a client to a list that is gone (its syncs fail) or miss a new one.
//
// Order matters, as for manifests: VerifyAndParseListIndex checks the detached signature over
// kListIndexSignatureDomain || the raw bytes (format/signature.h) BEFORE parsing. The parser still treats its
// input as hostile (fuzz/list_index_fuzz.cc): it never throws, refuses duplicate member names, and ignores only
// unknown object members (so a later publisher can add fields).
//
// This is the reader; the canonical writer and the signing live in the publisher (publish/list_index_writer.h).
// Changes the index format: bump kListIndexFormatVersion (and FormatVersions::kListIndex in
// include/urlguard/version.h), docs/list-index.md and the golden test (fixtures/golden/list_index_v1.json).
#ifndef URLGUARD_FORMAT_LIST_INDEX_H_
#define URLGUARD_FORMAT_LIST_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/list_name.h"
#include "format/signature.h"
#include "urlguard/status.h"

namespace urlguard {

constexpr uint32_t kListIndexFormatVersion = 1;

// The domain-separation prefix of an index signature, including its NUL byte (23 bytes).
// Changes the signed bytes: every deployed index signature becomes invalid.
inline constexpr std::string_view kListIndexSignatureDomain{"urlguard list index v1\0", 23};

// Caps on an index from outside (a value over a cap is refused with kResourceExhausted).
// Entries of "lists": kMaxLists (core/list_name.h), the most a client keeps. An index naming more is refused
// whole (kResourceExhausted, IsListLimitError), never cut to the first kMaxLists.
constexpr size_t kMaxListIndexLists = kMaxLists;
// The whole document: 256 entries with 64-byte names and 20-digit numbers take about 55 KiB (1024 about 220 KiB;
// the byte cap stays where format 1 put it).
constexpr size_t kMaxListIndexBytes = size_t{256} << 10;

// Where the index lives, relative to a server's base URL and to a repository's public/ directory: ListIndexPath()
// and ListIndexSignaturePath() (format/repository_files.h).

// One list as its current manifest describes it.
struct ListIndexEntry {
  std::string name;          // IsValidListName (core/list_name.h)
  uint64_t version = 0;      // >= 1: the manifest's version
  int64_t created_unix = 0;  // >= 1: the manifest's created_unix
  int64_t expires_unix = 0;  // > created_unix: the manifest's expires_unix

  bool operator==(const ListIndexEntry&) const = default;
};

struct ListIndex {
  uint32_t format = kListIndexFormatVersion;  // must be kListIndexFormatVersion
  int64_t created_unix = 0;                   // >= 1: when the publisher wrote the index
  std::vector<ListIndexEntry> lists;          // 0..kMaxListIndexLists, names strictly ascending (unique)

  bool operator==(const ListIndex&) const = default;
};

// Checks every rule above. kCorruption "list index field '<name>': <problem>" naming the first violation
// ("lists[2].name"), kResourceExhausted for more than kMaxListIndexLists lists. Thread-safe.
Status ValidateListIndex(const ListIndex& index);

// kResourceExhausted "WHAT N lists, more than a client keeps (kMaxLists)": the one error for more lists than a
// client keeps, whoever counted them (an index: "list index names"; the Syncer's subscriptions: "subscribing to").
Status ListLimitError(std::string_view what, size_t n);
// True for a ListLimitError, with or without context added (as ParseListIndex, ValidateListIndex and
// VerifyAndParseListIndex return it for an index naming more than kMaxListIndexLists lists, and the Syncer for
// an index and --list together over kMaxLists), so that a client can count that case apart from a transport cap.
bool IsListLimitError(const Status& status);

// Parses index bytes from outside (VerifyAndParseListIndex verifies first; the fuzz target calls this alone).
// kResourceExhausted for more than kMaxListIndexBytes bytes or kMaxListIndexLists lists; kCorruption naming the
// problem for anything else: not JSON, a duplicate member name, a missing, ill-typed or out-of-range field, an
// unsupported format, or any rule of ValidateListIndex(). Accepts any JSON formatting and ignores unknown
// members. Never throws. Thread-safe.
Result<ListIndex> ParseListIndex(std::string_view bytes);

// What a client does with a downloaded index: refuses `index_bytes` over kMaxListIndexBytes
// (kResourceExhausted), verifies `signature_file_bytes` over kListIndexSignatureDomain || index_bytes against
// `trusted` (VerifyDetachedSignature's kPermissionDenied "malformed signature file" / "signature by an
// untrusted key" / "bad signature"), and only then parses. Thread-safe.
Result<ListIndex> VerifyAndParseListIndex(const std::vector<PublicKey>& trusted, std::string_view index_bytes,
                                          std::string_view signature_file_bytes);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_LIST_INDEX_H_
