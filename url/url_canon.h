// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// URL canonicalization and lookup expressions, as the Safe Browsing v4 "URLs and Hashing" rules define
// them (with the v5 rule for IPv6 hosts). These are what make zero false negatives possible: every
// spelling of a listed URL that a browser would fetch must canonicalize to the same string, so that its
// expressions hash to the same keys the publisher stored.
//
// Browser reading first: an input whose scheme is http, https, ws, wss or ftp (any case) has its host
// found as the WHATWG URL Standard finds it (any run of '/' and '\', none included, after "scheme:";
// '\' ends the authority; the host follows the last '@'; the port is digits up to 65535; the host is
// percent-decoded once and must hold no forbidden domain code point), then goes through rule 5 below; the
// path and query go through rules 3, 4 (the '?' and '\' part) and 6-7. When a browser would refuse such a
// URL, and for every other input, the Safe Browsing reading below applies. docs/url-parsing.md has the
// table; fixtures/browser/ the divergences from the shared vectors.
//
// The Safe Browsing rules, in the order Canonicalize() applies them (url_canon.cc quotes each step):
//   1. Strip leading and trailing C0 controls and spaces (bytes <= 0x20) of the whole input.
//   2. Remove every tab (0x09), CR (0x0D) and LF (0x0A); cut the fragment at the first '#'.
//   3. Percent-unescape the whole URL until it has no "%HH" left (so "http%3A%2F%2Fa.com/" works, and an
//      escaped '/', '?' or '@' acts as that delimiter, as in the v4 reference client).
//   4. Split: the query starts at the first '?'. Before it, '\' counts as '/' (as browsers read it). A
//      scheme is letters/digits/"+-." followed by ':' (but "host:80/" is a port, not a scheme); a
//      missing scheme means http. A scheme must be followed by "//" (so mailto:, javascript:, data:,
//      about: fail). The authority runs to the first '/'.
//   5. Host: drop userinfo (up to the last '@') and the port (":digits", possibly empty; any other text
//      after ':' fails); lower-case; remove leading/trailing dots and collapse runs of dots; IDN labels
//      become punycode (libidn2, UTS #46 non-transitional, then transitional); IPv4 in any form becomes
//      dotted decimal (the WHATWG IPv4 parser first, then Firefox's); a bracketed IPv6 address is printed in
//      RFC 5952 form, and IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96) addresses become their IPv4
//      address.
//   6. Path: resolve "." and ".." segments (a final "." or ".." leaves a trailing '/', as browsers do),
//      collapse runs of '/', and an empty path is "/". The query gets no path processing.
//   7. Percent-escape every byte <= 0x20, >= 0x7F, '#' and '%' of host, path and query, upper-case hex.
//
// Idempotence: for every input that canonicalizes, canonicalizing Spec() again succeeds and yields the
// same Spec() (the fuzz target fuzz/url_canon_fuzz.cc checks this). There is no excluded class.
//
// Thread safety: all functions are pure and thread-safe. Allocation: Canonicalize() and MakeExpressions()
// reuse the capacity of their output objects, so a caller that keeps one object per thread allocates
// nothing on the hot path once the object has held a URL as long as the current one (IDN hosts, which go
// through libidn2, are the exception). Stack use: up to about 3 * kMaxUrlBytes bytes of scratch.
#ifndef URLGUARD_URL_URL_CANON_H_
#define URLGUARD_URL_URL_CANON_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// Inputs longer than this are refused with kInvalidArgument before any work is done.
constexpr size_t kMaxUrlBytes = 8192;
// Bound on the repeated percent-unescaping (Spec: "repeatedly percent-unescape the URL until it has no
// more percent-escapes"); an input still changing after this many rounds is refused. (The unescaping is
// computed in one linear pass whatever the depth; the bound only keeps the results equal to those of
// the reference clients, which stop at 1024 rounds.)
constexpr int kMaxUnescapeRounds = 1024;

