// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// URL canonicalization (Safe Browsing v4 "URLs and Hashing"; v5 for IPv6 hosts) and lookup expressions.
//
// Why it is written this way:
// - Every URL a lookup sees goes through here, and a whole lookup is meant to cost well under 1 us. An
//   input that is already canonical (97% of the bench's browsing URLs) takes the fast path ("fast path"
//   below: one 16-byte-at-a-time scan, then copies); every other input is a handful of linear passes over
//   a stack copy, with the outputs written straight into the caller's strings (whose capacity is reused).
//   MakeExpressions copies the URL once and points every expression into that copy. bench/canon_bench
//   measures both against the full algorithm: about 1 200 instructions per browsing URL for Canonicalize
//   (a third of them the 1% of IDN hosts, through libidn2) and 680 more for the expressions and their
//   XXH3 keys; hostile 8 KiB inputs cost 10-40 us.
// - The spec's "repeatedly percent-unescape until nothing changes" costs O(n) per round and up to n/2
//   rounds, i.e. quadratic on hostile input. UnescapeInPlace() computes the same fixed point in one pass
//   (see the proof sketch there), so every input costs O(size), and it still reports the round count so
//   that inputs needing more than kMaxUnescapeRounds are refused exactly as the reference clients do.
// - The parsing follows the v4 reference client (google/safebrowsing urls.go) where it is defined:
//   the whole URL is unescaped before it is split, so escaped delimiters count as delimiters and an
//   escaped scheme works. Where that client departs from what browsers fetch, browsers win, because a
//   browser's spelling is what must match the published key: backslashes before the query are '/',
//   a trailing "/.." leaves a trailing '/', leading/trailing C0 controls are stripped.
// - Every step that could break idempotence (canonicalize(Spec()) == Spec()) is guarded: the host can
//   never keep a ':', '@', '/', '?' or '\', and libidn2 output is only taken when it is plain
//   [a-z0-9._-] (UTS #46 maps e.g. U+FF0F to '/' and U+FF05 to '%', which would re-parse differently).
#include "url/url_canon.h"

#include <arpa/inet.h>
#include <idn2.h>

#include <algorithm>
#include <cassert>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace urlguard {
namespace {

// Labels longer than this (bytes) are not given to libidn2 and keep their bytes (percent-escaped).
// A DNS label is at most 63 bytes of punycode, so a longer Unicode label cannot be a real host; the cap
// bounds libidn2's work (punycode encoding is quadratic in the label length).
constexpr size_t kMaxIdnLabelBytes = 255;
// The longest IPv6 text inet_pton could accept ("ffff:...:255.255.255.255" is 45 bytes).
constexpr size_t kMaxIpv6TextBytes = 63;

constexpr char kUpperHex[] = "0123456789ABCDEF";

constexpr bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
constexpr bool IsLower(unsigned char c) { return c >= 'a' && c <= 'z'; }
constexpr bool IsUpper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool IsAlpha(unsigned char c) { return IsLower(c) || IsUpper(c); }
constexpr bool IsHexDigit(unsigned char c) { return IsDigit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
constexpr unsigned HexValue(unsigned char c) { return IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }
constexpr bool IsSchemeChar(unsigned char c) {
  return IsAlpha(c) || IsDigit(c) || c == '+' || c == '-' || c == '.';
}

// Spec: "percent-escape all characters that are <= ASCII 32, >= 127, '#', or '%'".
constexpr bool NeedsEscape(unsigned char c) { return c <= 0x20 || c >= 0x7F || c == '#' || c == '%'; }

struct EscapeTable {
  bool escape[256];
  constexpr EscapeTable() : escape() {
    for (int c = 0; c < 256; ++c) escape[c] = NeedsEscape(static_cast<unsigned char>(c));
  }
};
constexpr EscapeTable kEscapeTable;

// Writes the escaped form of s[0..n) at d (room for 3*n bytes) and returns the new end.
char* EscapeTo(char* d, const char* s, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (!kEscapeTable.escape[c]) {
      *d++ = static_cast<char>(c);
    } else {
      d[0] = '%';
      d[1] = kUpperHex[c >> 4];
      d[2] = kUpperHex[c & 15];
      d += 3;
    }
  }
  return d;
}

// *out = escaped s[0..n), reusing out's capacity.
void AssignEscaped(const char* s, size_t n, std::string* out) {
  out->resize(3 * n);
  char* base = out->data();
  char* end = EscapeTo(base, s, n);
  out->resize(static_cast<size_t>(end - base));
}

// Spec: "repeatedly percent-unescape the URL until it has no more percent-escapes."
// Unescapes buf[0..*n) in place (n <= kMaxUrlBytes) and sets *n to the new length. Returns how many
// rounds of a single-pass unescape would have changed the string (0: no escapes), or -1 as soon as that
// exceeds kMaxUnescapeRounds.
//
// Why one pass gives the same result as repeated rounds: an escape "%HH" cannot overlap another ('%' is
// not a hex digit), so decoding one never destroys another, and the rewriting is confluent: any order
// of decoding reaches the same fixed point. A stack machine that pushes each input byte and decodes the
// top three bytes while they form "%HH" never leaves an escape behind (a new one can only end at the
// top), so it reaches that fixed point. A round-based pass decodes an escape in round 1 + the latest
// round in which one of its three bytes appeared (0 for input bytes); the depth stack tracks exactly
// that. The stack never outgrows the bytes read, so it lives in the same buffer.
int UnescapeInPlace(char* buf, size_t* n) {
  const void* pct = std::memchr(buf, '%', *n);
  if (pct == nullptr) return 0;  // the common case: no escapes at all
  // Bytes before the first '%' can never be part of an escape.
  const size_t start = static_cast<size_t>(static_cast<const char*>(pct) - buf);
  uint16_t depth[kMaxUrlBytes];  // depth[k - start] is the round that produced buf[k]
  size_t top = start;
  int max_depth = 0;
  for (size_t i = start; i < *n; ++i) {
    buf[top] = buf[i];
    depth[top - start] = 0;
    ++top;
    while (top - start >= 3 && buf[top - 3] == '%' && IsHexDigit(static_cast<unsigned char>(buf[top - 2])) &&
           IsHexDigit(static_cast<unsigned char>(buf[top - 1]))) {
      const size_t k = top - 3 - start;
      const int d = 1 + std::max({depth[k], depth[k + 1], depth[k + 2]});
      if (d > kMaxUnescapeRounds) return -1;
      buf[top - 3] = static_cast<char>(HexValue(static_cast<unsigned char>(buf[top - 2])) << 4 |
                                       HexValue(static_cast<unsigned char>(buf[top - 1])));
      depth[k] = static_cast<uint16_t>(d);
      top -= 2;
      max_depth = std::max(max_depth, d);
    }
  }
  *n = top;
  return max_depth;
}

Status UnsettledError() {
  return Status::InvalidArgument(
      "url: percent-unescaping did not settle within kMaxUnescapeRounds (1024) rounds");
}

// ---- WHATWG URL Standard: the browser's reading of special URLs -------------------------------------
//
// Browsers parse http, https, ws, wss and ftp URLs with the WHATWG URL Standard
// (https://url.spec.whatwg.org/), which is more lenient about the authority than the Safe Browsing reference
// clients: any number of '/' and '\' may follow "scheme:", '\' ends the authority, and the host is split off
// before it is percent-decoded (so "%2F" or "%40" in userinfo is not a delimiter). A listed host written that
// way is still the host a browser contacts, so for these schemes the host is found exactly as the standard
// finds it, and only then handed to the Safe Browsing host rules (which agree with the standard on every
// host it accepts). When the standard rejects the URL (browsers do not navigate to it), the Safe Browsing
// reading is used unchanged, so the shared vectors keep their answers.

// Spec (special scheme): "http", "https", "ws", "wss", "ftp" (and "file", whose host is not contacted
// over the network and is not handled here). Compared ASCII case-insensitively: the scheme state
// lower-cases it.
bool IsSpecialScheme(const char* s, size_t n) {
  char lower[5];
  if (n < 2 || n > 5) return false;
  for (size_t i = 0; i < n; ++i) {
    lower[i] = static_cast<char>(s[i] | (IsAlpha(static_cast<unsigned char>(s[i])) ? 0x20 : 0));
  }
  const std::string_view v(lower, n);
  return v == "http" || v == "https" || v == "ws" || v == "wss" || v == "ftp";
}

// Spec: "A forbidden domain code point is a forbidden host code point, a C0 control, U+0025 (%), or
// U+007F DELETE", where "a forbidden host code point is U+0000 NULL, U+0009 TAB, U+000A LF, U+000D CR,
// U+0020 SPACE, U+0023 (#), U+002F (/), U+003A (:), U+003C (<), U+003E (>), U+003F (?), U+0040 (@),
// U+005B ([), U+005C (\), U+005D (]), U+005E (^), or U+007C (|)".
constexpr bool IsForbiddenDomainByte(unsigned char c) {
  return c <= 0x20 || c == 0x7F || c == '#' || c == '%' || c == '/' || c == ':' || c == '<' || c == '>' ||
         c == '?' || c == '@' || c == '[' || c == '\\' || c == ']' || c == '^' || c == '|';
}

// Spec: "percent-decode": "%" followed by two ASCII hex digits is the byte they name; any other byte,
// a lone '%' included, is itself. Writes at most n bytes to d (which may equal s) and returns the count.
size_t PercentDecodeOnce(const char* s, size_t n, char* d) {
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] == '%' && i + 2 < n && IsHexDigit(static_cast<unsigned char>(s[i + 1])) &&
        IsHexDigit(static_cast<unsigned char>(s[i + 2]))) {
      d[m++] = static_cast<char>(HexValue(static_cast<unsigned char>(s[i + 1])) << 4 |
                                 HexValue(static_cast<unsigned char>(s[i + 2])));
      i += 2;
    } else {
      d[m++] = s[i];
    }
  }
  return m;
}

