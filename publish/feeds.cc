// Copyright urlguard authors.
//
// Threat-feed parsers (contracts in feeds.h, formats in docs/feeds.md).
//
// Design: every format is read in one forward pass over the (already inflated) bytes, with no copy of the
// input. Line formats go through LineReader; CSV formats through CsvReader, which lets a quoted field span
// lines and, when a record is bad, resumes at the line after the record's first line, so one stray quote
// costs one line, not the rest of the file. JSON arrays are cut into elements by a small bracket/string
// scanner and each element is parsed alone with nlohmann::json (no exceptions: parse(..., false) and
// is_discarded()), so one bad element costs one element, memory stays bounded by kMaxFeedLineBytes per
// element instead of a DOM of the whole file, and every element gets a line number.
//
// Work: a record's scan never goes past kMaxFeedLineBytes from its start, so a bad CSV record that is
// re-read from its next line costs at most 64 KiB of rescanning; in practice a quoted field's search ends
// at the next '"' (FeedsLimitsTest.PathologicalQuotesStayLinear and the fuzz target exercise this).
#include "publish/feeds.h"


#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

namespace urlguard {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
// How much of an offending value a problem message shows.
constexpr size_t kMaxQuotedBytes = 80;

constexpr std::string_view kThreatPhishing = "phishing";
constexpr std::string_view kThreatMaliciousNetwork = "malicious-network";

// URLhaus CSV columns when the dump carries no "# id,dateadded,url,..." header comment (0-based).
constexpr size_t kUrlhausDefaultUrlColumn = 2;
constexpr size_t kUrlhausDefaultThreatColumn = 5;

constexpr size_t kNoColumn = static_cast<size_t>(-1);

// ---- small string helpers --------------------------------------------------------------------------

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
bool IsSpace(char c) { return IsBlank(c) || c == '\r' || c == '\n'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLower(a[i]) != ToLower(b[i])) return false;
  }
  return true;
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ToLower(c);
  return out;
}

bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  return Lower(haystack).find(Lower(needle)) != std::string::npos;
}

// Splits off the next run of non-blank characters of `*rest` (blank = space, tab, \v, \f).
std::string_view NextToken(std::string_view* rest) {
  size_t begin = 0;
  while (begin < rest->size() && IsBlank((*rest)[begin])) ++begin;
  size_t end = begin;
  while (end < rest->size() && !IsBlank((*rest)[end])) ++end;
  std::string_view token = rest->substr(begin, end - begin);
  rest->remove_prefix(end);
  return token;
}

// A feed's bytes, made safe to print: quoted, non-printable bytes as \xNN, at most kMaxQuotedBytes shown.
std::string Quote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMaxQuotedBytes; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '\'') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMaxQuotedBytes) out += "...";
  out += "'";
  return out;
}

uint64_t CountLines(std::string_view data) {
  uint64_t n = static_cast<uint64_t>(std::count(data.begin(), data.end(), '\n'));
  if (!data.empty() && data.back() != '\n') ++n;
  return n;
}

// ---- light validation ------------------------------------------------------------------------------

// Returns why `value` cannot be an entry, or an empty string when it can. Canonicalization is the list
// builder's job; this only rejects what is certainly not a URL, domain, address or range.
std::string CheckValue(std::string_view value) {
  if (value.empty()) return "empty value";
  if (value.size() > kMaxFeedValueBytes) {
    return "value " + Quote(value) + " is longer than " + std::to_string(kMaxFeedValueBytes) + " bytes";
  }
  for (char ch : value) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f)
      return "value " + Quote(value) + " contains whitespace or a control character";
  }
  // A bare word would become a top-level-domain entry ("com" blocks a whole TLD): never take one.
  if (value.find_first_of(".:") == std::string_view::npos) {
    return Quote(value) + " is not a URL, domain or IP address (no '.' or ':')";
  }
  return {};
}

bool IsIpv4(std::string_view s) {
  int parts = 0;
  size_t i = 0;
  while (true) {
    size_t digits = 0;
    while (i < s.size() && IsDigit(s[i]) && digits < 4) {
      ++i;
      ++digits;
    }
    if (digits == 0 || digits > 3) return false;
    ++parts;
    if (i == s.size()) return parts == 4;
    if (s[i] != '.' || parts == 4) return false;
    ++i;
  }
}

// An IPv6 address as hosts files write it, with an optional zone ("fe80::1%lo0").
bool IsIpv6(std::string_view s) {
  size_t zone = s.find('%');
  if (zone != std::string_view::npos) s = s.substr(0, zone);
  if (s.size() < 2 || s.find(':') == std::string_view::npos) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsHexDigit(c) || c == ':' || c == '.'; });
}

