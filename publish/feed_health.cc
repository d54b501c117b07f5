// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/feed_health.h"

#include "http/prometheus.h"
#include "urlguard/publish.h"

namespace urlguard {

std::string FeedHealthMetrics(const FeedUpdateReport& report, int64_t now_unix) {
  PrometheusText p;
  p.Gauge(kFeedMetricRun, "Unix time of the last urlguard-publish update run.", static_cast<double>(now_unix));
  struct FeedFamily {
    const char* name;
    const char* help;
    double (*value)(const FeedHealthReport&);
  };
  static const FeedFamily kFeedFamilies[] = {
      {kFeedMetricLastSuccess, "Unix time of the feed's last download that counted (0: never).",
       [](const FeedHealthReport& h) { return static_cast<double>(h.last_success_unix); }},
      {kFeedMetricEntries, "Entries in the feed's good copy (what counts).",
       [](const FeedHealthReport& h) { return static_cast<double>(h.entries); }},
      {kFeedMetricRejected, "Lines of the feed's last download that were rejected.",
       [](const FeedHealthReport& h) { return static_cast<double>(h.rejected); }},
      {kFeedMetricBytes, "Bytes of the feed's last download.",
       [](const FeedHealthReport& h) { return static_cast<double>(h.bytes); }},
      {kFeedMetricQuarantined, "1 when the feed's last download was quarantined (the previous good copy counts).",
       [](const FeedHealthReport& h) { return h.quarantined ? 1.0 : 0.0; }},
      {kFeedMetricFailures, "Consecutive runs whose download of the feed did not count.",
       [](const FeedHealthReport& h) { return static_cast<double>(h.consecutive_failures); }},
  };
  for (const FeedFamily& fam : kFeedFamilies) {
    p.Family(fam.name, fam.help, MetricType::kGauge);
    for (const FeedHealthReport& h : report.feeds) {
      p.Sample(fam.name, {{"feed", h.feed}, {"list", h.list}}, fam.value(h));
    }
  }
  struct ListFamily {
    const char* name;
    const char* help;
    double (*value)(const ListUpdateReport&);
  };
  static const ListFamily kListFamilies[] = {
      {kFeedListMetricVersion, "Version the last update published (0: none yet).",
       [](const ListUpdateReport& l) { return static_cast<double>(l.version); }},
      {kFeedListMetricEntries, "Entries in the list's last published version.",
       [](const ListUpdateReport& l) { return static_cast<double>(l.entries); }},
      {kFeedListMetricInGrace, "Entries missing from every feed, kept until their grace period ends.",
       [](const ListUpdateReport& l) { return static_cast<double>(l.in_grace); }},
      {kFeedListMetricHeld, "Removals held back because they exceed the list's max_removal share.",
       [](const ListUpdateReport& l) { return static_cast<double>(l.removals_held); }},
  };
  for (const ListFamily& fam : kListFamilies) {
    p.Family(fam.name, fam.help, MetricType::kGauge);
    for (const ListUpdateReport& l : report.lists) p.Sample(fam.name, {{"list", l.list}}, fam.value(l));
  }
  return p.Release();
}

}  // namespace urlguard
