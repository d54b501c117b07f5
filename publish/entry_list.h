// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// EntryList: the DNS-expressible entries of one published list version, in clear. The snapshot, the full-hash
// store and the seen filter keep only hashes, so a DNS export (publish/rpz_export.h) cannot be made from them;
// the publisher therefore also writes, beside each private snapshot copy, REPO/private/lists/LIST/V.entries:
// the domain layer's names and the ip layer's ranges, sorted and unique, plus the number of url-layer entries
// (which DNS cannot express, so they are only counted). Format (docs/rpz.md), UTF-8 text, one item a line:
//
//   urlguard-entries 1
//   list phishing
//   version 7
//   url-entries 12
//   domain evil.example              (canonical host: lower case, punycode; sorted byte-wise)
//   ip 203.0.113.0/24                (canonical range as url/entry.h writes it; sorted byte-wise)
//   end 2                            (number of domain + ip lines: a truncated file is refused)
//
// Private, never served; deleted with the snapshot copy it belongs to.
//
// EntryListDelta: an incremental version of manifest format 2 (docs/versions.md) writes no whole entry list (that
// would cost what the list holds); it writes what it changed, REPO/private/lists/LIST/V.entries-delta, and the
// entries of version V are the newest V'.entries with V' <= V plus the deltas V'+1..V applied in order
// (EntryListChainReader). A checkpoint folds them into a new V.entries (FoldEntryList), so the chain stays short.
// Format (docs/rpz.md, "Versions that write only what changed"), UTF-8 text, one item a line:
//
//   urlguard-entries-delta 1
//   list phishing
//   version 8                        (V)
//   base 7                           (V - 1: the version it applies to)
//   url-entries-change -2            (signed decimal: url-layer entries added minus removed)
//   +domain new.example              (absent at V - 1, present at V)
//   -domain old.example              (present at V - 1, absent at V)
//   +ip 198.51.100.0/24
//   -ip 203.0.113.0/24
//   end 4                            (number of +/- lines: a truncated file is refused)
//
// Domain lines come first, then ip lines; within each, names strictly ascend byte-wise (so each at most once, and
// never both added and removed). The changes are exact: applying a "+" to a list that has the name, or a "-" to
// one that lacks it, is refused as corruption (the delta belongs to another base), never papered over.
//
// Thread safety: pure functions.
#ifndef URLGUARD_PUBLISH_ENTRY_LIST_H_
#define URLGUARD_PUBLISH_ENTRY_LIST_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format/repository_files.h"  // EntryListFileName: the name of version V's entry list
#include "platform/env.h"
#include "platform/sequential_file.h"
#include "urlguard/status.h"

namespace urlguard {

// The largest entry list file ReadEntryList accepts (about 100 M domains).
constexpr size_t kMaxEntryListBytes = size_t{4} << 30;
// The longest line: an ip range or a domain name (a canonical host is at most a few hundred bytes).
constexpr size_t kMaxEntryListLineBytes = 1024;

struct EntryList {
  std::string list;
  uint64_t version = 0;
  uint64_t url_entries = 0;          // url-layer entries of the version (not listed here)
  std::vector<std::string> domains;  // "evil.example": the domain layer's expressions without the final '/'
  std::vector<std::string> ip_ranges;  // "203.0.113.0/24", "2001:db8::/32"
};

// Sorts and de-duplicates `list`'s domains and ranges, then serializes it.
std::string SerializeEntryList(EntryList list);

// Parses a file written by SerializeEntryList. kCorruption naming the line for anything else (a line over
// kMaxEntryListLineBytes, an unknown keyword, a missing header, a wrong or missing "end" count).
Result<EntryList> ParseEntryList(std::string_view bytes);

// Reads and parses `path` (at most kMaxEntryListBytes; kResourceExhausted beyond, kNotFound when missing).
Result<EntryList> ReadEntryList(Env* env, const std::string& path);

// Reads an entry list file front to back in bounded memory (the publisher's incremental versions start from the
// previous one). Checks what ParseEntryList checks, as it goes: the header at Open, each line, the "end" count at
// the end (so a truncated file fails at its end). Not thread-safe.
class EntryListReader {
 public:
  static Result<std::unique_ptr<EntryListReader>> Open(const std::string& path);
  // The next entry: `*ipv6_range` false for a domain line, true for an ip line; `*value` valid until the next
  // call. False after "end". kCorruption naming the line for anything malformed.
  Result<bool> Next(bool* ip_range, std::string* value);
  const std::string& list() const { return list_; }
  uint64_t version() const { return version_; }
  uint64_t url_entries() const { return url_entries_; }

