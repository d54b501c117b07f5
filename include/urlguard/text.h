// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Text tools for a chat or forum backend: the canonical form of a URL, its lookup expressions and their hashes
// (what a list entry must equal to match), and every URL a person could have meant in a free-text message
// (including defanged ones such as "hxxp://evil[.]com"). What `urlguard canon` and `urlguard scan` print comes
// from here.
//
//   urlguard::FoundUrls found = urlguard::ExtractUrls(message);
//   for (const urlguard::FoundUrl& u : found.urls) {
//     urlguard::Verdict v = checker->Check(u.url);   // u.begin/u.end: where it was in `message`
//   }
//
// The canonicalization is Google Safe Browsing's URL canonicalization (see docs/architecture.md).
//
// Thread safety: free functions without shared state; call them from any number of threads. They allocate
// (these are the convenient forms; Checker::Check is the allocation-free hot path).
#ifndef URLGUARD_TEXT_H_
#define URLGUARD_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/checker.h"
#include "urlguard/export.h"
#include "urlguard/status.h"

namespace urlguard {

// One lookup expression of a URL: host suffix + path prefix, without scheme ("a.b.example/1/2.html?x=1").
struct UrlExpression {
  std::string expression;
  // kDomain for a whole host ("a.b.example/", and an IP host's "1.2.3.4/"), else kUrl. Never kIp: the ip layer
  // is probed with the address's prefix expressions, one per prefix length a list's ip layer holds, which
  // depend on the list and are not in this list of expressions.
  Layer layer = Layer::kUrl;
  std::string sha256_hex;     // SHA-256 of `expression`, lower-case hex; its first 8 digits are the
                              // verification prefix
};

struct CanonicalForm {
  std::string url;     // scheme://host/path?query, e.g. "http://evil.example/login.php"
  std::string scheme;  // "http", "https", "ftp", ...
  std::string host;    // lower-case, IDNA (punycode); IPv4 dotted, IPv6 "[...]" in RFC 5952 form
  std::string path;    // starts with '/'
  std::string query;   // without '?'; meaningful only when has_query
  bool has_query = false;
  std::vector<UrlExpression> expressions;  // in lookup order, at most 30 (5 hosts x 6 paths)
};

// Canonicalizes `url` (any spelling a browser accepts; a missing scheme means http) and computes its lookup
// expressions and their hashes. Fails with kInvalidArgument (the message says why) when the input has no
// canonical form: over 8 KiB, no host, a scheme without a host (mailto:, javascript:, data:), a bad port or
// IPv6 address, unescaping that does not settle. Such an input is never a match (a Checker says kInvalid).
URLGUARD_EXPORT Result<CanonicalForm> Canonicalize(std::string_view url);

// The SHA-256 of a list entry expression, lower-case hex: the key a list stores and a Match reports.
URLGUARD_EXPORT std::string ExpressionSha256Hex(std::string_view expression);

// Caps of ExtractUrls (one place): text beyond kMaxScannedTextBytes is not scanned and URLs beyond
// kMaxFoundUrlsPerText are not reported (both set FoundUrls::truncated); a normalized URL is cut at
// kMaxFoundUrlBytes (FoundUrl::cut).
inline constexpr size_t kMaxScannedTextBytes = size_t{1} << 20;
inline constexpr size_t kMaxFoundUrlsPerText = 1000;
inline constexpr size_t kMaxFoundUrlBytes = 8192;

// A URL found in text.
struct FoundUrl {
  size_t begin = 0;          // byte offset of its first byte in the text
  size_t end = 0;            // one past its last byte
  std::string url;           // normalized (refanged, "http://" added when the text had no scheme): give it to
                             // Checker::Check or Canonicalize
  bool defanged = false;     // the text used a defanged scheme, separator or dot ("hxxp", "[.]")
  bool had_scheme = false;   // the text had an explicit (possibly defanged) scheme
  bool cut = false;          // `url` was cut at kMaxFoundUrlBytes
};

struct FoundUrls {
  std::vector<FoundUrl> urls;  // in text order, without overlaps
  bool truncated = false;      // only the first scanned_bytes were scanned (a cap was hit)
  size_t scanned_bytes = 0;    // how many bytes were scanned
};

// Finds every URL a person could have meant in `text` (a chat message, a forum post): scheme URLs, "www."
// links, bare domains with a known TLD, IPv4 hosts with a path or port, and defanged forms. Email addresses and
// file names ("main.py", "README.md") are not URLs. Linear time in the scanned bytes, whatever they are; never
// fails (bytes that are not UTF-8 are fine).
URLGUARD_EXPORT FoundUrls ExtractUrls(std::string_view text);

}  // namespace urlguard

#endif  // URLGUARD_TEXT_H_
