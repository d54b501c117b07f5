// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/repository_files.h"

#include "platform/env.h"

namespace urlguard {
namespace {

// The directories below REPO. Relative, joined to REPO by JoinPath.
constexpr char kPublicDirName[] = "public";
constexpr char kPrivateDirName[] = "private";
constexpr char kPrivateListsDirName[] = "lists";
constexpr char kPrivateTmpDirName[] = "tmp";
constexpr char kPrivateTrashDirName[] = "trash";
constexpr char kFeedsDirName[] = "feeds";
constexpr char kFeedListsDirName[] = "feed-lists";

// Version digits: the private names' parse computes the number, so at most 19 digits (every such number fits
// a uint64_t); the public names' check computes none and takes the 20 digits of the largest uint64_t.
constexpr size_t kMaxPrivateDigits = 19;
constexpr size_t kMaxPublicDigits = 20;

bool ConsumeLiteral(std::string_view* s, std::string_view literal) {
  if (s->substr(0, literal.size()) != literal) return false;
  s->remove_prefix(literal.size());
  return true;
}

// Consumes a decimal number of 1 to kMaxPublicDigits digits at the front of *s (the whole run of digits: a
// longer one is refused, not split).
bool ConsumeNumber(std::string_view* s) {
  size_t n = 0;
  while (n < s->size() && n <= kMaxPublicDigits && (*s)[n] >= '0' && (*s)[n] <= '9') ++n;
  if (n == 0 || n > kMaxPublicDigits) return false;
  s->remove_prefix(n);
  return true;
}

// N of "N" + `suffix`, N 1 to 19 decimal digits.
std::optional<uint64_t> ParseNumberedName(std::string_view name, std::string_view suffix) {
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) return std::nullopt;
  const std::string_view digits = name.substr(0, name.size() - suffix.size());
  if (digits.size() > kMaxPrivateDigits) return std::nullopt;
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

}  // namespace

std::string RepoPublicDir(const std::string& repo) { return JoinPath(repo, kPublicDirName); }
std::string PublicListsDir(const std::string& repo) {
  return JoinPath(RepoPublicDir(repo), kPublicListsPath);
}
std::string PublicListPath(const std::string& list) { return std::string(kPublicListsPath) + "/" + list; }
std::string PublicListDir(const std::string& repo, const std::string& list) {
  return JoinPath(PublicListsDir(repo), list);
}

std::string ListIndexPath() { return std::string(kPublicListsPath) + "/" + kListIndexFileName; }
std::string ListIndexSignaturePath() {
  return std::string(kPublicListsPath) + "/" + kListIndexSignatureFileName;
}

std::string SnapshotFileName(uint64_t version) { return "snapshot-" + std::to_string(version) + ".ugs.z"; }
std::string DiffFileName(uint64_t from_version, uint64_t to_version) {
  return "diff-" + std::to_string(from_version) + "-" + std::to_string(to_version) + ".ugd.z";
}
bool IsSnapshotFileName(std::string_view name) {
  return ConsumeLiteral(&name, "snapshot-") && ConsumeNumber(&name) && name == ".ugs.z";
}
bool IsDiffFileName(std::string_view name) {
  return ConsumeLiteral(&name, "diff-") && ConsumeNumber(&name) && ConsumeLiteral(&name, "-") &&
         ConsumeNumber(&name) && name == ".ugd.z";
}

std::string RangeDiffFileName(uint64_t from_version, uint64_t to_version) {
  return "range-" + std::to_string(from_version) + "-" + std::to_string(to_version) + ".ugd.z";
}
bool IsRangeDiffFileName(std::string_view name) {
  return ConsumeLiteral(&name, "range-") && ConsumeNumber(&name) && ConsumeLiteral(&name, "-") &&
         ConsumeNumber(&name) && name == ".ugd.z";
}

std::string RpzFileName(const std::string& list) { return list + ".rpz"; }

std::string RepoPrivateDir(const std::string& repo) { return JoinPath(repo, kPrivateDirName); }
std::string PrivateListsDir(const std::string& repo) {
  return JoinPath(RepoPrivateDir(repo), kPrivateListsDirName);
}
std::string PrivateListDir(const std::string& repo, const std::string& list) {
  return JoinPath(PrivateListsDir(repo), list);
}

std::string PrivateSnapshotFileName(uint64_t version) {
  return std::to_string(version) + kSnapshotFileSuffix;
}
std::string EntryListFileName(uint64_t version) { return std::to_string(version) + ".entries"; }
std::string EntryListDeltaFileName(uint64_t version) { return std::to_string(version) + ".entries-delta"; }
std::optional<uint64_t> ParseEntryListFileName(std::string_view name) { return ParseNumberedName(name, ".entries"); }
std::optional<uint64_t> ParseEntryListDeltaFileName(std::string_view name) {
  return ParseNumberedName(name, ".entries-delta");
}
std::string StateFileName(uint64_t version) { return std::to_string(version) + ".state"; }
std::string StateDeltaFileName(uint64_t version) { return std::to_string(version) + ".delta"; }
std::string FullHashFileName(uint64_t version) { return std::to_string(version) + ".ugh"; }
std::string EpochMapFileName(uint64_t version) { return std::to_string(version) + ".epoch"; }
std::string ArchiveFileName(uint64_t version) { return std::to_string(version) + ".archive"; }
std::string CheckpointRecordFileName(uint64_t version) { return std::to_string(version) + ".checkpoint"; }
std::optional<uint64_t> ParseCheckpointRecordFileName(std::string_view name) {
  return ParseNumberedName(name, ".checkpoint");
}
std::optional<uint64_t> ParseEpochMapFileName(std::string_view name) { return ParseNumberedName(name, ".epoch"); }
std::optional<uint64_t> ParseArchiveFileName(std::string_view name) { return ParseNumberedName(name, ".archive"); }
std::optional<uint64_t> ParsePrivateSnapshotFileName(std::string_view name) {
  return ParseNumberedName(name, kSnapshotFileSuffix);
}
std::optional<uint64_t> ParseFullHashFileName(std::string_view name) {
  return ParseNumberedName(name, ".ugh");
}
std::optional<uint64_t> ParseStateFileName(std::string_view name) { return ParseNumberedName(name, ".state"); }
std::optional<uint64_t> ParseStateDeltaFileName(std::string_view name) {
  return ParseNumberedName(name, ".delta");
}
std::string FullHashDeltaFileName(uint64_t version) { return std::to_string(version) + ".ughd"; }
std::optional<uint64_t> ParseFullHashDeltaFileName(std::string_view name) {
  return ParseNumberedName(name, ".ughd");
}
bool HasSnapshotFileSuffix(std::string_view name) {
  const std::string_view suffix = kSnapshotFileSuffix;
  return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

std::string PrivateTmpDir(const std::string& repo, const std::string& list) {
  return JoinPath(JoinPath(RepoPrivateDir(repo), kPrivateTmpDirName), list);
}
std::string PrivateTrashDir(const std::string& repo, const std::string& list) {
  return JoinPath(JoinPath(RepoPrivateDir(repo), kPrivateTrashDirName), list);
}
std::string SortRunFileName(const std::string& prefix, uint64_t n) {
  return prefix + "-" + std::to_string(n) + ".run";
}

std::string SeenFilterPath(const std::string& repo) { return JoinPath(RepoPrivateDir(repo), "seen.bin"); }

std::string ListPublishLockPath(const std::string& repo, const std::string& list) {
  return JoinPath(PrivateListDir(repo, list), "publish.lock");
}
std::string IndexLockPath(const std::string& repo) { return JoinPath(RepoPrivateDir(repo), "index.lock"); }
std::string SeenLockPath(const std::string& repo) { return JoinPath(RepoPrivateDir(repo), "seen.lock"); }
std::string FeedUpdateLockPath(const std::string& repo) { return JoinPath(FeedsDir(repo), "update.lock"); }

std::string FeedsDir(const std::string& repo) { return JoinPath(RepoPrivateDir(repo), kFeedsDirName); }
std::string FeedDir(const std::string& repo, const std::string& feed) {
  return JoinPath(FeedsDir(repo), feed);
}
std::string QuarantineFileName(int64_t unix_time) { return std::to_string(unix_time) + ".body"; }
std::optional<uint64_t> ParseQuarantineFileName(std::string_view name) {
  return ParseNumberedName(name, ".body");
}
std::string FeedListsDir(const std::string& repo) {
  return JoinPath(RepoPrivateDir(repo), kFeedListsDirName);
}
std::string ListRecordPath(const std::string& repo, const std::string& list) {
  return JoinPath(FeedListsDir(repo), list + ".record");
}

}  // namespace urlguard
