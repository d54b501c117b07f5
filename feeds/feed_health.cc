// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feed_health.h"

#include <cstddef>
#include <vector>

#include "http/prometheus.h"
#include "urlguard/publish.h"

namespace urlguard {
namespace {

// One gauge family over the rows of a report (feeds or lists): its name, help and the value a row gives.
template <typename Row>
struct GaugeFamily {
  const char* name;
  const char* help;
  double (*value)(const Row&);
};

// Every family of `families`, each with one sample per row, labelled by `labels(row)`.
template <typename Row, size_t N, typename LabelsFn>
void AddGauges(PrometheusText* p, const GaugeFamily<Row> (&families)[N], const std::vector<Row>& rows,
               LabelsFn labels) {
  for (const GaugeFamily<Row>& fam : families) {
    p->Family(fam.name, fam.help, MetricType::kGauge);
    for (const Row& row : rows) p->Sample(fam.name, labels(row), fam.value(row));
  }
}

}  // namespace

std::string FeedHealthMetrics(const FeedUpdateReport& report, int64_t now_unix) {
  PrometheusText p;
  p.Gauge(kFeedMetricRun, "Unix time of the last urlguard-publish update run.", static_cast<double>(now_unix));
  static const GaugeFamily<FeedHealthReport> kFeedFamilies[] = {
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
  AddGauges(&p, kFeedFamilies, report.feeds, [](const FeedHealthReport& h) {
    return MetricLabels{{"feed", h.feed}, {"list", h.list}};
  });
  static const GaugeFamily<ListUpdateReport> kListFamilies[] = {
      {kFeedListMetricVersion, "Version the last update published (0: none yet).",
       [](const ListUpdateReport& l) { return static_cast<double>(l.version); }},
      {kFeedListMetricEntries, "Entries in the list's last published version.",
       [](const ListUpdateReport& l) { return static_cast<double>(l.entries); }},
      {kFeedListMetricInGrace, "Entries missing from every feed, kept until their grace period ends.",
       [](const ListUpdateReport& l) { return static_cast<double>(l.in_grace); }},
      {kFeedListMetricHeld, "Removals held back because they exceed the list's max_removal share.",
       [](const ListUpdateReport& l) { return static_cast<double>(l.removals_held); }},
  };
  AddGauges(&p, kListFamilies, report.lists, [](const ListUpdateReport& l) {
    return MetricLabels{{"list", l.list}};
  });
  return p.Release();
}

}  // namespace urlguard