// Where the standard puts the pieces of a special URL in work[0..n) (tabs and newlines removed, leading
// and trailing C0 controls and spaces stripped, fragment cut).
struct BrowserSplit {
  size_t scheme_end = 0;  // work[0..scheme_end) is the scheme, work[scheme_end] is ':'
  size_t host_begin = 0;  // work[host_begin..host_end) is the host as written (not yet decoded)
  size_t host_end = 0;
  size_t rest_begin = 0;  // the path (and query) start here: '/', '\', '?' or the end
};

// True when work[0..n) is a URL with a special scheme that the standard parses into a host; fills *split.
// False (the caller falls back to the Safe Browsing reading) when there is no special scheme, or when a
// browser would refuse the URL: no host, a bad port, a bad bracketed host, or a forbidden domain code
// point in the percent-decoded host. Does not write to work.
bool SplitAsBrowser(const char* work, size_t n, BrowserSplit* split) {
  // Spec (scheme start state): "If c is an ASCII alpha, append c, lowercased, to buffer, and set state
  // to scheme state." (scheme state): "If c is an ASCII alphanumeric, U+002B (+), U+002D (-), or U+002E
  // (.), append c, lowercased, to buffer. Otherwise, if c is U+003A (:), then: ... set url's scheme to
  // buffer."
  if (n == 0 || !IsAlpha(static_cast<unsigned char>(work[0]))) return false;
  size_t i = 1;
  while (i < n && IsSchemeChar(static_cast<unsigned char>(work[i]))) ++i;
  if (i >= n || work[i] != ':' || !IsSpecialScheme(work, i)) return false;
  split->scheme_end = i;
  ++i;
  // Spec (special authority slashes state): "If c is U+002F (/) and remaining starts with U+002F (/),
  // then set state to special authority ignore slashes state ... Otherwise, special-scheme-missing-
  // following-solidus validation error, set state to special authority ignore slashes state."
  // (special authority ignore slashes state): "If c is neither U+002F (/) nor U+005C (\), then set state
  // to authority state and decrease pointer by 1. Otherwise, special-scheme-missing-following-solidus
  // validation error." So any run of '/' and '\', including none, comes before the authority.
  while (i < n && (work[i] == '/' || work[i] == '\\')) ++i;
  const size_t authority = i;
  // Spec (authority state): "Otherwise, if one of the following is true: c is the EOF code point,
  // U+002F (/), U+003F (?), or U+0023 (#); url is special and c is U+005C (\) then: If atSignSeen is
  // true and buffer is the empty string, host-missing validation error, return failure." Every '@'
  // before that point moves the buffer into the userinfo, so the host starts after the last one.
  size_t end = authority;
  size_t host_begin = authority;
  bool at_sign_seen = false;
  for (; end < n && work[end] != '/' && work[end] != '\\' && work[end] != '?'; ++end) {
    if (work[end] == '@') {
      at_sign_seen = true;
      host_begin = end + 1;
    }
  }
  if (at_sign_seen && host_begin == end) return false;
  // Spec (host state): "Otherwise, if c is U+003A (:) and insideBrackets is false, then: If buffer is
  // the empty string, host-missing validation error, return failure. ... Set state to port state."
  // "If c is U+005B ([), then set insideBrackets to true. If c is U+005D (]), then set insideBrackets to
  // false." And: "if url is special and buffer is the empty string, host-missing validation error,
  // return failure."
  size_t host_end = host_begin;
  bool inside_brackets = false;
  for (; host_end < end; ++host_end) {
    const char c = work[host_end];
    if (c == ':' && !inside_brackets) break;
    if (c == '[') inside_brackets = true;
    if (c == ']') inside_brackets = false;
  }
  if (host_end == host_begin) return false;
  // Spec (port state): "If c is an ASCII digit, append c to buffer. Otherwise, if one of the following
  // is true: c is the EOF code point, U+002F (/), U+003F (?), or U+0023 (#); url is special and c is
  // U+005C (\) ...: If buffer is not the empty string: Let port be the mathematical integer value that
  // is represented by buffer in radix-10 using ASCII digits for digits with values 0 through 9. If port
  // is greater than 2^16 - 1, port-out-of-range validation error, return failure. ... Otherwise,
  // port-invalid validation error, return failure."
  uint32_t port = 0;
  for (size_t k = host_end + 1; k < end; ++k) {
    if (!IsDigit(static_cast<unsigned char>(work[k]))) return false;
    port = std::min<uint32_t>(port * 10 + static_cast<uint32_t>(work[k] - '0'), 65536);
  }
  if (port > 65535) return false;
  // Spec (host parser): "If input starts with U+005B ([), then: If input does not end with U+005D (]),
  // IPv6-unclosed validation error, return failure. Return the result of IPv6 parsing input with its
  // leading U+005B ([) and trailing U+005D (]) removed." (checked by the caller)
  if (work[host_begin] == '[') {
    if (work[host_end - 1] != ']') return false;
  } else {
    // Spec: "Let domain be the result of running UTF-8 decode without BOM on the percent-decoding of
    // input." ... "If asciiDomain contains a forbidden domain code point, domain-invalid-code-point
    // validation error, return failure." Domain to ASCII passes ASCII through (lower-cased), so an ASCII
    // forbidden code point in the decoded host is one in asciiDomain.
    for (size_t k = host_begin; k < host_end; ++k) {
      unsigned char c = static_cast<unsigned char>(work[k]);
      if (c == '%' && k + 2 < host_end && IsHexDigit(static_cast<unsigned char>(work[k + 1])) &&
          IsHexDigit(static_cast<unsigned char>(work[k + 2]))) {
        c = static_cast<unsigned char>(HexValue(static_cast<unsigned char>(work[k + 1])) << 4 |
                                       HexValue(static_cast<unsigned char>(work[k + 2])));
        k += 2;
      }
      if (c < 0x80 && IsForbiddenDomainByte(c)) return false;
    }
  }
  split->host_begin = host_begin;
  split->host_end = host_end;
  split->rest_begin = end;
  return true;
}