// The address column of a hosts file: an IPv4 or IPv6 address, or the "0" shorthand some lists use.
bool IsHostsAddress(std::string_view s) { return s == "0" || IsIpv4(s) || IsIpv6(s); }

// Letters, digits, '-', '_', '.', and non-ASCII bytes (an IDN written in UTF-8).
bool IsHostNameChars(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return IsAlpha(c) || IsDigit(c) || c == '-' || c == '_' || c == '.' ||
           static_cast<unsigned char>(c) >= 0x80;
  });
}

bool IsCidr(std::string_view s) {
  return s.find('/') != std::string_view::npos && std::all_of(s.begin(), s.end(), [](char c) {
           return IsHexDigit(c) || c == '.' || c == ':' || c == '/';
         });
}

// Names that hosts files map for the machine itself, not to block anything.
bool IsSkippedHostName(std::string_view name) {
  // Dotless: a machine name, never a site. Covers localhost, localhost4, localhost6, broadcasthost, local.
  if (name.find('.') == std::string_view::npos) return true;
  static constexpr std::string_view kDottedLocalNames[] = {
      "localhost.localdomain",
      "localhost4.localdomain4",
      "localhost6.localdomain6",
  };
  for (std::string_view local : kDottedLocalNames) {
    if (EqualsIgnoreCase(name, local)) return true;
  }
  if (StartsWithIgnoreCase(name, "ip6-")) return true;  // ip6-localhost, ip6-allnodes, ip6-mcastprefix...
  return IsHostsAddress(name);                          // "0.0.0.0 0.0.0.0", "0.0.0.0 192.0.2.1"
}

// A threat type taken from a feed column: short, and only letters, digits, '_', '-', '.'.
bool IsThreatName(std::string_view s) {
  return s.size() <= kMaxFeedThreatBytes && std::all_of(s.begin(), s.end(), [](char c) {
           return IsAlpha(c) || IsDigit(c) || c == '_' || c == '-' || c == '.';
         });
}

// ---- where results go --------------------------------------------------------------------------------

class Sink {
 public:
  Sink(const FeedSpec& spec, std::vector<FeedEntry>* entries, std::vector<FeedProblem>* problems,
       FeedStats* stats)
      : file_(spec.path.empty() ? "<input>" : spec.path),
        entries_(entries),
        problems_(problems),
        stats_(stats) {}

  // Validates `value` (CheckValue) and appends it, or records why not.
  void Add(std::string_view value, std::string_view threat, uint64_t line) {
    std::string why = CheckValue(value);
    if (!why.empty()) {
      Error(line, std::move(why));
      return;
    }
    entries_->push_back(FeedEntry{std::string(value), std::string(threat), line});
    ++stats_->entries;
  }

  void Error(uint64_t line, std::string message) {
    ++stats_->errors;
    if (recorded_ < kMaxFeedProblems) {
      problems_->push_back(FeedProblem{file_, line, std::move(message)});
      ++recorded_;
    }
  }

  void Comment() { ++stats_->comments; }
  void Skip() { ++stats_->skipped; }
  void Unsupported() { ++stats_->unsupported; }

 private:
  std::string file_;
  std::vector<FeedEntry>* entries_;
  std::vector<FeedProblem>* problems_;
  FeedStats* stats_;
  size_t recorded_ = 0;
};

// ---- line formats ----------------------------------------------------------------------------------

// Cuts bytes into lines; "\n" and "\r\n" both end a line, and the last line needs no terminator.
class LineReader {
 public:
  explicit LineReader(std::string_view data) : data_(data) {}

