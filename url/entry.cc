// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "url/entry.h"

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>

namespace urlguard {
namespace {

void MaskAddress(uint8_t* addr, int bytes, int prefix_length) {
  for (int i = 0; i < bytes; ++i) {
    int keep = prefix_length - i * 8;
    if (keep >= 8) continue;
    addr[i] &= keep <= 0 ? 0 : static_cast<uint8_t>(0xff << (8 - keep));
  }
}

}  // namespace

bool ParseIpOrCidr(std::string_view text, uint8_t addr[16], bool* ipv6, int* prefix_length) {
  if (text.empty() || text.size() > 64) return false;
  std::string_view ip = text;
  int len = -1;
  size_t slash = text.find('/');
  if (slash != std::string_view::npos) {
    std::string_view digits = text.substr(slash + 1);
    if (digits.empty() || digits.size() > 3) return false;
    len = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      len = len * 10 + (c - '0');
    }
    ip = text.substr(0, slash);
  }
  if (ip.size() >= 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
  char buf[65];
  std::memcpy(buf, ip.data(), ip.size());
  buf[ip.size()] = '\0';
  std::memset(addr, 0, 16);
  if (ip.find(':') == std::string_view::npos) {
    if (inet_pton(AF_INET, buf, addr) != 1) return false;
    *ipv6 = false;
    if (len < 0) len = 32;
    if (len > 32) return false;
  } else {
    if (inet_pton(AF_INET6, buf, addr) != 1) return false;
    *ipv6 = true;
    if (len < 0) len = 128;
    if (len > 128) return false;
  }
  *prefix_length = len;
  return true;
}

size_t IpPrefixExpression(const uint8_t* addr, bool ipv6, int prefix_length, char* buf) {
  uint8_t masked[16];
  std::memcpy(masked, addr, ipv6 ? 16 : 4);
  MaskAddress(masked, ipv6 ? 16 : 4, prefix_length);
  if (!inet_ntop(ipv6 ? AF_INET6 : AF_INET, masked, buf, kMaxIpExpressionBytes - 5)) {
    buf[0] = '\0';
  }
  size_t n = std::strlen(buf);
  n += static_cast<size_t>(std::snprintf(buf + n, kMaxIpExpressionBytes - n, "/%d", prefix_length));
  return n;
}

Result<EntryKey> EntryKeyFor(std::string_view entry) {
  // Trim surrounding whitespace; feeds are sloppy.
  while (!entry.empty() && (entry.front() == ' ' || entry.front() == '\t')) entry.remove_prefix(1);
  while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\t' || entry.back() == '\r')) {
    entry.remove_suffix(1);
  }
  if (entry.empty()) return Status::InvalidArgument("empty entry");
  if (entry.size() > kMaxUrlBytes) return Status::InvalidArgument("entry longer than 8 KiB");
  for (char c : entry) {
    // Feeds are text: an entry with a space or control byte inside is a parsing slip, not a URL to list.
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return Status::InvalidArgument("entry contains whitespace or a control character");
    }
  }

  EntryKey key;
  uint8_t addr[16];
  bool v6 = false;
  int len = 0;
  if (ParseIpOrCidr(entry, addr, &v6, &len)) {
    uint8_t masked[16];
    std::memcpy(masked, addr, 16);
    MaskAddress(masked, v6 ? 16 : 4, len);
    if (std::memcmp(masked, addr, v6 ? 16 : 4) != 0) {
      return Status::InvalidArgument("CIDR has host bits set beyond /" + std::to_string(len) + ": " +
                                     std::string(entry));
    }
    char buf[kMaxIpExpressionBytes];
    key.layer = LayerKind::kIp;
    key.ipv6 = v6;
    key.prefix_length = len;
    key.expression.assign(buf, IpPrefixExpression(addr, v6, len, buf));
    return key;
  }
  // "203.0.113.0/33" looks like a CIDR range with a bad length; reading it as the URL path "/33" would list
  // something nobody meant.
  size_t slash = entry.find('/');
  if (slash != std::string_view::npos && slash + 1 < entry.size() &&
      entry.find_first_not_of("0123456789", slash + 1) == std::string_view::npos &&
      ParseIpOrCidr(entry.substr(0, slash), addr, &v6, &len)) {
    return Status::InvalidArgument("CIDR prefix length out of range: " + std::string(entry));
  }

  CanonicalUrl url;
  Status s = Canonicalize(entry, &url);
  if (!s.ok()) return s;
  const bool root = url.path == "/" && (!url.has_query || url.query.empty());
  if (url.host_kind != HostKind::kName && root) {
    char buf[kMaxIpExpressionBytes];
    key.layer = LayerKind::kIp;
    key.ipv6 = url.host_kind == HostKind::kIpv6;
    key.prefix_length = key.ipv6 ? 128 : 32;
    key.expression.assign(buf, IpPrefixExpression(url.ip, key.ipv6, key.prefix_length, buf));
    return key;
  }
  key.expression = url.host;
  key.expression += url.path;
  if (root) {
    key.layer = LayerKind::kDomain;
    return key;
  }
  key.layer = LayerKind::kUrl;
  if (url.has_query && !url.query.empty()) {
    key.expression += '?';
    key.expression += url.query;
  }
  return key;
}

}  // namespace urlguard