// Spec (IPv4 number parser): "If input is the empty string, then return failure. Let validationError
// be false. Let R be 10. If input contains at least two code points and the first two code points are
// either "0X" or "0x", then: Set validationError to true. Remove the first two code points from input.
// Set R to 16. Otherwise, if input contains at least two code points and the first code point is U+0030
// (0), then: Set validationError to true. Remove the first code point from input. Set R to 8. If input is
// the empty string, then return (0, true). If input contains a code point that is not a radix-R digit,
// then return failure. Let output be the mathematical integer value that is represented by input in
// radix-R notation." Values are saturated at 2^32 (anything that large fails the range checks anyway).
bool WhatwgIpv4Number(std::string_view s, uint64_t* value) {
  if (s.empty()) return false;
  unsigned radix = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    radix = 16;
  } else if (s.size() >= 2 && s[0] == '0') {
    s.remove_prefix(1);
    radix = 8;
  }
  uint64_t v = 0;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (!(radix == 16 ? IsHexDigit(c) : (IsDigit(c) && static_cast<unsigned>(c - '0') < radix))) return false;
    v = std::min<uint64_t>(v * radix + HexValue(c), uint64_t{1} << 32);
  }
  *value = v;
  return true;
}

// Spec (ends in a number checker): "Let parts be the result of strictly splitting input on U+002E (.).
// If the last item in parts is the empty string, then: If parts's size is 1, return false. Remove the
// last item from parts. Let last be the last item in parts. If last is non-empty and contains only ASCII
// digits, then return true. If parsing last as an IPv4 number does not return failure, then return
// true. Return false."
bool EndsInANumber(std::string_view host) {
  if (!host.empty() && host.back() == '.') {
    if (host.size() == 1) return false;
    host.remove_suffix(1);
  }
  const size_t dot = host.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? host : host.substr(dot + 1);
  if (!last.empty() && std::all_of(last.begin(), last.end(), [](char c) { return IsDigit(c); })) return true;
  uint64_t unused;
  return WhatwgIpv4Number(last, &unused);
}

// Spec (IPv4 parser), for a host that ends in a number: "Let parts be the result of strictly splitting
// input on U+002E (.). If the last item in parts is the empty string, then: IPv4-empty-part validation
// error. If parts's size is greater than 1, then remove the last item from parts. If parts's size is
// greater than 4, IPv4-too-many-parts validation error, return failure. Let numbers be an empty list.
// For each part of parts: Let result be the result of parsing part. If result is failure, IPv4-non-
// numeric-part validation error, return failure. ... If any but the last item in numbers is greater
// than 255, then return failure. If the last item in numbers is greater than or equal to 256^(5 −
// numbers's size), then return failure. Let ipv4 be the last item in numbers. Remove the last item from
// numbers. Let counter be 0. For each n of numbers: Increment ipv4 by n × 256^(3 − counter). Increment
// counter by 1. Return ipv4." True and out set on success.
bool WhatwgIpv4(std::string_view host, uint8_t out[4]) {
  if (!host.empty() && host.back() == '.' && host.size() > 1) host.remove_suffix(1);
  uint64_t numbers[4];
  size_t count = 0;
  size_t start = 0;
  for (;;) {
    size_t dot = host.find('.', start);
    if (dot == std::string_view::npos) dot = host.size();
    if (count == 4) return false;
    if (!WhatwgIpv4Number(host.substr(start, dot - start), &numbers[count])) return false;
    ++count;
    if (dot == host.size()) break;
    start = dot + 1;
  }
  for (size_t k = 0; k + 1 < count; ++k) {
    if (numbers[k] > 255) return false;
  }
  if (numbers[count - 1] >= (uint64_t{1} << (8 * (5 - count)))) return false;
  uint64_t v = numbers[count - 1];
  for (size_t k = 0; k + 1 < count; ++k) v += numbers[k] << (8 * (3 - k));
  for (int b = 0; b < 4; ++b) out[b] = static_cast<uint8_t>(v >> (8 * (3 - b)));
  return true;
}

// ---- IPv4 ------------------------------------------------------------------------------------------

// Firefox IsOctal / IsDecimal / IsHex + PR_sscanf: parses one IPv4 part, keeping the low 32 bits.
bool ParseIpv4Part(std::string_view s, bool allow_octal, uint32_t* value) {
  if (s.empty()) return false;
  unsigned base = 10;
  size_t i = 0;
  bool all_digits = true, all_octal = s.size() >= 2 && s[0] == '0';
  for (unsigned char c : s) {
    all_digits = all_digits && IsDigit(c);
    all_octal = all_octal && c >= '0' && c <= '7';
  }
  if (allow_octal && all_octal) {
    base = 8;
    i = 1;
  } else if (all_digits) {
    base = 10;
  } else if (s.size() >= 3 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    for (size_t k = 2; k < s.size(); ++k) {
      if (!IsHexDigit(static_cast<unsigned char>(s[k]))) return false;
    }
    base = 16;
    i = 2;
  } else {
    return false;
  }
  uint32_t v = 0;  // unsigned arithmetic wraps: the low 32 bits of the full value ("0x10000000b" -> 11)
  for (; i < s.size(); ++i) v = v * base + HexValue(static_cast<unsigned char>(s[i]));
  *value = v;
  return true;
}

// Writes v as 1-3 decimal digits.
char* WriteByte(char* d, unsigned v) {
  if (v >= 100) *d++ = static_cast<char>('0' + v / 100);
  if (v >= 10) *d++ = static_cast<char>('0' + v / 10 % 10);
  *d++ = static_cast<char>('0' + v % 10);
  return d;
}

void SetIpv4(const uint8_t v4[4], CanonicalUrl* out) {
  char text[16];
  char* d = text;
  for (int i = 0; i < 4; ++i) {
    if (i > 0) *d++ = '.';
    d = WriteByte(d, v4[i]);
  }
  out->host.assign(text, static_cast<size_t>(d - text));
  out->host_kind = HostKind::kIpv4;
  std::memset(out->ip, 0, sizeof(out->ip));
  std::memcpy(out->ip, v4, 4);
}

// ---- IPv6 ------------------------------------------------------------------------------------------

// h[0..n) is "[...]" (already unescaped).
// Spec (v5): "If the hostname can be parsed as a bracketed IPv6 address, normalize it per RFC 5952;
// IPv4-mapped and NAT64 (64:ff9b::/96) addresses become the IPv4 address."
Status CanonicalizeIpv6(const char* h, size_t n, CanonicalUrl* out) {
  if (n < 2 || h[n - 1] != ']') return Status::InvalidArgument("url: IPv6 host without a closing ']'");
  const size_t len = n - 2;
  if (len == 0 || len > kMaxIpv6TextBytes || std::memchr(h + 1, '\0', len) != nullptr) {
    return Status::InvalidArgument("url: invalid IPv6 address in host");
  }
  char text[kMaxIpv6TextBytes + 1];
  std::memcpy(text, h + 1, len);
  text[len] = '\0';
  uint8_t a[16];
  if (inet_pton(AF_INET6, text, a) != 1) return Status::InvalidArgument("url: invalid IPv6 address in host");
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(a, kMapped, 12) == 0 || std::memcmp(a, kNat64, 12) == 0) {
    SetIpv4(a + 12, out);
    return Status::Ok();
  }
  // glibc's inet_ntop follows RFC 5952: lower-case, no leading zeros, the first longest run of two or
  // more zero groups compressed, and "::a.b.c.d" for addresses whose first 96 bits are zero.
  char printed[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, a, printed, sizeof(printed)) == nullptr) {
    return Status::Internal("url: inet_ntop failed");
  }
  out->host.assign(1, '[');
  out->host.append(printed);
  out->host.push_back(']');
  out->host_kind = HostKind::kIpv6;
  std::memcpy(out->ip, a, 16);
  return Status::Ok();
}