  bool Next(std::string_view* line, uint64_t* number) {
    if (pos_ >= data_.size()) return false;
    size_t end = data_.find('\n', pos_);
    size_t next = end == std::string_view::npos ? data_.size() : end + 1;
    if (end == std::string_view::npos) end = data_.size();
    std::string_view text = data_.substr(pos_, end - pos_);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    pos_ = next;
    *line = text;
    *number = ++line_;
    return true;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  uint64_t line_ = 0;
};

// Calls fn(line, number) for each line within kMaxFeedLineBytes; longer lines are errors.
template <typename Fn>
void ForEachLine(std::string_view data, Sink* sink, Fn&& fn) {
  LineReader reader(data);
  std::string_view line;
  uint64_t number = 0;
  while (reader.Next(&line, &number)) {
    if (line.size() > kMaxFeedLineBytes) {
      sink->Error(number, "line is longer than " + std::to_string(kMaxFeedLineBytes) + " bytes");
      continue;
    }
    fn(line, number);
  }
}

// plain and openphish: one value per line, '#' comment lines, an optional " # comment" after the value.
void ParsePlainLine(std::string_view line, uint64_t number, std::string_view threat, bool url_only,
                    Sink* sink) {
  std::string_view text = Trim(line);
  if (text.empty() || text.front() == '#') {
    sink->Comment();
    return;
  }
  std::string_view rest = text;
  std::string_view value = NextToken(&rest);
  rest = Trim(rest);
  if (!rest.empty() && rest.front() != '#') {
    std::string message = "unexpected text after the value: " + Quote(rest);
    if (IsHostsAddress(value)) message += " (is this a hosts file? use hosts:PATH)";
    sink->Error(number, std::move(message));
    return;
  }
  if (url_only && value.find("://") == std::string_view::npos) {
    sink->Error(number, Quote(value) + " is not a URL (no scheme)");
    return;
  }
  sink->Add(value, threat, number);
}

// hosts: "ADDRESS NAME [NAME...] [# comment]", or a lone NAME.
void ParseHostsLine(std::string_view line, uint64_t number, Sink* sink) {
  // Spec (hosts(5)): "Text from a '#' character until the end of the line is a comment".
  size_t hash = line.find('#');
  if (hash != std::string_view::npos) line = line.substr(0, hash);
  std::string_view rest = Trim(line);
  if (rest.empty()) {
    sink->Comment();
    return;
  }
  auto take_name = [&](std::string_view name) {
    if (IsSkippedHostName(name)) {
      sink->Skip();
    } else if (!IsHostNameChars(name)) {
      sink->Error(number, Quote(name) + " is not a host name");
    } else {
      sink->Add(name, "", number);
    }
  };
  std::string_view first = NextToken(&rest);
  if (IsHostsAddress(first)) {
    bool any = false;
    for (std::string_view name = NextToken(&rest); !name.empty(); name = NextToken(&rest)) {
      any = true;
      take_name(name);
    }
    if (!any) sink->Error(number, "address " + Quote(first) + " without a host name");
    return;
  }
  if (Trim(rest).empty()) {  // a domains-only line, as many "hosts" lists also publish
    take_name(first);
    return;
  }
  sink->Error(number, Quote(first) + " is not an IP address (expected \"ADDRESS NAME...\")");
}

// Adblock Plus: only "||domain^" (optionally "$all", "$document", "$doc", "$important") is a blocklist
// entry; every other rule kind narrows or changes what is blocked and is counted as unsupported.
void ParseAbpLine(std::string_view line, uint64_t number, Sink* sink) {
  std::string_view text = Trim(line);
  // Spec (ABP "How to write filters"): "Any rule that starts with an exclamation mark is a comment";
  // "[Adblock Plus 2.0]" is the header line.
  if (text.empty() || text.front() == '!' || (text.front() == '[' && text.back() == ']') || text == "#" ||
      StartsWith(text, "# ")) {
    sink->Comment();
    return;
  }
  // Spec: "||" matches the domain and its subdomains at any scheme; '^' is a separator placeholder.
  if (!StartsWith(text, "||")) {
    sink->Unsupported();  // exceptions "@@", cosmetic "##", regexes, "|anchored", plain substrings
    return;
  }
  std::string_view body = text.substr(2);
  size_t caret = body.find('^');
  if (caret == std::string_view::npos) {
    sink->Unsupported();  // "||example.com" also matches "example.community": not a domain rule
    return;
  }
  std::string_view domain = body.substr(0, caret);
  std::string_view after = body.substr(caret + 1);
  if (!after.empty()) {
    if (after.front() != '$') {
      sink->Unsupported();  // "^|", "^*", "^/path": a URL pattern
      return;
    }
    std::string_view options = after.substr(1);
    while (true) {
      size_t comma = options.find(',');
      std::string_view option = options.substr(0, comma);
      if (!EqualsIgnoreCase(option, "all") && !EqualsIgnoreCase(option, "document") &&
          !EqualsIgnoreCase(option, "doc") && !EqualsIgnoreCase(option, "important")) {
        sink->Unsupported();  // "$third-party", "$script", "$domain=...": a narrower rule
        return;
      }
      if (comma == std::string_view::npos) break;
      options.remove_prefix(comma + 1);
    }
  }
  if (!IsHostNameChars(domain)) {
    sink->Unsupported();  // wildcards, paths, ports
    return;
  }
  if (domain.find('.') == std::string_view::npos) {
    sink->Skip();  // "||zip^": a whole top-level domain, never an entry
    return;
  }
  sink->Add(domain, "", number);
}

// Spamhaus DROP text: "1.10.16.0/20 ; SBL256894", ';' starts a comment.
void ParseDropTxtLine(std::string_view line, uint64_t number, Sink* sink) {
  std::string_view text = Trim(line);
  if (text.empty() || text.front() == ';' || text.front() == '#') {
    sink->Comment();
    return;
  }
  std::string_view rest = Trim(text.substr(0, text.find(';')));
  std::string_view value = NextToken(&rest);
  if (!Trim(rest).empty()) {
    sink->Error(number, "unexpected text after the range: " + Quote(Trim(rest)));
    return;
  }
  if (!IsCidr(value)) {
    sink->Error(number, Quote(value) + " is not a CIDR range");
    return;
  }
  sink->Add(value, kThreatMaliciousNetwork, number);
}

// ---- CSV ---------------------------------------------------------------------------------------------

struct CsvRecord {
  std::vector<std::string> fields;  // fields[0, count) are this record's; later ones are stale buffers
  size_t count = 0;
  uint64_t line = 0;  // 1-based line where the record starts

