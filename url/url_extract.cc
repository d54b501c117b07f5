// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// URL extraction from free text. What is found and every policy are in url_extract.h; this file is the
// scanner. Structure:
//   - a 128-entry class table for ASCII bytes and a strict UTF-8 decoder with three coarse code point
//     classifiers (host letter, space-less script, URL terminator);
//   - Extractor::Run(), the single left-to-right pass: scheme separators are anchors looked up backwards
//     (at most kMaxSchemeSpelling bytes), word starts try a bare host forwards;
//   - ScanHost() (labels and dots, defanged dots included), ParseAfterHost() (port, path, trailing
//     punctuation), and the builder of the normalized string.
// Linear time: each attempt either reports a URL and continues after it, or continues after the bytes it
// examined (a failed host resumes at the host's end, an email after its domain, a scheme separator after
// itself). Trailing-punctuation stripping keeps running bracket counts instead of recounting.
#include "url/url_extract.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <iterator>

namespace urlguard {
namespace {

// ---- TLD tables ------------------------------------------------------------------------------------

constexpr std::string_view kTlds[] = {
#include "url/tld_table.inc"
};

constexpr bool StrictlyIncreasing(const std::string_view* begin, const std::string_view* end) {
  return std::adjacent_find(begin, end, [](std::string_view a, std::string_view b) { return !(a < b); }) ==
         end;
}
// IsKnownTld() binary-searches: the generator sorts with LC_ALL=C, which is the order of string_view.
static_assert(StrictlyIncreasing(std::begin(kTlds), std::end(kTlds)), "tld_table.inc must be sorted");
static_assert(std::size(kTlds) > 1000, "tld_table.inc looks truncated");

// TLDs that are mostly file extensions in messages; see "File-like TLDs policy" in the header.
constexpr std::string_view kFileLikeTlds[] = {"app", "cc", "java", "md", "mov", "pub",
                                              "py",  "rs", "sh",   "so", "zip"};
static_assert(StrictlyIncreasing(std::begin(kFileLikeTlds), std::end(kFileLikeTlds)));

constexpr bool AllFileLikeTldsAreKnown() {
  for (std::string_view t : kFileLikeTlds) {
    if (!std::binary_search(std::begin(kTlds), std::end(kTlds), t)) return false;
  }
  return true;
}
static_assert(AllFileLikeTldsAreKnown(), "every file-like TLD must be a real TLD");

// Longest TLD label looked up (bytes); longer last labels are not TLDs (the longest real one is 24).
constexpr size_t kMaxTldBytes = 63;

// ---- byte classes ----------------------------------------------------------------------------------

enum : uint8_t {
  kAlnum = 1 << 0,            // ASCII letter or digit
  kLabel = 1 << 1,            // may be in a host label: letter, digit, '-', '_'
  kUserinfo = 1 << 2,         // may be in "user:password" before '@' after a scheme
  kUrlEnd = 1 << 3,           // ends a URL: whitespace, controls, '<', '>', '"', '`'
  kTrailing = 1 << 4,         // stripped from the end of a URL
  kAnchor = 1 << 5,           // may begin a scheme separator: ':', '[', '(', '{'
  kSchemeChar = 1 << 6,       // may be in a (defanged) scheme spelling: letter, '*'
  kNoBoundaryAfter = 1 << 7,  // a host does not start right after it: letter, digit, '@'
};

constexpr bool In(std::string_view set, int c) { return set.find(static_cast<char>(c)) != set.npos; }

constexpr std::array<uint8_t, 128> MakeAsciiClasses() {
  std::array<uint8_t, 128> t{};
  for (int c = 0; c < 128; ++c) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    const bool digit = c >= '0' && c <= '9';
    uint8_t v = 0;
    if (alpha || digit) v |= kAlnum | kLabel | kUserinfo | kNoBoundaryAfter;
    if (c == '-') v |= kLabel | kUserinfo;
    if (c == '_') v |= kLabel | kUserinfo;
    if (c == '@') v |= kNoBoundaryAfter;
    if (In(".%:!$&'()*+,;=~", c)) v |= kUserinfo;
    if (c <= 0x20 || c == 0x7F || In("<>\"`", c)) v |= kUrlEnd;
    if (In(".,;:!?'\"*", c)) v |= kTrailing;
    if (In(":[({", c)) v |= kAnchor;
    if (alpha || c == '*') v |= kSchemeChar;
    t[c] = v;
  }
  return t;
}
constexpr std::array<uint8_t, 128> kAscii = MakeAsciiClasses();

inline bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }
inline uint8_t LowerAscii(uint8_t c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }

// ---- UTF-8 -------------------------------------------------------------------------------------------

// Decodes the well-formed UTF-8 sequence of 2..4 bytes at p (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF) and returns its length; returns 0 for ASCII, a stray continuation byte or any
// ill-formed or incomplete sequence.
inline size_t DecodeUtf8(const uint8_t* p, size_t avail, uint32_t* cp) {
  const uint8_t b0 = p[0];
  auto cont = [&](size_t k) { return k < avail && (p[k] & 0xC0) == 0x80; };
  if (b0 < 0xC2) return 0;
  if (b0 < 0xE0) {
    if (!cont(1)) return 0;
    *cp = (uint32_t{b0} & 0x1F) << 6 | (p[1] & 0x3F);
    return 2;
  }
  if (b0 < 0xF0) {
    if (!cont(1) || !cont(2)) return 0;
    const uint32_t c = (uint32_t{b0} & 0x0F) << 12 | (uint32_t{p[1]} & 0x3F) << 6 | (p[2] & 0x3F);
    if (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *cp = c;
    return 3;
  }
  if (b0 < 0xF5) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    const uint32_t c = (uint32_t{b0} & 0x07) << 18 | (uint32_t{p[1]} & 0x3F) << 12 |
                       (uint32_t{p[2]} & 0x3F) << 6 | (p[3] & 0x3F);
    if (c < 0x10000 || c > 0x10FFFF) return 0;
    *cp = c;
    return 4;
  }
  return 0;
}

// Whether a non-ASCII code point may be part of a host label: letters, marks and digits of any script.
// Deliberately coarse (no Unicode tables): it excludes the blocks of punctuation, spaces, symbols,
// emoji and private use that are what actually sits next to links in messages (“quotes”, «guillemets»,
// NBSP, ellipsis, CJK full stops, emoji).
inline bool IsHostCodePoint(uint32_t cp) {
  if (cp == 0xAD) return true;  // soft hyphen: invisible, and UTS #46 maps it to nothing ("ev\u00ADil.com")
  if (cp < 0xC0) return false;  // C1 controls, NBSP, Latin-1 punctuation and symbols, soft hyphen
  if (cp == 0xD7 || cp == 0xF7) return false;        // multiplication and division signs
  if (cp == 0x1680) return false;                    // Ogham space
  if (cp >= 0x2000 && cp <= 0x2BFF) return false;    // punctuation, symbols, arrows, math, shapes
  if (cp >= 0x2E00 && cp <= 0x2E7F) return false;    // supplemental punctuation
  if (cp >= 0x3000 && cp <= 0x303F) return false;    // CJK symbols and punctuation
  if (cp >= 0xE000 && cp <= 0xF8FF) return false;    // private use
  if (cp >= 0xFE00 && cp <= 0xFE6F) return false;    // variation selectors, vertical and small forms
  if (cp == 0xFEFF) return false;                    // BOM / zero-width no-break space
  if (cp >= 0xFF00 && cp <= 0xFF0F) return false;    // full-width ! " # $ % & ' ( ) * + , - . /
  if (cp >= 0xFF1A && cp <= 0xFF20) return false;    // full-width : ; < = > ? @
  if (cp >= 0xFF3B && cp <= 0xFF40) return false;    // full-width [ \ ] ^ _ `
  if (cp >= 0xFF5B && cp <= 0xFF65) return false;    // full-width { | } ~ and CJK half-width marks
  if (cp >= 0xFFF0 && cp <= 0xFFFF) return false;    // specials
  if (cp >= 0x1F000 && cp <= 0x1FBFF) return false;  // emoji, playing cards, symbols
  if (cp >= 0xE0000) return false;                   // tags, variation selectors, private use planes
  return true;
}

// Scripts written without spaces between words (CJK, kana, Hangul, Thai, Lao, Myanmar, Khmer): a change
// between one of these and any other script is a word boundary ("はexample.comを").
inline bool IsSpacelessScript(uint32_t cp) {
  return (cp >= 0x0E00 && cp <= 0x0EFF) ||  // Thai, Lao
         (cp >= 0x1000 && cp <= 0x109F) ||  // Myanmar
         (cp >= 0x1100 && cp <= 0x11FF) ||  // Hangul Jamo
         (cp >= 0x1780 && cp <= 0x17FF) ||  // Khmer
         (cp >= 0x2E80 && cp <= 0x2FDF) ||  // CJK radicals
         (cp >= 0x3040 && cp <= 0x4DBF) ||  // kana, Bopomofo, compatibility Jamo, CJK extension A
         (cp >= 0x4E00 && cp <= 0x9FFF) ||  // CJK unified ideographs
         (cp >= 0xA960 && cp <= 0xA97F) ||  // Hangul Jamo extended A
         (cp >= 0xAC00 && cp <= 0xD7FF) ||  // Hangul syllables, Jamo extended B
         (cp >= 0xF900 && cp <= 0xFAFF) ||  // CJK compatibility ideographs
         (cp >= 0xFF66 && cp <= 0xFFDC) ||  // half-width kana and Hangul
         (cp >= 0x20000 && cp <= 0x3FFFF);  // CJK extensions B..H
}

