// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// What a feed value may be (contracts in feed_values.h).
#include "feeds/feed_values.h"

#include <algorithm>

#include "core/ascii.h"
#include "feeds/feeds.h"

namespace urlguard {

// Returns why `value` cannot be an entry, or an empty string when it can. Canonicalization is the list
// builder's job; this only rejects what is certainly not a URL, domain, address or range.
std::string CheckFeedValue(std::string_view value) {
  if (value.empty()) return "empty value";
  if (value.size() > kMaxFeedValueBytes) {
    return "value " + QuoteBytes(value) + " is longer than " + std::to_string(kMaxFeedValueBytes) + " bytes";
  }
  for (char ch : value) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f)
      return "value " + QuoteBytes(value) + " contains whitespace or a control character";
  }
  // A bare word would become a top-level-domain entry ("com" blocks a whole TLD): never take one.
  if (value.find_first_of(".:") == std::string_view::npos) {
    return QuoteBytes(value) + " is not a URL, domain or IP address (no '.' or ':')";
  }
  return {};
}

namespace {

bool IsIpv4(std::string_view s) {
  int parts = 0;
  size_t i = 0;
  while (true) {
    size_t digits = 0;
    while (i < s.size() && IsAsciiDigit(s[i]) && digits < 4) {
      ++i;
      ++digits;
    }
    if (digits == 0 || digits > 3) return false;
    ++parts;
    if (i == s.size()) return parts == 4;
    if (s[i] != '.' || parts == 4) return false;
    ++i;
  }
}

// An IPv6 address as hosts files write it, with an optional zone ("fe80::1%lo0").
bool IsIpv6(std::string_view s) {
  size_t zone = s.find('%');
  if (zone != std::string_view::npos) s = s.substr(0, zone);
  if (s.size() < 2 || s.find(':') == std::string_view::npos) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAsciiHexDigit(c) || c == ':' || c == '.'; });
}

}  // namespace

// The address column of a hosts file: an IPv4 or IPv6 address, or the "0" shorthand some lists use.
bool IsHostsAddress(std::string_view s) { return s == "0" || IsIpv4(s) || IsIpv6(s); }

// Letters, digits, '-', '_', '.', and non-ASCII bytes (an IDN written in UTF-8).
bool IsHostNameChars(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '-' || c == '_' || c == '.' ||
           static_cast<unsigned char>(c) >= 0x80;
  });
}

bool IsCidr(std::string_view s) {
  return s.find('/') != std::string_view::npos && std::all_of(s.begin(), s.end(), [](char c) {
           return IsAsciiHexDigit(c) || c == '.' || c == ':' || c == '/';
         });
}

// Names that hosts files map for the machine itself, not to block anything.
bool IsSkippedHostName(std::string_view name) {
  // Dotless: a machine name, never a site. Covers localhost, localhost4, localhost6, broadcasthost, local.
  if (name.find('.') == std::string_view::npos) return true;
  static constexpr std::string_view kDottedLocalNames[] = {
      "localhost.localdomain",
      "localhost4.localdomain4",
      "localhost6.localdomain6",
  };
  for (std::string_view local : kDottedLocalNames) {
    if (EqualsIgnoreCase(name, local)) return true;
  }
  if (StartsWithIgnoreCase(name, "ip6-")) return true;  // ip6-localhost, ip6-allnodes, ip6-mcastprefix...
  return IsHostsAddress(name);                          // "0.0.0.0 0.0.0.0", "0.0.0.0 192.0.2.1"
}

// A threat type taken from a feed column: short, and only letters, digits, '_', '-', '.'.
bool IsFeedThreatName(std::string_view s) {
  return s.size() <= kMaxFeedThreatBytes && std::all_of(s.begin(), s.end(), [](char c) {
           return IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '_' || c == '-' || c == '.';
         });
}

}  // namespace urlguard