  std::string_view field(size_t i) const {
    return i < count ? std::string_view(fields[i]) : std::string_view();
  }
  std::string* NewField() {
    if (count == fields.size()) fields.emplace_back();
    std::string* f = &fields[count++];
    f->clear();
    return f;
  }
};

enum class CsvStep { kEnd, kComment, kRecord, kError };

// RFC 4180 records plus what real feeds do: '#' comment lines and blank lines between records, CRLF or LF,
// blanks around fields, a '"' inside an unquoted field kept as is.
class CsvReader {
 public:
  explicit CsvReader(std::string_view data) : data_(data) {}

  // Reads the next record into `*record`. kComment: a blank or '#' line (its text in `*comment`).
  // kError: a bad record (`*error` says why, record->line where); reading resumes at the next line.
  CsvStep Next(CsvRecord* record, std::string_view* comment, std::string* error) {
    if (pos_ >= data_.size()) return CsvStep::kEnd;
    const size_t start = pos_;
    record->line = line_ + 1;
    record->count = 0;

    size_t eol = data_.find('\n', start);
    std::string_view physical =
        data_.substr(start, eol == std::string_view::npos ? data_.size() - start : eol - start);
    std::string_view trimmed = Trim(physical);
    if (trimmed.empty() || trimmed.front() == '#') {
      *comment = trimmed;
      SkipToNextLine(start);
      return CsvStep::kComment;
    }

    const size_t limit = std::min(data_.size(), start + kMaxFeedLineBytes + 1);
    auto fail = [&](std::string message) {
      *error = std::move(message);
      SkipToNextLine(start);
      return CsvStep::kError;
    };
    auto too_long = [&] {
      return fail("record is longer than " + std::to_string(kMaxFeedLineBytes) + " bytes");
    };
    uint64_t newlines = 0;  // newlines consumed inside quoted fields
    size_t pos = start;
    while (true) {
      while (pos < limit && IsBlank(data_[pos])) ++pos;
      std::string* field = record->NewField();
      if (pos < data_.size() && data_[pos] == '"') {
        // Spec (RFC 4180 2.5-2.7): a quoted field may hold commas, CR/LF and doubled quotes ("").
        ++pos;
        while (true) {
          size_t quote = data_.substr(0, limit).find('"', pos);
          if (quote == std::string_view::npos) {
            return limit < data_.size() ? too_long() : fail("unterminated quoted field");
          }
          std::string_view chunk = data_.substr(pos, quote - pos);
          newlines += static_cast<uint64_t>(std::count(chunk.begin(), chunk.end(), '\n'));
          field->append(chunk);
          if (quote + 1 < data_.size() && data_[quote + 1] == '"') {
            field->push_back('"');
            pos = quote + 2;
            continue;
          }
          pos = quote + 1;
          break;
        }
        while (pos < limit && IsBlank(data_[pos])) ++pos;
        if (pos < data_.size() && data_[pos] == '\r' && (pos + 1 == data_.size() || data_[pos + 1] == '\n'))
          ++pos;
        if (pos >= limit && pos < data_.size()) return too_long();
        if (pos < data_.size() && data_[pos] != ',' && data_[pos] != '\n') {
          return fail("unexpected character " + Quote(data_.substr(pos, 1)) + " after a closing quote");
        }
      } else {
        size_t end = data_.find_first_of(",\n", pos);
        if (end == std::string_view::npos) end = data_.size();
        if (end - start > kMaxFeedLineBytes) return too_long();
        std::string_view text = data_.substr(pos, end - pos);
        if (!text.empty() && text.back() == '\r' && (end == data_.size() || data_[end] == '\n')) {
          text.remove_suffix(1);
        }
        while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
        field->assign(text);
        pos = end;
      }
      if (pos - start > kMaxFeedLineBytes) return too_long();
      if (pos >= data_.size()) break;
      if (data_[pos] == ',') {
        ++pos;
        continue;
      }
      // data_[pos] == '\n': the record ends.
      ++pos;
      ++newlines;
      break;
    }
    pos_ = pos;
    line_ += newlines;
    return CsvStep::kRecord;
  }