// Whether a non-ASCII code point ends a URL's path: spaces, quotes, guillemets, the ellipsis, CJK and
// full-width sentence punctuation and brackets, emoji. Letters of every script (and most symbols) stay
// in paths: "https://ja.wikipedia.org/wiki/東京", "https://en.wikipedia.org/wiki/Mexican–American_War".
inline bool IsPathTerminator(uint32_t cp) {
  if (cp <= 0xA0) return true;  // C1 controls, NBSP
  if (cp == 0xAB || cp == 0xBB || cp == 0x1680) return true;
  if (cp >= 0x2000 && cp <= 0x200D) return true;  // spaces, zero-width space and joiners
  if (cp >= 0x2018 && cp <= 0x201F) return true;  // curly quotes
  if (cp == 0x2026 || cp == 0x2028 || cp == 0x2029 || cp == 0x202F) return true;
  if (cp == 0x2039 || cp == 0x203A || cp == 0x205F || cp == 0x2060) return true;
  if (cp >= 0x2600 && cp <= 0x27BF) return true;  // miscellaneous symbols, dingbats (emoji)
  if (cp >= 0x3000 && cp <= 0x3002) return true;  // ideographic space, comma, full stop
  if (cp >= 0x3008 && cp <= 0x3011) return true;  // CJK angle, corner and lenticular brackets
  if (cp >= 0x3014 && cp <= 0x301B) return true;  // CJK tortoise-shell and white brackets
  if (cp == 0xFE0F || cp == 0xFEFF) return true;  // emoji presentation selector, BOM
  if (cp == 0xFF01 || cp == 0xFF08 || cp == 0xFF09 || cp == 0xFF0C) return true;  // ！（），
  if (cp == 0xFF1A || cp == 0xFF1B || cp == 0xFF1F) return true;                  // ：；？
  if (cp >= 0x1F000 && cp <= 0x1FAFF) return true;                                // emoji
  return false;
}

// ---- schemes and separators ----------------------------------------------------------------------

struct SchemeSpelling {
  std::string_view spelling;  // lower case, as written in text
  std::string_view scheme;    // what it means
  bool defanged;
};
constexpr SchemeSpelling kSchemes[] = {
    {"http", "http", false},  {"https", "https", false}, {"ftp", "ftp", false},    {"hxxp", "http", true},
    {"hxxps", "https", true}, {"h**p", "http", true},    {"h**ps", "https", true}, {"hxtp", "http", true},
    {"hxtps", "https", true}, {"htxp", "http", true},    {"htxps", "https", true}, {"ttp", "http", true},
    {"ttps", "https", true},  {"fxp", "ftp", true},      {"ws", "ws", false},      {"wss", "wss", false},
};
constexpr size_t kMaxSchemeSpelling = 5;
constexpr size_t kMinSchemeSpelling = 2;

struct Separator {
  std::string_view text;
  bool defanged;
};
constexpr Separator kSeparators[] = {
    {"://", false}, {"[:]//", true}, {"(:)//", true}, {"{:}//", true}, {"[://]", true},
};

// ---- the scanner -------------------------------------------------------------------------------------

// What ScanHost() found.
struct Host {
  size_t end = 0;              // one past the host (a trailing root dot before '/' included)
  size_t labels = 0;           // number of labels
  size_t first_label_end = 0;  // end of the first label
  size_t last_begin = 0;       // the last label: [last_begin, last_end)
  size_t last_end = 0;
  bool defanged = false;  // some dot was a defanged one
  bool ipv4 = true;       // every label is 1..3 ASCII digits with a value <= 255
};

// Brackets seen in a path, to keep a closing one that balances ("wiki/Foo_(bar)").
struct Brackets {
  size_t open[3] = {};   // ( [ {
  size_t close[3] = {};  // ) ] }
};

