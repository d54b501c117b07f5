// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feed_state.h"

#include "core/list_name.h"
#include "feeds/feeds.h"

namespace urlguard {
namespace {

constexpr std::string_view kMetaHeader = "urlguard-feed-meta 1";
constexpr std::string_view kRecordHeader = "urlguard-feed-list 1";

std::string Printable(std::string_view s) {
  std::string out(s.substr(0, kMaxFeedMetaFieldBytes));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
  }
  return out;
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string_view::npos) return false;
  if (s.size() > 1 && s[0] == '0') return false;
  uint64_t n = 0;
  for (char c : s) n = n * 10 + static_cast<uint64_t>(c - '0');
  *out = n;
  return true;
}

// Splits `text` into lines; every line must end with '\n'.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool Next(std::string_view* line) {
    if (pos_ >= text_.size()) return false;
    const size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) return false;  // an unterminated last line is damage
    *line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_no_;
    return true;
  }
  bool AtEnd() const { return pos_ == text_.size(); }
  uint64_t line_no() const { return line_no_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  uint64_t line_no_ = 0;
};

}  // namespace

std::string SerializeFeedMeta(const FeedMeta& m) {
  std::string s(kMetaHeader);
  s += '\n';
  auto str = [&s](const char* k, std::string_view v) { s += std::string(k) + " " + Printable(v) + "\n"; };
  auto num = [&s](const char* k, uint64_t v) { s += std::string(k) + " " + std::to_string(v) + "\n"; };
  str("etag", m.etag);
  str("last_modified", m.last_modified);
  num("last_success", static_cast<uint64_t>(std::max<int64_t>(0, m.last_success_unix)));
  num("last_attempt", static_cast<uint64_t>(std::max<int64_t>(0, m.last_attempt_unix)));
  num("entries", m.entries);
  num("rejected", m.rejected);
  num("bytes", m.bytes);
  num("consecutive_failures", m.consecutive_failures);
  num("quarantined", m.quarantined ? 1 : 0);
  str("reason", m.reason);
  str("quarantine_path", m.quarantine_path);
  s += "end\n";
  return s;
}

Result<FeedMeta> ParseFeedMeta(std::string_view text) {
  if (text.size() > kMaxFeedMetaBytes) return Status::Corruption("feed meta: file too large");
  LineReader r(text);
  std::string_view line;
  auto bad = [&r](const std::string& what) {
    return Status::Corruption("feed meta line " + std::to_string(r.line_no()) + ": " + what);
  };
  if (!r.Next(&line) || line != kMetaHeader) return bad("expected \"" + std::string(kMetaHeader) + "\"");
  FeedMeta m;
  uint64_t quarantined = 0, last_success = 0, last_attempt = 0;
  struct Field {
    const char* key;
    std::string* str;
    uint64_t* num;
  };
  const Field fields[] = {{"etag", &m.etag, nullptr},
                          {"last_modified", &m.last_modified, nullptr},
                          {"last_success", nullptr, &last_success},
                          {"last_attempt", nullptr, &last_attempt},
                          {"entries", nullptr, &m.entries},
                          {"rejected", nullptr, &m.rejected},
                          {"bytes", nullptr, &m.bytes},
                          {"consecutive_failures", nullptr, &m.consecutive_failures},
                          {"quarantined", nullptr, &quarantined},
                          {"reason", &m.reason, nullptr},
                          {"quarantine_path", &m.quarantine_path, nullptr}};
  for (const Field& f : fields) {
    if (!r.Next(&line)) return bad(std::string("missing ") + f.key);
    const std::string_view key = f.key;
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') {
      return bad(std::string("expected ") + f.key);
    }
    std::string_view value = line.substr(key.size() + 1);
    if (f.str != nullptr) {
      if (value.size() > kMaxFeedMetaFieldBytes) return bad("value too long");
      for (char c : value) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return bad("not printable");
      }
      *f.str = value;
    } else if (!ParseU64(value, f.num)) {
      return bad("not a decimal number");
    }
  }
  if (quarantined > 1) return bad("quarantined is 0 or 1");
  if (last_success > INT64_MAX || last_attempt > INT64_MAX) return bad("time out of range");
  m.quarantined = quarantined == 1;
  m.last_success_unix = static_cast<int64_t>(last_success);
  m.last_attempt_unix = static_cast<int64_t>(last_attempt);
  if (!r.Next(&line) || line != "end") return bad("expected end");
  if (!r.AtEnd()) return bad("bytes after end");
  return m;
}

std::string SerializeListRecord(const ListRecord& record) {
  std::string s(kRecordHeader);
  s += "\nlist " + record.list + "\n";
  for (const auto& [value, e] : record.entries) {
    s += "e " + std::to_string(e.absent_since_unix) + " " + (e.threat.empty() ? "-" : e.threat) + " " + value + "\n";
  }
  s += "end " + std::to_string(record.entries.size()) + "\n";
  return s;
}

Result<ListRecord> ParseListRecord(std::string_view text) {
  LineReader r(text);
  std::string_view line;
  auto bad = [&r](const std::string& what) {
    return Status::Corruption("list record line " + std::to_string(r.line_no()) + ": " + what);
  };
  if (!r.Next(&line) || line != kRecordHeader) return bad("expected \"" + std::string(kRecordHeader) + "\"");
  ListRecord rec;
  if (!r.Next(&line) || line.substr(0, 5) != "list " || !IsValidListName(line.substr(5))) return bad("expected list NAME");
  rec.list = line.substr(5);
  const std::string* last = nullptr;
  for (;;) {
    if (!r.Next(&line)) return bad("missing end");
    if (line.substr(0, 4) == "end ") {
      uint64_t n = 0;
      if (!ParseU64(line.substr(4), &n) || n != rec.entries.size()) return bad("entry count does not match");
      break;
    }
    if (line.substr(0, 2) != "e ") return bad("expected e or end");
    line.remove_prefix(2);
    const size_t s1 = line.find(' ');
    if (s1 == std::string_view::npos) return bad("expected e SINCE THREAT VALUE");
    const size_t s2 = line.find(' ', s1 + 1);
    if (s2 == std::string_view::npos) return bad("expected e SINCE THREAT VALUE");
    uint64_t since = 0;
    if (!ParseU64(line.substr(0, s1), &since) || since > INT64_MAX) return bad("bad time");
    std::string_view threat = line.substr(s1 + 1, s2 - s1 - 1);
    if (threat == "-") {
      threat = {};
    } else if (!IsValidThreatName(threat)) {
      return bad("bad threat");
    }
    std::string_view value = line.substr(s2 + 1);
    if (value.empty() || value.size() > kMaxFeedValueBytes) return bad("bad value length");
    for (char c : value) {
      if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) == 0x7f) return bad("bad value byte");
    }
    if (last != nullptr && !(*last < value)) return bad("values not unique and ascending");
    auto it = rec.entries.emplace_hint(rec.entries.end(), std::string(value),
                                       ListRecordEntry{static_cast<int64_t>(since), std::string(threat)});
    last = &it->first;
  }
  if (!r.AtEnd()) return bad("bytes after end");
  return rec;
}

}  // namespace urlguard