 private:
  void SkipToNextLine(size_t start) {
    size_t eol = data_.find('\n', start);
    pos_ = eol == std::string_view::npos ? data_.size() : eol + 1;
    ++line_;
  }

  std::string_view data_;
  size_t pos_ = 0;
  uint64_t line_ = 0;  // lines fully consumed so far
};

// Index of the header field equal (ignoring case and blanks) to `name`, or kNoColumn.
size_t FindColumn(const CsvRecord& header, std::string_view name) {
  for (size_t i = 0; i < header.count; ++i) {
    if (EqualsIgnoreCase(Trim(header.field(i)), Trim(name))) return i;
  }
  return kNoColumn;
}

std::string ListColumns(const CsvRecord& header) {
  std::string out;
  for (size_t i = 0; i < header.count && i < 32; ++i) {
    if (i > 0) out += ", ";
    out += Quote(header.field(i));
  }
  if (header.count > 32) out += ", ...";
  return out;
}

struct CsvColumns {
  size_t value = kNoColumn;
  std::string value_name;         // for messages
  size_t threat = kNoColumn;      // column holding the threat type, or kNoColumn
  std::string_view fixed_threat;  // used when `threat` is kNoColumn
  bool empty_is_error = true;     // false: an empty value cell is skipped (generic CSV)
};

void HandleCsvRow(const CsvRecord& row, const CsvColumns& columns, Sink* sink) {
  if (columns.value >= row.count) {
    sink->Error(row.line, "row has " + std::to_string(row.count) + (row.count == 1 ? " field" : " fields") +
                              "; column " + columns.value_name + " (" + std::to_string(columns.value + 1) +
                              ") is missing");
    return;
  }
  std::string_view value = Trim(row.field(columns.value));
  if (value.empty()) {
    if (columns.empty_is_error) {
      sink->Error(row.line, "empty " + columns.value_name + " field");
    } else {
      sink->Skip();
    }
    return;
  }
  std::string_view threat = columns.fixed_threat;
  if (columns.threat != kNoColumn) {
    threat = Trim(row.field(columns.threat));
    if (!IsThreatName(threat)) {
      sink->Error(row.line, "unusable threat type " + Quote(threat));
      return;
    }
  }
  sink->Add(value, threat, row.line);
}

// Parses a "1-based column number" spelled in decimal. Returns false when `text` is not all digits.
bool ParseColumnNumber(std::string_view text, size_t* number) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), IsDigit)) return false;
  size_t n = 0;
  for (char c : text) {
    n = n * 10 + static_cast<size_t>(c - '0');
    if (n > kMaxFeedLineBytes) break;  // no record has that many fields; also stops overflow
  }
  *number = n;
  return true;
}

Status ParseGenericCsv(std::string_view data, std::string_view column, Sink* sink) {
  CsvColumns columns;
  columns.empty_is_error = false;
  size_t number = 0;
  const bool by_number = ParseColumnNumber(column, &number);
  if (by_number) {
    if (number == 0 || number > kMaxFeedLineBytes) {
      return Status::InvalidArgument("csv: column number " + Quote(column) + " is out of range (1-based)");
    }
    columns.value = number - 1;
    columns.value_name = "#" + std::to_string(number);
  } else {
    if (Trim(column).empty()) return Status::InvalidArgument("csv: no column given (csv:COLUMN:PATH)");
    columns.value_name = Quote(Trim(column));
  }
  CsvReader reader(data);
  CsvRecord record;
  std::string_view comment;
  std::string error;
  bool header_pending = true;
  while (true) {
    CsvStep step = reader.Next(&record, &comment, &error);
    if (step == CsvStep::kEnd) break;
    if (step == CsvStep::kComment) {
      sink->Comment();
      continue;
    }
    if (step == CsvStep::kError) {
      sink->Error(record.line, error);
      continue;
    }
    if (header_pending) {
      header_pending = false;
      if (!by_number) {
        columns.value = FindColumn(record, column);
        if (columns.value == kNoColumn) {
          return Status::InvalidArgument("csv: no column " + columns.value_name + " in the header on line " +
                                         std::to_string(record.line) + " (columns: " + ListColumns(record) +
                                         ")");
        }
        sink->Comment();
        continue;
      }
      // With a column number the first row is a header exactly when its cell there is no plausible entry.
      if (columns.value < record.count && !CheckValue(Trim(record.field(columns.value))).empty()) {
        sink->Comment();
        continue;
      }
    }
    HandleCsvRow(record, columns, sink);
  }
  if (header_pending && !by_number) {
    return Status::InvalidArgument("csv: no header row (looking for column " + columns.value_name + ")");
  }
  return Status::Ok();
}