// ---- IDN -------------------------------------------------------------------------------------------

// Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool IsValidUtf8(const unsigned char* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    const unsigned c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return false;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

// Only output made of these bytes is taken from libidn2: it re-parses to itself (no delimiter, no '%',
// no upper case). Anything else keeps the label's original bytes.
bool IsPlainIdnOutput(const uint8_t* s) {
  for (; *s != 0; ++s) {
    const unsigned char c = *s;
    if (!(IsLower(c) || IsDigit(c) || c == '-' || c == '.' || c == '_')) return false;
  }
  return true;
}

// NUL-terminated UTF-8 label -> punycode appended to *out. False when libidn2 refuses it in both modes.
bool AppendIdnLabel(const char* label, std::string* out) {
  // Spec: "If the URL uses an internationalized domain name (IDN), the client should convert the URL to
  // the ASCII Punycode representation." Browsers use UTS #46 non-transitional processing; transitional
  // processing is the fallback because libidn2 applies the stricter IDNA2008 code point rules in
  // non-transitional mode only (it refuses emoji labels there, which browsers accept).
  for (int flags : {IDN2_NONTRANSITIONAL, IDN2_TRANSITIONAL}) {
    uint8_t* result = nullptr;
    const int rc = idn2_lookup_u8(reinterpret_cast<const uint8_t*>(label), &result, flags);
    const bool ok = rc == IDN2_OK && result != nullptr && IsPlainIdnOutput(result);
    if (ok) out->append(reinterpret_cast<const char*>(result));
    idn2_free(result);
    if (ok) return true;
  }
  return false;
}

// h[0..m) is a lower-cased host with no empty labels and at least one byte >= 0x80. Labels that are
// valid UTF-8 become punycode; the others (invalid UTF-8, longer than kMaxIdnLabelBytes, or refused by
// libidn2) keep their bytes, which the final escaping percent-encodes ("\x01\x80.com" -> "%01%80.com").
void ConvertIdnLabels(const char* h, size_t m, std::string* out) {
  out->clear();
  out->reserve(2 * m + 8);
  size_t i = 0;
  for (;;) {
    size_t e = i;
    bool high = false;
    while (e < m && h[e] != '.') high |= static_cast<unsigned char>(h[e++]) >= 0x80;
    const size_t len = e - i;
    bool converted = false;
    if (high && len <= kMaxIdnLabelBytes && IsValidUtf8(reinterpret_cast<const unsigned char*>(h + i), len)) {
      char label[kMaxIdnLabelBytes + 1];
      std::memcpy(label, h + i, len);
      label[len] = '\0';
      converted = AppendIdnLabel(label, out);
    }
    if (!converted) out->append(h + i, len);
    if (e >= m) break;
    out->push_back('.');
    i = e + 1;
  }
}

// Spec: "Remove all leading and trailing dots. Replace consecutive dots with a single dot." Also
// lower-cases ASCII (Spec: "Lowercase the whole string"). In place; returns the new length and sets
// *high when a byte >= 0x80 remains.
size_t CleanHostInPlace(char* h, size_t n, bool* high) {
  size_t m = 0;
  bool any_high = false;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(h[i]);
    if (c == '.') {
      if (m == 0 || h[m - 1] == '.') continue;
    } else if (IsUpper(c)) {
      c = static_cast<unsigned char>(c + 32);
    } else if (c >= 0x80) {
      any_high = true;
    }
    h[m++] = static_cast<char>(c);
  }
  if (m > 0 && h[m - 1] == '.') --m;
  *high = any_high;
  return m;
}

// h[0..n): an unescaped host without userinfo and port. Fills out->host, host_kind, ip.
Status CanonicalizeHostInPlace(char* h, size_t n, CanonicalUrl* out) {
  if (n > 0 && h[0] == '[') return CanonicalizeIpv6(h, n, out);
  bool high = false;
  size_t m = CleanHostInPlace(h, n, &high);
  std::string idn;  // used (and allocated) only for non-ASCII hosts
  if (high) {
    ConvertIdnLabels(h, m, &idn);
    h = idn.data();
    m = CleanHostInPlace(h, idn.size(), &high);  // UTS #46 can map a code point to '.'
  }
  if (m == 0) return Status::InvalidArgument("url: host is empty after removing dots");
  // ".[x" would print as "[x", which re-parses as an (invalid) IPv6 literal.
  if (h[0] == '[') return Status::InvalidArgument("url: host starts with '[' but is not an IPv6 literal");
  // Spec: "If the hostname can be parsed as an IPv4 address, normalize it to 4 dot-separated decimal
  // values. The client should handle any legal IP-address encoding, including octal, hex, and fewer
  // than four components."
  // Browsers use the WHATWG IPv4 parser (quoted at WhatwgIpv4()); it is tried first because it reads a
  // few spellings the Firefox parser does not ("0x" alone is 0: "0x.0x.0x.0x1" is 0.0.0.1). Every other
  // address it accepts, the Firefox parser reads the same way.
  uint8_t v4[4];
  const std::string_view hv(h, m);
  if ((EndsInANumber(hv) && WhatwgIpv4(hv, v4)) || internal::ParseIpv4(hv, v4)) {
    SetIpv4(v4, out);
    return Status::Ok();
  }
  out->host_kind = HostKind::kName;
  std::memset(out->ip, 0, sizeof(out->ip));
  AssignEscaped(h, m, &out->host);
  return Status::Ok();
}

// ---- path ------------------------------------------------------------------------------------------

// p[0..n): the unescaped path (empty or starting with '/'). Writes the canonical, escaped path.
// Spec: "Resolve the sequences /../ and /./ in the path by replacing /./ with /, and removing /../
// along with the preceding path component. Replace runs of consecutive slashes with a single slash."
// A final "." or ".." leaves a trailing '/' ("/a/b/.." -> "/a/"), as browsers resolve it.
void CanonicalizePathInto(const char* p, size_t n, std::string* out) {
  out->resize(3 * n + 1);
  char* base = out->data();
  char* d = base;
  *d++ = '/';
  bool drop_final_slash = false;  // the last segment was a file name not followed by '/'
  size_t i = 0;
  while (i < n) {
    if (p[i] == '/') {
      ++i;
      continue;
    }
    const size_t s = i;
    const void* slash = std::memchr(p + i, '/', n - i);
    i = slash != nullptr ? static_cast<size_t>(static_cast<const char*>(slash) - p) : n;
    const size_t len = i - s;
    if (len == 1 && p[s] == '.') {
      drop_final_slash = false;
    } else if (len == 2 && p[s] == '.' && p[s + 1] == '.') {
      if (d - base > 1) {
        --d;
        while (d[-1] != '/') --d;  // base[0] is '/', so this stops
      }
      drop_final_slash = false;
    } else {
      d = EscapeTo(d, p + s, len);
      *d++ = '/';
      drop_final_slash = i == n;
    }
  }
  if (drop_final_slash) --d;
  out->resize(static_cast<size_t>(d - base));
}

// p[0..n): what follows the authority, already unescaped: empty, or starting with '/' or '?'. Fills
// out->path, has_query and query, and checks the size of the canonical form.
Status FinishPathAndQuery(char* p, size_t n, CanonicalUrl* out) {
  // The query starts at the first '?' and is only escaped (Spec: "do not perform path canonicalization
  // on query parameters"). Before it, '\' is read as '/', as browsers read special URLs.
  const void* qmark = std::memchr(p, '?', n);
  const size_t pre = qmark != nullptr ? static_cast<size_t>(static_cast<const char*>(qmark) - p) : n;
  std::replace(p, p + pre, '\\', '/');
  CanonicalizePathInto(p, pre, &out->path);
  out->has_query = qmark != nullptr;
  if (out->has_query) {
    AssignEscaped(p + pre + 1, n - pre - 1, &out->query);
  } else {
    out->query.clear();
  }
  // Escaping can triple the length. Capping the result too keeps Canonicalize(Spec()) within the input
  // cap (idempotence) and bounds every expression built from it.
  const size_t spec_size = out->scheme.size() + 3 + out->host.size() + out->path.size() +
                           (out->has_query ? 1 + out->query.size() : 0);
  if (spec_size > kMaxUrlBytes) {
    return Status::InvalidArgument("url: canonical form longer than kMaxUrlBytes (8192 bytes)");
  }
  return Status::Ok();
}

