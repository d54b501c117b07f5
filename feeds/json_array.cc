// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/json_array.h"

#include <algorithm>

#include "core/ascii.h"

namespace urlguard {

Status ForEachJsonArrayElement(
    std::string_view data, size_t open, size_t max_element_bytes,
    const std::function<void(std::string_view, uint64_t, std::string_view)>& on_element,
    const std::function<void(uint64_t, std::string)>& on_problem) {
  uint64_t line = 1 + static_cast<uint64_t>(std::count(data.begin(), data.begin() + open, '\n'));
  const uint64_t open_line = line;
  size_t pos = open + 1;
  auto skip_space = [&] {
    while (pos < data.size() && IsJsonSpace(data[pos])) {
      if (data[pos] == '\n') ++line;
      ++pos;
    }
  };
  auto unterminated = [&] {
    return Status::Corruption("unterminated JSON array (opened on line " + std::to_string(open_line) + ")");
  };
  skip_space();
  if (pos < data.size() && data[pos] == ']') {
    ++pos;
  } else {
    uint64_t index = 0;
    while (true) {
      skip_space();
      if (pos >= data.size()) return unterminated();
      const size_t start = pos;
      const uint64_t start_line = line;
      size_t depth = 0;
      bool in_string = false;
      for (; pos < data.size(); ++pos) {
        char c = data[pos];
        if (c == '\n') ++line;
        if (in_string) {
          if (c == '\\' && pos + 1 < data.size()) {
            ++pos;
            if (data[pos] == '\n') ++line;
          } else if (c == '"') {
            in_string = false;
          }
          continue;
        }
        if (c == '"') {
          in_string = true;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if (c == '}' || c == ']') {
          if (depth == 0) break;
          --depth;
        } else if (c == ',' && depth == 0) {
          break;
        }
      }
      if (pos >= data.size()) return unterminated();
      const char end = data[pos];
      if (end == '}') {
        return Status::Corruption("unbalanced '}' in the JSON array on line " + std::to_string(line));
      }
      ++index;
      std::string_view element = TrimAsciiSpace(data.substr(start, pos - start));
      std::string where = " (array element " + std::to_string(index) + ")";
      if (element.empty()) {
        if (end != ']') on_problem(start_line, "empty JSON array element" + where);  // "[a,]" is tolerated
      } else if (element.size() > max_element_bytes) {
        on_problem(start_line, "JSON array element is longer than " + std::to_string(max_element_bytes) +
                                   " bytes" + where);
      } else {
        on_element(element, start_line, where);
      }
      ++pos;  // past ',' or ']'
      if (end == ']') break;
    }
  }
  skip_space();
  if (pos < data.size()) {
    return Status::Corruption("unexpected bytes after the JSON array on line " + std::to_string(line));
  }
  return Status::Ok();
}

}  // namespace urlguard
