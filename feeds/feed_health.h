// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Per-feed health of `urlguard-publish update` as Prometheus text (docs/feeds-file.md §7): what an operator
// alerts on to notice that a feed went silent, is quarantined, or keeps failing. The function is public
// (include/urlguard/publish.h FeedHealthMetrics); this header only names the metric families in one place.
#ifndef URLGUARD_FEEDS_FEED_HEALTH_H_
#define URLGUARD_FEEDS_FEED_HEALTH_H_

namespace urlguard {

inline constexpr char kFeedMetricLastSuccess[] = "urlguard_feed_last_success_timestamp_seconds";
inline constexpr char kFeedMetricEntries[] = "urlguard_feed_entries";
inline constexpr char kFeedMetricRejected[] = "urlguard_feed_rejected_lines";
inline constexpr char kFeedMetricBytes[] = "urlguard_feed_bytes";
inline constexpr char kFeedMetricQuarantined[] = "urlguard_feed_quarantined";
inline constexpr char kFeedMetricFailures[] = "urlguard_feed_consecutive_failures";
inline constexpr char kFeedMetricRun[] = "urlguard_feed_update_timestamp_seconds";
inline constexpr char kFeedListMetricVersion[] = "urlguard_feed_list_version";
inline constexpr char kFeedListMetricEntries[] = "urlguard_feed_list_entries";
inline constexpr char kFeedListMetricInGrace[] = "urlguard_feed_list_entries_in_grace";
inline constexpr char kFeedListMetricHeld[] = "urlguard_feed_list_removals_held";

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_HEALTH_H_