// work[0..n) (tabs and newlines removed, trimmed, fragment cut, not unescaped) split as a browser
// splits it (SplitAsBrowser() succeeded). The host is percent-decoded once, as the standard does (a host
// that still held a '%' afterwards was refused by SplitAsBrowser(), so this equals the Safe Browsing
// "unescape until nothing changes"), then goes through the same host rules as every other URL.
Status CanonicalizeBrowserSplit(char* work, size_t n, const BrowserSplit& split, CanonicalUrl* out) {
  out->scheme.assign(work, split.scheme_end);
  for (char& c : out->scheme) c = static_cast<char>(c | (IsAlpha(static_cast<unsigned char>(c)) ? 0x20 : 0));
  char* h = work + split.host_begin;
  size_t hn = split.host_end - split.host_begin;
  if (h[0] == '[') {
    // Spec: "Return the result of IPv6 parsing input with its leading U+005B ([) and trailing U+005D (])
    // removed." The standard does not percent-decode an IPv6 host.
    URLGUARD_RETURN_IF_ERROR(CanonicalizeIpv6(h, hn, out));
  } else {
    hn = PercentDecodeOnce(h, hn, h);
    URLGUARD_RETURN_IF_ERROR(CanonicalizeHostInPlace(h, hn, out));
  }
  // The path and query follow the Safe Browsing rules (unescaped before the '?' is looked for), exactly
  // as for every other URL.
  char* rest = work + split.rest_begin;
  size_t rest_n = n - split.rest_begin;
  if (UnescapeInPlace(rest, &rest_n) < 0) return UnsettledError();
  return FinishPathAndQuery(rest, rest_n, out);
}

// ---- lookup strings ----------------------------------------------------------------------------------

struct PathString {
  std::string_view path;  // a prefix of url.path
  bool with_query;        // followed by '?' + url.query
};

// Spec: "the exact hostname in the URL, and up to 4 hostnames formed by starting with the last 5
// components and successively removing the leading component. The top-level domain can be skipped.
// These additional hostnames should not be checked if the host is an IP address."
size_t HostStrings(const CanonicalUrl& url, std::string_view out[5]) {
  const std::string_view host = url.host;
  out[0] = host;
  if (url.host_kind != HostKind::kName) return 1;
  // The suffix of k components starts after the k-th dot from the end; we want k = 5, 4, 3, 2.
  size_t starts[6] = {};
  size_t dots = 0;
  for (size_t i = host.size(); i > 0 && dots < 5; --i) {
    if (host[i - 1] == '.') starts[++dots] = i;
  }
  size_t count = 1;
  for (size_t k = dots; k >= 2; --k) out[count++] = host.substr(starts[k]);
  return count;
}

// Spec: "the exact path of the URL, including query parameters; the exact path of the URL, without
// query parameters; the 4 paths formed by starting at the root (/) and successively appending path
// components, including a trailing slash."
size_t PathStrings(const CanonicalUrl& url, PathString out[6]) {
  const std::string_view path = url.path;
  size_t count = 0;
  if (url.has_query && !url.query.empty()) out[count++] = {path, true};
  if (path != "/") out[count++] = {path, false};
  out[count++] = {path.substr(0, 1), false};
  // Prefixes "/a/", "/a/b/", "/a/b/c/": the first 1..3 components, each when followed by more path.
  size_t components = 0;
  for (size_t j = 1; j + 1 < path.size() && components < 3; ++j) {
    if (path[j] == '/') {
      ++components;
      out[count++] = {path.substr(0, j + 1), false};
    }
  }
  return count;
}

// ---- fast path ----------------------------------------------------------------------------------------
//
// Most URLs a client sees are already canonical: "https://www.example.com/a/b.html?x=1". For those, every
// rule above is the identity, so checking is enough and the parts are copied out. FastCanonicalize() takes an
// input only when it can show that the full algorithm would return exactly its parts; anything else (escapes,
// upper case, userinfo, ports, dot segments, IPv4 spellings other than dotted decimal, ...) goes the full
// way. internal::CanonicalizeFullPath() runs the full way alone; url_canon_test.cc and the url_canon fuzz
// target check that both agree on every input the fast path takes.
//
// Cost (bench/canon_bench, callgrind): one 16-bytes-at-a-time scan of the whole input finds the first byte
// that needs work and the '?', then the host and the path are checked byte by byte with a class table, and
// the three parts are copied out. The browsing URLs of bench/lookup_bench take this path 97% of the time; the
// rest are IDN hosts (libidn2, tens of microseconds of instructions), escapes and other IP spellings.

// The bytes the fast path stops its scan at: those that rules 1-3 and 7 would strip, remove, unescape or
// escape ('\' is a path separator before the query, so not canonical either), and '#', where the fragment is
// cut.
constexpr bool IsFastStopByte(unsigned char c) {
  return c <= 0x20 || c >= 0x7F || c == '%' || c == '\\' || c == '#';
}

struct FastScan {
  size_t stop;   // the first stop byte, or n
  size_t query;  // the first '?' before `stop`, or `stop`
  // The first k >= kFirstSegmentCheck (past the "//" of "http://" and the host's first byte) before `stop`
  // where b[k - 1] is '/' and b[k] is '/' or '.', or `stop`: where an empty, "." or ".." path segment could
  // begin. A host holds no '/', so one before `query` is in the path; most paths have none.
  size_t segment;
};
constexpr size_t kFirstSegmentCheck = 9;

#if defined(__SSE2__)
// For the 16 bytes at p (prev: the 16 bytes at p - 1): bit k of the result is set when p[k] is a stop byte,
// of *query when p[k] is '?', of *segment when p[k - 1] is '/' and p[k] is '/' or '.'.
inline unsigned Masks16(__m128i v, __m128i prev, unsigned* query, unsigned* segment) {
  // Signed compares: bytes >= 0x80 are negative, so "> 0x20" already excludes them.
  const __m128i printable =
      _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmplt_epi8(v, _mm_set1_epi8(0x7F)));
  const __m128i special = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('%')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
      _mm_cmpeq_epi8(v, _mm_set1_epi8('#')));
  const __m128i slash = _mm_set1_epi8('/');
  const __m128i slash_or_dot = _mm_or_si128(_mm_cmpeq_epi8(v, slash), _mm_cmpeq_epi8(v, _mm_set1_epi8('.')));
  *query = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('?'))));
  *segment =
      static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(prev, slash), slash_or_dot)));
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_andnot_si128(special, printable))) ^ 0xFFFFu;
}
#endif

// Scans b[0..n) once: the first stop byte, and the first '?' and segment candidate before it.
FastScan ScanForFastPath(const char* b, size_t n) {
  size_t query = n, segment = n;
  size_t i = 0;
#if defined(__SSE2__)
  if (n >= 16) {
    for (;; i += 16) {
      // The last block may overlap the one before: it is the final 16 bytes, with the bits before i dropped.
      const size_t at = std::min(i, n - 16);
      const unsigned shift = static_cast<unsigned>(i - at);
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + at));
      // The bytes before: loaded (in bounds) except for the first block, where a zero byte is shifted in.
      const __m128i prev =
          at == 0 ? _mm_slli_si128(v, 1) : _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + at - 1));
      unsigned q, seg;
      const unsigned stop = Masks16(v, prev, &q, &seg) >> shift;
      q >>= shift;
      seg >>= shift;
      if (i == 0) seg &= ~((1u << kFirstSegmentCheck) - 1);
      if (query == n && q != 0) query = i + static_cast<size_t>(__builtin_ctz(q));
      if (segment == n && seg != 0) segment = i + static_cast<size_t>(__builtin_ctz(seg));
      if (stop != 0) {
        const size_t s = i + static_cast<size_t>(__builtin_ctz(stop));
        return {s, std::min(query, s), std::min(segment, s)};
      }
      if (i + 16 >= n) return {n, query, segment};
    }
  }
