// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The publisher's feed downloader (docs/feeds-file.md §4): one conditional GET of an upstream feed with libcurl.
// The client's fetcher (sync/fetcher.h, sync/curl_fetcher.cc) is deliberately stricter (https only, no redirects,
// signed sizes); upstream feeds are plain web resources, so this one follows up to kMaxFeedRedirects redirects
// between http and https, accepts gzip and deflate content encoding, and goes through `proxy` or the usual proxy
// variables (http_proxy, https_proxy, no_proxy; libcurl reads them). Every byte kept is counted against
// `max_bytes` after content decoding, so a compressed bomb stops at the cap.
//
// The fetcher only transports: whether a body counts is decided by publish/feed_update.h.
//
// Thread safety: FetchFeed may run on any thread (no signals); calls share no state.
#ifndef URLGUARD_FEEDS_FEED_FETCH_H_
#define URLGUARD_FEEDS_FEED_FETCH_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "urlguard/status.h"

namespace urlguard {

inline constexpr long kMaxFeedRedirects = 5;
inline constexpr size_t kMaxFeedResponseHeaderBytes = 64 * 1024;
inline constexpr size_t kMaxFeedValidatorBytes = 512;  // ETag, Last-Modified kept for the next request

struct FeedFetchRequest {
  std::string url;                 // http:// or https://
  std::string etag;                // If-None-Match when not empty
  std::string last_modified;       // If-Modified-Since when not empty
  std::string proxy;               // empty: the environment's proxy variables
  int64_t connect_timeout_ms = 30000;
  int64_t total_timeout_ms = 300000;
  size_t max_bytes = size_t{256} << 20;  // decoded body cap
};

struct FeedFetchResponse {
  long http_status = 0;            // the last response's (after redirects); 0 when none arrived
  bool not_modified = false;       // 304
  std::string body;                // decoded; on failure, whatever arrived (the quarantine keeps it)
  std::string etag, last_modified; // of the last response, when printable and short enough
  std::string content_type;
  std::string effective_url;       // after redirects
};

// GETs `request.url` into *response. Ok for a 2xx answer received whole, and for 304. Failures (response keeps
// what arrived): kUnavailable for connection, TLS, timeout, truncation and HTTP statuses other than 2xx/304
// ("HTTP 404"); kResourceExhausted over max_bytes; kInvalidArgument for a URL that is not http(s).
[[nodiscard]] Status FetchFeed(const FeedFetchRequest& request, FeedFetchResponse* response);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_FETCH_H_