enum class HostKind : uint8_t { kName = 0, kIpv4 = 1, kIpv6 = 2 };

struct CanonicalUrl {
  std::string scheme;      // lower-case, without "://" ("http", "https", "ftp", ...)
  std::string host;        // "a.b.com", "1.2.3.4", "[2001:db8::1]" (IPv6 in brackets, RFC 5952 form)
  std::string path;        // starts with '/', escaped as the spec says
  std::string query;       // without the '?'; meaningful only when has_query
  bool has_query = false;  // "http://a/b?" has an (empty) query; "http://a/b" has none
  HostKind host_kind = HostKind::kName;
  // The address for IP hosts, network byte order: ip[0..3] for IPv4, ip[0..15] for IPv6.
  uint8_t ip[16] = {};

  // scheme + "://" + host + path + ("?" + query when has_query). Allocates.
  std::string Spec() const;
};

// Canonicalizes `input`. Fails with kInvalidArgument (message says why) for: more than kMaxUrlBytes,
// a canonical form (Spec()) longer than kMaxUrlBytes (escaping can triple the size), no host ("", "/blah",
// "http:///", "http://#ref", "http://evil.example@/"), schemes that have no host (mailto:, javascript:,
// data:), a port that is not digits, an unterminated '[' or an invalid bracketed IPv6 address, a host name
// that starts with '[' once its leading dots are gone, hosts that are empty after trimming dots, and
// unescaping that does not settle within kMaxUnescapeRounds. Never crashes and does O(size) work (plus
// libidn2 on non-ASCII labels of at most 255 bytes). `out` is overwritten; on failure its contents are
// unspecified.
Status Canonicalize(std::string_view input, CanonicalUrl* out);

// ---- lookup expressions ----------------------------------------------------------------------------

// Spec: at most 5 host strings x 6 path strings.
constexpr size_t kMaxExpressions = 30;

// The host-suffix x path-prefix expressions of a canonical URL, without scheme: "a.b.c/1/2.html?x=1".
// Order: for each host (exact host first, then shorter suffixes), each path (exact path with query, exact
// path without query, then root-first prefixes "/", "/1/", ...), duplicates removed.
// Not thread-safe (one object per thread); Clear() keeps the buffer's capacity.
class ExpressionList {
 public:
  size_t size() const { return count_; }
  std::string_view operator[](size_t i) const {
    return std::string_view(buffer_.data() + begin_[i], end_[i] - begin_[i]);
  }
  // True when expression i is a whole host ("a.b.c/": path "/" and no query): the expressions probed in
  // the domain layer. All others are probed in the url layer.
  bool is_host_root(size_t i) const { return host_root_[i]; }
  // How many distinct host strings the URL produced (1 for IP hosts).
  size_t host_count() const { return host_count_; }
  // Expression i is data()[begins()[i], ends()[i]), for hashing them all in one loop
  // (core/key_hash.h, Xxh3KeysOfSubstrings).
  const char* data() const { return buffer_.data(); }
  const uint32_t* begins() const { return begin_; }
  const uint32_t* ends() const { return end_; }

  void Clear() {
    buffer_.clear();
    count_ = 0;
    host_count_ = 0;
  }
  // Appends host + path_and_query unless the expression is already present or the list is full. (Not used
  // by MakeExpressions, whose expressions are distinct by construction.)
  void Add(std::string_view host, std::string_view path_and_query);
  void set_host_count(size_t n) { host_count_ = n; }

 private:
  friend void MakeExpressions(const CanonicalUrl& url, ExpressionList* out);

  // Expression i is buffer_[begin_[i], end_[i]). MakeExpressions() writes one string (host + path + query)
  // that holds all of a URL's expressions as substrings; Add() appends each expression whole.
  std::string buffer_;
  uint32_t begin_[kMaxExpressions] = {};
  uint32_t end_[kMaxExpressions] = {};
  bool host_root_[kMaxExpressions] = {};
  size_t count_ = 0;
  size_t host_count_ = 0;
};

