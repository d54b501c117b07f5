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
// Thread safety: pure functions.
#ifndef URLGUARD_PUBLISH_ENTRY_LIST_H_
#define URLGUARD_PUBLISH_ENTRY_LIST_H_

#include <cstddef>
#include <cstdint>
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
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_ENTRY_LIST_H_