#endif
  for (; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(b[i]);
    if (IsFastStopByte(c)) return {i, std::min(query, i), std::min(segment, i)};
    if (c == '?' && query == n) query = i;
    if (segment == n && i >= kFirstSegmentCheck && b[i - 1] == '/' && (c == '/' || c == '.')) segment = i;
  }
  return {n, query, segment};
}

// Host byte classes of the fast path: a host of [a-z0-9.-] (nothing to lower-case, escape or map).
enum FastHostClass : uint8_t {
  kNotHost = 0,     // ends the host ('/', '?', end) or sends the URL the full way
  kDigit = 1,       // 0-9
  kNumberish = 2,   // a-f and x: can still be part of an IPv4 number (hex) in the IPv4 parsers
  kNonNumeric = 3,  // g-w, y, z, '-': a label holding one cannot be an IPv4 number
  kDot = 4,
};
struct FastHostTable {
  uint8_t cls[256];
  constexpr FastHostTable() : cls() {
    for (int c = 0; c < 256; ++c) {
      const unsigned char u = static_cast<unsigned char>(c);
      cls[c] = IsDigit(u)                           ? kDigit
               : (u >= 'a' && u <= 'f') || u == 'x' ? kNumberish
               : IsLower(u) || u == '-'             ? kNonNumeric
               : u == '.'                           ? kDot
                                                    : kNotHost;
    }
  }
};
constexpr FastHostTable kFastHost;

// True (and v4 set) when h[0..n) is an IPv4 address in canonical form: four decimal parts of
// 0-255 without leading zeros. Both IPv4 parsers read it as those four bytes and SetIpv4() prints it back
// unchanged.
bool ParseCanonicalIpv4(const char* h, size_t n, uint8_t v4[4]) {
  size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (i >= n || h[i] != '.') return false;
      ++i;
    }
    const size_t start = i;
    unsigned v = 0;
    while (i < n && i - start < 3 && IsDigit(static_cast<unsigned char>(h[i]))) {
      v = v * 10 + static_cast<unsigned>(h[i++] - '0');
    }
    const size_t len = i - start;
    if (len == 0 || v > 255 || (len > 1 && h[start] == '0')) return false;
    v4[part] = static_cast<uint8_t>(v);
  }
  return i == n;
}

// *s = p[0..n). When the string already holds at least n bytes, a plain copy and a shorter length, without
// assign()'s general growth and aliasing work (memmove: p may point into *s).
inline void AssignBytes(std::string* s, const char* p, size_t n) {
  if (n <= s->size()) {
    std::memmove(s->data(), p, n);
    s->resize(n);
  } else {
    s->assign(p, n);
  }
}

// b[0..n): the whole input. True (and *out filled) when it is canonical as it stands (after the fragment is
// cut).
bool FastCanonicalize(const char* b, size_t n, CanonicalUrl* out) {
  // Spec 1-3, 7: no byte to strip, remove, unescape or escape: printable ASCII, no '%', and no '\' (a path
  // separator before the query). Spec: "if the URL ends in a fragment, remove the fragment".
  const FastScan scan = ScanForFastPath(b, n);
  if (scan.stop < n && b[scan.stop] != '#') return false;
  n = scan.stop;
  // Spec 4: "http://" or "https://" followed directly by the host.
  size_t scheme = 0;
  if (n > 7 && std::memcmp(b, "http://", 7) == 0) {
    scheme = 4;
  } else if (n > 8 && std::memcmp(b, "https://", 8) == 0) {
    scheme = 5;
  } else {
    return false;
  }
  // Spec 5: a host of [a-z0-9.-] (no userinfo, no port, no IDN, nothing to lower-case), no leading, trailing
  // or doubled dot, ending in a label that cannot be a number, or else a dotted-decimal IPv4 address.
  const size_t host_begin = scheme + 3;
  const size_t path_end = scan.query;  // the host ends before it too
  size_t i = host_begin;
  // Classes 1-3 have bits 0-1 only, kDot is bit 2: `prev & cls` has bit 2 exactly after two dots in a row.
  unsigned prev = kDot;  // a leading dot fails like a doubled one
  unsigned dot_run = 0;
  for (; i < path_end; ++i) {
    const unsigned cls = kFastHost.cls[static_cast<unsigned char>(b[i])];
    if (cls == kNotHost) break;
    dot_run |= prev & cls;
    prev = cls;
  }
  const size_t host_end = i;
  if (host_end < path_end && b[host_end] != '/') return false;
  if (host_end == host_begin || (dot_run & kDot) != 0 || prev == kDot) return false;
  // The last label decides whether the IPv4 parsers read the host (WHATWG "ends in a number"; the Firefox
  // parser takes only hex digits, 'x' and '.').
  bool ipv4 = true;
  for (size_t k = host_end; k > host_begin && b[k - 1] != '.'; --k) {
    if (kFastHost.cls[static_cast<unsigned char>(b[k - 1])] == kNonNumeric) {
      ipv4 = false;
      break;
    }
  }
  uint8_t v4[4];
  if (ipv4 && !ParseCanonicalIpv4(b + host_begin, host_end - host_begin, v4)) return false;
  // Spec 6: a path with no empty, "." or ".." segment (the query is not path-processed). A segment starts
  // after each '/'; an empty last segment (a trailing '/') is canonical. Only a path where the scan saw "//"
  // or "/." needs the check ("/.well-known/" passes it).
  for (size_t k = scan.segment < path_end ? scan.segment - 1 : path_end; k < path_end; ++k) {
    if (b[k] != '/') continue;
    const size_t rest = path_end - k - 1;  // bytes after this '/'
    if (rest == 0) break;
    const char c1 = b[k + 1];
    if (c1 == '/') return false;
    if (c1 == '.') {
      if (rest == 1 || b[k + 2] == '/') return false;                       // "/."
      if (b[k + 2] == '.' && (rest == 2 || b[k + 3] == '/')) return false;  // "/.."
    }
  }
  const bool has_query = path_end < n;
  const size_t spec_size = n + (path_end == host_end ? 1 : 0);
  if (spec_size > kMaxUrlBytes) return false;  // the full path reports it
  // The scheme is most often the one the object already holds (the same CanonicalUrl serves URL after URL).
  if (out->scheme.size() != scheme || std::memcmp(out->scheme.data(), "https", scheme) != 0) {
    out->scheme.assign(b, scheme);
  }
  AssignBytes(&out->host, b + host_begin, host_end - host_begin);
  std::memset(out->ip, 0, sizeof(out->ip));
  if (ipv4) {
    out->host_kind = HostKind::kIpv4;
    std::memcpy(out->ip, v4, 4);
  } else {
    out->host_kind = HostKind::kName;
  }
  if (path_end == host_end) {
    out->path.assign(1, '/');
  } else {
    AssignBytes(&out->path, b + host_end, path_end - host_end);
  }
  out->has_query = has_query;
  if (has_query) {
    AssignBytes(&out->query, b + path_end + 1, n - path_end - 1);
  } else {
    out->query.clear();
  }
  return true;
}

}  // namespace

// ---- public ------------------------------------------------------------------------------------------

std::string CanonicalUrl::Spec() const {
  std::string s;
  s.reserve(scheme.size() + 3 + host.size() + path.size() + 1 + query.size());
  s.append(scheme).append("://").append(host).append(path);
  if (has_query) s.append(1, '?').append(query);
  return s;
}

