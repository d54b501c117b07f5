// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Threat-feed parsers for urlguard-publish.
//
// The publisher ingests open threat feeds (plain lists, hosts files, Adblock Plus rules, PhishTank,
// URLhaus, OpenPhish, Spamhaus DROP, any CSV) and turns each into entries: a URL, a bare domain, an
// IPv4/IPv6 address or a CIDR range, as text, plus the feed's threat type when it carries one. These
// parsers only cut the feed into values and validate them lightly (non-empty, no whitespace or control
// characters, a length cap, at least one '.' or ':'); canonicalization and the mapping to layers happen
// later, in the list builder.
//
// Robustness contract: every parser is a pure function over untrusted bytes. It never crashes and never
// throws on any input (fuzz/feeds_fuzz.cc). One bad line never aborts a feed: it becomes a FeedProblem
// (file name, 1-based line number, message) and parsing continues with the next line. Only an input that is
// unusable as a whole (a CSV column that does not exist, a JSON array that is malformed at the top level,
// UTF-16 text) makes ParseFeed fail.
//
// The formats, what each reads, skips and rejects, are specified in docs/feeds.md.
//
// Thread safety: all functions are reentrant and share no state.
#ifndef URLGUARD_FEEDS_FEEDS_H_
#define URLGUARD_FEEDS_FEEDS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/bounded_inflate.h"
#include "platform/env.h"
#include "urlguard/status.h"

namespace urlguard {

// Largest feed accepted, in bytes, after gzip inflation (and as read from disk).
constexpr size_t kMaxFeedBytes = size_t{1} << 30;
// Longest line, CSV record (a quoted field may span lines) or JSON array element. Longer ones are errors.
constexpr size_t kMaxFeedLineBytes = size_t{64} << 10;
// Longest entry value (URL, domain, address or range).
constexpr size_t kMaxFeedValueBytes = size_t{8} << 10;
// Longest threat type taken from a feed (URLhaus `threat` column).
constexpr size_t kMaxFeedThreatBytes = 64;
// Problems recorded per ParseFeed call; further ones are only counted in FeedStats::errors.
constexpr size_t kMaxFeedProblems = 10000;
// Bytes of the start of a feed that DetectFeedFormat looks at.
constexpr size_t kMaxFeedDetectBytes = size_t{16} << 10;

enum class FeedFormat {
  kAuto,           // detect from the file name and the first bytes (DetectFeedFormat)
  kPlain,          // one URL, domain, IP address or CIDR range per line; '#' comments
  kHosts,          // hosts file: "0.0.0.0 name [name...]"
  kAbp,            // Adblock Plus: "||domain^" rules only
  kPhishtankCsv,   // PhishTank CSV dump (header row with a "url" column)
  kPhishtankJson,  // PhishTank JSON dump: an array of objects with "url", or JSON lines
  kUrlhausCsv,     // URLhaus CSV dump: '#' header comment, then quoted rows
  kOpenphish,      // OpenPhish feed: one URL per line
  kDropJson,       // Spamhaus DROP JSON lines: {"cidr":...}; the metadata object is skipped
  kDropTxt,        // Spamhaus DROP text: "1.10.16.0/20 ; SBL256894"; ';' comments
  kCsv,            // any CSV; FeedSpec::csv_column names the column (header name or 1-based number)
};

// The format's name as written in a FeedSpec ("plain", "hosts", "phishtank-csv", ..., "csv", "auto").
// Never null.
const char* FeedFormatName(FeedFormat format);

// One feed argument of urlguard-publish.
struct FeedSpec {
  FeedFormat format = FeedFormat::kAuto;
  std::string csv_column;  // kCsv only: a header name, or a 1-based column number in decimal
  std::string path;
};

// Parses "FORMAT:PATH", "csv:COLUMN:PATH" or a bare "PATH" (format kAuto). A prefix made only of letters,
// digits, '-' and '_' before the first ':' must be a known format name (so a typo is an error, not a file
// name); a path that itself has such a prefix can be written "./name:x". COLUMN cannot contain ':'.
// Fails with kInvalidArgument: empty argument or path, unknown format, csv without a column, a column
// number of 0 or above kMaxFeedLineBytes.
Result<FeedSpec> ParseFeedSpec(std::string_view arg);

// Guesses the format of a feed from its path (only the file name is looked at; a ".gz" suffix is ignored)
// and its first bytes (inflated; only the first kMaxFeedDetectBytes are looked at). Content signatures
// win over names; the fallback is kPlain. Never returns kAuto or kCsv: a generic CSV needs a column, so it
// must be named with "csv:COLUMN:PATH".
FeedFormat DetectFeedFormat(std::string_view path, std::string_view first_bytes);

// One value taken from a feed.
struct FeedEntry {
  std::string value;   // trimmed, as written in the feed (not canonicalized)
  std::string threat;  // the feed's threat type ("phishing", "malware_download", ...), or empty
  uint64_t line = 0;   // 1-based line where the value's line or record starts
};

// One line (or record) that was rejected.
struct FeedProblem {
  std::string file;     // FeedSpec::path ("<input>" when empty)
  uint64_t line = 0;    // 1-based
  std::string message;  // untrusted bytes in it are escaped (\xNN) and shortened

