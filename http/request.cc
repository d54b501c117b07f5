// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/request.h"

#include "core/ascii.h"

namespace urlguard {

std::string PercentDecode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '%' && i + 2 < in.size()) {
      const int hi = AsciiHexDigitValue(in[i + 1]), lo = AsciiHexDigitValue(in[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += (plus_is_space && c == '+') ? ' ' : c;
  }
  return out;
}

std::optional<std::string_view> HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

std::vector<std::string_view> HttpRequest::Headers(std::string_view name) const {
  std::vector<std::string_view> out;
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) out.emplace_back(value);
  }
  return out;
}

std::vector<std::string> HttpRequest::QueryValues(std::string_view name) const {
  std::vector<std::string> out;
  std::string_view rest = query;
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (PercentDecode(pair.substr(0, eq), true) != name) continue;
    out.push_back(eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), true));
  }
  return out;
}

}  // namespace urlguard