 private:
  EntryListReader() = default;
  Result<bool> NextLine(std::string_view* line);  // false at the end of the file
  Status Bad(const std::string& what) const;
  std::unique_ptr<SequentialFile> file_;
  std::string buffer_;
  size_t pos_ = 0;
  bool eof_ = false;
  uint64_t line_no_ = 0;
  uint64_t entries_ = 0;
  bool ended_ = false;
  std::string list_;
  uint64_t version_ = 0;
  uint64_t url_entries_ = 0;
};

// The largest entry-list delta file ParseEntryListDelta / ReadEntryListDelta accept (tens of millions of changes).
constexpr size_t kMaxEntryListDeltaBytes = size_t{1} << 30;

struct EntryListDelta {
  std::string list;
  uint64_t version = 0;                 // V >= 2; the delta applies to V - 1
  int64_t url_entries_change = 0;       // url-layer entries at V minus at V - 1
  std::vector<std::string> added_domains, removed_domains;      // as EntryList::domains
  std::vector<std::string> added_ip_ranges, removed_ip_ranges;  // as EntryList::ip_ranges
};

// Sorts and de-duplicates each vector, then serializes. A name both added and removed is the caller's bug (the
// parser refuses the result).
std::string SerializeEntryListDelta(EntryListDelta delta);

// Parses a file written by SerializeEntryListDelta. kCorruption naming the line for anything else (the header
// out of order, version < 2, base != version - 1, a line over kMaxEntryListLineBytes, an unknown keyword, an ip
// line that is no range, names out of order or repeated, a missing or wrong "end" count, data after it).
Result<EntryListDelta> ParseEntryListDelta(std::string_view bytes);

// Reads and parses `path` (at most kMaxEntryListDeltaBytes; kResourceExhausted beyond, kNotFound when missing).
Result<EntryListDelta> ReadEntryListDelta(Env* env, const std::string& path);

// The entries of one version of a list as the newest entry list at or below it plus the deltas after it, streamed
// in the entry list's order (domains ascending, then ranges ascending): the base is read line by line, the deltas
// (small) are read whole at Open and folded into one overlay, so memory is O(changes since the base). Not
// thread-safe.
class EntryListChainReader {
 public:
  // Opens `list`'s entries at `version` in `private_dir` (REPO/private/lists/LIST). kNotFound when no V'.entries
  // with V' <= version exists, or when a delta of the chain is missing (the message names the file: publish the
  // list in full once more); kCorruption for a damaged file, one naming another list or version, or a delta that
  // does not apply (a "+" of a name already listed, a "-" of one not listed, a negative url count); read errors.
  static Result<std::unique_ptr<EntryListChainReader>> Open(Env* env, const std::string& private_dir,
                                                           const std::string& list, uint64_t version);
  // The next entry of the version, as EntryListReader::Next. Errors as Open (the base is checked as it is read:
  // lines must ascend, and a delta's "-" of a name the base lacks is found here); false after the last one.
  Result<bool> Next(bool* ip_range, std::string* value);

  const std::string& list() const { return list_; }
  uint64_t version() const { return version_; }
  uint64_t base_version() const { return base_version_; }  // the V'.entries the chain starts from
  uint64_t url_entries() const { return url_entries_; }    // at version()

 private:
  EntryListChainReader() = default;
  struct Change {
    bool in_base = false;  // what the first delta that names it requires of the base
    bool present = false;  // at version()
  };
  Result<bool> NextBase();
  Status Bad(const std::string& what) const;
  std::unique_ptr<EntryListReader> base_;
  bool base_has_ = false;
  bool base_ip_ = false;
  std::string base_value_;
  bool have_last_ = false;
  bool last_ip_ = false;
  std::string last_;
  // The folded deltas, per kind (0 domains, 1 ranges), in the entry list's order.
  std::map<std::string, Change> changes_[2];
  std::map<std::string, Change>::const_iterator at_[2];
  int kind_ = 0;
  std::string list_;
  uint64_t version_ = 0, base_version_ = 0, url_entries_ = 0;
};

// `list`'s whole entry list at `version` (EntryListChainReader, collected). Errors as EntryListChainReader.
Result<EntryList> ReadEntryListAt(Env* env, const std::string& private_dir, const std::string& list,
                                  uint64_t version);

// Writes an entry list file at `path` streaming (crash-safe: `path`.tmp, fsync, rename, fsync of the directory;
// the .tmp is removed on failure): the header, then every (ip range or domain, value) `next` yields until it returns
// false, in the file's order (domains, then ranges, each sorted byte-wise and unique: the caller's to keep).
Status WriteEntryListFile(Env* env, const std::string& path, const std::string& list, uint64_t version,
                          uint64_t url_entries, const std::function<Result<bool>(bool* ip, std::string* value)>& next);

// Writes `version`.entries in `private_dir` from the chain (crash-safe: .tmp, fsync, rename, fsync of the
// directory), so later exports and publications start from it: what a checkpoint does. No-op when the chain's
// base already is `version`. Errors as EntryListChainReader, and write errors.
Status FoldEntryList(Env* env, const std::string& private_dir, const std::string& list, uint64_t version);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_ENTRY_LIST_H_