inline int BracketIndex(uint8_t c, bool* closing) {
  switch (c) {
    case '(':
      *closing = false;
      return 0;
    case '[':
      *closing = false;
      return 1;
    case '{':
      *closing = false;
      return 2;
    case ')':
      *closing = true;
      return 0;
    case ']':
      *closing = true;
      return 1;
    case '}':
      *closing = true;
      return 2;
    default:
      return -1;
  }
}

// One URL found: spans in the text and what the normalized string is built from.
struct Match {
  size_t begin = 0;            // first byte (the scheme's, or the host's)
  size_t end = 0;              // one past the last byte
  size_t authority_begin = 0;  // after the scheme separator (userinfo starts here), or the host
  size_t host_begin = 0;
  size_t host_end = 0;
  std::string_view scheme;     // canonical scheme name
  bool host_defanged = false;  // the host has defanged dots
  bool defanged = false;       // anything was defanged: refang the path too
  bool had_scheme = false;
};

class Extractor {
 public:
  Extractor(std::string_view text, ExtractResult* out)
      : s_(reinterpret_cast<const uint8_t*>(text.data())), n_(text.size()), out_(out) {}

  // The single pass. Fills out_->urls and url_text; sets scanned_bytes and, at the URL cap, truncated.
  void Run() {
    size_t i = 0;
    size_t min_begin = 0;  // end of the last URL reported: the next one cannot start before it
    while (i < n_) {
      const uint8_t c = s_[i];
      Match m;
      if (c < 0x80) {
        const uint8_t cls = kAscii[c];
        if (cls & kAnchor) {
          bool sep_defanged = false;
          const size_t sep = SeparatorLen(i, &sep_defanged);
          if (sep > 0) {
            if (TryScheme(i, sep, sep_defanged, min_begin, &m)) {
              if (!Emit(m)) return;
              i = min_begin = m.end;
            } else {
              i += sep;  // unknown scheme or no host: what follows "//" may still be a bare host
            }
            continue;
          }
          // "http:evil.com", "http:\\evil.com\", "http:/evil.com": browsers accept any run of '/' and '\'
          // after a special scheme, none included.
          if (c == ':' && TryScheme(i, 1, /*sep_defanged=*/false, min_begin, &m, /*loose=*/true)) {
            if (!Emit(m)) return;
            i = min_begin = m.end;
            continue;
          }
        }
        if (!(cls & kAlnum)) {
          ++i;
          continue;
        }
        if (!AtBoundary(i, /*spaceless=*/false)) {
          // Inside a word: no position in the rest of this run of letters and digits is a start either.
          ++i;
          while (i < n_ && s_[i] < 0x80 && (kAscii[s_[i]] & kAlnum)) ++i;
          continue;
        }
      } else {
        bool spaceless = false;
        const size_t len = LabelCharLen(i, /*after_scheme=*/false, &spaceless);
        if (len == 0) {
          ++i;
          continue;
        }
        if (!AtBoundary(i, spaceless)) {
          i += len;
          continue;
        }
      }
      size_t resume = 0;
      if (TryBare(i, &m, &resume)) {
        if (!Emit(m)) return;
        i = min_begin = m.end;
      } else {
        assert(resume > i);
        i = resume;
      }
    }
    out_->scanned_bytes = n_;
  }

 private:
  // Byte length of the host label character at i, or 0. ASCII letters, digits, '-', '_' (and '%' after
  // a scheme: percent-escaped hosts are the canonicalizer's to decode) and well-formed UTF-8 letters.
  // *spaceless tells whether the character is of a space-less script.
  size_t LabelCharLen(size_t i, bool after_scheme, bool* spaceless) const {
    const uint8_t c = s_[i];
    if (c < 0x80) {
      *spaceless = false;
      return ((kAscii[c] & kLabel) || (after_scheme && c == '%')) ? 1 : 0;
    }
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(s_ + i, n_ - i, &cp);
    if (len == 0 || !IsHostCodePoint(cp)) return 0;
    *spaceless = IsSpacelessScript(cp);
    return len;
  }