// PhishTank: "phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target".
Status ParsePhishtankCsv(std::string_view data, Sink* sink) {
  CsvColumns columns;
  columns.value_name = "'url'";
  columns.fixed_threat = kThreatPhishing;
  CsvReader reader(data);
  CsvRecord record;
  std::string_view comment;
  std::string error;
  bool header_pending = true;
  while (true) {
    CsvStep step = reader.Next(&record, &comment, &error);
    if (step == CsvStep::kEnd) break;
    if (step == CsvStep::kComment) {
      sink->Comment();
      continue;
    }
    if (step == CsvStep::kError) {
      sink->Error(record.line, error);
      continue;
    }
    if (header_pending) {
      header_pending = false;
      columns.value = FindColumn(record, "url");
      if (columns.value == kNoColumn) {
        return Status::Corruption("phishtank-csv: the header on line " + std::to_string(record.line) +
                                  " has no 'url' column (columns: " + ListColumns(record) + ")");
      }
      sink->Comment();
      continue;
    }
    HandleCsvRow(record, columns, sink);
  }
  if (header_pending) return Status::Corruption("phishtank-csv: no header row");
  return Status::Ok();
}

// Reads "url" and "threat" positions from a header record; false when it has no "url".
bool TakeUrlhausHeader(const CsvRecord& header, CsvColumns* columns) {
  size_t url = FindColumn(header, "url");
  if (url == kNoColumn) return false;
  columns->value = url;
  columns->threat = FindColumn(header, "threat");
  return true;
}

// URLhaus: "################" banner comments, "# id,dateadded,url,url_status,last_online,threat,tags,
// urlhaus_link,reporter" as the last comment, then one quoted row per URL.
Status ParseUrlhausCsv(std::string_view data, Sink* sink) {
  CsvColumns columns;
  columns.value = kUrlhausDefaultUrlColumn;
  columns.threat = kUrlhausDefaultThreatColumn;
  columns.value_name = "'url'";
  CsvReader reader(data);
  CsvRecord record;
  CsvRecord header;
  std::string_view comment;
  std::string error;
  bool data_seen = false;
  while (true) {
    CsvStep step = reader.Next(&record, &comment, &error);
    if (step == CsvStep::kEnd) break;
    if (step == CsvStep::kComment) {
      sink->Comment();
      if (!data_seen && !comment.empty()) {
        // A comment that reads as a CSV record with a "url" field names the columns.
        std::string_view body = Trim(comment.substr(1));
        if (body.find(',') != std::string_view::npos) {
          CsvReader header_reader(body);
          std::string_view unused;
          std::string header_error;
          if (header_reader.Next(&header, &unused, &header_error) == CsvStep::kRecord) {
            TakeUrlhausHeader(header, &columns);
          }
        }
      }
      continue;
    }
    if (step == CsvStep::kError) {
      sink->Error(record.line, error);
      continue;
    }
    if (!data_seen) {
      data_seen = true;
      if (TakeUrlhausHeader(record, &columns)) {  // an uncommented header row
        sink->Comment();
        continue;
      }
    }
    HandleCsvRow(record, columns, sink);
  }
  return Status::Ok();
}

// ---- JSON --------------------------------------------------------------------------------------------

enum class JsonKind { kPhishtank, kDrop };

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

