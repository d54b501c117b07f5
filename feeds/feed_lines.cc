// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The line feed formats (contracts in feed_lines.h; formats in docs/feeds.md).
#include "feeds/feed_lines.h"

#include <cassert>

#include "core/ascii.h"
#include "feeds/feed_values.h"

namespace urlguard {
namespace {

// plain and openphish: one value per line, '#' comment lines, an optional " # comment" after the value.
void ParsePlainLine(std::string_view line, uint64_t number, std::string_view threat, bool url_only,
                    FeedSink* sink) {
  std::string_view text = TrimAsciiSpace(line);
  if (text.empty() || text.front() == '#') {
    sink->Comment();
    return;
  }
  std::string_view rest = text;
  std::string_view value = NextAsciiToken(&rest);
  rest = TrimAsciiSpace(rest);
  if (!rest.empty() && rest.front() != '#') {
    std::string message = "unexpected text after the value: " + QuoteBytes(rest);
    if (IsHostsAddress(value)) message += " (is this a hosts file? use hosts:PATH)";
    sink->Error(number, std::move(message));
    return;
  }
  if (url_only && value.find("://") == std::string_view::npos) {
    sink->Error(number, QuoteBytes(value) + " is not a URL (no scheme)");
    return;
  }
  sink->Add(value, threat, number);
}

// hosts: "ADDRESS NAME [NAME...] [# comment]", or a lone NAME.
void ParseHostsLine(std::string_view line, uint64_t number, FeedSink* sink) {
  // Spec (hosts(5)): "Text from a '#' character until the end of the line is a comment".
  size_t hash = line.find('#');
  if (hash != std::string_view::npos) line = line.substr(0, hash);
  std::string_view rest = TrimAsciiSpace(line);
  if (rest.empty()) {
    sink->Comment();
    return;
  }
  auto take_name = [&](std::string_view name) {
    if (IsSkippedHostName(name)) {
      sink->Skip();
    } else if (!IsHostNameChars(name)) {
      sink->Error(number, QuoteBytes(name) + " is not a host name");
    } else {
      sink->Add(name, "", number);
    }
  };
  std::string_view first = NextAsciiToken(&rest);
  if (IsHostsAddress(first)) {
    bool any = false;
    for (std::string_view name = NextAsciiToken(&rest); !name.empty(); name = NextAsciiToken(&rest)) {
      any = true;
      take_name(name);
    }
    if (!any) sink->Error(number, "address " + QuoteBytes(first) + " without a host name");
    return;
  }
  if (TrimAsciiSpace(rest).empty()) {  // a domains-only line, as many "hosts" lists also publish
    take_name(first);
    return;
  }
  sink->Error(number, QuoteBytes(first) + " is not an IP address (expected \"ADDRESS NAME...\")");
}

// Adblock Plus: only "||domain^" (optionally "$all", "$document", "$doc", "$important") is a blocklist
// entry; every other rule kind narrows or changes what is blocked and is counted as unsupported.
void ParseAbpLine(std::string_view line, uint64_t number, FeedSink* sink) {
  std::string_view text = TrimAsciiSpace(line);
  // Spec (ABP "How to write filters"): "Any rule that starts with an exclamation mark is a comment";
  // "[Adblock Plus 2.0]" is the header line.
  if (text.empty() || text.front() == '!' || (text.front() == '[' && text.back() == ']') || text == "#" ||
      StartsWith(text, "# ")) {
    sink->Comment();
    return;
  }
  // Spec: "||" matches the domain and its subdomains at any scheme; '^' is a separator placeholder.
  if (!StartsWith(text, "||")) {
    sink->Unsupported();  // exceptions "@@", cosmetic "##", regexes, "|anchored", plain substrings
    return;
  }
  std::string_view body = text.substr(2);
  size_t caret = body.find('^');
  if (caret == std::string_view::npos) {
    sink->Unsupported();  // "||example.com" also matches "example.community": not a domain rule
    return;
  }
  std::string_view domain = body.substr(0, caret);
  std::string_view after = body.substr(caret + 1);
  if (!after.empty()) {
    if (after.front() != '$') {
      sink->Unsupported();  // "^|", "^*", "^/path": a URL pattern
      return;
    }
    std::string_view options = after.substr(1);
    while (true) {
      size_t comma = options.find(',');
      std::string_view option = options.substr(0, comma);
      if (!EqualsIgnoreCase(option, "all") && !EqualsIgnoreCase(option, "document") &&
          !EqualsIgnoreCase(option, "doc") && !EqualsIgnoreCase(option, "important")) {
        sink->Unsupported();  // "$third-party", "$script", "$domain=...": a narrower rule
        return;
      }
      if (comma == std::string_view::npos) break;
      options.remove_prefix(comma + 1);
    }
  }
  if (!IsHostNameChars(domain)) {
    sink->Unsupported();  // wildcards, paths, ports
    return;
  }
  if (domain.find('.') == std::string_view::npos) {
    sink->Skip();  // "||zip^": a whole top-level domain, never an entry
    return;
  }
  sink->Add(domain, "", number);
}

// Spamhaus DROP text: "1.10.16.0/20 ; SBL256894", ';' starts a comment.
void ParseDropTxtLine(std::string_view line, uint64_t number, FeedSink* sink) {
  std::string_view text = TrimAsciiSpace(line);
  if (text.empty() || text.front() == ';' || text.front() == '#') {
    sink->Comment();
    return;
  }
  std::string_view rest = TrimAsciiSpace(text.substr(0, text.find(';')));
  std::string_view value = NextAsciiToken(&rest);
  if (!TrimAsciiSpace(rest).empty()) {
    sink->Error(number, "unexpected text after the range: " + QuoteBytes(TrimAsciiSpace(rest)));
    return;
  }
  if (!IsCidr(value)) {
    sink->Error(number, QuoteBytes(value) + " is not a CIDR range");
    return;
  }
  sink->Add(value, kThreatMaliciousNetwork, number);
}

}  // namespace

void ParseLineFeed(FeedFormat format, std::string_view data, FeedSink* sink) {
  switch (format) {
    case FeedFormat::kPlain:
      ForEachFeedLine(data, sink,
                      [&](std::string_view l, uint64_t n) { ParsePlainLine(l, n, "", false, sink); });
      return;
    case FeedFormat::kOpenphish:
      ForEachFeedLine(data, sink, [&](std::string_view l, uint64_t n) {
        ParsePlainLine(l, n, kThreatPhishing, true, sink);
      });
      return;
    case FeedFormat::kHosts:
      ForEachFeedLine(data, sink, [&](std::string_view l, uint64_t n) { ParseHostsLine(l, n, sink); });
      return;
    case FeedFormat::kAbp:
      ForEachFeedLine(data, sink, [&](std::string_view l, uint64_t n) { ParseAbpLine(l, n, sink); });
      return;
    case FeedFormat::kDropTxt:
      ForEachFeedLine(data, sink, [&](std::string_view l, uint64_t n) { ParseDropTxtLine(l, n, sink); });
      return;
    default:
      assert(false && "ParseLineFeed: not a line format");
  }
}

}  // namespace urlguard
