// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The handler interface of the http/ layer: what a handler sees of a request (HttpRequest) and what it
// answers (HttpResponse). Handlers see only complete, well-framed requests within every limit of
// HttpServerOptions (http/http_server.h): the layer has already refused the rest.
#ifndef URLGUARD_HTTP_REQUEST_H_
#define URLGUARD_HTTP_REQUEST_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ascii.h"  // EqualsIgnoreCase, for header names
#include "platform/env.h"

namespace urlguard {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // as received, e.g. "GET" (methods are case-sensitive)
  std::string target;  // the raw request target as received: path, then "?" and the query, not decoded
  std::string path;    // the path part of `target`, percent-decoded (may hold any byte, "%00" included)
  std::string query;   // the query part of `target` after '?', NOT decoded ("" when none)
  HttpHeaders headers;  // in order, names and values as received (names compare case-insensitively)
  std::string body;     // the whole body (de-chunked), at most HttpServerOptions::max_body_bytes
  std::string peer_address;  // numeric TCP peer address: "127.0.0.1", "::1"
  bool tls = false;

  // The first value of header `name` (case-insensitive), or nullopt.
  std::optional<std::string_view> Header(std::string_view name) const;
  // Every value of header `name`, in order.
  std::vector<std::string_view> Headers(std::string_view name) const;
  // The percent-decoded values of query parameter `name` ('+' is a space), in order.
  std::vector<std::string> QueryValues(std::string_view name) const;
};

// At most this many static headers per response (HttpResponse::SetStaticHeader).
constexpr size_t kMaxStaticHeaders = 4;

struct HttpResponse {
  int status = 200;
  HttpHeaders headers;  // Content-Length and Date are the layer's; do not set them
  // Headers whose name and value are string literals (static storage): sent before `headers`, and setting
  // them allocates nothing (the verify answer's Content-Type and Cache-Control on the hot path).
  std::pair<const char*, const char*> static_headers[kMaxStaticHeaders] = {};
  size_t static_header_count = 0;
  std::string body;
  // Instead of `body`: bytes [file_offset, file_offset + file_length) of a mapped file, sent without a copy.
  // The mapping is kept alive until the response is sent.
  std::shared_ptr<const MappedFile> file;
  size_t file_offset = 0, file_length = 0;
  // Close the connection after this response.
  bool close = false;

  void SetHeader(std::string name, std::string value) { headers.emplace_back(std::move(name), std::move(value)); }
  // `name` and `value` must outlive the response (literals). More than kMaxStaticHeaders: a bug (assert).
  void SetStaticHeader(const char* name, const char* value);
};

// A body buffer for a response, recycled from this thread's earlier responses (empty, with capacity), so a
// handler that fills it and moves it into HttpResponse::body allocates nothing in steady state; the http/
// layer hands the buffer back (RecycleResponseBuffer) once the response is sent. An empty string when the
// thread has none yet. Thread-safe (per-thread pools).
std::string TakeResponseBuffer();

// A heap string object for a response body in flight (the http/ layer's; for MHD's free callback), from this
// thread's pool; give it back with RecycleResponseBuffer. Both allocate only while the pool warms up.
std::string* AcquireResponseBuffer();
void RecycleResponseBuffer(std::string* buffer);

// Answers one request. Called concurrently from the server's event threads: it must be thread-safe and must
// not block for long (every connection of its thread waits meanwhile). It must not throw.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// Percent-decodes `in` ("%2F" -> '/', invalid escapes kept as they are; '+' -> ' ' when `plus_is_space`).
std::string PercentDecode(std::string_view in, bool plus_is_space);

}  // namespace urlguard

#endif  // URLGUARD_HTTP_REQUEST_H_
