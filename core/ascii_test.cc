// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/ascii.h"

#include <gtest/gtest.h>

#include <clocale>
#include <string>

namespace urlguard {
namespace {

TEST(Ascii, EqualsIgnoreCaseIsAsciiOnly) {
  EXPECT_TRUE(EqualsIgnoreCase("ETag", "etag"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("etag", "etags"));
  EXPECT_FALSE(EqualsIgnoreCase("a", "b"));
  // '@' (0x40) and '`' (0x60) differ by 0x20 like 'A' and 'a', but are not letters.
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));
  // Bytes >= 0x80 compare exactly: UTF-8 'É' (c3 89) is not 'é' (c3 a9), Latin-1 0xC9 is not 0xE9.
  EXPECT_FALSE(EqualsIgnoreCase("\xc3\x89", "\xc3\xa9"));
  EXPECT_FALSE(EqualsIgnoreCase("\xc9", "\xe9"));
  // Whatever locale the embedding program set.
  if (std::setlocale(LC_CTYPE, "C.UTF-8") != nullptr ||
      std::setlocale(LC_CTYPE, "en_US.ISO-8859-1") != nullptr) {
    EXPECT_FALSE(EqualsIgnoreCase("\xc9", "\xe9"));
    std::setlocale(LC_CTYPE, "C");
  }
  static_assert(EqualsIgnoreCase("HTTPS", "https"));
}

TEST(Ascii, PrefixAndContains) {
  EXPECT_TRUE(StartsWithIgnoreCase("Phish_ID,url", "phish_id,"));
  EXPECT_FALSE(StartsWithIgnoreCase("phish", "phish_id,"));
  EXPECT_TRUE(ContainsIgnoreCase("# URLhaus Database Dump", "urlhaus"));
  EXPECT_TRUE(ContainsIgnoreCase("abc", ""));
  EXPECT_FALSE(ContainsIgnoreCase("urlhau", "urlhaus"));
  EXPECT_TRUE(ContainsIgnoreCase("xxURLHAUS", "urlhaus"));
  EXPECT_TRUE(StartsWith("||evil", "||"));
  EXPECT_TRUE(EndsWith("current.tmp", ".tmp"));
  EXPECT_FALSE(EndsWith("tmp", ".tmp"));
  EXPECT_EQ(AsciiLower("MiXeD-\xc3\x89"), "mixed-\xc3\x89");
}

TEST(Ascii, TrimTokensAndQuote) {
  EXPECT_EQ(TrimAsciiSpace(" \t\r\n a b \v\f\r\n"), "a b");
  EXPECT_EQ(TrimAsciiSpace("\xa0x\xa0"), "\xa0x\xa0");  // NBSP is not ASCII space
  std::string_view rest = "  0.0.0.0\tevil.example  # c";
  EXPECT_EQ(NextAsciiToken(&rest), "0.0.0.0");
  EXPECT_EQ(NextAsciiToken(&rest), "evil.example");
  EXPECT_EQ(NextAsciiToken(&rest), "#");
  EXPECT_EQ(NextAsciiToken(&rest), "c");
  EXPECT_EQ(NextAsciiToken(&rest), "");
  EXPECT_EQ(QuoteBytes("a'b\\c\n\x7f\xff"), "'a\\x27b\\x5cc\\x0a\\x7f\\xff'");
  EXPECT_EQ(QuoteBytes(std::string(100, 'x'), 3), "'xxx...'");
  EXPECT_TRUE(IsAsciiHexDigit('F') && !IsAsciiHexDigit('g') && IsAsciiDigit('9') && !IsAsciiAlpha('1'));
}

}  // namespace
}  // namespace urlguard
