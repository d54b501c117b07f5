// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// URL extraction from free text: finds every link a person could have meant in a chat or forum message
// ("see https://x.com/a", "evil.com", "www.shop.example", "hxxp://evil[.]com") and reports each with its
// byte span in the text and a normalized URL string to hand to Canonicalize() (url/url_canon.h). Pure
// computation: no checking, no I/O. Used by `urlguard scan` and by backends that check every message.
//
// Design: one left-to-right pass over the bytes with a 128-entry class table; no regex library (std::regex
// is orders of magnitude too slow). Two kinds of anchors start a match:
//   - a scheme separator ("://", or defanged "[:]//", "(:)//", "{:}//", "[://]") preceded by a known
//     scheme, looked up backwards over at most 5 bytes;
//   - a word start (a letter or digit after a boundary) from which a host is scanned forwards.
// Every failed attempt resumes after the bytes it examined, so the work is linear in the input size
// whatever the bytes are (the fuzz target and the hostile-input tests hold it to that).
//
// ---- What is found -------------------------------------------------------------------------------
// 1. Scheme URLs: http://, https://, ftp://, ws://, wss:// (scheme case-insensitive), any host: a name
//    (any labels, no TLD check: "http://intranet/x" is found), an IPv4 address, or a bracketed IPv6 address
//    ("http://[2001:db8::1]/"). Userinfo ("http://bob@evil.com/") is kept; the canonicalizer drops it.
//    A known scheme glued to a word is still found ("xhttp://evil.com" gives "http://evil.com"): hiding a
//    link behind a prefix must not hide it from the checker. Other schemes are not reported as such,
//    but the host after their "//" can still be found as a bare domain ("ssh://evil.com" gives
//    "http://evil.com").
//    Browser spellings (WHATWG URL Standard) are found too: http, https, ws, wss or ftp starting a word,
//    then ':' and any run of '/' and '\' ("http:\\evil.com\", "http:/evil.com", "http:///evil.com",
//    "http:evil.com"); with no slash at all the host needs a dot, a leading digit or a percent-escape, so
//    "use http:the default" is prose. The host follows the last '@' of the userinfo; '\' starts a path;
//    full-width and ideographic dots (U+FF0E, U+3002, U+FF61) separate labels after a scheme; a soft
//    hyphen (U+00AD) stays inside a label. docs/url-parsing.md.
// 2. "www." links without a scheme: at least three labels, the last one a known TLD or at least two
//    bytes and not all digits (so a TLD newer than the table still works). Normalized to "http://www...".
// 3. Bare domains: at least two labels, the last one a TLD of the IANA root zone (IsKnownTld(), a table
//    generated from the ICANN section of the Public Suffix List). "readme.txt", "v1.2.3", "image.png",
//    "e.g", "i.e.", "3.14" and "10.30" fail that test.
//    File-like TLDs policy: some real TLDs are mostly seen as file extensions in chat
//    (IsFileLikeTld(): app cc java md mov pub py rs sh so zip). A bare domain ending in one of them is
//    reported only with further evidence that it is a link: a path or query after the host
//    ("evil.zip/x"), a "www." first label, or a defanged dot ("evil[.]zip"); a port or fragment is not
//    evidence ("main.py:42" is a line number, "utils.py#L20" an anchor). So "main.py", "README.md",
//    "photos.zip" and "Xcode.app" are not reported; "https://evil.zip" always is.
//    Country domains that are also extensions (.pl .in .am .ac .ps .ai .io ...) are NOT in that list:
//    sites under them are far more common in messages than the files, and a false positive only costs
//    one lookup while a miss lets a link through.
// 4. Bare IPv4 hosts ("1.2.3.4/x", "10.0.0.1:8080"): four decimal parts 0..255, reported only with a
//    path, query, fragment or port, or when defanged ("1.2.3[.]4"): a bare "1.2.3.4" is as likely a
//    version number. Bare IPv6 is not looked for.
// 5. Defanged forms, reported with defanged = true and refanged in the normalized string: schemes
//    hxxp hxxps h**p h**ps hxtp hxtps htxp htxps ttp ttps fxp; separators [:]// (:)// {:}// [://];
//    dots [.] (.) {.} [dot] (dot) {dot} (any case), each optionally with one space on either side
//    ("evil [.] com"). Bracketed dots in the path are refanged only when the scheme, separator or host
//    was defanged ("hxxp://evil[.]com/a[.]php" gives "http://evil.com/a.php"); otherwise the path is
//    kept byte for byte ("https://x.com/a[.]b").
//
// ---- What is not a URL -----------------------------------------------------------------------------
// - Email addresses: a host immediately followed by '@' is the local part of an email address
//   ("bob@evil.com", "first.last@evil.com"); the address is skipped whole, domain included. (A scheme URL
//   with userinfo is a URL.) Mentions ("@evil.com") are skipped too: '@' is not a word boundary.
// - A bare host never starts right after a letter, a digit, '@' or a dot between labels: a word is not
//   split into a shorter domain. Other bytes are boundaries: "src/evil.com", "--evil.com" and
//   "_evil.com_" (markdown emphasis; trailing '_' are dropped from a bare host) give "evil.com".
// - Sentences missing the space after a full stop can look like domains ("ok.cool": .cool is a TLD).
//   They are reported; such a false positive costs one lookup.
//
// ---- Boundaries ------------------------------------------------------------------------------------
// - A URL stops at ASCII whitespace and controls, '<', '>', '"', '`', at invalid UTF-8, at Unicode
//   spaces, quotes and a few CJK/full-width punctuation marks and emoji (IsPathTerminator in the .cc),
//   and at "](" (the middle of a markdown link "[text](url)").
// - A host ends at any byte that cannot be in a label (ASCII letters, digits, '-', '_', UTF-8 letters;
//   and '%' after a scheme), so "evil.com's", "<evil.com>" and "(evil.com)" give "evil.com". A host also
//   ends where the script changes between a space-less script (CJK, kana, Hangul, Thai, Lao, Khmer,
//   Myanmar) and any other ("詳しくはexample.comを見て" gives "example.com").
// - Trailing . , ; : ! ? ' " * are stripped, and a trailing ) ] } unless it balances an opening one
//   inside the URL after the host ("https://en.wikipedia.org/wiki/Foo_(bar)" keeps its ')').
// - Non-ASCII hosts are kept as UTF-8 ("http://münchen.de/"); only ASCII letters are case-folded for
//   the TLD test (an upper-case non-ASCII TLD is not recognized).
//
// ---- Caps ------------------------------------------------------------------------------------------
// - Only the first kMaxExtractInputBytes of the text are examined; a longer text sets truncated.
// - At most kMaxUrlsPerText URLs are reported; when one more is found, extraction stops there and
//   truncated is set.
// - A normalized URL longer than kMaxExtractedUrlBytes (the canonicalizer's kMaxUrlBytes) is cut to that
//   length (at a UTF-8 character boundary) and reported with cut = true; its span still covers the whole
//   URL in the text. Cut, not skipped: skipping would let a sender hide a malicious host behind a long
//   path, while the cut URL keeps its scheme, host and path prefix, which is what the lookup
//   expressions are made of.
//
// Thread safety: all functions are pure; ExtractUrls() writes only to *out. Use one ExtractResult per
// thread. Allocation: ExtractUrls() reuses the capacity of *out, so a caller that keeps one result per
// thread allocates nothing once the result has held as many URLs (and URL bytes) as the current text.
#ifndef URLGUARD_URL_URL_EXTRACT_H_
#define URLGUARD_URL_URL_EXTRACT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "url/url_canon.h"

