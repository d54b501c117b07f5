// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace urlguard {

std::string ListenAddress::ToString(int actual_port) const {
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(actual_port);
}

namespace {

enum class Family { kNone, kV4, kV6 };

// Which family `host` parses as (inet_pton is the numeric parser; it never resolves names).
Family NumericFamily(std::string_view host, in_addr* v4, in6_addr* v6) {
  if (host.empty() || host.size() >= INET6_ADDRSTRLEN) return Family::kNone;
  const std::string h(host);
  if (inet_pton(AF_INET, h.c_str(), v4) == 1) return Family::kV4;
  if (inet_pton(AF_INET6, h.c_str(), v6) == 1) return Family::kV6;
  return Family::kNone;
}

}  // namespace

bool IsNumericLoopbackAddress(std::string_view host) {
  in_addr v4;
  in6_addr v6;
  switch (NumericFamily(host, &v4, &v6)) {
    case Family::kV4:
      return (ntohl(v4.s_addr) >> 24) == 127;
    case Family::kV6:
      return IN6_IS_ADDR_LOOPBACK(&v6);
    case Family::kNone:
      return false;
  }
  return false;
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  if (text.size() > kMaxListenAddressBytes) return Status::InvalidArgument("listen address too long");
  std::string_view host, port_text;
  const bool bracketed = !text.empty() && text[0] == '[';
  if (bracketed) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::InvalidArgument("listen address must be [IPV6]:PORT");
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      return Status::InvalidArgument("listen address must be IPV4:PORT or [IPV6]:PORT");
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (port_text.empty() || port_text.size() > 5) return Status::InvalidArgument("bad port");
  int port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9') return Status::InvalidArgument("bad port");
    port = port * 10 + (c - '0');
  }
  if (port > 65535) return Status::InvalidArgument("port must be 0..65535");
  in_addr v4;
  in6_addr v6;
  const Family family = NumericFamily(host, &v4, &v6);
  if (family == Family::kNone) {
    return Status::InvalidArgument("listen host '" + std::string(host) + "' is not a numeric IP address");
  }
  if ((family == Family::kV6) != bracketed) {
    return Status::InvalidArgument("an IPv6 listen address needs brackets: [IPV6]:PORT");
  }
  ListenAddress out;
  out.host = std::string(host);
  out.port = port;
  out.ipv6 = family == Family::kV6;
  return out;
}

Result<ListenAddress> ParseLoopbackListenAddress(std::string_view text) {
  auto address = ParseListenAddress(text);
  if (!address.ok()) return address.status();
  if (!IsNumericLoopbackAddress(address->host)) {
    return Status::InvalidArgument("refusing to bind '" + address->host +
                                   "': only loopback addresses (127.0.0.0/8, ::1) are allowed");
  }
  return address;
}

}  // namespace urlguard
