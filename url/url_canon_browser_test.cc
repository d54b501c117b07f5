// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The browser's reading of special URLs (WHATWG URL Standard, url/url_canon.cc "WHATWG URL Standard"):
// every class of hostile spelling the browser differential test (tests/url_differential/) found missed
// before, from fixtures/browser/missed_spellings.tsv, through Canonicalize() and through ExtractUrls();
// the WHATWG IPv4 parser; and that URLs a browser refuses keep the Safe Browsing reading. Needs no node.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "url/url_canon.h"
#include "url/url_extract.h"
#include "tests/fixture_escapes.h"

namespace urlguard {
namespace {

struct Spelling {
  int line = 0;
  std::string input, host, klass, node_hostname;
};

std::vector<Spelling> ReadSpellings() {
  const std::string path = std::string(URLGUARD_SOURCE_DIR) + "/fixtures/browser/missed_spellings.tsv";
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::vector<Spelling> rows;
  std::string line;
  bool header = false;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    for (size_t start = 0;;) {
      const size_t tab = line.find('\t', start);
      f.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    if (!header) {
      EXPECT_EQ(f, (std::vector<std::string>{"input", "host", "class", "node_hostname"}));
      header = true;
      continue;
    }
    EXPECT_EQ(f.size(), 4u) << path << ":" << number;
    f.resize(4);
    rows.push_back({number, testing::DecodeFixtureEscapes(f[0]), f[1], f[2], f[3]});
  }
  return rows;
}

TEST(UrlCanonBrowser, MissedSpellingsCanonicalizeToTheBrowsersHost) {
  const std::vector<Spelling> rows = ReadSpellings();
  std::set<std::string> classes;
  for (const Spelling& r : rows) {
    classes.insert(r.klass);
    // Node reports the root dot ("evil.example."); urlguard drops it, as the Safe Browsing rules do.
    std::string node = r.node_hostname;
    if (!node.empty() && node.back() == '.') node.pop_back();
    const bool mapped = node.starts_with("[::ffff:") || node.starts_with("[64:ff9b::");
    if (!mapped && node.find_first_not_of("0123456789.") != std::string::npos) {
      EXPECT_EQ(node, r.host) << "line " << r.line << ": fixture host differs from the browser's";
    }
    CanonicalUrl url;
    const Status s = Canonicalize(r.input, &url);
    ASSERT_TRUE(s.ok()) << "line " << r.line << ": " << s.ToString();
    EXPECT_EQ(url.host, r.host) << "line " << r.line << " (" << r.klass << ")";
    // Idempotent, like every canonical form.
    CanonicalUrl again;
    ASSERT_TRUE(Canonicalize(url.Spec(), &again).ok()) << url.Spec();
    EXPECT_EQ(again.Spec(), url.Spec());
  }
  EXPECT_GE(rows.size(), 20u);
  for (const char* k : {"missing-slashes", "one-slash", "extra-slashes", "backslashes",
                        "escaped-delimiter-in-userinfo", "whatwg-ipv4", "combined"}) {
    EXPECT_TRUE(classes.count(k)) << "no row of class " << k;
  }
}

// `urlguard scan`: a chat message holding the spelling yields a URL with the browser's host.
TEST(UrlCanonBrowser, MissedSpellingsAreFoundInMessages) {
  int checked = 0;
  ExtractResult found;
  for (const Spelling& r : ReadSpellings()) {
    if (r.input.find_first_of(std::string("\0\x01\x09\x0a\x0d\x1f ", 7)) != std::string::npos) continue;
    for (const std::string& text : {"see " + r.input + " now", r.input, "(" + r.input + ")"}) {
      ExtractUrls(text, &found);
      bool hit = false;
      for (size_t i = 0; i < found.urls.size(); ++i) {
        CanonicalUrl url;
        hit = hit || (Canonicalize(found.url(i), &url).ok() && url.host == r.host);
      }
      EXPECT_TRUE(hit) << "line " << r.line << ": no URL with host " << r.host << " in " << text;
      ++checked;
    }
  }
  EXPECT_GE(checked, 60);
}

TEST(UrlCanonBrowser, WhatwgIpv4) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"http://0x/", "0.0.0.0"},  // "0x" alone is 0
      {"http://0x.0x.0x.0x1/", "0.0.0.1"},
      {"http://0300.0250.0.1/", "192.168.0.1"},  // octal
      {"http://192.168.257/", "192.168.1.1"},    // the last part fills two bytes
      {"http://3232235777./", "192.168.1.1"},    // one number, root dot
      {"http:0xC0A80101", "192.168.1.1"},
  };
  for (const auto& [input, host] : cases) {
    CanonicalUrl url;
    ASSERT_TRUE(Canonicalize(input, &url).ok()) << input;
    EXPECT_EQ(url.host, host) << input;
    EXPECT_EQ(url.host_kind, HostKind::kIpv4) << input;
  }
}

// Where a browser refuses the URL, the Safe Browsing reading (unescape everything, then split) stays.
TEST(UrlCanonBrowser, UrlsBrowsersRefuseKeepTheSafeBrowsingReading) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"http://u%40a.com%40b.com/", "http://b.com/"},  // '@' in the decoded host: browsers refuse
      {"http://a.com%2Fb/c", "http://a.com/b/c"},      // '/' in the decoded host
      {"http://a.com:99999/x", "http://a.com/x"},      // port out of range
      {"http%3A%2F%2Fa.com/", "http://a.com/"},        // escaped scheme: not a URL to a browser
      {"a.com:8080/x", "http://a.com/x"},              // no scheme
  };
  for (const auto& [input, spec] : cases) {
    CanonicalUrl url;
    ASSERT_TRUE(Canonicalize(input, &url).ok()) << input;
    EXPECT_EQ(url.Spec(), spec) << input;
  }
  for (const char* refused : {"http:", "http:///", "http://@/", "http://evil.example@/", "http:\\\\:80/",
                              "mailto:bob@evil.example", "javascript:alert(1)"}) {
    CanonicalUrl url;
    EXPECT_FALSE(Canonicalize(refused, &url).ok()) << refused;
  }
}

}  // namespace
}  // namespace urlguard