void HandleJsonRecord(std::string_view text, uint64_t line, JsonKind kind, std::string_view where,
                      Sink* sink) {
  nlohmann::json object =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) {
    sink->Error(line, "malformed JSON" + std::string(where));
    return;
  }
  if (!object.is_object()) {
    sink->Error(line, "expected a JSON object" + std::string(where));
    return;
  }
  if (kind == JsonKind::kDrop) {
    // Spec (Spamhaus DROP JSON): the last line is {"type":"metadata","timestamp":...,...}.
    auto type = object.find("type");
    if (type != object.end() && type->is_string() && type->get_ref<const std::string&>() == "metadata") {
      sink->Skip();
      return;
    }
  }
  const char* key = kind == JsonKind::kDrop ? "cidr" : "url";
  auto member = object.find(key);
  if (member == object.end() || !member->is_string()) {
    sink->Error(line, std::string("object has no string \"") + key + "\" member" + std::string(where));
    return;
  }
  std::string_view value = Trim(member->get_ref<const std::string&>());
  if (kind == JsonKind::kDrop) {
    if (!IsCidr(value)) {
      sink->Error(line, Quote(value) + " is not a CIDR range" + std::string(where));
      return;
    }
    sink->Add(value, kThreatMaliciousNetwork, line);
  } else {
    sink->Add(value, kThreatPhishing, line);
  }
}

// A top-level JSON array: elements are cut out by tracking strings and bracket depth, then parsed alone.
Status ParseJsonArray(std::string_view data, size_t open, JsonKind kind, Sink* sink) {
  uint64_t line = 1 + static_cast<uint64_t>(std::count(data.begin(), data.begin() + open, '\n'));
  const uint64_t open_line = line;
  size_t pos = open + 1;
  auto skip_space = [&] {
    while (pos < data.size() && IsJsonSpace(data[pos])) {
      if (data[pos] == '\n') ++line;
      ++pos;
    }
  };
  auto unterminated = [&] {
    return Status::Corruption("unterminated JSON array (opened on line " + std::to_string(open_line) + ")");
  };
  skip_space();
  if (pos < data.size() && data[pos] == ']') {
    ++pos;
  } else {
    uint64_t index = 0;
    while (true) {
      skip_space();
      if (pos >= data.size()) return unterminated();
      const size_t start = pos;
      const uint64_t start_line = line;
      size_t depth = 0;
      bool in_string = false;
      for (; pos < data.size(); ++pos) {
        char c = data[pos];
        if (c == '\n') ++line;
        if (in_string) {
          if (c == '\\' && pos + 1 < data.size()) {
            ++pos;
            if (data[pos] == '\n') ++line;
          } else if (c == '"') {
            in_string = false;
          }
          continue;
        }
        if (c == '"') {
          in_string = true;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (depth == 0) break;
          --depth;
        } else if (c == ',' && depth == 0) {
          break;
        }
      }
      if (pos >= data.size()) return unterminated();
      const char end = data[pos];
      if (end == '}') {
        return Status::Corruption("unbalanced '}' in the JSON array on line " + std::to_string(line));
      }
      ++index;
      std::string_view element = Trim(data.substr(start, pos - start));
      std::string where = " (array element " + std::to_string(index) + ")";
      if (element.empty()) {
        if (end != ']') sink->Error(start_line, "empty JSON array element" + where);  // "[a,]" is tolerated
      } else if (element.size() > kMaxFeedLineBytes) {
        sink->Error(start_line, "JSON array element is longer than " + std::to_string(kMaxFeedLineBytes) +
                                    " bytes" + where);
      } else {
        HandleJsonRecord(element, start_line, kind, where, sink);
      }
      ++pos;  // past ',' or ']'
      if (end == ']') break;
    }
  }
  skip_space();
  if (pos < data.size()) {
    return Status::Corruption("unexpected bytes after the JSON array on line " + std::to_string(line));
  }
  return Status::Ok();
}

Status ParseJsonFeed(std::string_view data, JsonKind kind, Sink* sink) {
  size_t first = 0;
  while (first < data.size() && IsJsonSpace(data[first])) ++first;
  if (first == data.size()) return Status::Ok();  // an empty feed
  if (data[first] == '[') return ParseJsonArray(data, first, kind, sink);
  if (data[first] != '{') {
    return Status::Corruption("expected a JSON array or one JSON object per line, found " +
                              Quote(data.substr(first, 1)));
  }
  ForEachLine(data, sink, [&](std::string_view line, uint64_t number) {
    std::string_view text = Trim(line);
    if (text.empty()) {
      sink->Comment();
      return;
    }
    HandleJsonRecord(text, number, kind, "", sink);
  });
  return Status::Ok();
}

// ---- dispatch ------------------------------------------------------------------------------------------

