// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/framing.h"

#include <string>

#include "http/listen_address.h"
#include "http/request.h"

namespace urlguard {

namespace {

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

FramingVerdict CheckFraming(const std::vector<std::pair<std::string_view, std::string_view>>& headers) {
  int content_lengths = 0, transfer_encodings = 0;
  bool bad_length = false, bad_coding = false;
  for (const auto& [name, value] : headers) {
    if (EqualsIgnoreCase(name, "Content-Length")) {
      ++content_lengths;
      if (!AllDigits(TrimOws(value))) bad_length = true;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      ++transfer_encodings;
      if (!EqualsIgnoreCase(TrimOws(value), "chunked")) bad_coding = true;
    }
  }
  if (content_lengths > 1) return FramingVerdict::kDuplicateContentLength;
  if (bad_length) return FramingVerdict::kBadContentLength;
  if (content_lengths > 0 && transfer_encodings > 0) return FramingVerdict::kContentLengthWithTransferEncoding;
  if (transfer_encodings > 1 || bad_coding) return FramingVerdict::kBadTransferEncoding;
  return FramingVerdict::kOk;
}

const char* FramingVerdictText(FramingVerdict verdict) {
  switch (verdict) {
    case FramingVerdict::kOk:
      return "ok";
    case FramingVerdict::kDuplicateContentLength:
      return "more than one Content-Length";
    case FramingVerdict::kBadContentLength:
      return "malformed Content-Length";
    case FramingVerdict::kContentLengthWithTransferEncoding:
      return "both Content-Length and Transfer-Encoding";
    case FramingVerdict::kBadTransferEncoding:
      return "unsupported Transfer-Encoding";
  }
  return "bad framing";
}

bool IsAllowedLoopbackHost(std::string_view host_header, int port) {
  std::string_view host = TrimOws(host_header), port_text;
  if (!host.empty() && host[0] == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    port_text = host.substr(close + 1);
    host = host.substr(1, close - 1);
    if (host.find(':') == std::string_view::npos) return false;  // brackets are for IPv6 only
    if (!port_text.empty()) {
      if (port_text[0] != ':') return false;
      port_text.remove_prefix(1);
      if (port_text.empty()) return false;
    }
  } else {
    const size_t colon = host.find(':');
    if (colon != std::string_view::npos) {
      port_text = host.substr(colon + 1);
      host = host.substr(0, colon);
      if (port_text.empty()) return false;
    }
    if (host.find(':') != std::string_view::npos) return false;  // unbracketed IPv6
  }
  int host_port = 80;
  if (!port_text.empty()) {
    if (!AllDigits(port_text) || port_text.size() > 5) return false;
    host_port = std::stoi(std::string(port_text));
  }
  if (host_port != port) return false;
  return EqualsIgnoreCase(host, "localhost") || IsNumericLoopbackAddress(host);
}

namespace {

// `gap` is 1 to max_nuls NULs and at least min_nuls.
bool IsLineEnds(std::string_view gap, size_t min_nuls, size_t max_nuls) {
  if (gap.size() < min_nuls || gap.size() > max_nuls) return false;
  for (char c : gap) {
    if (c != '\0') return false;
  }
  return true;
}

// `gap` is one NUL (the overwritten separator) and then only bytes of `then`.
bool IsSeparator(std::string_view gap, std::string_view then) {
  if (gap.empty() || gap[0] != '\0') return false;
  for (char c : gap.substr(1)) {
    if (then.find(c) == std::string_view::npos) return false;
  }
  return true;
}

}  // namespace

bool HeadBytesAreAccountedFor(std::string_view head, const ParsedHead& parsed) {
  // The strings in order; after each, the rule for the gap up to the next string (or the head's end). Computed
  // per index rather than collected, so the check allocates nothing (it runs on every request).
  enum class Gap { kAfterMethod, kAfterTarget, kLineEnd, kAfterName, kHeadEnd };
  const size_t headers = parsed.headers.size();
  const size_t count = 3 + 2 * headers;
  auto span_at = [&](size_t i) -> HeadSpan {
    if (i == 0) return parsed.method;
    if (i == 1) return parsed.target;
    if (i == 2) return parsed.version;
    const auto& header = parsed.headers[(i - 3) / 2];
    return (i - 3) % 2 == 0 ? header.first : header.second;
  };
  auto gap_at = [&](size_t i) -> Gap {
    if (i == 0) return Gap::kAfterMethod;
    if (i == 1) return Gap::kAfterTarget;
    if (i + 1 == count) return Gap::kHeadEnd;  // the version without headers, or the last value
    if (i == 2) return Gap::kLineEnd;
    return (i - 3) % 2 == 0 ? Gap::kAfterName : Gap::kLineEnd;
  };
  if (parsed.method.offset != 0) return false;  // the head starts with the method
  for (size_t i = 0; i < count; ++i) {
    const HeadSpan span = span_at(i);
    if (span.offset > head.size() || span.length > head.size() - span.offset) return false;
    const size_t end = span.offset + span.length;
    const size_t next = i + 1 < count ? span_at(i + 1).offset : head.size();
    if (next < end) return false;  // out of order or overlapping
    const std::string_view gap = head.substr(end, next - end);
    bool ok = false;
    switch (gap_at(i)) {
      case Gap::kAfterMethod:
        ok = IsSeparator(gap, " ");  // MHD tolerates extra spaces after the method
        break;
      case Gap::kAfterTarget:
        ok = gap.size() == 1 && gap[0] == '\0';
        break;
      case Gap::kLineEnd:
        ok = IsLineEnds(gap, 1, 2);
        break;
      case Gap::kAfterName:
        ok = IsSeparator(gap, " \t");
        break;
      case Gap::kHeadEnd:
        ok = IsLineEnds(gap, 2, 4);
        break;
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace urlguard
