// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/prometheus.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>

namespace urlguard {
namespace {

TEST(PrometheusTextTest, WritesFamiliesSamplesAndEscapes) {
  PrometheusText out;
  out.Counter("a_total", "Help with \\ and\nnewline.", 3);
  out.Family("g", "A gauge.", MetricType::kGauge);
  out.Sample("g", {{"list", "we\"ird\\\nname"}}, uint64_t{7});
  out.Gauge("h", "Half.", 0.5);
  EXPECT_EQ(out.text(),
            "# HELP a_total Help with \\\\ and\\nnewline.\n# TYPE a_total counter\na_total 3\n"
            "# HELP g A gauge.\n# TYPE g gauge\ng{list=\"we\\\"ird\\\\\\nname\"} 7\n"
            "# HELP h Half.\n# TYPE h gauge\nh 0.5\n");
}

TEST(PrometheusTextTest, HistogramIsCumulative) {
  PrometheusText out;
  out.Family("lat", "Latency.", MetricType::kHistogram);
  const std::array<double, 3> bounds = {0.001, 0.25, 1};
  const std::array<uint64_t, 3> counts = {2, 0, 3};
  out.Histogram("lat", {{"k", "v"}}, bounds, counts, 6, 1.5);
  EXPECT_EQ(out.text(),
            "# HELP lat Latency.\n# TYPE lat histogram\n"
            "lat_bucket{k=\"v\",le=\"0.001\"} 2\nlat_bucket{k=\"v\",le=\"0.25\"} 2\nlat_bucket{k=\"v\",le=\"1\"} 5\n"
            "lat_bucket{k=\"v\",le=\"+Inf\"} 6\nlat_sum{k=\"v\"} 1.5\nlat_count{k=\"v\"} 6\n");
}

TEST(PrometheusTextTest, FormatsSpecialDoubles) {
  EXPECT_EQ(PrometheusText::FormatDouble(INFINITY), "+Inf");
  EXPECT_EQ(PrometheusText::FormatDouble(-INFINITY), "-Inf");
  EXPECT_EQ(PrometheusText::FormatDouble(NAN), "NaN");
  EXPECT_EQ(PrometheusText::FormatDouble(0.0001), "0.0001");
}

}  // namespace
}  // namespace urlguard
