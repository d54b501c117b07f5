// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feeds_file.h"

#include <cstdlib>
#include <map>
#include <set>

#include "core/ascii.h"
#include "core/list_name.h"
#include "urlguard/publish.h"

namespace urlguard {

// include/urlguard/publish.h; here because the feeds file is its first user (`grace = 7d`), below publish/.
Result<int64_t> ParseDurationSeconds(std::string_view s) {
  const Status bad = Status::InvalidArgument("a duration such as 90m, 24h or 7d");
  if (s.empty() || s.size() > 12) return bad;
  size_t digits = s.find_first_not_of("0123456789");
  if (digits == 0) return bad;
  int64_t n = 0;
  for (char c : s.substr(0, digits)) n = n * 10 + (c - '0');  // at most 12 digits: no overflow
  std::string_view unit = digits == std::string_view::npos ? "s" : s.substr(digits);
  int64_t mult = unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : 0;
  if (mult == 0 || n <= 0) return bad;
  return n * mult;
}

namespace {

constexpr int64_t kMaxGraceSeconds = 30 * 86400;
constexpr int64_t kMaxFeedTimeoutSeconds = 3600;

Status LineError(uint64_t line, const std::string& message) {
  return Status::InvalidArgument("line " + std::to_string(line) + ": " + message);
}

// "0", "1", "0.25", ".5": a plain decimal in [0, 1].
bool ParseFraction(std::string_view v, double* out) {
  if (v.empty() || v.size() > 16) return false;
  int dots = 0;
  for (char c : v) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  if (dots > 1 || v == ".") return false;
  const double d = std::strtod(std::string(v).c_str(), nullptr);
  if (!(d >= 0.0 && d <= 1.0)) return false;
  *out = d;
  return true;
}

// Decimal bytes with an optional K, M or G suffix (powers of 1024).
bool ParseBytes(std::string_view v, uint64_t* out) {
  uint64_t mult = 1;
  if (!v.empty() && (v.back() == 'K' || v.back() == 'M' || v.back() == 'G')) {
    mult = v.back() == 'K' ? 1024 : v.back() == 'M' ? 1024 * 1024 : uint64_t{1024} * 1024 * 1024;
    v.remove_suffix(1);
  }
  if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string_view::npos) return false;
  uint64_t n = 0;
  for (char c : v) n = n * 10 + static_cast<uint64_t>(c - '0');
  if (n > UINT64_MAX / mult) return false;  // "17179869185G" must not wrap around to 1G
  *out = n * mult;
  return true;
}

bool ParseDuration(std::string_view v, bool allow_zero, int64_t* out) {
  if (allow_zero && v == "0") {
    *out = 0;
    return true;
  }
  auto d = ParseDurationSeconds(v);
  if (!d.ok()) return false;
  *out = *d;
  return true;
}

}  // namespace

