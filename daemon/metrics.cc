// Copyright urlguard authors.
#include "daemon/metrics.h"

#include <sstream>

namespace urlguard {

std::string RenderDaemonMetrics(const ClientStats& s, const std::vector<ListStatus>& lists,
                                const SyncAttemptCounts& sync, int64_t now) {
  std::ostringstream o;
  o << "# HELP urlguard_lookups_total Lookups answered, by verdict.\n# TYPE urlguard_lookups_total counter\n";
  for (int i = 0; i < 6; ++i) {
    o << "urlguard_lookups_total{verdict=\"" << VerdictKindName(static_cast<VerdictKind>(i)) << "\"} "
      << s.by_verdict[i] << '\n';
  }
  o << "# HELP urlguard_verifications_total Verification API requests.\n# TYPE urlguard_verifications_total counter\n"
    << "urlguard_verifications_total " << s.verifications << '\n'
    << "# HELP urlguard_verification_failures_total Verification requests without a usable answer.\n"
    << "# TYPE urlguard_verification_failures_total counter\n"
    << "urlguard_verification_failures_total " << s.verification_failures << '\n'
    << "# HELP urlguard_verification_seconds Time spent in verification requests.\n"
    << "# TYPE urlguard_verification_seconds summary\n"
    << "urlguard_verification_seconds_sum " << s.verification_seconds << '\n'
    << "urlguard_verification_seconds_count " << s.verifications << '\n'
    << "# HELP urlguard_cache_hits_total Result cache hits.\n# TYPE urlguard_cache_hits_total counter\n"
    << "urlguard_cache_hits_total " << s.cache_hits << '\n'
    << "# HELP urlguard_cache_misses_total Result cache misses.\n# TYPE urlguard_cache_misses_total counter\n"
    << "urlguard_cache_misses_total " << s.cache_misses << '\n';
  o << "# HELP urlguard_sync_attempts_total Sync passes, by result.\n# TYPE urlguard_sync_attempts_total counter\n";
  for (SyncResult r : {SyncResult::kUpdated, SyncResult::kNotModified, SyncResult::kUpToDate, SyncResult::kFailed}) {
    o << "urlguard_sync_attempts_total{result=\"" << SyncResultName(r) << "\"} "
      << sync.by_result[static_cast<int>(r)] << '\n';
  }
  o << "# HELP urlguard_list_version Installed version of each list.\n# TYPE urlguard_list_version gauge\n";
  for (const auto& l : lists) o << "urlguard_list_version{list=\"" << l.name << "\"} " << l.version << '\n';
  o << "# HELP urlguard_list_entries Entries in each list.\n# TYPE urlguard_list_entries gauge\n";
  for (const auto& l : lists) o << "urlguard_list_entries{list=\"" << l.name << "\"} " << l.entries << '\n';
  o << "# HELP urlguard_list_age_seconds Seconds since the installed version was created.\n"
       "# TYPE urlguard_list_age_seconds gauge\n";
  for (const auto& l : lists) {
    o << "urlguard_list_age_seconds{list=\"" << l.name << "\"} " << (l.version ? now - l.created_unix : 0) << '\n';
  }
  o << "# HELP urlguard_list_stale 1 when the list makes verdicts stale (not installed, damaged or expired).\n"
       "# TYPE urlguard_list_stale gauge\n";
  for (const auto& l : lists) o << "urlguard_list_stale{list=\"" << l.name << "\"} " << (l.stale ? 1 : 0) << '\n';
  o << "# HELP urlguard_list_stale_reason 1 for each stale list, labelled with why.\n"
       "# TYPE urlguard_list_stale_reason gauge\n";
  for (const auto& l : lists) {
    if (l.stale) {
      o << "urlguard_list_stale_reason{list=\"" << l.name << "\",reason=\"" << StaleReasonName(l.stale_reason)
        << "\"} 1\n";
    }
  }
  o << "# HELP urlguard_sync_consecutive_failures Failed sync passes in a row, per list (a freeze counts).\n"
       "# TYPE urlguard_sync_consecutive_failures gauge\n";
  for (const auto& l : lists) {
    o << "urlguard_sync_consecutive_failures{list=\"" << l.name << "\"} " << l.consecutive_failures << '\n';
  }
  return o.str();
}

}  // namespace urlguard
