// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Threat-feed specs, format detection and dispatch (contracts in feeds.h, formats in docs/feeds.md).
//
// Design: every format is read in one forward pass over the (already inflated) bytes, with no copy of the
// input. The parsers live by family: feed_lines.h (LineReader), feed_csv.h (through csv_reader.h's CsvReader,
// which lets a quoted field span lines and, when a record is bad, resumes at the line after the record's
// first line, so one stray quote costs one line, not the rest of the file), feed_json.h. JSON arrays are cut
// into elements by a small bracket/string scanner and each element is parsed alone with nlohmann::json (no
// exceptions: parse(..., false) and is_discarded()), so one bad element costs one element, memory stays
// bounded by kMaxFeedLineBytes per element instead of a DOM of the whole file, and every element gets a line
// number.
//
// Work: a record's scan never goes past kMaxFeedLineBytes from its start, so a bad CSV record that is
// re-read from its next line costs at most 64 KiB of rescanning; in practice a quoted field's search ends
// at the next '"' (FeedsLimitsTest.PathologicalQuotesStayLinear and the fuzz target exercise this).
#include "feeds/feeds.h"

#include <algorithm>
#include <cassert>

#include "core/ascii.h"
#include "feeds/csv_reader.h"
#include "feeds/feed_csv.h"
#include "feeds/feed_json.h"
#include "feeds/feed_lines.h"
#include "feeds/feed_sink.h"
#include "feeds/feed_values.h"
#include "feeds/json_array.h"

namespace urlguard {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

uint64_t CountLines(std::string_view data) {
  uint64_t n = static_cast<uint64_t>(std::count(data.begin(), data.end(), '\n'));
  if (!data.empty() && data.back() != '\n') ++n;
  return n;
}

Status ParseAs(FeedFormat format, const FeedSpec& spec, std::string_view data, FeedSink* sink) {
  switch (format) {
    case FeedFormat::kPlain:
    case FeedFormat::kOpenphish:
    case FeedFormat::kHosts:
    case FeedFormat::kAbp:
    case FeedFormat::kDropTxt:
      ParseLineFeed(format, data, sink);
      return Status::Ok();
    case FeedFormat::kPhishtankCsv:
      return ParsePhishtankCsv(data, sink);
    case FeedFormat::kUrlhausCsv:
      return ParseUrlhausCsv(data, sink);
    case FeedFormat::kCsv:
      return ParseGenericCsv(data, spec.csv_column, sink);
    case FeedFormat::kPhishtankJson:
      return ParseJsonFeed(data, JsonKind::kPhishtank, sink);
    case FeedFormat::kDropJson:
      return ParseJsonFeed(data, JsonKind::kDrop, sink);
    case FeedFormat::kAuto:
      break;
  }
  assert(false && "ParseAs: unresolved feed format");
  return Status::Internal("unresolved feed format");
}

struct FormatName {
  FeedFormat format;
  std::string_view name;
};
constexpr FormatName kFormatNames[] = {
    {FeedFormat::kAuto, "auto"},
    {FeedFormat::kPlain, "plain"},
    {FeedFormat::kHosts, "hosts"},
    {FeedFormat::kAbp, "abp"},
    {FeedFormat::kPhishtankCsv, "phishtank-csv"},
    {FeedFormat::kPhishtankJson, "phishtank-json"},
    {FeedFormat::kUrlhausCsv, "urlhaus-csv"},
    {FeedFormat::kOpenphish, "openphish"},
    {FeedFormat::kDropJson, "drop-json"},
    {FeedFormat::kDropTxt, "drop-txt"},
    {FeedFormat::kCsv, "csv"},
};

}  // namespace

const char* FeedFormatName(FeedFormat format) {
  for (const FormatName& f : kFormatNames) {
    if (f.format == format) return f.name.data();
  }
  return "unknown";
}

std::string FeedProblem::ToString() const { return file + ":" + std::to_string(line) + ": " + message; }

Result<FeedSpec> ParseFeedSpec(std::string_view arg) {
  if (arg.empty()) return Status::InvalidArgument("empty feed argument");
  FeedSpec spec;
  const size_t colon = arg.find(':');
  std::string_view prefix = arg.substr(0, colon);
  const bool has_prefix = colon != std::string_view::npos && !prefix.empty() &&
                          std::all_of(prefix.begin(), prefix.end(), [](char c) {
                            return IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '-' || c == '_';
                          });
  if (!has_prefix) {
    spec.path = std::string(arg);
    return spec;
  }
  const std::string name = AsciiLower(prefix);
  const FormatName* found = nullptr;
  for (const FormatName& f : kFormatNames) {
    if (f.name == name) found = &f;
  }
  if (found == nullptr) {
    std::string known;
    for (const FormatName& f : kFormatNames) {
      if (!known.empty()) known += ", ";
      known += f.name;
    }
    return Status::InvalidArgument("unknown feed format " + QuoteBytes(prefix) + " in " + QuoteBytes(arg) +
                                   " (known: " + known + "; csv takes csv:COLUMN:PATH; write ./" +
                                   std::string(prefix) + ":... for a file name with a colon)");
  }
  spec.format = found->format;
  std::string_view rest = arg.substr(colon + 1);
  if (spec.format == FeedFormat::kCsv) {
    const size_t second = rest.find(':');
    if (second == std::string_view::npos) {
      return Status::InvalidArgument("csv needs a column: csv:COLUMN:PATH, got " + QuoteBytes(arg));
    }
    std::string_view column = rest.substr(0, second);
    rest = rest.substr(second + 1);
    if (TrimAsciiSpace(column).empty())
      return Status::InvalidArgument("empty CSV column in " + QuoteBytes(arg));
    size_t number = 0;
    if (ParseCsvColumnNumber(column, &number) && (number == 0 || number > kMaxFeedLineBytes)) {
      return Status::InvalidArgument("CSV column number " + QuoteBytes(column) +
                                     " is out of range (1-based)");
    }
    spec.csv_column = std::string(column);
  }
  if (rest.empty()) return Status::InvalidArgument("no path in feed argument " + QuoteBytes(arg));
  spec.path = std::string(rest);
  return spec;
}

