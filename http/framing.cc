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

}  // namespace urlguard
