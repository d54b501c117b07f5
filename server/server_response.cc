// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/server_response.h"

#include <cstdio>
#include <string>

namespace urlguard {

namespace {

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {  // messages are ASCII; anything else is escaped byte-wise
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

HttpResponse JsonError(int status, std::string_view message) {
  HttpResponse res;
  res.status = status;
  res.SetHeader("Content-Type", "application/json");
  res.SetHeader("Cache-Control", "no-store");
  res.body = "{\"error\":\"" + JsonEscape(message) + "\"}";
  return res;
}

}  // namespace urlguard
