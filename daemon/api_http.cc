// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "daemon/api_http.h"

#include <string_view>
#include <utility>

namespace urlguard {

std::optional<HttpResponse> RefuseApiHead(const HttpRequest& request) {
  HttpResponse refusal;
  refusal.close = true;
  refusal.SetHeader("Content-Type", "application/json");
  refusal.SetHeader("Cache-Control", "no-store");
  if (request.method != "GET" && request.method != "HEAD") {
    refusal.status = 405;
    refusal.SetHeader("Allow", "GET, HEAD");
    refusal.body = R"({"error":"method not allowed"})";
    return refusal;
  }
  // http/ has already refused ambiguous framing, so one Content-Length of digits or one Transfer-Encoding.
  const auto length = request.Header("Content-Length");
  if (request.Header("Transfer-Encoding") || (length && length->find_first_not_of('0') != std::string_view::npos)) {
    refusal.status = 413;
    refusal.body = R"({"error":"the lookup API takes no request body"})";
    return refusal;
  }
  return std::nullopt;
}

ApiRequest ToApiRequest(const HttpRequest& request) {
  ApiRequest api;
  api.method = request.method;
  api.path = request.path;
  std::string_view rest = request.query;
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::string name = PercentDecode(pair.substr(0, eq), /*plus_is_space=*/true);
    std::string value =
        eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), /*plus_is_space=*/true);
    api.query.emplace(std::move(name), std::move(value));  // emplace keeps the first of repeated names
  }
  return api;
}

HttpResponse ToHttpResponse(ApiResponse response) {
  HttpResponse http;
  http.status = response.status;
  http.body = std::move(response.body);
  if (!response.content_type.empty()) http.SetHeader("Content-Type", std::move(response.content_type));
  http.SetHeader("Cache-Control", "no-store");
  http.SetHeader("X-Content-Type-Options", "nosniff");
  return http;
}

}  // namespace urlguard
