// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/client_address.h"

#include <gtest/gtest.h>

namespace urlguard {
namespace {

std::string Key(const char* address) { return GuardKeyOf(*ParseIpAddress(address)); }

TEST(ClientAddressTest, Ipv6IsKeyedByItsSlash64) {
  EXPECT_EQ(Key("2001:db8:1:2::1"), Key("2001:db8:1:2:ffff:ffff:ffff:ffff"));
  EXPECT_EQ(Key("2001:db8:1:2::1"), Key("2001:0db8:0001:0002:0:0:0:77"));
  EXPECT_NE(Key("2001:db8:1:2::1"), Key("2001:db8:1:3::1"));
  EXPECT_NE(Key("2001:db8:1:2::1"), Key("2001:db8:1:2::1").substr(0, 3));
  // IPv4 counts per address; an IPv4-mapped IPv6 address is its IPv4 address.
  EXPECT_NE(Key("192.0.2.1"), Key("192.0.2.2"));
  EXPECT_EQ(Key("::ffff:192.0.2.1"), Key("192.0.2.1"));
  EXPECT_FALSE(ParseIpAddress("example.com").has_value());
  EXPECT_FALSE(ParseIpAddress("192.0.2.1:80").has_value());
}

TEST(ClientAddressTest, ForwardedForOnlyFromTrustedProxies) {
  const TrustedProxies trusted = *TrustedProxies::Parse({"10.0.0.1", "10.0.0.2"});
  auto resolve = [&](const char* peer, std::vector<std::string_view> xff) {
    return IpAddressToString(ResolveClientAddress(peer, xff, trusted));
  };
  // Untrusted peer: headers ignored.
  EXPECT_EQ(resolve("192.0.2.9", {"203.0.113.1"}), "192.0.2.9");
  // Trusted peer: rightmost untrusted entry; spoofed entries to its left are ignored.
  EXPECT_EQ(resolve("10.0.0.1", {"1.1.1.1, 203.0.113.1"}), "203.0.113.1");
  EXPECT_EQ(resolve("10.0.0.1", {"1.1.1.1, 203.0.113.1, 10.0.0.2"}), "203.0.113.1");
  EXPECT_EQ(resolve("10.0.0.1", {"1.1.1.1", "203.0.113.1 , 10.0.0.2"}), "203.0.113.1");
  // No header, garbage where a proxy writes, or only proxies.
  EXPECT_EQ(resolve("10.0.0.1", {}), "10.0.0.1");
  EXPECT_EQ(resolve("10.0.0.1", {"203.0.113.1, evil"}), "10.0.0.1");
  EXPECT_EQ(resolve("10.0.0.1", {"10.0.0.2"}), "10.0.0.2");
  // No proxies configured: never believed.
  EXPECT_EQ(IpAddressToString(ResolveClientAddress("10.0.0.1", {"203.0.113.1"}, TrustedProxies())), "10.0.0.1");
  EXPECT_FALSE(TrustedProxies::Parse({"proxy.example"}).ok());
}

}  // namespace
}  // namespace urlguard