FeedFormat DetectFeedFormat(std::string_view path, std::string_view first_bytes) {
  std::string name =
      AsciiLower(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  if (EndsWith(name, ".gz")) name.resize(name.size() - 3);
  std::string_view text = first_bytes.substr(0, kMaxFeedDetectBytes);
  if (StartsWith(text, kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());

  size_t first = 0;
  while (first < text.size() && IsJsonSpace(text[first])) ++first;
  if (first < text.size() && text[first] == '[') {
    size_t next = first + 1;
    while (next < text.size() && IsJsonSpace(text[next])) ++next;
    // "[Adblock Plus 2.0]" and "[uBlock Origin]" headers start with a letter; a JSON array never does.
    if (next < text.size() && IsAsciiAlpha(text[next])) return FeedFormat::kAbp;
    return name.find("drop") != std::string::npos ? FeedFormat::kDropJson : FeedFormat::kPhishtankJson;
  }
  if (first < text.size() && text[first] == '{') {
    if (text.find("\"cidr\"") != std::string_view::npos || text.find("\"sblid\"") != std::string_view::npos) {
      return FeedFormat::kDropJson;
    }
    return FeedFormat::kPhishtankJson;
  }

  // The first non-comment line decides; '#' comments are read for URLhaus' banner and header.
  bool urlhaus_banner = false;
  LineReader reader(text);
  std::string_view line;
  uint64_t number = 0;
  while (reader.Next(&line, &number)) {
    std::string_view t = TrimAsciiSpace(line);
    if (t.empty()) continue;
    if (t.front() == '#') {
      if (ContainsIgnoreCase(t, "urlhaus")) urlhaus_banner = true;
      if (StartsWithIgnoreCase(TrimAsciiSpace(t.substr(1)), "id,dateadded,url"))
        return FeedFormat::kUrlhausCsv;
      continue;
    }
    if (t.front() == '!' || StartsWith(t, "||") || StartsWith(t, "@@")) return FeedFormat::kAbp;
    if (t.front() == ';') return FeedFormat::kDropTxt;
    if (StartsWithIgnoreCase(t, "phish_id,")) return FeedFormat::kPhishtankCsv;
    if (t.front() == '"' && urlhaus_banner) return FeedFormat::kUrlhausCsv;
    std::string_view rest = t;
    std::string_view token = NextAsciiToken(&rest);
    std::string_view second = NextAsciiToken(&rest);
    if (IsHostsAddress(token) && !second.empty() && second.front() != '#' && second.front() != ';') {
      return FeedFormat::kHosts;
    }
    size_t semi = t.find(';');
    if (semi != std::string_view::npos && IsCidr(TrimAsciiSpace(t.substr(0, semi))))
      return FeedFormat::kDropTxt;
    break;
  }
  if (name.find("openphish") != std::string::npos) return FeedFormat::kOpenphish;
  if (name.find("hosts") != std::string::npos) return FeedFormat::kHosts;
  return FeedFormat::kPlain;
}

Status ParseFeed(const FeedSpec& spec, std::string_view data, std::vector<FeedEntry>* entries,
                 std::vector<FeedProblem>* problems, FeedStats* stats) {
  assert(entries != nullptr && problems != nullptr && stats != nullptr);
  *stats = FeedStats{};
  stats->format = spec.format;
  const std::string display = spec.path.empty() ? "<input>" : spec.path;
  if (StartsWith(data, "\xFF\xFE") || StartsWith(data, "\xFE\xFF")) {
    return Status::InvalidArgument(display + ": UTF-16 text is not supported; convert the feed to UTF-8");
  }
  if (StartsWith(data, kUtf8Bom)) data.remove_prefix(kUtf8Bom.size());
  const FeedFormat format =
      spec.format == FeedFormat::kAuto ? DetectFeedFormat(spec.path, data) : spec.format;
  stats->format = format;

  const size_t entries_before = entries->size();
  const size_t problems_before = problems->size();
  FeedSink sink(spec, entries, problems, stats);
  Status status = ParseAs(format, spec, data, &sink);
  if (!status.ok()) {
    entries->erase(entries->begin() + static_cast<std::ptrdiff_t>(entries_before), entries->end());
    problems->erase(problems->begin() + static_cast<std::ptrdiff_t>(problems_before), problems->end());
    *stats = FeedStats{};
    stats->format = format;
    return status.WithContext(display);
  }
  stats->lines = CountLines(data);
  return Status::Ok();
}

bool IsGzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

Result<std::string> ReadFeedFile(Env* env, const std::string& path, size_t max_bytes) {
  assert(env != nullptr);
  URLGUARD_ASSIGN_OR_RETURN(std::string raw, env->ReadFile(path, max_bytes));
  if (!IsGzip(raw)) return raw;
  Result<std::string> inflated = InflateBounded(raw, max_bytes, kFeedInflateOptions);
  if (!inflated.ok()) return inflated.status().WithContext(path);
  return inflated;
}

}  // namespace urlguard