  // Whether a host may start at i (a label character of the given script class): at the start of the
  // text, or after a byte that cannot be inside a host. A '.' is a boundary only when it is not a dot
  // between labels (". evil.com", "wait...evil.com"); a change of script class is a boundary.
  bool AtBoundary(size_t i, bool spaceless) const {
    if (i == 0) return true;
    const uint8_t p = s_[i - 1];
    if (p < 0x80) {
      if (p == '.') {
        if (i < 2) return true;
        const uint8_t pp = s_[i - 2];
        return pp == '.' || (pp < 0x80 && !(kAscii[pp] & kLabel));
      }
      if (kAscii[p] & kNoBoundaryAfter) return spaceless;
      return true;
    }
    // The previous character is not ASCII: find its first byte (at most 3 continuation bytes back).
    size_t j = i - 1;
    const size_t stop = i >= 4 ? i - 4 : 0;
    while (j > stop && (s_[j] & 0xC0) == 0x80) --j;
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(s_ + j, n_ - j, &cp);
    if (len == 0 || j + len != i || !IsHostCodePoint(cp)) return true;
    return IsSpacelessScript(cp) != spaceless;
  }

  // Length of a scheme separator at i, or 0.
  size_t SeparatorLen(size_t i, bool* defanged) const {
    const std::string_view rest(reinterpret_cast<const char*>(s_) + i, std::min<size_t>(n_ - i, 5));
    for (const Separator& sep : kSeparators) {
      if (rest.starts_with(sep.text)) {
        *defanged = sep.defanged;
        return sep.text.size();
      }
    }
    return 0;
  }

  // Length of a dot between labels at i (not reading at or past `limit`): 1 for '.', the whole token
  // for a defanged dot ("[.]", "(.)", "{.}", "[dot]", "(dot)", "{dot}", any case, with at most one space
  // on either side, which is part of the token); 0 for none.
  size_t DotLen(size_t i, size_t limit, bool* defanged) const {
    if (s_[i] == '.') {
      *defanged = false;
      return 1;
    }
    size_t j = i;
    if (s_[j] == ' ') ++j;
    if (j >= limit) return 0;
    uint8_t close = 0;
    switch (s_[j]) {
      case '[':
        close = ']';
        break;
      case '(':
        close = ')';
        break;
      case '{':
        close = '}';
        break;
      default:
        return 0;
    }
    ++j;
    if (j < limit && s_[j] == '.') {
      ++j;
    } else if (limit - j >= 3 && LowerAscii(s_[j]) == 'd' && LowerAscii(s_[j + 1]) == 'o' &&
               LowerAscii(s_[j + 2]) == 't') {
      j += 3;
    } else {
      return 0;
    }
    if (j >= limit || s_[j] != close) return 0;
    ++j;
    if (j < limit && s_[j] == ' ') ++j;
    *defanged = true;
    return j - i;
  }

  // Length of a full-width or ideographic full stop at i (U+FF0E, U+3002, U+FF61), or 0. Browsers map
  // them to '.' in a host (UTS #46), so after a scheme they separate labels; in prose "。" ends a
  // sentence, so bare hosts do not use them.
  size_t WideDotLen(size_t i) const {
    if (n_ - i < 3) return 0;
    const uint8_t a = s_[i], b = s_[i + 1], c = s_[i + 2];
    const bool wide = (a == 0xEF && b == 0xBC && c == 0x8E) || (a == 0xE3 && b == 0x80 && c == 0x82) ||
                      (a == 0xEF && b == 0xBD && c == 0xA1);
    return wide ? 3 : 0;
  }

  // Scans the labels of a host name starting at `begin`. A dot (plain or defanged) belongs to the host
  // only when a label character follows it, so "evil.com." and "wait...what" end before the dots. A
  // label ends where the script class changes, and so does the host.
  Host ScanHost(size_t begin, bool after_scheme) const {
    Host h;
    h.end = begin;
    size_t p = begin;
    for (;;) {
      const size_t label_begin = p;
      bool have_class = false;
      bool label_class = false;
      bool script_break = false;
      bool digits = true;
      unsigned value = 0;
      while (p < n_) {
        bool spaceless = false;
        const size_t len = LabelCharLen(p, after_scheme, &spaceless);
        if (len == 0) break;
        if (have_class && spaceless != label_class) {
          script_break = true;
          break;
        }
        have_class = true;
        label_class = spaceless;
        if (IsDigit(s_[p])) {
          value = std::min(value * 10 + (s_[p] - '0'), 256u);
        } else {
          digits = false;
        }
        p += len;
      }
      if (p == label_begin) break;
      h.ipv4 = h.ipv4 && digits && p - label_begin <= 3 && value <= 255;
      if (h.labels == 0) h.first_label_end = p;
      ++h.labels;
      h.last_begin = label_begin;
      h.last_end = p;
      h.end = p;
      if (script_break || p >= n_) break;
      bool dot_defanged = false;
      size_t dot = DotLen(p, n_, &dot_defanged);
      if (dot == 0 && after_scheme) dot = WideDotLen(p);
      if (dot == 0) break;
      const size_t next = p + dot;
      bool unused = false;
      if (next < n_ && LabelCharLen(next, after_scheme, &unused) > 0) {
        h.defanged = h.defanged || dot_defanged;
        p = next;
        continue;
      }
      // Spec (RFC 1034 3.1): a trailing dot names the root; "evil.com./x" keeps it, and its path.
      if (!dot_defanged && next < n_ && s_[next] == '/') h.end = next;
      break;
    }
    return h;
  }

