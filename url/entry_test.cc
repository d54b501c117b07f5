// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "url/entry.h"

#include <gtest/gtest.h>

namespace urlguard {
namespace {

struct Case {
  const char* entry;
  LayerKind layer;
  const char* expression;
};

TEST(EntryKey, MapsEachKindOfEntryToItsLayerAndExpression) {
  const Case cases[] = {
      {"evil.example", LayerKind::kDomain, "evil.example/"},
      {"EVIL.example.", LayerKind::kDomain, "evil.example/"},
      {"http://evil.example/", LayerKind::kDomain, "evil.example/"},
      {"https://user:pw@evil.example:8443/?", LayerKind::kDomain, "evil.example/"},
      {"evil.example/login.php", LayerKind::kUrl, "evil.example/login.php"},
      {"http://evil.example/a/../login.php?x=1#frag", LayerKind::kUrl, "evil.example/login.php?x=1"},
      {"http://evil.example/login.php?", LayerKind::kUrl, "evil.example/login.php"},
      {"http://evil.example/dir/", LayerKind::kUrl, "evil.example/dir/"},
      {"203.0.113.7", LayerKind::kIp, "203.0.113.7/32"},
      {"203.0.113.0/24", LayerKind::kIp, "203.0.113.0/24"},
      {"0.0.0.0/0", LayerKind::kIp, "0.0.0.0/0"},
      {"2001:db8::1", LayerKind::kIp, "2001:db8::1/128"},
      {"[2001:DB8::]/32", LayerKind::kIp, "2001:db8::/32"},
      {"http://203.0.113.7/", LayerKind::kIp, "203.0.113.7/32"},
      {"http://0xcb.0.113.7/", LayerKind::kIp, "203.0.113.7/32"},
      {"http://[2001:db8::1]/", LayerKind::kIp, "2001:db8::1/128"},
      {"http://203.0.113.7/x.exe", LayerKind::kUrl, "203.0.113.7/x.exe"},
      {"http://www.\xC3\xBCmlat.com/", LayerKind::kDomain, "www.xn--mlat-zra.com/"},
  };
  for (const Case& c : cases) {
    auto key = EntryKeyFor(c.entry);
    ASSERT_TRUE(key.ok()) << c.entry << ": " << key.status().ToString();
    EXPECT_EQ(key->layer, c.layer) << c.entry;
    EXPECT_EQ(key->expression, c.expression) << c.entry;
  }
}

TEST(EntryKey, RefusesWhatIsNoEntry) {
  for (const char* bad : {"", "   ", "10.0.0.1/8", "203.0.113.0/33", "2001:db8::1/129", "not a url",
                          "javascript:alert(1)", "mailto:a@b.example", "http://", "evil.example/\x01x"}) {
    auto key = EntryKeyFor(bad);
    EXPECT_FALSE(key.ok()) << bad;
    if (!key.ok()) {
      EXPECT_EQ(key.status().code(), StatusCode::kInvalidArgument);
    }
  }
  EXPECT_FALSE(EntryKeyFor(std::string(9000, 'a')).ok());
}

TEST(EntryKey, ParseIpOrCidrIsStrict) {
  uint8_t addr[16];
  bool v6;
  int len;
  EXPECT_TRUE(ParseIpOrCidr("1.2.3.4", addr, &v6, &len));
  EXPECT_FALSE(v6);
  EXPECT_EQ(len, 32);
  EXPECT_TRUE(ParseIpOrCidr("::1", addr, &v6, &len));
  EXPECT_TRUE(v6);
  EXPECT_EQ(len, 128);
  for (const char* bad : {"1.2.3", "0x1.2.3.4", "1.2.3.4/", "1.2.3.4/x", "1.2.3.4/1000", "[::1", "::g", ""}) {
    EXPECT_FALSE(ParseIpOrCidr(bad, addr, &v6, &len)) << bad;
  }
}

TEST(EntryKey, IpPrefixExpressionMasks) {
  uint8_t a[4] = {203, 0, 113, 77};
  char buf[kMaxIpExpressionBytes];
  EXPECT_EQ(std::string(buf, IpPrefixExpression(a, false, 24, buf)), "203.0.113.0/24");
  EXPECT_EQ(std::string(buf, IpPrefixExpression(a, false, 31, buf)), "203.0.113.76/31");
  EXPECT_EQ(std::string(buf, IpPrefixExpression(a, false, 0, buf)), "0.0.0.0/0");
  uint8_t b[16] = {0x20, 0x01, 0x0d, 0xb8, 0x0b, 0xad, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(std::string(buf, IpPrefixExpression(b, true, 48, buf)), "2001:db8:bad::/48");
  EXPECT_EQ(std::string(buf, IpPrefixExpression(b, true, 128, buf)), "2001:db8:bad::1/128");
}

}  // namespace
}  // namespace urlguard
