// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/prometheus.h"

#include <cassert>
#include <charconv>
#include <cmath>

namespace urlguard {

namespace {

[[maybe_unused]] bool IsMetricName(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':') ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string PrometheusText::EscapeHelp(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PrometheusText::EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PrometheusText::FormatDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Plain decimals for the usual magnitudes (bucket bounds read "0.0001", not "1e-04"), shortest round-trip
  // form either way.
  const double magnitude = std::fabs(value);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-6 && magnitude < 1e15);
  const auto r = fixed ? std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, r.ptr);
}

void PrometheusText::Family(std::string_view name, std::string_view help, MetricType type) {
  assert(IsMetricName(name, true));
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += EscapeHelp(help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += TypeName(type);
  out_ += '\n';
}

void PrometheusText::WriteSeries(std::string_view name, const MetricLabels& labels) {
  assert(IsMetricName(name, true));
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const auto& [key, value] : labels) {
      assert(IsMetricName(key, false));
      if (!first) out_ += ',';
      first = false;
      out_ += key;
      out_ += "=\"";
      out_ += EscapeLabelValue(value);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
}

void PrometheusText::Sample(std::string_view name, const MetricLabels& labels, uint64_t value) {
  WriteSeries(name, labels);
  out_ += std::to_string(value);
  out_ += '\n';
}

void PrometheusText::Sample(std::string_view name, const MetricLabels& labels, double value) {
  WriteSeries(name, labels);
  out_ += FormatDouble(value);
  out_ += '\n';
}

void PrometheusText::Counter(std::string_view name, std::string_view help, uint64_t value) {
  Family(name, help, MetricType::kCounter);
  Sample(name, {}, value);
}

void PrometheusText::Gauge(std::string_view name, std::string_view help, double value) {
  Family(name, help, MetricType::kGauge);
  Sample(name, {}, value);
}

void PrometheusText::Histogram(std::string_view name, const MetricLabels& labels,
                               std::span<const double> upper_bounds, std::span<const uint64_t> counts,
                               uint64_t count, double sum) {
  assert(upper_bounds.size() == counts.size());
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    cumulative += counts[i];
    const std::string le = FormatDouble(upper_bounds[i]);
    MetricLabels with_le = labels;
    with_le.emplace_back("le", le);
    Sample(bucket, with_le, cumulative);
  }
  MetricLabels with_inf = labels;
  with_inf.emplace_back("le", "+Inf");
  Sample(bucket, with_inf, count);
  Sample(std::string(name) + "_sum", labels, sum);
  Sample(std::string(name) + "_count", labels, count);
}

}  // namespace urlguard
