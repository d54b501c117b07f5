// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/client_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace urlguard {

bool IpAddress::operator==(const IpAddress& other) const {
  return v6 == other.v6 && std::memcmp(bytes, other.bytes, v6 ? 16 : 4) == 0;
}

std::optional<IpAddress> ParseIpAddress(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string s(text);
  IpAddress out;
  if (inet_pton(AF_INET, s.c_str(), out.bytes) == 1) return out;
  in6_addr v6;
  if (inet_pton(AF_INET6, s.c_str(), &v6) != 1) return std::nullopt;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {
    std::memcpy(out.bytes, v6.s6_addr + 12, 4);
    return out;
  }
  out.v6 = true;
  std::memcpy(out.bytes, v6.s6_addr, 16);
  return out;
}

Result<TrustedProxies> TrustedProxies::Parse(const std::vector<std::string>& addresses) {
  if (addresses.size() > kMaxTrustedProxies) {
    return Status::InvalidArgument("more than " + std::to_string(kMaxTrustedProxies) + " trusted proxies");
  }
  TrustedProxies out;
  for (const std::string& a : addresses) {
    auto ip = ParseIpAddress(a);
    if (!ip) return Status::InvalidArgument("trusted proxy '" + a.substr(0, 64) + "' is not a numeric IP address");
    out.proxies_.push_back(*ip);
  }
  return out;
}

bool TrustedProxies::Contains(const IpAddress& address) const {
  return std::find(proxies_.begin(), proxies_.end(), address) != proxies_.end();
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

IpAddress ResolveClientAddress(std::string_view peer, const std::vector<std::string_view>& forwarded_for,
                               const TrustedProxies& trusted) {
  const IpAddress peer_ip = ParseIpAddress(peer).value_or(IpAddress{});
  if (trusted.empty() || !trusted.Contains(peer_ip)) return peer_ip;
  // Join the headers (in order) under the byte cap, keeping the RIGHT end: that is what the proxies wrote.
  std::string joined;
  for (std::string_view h : forwarded_for) {
    if (!joined.empty()) joined += ',';
    joined.append(h);
  }
  std::string_view rest = joined;
  if (rest.size() > kMaxForwardedForBytes) rest = rest.substr(rest.size() - kMaxForwardedForBytes);
  std::optional<IpAddress> leftmost_proxy;
  for (size_t n = 0; n < kMaxForwardedForEntries && !rest.empty(); ++n) {
    const size_t comma = rest.rfind(',');
    const std::string_view entry = Trim(comma == std::string_view::npos ? rest : rest.substr(comma + 1));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(0, comma);
    const auto ip = ParseIpAddress(entry);
    if (!ip) return peer_ip;  // not an address where a proxy should have written one
    if (!trusted.Contains(*ip)) return *ip;
    leftmost_proxy = ip;
  }
  // Only proxies: the leftmost of them is the best knowledge (nginx real_ip_recursive does the same).
  return leftmost_proxy.value_or(peer_ip);
}

std::string GuardKeyOf(const IpAddress& address) {
  std::string key = address.v6 ? "6:" : "4:";
  key.append(reinterpret_cast<const char*>(address.bytes), address.v6 ? 8 : 4);
  return key;
}

std::string IpAddressToString(const IpAddress& address) {
  char text[INET6_ADDRSTRLEN] = {0};
  inet_ntop(address.v6 ? AF_INET6 : AF_INET, address.bytes, text, sizeof(text));
  return text;
}

}  // namespace urlguard
