// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The one parser for "--listen HOST:PORT" values, shared by urlguard-server and urlguardd, and the one
// numeric loopback check. Both are pure functions on untrusted text.
//
// Spec (this project's contract, see docs/verify-server.md):
//   listen  = ipv4 ":" port / "[" ipv6 "]" ":" port
//   ipv4    = dotted quad as inet_pton(AF_INET) accepts it (exactly four decimal parts)
//   ipv6    = as inet_pton(AF_INET6) accepts it, no zone ("%eth0") and no brackets inside
//   port    = 1*5DIGIT, 0..65535 (0: the system picks one)
// Host NAMES are refused, including "localhost" and "127.attacker.invalid": a name would be resolved by DNS
// at bind time, and a loopback-looking name can resolve anywhere.
#ifndef URLGUARD_HTTP_LISTEN_ADDRESS_H_
#define URLGUARD_HTTP_LISTEN_ADDRESS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "urlguard/status.h"

namespace urlguard {

// Longest "--listen" value looked at ("[" + 45-byte IPv6 text + "]:" + 5 digits fits easily).
constexpr size_t kMaxListenAddressBytes = 64;

struct ListenAddress {
  std::string host;  // numeric, without brackets: "127.0.0.1", "::1"
  int port = 0;      // 0..65535
  bool ipv6 = false;

  // "127.0.0.1:8080" or "[::1]:8080" (with `port`, which may differ from the parsed one after a bind).
  std::string ToString(int actual_port) const;
};

// True for a numeric loopback address: IPv4 127.0.0.0/8 or IPv6 "::1" (in any spelling inet_pton accepts,
// e.g. "0:0:0:0:0:0:0:1"). Names (including "localhost"), IPv4-mapped IPv6 and anything with spaces are
// false. Pure; safe on arbitrary bytes.
bool IsNumericLoopbackAddress(std::string_view host);

// Parses a listen address (grammar above). Failures: kInvalidArgument naming the problem (never echoing
// more than kMaxListenAddressBytes of input). Pure.
Result<ListenAddress> ParseListenAddress(std::string_view text);

// ParseListenAddress plus IsNumericLoopbackAddress on the host: kInvalidArgument for a non-loopback host.
Result<ListenAddress> ParseLoopbackListenAddress(std::string_view text);

}  // namespace urlguard

#endif  // URLGUARD_HTTP_LISTEN_ADDRESS_H_
