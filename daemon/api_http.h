// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The lookup API (include/urlguard/daemon.h) on the http/ layer: what the transport checks at head time
// beyond what http/ checks itself, and the translation between http/'s request/response and the daemon's
// ApiRequest/ApiResponse. Pure functions, so the fuzz target (fuzz/daemon_routing_fuzz.cc) drives exactly
// what the listener runs.
#ifndef URLGUARD_DAEMON_API_HTTP_H_
#define URLGUARD_DAEMON_API_HTTP_H_

#include <optional>

#include "http/request.h"
#include "urlguard/daemon.h"

namespace urlguard {

// The head-time refusal of a request the API never answers, before any body byte is read: 405 (with
// "Allow: GET, HEAD") for any method but GET and HEAD (a CORS preflight OPTIONS included), 413 for a request
// that announces a body (a Content-Length other than 0, or a Transfer-Encoding). nullopt: go on.
std::optional<HttpResponse> RefuseApiHead(const HttpRequest& request);

// The daemon's view of a request: method, decoded path, and the query split at '&' into name=value pairs,
// each percent-decoded with '+' as a space (the first of repeated names wins; a name without '=' has an
// empty value).
ApiRequest ToApiRequest(const HttpRequest& request);

// The http/ answer of an ApiResponse: its status, body and Content-Type, plus "Cache-Control: no-store" and
// "X-Content-Type-Options: nosniff". Never an Access-Control-* header: the API grants no CORS access.
HttpResponse ToHttpResponse(ApiResponse response);

}  // namespace urlguard

#endif  // URLGUARD_DAEMON_API_HTTP_H_
