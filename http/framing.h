// SPDX-License-Identifier: Apache-2.0
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

#include <cstddef>
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

// ---- NUL bytes in the head ---------------------------------------------------------------------------------
//
// libmicrohttpd 0.9.75 parses a request head in place: it overwrites the separators it consumes with NULs
// (the space after the method and before the version, each ':' after a header name, every CR and LF) and
// hands out C strings into the head. A NUL the CLIENT sent therefore ends a string early and hides what
// follows: "GET /status\0junk HTTP/1.1" reaches a handler as "/status". HeadBytesAreAccountedFor decides,
// from the head as MHD left it and the strings it parsed, whether every byte of the head is either inside a
// parsed string or exactly one of the separators MHD overwrote:
//
//   request line   METHOD  NUL SP*  TARGET  NUL  VERSION
//   line end       1 or 2 NULs (LF, or CR LF)
//   header line    NAME  NUL (SP / HTAB)*  VALUE          (the value keeps its trailing whitespace)
//   head end       the last line end, then the empty line: 2 to 4 NULs
//
// The target's length is the one strlen saw before MHD split off the query and decoded it (MHD does both in
// place, after its URI log callback). Anything else is false: a client NUL in any string or separator (which
// makes a gap longer or puts a byte other than these in it), strings out of order or outside the head (MHD
// copies an obs-fold continuation elsewhere: such heads are refused, as RFC 9112 5.2 allows). The one client
// NUL that is indistinguishable is one directly before a bare-LF line end; it hides no byte.
//
// Relies on MHD 0.9.75's in-place parsing (Debian 12); http/http_server_test.cc pins it with raw requests.

// A string MHD parsed out of the head: its offset from the head's first byte and its length.
struct HeadSpan {
  size_t offset = 0;
  size_t length = 0;
};

struct ParsedHead {
  HeadSpan method, target, version;
  std::vector<std::pair<HeadSpan, HeadSpan>> headers;  // name, value; in the order received
};

// True when every byte of `head` (the request line through the empty line) is accounted for by `parsed` and
// the separator grammar above. Pure; safe on arbitrary bytes and spans.
bool HeadBytesAreAccountedFor(std::string_view head, const ParsedHead& parsed);

}  // namespace urlguard

#endif  // URLGUARD_HTTP_FRAMING_H_
