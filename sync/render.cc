// Copyright urlguard authors.
//
// The one renderer (include/urlguard/render.h). nlohmann::json is an implementation detail: callers get strings.
#include "urlguard/render.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace urlguard {
namespace {

using Json = nlohmann::json;

// Compact, with invalid UTF-8 replaced by U+FFFD, so the output is always valid JSON.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json NullOr(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

Json VerdictObject(std::string_view input, const Verdict& v) {
  Json j;
  j["input"] = std::string(input);
  j["verdict"] = VerdictKindName(v.kind);
  Json all = Json::array();
  for (const Match& m : v.matches) {
    all.push_back({{"list", m.list}, {"layer", LayerName(m.layer)}, {"expression", m.expression},
                   {"sha256", m.sha256_hex}, {"list_version", m.list_version}});
  }
  if (!v.matches.empty()) {
    const Match& m = v.matches.front();
    j["list"] = v.kind == VerdictKind::kMalicious && !v.list.empty() ? v.list : m.list;
    j["layer"] = LayerName(m.layer);
    j["expression"] = m.expression;
    j["sha256"] = m.sha256_hex;
    j["list_version"] = m.list_version;
  } else {
    j["list"] = NullOr(v.list);
    j["layer"] = nullptr;
    j["expression"] = nullptr;
    j["sha256"] = nullptr;
    j["list_version"] = nullptr;
  }
  j["matches"] = std::move(all);
  j["canonical"] = NullOr(v.canonical);
  j["threat"] = NullOr(v.threat);
  j["stale"] = v.stale;
  j["allowlisted"] = v.allowlisted;
  j["emergency"] = v.emergency;
  j["error"] = NullOr(v.error);
  return j;
}

}  // namespace

std::string RenderVerdictJson(std::string_view input, const Verdict& verdict) {
  return Dump(VerdictObject(input, verdict));
}

std::string RenderVerdictText(std::string_view input_view, const Verdict& v) {
  const std::string input(input_view);
  const char* stale = v.stale ? "  [STALE: a list is not installed, damaged or expired; see `urlguard status`]" : "";
  std::ostringstream o;
  const Match* first = v.matches.empty() ? nullptr : &v.matches.front();
  const std::string first_expression = first ? first->expression : "";
  switch (v.kind) {
    case VerdictKind::kSafe:
      o << "safe     " << input << (v.allowlisted ? "  (allowlisted)" : "") << stale;
      break;
    case VerdictKind::kSafeVerified:
      o << "safe     " << input << "  (local filter hit " << first_expression << ", verified safe"
        << (v.from_cache ? " from cache" : " by the server") << ")" << stale;
      break;
    case VerdictKind::kMalicious:
      o << "MALICIOUS " << input << "  list=" << v.list << (v.threat.empty() ? "" : " threat=" + v.threat)
        << " expression=" << first_expression
        << (v.emergency ? " (emergency policy: not verified)" : v.from_cache ? " (cached)" : " (verified)") << stale;
      break;
    case VerdictKind::kUnverifiedHit:
      o << "UNVERIFIED " << input << "  local hit list=" << (first ? first->list : "")
        << " expression=" << first_expression << "; verification unavailable"
        << (v.error.empty() ? "" : ": " + v.error) << stale;
      break;
    case VerdictKind::kInvalid:
      o << "invalid  " << input << "  (" << v.error << ")";
      break;
    case VerdictKind::kHit:
      o << "HIT      " << input;
      if (first != nullptr) {
        o << "  list=" << first->list << " layer=" << LayerName(first->layer) << " expression=" << first->expression;
      }
      if (v.matches.size() > 1) o << " (+" << v.matches.size() - 1 << " more)";
      o << stale;
      break;
  }
  return o.str();
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
  Json j = VerdictObject(f.url->url, *f.verdict);
  j["file"] = std::string(f.source);
  j["line"] = f.line;
  j["text"] = std::string(f.text.substr(f.url->begin, f.url->end - f.url->begin));
  j["defanged"] = f.url->defanged;
  return Dump(j);
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
    out += std::string(" (") + (r.used_diff ? "diff" : "full snapshot") + ", " + std::to_string(r.bytes) +
           " bytes downloaded)";
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
               {"error", NullOr(r.error)}});
}

}  // namespace urlguard