Status ParseAs(FeedFormat format, const FeedSpec& spec, std::string_view data, Sink* sink) {
  switch (format) {
    case FeedFormat::kPlain:
      ForEachLine(data, sink, [&](std::string_view l, uint64_t n) { ParsePlainLine(l, n, "", false, sink); });
      return Status::Ok();
    case FeedFormat::kOpenphish:
      ForEachLine(data, sink,
                  [&](std::string_view l, uint64_t n) { ParsePlainLine(l, n, kThreatPhishing, true, sink); });
      return Status::Ok();
    case FeedFormat::kHosts:
      ForEachLine(data, sink, [&](std::string_view l, uint64_t n) { ParseHostsLine(l, n, sink); });
      return Status::Ok();
    case FeedFormat::kAbp:
      ForEachLine(data, sink, [&](std::string_view l, uint64_t n) { ParseAbpLine(l, n, sink); });
      return Status::Ok();
    case FeedFormat::kDropTxt:
      ForEachLine(data, sink, [&](std::string_view l, uint64_t n) { ParseDropTxtLine(l, n, sink); });
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
                            return IsAlpha(c) || IsDigit(c) || c == '-' || c == '_';
                          });
  if (!has_prefix) {
    spec.path = std::string(arg);
    return spec;
  }
  const std::string name = Lower(prefix);
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
    return Status::InvalidArgument("unknown feed format " + Quote(prefix) + " in " + Quote(arg) +
                                   " (known: " + known + "; csv takes csv:COLUMN:PATH; write ./" +
                                   std::string(prefix) + ":... for a file name with a colon)");
  }
  spec.format = found->format;
  std::string_view rest = arg.substr(colon + 1);
  if (spec.format == FeedFormat::kCsv) {
    const size_t second = rest.find(':');
    if (second == std::string_view::npos) {
      return Status::InvalidArgument("csv needs a column: csv:COLUMN:PATH, got " + Quote(arg));
    }
    std::string_view column = rest.substr(0, second);
    rest = rest.substr(second + 1);
    if (Trim(column).empty()) return Status::InvalidArgument("empty CSV column in " + Quote(arg));
    size_t number = 0;
    if (ParseColumnNumber(column, &number) && (number == 0 || number > kMaxFeedLineBytes)) {
      return Status::InvalidArgument("CSV column number " + Quote(column) + " is out of range (1-based)");
    }
    spec.csv_column = std::string(column);
  }
  if (rest.empty()) return Status::InvalidArgument("no path in feed argument " + Quote(arg));
  spec.path = std::string(rest);
  return spec;
}

FeedFormat DetectFeedFormat(std::string_view path, std::string_view first_bytes) {
  std::string name = Lower(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  if (EndsWith(name, ".gz")) name.resize(name.size() - 3);
  std::string_view text = first_bytes.substr(0, kMaxFeedDetectBytes);
  if (StartsWith(text, kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());

  size_t first = 0;
  while (first < text.size() && IsJsonSpace(text[first])) ++first;
  if (first < text.size() && text[first] == '[') {
    size_t next = first + 1;
    while (next < text.size() && IsJsonSpace(text[next])) ++next;
    // "[Adblock Plus 2.0]" and "[uBlock Origin]" headers start with a letter; a JSON array never does.
    if (next < text.size() && IsAlpha(text[next])) return FeedFormat::kAbp;
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
    std::string_view t = Trim(line);
    if (t.empty()) continue;
    if (t.front() == '#') {
      if (ContainsIgnoreCase(t, "urlhaus")) urlhaus_banner = true;
      if (StartsWithIgnoreCase(Trim(t.substr(1)), "id,dateadded,url")) return FeedFormat::kUrlhausCsv;
      continue;
    }
    if (t.front() == '!' || StartsWith(t, "||") || StartsWith(t, "@@")) return FeedFormat::kAbp;
    if (t.front() == ';') return FeedFormat::kDropTxt;
    if (StartsWithIgnoreCase(t, "phish_id,")) return FeedFormat::kPhishtankCsv;
    if (t.front() == '"' && urlhaus_banner) return FeedFormat::kUrlhausCsv;
    std::string_view rest = t;
    std::string_view token = NextToken(&rest);
    std::string_view second = NextToken(&rest);
    if (IsHostsAddress(token) && !second.empty() && second.front() != '#' && second.front() != ';') {
      return FeedFormat::kHosts;
    }
    size_t semi = t.find(';');
    if (semi != std::string_view::npos && IsCidr(Trim(t.substr(0, semi)))) return FeedFormat::kDropTxt;
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
  Sink sink(spec, entries, problems, stats);
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
