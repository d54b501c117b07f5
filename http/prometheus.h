// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// PrometheusText: the one writer of the Prometheus text exposition format 0.0.4 (urlguard-server's and
// urlguardd's /metrics). It writes each family's "# HELP" and "# TYPE" lines once, escapes HELP text and
// label values as the format requires, and formats counters, gauges and histograms.
//
// Spec (https://prometheus.io/docs/instrumenting/exposition_formats/):
//   - metric and label names match [a-zA-Z_:][a-zA-Z0-9_:]* (label names without ':'); callers pass
//     constants, so a bad name is a bug (assert);
//   - HELP text escapes '\' as "\\" and line feed as "\n";
//   - label values escape '\' as "\\", '"' as "\"" and line feed as "\n";
//   - a histogram family NAME has NAME_bucket{le="..."} samples with cumulative counts ending in le="+Inf",
//     then NAME_sum and NAME_count.
//
// Not thread-safe: one writer per scrape.
#ifndef URLGUARD_HTTP_PROMETHEUS_H_
#define URLGUARD_HTTP_PROMETHEUS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace urlguard {

// The Content-Type of a scrape answer.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kCounter, kGauge, kHistogram };

using MetricLabels = std::vector<std::pair<std::string_view, std::string_view>>;

class PrometheusText {
 public:
  // Starts a family: writes its HELP and TYPE lines. Samples of the family follow.
  void Family(std::string_view name, std::string_view help, MetricType type);

  // One sample line: NAME{labels} VALUE.
  void Sample(std::string_view name, const MetricLabels& labels, uint64_t value);
  void Sample(std::string_view name, const MetricLabels& labels, double value);

  // A whole one-sample family (HELP, TYPE, the sample).
  void Counter(std::string_view name, std::string_view help, uint64_t value);
  void Gauge(std::string_view name, std::string_view help, double value);

  // The samples of one histogram (after Family(name, ..., kHistogram)). `upper_bounds` are the finite
  // bucket bounds in increasing order; `counts` the NON-cumulative count of each bucket (same size);
  // `count` all observations (those above the last bound included), `sum` their sum.
  void Histogram(std::string_view name, const MetricLabels& labels, std::span<const double> upper_bounds,
                 std::span<const uint64_t> counts, uint64_t count, double sum);

  const std::string& text() const { return out_; }
  std::string Release() { return std::move(out_); }

  // Exposed for tests.
  static std::string EscapeHelp(std::string_view text);
  static std::string EscapeLabelValue(std::string_view value);
  // Shortest decimal that reads back as `value`; "+Inf", "-Inf", "NaN".
  static std::string FormatDouble(double value);

 private:
  void WriteSeries(std::string_view name, const MetricLabels& labels);
  std::string out_;
};

}  // namespace urlguard

#endif  // URLGUARD_HTTP_PROMETHEUS_H_