Status Canonicalize(std::string_view input, CanonicalUrl* out) {
  if (input.size() > kMaxUrlBytes) {
    return Status::InvalidArgument("url: longer than kMaxUrlBytes (8192 bytes)");
  }
  if (FastCanonicalize(input.data(), input.size(), out)) return Status::Ok();
  return internal::CanonicalizeFullPath(input, out);
}

namespace internal {

Status CanonicalizeFullPath(std::string_view input, CanonicalUrl* out) {
  if (input.size() > kMaxUrlBytes) {
    return Status::InvalidArgument("url: longer than kMaxUrlBytes (8192 bytes)");
  }
  const char* b = input.data();
  const char* e = b + input.size();
  // Spec: "if the URL ends in a fragment, remove the fragment" (everything from the first '#').
  if (const void* hash = std::memchr(b, '#', input.size())) e = static_cast<const char*>(hash);
  // Spec: strip leading and trailing whitespace (here: every C0 control and space, as browsers do).
  while (b < e && static_cast<unsigned char>(*b) <= 0x20) ++b;
  while (e > b && static_cast<unsigned char>(e[-1]) <= 0x20) --e;
  // Spec: "remove tab (0x09), CR (0x0d), and LF (0x0a) characters from the URL."
  char work[kMaxUrlBytes];
  size_t n = 0;
  for (const char* p = b; p < e; ++p) {
    const char c = *p;
    work[n] = c;
    n += (c != '\t' && c != '\r' && c != '\n');
  }
  if (n == 0) return Status::InvalidArgument("url: empty");

  // A special URL that a browser would open is read as the browser reads it (see "WHATWG URL Standard"
  // above); everything else (other schemes, no scheme, escaped schemes, URLs a browser refuses) follows
  // the Safe Browsing reference clients below.
  BrowserSplit split;
  if (SplitAsBrowser(work, n, &split)) return CanonicalizeBrowserSplit(work, n, split, out);

  // Spec: "repeatedly percent-unescape the URL until it has no more percent-escapes."
  if (UnescapeInPlace(work, &n) < 0) return UnsettledError();

  // The query starts at the first '?' and is only escaped (Spec: "do not perform path canonicalization
  // on query parameters"). Before it, '\' is read as '/', as browsers read http(s) URLs.
  const void* qmark = std::memchr(work, '?', n);
  const size_t pre = qmark != nullptr ? static_cast<size_t>(static_cast<const char*>(qmark) - work) : n;
  for (char* p = work;
       (p = static_cast<char*>(std::memchr(p, '\\', pre - static_cast<size_t>(p - work)))) != nullptr;) {
    *p++ = '/';
  }

  // Scheme: a letter, then letters, digits, '+', '-', '.', then ':'; but "host:80" or "host:80/..." is a
  // host and port (v4 reference client getScheme). No scheme means http.
  size_t i = 0;
  bool has_scheme = false;
  if (pre > 0 && IsAlpha(static_cast<unsigned char>(work[0]))) {
    i = 1;
    while (i < pre && IsSchemeChar(static_cast<unsigned char>(work[i]))) ++i;
    if (i < pre && work[i] == ':') {
      size_t j = i + 1;
      while (j < pre && IsDigit(static_cast<unsigned char>(work[j]))) ++j;
      const bool port_like = j > i + 1 && (j == pre || work[j] == '/');
      has_scheme = !port_like;
    }
  }
  size_t auth_begin = 0;
  if (has_scheme) {
    if (pre - i < 3 || work[i + 1] != '/' || work[i + 2] != '/') {
      std::string m = "url: scheme \"";
      m.append(work, std::min<size_t>(i, 32));
      m += "\" is not followed by \"//\" (no host to check)";
      return Status::InvalidArgument(std::move(m));
    }
    out->scheme.assign(work, i);
    for (char& c : out->scheme)
      c = static_cast<char>(c | (IsAlpha(static_cast<unsigned char>(c)) ? 0x20 : 0));
    auth_begin = i + 3;
  } else {
    out->scheme.assign("http");
  }

  // Authority: up to the first '/'. Spec: the host drops userinfo (up to the last '@') and the port.
  const void* slash = std::memchr(work + auth_begin, '/', pre - auth_begin);
  const size_t auth_end =
      slash != nullptr ? static_cast<size_t>(static_cast<const char*>(slash) - work) : pre;
  size_t host_begin = auth_begin;
  for (size_t k = auth_end; k > auth_begin; --k) {
    if (work[k - 1] == '@') {
      host_begin = k;
      break;
    }
  }
  if (host_begin == auth_end) return Status::InvalidArgument("url: no host");
  size_t host_end;
  if (work[host_begin] == '[') {
    const void* close = std::memchr(work + host_begin, ']', auth_end - host_begin);
    if (close == nullptr) return Status::InvalidArgument("url: unterminated '[' in host");
    host_end = static_cast<size_t>(static_cast<const char*>(close) - work) + 1;
    if (host_end < auth_end && work[host_end] != ':') {
      return Status::InvalidArgument("url: text after the ']' of an IPv6 host");
    }
  } else {
    const void* colon = std::memchr(work + host_begin, ':', auth_end - host_begin);
    host_end = colon != nullptr ? static_cast<size_t>(static_cast<const char*>(colon) - work) : auth_end;
  }
  for (size_t k = host_end + 1; k < auth_end; ++k) {
    if (!IsDigit(static_cast<unsigned char>(work[k])))
      return Status::InvalidArgument("url: port is not a number");
  }
  if (host_end == host_begin) return Status::InvalidArgument("url: no host");
  URLGUARD_RETURN_IF_ERROR(CanonicalizeHostInPlace(work + host_begin, host_end - host_begin, out));
  return FinishPathAndQuery(work + auth_end, n - auth_end, out);
}

}  // namespace internal

void ExpressionList::Add(std::string_view host, std::string_view path_and_query) {
  if (count_ >= kMaxExpressions) return;
  const size_t len = host.size() + path_and_query.size();
  for (size_t k = 0; k < count_; ++k) {
    if (end_[k] - begin_[k] == len &&
        std::memcmp(buffer_.data() + begin_[k], host.data(), host.size()) == 0 &&
        std::memcmp(buffer_.data() + begin_[k] + host.size(), path_and_query.data(), path_and_query.size()) ==
            0) {
      return;
    }
  }
  begin_[count_] = static_cast<uint32_t>(buffer_.size());
  buffer_.append(host).append(path_and_query);
  end_[count_] = static_cast<uint32_t>(buffer_.size());
  host_root_[count_] = path_and_query == "/";
  ++count_;
}

// Bit k set when p[k] == c, for k < n <= 64; p[0..n rounded up to 16) must be readable.
uint64_t ByteMask64(const char* p, size_t n, char c) {
  uint64_t mask = 0;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(c);
  for (size_t k = 0; k < n; k += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    mask |= static_cast<uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, needle)))) << k;
  }
#else
  for (size_t k = 0; k < n; ++k) mask |= static_cast<uint64_t>(p[k] == c) << k;
#endif
  return n >= 64 ? mask : mask & ((uint64_t{1} << n) - 1);
}