  // Scans a bracketed IPv6 literal at b ('['); returns one past its ']', or 0 when it is not one. The
  // canonicalizer validates the address; this only finds its extent (at most 64 bytes, two colons).
  size_t ScanIpv6(size_t b) const {
    size_t colons = 0;
    size_t q = b + 1;
    while (q < n_ && q - b <= 64) {
      const uint8_t c = s_[q];
      if (c == ':') {
        ++colons;
      } else if (!(c < 0x80 && ((kAscii[c] & kAlnum) || c == '.' || c == '%'))) {
        break;
      }
      ++q;
    }
    return (q < n_ && s_[q] == ']' && colons >= 2) ? q + 1 : 0;
  }

  // The part after the host: an optional ":port" (digits), then a path, query or fragment when one of
  // '/', '?', '#' follows. Returns the end of the URL after trailing punctuation is stripped; never less
  // than `host_end`. *path_begin is set to where the path, query or fragment begins (after the port).
  size_t ParseAfterHost(size_t host_end, size_t* path_begin, bool backslash_path = false) const {
    size_t q = host_end;
    if (q + 1 < n_ && s_[q] == ':' && IsDigit(s_[q + 1])) {
      q += 2;
      while (q < n_ && IsDigit(s_[q])) ++q;
    }
    *path_begin = q;
    if (q >= n_ || (s_[q] != '/' && s_[q] != '?' && s_[q] != '#' && !(backslash_path && s_[q] == '\\'))) {
      return q;
    }
    Brackets brackets;
    while (q < n_) {
      const uint8_t c = s_[q];
      if (c < 0x80) {
        if (kAscii[c] & kUrlEnd) break;
        // "[text](url)": a path does not run from the link text into the link.
        if (c == ']' && q + 1 < n_ && s_[q + 1] == '(') break;
        bool closing = false;
        const int k = BracketIndex(c, &closing);
        if (k >= 0) ++(closing ? brackets.close[k] : brackets.open[k]);
        ++q;
        continue;
      }
      uint32_t cp = 0;
      const size_t len = DecodeUtf8(s_ + q, n_ - q, &cp);
      if (len == 0 || IsPathTerminator(cp)) break;
      q += len;
    }
    // Strip trailing punctuation, and a closing bracket that has no opening one left in the path.
    while (q > host_end) {
      const uint8_t c = s_[q - 1];
      if (c >= 0x80) break;
      if (kAscii[c] & kTrailing) {
        --q;
        continue;
      }
      bool closing = false;
      const int k = BracketIndex(c, &closing);
      if (k >= 0 && closing && brackets.close[k] > brackets.open[k]) {
        --brackets.close[k];
        --q;
        continue;
      }
      break;
    }
    return q;
  }

  // Looks for a known scheme spelling that ends at the separator at `sep_pos` and begins at or after
  // `min_begin`, longest first (so "https" wins over "ttps"); nullptr when there is none.
  const SchemeSpelling* FindSchemeBefore(size_t sep_pos, size_t min_begin, size_t* scheme_begin) const {
    size_t avail = 0;
    while (avail < kMaxSchemeSpelling && sep_pos - avail > min_begin && s_[sep_pos - avail - 1] < 0x80 &&
           (kAscii[s_[sep_pos - avail - 1]] & kSchemeChar)) {
      ++avail;
    }
    char lower[kMaxSchemeSpelling];
    for (size_t k = avail; k >= kMinSchemeSpelling; --k) {
      for (size_t j = 0; j < k; ++j) lower[j] = static_cast<char>(LowerAscii(s_[sep_pos - k + j]));
      const std::string_view candidate(lower, k);
      for (const SchemeSpelling& scheme : kSchemes) {
        if (scheme.spelling == candidate) {
          *scheme_begin = sep_pos - k;
          return &scheme;
        }
      }
    }
    return nullptr;
  }

