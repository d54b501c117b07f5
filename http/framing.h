// Copyright urlguard authors.
//
// Request checks the http/ layer applies to every request head before a handler runs, as pure functions:
// strict message framing (request smuggling) and the Host allowlist.
//
// Framing, RFC 9112 6.1 and 6.3: a request whose body length is ambiguous is refused (400, connection
// closed), because a proxy in front of the server may frame it differently and hide a second request in the
// body. libmicrohttpd 0.9.75 itself refuses a malformed or overflowing Content-Length value (400) and a
// malformed chunk (it closes the connection), but it takes the FIRST of several Content-Length headers and
// lets Transfer-Encoding win over Content-Length silently; those are checked here:
//   - more than one Content-Length header, or one whose value is not 1*DIGIT (a list "5, 5" included);
//   - Transfer-Encoding together with Content-Length;
//   - a Transfer-Encoding other than exactly "chunked" (case-insensitive), or more than one such header;
//     MHD does not implement other codings and would treat the body as unframed.
//
// Host allowlist (a DNS-rebinding defence for loopback APIs): with it on, a request is answered only when its
// Host header names a numeric loopback address (127.0.0.0/8, [::1]) or "localhost" (case-insensitive),
// with the server's port; "Host: localhost" without a port only on port 80. Otherwise 421.
#ifndef URLGUARD_HTTP_FRAMING_H_
#define URLGUARD_HTTP_FRAMING_H_

#include <string_view>
#include <utility>
#include <vector>

namespace urlguard {

enum class FramingVerdict {
  kOk,
  kDuplicateContentLength,
  kBadContentLength,
  kContentLengthWithTransferEncoding,
  kBadTransferEncoding,
};

// Checks the framing headers of a request head (name/value pairs as received). Pure.
FramingVerdict CheckFraming(const std::vector<std::pair<std::string_view, std::string_view>>& headers);

// A short reason for a verdict other than kOk (for the 400 body).
const char* FramingVerdictText(FramingVerdict verdict);

// True when `host_header` names a loopback host with `port` (spec above). Pure.
bool IsAllowedLoopbackHost(std::string_view host_header, int port);

}  // namespace urlguard

#endif  // URLGUARD_HTTP_FRAMING_H_
