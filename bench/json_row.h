// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// One result row of a benchmark in the shape bench/perf_table.py reads: with `json`, one JSON object per line on
// stdout ({"row", "value", "unit", "baselines": {...}, "note"}); a readable line on `human` either way (stderr when
// stdout carries JSON). Row ids, units and names are the bench's own literals: nothing is escaped.
#ifndef URLGUARD_BENCH_JSON_ROW_H_
#define URLGUARD_BENCH_JSON_ROW_H_

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace urlguard::bench {

using Baselines = std::vector<std::pair<const char*, double>>;

inline void PrintJsonRow(bool json, const char* row, double value, const char* unit, const Baselines& baselines,
                         const std::string& note) {
  std::string b;
  for (const auto& [name, x] : baselines) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s\"%s\": %.4g", b.empty() ? "" : ", ", name, x);
    b += buf;
  }
  if (json) {
    std::printf("{\"row\": \"%s\", \"value\": %.4g, \"unit\": \"%s\", \"baselines\": {%s}, \"note\": \"%s\"}\n", row,
                value, unit, b.c_str(), note.c_str());
  }
  std::fprintf(json ? stderr : stdout, "%-28s %10.4g %-9s baselines {%s}  %s\n", row, value, unit, b.c_str(),
               note.c_str());
}

}  // namespace urlguard::bench

#endif  // URLGUARD_BENCH_JSON_ROW_H_