  // A scheme URL whose separator ("://" or a defanged one) is at sep_pos, sep_len bytes long. With
  // `loose`, the separator is a lone ':' (sep_len 1) and the scheme must be a real one (not defanged)
  // that starts a word: "http:evil.com", "http:\\evil.com\". Without slashes the host must have a dot,
  // start with a digit or hold a percent-escape (an escaped dot), so prose like "http:the default" is
  // not a URL.
  bool TryScheme(size_t sep_pos, size_t sep_len, bool sep_defanged, size_t min_begin, Match* m,
                 bool loose = false) const {
    size_t scheme_begin = 0;
    const SchemeSpelling* scheme = FindSchemeBefore(sep_pos, min_begin, &scheme_begin);
    if (scheme == nullptr) return false;
    if (loose && (scheme->defanged || (scheme_begin > 0 && s_[scheme_begin - 1] < 0x80 &&
                                       (kAscii[s_[scheme_begin - 1]] & kNoBoundaryAfter)))) {
      return false;
    }
    size_t authority = sep_pos + sep_len;
    // WHATWG URL Standard, special authority ignore slashes state: "If c is neither U+002F (/) nor
    // U+005C (\), then set state to authority state and decrease pointer by 1." So "http:///evil.com"
    // and "http:\\evil.com" reach the same host.
    const size_t slashes_begin = authority;
    if (!sep_defanged) {
      while (authority < n_ && (s_[authority] == '/' || s_[authority] == '\\')) ++authority;
    }
    const bool no_slashes = loose && authority == slashes_begin;
    // Userinfo: "user:password@" before the host; the host starts after the last '@' (the standard's
    // authority state), so "http://a@b@evil.com" is evil.com. Its bytes cannot include '/', so this never
    // scans past the next scheme separator.
    size_t q = authority;
    size_t host_begin = authority;
    while (q < n_ && s_[q] < 0x80 && ((kAscii[s_[q]] & kUserinfo) || s_[q] == '@')) {
      if (s_[q] == '@') host_begin = q + 1;
      ++q;
    }
    size_t host_end = 0;
    bool host_defanged = false;
    if (host_begin < n_ && s_[host_begin] == '[') {
      host_end = ScanIpv6(host_begin);
      if (host_end == 0) return false;
    } else {
      const Host h = ScanHost(host_begin, /*after_scheme=*/true);
      if (h.labels == 0) return false;
      if (no_slashes && h.labels < 2 && !IsDigit(s_[host_begin]) &&
          std::find(s_ + host_begin, s_ + h.end, '%') == s_ + h.end) {
        return false;
      }
      host_end = h.end;
      host_defanged = h.defanged;
    }
    size_t path_begin = 0;
    m->begin = scheme_begin;
    m->end = ParseAfterHost(host_end, &path_begin, /*backslash_path=*/!scheme->defanged);
    m->authority_begin = authority;
    m->host_begin = host_begin;
    m->host_end = host_end;
    m->scheme = scheme->scheme;
    m->host_defanged = host_defanged;
    m->defanged = scheme->defanged || sep_defanged || host_defanged;
    m->had_scheme = true;
    return true;
  }

  // A bare domain, www. link or bare IPv4 host at `start` (a label character after a boundary). On a
  // miss, *resume is where the scan continues: after the host, or after an email address's domain.
  bool TryBare(size_t start, Match* m, size_t* resume) const {
    const Host h = ScanHost(start, /*after_scheme=*/false);
    *resume = std::max(h.end, start + 1);
    if (h.labels == 0) return false;
    if (h.end < n_ && s_[h.end] == '@') {
      // An email address: skip it whole, its domain included.
      const Host domain = h.end + 1 < n_ ? ScanHost(h.end + 1, false) : Host{};
      *resume = domain.labels > 0 ? domain.end : h.end + 1;
      return false;
    }
    if (h.labels < 2) return false;
    // Underscores that end the host are markdown emphasis ("_evil.com_"): no TLD has one.
    size_t host_end = h.end;
    size_t last_end = h.last_end;
    if (host_end == last_end) {
      while (last_end > h.last_begin && s_[last_end - 1] == '_') --last_end;
      host_end = last_end;
    }
    const bool ipv4 = h.labels == 4 && h.ipv4;
    const bool www = h.labels >= 3 && h.first_label_end - start == 3 && LowerAscii(s_[start]) == 'w' &&
                     LowerAscii(s_[start + 1]) == 'w' && LowerAscii(s_[start + 2]) == 'w';
    char buffer[kMaxTldBytes];
    const size_t tld_size = last_end - h.last_begin;
    std::string_view tld;
    if (tld_size <= kMaxTldBytes) {
      for (size_t j = 0; j < tld_size; ++j) buffer[j] = static_cast<char>(LowerAscii(s_[h.last_begin + j]));
      tld = std::string_view(buffer, tld_size);
    }
    const bool known = IsKnownTld(tld);
    if (!ipv4 && !known) {
      // A www. link accepts any TLD-shaped last label, so TLDs newer than the table still work.
      const bool tld_shaped =
          tld.size() >= 2 && !std::all_of(tld.begin(), tld.end(), [](char c) { return IsDigit(c); });
      if (!(www && tld_shaped)) return false;
    }
    size_t path_begin = 0;
    const size_t end = ParseAfterHost(host_end, &path_begin);
    // Evidence that a host is a link. A port is evidence for an address ("10.0.0.1:8080") but not for a
    // file name ("main.py:42" is a line number), nor is a fragment ("utils.py#L20").
    const bool has_path = end > path_begin && s_[path_begin] != '#';
    if (ipv4 && !(end > host_end || h.defanged)) return false;
    if (!ipv4 && known && IsFileLikeTld(tld) && !(has_path || h.defanged || www)) return false;
    m->begin = start;
    m->end = end;
    m->authority_begin = start;
    m->host_begin = start;
    m->host_end = host_end;
    m->scheme = "http";
    m->host_defanged = h.defanged;
    m->defanged = h.defanged;
    m->had_scheme = false;
    return true;
  }