// Every expression is a substring of one string, host + path + ("?" + query): a host string is a suffix of
// the exact host, and every path string is a prefix of the path (+ query) that ends at a '/' or at the path's
// or the query's end. So the list is that one string plus a (begin, end) pair per expression: one copy of the
// URL instead of one per expression (of ~6 on average), and hashing reads the bytes the copy just wrote. The
// host strings and path strings are those of HostStrings() and PathStrings() (url_canon_test checks it),
// found from bit masks of the dots and slashes when host and path are at most 64 bytes.
void MakeExpressions(const CanonicalUrl& url, ExpressionList* out) {
  const size_t hn = url.host.size();
  const size_t pn = url.path.size();
  const bool with_query = url.has_query && !url.query.empty();
  const size_t total = hn + pn + (with_query ? 1 + url.query.size() : 0);
  // 16 bytes of slack for ByteMask64's loads. Within the kept capacity after the first URLs: no allocation,
  // and only bytes beyond the old size are zeroed before they are overwritten.
  constexpr size_t kSlack = 16;
  out->buffer_.resize(total + kSlack);
  char* d = out->buffer_.data();
  std::memcpy(d, url.host.data(), hn);
  std::memcpy(d + hn, url.path.data(), pn);
  if (with_query) {
    d[hn + pn] = '?';
    std::memcpy(d + hn + pn + 1, url.query.data(), url.query.size());
  }
  uint32_t begins[5];
  uint32_t ends[6];
  size_t host_count = 0, path_count = 0;
  if (hn <= 64 && pn <= 64) {
    // Spec: the exact host, then the suffixes of the last 5, 4, 3, 2 components (none for IP hosts).
    begins[host_count++] = 0;
    if (url.host_kind == HostKind::kName) {
      uint64_t dots = ByteMask64(d, hn, '.');
      uint32_t starts[6];
      size_t found = 0;
      while (dots != 0 && found < 5) {
        const unsigned last = 63u - static_cast<unsigned>(__builtin_clzll(dots));
        starts[++found] = last + 1;
        dots &= ~(uint64_t{1} << last);
      }
      for (size_t k = found; k >= 2; --k) begins[host_count++] = starts[k];
    }
    // Spec: the path with the query, the path, then "/" and the prefixes ending at the first 1-3 slashes
    // after the root that have more path after them.
    if (with_query) ends[path_count++] = static_cast<uint32_t>(total);
    if (pn != 1) ends[path_count++] = static_cast<uint32_t>(hn + pn);
    ends[path_count++] = static_cast<uint32_t>(hn + 1);
    uint64_t slashes = pn >= 2 ? ByteMask64(d + hn, pn - 1, '/') & ~uint64_t{1} : 0;
    for (int c = 0; c < 3 && slashes != 0; ++c) {
      ends[path_count++] = static_cast<uint32_t>(hn + static_cast<size_t>(__builtin_ctzll(slashes)) + 1);
      slashes &= slashes - 1;
    }
  } else {
    std::string_view hosts[5];
    PathString paths[6];
    host_count = HostStrings(url, hosts);
    path_count = PathStrings(url, paths);
    for (size_t h = 0; h < host_count; ++h) {
      begins[h] = static_cast<uint32_t>(hosts[h].data() - url.host.data());
    }
    for (size_t p = 0; p < path_count; ++p) {
      ends[p] =
          static_cast<uint32_t>(hn + paths[p].path.size() + (paths[p].with_query ? 1 + url.query.size() : 0));
    }
  }
  out->buffer_.resize(total);
  // Host strings are distinct and so are path strings, so no expression repeats; 5 x 6 fit kMaxExpressions.
  size_t count = 0;
  for (size_t h = 0; h < host_count; ++h) {
    for (size_t p = 0; p < path_count; ++p) {
      out->begin_[count] = begins[h];
      out->end_[count] = ends[p];
      // The root path "/" is the only path string of length 1 ("/" + query has a non-empty query).
      out->host_root_[count] = ends[p] == hn + 1;
      ++count;
    }
  }
  out->count_ = count;
  out->host_count_ = host_count;
}

// ---- internal ------------------------------------------------------------------------------------------

namespace internal {

int UnescapeRepeatedly(std::string_view in, std::string* out) {
  if (in.size() > kMaxUrlBytes) return -1;
  out->assign(in);
  size_t n = out->size();
  const int rounds = UnescapeInPlace(out->data(), &n);
  out->resize(n);
  return rounds;
}

void SpecialEncode(std::string_view in, bool fold_slashes, std::string* out) {
  out->resize(3 * in.size());
  char* base = out->data();
  char* d = base;
  for (size_t i = 0; i < in.size(); ++i) {
    if (fold_slashes && in[i] == '/' && d > base && d[-1] == '/') continue;
    d = EscapeTo(d, in.data() + i, 1);
  }
  out->resize(static_cast<size_t>(d - base));
}

Status CanonicalizeEscapes(std::string_view in, std::string* out) {
  if (in.size() > kMaxUrlBytes) return Status::InvalidArgument("url: longer than kMaxUrlBytes (8192 bytes)");
  std::string unescaped;
  if (UnescapeRepeatedly(in, &unescaped) < 0) return UnsettledError();
  AssignEscaped(unescaped.data(), unescaped.size(), out);
  return Status::Ok();
}

Status CanonicalizeHostname(std::string_view raw_host, CanonicalUrl* out) {
  if (raw_host.size() > kMaxUrlBytes)
    return Status::InvalidArgument("url: longer than kMaxUrlBytes (8192 bytes)");
  std::string host;
  if (UnescapeRepeatedly(raw_host, &host) < 0) return UnsettledError();
  return CanonicalizeHostInPlace(host.data(), host.size(), out);
}

bool ParseIpv4(std::string_view host, uint8_t out[4]) {
  // The Windows resolver allows a dotted IP address to be followed by a space and anything, as long as
  // the whole string is at most 15 characters: "10.192.95.89 xy" resolves to 10.192.95.89.
  if (host.size() <= 15) {
    const size_t space = host.find(' ');
    if (space != std::string_view::npos) host = host.substr(0, space);
  }
  for (unsigned char c : host) {
    if (!(IsHexDigit(c) || c == 'x' || c == 'X' || c == '.')) return false;
  }
  std::string_view parts[4];
  size_t count = 0;
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    if (dot == std::string_view::npos) dot = host.size();
    if (dot > start) {  // empty parts are skipped, as Firefox's ParseString does
      if (count == 4) return false;
      parts[count++] = host.substr(start, dot - start);
    }
    start = dot + 1;
  }
  if (count == 0) return false;
  // If any potentially-octal part (leading 0, not hex) has the digit 8 or 9, no part is octal.
  bool allow_octal = true;
  for (size_t p = 0; p < count; ++p) {
    if (parts[p][0] != '0') continue;
    for (size_t j = 1; j < parts[p].size(); ++j) {
      const char c = parts[p][j];
      if (c == 'x' || c == 'X') break;
      if (c == '8' || c == '9') allow_octal = false;
    }
  }
  uint8_t bytes[4];
  size_t k = 0;
  for (size_t p = 0; p < count; ++p) {
    uint32_t v;
    if (!ParseIpv4Part(parts[p], allow_octal, &v)) return false;
    // Spec: fewer than four components: the last one fills the remaining bytes.
    const size_t width = p + 1 < count ? 1 : 5 - count;
    for (size_t w = width; w > 0; --w) bytes[k++] = static_cast<uint8_t>(v >> (8 * (w - 1)));
  }
  assert(k == 4);
  std::memcpy(out, bytes, 4);
  return true;
}

bool CanonicalNum(std::string_view num, int bytes, bool allow_octal, std::string* out) {
  out->clear();
  uint32_t v;
  if (bytes < 1 || bytes > 4 || !ParseIpv4Part(num, allow_octal, &v)) return false;
  char text[16];
  char* d = text;
  for (int w = bytes; w > 0; --w) {
    if (w < bytes) *d++ = '.';
    d = WriteByte(d, (v >> (8 * (w - 1))) & 0xff);
  }
  out->assign(text, static_cast<size_t>(d - text));
  return true;
}

std::vector<std::string> LookupHosts(const CanonicalUrl& url) {
  std::string_view hosts[5];
  const size_t n = HostStrings(url, hosts);
  return std::vector<std::string>(hosts, hosts + n);
}

std::vector<std::string> LookupPaths(const CanonicalUrl& url) {
  PathString paths[6];
  const size_t n = PathStrings(url, paths);
  std::vector<std::string> result;
  for (size_t i = 0; i < n; ++i) {
    std::string s(paths[i].path);
    if (paths[i].with_query) s.append(1, '?').append(url.query);
    result.push_back(std::move(s));
  }
  return result;
}

}  // namespace internal
}  // namespace urlguard
