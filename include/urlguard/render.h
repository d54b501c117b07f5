// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The one renderer of urlguard's output shapes — verdicts, canonical forms, scan findings, list status and sync
// reports — as text for people and as JSON for programs. `urlguard`, urlguardd's loopback API and the demo all
// print through here, so the same verdict reads the same everywhere (a test compares `urlguard check --json`
// with urlguardd's /v1/check).
//
// JSON: each function returns one compact JSON value (no trailing newline) in UTF-8; bytes of the input that are
// not valid UTF-8 are replaced by U+FFFD, so the output is always valid JSON. Text: one line per item, no
// trailing newline (multi-line renderers separate lines with '\n').
//
// Verdict JSON object (every key always present; null when it does not apply):
//   input        the string that was checked
//   verdict      VerdictKindName(): "safe", "hit", "invalid", "safe_verified", "malicious", "unverified_hit"
//   list         the list that confirmed a malicious verdict, else the first match's list
//   layer, expression, sha256, list_version   of the first match
//   matches      array of {list, layer, expression, sha256, list_version}: every match ([] when none)
//   canonical    the canonical URL when the lookup was asked for it (CheckOptions::want_canonical)
//   threat       the threat type of a malicious verdict
//   stale, allowlisted, emergency   booleans as in Verdict
//   error        why the input is invalid, or why verification failed
// (Verdict::from_cache is left out on purpose: it says how this process decided, not what was decided.)
//
// Thread safety: pure functions; call them from any number of threads.
#ifndef URLGUARD_RENDER_H_
#define URLGUARD_RENDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/checker.h"
#include "urlguard/client.h"
#include "urlguard/export.h"
#include "urlguard/status.h"
#include "urlguard/sync.h"
#include "urlguard/text.h"

namespace urlguard {

// ---- verdicts ----------------------------------------------------------------------------------------------

// The verdict JSON object described above.
URLGUARD_EXPORT std::string RenderVerdictJson(std::string_view input, const Verdict& verdict);
// "safe     INPUT", "HIT      INPUT  list=phishing layer=domain expression=evil.example/", "MALICIOUS ...",
// "invalid  INPUT  (why)" ... with "[STALE ...]" appended when a list is past its signed expiry.
URLGUARD_EXPORT std::string RenderVerdictText(std::string_view input, const Verdict& verdict);

// Append the same bytes as RenderVerdictJson / RenderVerdictText to *out (no newline): for callers that print
// many verdicts into one buffer. They build no JSON tree and, once *out has room, allocate nothing.
URLGUARD_EXPORT void AppendVerdictJson(std::string* out, std::string_view input, const Verdict& verdict);
URLGUARD_EXPORT void AppendVerdictText(std::string* out, std::string_view input, const Verdict& verdict);

// ---- canonical forms (`urlguard canon`) ----------------------------------------------------------------------

// {"input", "canonical" (null when invalid), "expressions": [{"expression", "sha256"}...], "error" (null or why)}.
URLGUARD_EXPORT std::string RenderCanonicalJson(std::string_view input, const Result<CanonicalForm>& form);
// The canonical URL, then one "  SHA256  EXPRESSION" line per expression; or "invalid  INPUT  (why)".
URLGUARD_EXPORT std::string RenderCanonicalText(std::string_view input, const Result<CanonicalForm>& form);

// ---- scan findings (`urlguard scan`) -------------------------------------------------------------------------

// Where a URL was found: `source` names the text (a file name, "<stdin>"), `line` counts from 1, and `text` is
// the whole message the URL was found in (FoundUrl::begin/end index it).
struct ScanFinding {
  std::string_view source;
  uint64_t line = 0;
  std::string_view text;
  const FoundUrl* url = nullptr;  // required
  const Verdict* verdict = nullptr;  // required: the verdict of url->url
};
// The verdict JSON object of the normalized URL plus "file", "line", "text" (the URL as written) and "defanged".
URLGUARD_EXPORT std::string RenderScanFindingJson(const ScanFinding& finding);
// "SOURCE:LINE: " + RenderVerdictText of the URL as written (" (defanged)" marked).
URLGUARD_EXPORT std::string RenderScanFindingText(const ScanFinding& finding);

// ---- list status ---------------------------------------------------------------------------------------------

// {"lists": [{"list", "version", "entries", "age_seconds", "expires_unix", "stale", "emergency", "last_sync_unix",
// "last_sync_result" (SyncResultName), "last_sync_error", "next_sync_unix", "consecutive_failures"}...],
// "generation": N}. Ages are computed at `now_unix`.
URLGUARD_EXPORT std::string RenderListStatusJson(const std::vector<ListStatus>& lists, uint64_t generation,
                                                 int64_t now_unix);
// Two lines per list: version, entries, age and freshness; then the last sync and the next one. `where` names
// the data directory for the line printed when no list is installed.
URLGUARD_EXPORT std::string RenderListStatusText(const std::vector<ListStatus>& lists, std::string_view where,
                                                 int64_t now_unix);

// ---- sync reports --------------------------------------------------------------------------------------------

// "phishing: updated: installed version 1 (full snapshot, 948 bytes downloaded)",
// "phishing: updated version 1 -> 2 (diff, 120 bytes downloaded)", "phishing: not_modified (version 2)",
// "phishing: failed: unavailable: ...".
URLGUARD_EXPORT std::string RenderSyncReportText(const SyncReport& report);
// {"list", "result" (SyncResultName), "from_version", "to_version", "used_diff", "bytes", "error" (null or why)}.
URLGUARD_EXPORT std::string RenderSyncReportJson(const SyncReport& report);

// "in 5 s", "3 min ago", "2 h ago", "4 days ago" style durations for the text renderers: how long ago
// `then_unix` was at `now_unix` ("in the future (clock skew?)" when it is ahead).
URLGUARD_EXPORT std::string RenderAgo(int64_t then_unix, int64_t now_unix);

}  // namespace urlguard

#endif  // URLGUARD_RENDER_H_