const FeedListConfig* FeedsFile::FindList(std::string_view name) const {
  for (const FeedListConfig& l : lists) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

const FeedConfig* FeedsFile::FindFeed(std::string_view name) const {
  for (const FeedConfig& f : feeds) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Result<FeedsFile> ParseFeedsFile(std::string_view text) {
  if (text.size() > kMaxFeedsFileBytes) {
    return Status::ResourceExhausted("feeds file over " + std::to_string(kMaxFeedsFileBytes) + " bytes");
  }
  FeedsFile out;
  std::vector<FeedListConfig> list_sections;
  enum class Section { kNone, kFeed, kList } section = Section::kNone;
  std::set<std::string> keys_seen;  // in the current section
  std::set<std::string> feed_names, list_names;
  uint64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kMaxFeedsFileLineBytes) return LineError(line_no, "line too long");
    for (char c : line) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u >= 0x7f) return LineError(line_no, "not printable ASCII");
    }
    line = TrimAsciiSpace(line);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      if (line.back() != ']') return LineError(line_no, "a section is [feed NAME] or [list NAME]");
      std::string_view inner = TrimAsciiSpace(line.substr(1, line.size() - 2));
      const size_t space = inner.find(' ');
      if (space == std::string_view::npos) return LineError(line_no, "a section is [feed NAME] or [list NAME]");
      std::string_view kind = inner.substr(0, space);
      std::string name(TrimAsciiSpace(inner.substr(space + 1)));
      if (!IsValidListName(name)) return LineError(line_no, "section names are 1-64 bytes of [a-z0-9_-]: " + name);
      keys_seen.clear();
      if (kind == "feed") {
        if (!feed_names.insert(name).second) return LineError(line_no, "feed " + name + " defined twice");
        if (out.feeds.size() == kMaxFeedsPerFile) {
          return LineError(line_no, "more than " + std::to_string(kMaxFeedsPerFile) + " feeds");
        }
        out.feeds.emplace_back();
        out.feeds.back().name = name;
        out.feeds.back().line = line_no;
        section = Section::kFeed;
      } else if (kind == "list") {
        if (!list_names.insert(name).second) return LineError(line_no, "list " + name + " defined twice");
        if (list_sections.size() == kMaxFeedsPerFile) return LineError(line_no, "too many lists");
        list_sections.emplace_back();
        list_sections.back().name = name;
        section = Section::kList;
      } else {
        return LineError(line_no, "unknown section kind '" + std::string(kind) + "' (feed or list)");
      }
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return LineError(line_no, "expected KEY = VALUE");
    const std::string key(TrimAsciiSpace(line.substr(0, eq)));
    const std::string_view value = TrimAsciiSpace(line.substr(eq + 1));
    if (section == Section::kNone) return LineError(line_no, key + " outside a [feed] or [list] section");
    if (!keys_seen.insert(key).second) return LineError(line_no, key + " given twice");
    if (value.empty()) return LineError(line_no, key + " has no value");
    const std::string bad = "bad " + key + ": " + std::string(value);
    if (section == Section::kFeed) {
      FeedConfig& f = out.feeds.back();
      if (key == "url") {
        if (value.rfind("http://", 0) != 0 && value.rfind("https://", 0) != 0) {
          return LineError(line_no, "url must start with http:// or https://");
        }
        if (value.find(' ') != std::string_view::npos || value.find('\t') != std::string_view::npos) {
          return LineError(line_no, bad);
        }
        f.url = value;
      } else if (key == "path") {
        f.path = value;
      } else if (key == "format") {
        // Reuse the feed-argument grammar: "FORMAT" or "csv:COLUMN" followed by a placeholder path.
        auto spec = ParseFeedSpec(std::string(value) + ":-");
        if (!spec.ok() || spec->path != "-") return LineError(line_no, bad + " (docs/feeds.md §1)");
        f.spec = *spec;
        f.spec.path.clear();
      } else if (key == "list") {
        if (!IsValidListName(value)) return LineError(line_no, bad);
        f.list = value;
      } else if (key == "threat") {
        if (!IsValidThreatName(value)) return LineError(line_no, bad);
        f.threat = value;
      } else if (key == "max_shrink") {
        if (!ParseFraction(value, &f.max_shrink)) return LineError(line_no, bad + " (a fraction 0 .. 1)");
      } else if (key == "max_rejected_fraction") {
        if (!ParseFraction(value, &f.max_rejected_fraction)) return LineError(line_no, bad + " (a fraction 0 .. 1)");
      } else if (key == "max_bytes") {
        if (!ParseBytes(value, &f.max_bytes) || f.max_bytes == 0 || f.max_bytes > kMaxFeedBytes) {
          return LineError(line_no, bad + " (1 .. 1G)");
        }
      } else if (key == "connect_timeout" || key == "timeout") {
        int64_t* t = key == "timeout" ? &f.timeout_seconds : &f.connect_timeout_seconds;
        if (!ParseDuration(value, false, t) || *t > kMaxFeedTimeoutSeconds) {
          return LineError(line_no, bad + " (a duration up to 1h)");
        }
      } else {
        return LineError(line_no, "unknown feed key " + key);
      }
    } else {
      FeedListConfig& l = list_sections.back();
      if (key == "threat") {
        if (!IsValidThreatName(value)) return LineError(line_no, bad);
        l.threat = value;
      } else if (key == "grace") {
        if (!ParseDuration(value, true, &l.grace_seconds) || l.grace_seconds > kMaxGraceSeconds) {
          return LineError(line_no, bad + " (0 .. 30d)");
        }
      } else if (key == "max_removal") {
        if (!ParseFraction(value, &l.max_removal)) return LineError(line_no, bad + " (a fraction 0 .. 1)");
      } else if (key == "expires_in") {
        if (!ParseDuration(value, false, &l.expires_in_seconds) || l.expires_in_seconds > 30 * 86400) {
          return LineError(line_no, bad);
        }
      } else if (key == "keep") {
        uint64_t k = 0;
        if (value.size() > 3 || !ParseBytes(value, &k) || value.back() > '9' || k > 64) {
          return LineError(line_no, bad + " (0 .. 64)");
        }
        l.keep = static_cast<uint32_t>(k);
      } else {
        return LineError(line_no, "unknown list key " + key);
      }
    }
  }
  if (out.feeds.empty()) return Status::InvalidArgument("no feeds: the file needs at least one [feed NAME] section");
  for (const FeedConfig& f : out.feeds) {
    const std::string where = "feed " + f.name + " (line " + std::to_string(f.line) + ")";
    if (f.list.empty()) return Status::InvalidArgument(where + ": no list");
    if (f.url.empty() == f.path.empty()) return Status::InvalidArgument(where + ": give exactly one of url and path");
    if (out.FindList(f.list) == nullptr) {
      FeedListConfig l;
      for (const FeedListConfig& s : list_sections) {
        if (s.name == f.list) l = s;
      }
      l.name = f.list;
      out.lists.push_back(l);
    }
  }
  for (const FeedListConfig& s : list_sections) {
    if (out.FindList(s.name) == nullptr) {
      return Status::InvalidArgument("[list " + s.name + "] has no feed (a feed's `list` names it)");
    }
  }
  return out;
}

}  // namespace urlguard
