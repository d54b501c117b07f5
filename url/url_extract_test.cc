// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Tests for ExtractUrls() (url/url_extract.h): a table of chat and forum messages with the URLs each
// must give (span in the text, normalized URL, flags), negative messages that must give none, the caps,
// hostile bytes, the TLD table, and that Canonicalize() (url/url_canon.h) accepts what is reported.
#include "url/url_extract.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "url/url_canon.h"
#include "urlguard/status.h"

namespace urlguard {
namespace {

constexpr int kDefanged = 1;
constexpr int kScheme = 2;

struct Want {
  std::string_view span;  // the URL's bytes in the message
  std::string_view url;   // the normalized URL
  int flags = 0;          // kDefanged | kScheme
};

struct Case {
  std::string_view text;
  std::vector<Want> want;
};

// Checks the contract every result must keep, whatever the input (the fuzz target checks the same).
void ExpectInvariants(std::string_view text, const ExtractResult& r) {
  const size_t examined = std::min(text.size(), kMaxExtractInputBytes);
  EXPECT_LE(r.urls.size(), kMaxUrlsPerText);
  EXPECT_LE(r.scanned_bytes, examined);
  if (!r.truncated) {
    EXPECT_EQ(r.scanned_bytes, examined);
  }
  size_t previous_end = 0;
  for (size_t i = 0; i < r.urls.size(); ++i) {
    const ExtractedUrl& u = r.urls[i];
    ASSERT_LT(u.begin, u.end);
    ASSERT_LE(u.end, examined);
    ASSERT_GE(u.begin, previous_end);
    previous_end = u.end;
    ASSERT_LE(u.url_offset + u.url_size, r.url_text.size());
    ASSERT_LE(u.url_size, kMaxExtractedUrlBytes);
    const std::string_view url = r.url(i);
    EXPECT_TRUE(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("ftp://") ||
                url.starts_with("ws://") || url.starts_with("wss://"))
        << url;
  }
}

std::string Describe(std::string_view text, const ExtractResult& r) {
  std::ostringstream os;
  os << "message: \"" << text << "\"\nfound:";
  for (size_t i = 0; i < r.urls.size(); ++i) {
    const ExtractedUrl& u = r.urls[i];
    os << "\n  [" << u.begin << "," << u.end << ") \"" << text.substr(u.begin, u.end - u.begin) << "\" -> "
       << r.url(i) << (u.defanged ? " defanged" : "") << (u.had_scheme ? " scheme" : "");
  }
  return os.str();
}

void ExpectCase(const Case& c) {
  ExtractResult r;
  ExtractUrls(c.text, &r);
  ExpectInvariants(c.text, r);
  const std::string context = Describe(c.text, r);
  EXPECT_FALSE(r.truncated) << context;
  ASSERT_EQ(r.urls.size(), c.want.size()) << context;
  size_t from = 0;
  for (size_t i = 0; i < c.want.size(); ++i) {
    const Want& w = c.want[i];
    const ExtractedUrl& u = r.urls[i];
    // The span must be the first occurrence of the wanted bytes after the previous URL.
    const size_t expected_begin = c.text.find(w.span, from);
    ASSERT_NE(expected_begin, std::string_view::npos) << "bad test: span not in text: " << w.span;
    EXPECT_EQ(u.begin, expected_begin) << context;
    EXPECT_EQ(u.end, expected_begin + w.span.size()) << context;
    EXPECT_EQ(r.url(i), w.url) << context;
    EXPECT_EQ(u.defanged, (w.flags & kDefanged) != 0) << context;
    EXPECT_EQ(u.had_scheme, (w.flags & kScheme) != 0) << context;
    EXPECT_FALSE(u.cut) << context;
    from = expected_begin + w.span.size();
  }
}

// ---- messages with links ---------------------------------------------------------------------------

const std::vector<Case>& SchemeCases() {
  static const std::vector<Case> cases = {
      {"check out https://example.com/path?x=1, it's great!",
       {{"https://example.com/path?x=1", "https://example.com/path?x=1", kScheme}}},
      {"lol http://imgur.com/gallery/abc123",
       {{"http://imgur.com/gallery/abc123", "http://imgur.com/gallery/abc123", kScheme}}},
      {"Download it from ftp://ftp.example.org/pub/file.tar.gz please",
       {{"ftp://ftp.example.org/pub/file.tar.gz", "ftp://ftp.example.org/pub/file.tar.gz", kScheme}}},
      {"HTTPS://EVIL.COM/Login.php", {{"HTTPS://EVIL.COM/Login.php", "https://EVIL.COM/Login.php", kScheme}}},
      {"(see https://en.wikipedia.org/wiki/Foo_(bar)) for details",
       {{"https://en.wikipedia.org/wiki/Foo_(bar)", "https://en.wikipedia.org/wiki/Foo_(bar)", kScheme}}},
      {"Read https://en.wikipedia.org/wiki/Bracket_(disambiguation).",
       {{"https://en.wikipedia.org/wiki/Bracket_(disambiguation)",
         "https://en.wikipedia.org/wiki/Bracket_(disambiguation)", kScheme}}},
      {"<https://x.com/a> is the link", {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"see [the docs](https://docs.example.com/guide#install) first",
       {{"https://docs.example.com/guide#install", "https://docs.example.com/guide#install", kScheme}}},
      {"[https://a.com](https://b.com)",
       {{"https://a.com", "https://a.com", kScheme}, {"https://b.com", "https://b.com", kScheme}}},
      {"[https://x.com/a](https://y.com/b)",
       {{"https://x.com/a", "https://x.com/a", kScheme}, {"https://y.com/b", "https://y.com/b", kScheme}}},
      {"[label](https://x.com/a/b_(c))", {{"https://x.com/a/b_(c)", "https://x.com/a/b_(c)", kScheme}}},
      {"url: \"https://x.com/q?a=1&b=2\"", {{"https://x.com/q?a=1&b=2", "https://x.com/q?a=1&b=2", kScheme}}},
      {"he said 'https://x.com/a' twice", {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"**https://x.com/a** is bold", {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"Go to https://x.com/a... or not", {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"(https://x.com/a). Done", {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"creds in http://user:pass@evil.com:8080/a#frag lol",
       {{"http://user:pass@evil.com:8080/a#frag", "http://user:pass@evil.com:8080/a#frag", kScheme}}},
      {"classic trick: http://paypal.com@evil.example/login",
       {{"http://paypal.com@evil.example/login", "http://paypal.com@evil.example/login", kScheme}}},
      {"http://1.2.3.4/x and http://[2001:db8::1]/admin",
       {{"http://1.2.3.4/x", "http://1.2.3.4/x", kScheme},
        {"http://[2001:db8::1]/admin", "http://[2001:db8::1]/admin", kScheme}}},
      {"Karte: http://münchen.de/straße!",
       {{"http://münchen.de/straße", "http://münchen.de/straße", kScheme}}},
      {"https://ja.wikipedia.org/wiki/東京 を見て",
       {{"https://ja.wikipedia.org/wiki/東京", "https://ja.wikipedia.org/wiki/東京", kScheme}}},
      {"https://en.wikipedia.org/wiki/Mexican–American_War",
       {{"https://en.wikipedia.org/wiki/Mexican–American_War",
         "https://en.wikipedia.org/wiki/Mexican–American_War", kScheme}}},
      {"link:https://x.com", {{"https://x.com", "https://x.com", kScheme}}},
      {"xhttp://evil.com hides its scheme", {{"http://evil.com", "http://evil.com", kScheme}}},
      {"my dev server is http://localhost:3000/api",
       {{"http://localhost:3000/api", "http://localhost:3000/api", kScheme}}},
      {"look https://x.com/a😀 nice", {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"“https://x.com/a” she said", {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"https://example.com/search?q=a,b;c=d",
       {{"https://example.com/search?q=a,b;c=d", "https://example.com/search?q=a,b;c=d", kScheme}}},
      {"two links: https://a.example/x https://b.example/y",
       {{"https://a.example/x", "https://a.example/x", kScheme},
        {"https://b.example/y", "https://b.example/y", kScheme}}},
      {"See https://github.com/org/repo/blob/main/README.md!",
       {{"https://github.com/org/repo/blob/main/README.md", "https://github.com/org/repo/blob/main/README.md",
         kScheme}}},
      {"https://www.google.com/maps/@48.85,2.35,15z",
       {{"https://www.google.com/maps/@48.85,2.35,15z", "https://www.google.com/maps/@48.85,2.35,15z",
         kScheme}}},
      {"{https://x.com/{a}}", {{"https://x.com/{a}", "https://x.com/{a}", kScheme}}},
      {"https://x.com/a}", {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"percent host http://%65vil.com/x", {{"http://%65vil.com/x", "http://%65vil.com/x", kScheme}}},
      {"root dot http://evil.com./x", {{"http://evil.com./x", "http://evil.com./x", kScheme}}},
      {"http://evil.com:8080", {{"http://evil.com:8080", "http://evil.com:8080", kScheme}}},
      {"https://evil.zip is a real TLD", {{"https://evil.zip", "https://evil.zip", kScheme}}},
      // Browsers (WHATWG URL Standard) accept any run of '/' and '\' after a special scheme, none included.
      {"see http:\\\\evil.example\\ now", {{"http:\\\\evil.example\\", "http://evil.example\\", kScheme}}},
      {"http:\\\\evil.example\\x", {{"http:\\\\evil.example\\x", "http://evil.example\\x", kScheme}}},
      {"see http:evil.example now", {{"http:evil.example", "http://evil.example", kScheme}}},
      {"HTTPS:/evil.example/a", {{"HTTPS:/evil.example/a", "https://evil.example/a", kScheme}}},
      {"http:///evil.example/", {{"http:///evil.example/", "http://evil.example/", kScheme}}},
      {"(http:/\\//192.0.2.7:80)", {{"http:/\\//192.0.2.7:80", "http://192.0.2.7:80", kScheme}}},
      {"http:3221226061", {{"http:3221226061", "http://3221226061", kScheme}}},
      {"http:%65vil%2Eexample", {{"http:%65vil%2Eexample", "http://%65vil%2Eexample", kScheme}}},
      {"ws://evil.example/socket wss:evil.example",
       {{"ws://evil.example/socket", "ws://evil.example/socket", kScheme},
        {"wss:evil.example", "wss://evil.example", kScheme}}},
      {"https://a@b@evil.example/", {{"https://a@b@evil.example/", "https://a@b@evil.example/", kScheme}}},
      {"https://x:y%3F@evil.example/",
       {{"https://x:y%3F@evil.example/", "https://x:y%3F@evil.example/", kScheme}}},
      {"http://evil\uFF0Eexample/ full-width dot",
       {{"http://evil\uFF0Eexample/", "http://evil\uFF0Eexample/", kScheme}}},
      {"http://ev\u00ADil.example soft hyphen",
       {{"http://ev\u00ADil.example", "http://ev\u00ADil.example", kScheme}}},
  };
  return cases;
}

const std::vector<Case>& BareCases() {
  static const std::vector<Case> cases = {
      {"evil.com", {{"evil.com", "http://evil.com"}}},
      {"visit www.example.com today", {{"www.example.com", "http://www.example.com"}}},
      {"WWW.EXAMPLE.COM/PATH", {{"WWW.EXAMPLE.COM/PATH", "http://WWW.EXAMPLE.COM/PATH"}}},
      {"our wiki is www.corp.internal", {{"www.corp.internal", "http://www.corp.internal"}}},
      {"login.paypal.com.evil.xyz/path?x=1 is phishing",
       {{"login.paypal.com.evil.xyz/path?x=1", "http://login.paypal.com.evil.xyz/path?x=1"}}},
      {"go to sub.example.co.uk.", {{"sub.example.co.uk", "http://sub.example.co.uk"}}},
      {"Visit example.com. Or example.com! Or example.com? (example.com)",
       {{"example.com", "http://example.com"},
        {"example.com", "http://example.com"},
        {"example.com", "http://example.com"},
        {"example.com", "http://example.com"}}},
      {"bit.ly/3xYz is the short link", {{"bit.ly/3xYz", "http://bit.ly/3xYz"}}},
      {"münchen.de ist schön", {{"münchen.de", "http://münchen.de"}}},
      {"сайт пример.рф и xn--e1afmkfd.xn--p1ai",
       {{"пример.рф", "http://пример.рф"}, {"xn--e1afmkfd.xn--p1ai", "http://xn--e1afmkfd.xn--p1ai"}}},
      {"詳しくはexample.comを見て", {{"example.com", "http://example.com"}}},
      {"naver.com에서 확인하세요", {{"naver.com", "http://naver.com"}}},
      {"it's evil.com's fault", {{"evil.com", "http://evil.com"}}},
      {"«evil.org» and “evil.net”", {{"evil.org", "http://evil.org"}, {"evil.net", "http://evil.net"}}},
      {"evil.zip/x but not evil.zip", {{"evil.zip/x", "http://evil.zip/x"}}},
      {"www.evil.zip", {{"www.evil.zip", "http://www.evil.zip"}}},
      {"evil.zip:8080/x?y=1", {{"evil.zip:8080/x?y=1", "http://evil.zip:8080/x?y=1"}}},
      {"foo://bar.com", {{"bar.com", "http://bar.com"}}},
      {"wait...evil.com", {{"evil.com", "http://evil.com"}}},
      {"_evil.com_ and `evil.org`", {{"evil.com", "http://evil.com"}, {"evil.org", "http://evil.org"}}},
      {"1.2.3.4/x and 10.0.0.1:8080",
       {{"1.2.3.4/x", "http://1.2.3.4/x"}, {"10.0.0.1:8080", "http://10.0.0.1:8080"}}},
      {"block 192.168.1.1/24 now", {{"192.168.1.1/24", "http://192.168.1.1/24"}}},
      {"evil.com./x", {{"evil.com./x", "http://evil.com./x"}}},
      {"my_site.example.com", {{"my_site.example.com", "http://my_site.example.com"}}},
      {"(evil.com/path)", {{"evil.com/path", "http://evil.com/path"}}},
      {"EVIL.COM", {{"EVIL.COM", "http://EVIL.COM"}}},
      {"a.com b.org c.net",
       {{"a.com", "http://a.com"}, {"b.org", "http://b.org"}, {"c.net", "http://c.net"}}},
      {"evil.com,evil.org;evil.net",
       {{"evil.com", "http://evil.com"}, {"evil.org", "http://evil.org"}, {"evil.net", "http://evil.net"}}},
      {"[text](x.com/a)", {{"x.com/a", "http://x.com/a"}}},
      {"<evil.com>", {{"evil.com", "http://evil.com"}}},
      {"evil.com?", {{"evil.com", "http://evil.com"}}},
      {"is it evil.com?ref=1 or not", {{"evil.com?ref=1", "http://evil.com?ref=1"}}},
      {"--evil.com", {{"evil.com", "http://evil.com"}}},
      {"see src/evil.com", {{"evil.com", "http://evil.com"}}},
      {"site.evil.com\xe3\x80\x82next", {{"site.evil.com", "http://site.evil.com"}}},
  };
  return cases;
}

const std::vector<Case>& DefangedCases() {
  static const std::vector<Case> cases = {
      {"hxxps://evil[.]com/login[.]php",
       {{"hxxps://evil[.]com/login[.]php", "https://evil.com/login.php", kDefanged | kScheme}}},
      {"don't click evil [.] com", {{"evil [.] com", "http://evil.com", kDefanged}}},
      {"C2 at 1.2.3[.]4", {{"1.2.3[.]4", "http://1.2.3.4", kDefanged}}},
      {"h**p://bad.example/x", {{"h**p://bad.example/x", "http://bad.example/x", kDefanged | kScheme}}},
      {"http[:]//bad.example/", {{"http[:]//bad.example/", "http://bad.example/", kDefanged | kScheme}}},
      {"evil(dot)net", {{"evil(dot)net", "http://evil.net", kDefanged}}},
      {"evil[dot]com evil{.}org evil(.)net EVIL[DOT]INFO",
       {{"evil[dot]com", "http://evil.com", kDefanged},
        {"evil{.}org", "http://evil.org", kDefanged},
        {"evil(.)net", "http://evil.net", kDefanged},
        {"EVIL[DOT]INFO", "http://EVIL.INFO", kDefanged}}},
      {"hXXp://evil.com", {{"hXXp://evil.com", "http://evil.com", kDefanged | kScheme}}},
      {"IOC: hxxp://203.0.113[.]7/payload.exe",
       {{"hxxp://203.0.113[.]7/payload.exe", "http://203.0.113.7/payload.exe", kDefanged | kScheme}}},
      {"ttps://evil.com", {{"ttps://evil.com", "https://evil.com", kDefanged | kScheme}}},
      {"evil[.]zip", {{"evil[.]zip", "http://evil.zip", kDefanged}}},
      {"hxxps[://]evil[.]com", {{"hxxps[://]evil[.]com", "https://evil.com", kDefanged | kScheme}}},
      {"fxp://files.evil.com", {{"fxp://files.evil.com", "ftp://files.evil.com", kDefanged | kScheme}}},
      {"evil[.]com/a[.]b", {{"evil[.]com/a[.]b", "http://evil.com/a.b", kDefanged}}},
      {"https://x.com/a[.]b", {{"https://x.com/a[.]b", "https://x.com/a[.]b", kScheme}}},
      {"hxxp://evil [.] com/x", {{"hxxp://evil [.] com/x", "http://evil.com/x", kDefanged | kScheme}}},
      {"www[.]evil[.]zip", {{"www[.]evil[.]zip", "http://www.evil.zip", kDefanged}}},
  };
  return cases;
}

// ---- messages without links ------------------------------------------------------------------------

const std::vector<std::string_view>& NegativeMessages() {
  static const std::vector<std::string_view> messages = {
      "readme.txt v1.2.3 image.png",
      "e.g. this, i.e. that, etc.",
      "wait...what",
      "pi is 3.14 and we meet at 10.30",
      "mail me: bob@evil.com or first.last@example.org",
      "bob+tag@evil.com and o'brien@evil.com",
      "write to support.team@example.org or no.reply.shop@evil.com",
      "version 1.2.3.4 is out",
      "see main.py and README.md, also photos.zip and Xcode.app",
      "node.js vs. deno, approx. 5 p.m.",
      "U.S.A. and Ph.D. and a.m.",
      "file.tar.gz and archive.7z and data.json",
      "http:// nothing here",
      "mailto:bob@evil.com",
      "thanks @john.smith",
      "$1,000.00 and 1.000.000",
      "ratio 16:9 at 1080p",
      "score 3:2, well done!...",
      "foo..bar",
      "build.sh then ./run.sh",
      "Main.java and utils.rs and lib.so and main.cc",
      "Traceback: main.py:42 in utils.py#L20, lib.rs:10:5",
      "10.0.0.256/x is not an address",
      "",
      "       ",
      "just a normal message without any links at all",
      "1.2.3.4.5.6",
      "ok...",
      "....",
      "hxxp:// and [.] and (dot)",
      "C:\\Users\\bob\\file.txt",
      // A special scheme without slashes needs a host with a dot, a digit or an escape: prose stays prose.
      "use http:the default or https: when asked",
      "schemes: http: ftp: ws: wss: all fine",
      "news:comp.lang.misc and xhttp:evil.example and thews:evil",
      "http:\\ and https:// alone",
  };
  return messages;
}

TEST(UrlExtract, SchemeUrls) {
  for (const Case& c : SchemeCases()) ExpectCase(c);
}

TEST(UrlExtract, BareDomainsAndWww) {
  for (const Case& c : BareCases()) ExpectCase(c);
}

TEST(UrlExtract, DefangedForms) {
  for (const Case& c : DefangedCases()) ExpectCase(c);
}

TEST(UrlExtract, NegativeMessagesGiveNothing) {
  for (std::string_view text : NegativeMessages()) ExpectCase({text, {}});
}

// The normalized strings are made for Canonicalize(): every URL of the tables must be accepted by it.
TEST(UrlExtract, NormalizedUrlsCanonicalize) {
  ExtractResult r;
  CanonicalUrl canonical;
  size_t checked = 0;
  for (const auto* table : {&SchemeCases(), &BareCases(), &DefangedCases()}) {
    for (const Case& c : *table) {
      ExtractUrls(c.text, &r);
      for (size_t i = 0; i < r.urls.size(); ++i) {
        const Status status = Canonicalize(r.url(i), &canonical);
        EXPECT_TRUE(status.ok()) << r.url(i) << ": " << status.ToString();
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100u);
}

TEST(UrlExtract, TableHasAtLeastSixtyMessages) {
  EXPECT_GE(SchemeCases().size() + BareCases().size() + DefangedCases().size() + NegativeMessages().size(),
            60u);
}

// ---- caps ------------------------------------------------------------------------------------------

TEST(UrlExtract, StopsAtMaxUrlsPerText) {
  std::string text;
  std::vector<size_t> begins;
  for (int i = 0; i < 5000; ++i) {
    begins.push_back(text.size());
    text += "site" + std::to_string(i) + ".com ";
  }
  ExtractResult r;
  ExtractUrls(text, &r);
  ExpectInvariants(text, r);
  ASSERT_EQ(r.urls.size(), kMaxUrlsPerText);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.scanned_bytes, begins[kMaxUrlsPerText]);
  EXPECT_EQ(r.url(0), "http://site0.com");
  EXPECT_EQ(r.url(kMaxUrlsPerText - 1), "http://site999.com");
}

TEST(UrlExtract, ExactlyMaxUrlsIsNotTruncated) {
  std::string text;
  for (size_t i = 0; i < kMaxUrlsPerText; ++i) text += "https://x.com/" + std::to_string(i) + " ";
  ExtractResult r;
  ExtractUrls(text, &r);
  EXPECT_EQ(r.urls.size(), kMaxUrlsPerText);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.scanned_bytes, text.size());
}

TEST(UrlExtract, LongInputIsTruncatedAtTheCap) {
  // 2 MiB: filler, a URL that straddles the 1 MiB cap, and a URL after the cap.
  std::string text = "start evil.com ";
  text.append(kMaxExtractInputBytes - 20 - text.size(), 'x');
  text += " https://straddle.example/abcdefghijklmnop";
  text += " after.example.com ";
  text.append(2 * kMaxExtractInputBytes - text.size(), 'y');
  ASSERT_EQ(text.size(), 2 * kMaxExtractInputBytes);
  ExtractResult r;
  ExtractUrls(text, &r);
  ExpectInvariants(text, r);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.scanned_bytes, kMaxExtractInputBytes);
  ASSERT_EQ(r.urls.size(), 2u) << Describe(text.substr(0, 40), r);
  EXPECT_EQ(r.url(0), "http://evil.com");
  EXPECT_EQ(r.urls[1].begin, kMaxExtractInputBytes - 19);
  EXPECT_EQ(r.urls[1].end, kMaxExtractInputBytes);
  EXPECT_EQ(r.url(1), "https://straddle.ex");
}

TEST(UrlExtract, LongUrlIsCutAndFlagged) {
  const std::string path(20000, 'a');
  const std::string text = "see https://evil.com/" + path + " and next.com";
  ExtractResult r;
  ExtractUrls(text, &r);
  ExpectInvariants(text, r);
  ASSERT_EQ(r.urls.size(), 2u);
  EXPECT_TRUE(r.urls[0].cut);
  EXPECT_EQ(r.urls[0].begin, 4u);
  EXPECT_EQ(r.urls[0].end, 4 + std::string_view("https://evil.com/").size() + path.size());
  EXPECT_EQ(r.url(0).size(), kMaxExtractedUrlBytes);
  EXPECT_TRUE(r.url(0).starts_with("https://evil.com/aaaa"));
  EXPECT_FALSE(r.urls[1].cut);
  EXPECT_EQ(r.url(1), "http://next.com");
  CanonicalUrl canonical;
  EXPECT_TRUE(Canonicalize(r.url(0), &canonical).ok()) << "a cut URL must pass the canonicalizer's cap";
  EXPECT_EQ(canonical.host, "evil.com");
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<uint8_t>(s[i]);
    const size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<uint8_t>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

TEST(UrlExtract, CutKeepsUtf8CharactersWhole) {
  // "https://evil.com/" is 17 bytes; 2-byte characters after it make byte 8192 a continuation byte.
  std::string text = "https://evil.com/";
  for (int i = 0; i < 6000; ++i) text += "é";
  ExtractResult r;
  ExtractUrls(text, &r);
  ASSERT_EQ(r.urls.size(), 1u);
  EXPECT_TRUE(r.urls[0].cut);
  EXPECT_EQ(r.urls[0].end, text.size());
  EXPECT_EQ(r.url(0).size(), kMaxExtractedUrlBytes - 1);
  EXPECT_TRUE(IsValidUtf8(r.url(0)));
}

TEST(UrlExtract, ReusesCapacity) {
  const std::string text = "a https://x.com/1 b evil.com c hxxp://evil[.]org/x d";
  ExtractResult r;
  ExtractUrls(text, &r);
  ASSERT_EQ(r.urls.size(), 3u);
  const ExtractedUrl* urls_data = r.urls.data();
  const char* text_data = r.url_text.data();
  const std::string first_text = r.url_text;
  ExtractUrls("nothing here", &r);
  EXPECT_TRUE(r.urls.empty());
  EXPECT_TRUE(r.url_text.empty());
  ExtractUrls(text, &r);
  ASSERT_EQ(r.urls.size(), 3u);
  EXPECT_EQ(r.urls.data(), urls_data);
  EXPECT_EQ(r.url_text.data(), text_data);
  EXPECT_EQ(r.url_text, first_text);
  EXPECT_EQ(r.url(2), "http://evil.org/x");
}

// ---- hostile bytes ---------------------------------------------------------------------------------

TEST(UrlExtract, HostileBytesAroundUrls) {
  using namespace std::string_literals;
  struct OwnedCase {
    std::string text;  // owns the bytes: the literals hold NULs
    std::vector<Want> want;
  };
  const std::vector<OwnedCase> cases = {
      {"\0evil.com\0"s, {{"evil.com", "http://evil.com"}}},
      {"\377\377evil.com\377"s, {{"evil.com", "http://evil.com"}}},
      {"https://x.com/a\377b"s, {{"https://x.com/a", "https://x.com/a", kScheme}}},
      {"https://x.com/a\300\256b"s, {{"https://x.com/a", "https://x.com/a", kScheme}}},      // overlong '.'
      {"https://x.com/a\355\240\200b"s, {{"https://x.com/a", "https://x.com/a", kScheme}}},  // surrogate
      {"\200\200evil.com"s, {{"evil.com", "http://evil.com"}}},
      {"evil.c\377om"s, {}},
      {"http://\0evil.com"s, {{"evil.com", "http://evil.com"}}},
      {"https://x.com/\xe3\x81"s, {{"https://x.com/", "https://x.com/", kScheme}}},  // cut-off sequence
  };
  for (const OwnedCase& c : cases) ExpectCase({c.text, c.want});
}

TEST(UrlExtract, RandomBytesKeepTheContract) {
  // Deterministic pseudo-random messages over an alphabet rich in URL syntax, plus raw bytes.
  static constexpr std::string_view kAlphabet =
      "ahtpsxw.:/[](){}<>@ .-_*?#%\"'`,;!0123456789comzip\xff\xe3\x81\x82";
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  ExtractResult r;
  size_t found = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string text(next() % 200, '\0');
    const bool raw = next() % 4 == 0;
    for (char& c : text) {
      c = raw ? static_cast<char>(next()) : kAlphabet[next() % kAlphabet.size()];
    }
    ExtractUrls(text, &r);
    ExpectInvariants(text, r);
    found += r.urls.size();
  }
  EXPECT_GT(found, 0u);  // the alphabet does produce URLs: the invariants were exercised on real matches
}

TEST(UrlExtract, PathologicalInputsKeepTheContract) {
  auto repeat = [](std::string_view unit, size_t bytes) {
    std::string s;
    while (s.size() < bytes) s.append(unit);
    return s;
  };
  const size_t kBig = kMaxExtractInputBytes + 1000;
  const std::vector<std::string> inputs = {
      std::string(kBig, '\xff'),
      std::string(kBig, '\0'),
      repeat("a.", kBig),
      repeat("((((", kBig),
      repeat("http://", kBig),
      repeat("a@", kBig),
      repeat("[.]", kBig),
      repeat("1.", kBig),
      repeat("a [.] ", kBig),
      repeat("hxxp[:]//", kBig),
      "https://x.com/" + repeat(")", kBig),
      "https://x.com/" + repeat("(", kBig),
      repeat("\xe3\x81\x82", kBig),
      repeat("www.", kBig),
      "http://" + repeat("a:", kBig),
      "http://[" + repeat(":", kBig),
  };
  ExtractResult r;
  for (const std::string& text : inputs) {
    ExtractUrls(text, &r);
    ExpectInvariants(text, r);
    EXPECT_TRUE(r.truncated);
  }
}

// ---- TLD table -------------------------------------------------------------------------------------

TEST(Tld, KnownAndUnknown) {
  for (std::string_view tld : {"com", "org", "uk", "de", "xyz", "zip", "mov", "md", "xn--p1ai", "рф", "中国",
                               "xn--fiqs8s", "vermögensberater", "xn--vermgensberater-ctb"}) {
    EXPECT_TRUE(IsKnownTld(tld)) << tld;
  }
  for (std::string_view label : {"txt", "png", "exe", "js", "json", "gz", "", "COM", "com.", "c", "localhost",
                                 "example", "local", "xn--", "14"}) {
    EXPECT_FALSE(IsKnownTld(label)) << label;
  }
}

TEST(Tld, FileLikeTldsAreRealTlds) {
  for (std::string_view tld : {"zip", "mov", "sh", "py", "app", "md", "cc", "so", "rs", "java", "pub"}) {
    EXPECT_TRUE(IsFileLikeTld(tld)) << tld;
    EXPECT_TRUE(IsKnownTld(tld)) << tld;
  }
  for (std::string_view tld : {"com", "pl", "in", "io", "ai", "txt"}) {
    EXPECT_FALSE(IsFileLikeTld(tld)) << tld;
  }
}

TEST(Tld, TableNamesItsSourceAndLicense) {
  std::ifstream in(std::string(URLGUARD_SOURCE_DIR) + "/url/tld_table.inc");
  ASSERT_TRUE(in) << "cannot open url/tld_table.inc";
  std::string header;
  for (std::string line; std::getline(in, line) && line.starts_with("//");) header += line + "\n";
  EXPECT_NE(header.find("tools/gen_tld_table.sh"), std::string::npos) << header;
  EXPECT_NE(header.find("Public Suffix List"), std::string::npos) << header;
  EXPECT_NE(header.find("`publicsuffix` version "), std::string::npos) << header;
  EXPECT_NE(header.find("MPL-2.0"), std::string::npos) << header;
}

}  // namespace
}  // namespace urlguard
