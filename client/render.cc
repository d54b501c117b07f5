// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The one renderer (include/urlguard/render.h). nlohmann::json is an implementation detail: callers get strings.
#include "urlguard/render.h"

#include <array>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

namespace urlguard {
namespace {

using Json = nlohmann::json;

// Compact, with invalid UTF-8 replaced by U+FFFD, so the output is always valid JSON.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json NullOr(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

// ---- the verdict writer ---------------------------------------------------------------------------------------
//
// Verdicts are what `urlguard check --json` prints per input line, so they are written straight into the
// caller's buffer instead of through a JSON tree (a tree costs several allocations per key). The bytes are
// exactly what nlohmann::json's dump(-1, ' ', false, replace) printed before (client/render_test.cc compares the
// two on generated verdicts): keys in byte order (nlohmann's default object is a std::map), compact separators,
// and its string escaping, repeated below.

// Appends a string literal (its length known at compile time: no strlen per call).
template <size_t N>
void Lit(std::string* out, const char (&s)[N]) {
  out->append(s, N - 1);
}

// Spec (RFC 8259 section 7): '"', '\\' and U+0000..U+001F must be escaped. nlohmann writes \b \t \n \f \r
// for those five and \u00xx (lower-case hex) for the other control characters; '/' and DEL stay as they are.
void AppendEscapedByte(std::string* out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '\b': out->append("\\b"); return;
    case '\t': out->append("\\t"); return;
    case '\n': out->append("\\n"); return;
    case '\f': out->append("\\f"); return;
    case '\r': out->append("\\r"); return;
    case '"': out->append("\\\""); return;
    case '\\': out->append("\\\\"); return;
    default: {
      const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out->append(u, 6);
    }
  }
}

// The length of the well-formed UTF-8 sequence at s[i] (Unicode Table 3-7: no overlongs, no surrogates, nothing
// above U+10FFFF), or 0 when the sequence is ill-formed; *bad_at is then how many of its bytes to drop before
// the replacement character (at least 1: the lead byte; a bad continuation byte is not dropped but starts the
// next sequence, as in nlohmann's decoder).
size_t Utf8SequenceLength(std::string_view s, size_t i, size_t* bad_at) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    *bad_at = 1;  // a continuation byte or a byte that never starts a sequence
    return 0;
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= s.size()) {  // the string ends inside the sequence
      *bad_at = k;
      return 0;
    }
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) {
      *bad_at = k;
      return 0;
    }
  }
  return len;
}

// Bytes that are not copied as they are: the ones JSON escapes and every non-ASCII byte (checked as UTF-8).
constexpr std::array<bool, 256> kNeedsCare = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
  return t;
}();

// Whether any of the 8 bytes at p needs care (kNeedsCare), eight at a time: URLs are nearly all plain ASCII.
// haszero(v) = (v - 0x01..) & ~v & 0x80.. is the classic test for a zero byte (exact when used as a boolean).
inline bool WordNeedsCare(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  uint64_t v;
  std::memcpy(&v, p, 8);
  auto has_zero = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const uint64_t control = (v - 0x20 * kOnes) & ~v & kHigh;  // a byte < 0x20 (or >= 0x80, caught below too)
  return ((v & kHigh) | control | has_zero(v ^ ('"' * kOnes)) | has_zero(v ^ ('\\' * kOnes))) != 0;
}

