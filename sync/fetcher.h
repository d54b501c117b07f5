// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Fetcher: the client's only door to the network (docs/architecture.md §5, §6). The production implementation is
// libcurl (NewCurlFetcher); tests use it against a real server on loopback, and inject faults with a server
// that misbehaves — not with a fake fetcher. docs/sync-protocol.md states the rules for people.
//
// Rules every implementation keeps: https only (plain http only to loopback addresses, for tests and local
// servers), no redirects (a 3xx is returned as a status, never followed), connect / overall / low-speed
// timeouts, the response body capped by FetchRequest::max_bytes counted as bytes arrive (the transfer is
// aborted at the cap: an endless body costs at most the cap), a User-Agent naming urlguard and its version.
//
// Thread safety: Fetch() may be called from several threads at once.
#ifndef URLGUARD_SYNC_FETCHER_H_
#define URLGUARD_SYNC_FETCHER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "urlguard/env.h"
#include "urlguard/status.h"

namespace urlguard {

// Caps on what a request may name and on what a response may make us keep (STYLE: one named cap per buffer).
constexpr size_t kMaxFetchUrlBytes = 8192;  // FetchRequest::url; longer is kInvalidArgument
constexpr size_t kMaxEtagBytes = 1024;  // a longer ETag (or one not printable ASCII) is ignored, as if absent
constexpr size_t kMaxResponseHeaderBytes = 64 << 10;  // all header lines together; more is kResourceExhausted
// A larger Retry-After is clamped to this: the header is not signed, so it must not silence a client for
// longer than the failure backoff ceiling (sync/scheduler.h, kMaxBackoffSeconds).
constexpr int64_t kMaxRetryAfterSeconds = 24 * 60 * 60;

struct FetchRequest {
  std::string url;              // https://..., or http:// to 127.0.0.0/8, [::1] or localhost (see above)
  std::string method = "GET";   // "GET" or "POST"
  std::string body;             // POST body (must be empty for GET)
  std::string content_type;     // POST Content-Type ("" = none sent); no CR, LF or NUL
  std::string if_none_match;    // conditional GET: the ETag of the copy we have ("" = none); no CR, LF, NUL
  size_t max_bytes = 64 << 10;  // hard cap on the response body (0: any body byte is over the cap)
  // When set, the body's bytes go here as they arrive, in order (still counted against max_bytes), instead of
  // into FetchResponse::body: a large download (a snapshot, a catch-up diff) is hashed and inflated on the way,
  // never held whole. It sees the body of every response, error statuses included.
  std::function<void(std::string_view)> body_sink;
};

struct FetchResponse {
  int status = 0;    // HTTP status (200, 304, 404, 429, 500, 503, 3xx ...)
  std::string body;  // at most max_bytes; empty when the request had a body_sink
  size_t body_bytes = 0;  // the body's length, whether kept here or handed to the body_sink
  std::string etag;  // the ETag header as sent (quotes and W/ kept); "" if absent, longer than
                     // kMaxEtagBytes or not printable ASCII
  int64_t retry_after_seconds = -1;  // Retry-After (delta-seconds or HTTP date, converted), -1 when absent or
                                     // malformed; 0..kMaxRetryAfterSeconds otherwise
  // The Date header as Unix seconds (the server's clock when it answered), -1 when absent or unreadable. Not
  // signed: it only places the next poll (sync/scheduler.h PublisherClock), never decides what is trusted.
  int64_t server_date_unix = -1;
};

struct FetcherOptions {
  long connect_timeout_ms = 10000;        // > 0
  long total_timeout_ms = 120000;         // > 0: the whole transfer, body included
  long low_speed_bytes_per_second = 256;  // abort when slower than this ... (0 = no low-speed check)
  long low_speed_seconds = 20;            // ... for this long (a server that drips bytes); >= 1 when enabled
  std::string proxy;                      // "" = libcurl's default (http_proxy, https_proxy, ALL_PROXY); for
                                          // every target no_proxy does not exempt, loopback ones included
  std::string ca_bundle;                  // "" = the system's CA store; else a PEM file of trusted CAs
  std::string user_agent;                 // "" = "urlguard/<version> (+https://github.com/urlguard)"
  bool allow_plain_http_to_loopback = true;
  Env* env = nullptr;                     // the clock for Retry-After dates; null = Env::Default(). Not owned
};

class Fetcher {
 public:
  virtual ~Fetcher() = default;
  // Performs one request. Transport failures are Status values: kUnavailable (cannot connect, timeout, TLS
  // failure, reset), kResourceExhausted (body over max_bytes, or headers over kMaxResponseHeaderBytes),
  // kInvalidArgument (a URL that is not https and not plain http to loopback, malformed, or with credentials;
  // a bad method or header value — refused before any network activity). Any HTTP status, including errors
  // and redirects, is a response.
  virtual Result<FetchResponse> Fetch(const FetchRequest& request) = 0;
};

// The libcurl implementation. Fails with kInvalidArgument for options out of range (a timeout <= 0, a
// User-Agent with control characters), kInternal when libcurl cannot be initialized. The returned fetcher
// keeps a few idle libcurl handles so that consecutive requests to one server reuse the connection.
Result<std::unique_ptr<Fetcher>> NewCurlFetcher(const FetcherOptions& options);

// Parses a Retry-After header value (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date converted to seconds
// after `now_unix` (0 when the date is past). Returns -1 when malformed, at most kMaxRetryAfterSeconds.
// Exposed for tests and the fuzz target (fuzz/retry_after_fuzz.cc). Thread-safe.
int64_t ParseRetryAfter(std::string_view value, int64_t now_unix);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_FETCHER_H_
