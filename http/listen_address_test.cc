// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/listen_address.h"

#include <gtest/gtest.h>

namespace urlguard {
namespace {

TEST(ListenAddressTest, ParsesNumericAddresses) {
  auto a = ParseLoopbackListenAddress("127.0.0.1:8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  EXPECT_FALSE(a->ipv6);
  a = ParseLoopbackListenAddress("[::1]:0");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  EXPECT_TRUE(a->ipv6);
  EXPECT_EQ(a->ToString(99), "[::1]:99");
  EXPECT_TRUE(ParseLoopbackListenAddress("127.255.0.9:65535").ok());
  EXPECT_TRUE(ParseListenAddress("192.0.2.1:80").ok());  // numeric, not loopback: only the loopback form refuses
  EXPECT_FALSE(ParseLoopbackListenAddress("192.0.2.1:80").ok());
}

TEST(ListenAddressTest, RefusesNamesAndMalformedInput) {
  for (const char* text :
       {"127.attacker.invalid:8080", "localhost:8080", "127.0.0.1.nip.io:80", "127.1:80", "0x7f.0.0.1:80",
        "127.0.0.1", "127.0.0.1:", ":8080", "127.0.0.1:65536", "127.0.0.1:80a", "127.0.0.1:+80", "::1:8080",
        "[127.0.0.1]:80", "[::1]8080", "[::1]", "[::1%lo]:80", "", " 127.0.0.1:80", "127.0.0.1:80 ",
        "0.0.0.0:80", "[::]:80", "[::ffff:127.0.0.1]:80"}) {
    EXPECT_FALSE(ParseLoopbackListenAddress(text).ok()) << text;
  }
  EXPECT_FALSE(ParseListenAddress(std::string(200, '1')).ok());
}

TEST(ListenAddressTest, NumericLoopbackCheck) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "0:0:0:0:0:0:0:1"}) {
    EXPECT_TRUE(IsNumericLoopbackAddress(h)) << h;
  }
  for (const char* h : {"localhost", "127.attacker.invalid", "128.0.0.1", "::", "::ffff:127.0.0.1", "",
                        "126.255.255.255", "::2"}) {
    EXPECT_FALSE(IsNumericLoopbackAddress(h)) << h;
  }
}

}  // namespace
}  // namespace urlguard