// Appends s as a JSON string (quotes included), invalid UTF-8 replaced by U+FFFD.
void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  size_t i = 0;
  while (i < s.size()) {
    if (i + 8 <= s.size() && !WordNeedsCare(s.data() + i)) {
      i += 8;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (!kNeedsCare[c]) {
      ++i;
      continue;
    }
    out->append(s.data() + run, i - run);
    if (c < 0x80) {
      AppendEscapedByte(out, c);
      ++i;
    } else {
      size_t bad_at = 0;
      const size_t len = Utf8SequenceLength(s, i, &bad_at);
      if (len) {
        out->append(s.data() + i, len);
        i += len;
      } else {
        out->append("\xEF\xBF\xBD");
        i += bad_at;
      }
    }
    run = i;
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

void AppendJsonStringOrNull(std::string* out, std::string_view s) {
  if (s.empty()) {
    Lit(out, "null");
  } else {
    AppendJsonString(out, s);
  }
}

void AppendUint(std::string* out, uint64_t v) {
  char buf[20];
  char* end = buf + sizeof buf;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  out->append(p, static_cast<size_t>(end - p));
}

void AppendBool(std::string* out, bool b) {
  if (b) {
    Lit(out, "true");
  } else {
    Lit(out, "false");
  }
}

// `,"key":` for a key literal (plain ASCII: no escaping needed).
template <size_t N>
void AppendKey(std::string* out, const char (&key)[N]) {
  char buf[N + 3];
  buf[0] = ',';
  buf[1] = '"';
  std::memcpy(buf + 2, key, N - 1);
  buf[N + 1] = '"';
  buf[N + 2] = ':';
  out->append(buf, N + 3);
}

void AppendMatch(std::string* out, const Match& m) {
  Lit(out, "{\"expression\":");
  AppendJsonString(out, m.expression);
  AppendKey(out, "layer");
  AppendJsonString(out, LayerName(m.layer));
  AppendKey(out, "list");
  AppendJsonString(out, m.list);
  AppendKey(out, "list_version");
  AppendUint(out, m.list_version);
  AppendKey(out, "sha256");
  AppendJsonString(out, m.sha256_hex);
  out->push_back('}');
}

// The verdict object; with `scan`, the scan finding's four keys are merged in at their places in key order.
void AppendVerdictObject(std::string* out, std::string_view input, const Verdict& v, const ScanFinding* scan) {
  if (scan == nullptr && v.kind == VerdictKind::kSafe && v.matches.empty() && v.error.empty() && v.list.empty() &&
      v.threat.empty() && !v.stale && !v.allowlisted && !v.emergency) {
    // The common case, a plain "safe": the same bytes as below in three literal runs and two strings.
    Lit(out, "{\"allowlisted\":false,\"canonical\":");
    AppendJsonStringOrNull(out, v.canonical);
    Lit(out, ",\"emergency\":false,\"error\":null,\"expression\":null,\"input\":");
    AppendJsonString(out, input);
    Lit(out, ",\"layer\":null,\"list\":null,\"list_version\":null,\"matches\":[],\"sha256\":null,\"stale\":false,"
             "\"threat\":null,\"verdict\":\"safe\"}");
    return;
  }
  const Match* first = v.matches.empty() ? nullptr : &v.matches.front();
  Lit(out, "{\"allowlisted\":");
  AppendBool(out, v.allowlisted);
  AppendKey(out, "canonical");
  AppendJsonStringOrNull(out, v.canonical);
  if (scan) {
    AppendKey(out, "defanged");
    AppendBool(out, scan->url->defanged);
  }
  AppendKey(out, "emergency");
  AppendBool(out, v.emergency);
  AppendKey(out, "error");
  AppendJsonStringOrNull(out, v.error);
  AppendKey(out, "expression");
  if (first) {
    AppendJsonString(out, first->expression);
  } else {
    Lit(out, "null");
  }
  if (scan) {
    AppendKey(out, "file");
    AppendJsonString(out, scan->source);
  }
  AppendKey(out, "input");
  AppendJsonString(out, input);
  AppendKey(out, "layer");
  if (first) {
    AppendJsonString(out, LayerName(first->layer));
  } else {
    Lit(out, "null");
  }
  if (scan) {
    AppendKey(out, "line");
    AppendUint(out, scan->line);
  }
  AppendKey(out, "list");
  if (first) {
    AppendJsonString(out, v.kind == VerdictKind::kMalicious && !v.list.empty() ? v.list : first->list);
  } else {
    AppendJsonStringOrNull(out, v.list);
  }
  AppendKey(out, "list_version");
  if (first) {
    AppendUint(out, first->list_version);
  } else {
    Lit(out, "null");
  }
  AppendKey(out, "matches");
  out->push_back('[');
  for (size_t i = 0; i < v.matches.size(); ++i) {
    if (i) out->push_back(',');
    AppendMatch(out, v.matches[i]);
  }
  out->push_back(']');
  AppendKey(out, "sha256");
  if (first) {
    AppendJsonString(out, first->sha256_hex);
  } else {
    Lit(out, "null");
  }
  AppendKey(out, "stale");
  AppendBool(out, v.stale);
  if (scan) {
    AppendKey(out, "text");
    AppendJsonString(out, scan->text.substr(scan->url->begin, scan->url->end - scan->url->begin));
  }
  AppendKey(out, "threat");
  AppendJsonStringOrNull(out, v.threat);
  AppendKey(out, "verdict");
  AppendJsonString(out, VerdictKindName(v.kind));
  out->push_back('}');
}

}  // namespace

void AppendVerdictJson(std::string* out, std::string_view input, const Verdict& verdict) {
  AppendVerdictObject(out, input, verdict, nullptr);
}

std::string RenderVerdictJson(std::string_view input, const Verdict& verdict) {
  std::string out;
  AppendVerdictJson(&out, input, verdict);
  return out;
}

void AppendVerdictText(std::string* out, std::string_view input, const Verdict& v) {
  const char* stale = v.stale ? "  [STALE: a list is not installed, damaged or expired; see `urlguard status`]" : "";
  const Match* first = v.matches.empty() ? nullptr : &v.matches.front();
  const std::string_view first_expression = first ? std::string_view(first->expression) : std::string_view();
  switch (v.kind) {
    case VerdictKind::kSafe:
      out->append("safe     ").append(input);
      if (v.allowlisted) out->append("  (allowlisted)");
      break;
    case VerdictKind::kSafeVerified:
      out->append("safe     ").append(input).append("  (local filter hit ").append(first_expression);
      out->append(", verified safe").append(v.from_cache ? " from cache" : " by the server").append(")");
      break;
    case VerdictKind::kMalicious:
      out->append("MALICIOUS ").append(input).append("  list=").append(v.list);
      if (!v.threat.empty()) out->append(" threat=").append(v.threat);
      out->append(" expression=").append(first_expression);
      out->append(v.emergency ? " (emergency policy: not verified)" : v.from_cache ? " (cached)" : " (verified)");
      break;
    case VerdictKind::kUnverifiedHit:
      out->append("UNVERIFIED ").append(input).append("  local hit list=").append(first ? first->list : "");
      out->append(" expression=").append(first_expression).append("; verification unavailable");
      if (!v.error.empty()) out->append(": ").append(v.error);
      break;
    case VerdictKind::kInvalid:
      out->append("invalid  ").append(input).append("  (").append(v.error).append(")");
      return;  // an invalid input has no freshness
    case VerdictKind::kHit:
      out->append("HIT      ").append(input);
      if (first != nullptr) {
        out->append("  list=").append(first->list).append(" layer=").append(LayerName(first->layer));
        out->append(" expression=").append(first->expression);
      }
      if (v.matches.size() > 1) {
        out->append(" (+");
        AppendUint(out, v.matches.size() - 1);
        out->append(" more)");
      }
      break;
  }
  out->append(stale);
}

std::string RenderVerdictText(std::string_view input, const Verdict& verdict) {
  std::string out;
  AppendVerdictText(&out, input, verdict);
  return out;
}

std::string RenderCanonicalJson(std::string_view input, const Result<CanonicalForm>& form) {
  Json j;
  j["input"] = std::string(input);
  j["canonical"] = form.ok() ? Json(form->url) : Json(nullptr);
  j["expressions"] = Json::array();
  if (form.ok()) {
    for (const UrlExpression& e : form->expressions) {
      j["expressions"].push_back({{"expression", e.expression}, {"sha256", e.sha256_hex}});
    }
  }
  j["error"] = form.ok() ? Json(nullptr) : Json(form.status().message());
  return Dump(j);
}

std::string RenderCanonicalText(std::string_view input, const Result<CanonicalForm>& form) {
  if (!form.ok()) return "invalid  " + std::string(input) + "  (" + form.status().message() + ")";
  std::string out = form->url;
  for (const UrlExpression& e : form->expressions) out += "\n  " + e.sha256_hex + "  " + e.expression;
  return out;
}

std::string RenderScanFindingJson(const ScanFinding& f) {
  std::string out;
  AppendVerdictObject(&out, f.url->url, *f.verdict, &f);
  return out;
}

std::string RenderScanFindingText(const ScanFinding& f) {
  std::string written(f.text.substr(f.url->begin, f.url->end - f.url->begin));
  if (f.url->defanged) written += " (defanged)";
  return std::string(f.source) + ':' + std::to_string(f.line) + ": " + RenderVerdictText(written, *f.verdict);
}

std::string RenderListStatusJson(const std::vector<ListStatus>& lists, uint64_t generation, int64_t now) {
  Json out = Json::array();
  for (const ListStatus& l : lists) {
    out.push_back({{"list", l.name},
                   {"version", l.version},
                   {"entries", l.entries},
                   {"age_seconds", l.version ? now - l.created_unix : 0},
                   {"expires_unix", l.expires_unix},
                   {"stale", l.stale},
                   {"stale_reason", StaleReasonName(l.stale_reason)},
                   {"emergency", l.emergency},
                   {"last_sync_unix", l.last_sync_unix},
                   {"last_sync_result", SyncResultName(l.last_sync_result)},
                   {"last_sync_error", l.last_sync_error},
                   {"next_sync_unix", l.next_sync_unix},
                   {"consecutive_failures", l.consecutive_failures}});
  }
  return Dump({{"lists", out}, {"generation", generation}});
}

std::string RenderAgo(int64_t then_unix, int64_t now_unix) {
  const int64_t seconds = now_unix - then_unix;
  if (seconds < 0) return "in the future (clock skew?)";
  if (seconds < 120) return std::to_string(seconds) + " s ago";
  if (seconds < 7200) return std::to_string(seconds / 60) + " min ago";
  if (seconds < 172800) return std::to_string(seconds / 3600) + " h ago";
  return std::to_string(seconds / 86400) + " days ago";
}

std::string RenderListStatusText(const std::vector<ListStatus>& lists, std::string_view where, int64_t now) {
  if (lists.empty()) {
    return std::string(where) + ": no lists installed yet (run `urlguard sync` or urlguardd)";
  }
  std::ostringstream o;
  bool first = true;
  for (const ListStatus& l : lists) {
    if (!first) o << '\n';
    first = false;
    o << l.name << ": ";
    if (l.version == 0) {
      o << "not installed, STALE ("
        << (l.stale_reason == StaleReason::kNone ? "not_installed" : StaleReasonName(l.stale_reason)) << ")";
    } else {
      o << "version " << l.version << ", " << l.entries << " entries, built " << RenderAgo(l.created_unix, now)
        << ", "
        << (l.stale ? "STALE (expired " + RenderAgo(l.expires_unix, now) + ")"
                    : "fresh until " + std::to_string((l.expires_unix - now) / 60) + " min from now");
      if (l.emergency) o << ", EMERGENCY policy";
    }
    o << "\n  last sync: ";
    if (l.last_sync_unix == 0) {
      o << "never";
    } else {
      o << SyncResultName(l.last_sync_result) << " " << RenderAgo(l.last_sync_unix, now);
      if (!l.last_sync_error.empty()) o << ": " << l.last_sync_error;
      if (l.consecutive_failures) o << " (" << l.consecutive_failures << " failures in a row)";
    }
    if (l.next_sync_unix) {
      o << "; next sync "
        << (l.next_sync_unix > now ? "in " + std::to_string(l.next_sync_unix - now) + " s" : "due now");
    }
  }
  return o.str();
}

std::string RenderSyncReportText(const SyncReport& r) {
  // An empty list name is the list discovery step (SyncReport::list).
  std::string out = (r.list.empty() ? std::string("list discovery") : r.list) + ": " + SyncResultName(r.result);
  if (r.result == SyncResult::kUpdated) {
    if (r.from_version == 0) {
      out += ": installed version " + std::to_string(r.to_version);
    } else {
      out += " version " + std::to_string(r.from_version) + " -> " + std::to_string(r.to_version);
    }
    // Format 2 passes name their range diffs: "diffs 2 (12345 bytes)", after "checkpoint snapshot + " when
    // the checkpoint snapshot was downloaded first.
    std::string how = r.used_diff ? "diff" : "full snapshot";
    if (r.diffs > 0) {
      how = std::string(r.used_diff ? "" : "checkpoint snapshot + ") + "diffs " + std::to_string(r.diffs) + " (" +
            std::to_string(r.diff_bytes) + " bytes)";
    }
    out += " (" + how + ", " + std::to_string(r.bytes) + " bytes downloaded)";
  } else if (r.result == SyncResult::kUnsubscribed) {
    out += ": no longer in the server's list index, removed";
    if (r.from_version) out += " (was version " + std::to_string(r.from_version) + ")";
  } else if (r.to_version) {
    out += " (version " + std::to_string(r.to_version) + ")";
  }
  if (!r.error.empty()) out += ": " + r.error;
  return out;
}

std::string RenderSyncReportJson(const SyncReport& r) {
  return Dump({{"list", r.list},
               {"result", SyncResultName(r.result)},
               {"from_version", r.from_version},
               {"to_version", r.to_version},
               {"used_diff", r.used_diff},
               {"bytes", r.bytes},
               {"diffs", r.diffs},
               {"diff_bytes", r.diff_bytes},
               {"error", NullOr(r.error)}});
}

}  // namespace urlguard
