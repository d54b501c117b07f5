// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Who is the client? The address an abuse guard or a log may key on, decided from what the client cannot
// choose: the TCP peer address, and X-Forwarded-For only when that peer is a configured trusted proxy.
//
// Spec (this project's contract, docs/verify-server.md "Abuse guard"):
//   - peer not a trusted proxy: the client is the peer. Every header is ignored.
//   - peer a trusted proxy: X-Forwarded-For (all such headers, joined in order with ',') is read from the
//     RIGHT; entries that are themselves trusted proxies are skipped; the first other entry is the client.
//     A client can prepend anything to the header, but the rightmost entries were appended by the proxies.
//     When that entry is not a numeric IP address, or there is no header, the client is the peer (the proxy
//     misbehaves; the guard then counts the proxy, never a client-chosen string); when every entry is a
//     trusted proxy, the leftmost of them.
//   - the guard key of an IPv4 address is the address; of an IPv6 address its /64 prefix (one customer
//     typically holds a whole /64, so rotating through it must not buy fresh budgets); an IPv4-mapped IPv6
//     address (::ffff:a.b.c.d) is its IPv4 address.
#ifndef URLGUARD_HTTP_CLIENT_ADDRESS_H_
#define URLGUARD_HTTP_CLIENT_ADDRESS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// Most X-Forwarded-For entries looked at (from the right) and most bytes of the joined headers read.
constexpr size_t kMaxForwardedForEntries = 32;
constexpr size_t kMaxForwardedForBytes = 4096;
// Most trusted proxies a server may be configured with.
constexpr size_t kMaxTrustedProxies = 256;

// A numeric IP address in canonical form: 4 or 16 bytes.
struct IpAddress {
  bool v6 = false;
  unsigned char bytes[16] = {};
  bool operator==(const IpAddress& other) const;
};

// Parses a numeric IPv4 or IPv6 address (inet_pton; no names, no brackets, no port). IPv4-mapped IPv6 is
// returned as IPv4. nullopt when not an address. Pure.
std::optional<IpAddress> ParseIpAddress(std::string_view text);

// The set of trusted proxy addresses (exact addresses; IPv4-mapped spellings match their IPv4 form).
class TrustedProxies {
 public:
  TrustedProxies() = default;
  // kInvalidArgument when an entry is not a numeric address or there are more than kMaxTrustedProxies.
  static Result<TrustedProxies> Parse(const std::vector<std::string>& addresses);

  bool Contains(const IpAddress& address) const;
  bool empty() const { return proxies_.empty(); }

 private:
  std::vector<IpAddress> proxies_;
};

// The client address of a request from `peer` (numeric text as the server saw it) carrying the given
// X-Forwarded-For header values, per the spec above. Returns the peer itself (parsed) when it does not
// parse as an address, which a real server never produces. Pure.
IpAddress ResolveClientAddress(std::string_view peer, const std::vector<std::string_view>& forwarded_for,
                               const TrustedProxies& trusted);

// The abuse-guard key: "4:" + 4 address bytes, or "6:" + the first 8 bytes (/64). Pure.
std::string GuardKeyOf(const IpAddress& address);

// Text form of an address ("127.0.0.1", "2001:db8::1").
std::string IpAddressToString(const IpAddress& address);

}  // namespace urlguard

#endif  // URLGUARD_HTTP_CLIENT_ADDRESS_H_