// Spec: host strings are the exact host plus up to 4 hosts formed by starting with the last 5
// components and successively removing the leading component (the top-level domain alone is skipped);
// IP hosts give only the exact host. Path strings are the exact path with the query, the exact path
// without the query, and up to 4 paths formed by starting at the root and successively appending path
// components, each ending in '/'. An empty query ("?" with nothing after) gives no "path?" string.
// `url` must come from a successful Canonicalize(). `out` is overwritten. Never allocates once `out` has
// held the expressions of a URL as long as this one (one copy of host + path + query holds them all).
void MakeExpressions(const CanonicalUrl& url, ExpressionList* out);

// ---- internal: the component steps, exposed for the vector tests (fixtures/vectors/components.tsv) ----
// Not part of the library's contract; do not call from other layers.
namespace internal {

// Canonicalize() without its fast path for inputs that are already canonical (url_canon.cc, "fast path"):
// every input gets the full algorithm. Same contract as Canonicalize(); tests compare the two.
Status CanonicalizeFullPath(std::string_view input, CanonicalUrl* out);

// Percent-unescapes `in` until no "%HH" is left (one linear pass; the result equals repeating a
// single-pass unescape until nothing changes). Returns the number of rounds that changed something, or
// -1 (and `out` unspecified) when more than kMaxUnescapeRounds would be needed.
int UnescapeRepeatedly(std::string_view in, std::string* out);

// Spec: percent-escape every byte <= 0x20, >= 0x7F, '#' and '%' (upper-case hex). With fold_slashes,
// runs of '/' become one '/' (Firefox's SpecialEncode). Kind `special_encode`.
void SpecialEncode(std::string_view in, bool fold_slashes, std::string* out);

// Unescape repeatedly, then escape once (Firefox's string canonicalization). Kind `canonicalize_path`.
// Fails like Canonicalize() when the unescaping does not settle.
Status CanonicalizeEscapes(std::string_view in, std::string* out);

// Canonicalizes a bare host (no userinfo, no port; may be percent-escaped; "[...]" is IPv6) and fills
// out->host, out->host_kind and out->ip, leaving the other fields alone. Kinds `canonical_hostname`,
// `canonical_host_v5`. Fails when the host is empty after trimming dots or is a bad IPv6 literal.
Status CanonicalizeHostname(std::string_view raw_host, CanonicalUrl* out);

// The IPv4 parser of the reference clients (Firefox ParseIPAddress): 1 to 4 dot-separated parts in
// decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes; each part is taken
// modulo 2^32 and truncated to its bytes ("276.2.3" -> 20.2.0.3); a part with a leading 0 that contains
// 8 or 9 disables octal for all parts; a host of at most 15 bytes is cut at its first space (the
// Windows resolver rule, "10.192.95.89 xy"). True and `out` set when `host` is an IPv4 address. Kind
// `parse_ip`.
bool ParseIpv4(std::string_view host, uint8_t out[4]);

// Firefox CanonicalNum: parses `num` (octal only when allow_octal) and writes its low `bytes` bytes as
// dotted decimal ("367", 2 -> "1.111"). False for bytes outside 1..4 or a malformed number. Kind
// `canonical_num(bytes=N,allowOctal=B)`.
bool CanonicalNum(std::string_view num, int bytes, bool allow_octal, std::string* out);

// The host strings and path strings MakeExpressions() combines, as copies (kinds `lookup_hosts`,
// `lookup_paths`). Same order as MakeExpressions(); paths without duplicates.
std::vector<std::string> LookupHosts(const CanonicalUrl& url);
std::vector<std::string> LookupPaths(const CanonicalUrl& url);

}  // namespace internal
}  // namespace urlguard

#endif  // URLGUARD_URL_URL_CANON_H_
