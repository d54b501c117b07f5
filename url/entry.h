// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// List entries and their keys. A list entry is text (a URL, a bare domain, an IPv4/IPv6 address or a CIDR
// range); it maps to exactly one layer and one expression string, whose SHA-256 is the key:
//   - an IP address or CIDR range               -> ip layer,     "203.0.113.0/24", "2001:db8::/32"
//     (a URL whose host is an IP and whose path is "/" counts as the address: /32 or /128)
//   - a URL or domain whose canonical path is "/" with no query -> domain layer, "evil.example/"
//   - any other URL                              -> url layer,    "evil.example/login.php?x=1"
// The url-layer expression is the most specific one the URL's own lookup generates (exact path, with the query
// unless it is empty), so a URL always finds its own entry: zero false negatives.
//
// Thread safety: pure functions.
#ifndef URLGUARD_URL_ENTRY_H_
#define URLGUARD_URL_ENTRY_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/layer_kind.h"
#include "url/url_canon.h"
#include "urlguard/status.h"

namespace urlguard {

struct EntryKey {
  LayerKind layer = LayerKind::kDomain;
  std::string expression;  // the string whose SHA-256 is the key
  bool ipv6 = false;       // ip layer only
  int prefix_length = 0;   // ip layer only: 0-32 or 0-128
};

// Maps one entry to its key. kInvalidArgument with the reason for text that is no URL, domain, address or
// range (or a CIDR with host bits set beyond the prefix: "10.0.0.1/8" is refused, not silently widened).
Result<EntryKey> EntryKeyFor(std::string_view entry);

// Parses a strict IPv4 dotted quad or IPv6 address (brackets allowed), optionally with "/len".
// Fills addr (network order; 4 or 16 bytes), *ipv6 and *prefix_length (32/128 when absent). False otherwise.
bool ParseIpOrCidr(std::string_view text, uint8_t addr[16], bool* ipv6, int* prefix_length);

// Writes the ip-layer expression for `addr` masked to `prefix_length` into buf ("1.2.3.0/24",
// "2001:db8::/32"). Returns its length. buf must hold kMaxIpExpressionBytes. Allocation-free.
constexpr size_t kMaxIpExpressionBytes = 64;
size_t IpPrefixExpression(const uint8_t* addr, bool ipv6, int prefix_length, char* buf);

}  // namespace urlguard

#endif  // URLGUARD_URL_ENTRY_H_
