// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// ASCII character classes and the one case-insensitive comparison of the code base. Locale-independent on
// purpose: feeds, HTTP header names, schemes and hosts are ASCII protocol text, and <cctype> follows the
// C locale of whoever embeds the library. Bytes >= 0x80 are never letters, digits or space here.
#ifndef URLGUARD_CORE_ASCII_H_
#define URLGUARD_CORE_ASCII_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace urlguard {

// Space and tab and the two rarer blanks, without line ends.
constexpr bool IsAsciiBlank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
// Blanks and line ends.
constexpr bool IsAsciiSpace(char c) { return IsAsciiBlank(c) || c == '\r' || c == '\n'; }
constexpr bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsAsciiHexDigit(char c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// The value of a hex digit (either case), or -1 when `c` is not one.
constexpr int AsciiHexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
constexpr bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr char AsciiToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// `s` with ASCII letters lowered.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiToLower(c);
  return out;
}

// `s` without leading and trailing IsAsciiSpace characters.
constexpr std::string_view TrimAsciiSpace(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

constexpr bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
constexpr bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// True when `a` and `b` are equal ignoring ASCII case ("ETag" == "etag"; "É" != "é").
constexpr bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiToLower(a[i]) != AsciiToLower(b[i])) return false;
  }
  return true;
}

constexpr bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

// True when `needle` occurs in `haystack` ignoring ASCII case.
constexpr bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    if (EqualsIgnoreCase(haystack.substr(i, needle.size()), needle)) return true;
  }
  return false;
}

// Splits off the next run of non-blank characters of `*rest` (blank = space, tab, \v, \f).
inline std::string_view NextAsciiToken(std::string_view* rest) {
  size_t begin = 0;
  while (begin < rest->size() && IsAsciiBlank((*rest)[begin])) ++begin;
  size_t end = begin;
  while (end < rest->size() && !IsAsciiBlank((*rest)[end])) ++end;
  std::string_view token = rest->substr(begin, end - begin);
  rest->remove_prefix(end);
  return token;
}

// Untrusted bytes made safe to print in a message: in single quotes, bytes outside printable ASCII (and
// '\\' and '\'') as \xNN, at most `max_shown` bytes followed by "...".
inline std::string QuoteBytes(std::string_view s, size_t max_shown = 80) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < max_shown; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '\'') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max_shown) out += "...";
  out += "'";
  return out;
}

}  // namespace urlguard

#endif  // URLGUARD_CORE_ASCII_H_
