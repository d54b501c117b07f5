// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Light validation of values read from threat feeds: what certainly is not a URL, domain, address or
// range, what a hosts file maps for the machine itself, and which threat names a feed column may carry.
// Canonicalization is the list builder's job (url/url_canon.h); these only keep garbage out of it.
#ifndef URLGUARD_FEEDS_FEED_VALUES_H_
#define URLGUARD_FEEDS_FEED_VALUES_H_

#include <string>
#include <string_view>

namespace urlguard {

// Threat names the feed formats imply.
inline constexpr std::string_view kThreatPhishing = "phishing";
inline constexpr std::string_view kThreatMaliciousNetwork = "malicious-network";

// Why `value` cannot be an entry, or an empty string when it can: empty, longer than kMaxFeedValueBytes,
// whitespace or control bytes, or a bare word (it would become a whole-TLD entry).
std::string CheckFeedValue(std::string_view value);

// The address column of a hosts file: an IPv4 or IPv6 address, or the "0" shorthand some lists use.
bool IsHostsAddress(std::string_view s);
// Letters, digits, '-', '_', '.', and non-ASCII bytes (an IDN written in UTF-8).
bool IsHostNameChars(std::string_view s);
// Looks like an address range "ADDRESS/BITS" (hex digits, '.', ':' and one '/').
bool IsCidr(std::string_view s);
// Names that hosts files map for the machine itself (localhost, ip6-allnodes, dotless names, addresses).
bool IsSkippedHostName(std::string_view name);
// A threat type taken from a feed column: at most kMaxFeedThreatBytes of letters, digits, '_', '-', '.'.
bool IsFeedThreatName(std::string_view s);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_VALUES_H_