  // Appends text [b, e) to the URL that starts at url_text[url_start], replacing defanged dots by '.'
  // when `refang`; stops once the URL is longer than kMaxExtractedUrlBytes (the caller cuts it).
  void Append(size_t b, size_t e, bool refang, size_t url_start) {
    std::string& t = out_->url_text;
    const size_t limit = url_start + kMaxExtractedUrlBytes + 1;
    if (!refang) {
      if (t.size() < limit)
        t.append(reinterpret_cast<const char*>(s_) + b, std::min(e - b, limit - t.size()));
      return;
    }
    while (b < e && t.size() < limit) {
      const uint8_t c = s_[b];
      if (c == ' ' || c == '[' || c == '(' || c == '{') {
        bool defanged = false;
        const size_t len = DotLen(b, e, &defanged);
        if (len > 0 && defanged) {
          t.push_back('.');
          b += len;
          continue;
        }
      }
      t.push_back(static_cast<char>(c));
      ++b;
    }
  }

  // Reports m, or, when kMaxUrlsPerText are already reported, marks the result truncated and returns
  // false (the scan stops).
  bool Emit(const Match& m) {
    assert(m.begin < m.end && m.end <= n_);
    if (out_->urls.size() >= kMaxUrlsPerText) {
      out_->truncated = true;
      out_->scanned_bytes = m.begin;
      return false;
    }
    std::string& t = out_->url_text;
    const size_t url_start = t.size();
    t.append(m.scheme);
    t.append("://");
    Append(m.authority_begin, m.host_begin, false, url_start);
    Append(m.host_begin, m.host_end, m.host_defanged, url_start);
    Append(m.host_end, m.end, m.defanged, url_start);
    ExtractedUrl& u = out_->urls.emplace_back();
    u.begin = m.begin;
    u.end = m.end;
    u.url_offset = url_start;
    u.url_size = t.size() - url_start;
    u.defanged = m.defanged;
    u.had_scheme = m.had_scheme;
    if (u.url_size > kMaxExtractedUrlBytes) {
      // Cut at a character boundary: back up over continuation bytes of a character cut in two.
      size_t k = kMaxExtractedUrlBytes;
      for (int back = 0; back < 3 && (static_cast<uint8_t>(t[url_start + k]) & 0xC0) == 0x80; ++back) --k;
      t.resize(url_start + k);
      u.url_size = k;
      u.cut = true;
    }
    return true;
  }

  const uint8_t* s_;
  size_t n_;
  ExtractResult* out_;
};

}  // namespace

bool IsKnownTld(std::string_view lowercase_label) {
  return !lowercase_label.empty() && std::binary_search(std::begin(kTlds), std::end(kTlds), lowercase_label);
}

bool IsFileLikeTld(std::string_view lowercase_label) {
  return std::binary_search(std::begin(kFileLikeTlds), std::end(kFileLikeTlds), lowercase_label);
}

void ExtractUrls(std::string_view text, ExtractResult* out) {
  out->urls.clear();
  out->url_text.clear();
  out->truncated = text.size() > kMaxExtractInputBytes;
  out->scanned_bytes = 0;
  Extractor(text.substr(0, kMaxExtractInputBytes), out).Run();
}

}  // namespace urlguard