namespace urlguard {

// Bytes of a text that are examined; the rest is ignored and ExtractResult::truncated is set.
constexpr size_t kMaxExtractInputBytes = size_t{1} << 20;  // 1 MiB
// URLs reported per text; finding one more sets ExtractResult::truncated and stops the scan.
constexpr size_t kMaxUrlsPerText = 1000;
// Longest normalized URL; longer ones are cut to this length and flagged (ExtractedUrl::cut). Equal to the
// canonicalizer's input cap so that every reported URL is accepted by Canonicalize() on length.
constexpr size_t kMaxExtractedUrlBytes = kMaxUrlBytes;

// One URL found in a text.
struct ExtractedUrl {
  size_t begin = 0;  // byte offset of the URL's first byte in the text
  size_t end = 0;    // one past its last byte; begin < end <= min(text size, kMaxExtractInputBytes)
  // The normalized URL: ExtractResult::url_text.substr(url_offset, url_size) (see ExtractResult::url()).
  // It is "scheme://" + the URL without its scheme and the '/' and '\' after it, with the scheme lower-cased
  // and refanged ("http" for bare domains and www. links), defanged dots and separators replaced, everything
  // else byte for byte (host case, UTF-8 hosts, percent-escapes and port are left to the canonicalizer).
  size_t url_offset = 0;
  size_t url_size = 0;
  bool defanged = false;    // the text used a defanged scheme, separator or dot
  bool had_scheme = false;  // the text had an explicit (possibly defanged) scheme
  bool cut = false;         // the normalized URL was cut at kMaxExtractedUrlBytes
};

// The URLs found in one text, in text order, with non-overlapping spans.
struct ExtractResult {
  std::vector<ExtractedUrl> urls;
  std::string url_text;  // the normalized URLs back to back; index with ExtractedUrl::url_offset/url_size
  // True when the text was longer than kMaxExtractInputBytes or held more than kMaxUrlsPerText URLs: the
  // URLs after scanned_bytes were not looked for.
  bool truncated = false;
  // How many leading bytes of the text were examined: the text size (at most kMaxExtractInputBytes), or,
  // when the URL cap stopped the scan, the begin of the first URL not reported.
  size_t scanned_bytes = 0;

  // The normalized URL of urls[i]. Valid until the next ExtractUrls() on this result. i < urls.size().
  std::string_view url(size_t i) const {
    return std::string_view(url_text).substr(urls[i].url_offset, urls[i].url_size);
  }
};

// Finds the URLs in `text` (any bytes: invalid UTF-8, NULs and binary are fine and never crash), as
// described at the top of this file. Clears *out first and reuses its capacity. Never fails: a text with
// no URL gives an empty list; caps set out->truncated.
void ExtractUrls(std::string_view text, ExtractResult* out);

// True when `lowercase_label` is a top-level domain of the IANA root zone as of the compiled-in table
// (url/tld_table.inc, ICANN section of the Public Suffix List): ASCII labels in lower case ("com",
// "xn--p1ai"), IDN TLDs also in UTF-8 ("рф"). The caller lower-cases ASCII; "COM" is false.
bool IsKnownTld(std::string_view lowercase_label);

// True for the TLDs that are also common file extensions (app cc java md mov pub py rs sh so zip); a
// bare domain ending in one needs evidence to be reported (see "File-like TLDs policy" above). Each is a
// known TLD (checked at compile time).
bool IsFileLikeTld(std::string_view lowercase_label);

}  // namespace urlguard

#endif  // URLGUARD_URL_URL_EXTRACT_H_