  // "file:line: message".
  std::string ToString() const;
};

struct FeedStats {
  FeedFormat format = FeedFormat::kAuto;  // the format actually parsed (after detection)
  uint64_t lines = 0;                     // lines in the input (a last line without a newline counts)
  uint64_t entries = 0;                   // entries appended
  uint64_t comments = 0;     // blank lines, comments, headers (ABP "!" and "[Adblock Plus 2.0]" too)
  uint64_t skipped = 0;      // values deliberately not taken: hosts names such as "localhost", the DROP
                             // metadata object, empty cells of a generic CSV column, a TLD-only ABP rule
  uint64_t unsupported = 0;  // ABP rules of another kind (exceptions, cosmetic, paths, options...)
  uint64_t errors = 0;       // rejected lines or records (each also a FeedProblem, up to the cap)
};

// Parses a whole feed held in `data` (already inflated; see ReadFeedFile) in the format of `spec` (kAuto
// detects it from spec.path and data). A leading UTF-8 byte-order mark is ignored. Appends the entries to
// `*entries` and the rejected lines to `*problems` (at most kMaxFeedProblems of them) and overwrites
// `*stats`. None of the pointers may be null.
// Fails, leaving `*entries` and `*problems` as they were on entry and `*stats` zero apart from `format`:
//  - kInvalidArgument: csv without a column, a CSV column name not in the header or a header missing,
//    UTF-16 input;
//  - kCorruption: a PhishTank CSV header without "url"; a JSON feed that is neither an array nor
//    objects, an array that is unterminated or has bytes after it.
Status ParseFeed(const FeedSpec& spec, std::string_view data, std::vector<FeedEntry>* entries,
                 std::vector<FeedProblem>* problems, FeedStats* stats);

// True when `data` starts with the gzip magic bytes 1f 8b.
bool IsGzip(std::string_view data);

// How feeds are inflated (format/bounded_inflate.h): a gzip file of one or more members (RFC 1952), and the
// output allocated once at its exact size: a first pass only counts the inflated bytes and stops at the
// cap, so a gzip bomb is refused after inflating at most the cap without keeping any of it.
inline constexpr InflateOptions kFeedInflateOptions{.gzip_members = true, .count_first = true};

// Reads the feed file at `path` through `env`, inflating it when it is gzip (IsGzip; whatever the name).
// Both the file and the inflated text are capped at `max_bytes` (kResourceExhausted). Other failures are
// Env::ReadFile's and InflateBounded's, with the path in the message.
Result<std::string> ReadFeedFile(Env* env, const std::string& path, size_t max_bytes = kMaxFeedBytes);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEEDS_H_
