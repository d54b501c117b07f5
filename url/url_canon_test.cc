// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Tests for url/url_canon: every row of the public Safe Browsing vectors in fixtures/vectors/, plus
// idempotence, hostile inputs, the size cap, and a cross-check of the one-pass unescaping against the
// obvious round-by-round reference.
#include "url/url_canon.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "tests/fixture_escapes.h"

namespace urlguard {
namespace {

// ---- fixture reading ---------------------------------------------------------------------------------

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return fields;
}

struct Row {
  int line = 0;
  std::vector<std::string> fields;  // decoded
};

// Reads fixtures/<folder>/<name>: '#' lines are comments, the first other line is the header (checked
// against `header`), every further line is a row of at least header.size() fields (a line starting with
// TAB has an empty first field). Fails the test when the file is missing or has no rows.
std::vector<Row> ReadVectors(const std::string& name, const std::vector<std::string>& header,
                             const std::string& folder = "vectors") {
  const std::string path = std::string(URLGUARD_SOURCE_DIR) + "/fixtures/" + folder + "/" + name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::vector<Row> rows;
  std::string line;
  bool saw_header = false;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '#') continue;
    if (line.empty()) continue;
    std::vector<std::string> fields = SplitTabs(line);
    if (!saw_header) {
      EXPECT_EQ(fields, header) << path << ": unexpected header line " << number;
      saw_header = true;
      continue;
    }
    EXPECT_GE(fields.size(), header.size()) << path << ":" << number;
    fields.resize(std::max(fields.size(), header.size()));
    Row row;
    row.line = number;
    for (const std::string& f : fields) row.fields.push_back(testing::DecodeFixtureEscapes(f));
    rows.push_back(std::move(row));
  }
  EXPECT_TRUE(saw_header) << path;
  EXPECT_FALSE(rows.empty()) << path << " has no rows";
  return rows;
}

std::vector<std::string> SplitSpaces(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  std::string w;
  while (is >> w) out.push_back(w);
  return out;
}

// The input as printable ASCII, cut to 160 bytes (failure messages stay readable for 8 KiB inputs).
std::string Printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s.substr(0, 160)) {
    if (c < 0x20 || c >= 0x7F || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  if (s.size() > 160) out += "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string IpString(const uint8_t ip[4]) {
  return std::to_string(ip[0]) + "." + std::to_string(ip[1]) + "." + std::to_string(ip[2]) + "." +
         std::to_string(ip[3]);
}

// Checks the idempotence property on one input; returns whether the input canonicalized.
bool ExpectIdempotent(const std::string& input) {
  CanonicalUrl first;
  if (!Canonicalize(input, &first).ok()) return false;
  const std::string spec = first.Spec();
  CanonicalUrl second;
  const Status again = Canonicalize(spec, &second);
  EXPECT_TRUE(again.ok()) << Printable(input) << " -> " << Printable(spec) << ": " << again.ToString();
  if (!again.ok()) return true;
  EXPECT_EQ(second.Spec(), spec) << "input " << Printable(input);
  EXPECT_EQ(second.host_kind, first.host_kind) << Printable(input);
  EXPECT_EQ(second.has_query, first.has_query) << Printable(input);
  EXPECT_EQ(second.path, first.path) << Printable(input);
  return true;
}

// ---- the public vectors ------------------------------------------------------------------------------

TEST(UrlCanonVectors, Canonicalization) {
  const std::vector<Row> rows = ReadVectors("canonicalization.tsv", {"input", "expected", "source"});
  for (const Row& row : rows) {
    const std::string& input = row.fields[0];
    const std::string& expected = row.fields[1];
    CanonicalUrl url;
    const Status s = Canonicalize(input, &url);
    ASSERT_TRUE(s.ok()) << "line " << row.line << " " << Printable(input) << ": " << s.ToString();
    EXPECT_EQ(url.Spec(), expected) << "line " << row.line << " input " << Printable(input);
    ExpectIdempotent(input);
  }
}

// The rows of rejected.tsv that a browser opens (fixtures/browser/overruled_rejected.tsv says why): the
// browser's reading wins, because a host a browser contacts must be checked.
std::map<std::string, std::string> OverruledRejections() {
  std::map<std::string, std::string> out;
  for (const Row& row :
       ReadVectors("overruled_rejected.tsv", {"input", "expected", "node_href", "source"}, "browser")) {
    out[row.fields[0]] = row.fields[1];
  }
  return out;
}

TEST(UrlCanonVectors, Rejected) {
  const std::vector<Row> rows = ReadVectors("rejected.tsv", {"input", "source"});
  std::map<std::string, std::string> overruled = OverruledRejections();
  EXPECT_EQ(overruled.size(), 4u);
  for (const Row& row : rows) {
    CanonicalUrl url;
    if (const auto it = overruled.find(row.fields[0]); it != overruled.end()) {
      const Status s = Canonicalize(row.fields[0], &url);
      ASSERT_TRUE(s.ok()) << "line " << row.line << " " << Printable(row.fields[0]) << ": " << s.ToString();
      EXPECT_EQ(url.Spec(), it->second) << "line " << row.line;
      ExpectIdempotent(row.fields[0]);
      overruled.erase(it);
      continue;
    }
    const Status s = Canonicalize(row.fields[0], &url);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument)
        << "line " << row.line << " " << Printable(row.fields[0]);
    EXPECT_FALSE(s.message().empty());
  }
  for (const auto& [input, expected] : overruled) {
    ADD_FAILURE() << "overruled_rejected.tsv row " << Printable(input) << " is not in rejected.tsv";
  }
}

TEST(UrlCanonVectors, Components) {
  const std::vector<Row> rows = ReadVectors("components.tsv", {"kind", "input", "expected", "source"});
  std::map<std::string, int> seen;
  for (const Row& row : rows) {
    const std::string& kind = row.fields[0];
    const std::string& input = row.fields[1];
    const std::string& expected = row.fields[2];
    const std::string where = "line " + std::to_string(row.line) + " " + kind + " " + Printable(input);
    ++seen[kind.substr(0, kind.find('('))];
    CanonicalUrl url;
    if (kind == "canonical_host" || kind == "canonical_path" || kind == "lookup_hosts" ||
        kind == "lookup_paths") {
      const Status s = Canonicalize(input, &url);
      if (expected.empty()) {
        EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << where;
        continue;
      }
      ASSERT_TRUE(s.ok()) << where << ": " << s.ToString();
      if (kind == "canonical_host") {
        EXPECT_EQ(url.host, expected) << where;
      } else if (kind == "canonical_path") {
        EXPECT_EQ(url.path, expected) << where;
      } else {
        // The sources disagree on order, so compare as sets.
        const std::vector<std::string> got =
            kind == "lookup_hosts" ? internal::LookupHosts(url) : internal::LookupPaths(url);
        const std::vector<std::string> want = SplitSpaces(expected);
        EXPECT_EQ(std::set<std::string>(got.begin(), got.end()),
                  std::set<std::string>(want.begin(), want.end()))
            << where;
        EXPECT_EQ(got.size(), std::set<std::string>(got.begin(), got.end()).size())
            << where << ": duplicates";
      }
    } else if (kind == "canonical_hostname" || kind == "canonical_host_v5") {
      const Status s = internal::CanonicalizeHostname(input, &url);
      ASSERT_TRUE(s.ok()) << where << ": " << s.ToString();
      EXPECT_EQ(url.host, expected) << where;
    } else if (kind == "canonicalize_path") {
      std::string out = "garbage";
      ASSERT_TRUE(internal::CanonicalizeEscapes(input, &out).ok()) << where;
      EXPECT_EQ(out, expected) << where;
    } else if (kind == "special_encode") {
      std::string out;
      internal::SpecialEncode(input, /*fold_slashes=*/true, &out);
      EXPECT_EQ(out, expected) << where;
    } else if (kind == "parse_ip") {
      uint8_t ip[4] = {};
      const bool ok = internal::ParseIpv4(input, ip);
      EXPECT_EQ(ok, !expected.empty()) << where;
      if (ok) {
        EXPECT_EQ(IpString(ip), expected) << where;
      }
    } else if (kind.rfind("canonical_num(", 0) == 0) {
      int bytes = -1;
      char octal[8] = {};
      ASSERT_EQ(std::sscanf(kind.c_str(), "canonical_num(bytes=%d,allowOctal=%5[a-z])", &bytes, octal), 2)
          << where;
      ASSERT_TRUE(std::strcmp(octal, "true") == 0 || std::strcmp(octal, "false") == 0) << where;
      std::string out = "garbage";
      const bool ok = internal::CanonicalNum(input, bytes, std::strcmp(octal, "true") == 0, &out);
      EXPECT_EQ(ok, !expected.empty()) << where;
      EXPECT_EQ(out, expected) << where;
    } else {
      ADD_FAILURE() << where << ": unknown kind (add it to this test)";
    }
  }
  for (const char* kind :
       {"canonical_host", "canonical_host_v5", "canonical_hostname", "canonical_path", "canonicalize_path",
        "special_encode", "parse_ip", "canonical_num", "lookup_hosts", "lookup_paths"}) {
    EXPECT_GT(seen[kind], 0) << "no rows of kind " << kind;
  }
}

TEST(UrlCanonVectors, Expressions) {
  const std::vector<Row> rows = ReadVectors("expressions.tsv", {"url", "expressions", "source"});
  ExpressionList list;
  for (const Row& row : rows) {
    CanonicalUrl url;
    const Status s = Canonicalize(row.fields[0], &url);
    ASSERT_TRUE(s.ok()) << "line " << row.line << ": " << s.ToString();
    MakeExpressions(url, &list);
    std::vector<std::string> got;
    for (size_t i = 0; i < list.size(); ++i) got.emplace_back(list[i]);
    const std::vector<std::string> want = SplitSpaces(row.fields[1]);
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), std::set<std::string>(want.begin(), want.end()))
        << "line " << row.line << " " << row.fields[0];
    EXPECT_EQ(got.size(), want.size()) << "line " << row.line << ": duplicates";
    EXPECT_LE(list.size(), kMaxExpressions);
  }
}

TEST(UrlCanonVectors, Hashes) {
  const std::vector<Row> rows = ReadVectors("hashes.tsv", {"kind", "input", "sha256", "source"});
  int expressions = 0, checksums = 0;
  for (const Row& row : rows) {
    const std::string& kind = row.fields[0];
    if (kind == "expression") {
      ++expressions;
      EXPECT_EQ(ToHex(Sha256(row.fields[1])), row.fields[2]) << "line " << row.line;
    } else if (kind == "sorted_prefix_list_checksum") {
      ++checksums;
      std::vector<std::string> prefixes;
      if (row.fields[1] != "(empty list)") prefixes = SplitSpaces(row.fields[1]);
      std::sort(prefixes.begin(), prefixes.end());
      std::string concatenated;
      for (const std::string& p : prefixes) concatenated += p;
      EXPECT_EQ(ToHex(Sha256(concatenated)), row.fields[2]) << "line " << row.line;
    } else {
      ADD_FAILURE() << "line " << row.line << ": unknown kind " << kind;
    }
  }
  EXPECT_GT(expressions, 0);
  EXPECT_GT(checksums, 0);
}

// The expressions of the v4 documentation example hash to the keys in hashes.tsv: the chain from URL to
// key, end to end.
TEST(UrlCanonVectors, ExpressionHashesOfDocExample) {
  const std::vector<Row> rows = ReadVectors("hashes.tsv", {"kind", "input", "sha256", "source"});
  std::map<std::string, std::string> by_expression;
  for (const Row& row : rows) {
    if (row.fields[0] == "expression") by_expression[row.fields[1]] = row.fields[2];
  }
  CanonicalUrl url;
  ASSERT_TRUE(Canonicalize("http://a.b.c/1/2.html?param=1", &url).ok());
  ExpressionList list;
  MakeExpressions(url, &list);
  ASSERT_EQ(list.size(), 8u);
  for (size_t i = 0; i < list.size(); ++i) {
    const auto it = by_expression.find(std::string(list[i]));
    ASSERT_NE(it, by_expression.end()) << list[i];
    EXPECT_EQ(ToHex(Sha256(list[i])), it->second);
  }
}

// ---- structure and order -----------------------------------------------------------------------------

TEST(UrlCanon, Fields) {
  CanonicalUrl url;
  ASSERT_TRUE(Canonicalize("HTTPS://User:Pw@WWW.Example.COM:8443/a/./b/../c?X=1#frag", &url).ok());
  EXPECT_EQ(url.scheme, "https");
  EXPECT_EQ(url.host, "www.example.com");
  EXPECT_EQ(url.path, "/a/c");
  EXPECT_TRUE(url.has_query);
  EXPECT_EQ(url.query, "X=1");
  EXPECT_EQ(url.host_kind, HostKind::kName);
  EXPECT_EQ(url.Spec(), "https://www.example.com/a/c?X=1");

  ASSERT_TRUE(Canonicalize("http://0x7f.1/", &url).ok());
  EXPECT_EQ(url.host, "127.0.0.1");
  EXPECT_EQ(url.host_kind, HostKind::kIpv4);
  const uint8_t v4[4] = {127, 0, 0, 1};
  EXPECT_EQ(std::memcmp(url.ip, v4, 4), 0);
  EXPECT_FALSE(url.has_query);
  EXPECT_EQ(url.query, "");

  ASSERT_TRUE(Canonicalize("http://[2001:DB8:0:0:0:0:0:1]:80/x", &url).ok());
  EXPECT_EQ(url.host, "[2001:db8::1]");
  EXPECT_EQ(url.host_kind, HostKind::kIpv6);
  EXPECT_EQ(url.ip[0], 0x20);
  EXPECT_EQ(url.ip[1], 0x01);
  EXPECT_EQ(url.ip[15], 0x01);

  ASSERT_TRUE(Canonicalize("http://[::ffff:10.1.2.3]/", &url).ok());
  EXPECT_EQ(url.host, "10.1.2.3");
  EXPECT_EQ(url.host_kind, HostKind::kIpv4);
  ASSERT_TRUE(Canonicalize("http://[64:ff9b::a01:203]/", &url).ok());
  EXPECT_EQ(url.host, "10.1.2.3");

  ASSERT_TRUE(Canonicalize("http://a.b/?", &url).ok());
  EXPECT_TRUE(url.has_query);
  EXPECT_EQ(url.query, "");
  EXPECT_EQ(url.Spec(), "http://a.b/?");
}

TEST(UrlCanon, PolicyChoices) {
  struct Case {
    const char* input;
    const char* expected;
  } cases[] = {
      // Browsers read '\' as '/' before the query; the query keeps it.
      {"http://evil.com\\@good.com/x\\y?a\\b", "http://evil.com/@good.com/x/y?a\\b"},
      {"http:\\\\evil.com\\x", "http://evil.com/x"},
      // A final ".." or "." leaves a trailing slash (as browsers resolve it).
      {"http://a.com/a/b/..", "http://a.com/a/"},
      {"http://a.com/a/b/.", "http://a.com/a/b/"},
      {"http://a.com/../../x", "http://a.com/x"},
      {"http://a.com/%2e%2E/x/%2e/", "http://a.com/x/"},
      // Escaped delimiters act as delimiters (the whole URL is unescaped first).
      {"http://a.com/x%3Fy", "http://a.com/x?y"},
      {"http://a.com%2Fb/c", "http://a.com/b/c"},
      {"http://u%40a.com%40b.com/", "http://b.com/"},
      // Escaped '#' and '%' stay escaped; the fragment is cut at the first raw '#'.
      {"http://a.com/%23x#y", "http://a.com/%23x"},
      {"http://a.com/%zz%%41", "http://a.com/%25zz%25A"},
      // Ports: any digits (even huge or empty) are dropped.
      {"http://a.com:/x", "http://a.com/x"},
      {"http://a.com:000000000000000000000000000099999/x", "http://a.com/x"},
      {"a.com:8080/x", "http://a.com/x"},
      // Leading and trailing C0 controls and spaces are stripped; inner ones escaped.
      {"\x01 http://a.com/x y \x1f", "http://a.com/x%20y"},
      {"http://a.com/x #frag", "http://a.com/x"},
      // IPv4 forms.
      {"http://1/", "http://0.0.0.1/"},
      {"http://0x7F000001/", "http://127.0.0.1/"},
      {"http://017700000001/", "http://127.0.0.1/"},
      {"http://1.2.3.4.5/", "http://1.2.3.4.5/"},
      {"http://10.192.95.89%20xy/", "http://10.192.95.89/"},
      {"http://10.192.95.89%20xyz/", "http://10.192.95.89%20xyz/"},
      // IDN.
      {"http://B\xC3\x9C\x43HER.example/", "http://xn--bcher-kva.example/"},
      {"http://\xF0\x9F\x92\xA9.la/", "http://xn--ls8h.la/"},
      {"http://%E2%98%83.net/", "http://xn--n3h.net/"},
      // Fullwidth solidus / percent map to '/' and '%' under UTS #46: refused as IDN, so the bytes stay.
      {"http://a\xEF\xBC\x8F"
       "b.com/",
       "http://a%EF%BC%8Fb.com/"},
      {"http://\xEF\xBC\x85\xEF\xBC\x94\xEF\xBC\x91.com/", "http://%EF%BC%85%EF%BC%94%EF%BC%91.com/"},
      // Fullwidth digits map to ASCII digits, and then the host is an IPv4 address (as in browsers).
      {"http://\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x97.0.0.1/", "http://127.0.0.1/"},
      // Scheme is lower-cased and kept.
      {"FTP://h/", "ftp://h/"},
      {"wss://h/x", "wss://h/x"},
  };
  for (const Case& c : cases) {
    CanonicalUrl url;
    const Status s = Canonicalize(c.input, &url);
    ASSERT_TRUE(s.ok()) << Printable(c.input) << ": " << s.ToString();
    EXPECT_EQ(url.Spec(), c.expected) << Printable(c.input);
    ExpectIdempotent(c.input);
  }
}

TEST(UrlCanon, Failures) {
  const char* inputs[] = {
      "http://a.com:80x/",     // port not a number
      "http://a.com:1:2/",     // two ports
      "http://[::1/",          // unterminated '['
      "http://[::1]x/",        // text after ']'
      "http://[1:2:3]/",       // not an IPv6 address
      "http://[]/",            // empty brackets
      "http://[::1%25eth0]/",  // zone ids are not hosts
      "http://.../",           // only dots
      "http://user@/",         // only userinfo
      "http://:80/",           // only a port
      "about:blank",           // no authority
      "  \t\r\n ",             // only whitespace
      "#",                     // only a fragment
  };
  for (const char* input : inputs) {
    CanonicalUrl url;
    const Status s = Canonicalize(input, &url);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << Printable(input);
    EXPECT_FALSE(s.message().empty());
  }
}

TEST(UrlCanon, ExpressionOrderAndFlags) {
  CanonicalUrl url;
  ASSERT_TRUE(Canonicalize("http://a.b.c.d.e.f/1/2/3/4.html?q=1", &url).ok());
  ExpressionList list;
  MakeExpressions(url, &list);
  const std::vector<std::string> paths = {
      "/1/2/3/4.html?q=1", "/1/2/3/4.html", "/", "/1/", "/1/2/", "/1/2/3/"};
  const std::vector<std::string> hosts = {"a.b.c.d.e.f", "b.c.d.e.f", "c.d.e.f", "d.e.f", "e.f"};
  ASSERT_EQ(list.size(), hosts.size() * paths.size());
  EXPECT_EQ(list.size(), kMaxExpressions);
  EXPECT_EQ(list.host_count(), hosts.size());
  size_t i = 0;
  for (const std::string& h : hosts) {
    for (const std::string& p : paths) {
      EXPECT_EQ(list[i], h + p);
      EXPECT_EQ(list.is_host_root(i), p == "/") << list[i];
      ++i;
    }
  }
  EXPECT_EQ(internal::LookupHosts(url), hosts);
  EXPECT_EQ(internal::LookupPaths(url), paths);

  // IP hosts: only the exact host. Empty query: no "path?" expression. Exact path "/" is not repeated.
  ASSERT_TRUE(Canonicalize("http://1.2.3.4/?", &url).ok());
  MakeExpressions(url, &list);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0], "1.2.3.4/");
  EXPECT_TRUE(list.is_host_root(0));
  EXPECT_EQ(list.host_count(), 1u);

  ASSERT_TRUE(Canonicalize("http://a.b/?x", &url).ok());
  MakeExpressions(url, &list);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], "a.b/?x");
  EXPECT_FALSE(list.is_host_root(0));
  EXPECT_EQ(list[1], "a.b/");
  EXPECT_TRUE(list.is_host_root(1));

  ASSERT_TRUE(Canonicalize("http://[2001:db8::1]/a/b", &url).ok());
  MakeExpressions(url, &list);
  EXPECT_EQ(list.host_count(), 1u);
  EXPECT_EQ(list.size(), 3u);
}

TEST(UrlCanon, ExpressionListAdd) {
  ExpressionList list;
  list.Add("a.b", "/");
  list.Add("a.b", "/");
  list.Add("a.b", "/x");
  list.Add("a.b/", "x");  // same bytes as "a.b" + "/x": a duplicate
  ASSERT_EQ(list.size(), 2u);
  EXPECT_TRUE(list.is_host_root(0));
  EXPECT_FALSE(list.is_host_root(1));
  for (int i = 0; i < 40; ++i) list.Add("h", "/" + std::to_string(i));
  EXPECT_EQ(list.size(), kMaxExpressions);
  list.Clear();
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.host_count(), 0u);
}

// The outputs' capacity is reused: canonicalizing a shorter URL into the same object does not
// reallocate its strings.
TEST(UrlCanon, ReusesCapacity) {
  CanonicalUrl url;
  ASSERT_TRUE(
      Canonicalize("http://www.example-long-host-name.com/some/long/path/file.html?query=value", &url).ok());
  const char* host = url.host.data();
  const char* path = url.path.data();
  const char* query = url.query.data();
  ExpressionList list;
  MakeExpressions(url, &list);
  ASSERT_TRUE(Canonicalize("http://www.example.com/a/b.html?q=v", &url).ok());
  EXPECT_EQ(url.host.data(), host);
  EXPECT_EQ(url.path.data(), path);
  EXPECT_EQ(url.query.data(), query);
  const char* first = list[0].data();
  MakeExpressions(url, &list);
  EXPECT_EQ(list[0].data(), first);
}

// ---- unescaping --------------------------------------------------------------------------------------

// The obvious reference: single-pass unescape, repeated until nothing changes (as the v4 reference
// client does it).
std::string UnescapeOnce(const std::string& s) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

int SlowUnescape(std::string s, std::string* out) {
  for (int rounds = 0;; ++rounds) {
    std::string t = UnescapeOnce(s);
    if (t == s) {
      *out = s;
      return rounds;
    }
    if (rounds == kMaxUnescapeRounds) return -1;
    s = std::move(t);
  }
}

TEST(UrlCanonUnescape, MatchesRoundByRoundReference) {
  std::mt19937 rng(12345);
  const char alphabet[] = "%%%%2255ABab01x/";
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s(rng() % 24, ' ');
    for (char& c : s) c = alphabet[rng() % (sizeof(alphabet) - 1)];
    std::string fast, slow;
    const int fast_rounds = internal::UnescapeRepeatedly(s, &fast);
    const int slow_rounds = SlowUnescape(s, &slow);
    ASSERT_EQ(fast_rounds, slow_rounds) << s;
    ASSERT_EQ(fast, slow) << s;
  }
}

TEST(UrlCanonUnescape, RoundLimit) {
  // "%25" followed by k-1 times "25" needs exactly k rounds.
  auto nested = [](int k) {
    std::string s = "http://a.com/%";
    for (int i = 0; i < k; ++i) s += "25";
    return s;
  };
  std::string out;
  EXPECT_EQ(internal::UnescapeRepeatedly("%252525", &out), 3);
  EXPECT_EQ(out, "%");
  CanonicalUrl url;
  ASSERT_TRUE(Canonicalize(nested(kMaxUnescapeRounds), &url).ok());
  EXPECT_EQ(url.Spec(), "http://a.com/%25");
  const Status s = Canonicalize(nested(kMaxUnescapeRounds + 1), &url);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unescap"), std::string::npos) << s.message();
  // The deepest nesting the size cap allows is refused too, and quickly (one linear pass).
  EXPECT_FALSE(Canonicalize(nested((kMaxUrlBytes - 14) / 2), &url).ok());
}

// ---- size cap and hostile input ----------------------------------------------------------------------

TEST(UrlCanon, SizeCap) {
  std::string at_cap = "http://a.com/";
  at_cap.resize(kMaxUrlBytes, 'x');
  CanonicalUrl url;
  ASSERT_TRUE(Canonicalize(at_cap, &url).ok());
  EXPECT_EQ(url.path.size(), kMaxUrlBytes - 12);
  const std::string over = at_cap + "x";
  const Status s = Canonicalize(over, &url);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("8192"), std::string::npos) << s.message();
  // Escaping can triple the size; the canonical form is capped too, so that it re-canonicalizes.
  std::string fits = "http://a.com/";
  fits.append((kMaxUrlBytes - 13) / 3, '\x7f');
  ASSERT_TRUE(Canonicalize(fits, &url).ok());
  EXPECT_LE(url.Spec().size(), kMaxUrlBytes);
  EXPECT_TRUE(ExpectIdempotent(fits));
  std::string triples = "http://a.com/";
  triples.append((kMaxUrlBytes - 13) / 3 + 1, '\x7f');
  const Status t = Canonicalize(triples, &url);
  EXPECT_EQ(t.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.message().find("canonical form"), std::string::npos) << t.message();
}

std::vector<std::string> HostileInputs() {
  std::vector<std::string> v = {
      std::string("http://a\0b.com/\0x?\0", 19),
      std::string("\0", 1),
      std::string("http://a.com/%00%2500", 21),
      std::string(8192, '%'),
      "http://a.com/" + std::string(8179, '%'),
      std::string(8192, '.'),
      std::string(8192, '/'),
      std::string(8192, '@'),
      std::string(8192, ':'),
      std::string(8192, '['),
      std::string(8192, '\\'),
      std::string(8192, '\xff'),
      "http://" + std::string(8185, '\xff'),
      "http://" + std::string(8185, 'a'),
      "http://" + std::string(4000, '.') + "a" + std::string(4000, '.'),
      "http://a.com/" + std::string(8179 / 3 * 3, '.'),
      "http://a.com" +
          [] {
            std::string s;
            while (s.size() + 3 < 8180) s += "/..";
            return s;
          }(),
      "http://a.com" +
          [] {
            std::string s;
            while (s.size() + 4 < 8180) s += "/%2e";
            return s;
          }(),
      "http://[",
      "http://[::1",
      "http://[" + std::string(100, ':') + "]/",
      "http://[" + std::string(8000, 'f') + "]/",
      "[",
      "]",
      "%",
      "%2",
      "http://a.com/%",
      "http://a.com/%2",
      "http://a.com/?%",
      "http://a.com/?%2",
      "http://%",
      "http://%2",
      "http://a.com:99999999999999999999999999999999999999/",
      "http://a.com:-1/",
      "http://a.com:0x50/",
      "http://a.com/p@th/@/x@y",
      "http://u:p@a@b@c.com/",
      "http://@/",
      "http://@@@/",
      "http:\\\\a.com\\x\\..\\y",
      "\\\\a.com",
      "http://a.com\\",
      "\xef\xbb\xbfhttp://a.com/",     // UTF-8 BOM
      "http://\xc0\xaf.com/",          // overlong '/'
      "http://\xed\xa0\x80.com/",      // surrogate
      "http://\xf4\x90\x80\x80.com/",  // above U+10FFFF
      "http://xn--/",
      "http://xn--ls8h.la/",
      "http://" + std::string(300, 'a') + "\xc3\xbc.com/",
      "http://" +
          [] {
            std::string s;
            for (int i = 0; i < 1000; ++i) s += "\xc3\xbc";
            return s;
          }() +
          "/",
      "http://" +
          [] {
            std::string s;
            for (int i = 0; i < 80; ++i) s += "\xe2\x98\x83";
            return s;
          }() +
          "/",
      "http://\xe3\x80\x82\xe3\x80\x82/",  // ideographic full stops only
      "http://a\xe3\x80\x82"
      "b/",
      "http://\xc2\xad/",  // soft hyphen maps to nothing
      "http://0x/",
      "http://0x.0x.0x.0x/",
      "http://4294967296/",
      "http://0xffffffffffffffffffffff/",
      "http://0777777777777777777777777/",
      "http://1.2.3.4 xy/",
      "http:// 1.2.3.4/",
      "http://1.2.3.4%20%20/",
      "http://[::ffff:1.2.3.4]:/",
      "http://[::ffff:1.2.3.4]:80:80/",
      "http://[0:0:0:0:0:0:0:0]/",
      "http://[::1%00]/",
      "mailto://x",
      "javascript:alert(1)//http://x",
      "http%3A%2F%2F",
      "%68%74%74%70%3a%2f%2f%61%2e%63%6f%6d",
      "HtTp://A.CoM/%7E",
      "http://a.com/?" + std::string(8000, '?'),
      "http://a.com/#" + std::string(8000, '#'),
      "http://a.com/\t\t\t\r\n",
      "\t\r\n",
      "http://a.com/%0%0%0%0",
      "http://a.com/%%%%%%%%41",
      "http://a.com/%2%35%2541",
      "1http://x",
      "+://x",
      "a:1",
      "a:1/b:2",
      "a.com:80",
      "http:80",
  };
  return v;
}

TEST(UrlCanon, HostileInputsNeverCrashAndStayIdempotent) {
  ExpressionList list;
  int ok = 0, failed = 0;
  for (const std::string& input : HostileInputs()) {
    CanonicalUrl url;
    const Status s = Canonicalize(input, &url);
    if (!s.ok()) {
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << Printable(input.substr(0, 80));
      EXPECT_FALSE(s.message().empty());
      ++failed;
      continue;
    }
    ++ok;
    EXPECT_FALSE(url.host.empty());
    ASSERT_FALSE(url.path.empty());
    EXPECT_EQ(url.path[0], '/');
    MakeExpressions(url, &list);
    EXPECT_GE(list.size(), 1u);
    EXPECT_LE(list.size(), kMaxExpressions);
    ExpectIdempotent(input);
  }
  // Both outcomes occur: the list is not all-accept or all-reject.
  EXPECT_GT(ok, 20);
  EXPECT_GT(failed, 10);
}

// Random URL-shaped byte strings: canonicalization never crashes, and its output is a fixed point.
TEST(UrlCanon, RandomInputsAreIdempotent) {
  std::mt19937 rng(4242);
  const std::vector<std::string> pieces = {
      "http://",
      "https:",
      "//",
      "/",
      "\\",
      "?",
      "#",
      "@",
      ":",
      ":80",
      ".",
      "..",
      "%",
      "%2",
      "%25",
      "%2e",
      "%2F",
      "%3F",
      "%40",
      "%23",
      "%5C",
      "%3A",
      "%00",
      "%20",
      " ",
      "\t",
      "a",
      "B",
      "xn--",
      "0x",
      "0",
      "1",
      "8",
      "255",
      "4294967295",
      "[",
      "]",
      "::",
      "ffff",
      "64:ff9b",
      "1.2.3.4",
      "\xc3\xbc",
      "\xef\xbc\x8f",
      "\xef\xbc\x85",
      "\xef\xbc\x91",
      "\xe3\x80\x82",
      "\xff",
      "\x80",
      "\x01",
      "com",
      "www",
      "&",
      "=",
      ";",
  };
  int ok = 0;
  for (int iter = 0; iter < 30000; ++iter) {
    std::string input;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) input += pieces[rng() % pieces.size()];
    if (ExpectIdempotent(input)) ++ok;
    if (HasFailure()) {
      ADD_FAILURE() << "first failing input: " << Printable(input);
      return;
    }
  }
  EXPECT_GT(ok, 1000);
}

}  // namespace
}  // namespace urlguard

namespace urlguard {
namespace {

// ---- the fast path for already-canonical URLs -----------------------------------------------------------

void ExpectSameAsFullPath(const std::string& input) {
  CanonicalUrl fast, full;
  const Status a = Canonicalize(input, &fast);
  const Status b = internal::CanonicalizeFullPath(input, &full);
  ASSERT_EQ(a.ok(), b.ok()) << Printable(input) << ": " << a.ToString() << " vs " << b.ToString();
  if (!a.ok()) {
    EXPECT_EQ(a.message(), b.message()) << Printable(input);
    return;
  }
  EXPECT_EQ(fast.scheme, full.scheme) << Printable(input);
  EXPECT_EQ(fast.host, full.host) << Printable(input);
  EXPECT_EQ(fast.path, full.path) << Printable(input);
  EXPECT_EQ(fast.has_query, full.has_query) << Printable(input);
  EXPECT_EQ(fast.query, full.query) << Printable(input);
  EXPECT_EQ(fast.host_kind, full.host_kind) << Printable(input);
  EXPECT_EQ(0, std::memcmp(fast.ip, full.ip, sizeof fast.ip)) << Printable(input);
}

// Every vector input and expected output (canonical forms are exactly what the fast path takes).
TEST(UrlCanonFastPath, AgreesWithTheFullAlgorithmOnTheVectors) {
  for (const Row& row : ReadVectors("canonicalization.tsv", {"input", "expected", "source"})) {
    ExpectSameAsFullPath(row.fields[0]);
    ExpectSameAsFullPath(row.fields[1]);
  }
}

// The obvious reference for MakeExpressions(): every host string with every path string, in order, each
// expression copied whole, is_host_root when the path string is "/".
void ExpectExpressionsAsReference(const std::string& input, ExpressionList* list) {
  CanonicalUrl url;
  if (!Canonicalize(input, &url).ok()) return;
  MakeExpressions(url, list);
  std::vector<std::string> want;
  std::vector<bool> want_root;
  for (const std::string& h : internal::LookupHosts(url)) {
    for (const std::string& p : internal::LookupPaths(url)) {
      want.push_back(h + p);
      want_root.push_back(p == "/");
    }
  }
  ASSERT_EQ(list->size(), want.size()) << Printable(input);
  EXPECT_EQ(list->host_count(), internal::LookupHosts(url).size()) << Printable(input);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ((*list)[i], want[i]) << Printable(input) << " #" << i;
    EXPECT_EQ(list->is_host_root(i), want_root[i]) << Printable(input) << " #" << i;
    EXPECT_EQ(std::string_view(list->data() + list->begins()[i], list->ends()[i] - list->begins()[i]),
              want[i]);
  }
}

// MakeExpressions() writes the URL once and points into it: the same expressions as the reference, on the
// vectors and on near-canonical URLs, with one list reused for all (so stale bytes of a longer URL cannot
// leak into a shorter one's expressions).
TEST(UrlCanonExpressions, AgreeWithTheReference) {
  ExpressionList list;
  for (const Row& row : ReadVectors("canonicalization.tsv", {"input", "expected", "source"})) {
    ExpectExpressionsAsReference(row.fields[0], &list);
    ExpectExpressionsAsReference(row.fields[1], &list);
  }
  std::mt19937 rng(5);
  const std::vector<std::string> hosts = {"a",       "b.c",   "www.ex-ample.co.uk",
                                          "1.2.3.4", "[::1]", "x.y.z.w.v.u.t"};
  const std::vector<std::string> segments = {"a", "bb", "c.html", "", ".", "..", "%41", "d e"};
  const std::vector<std::string> queries = {"", "?", "?q", "?a=1&b=/x/", "#f", "?q#f"};
  for (int i = 0; i < 5000; ++i) {
    std::string url = "http://" + hosts[rng() % hosts.size()];
    const int depth = static_cast<int>(rng() % 7);
    for (int d = 0; d < depth; ++d) url += "/" + segments[rng() % segments.size()];
    if (rng() % 2) url += "/";
    url += queries[rng() % queries.size()];
    ExpectExpressionsAsReference(url, &list);
    if (HasFailure()) return;
  }
}

// The fast path takes dotted-decimal IPv4 hosts in canonical form; every other spelling of a number goes the
// full way. Both must agree on each of them (host, kind and address bytes).
TEST(UrlCanonFastPath, AgreesWithTheFullAlgorithmOnIpv4Hosts) {
  for (const char* url :
       {"http://1.2.3.4/", "https://0.0.0.0/", "http://255.255.255.255/x?y", "http://256.1.1.1/",
        "http://01.2.3.4/", "http://1.2.3/", "http://1.2.3.4.5/", "http://1.2.3.04/", "http://1.2.3.4./",
        "http://.1.2.3.4/", "http://1..2.3/", "http://100.200.30.4?x", "http://1.2.3.4#f", "http://a1.2.3.4/",
        "http://1.2.3.4a/", "http://0x1.2.3.4/"}) {
    ExpectSameAsFullPath(url);
  }
  std::mt19937 rng(11);
  const std::vector<std::string> parts = {"0",   "1",   "9",  "10", "99",   "100", "199", "249", "255",
                                          "256", "300", "00", "01", "1000", "0x1", "a",   ""};
  for (int i = 0; i < 20000; ++i) {
    std::string url = rng() % 2 ? "http://" : "https://";
    const int n = 3 + static_cast<int>(rng() % 3);
    for (int k = 0; k < n; ++k) url += (k ? "." : "") + parts[rng() % (rng() % 4 ? 9 : parts.size())];
    url += rng() % 2 ? "/" : "/a?b";
    ExpectSameAsFullPath(url);
    if (HasFailure()) return;
  }
}

// Longer URLs, so that the fast path's 16-byte scan meets every case at every offset: a "//", "/." or "/.."
// across a block boundary, in the overlapping last block, in the query (where it is canonical), after a '#'.
TEST(UrlCanonFastPath, AgreesWithTheFullAlgorithmOnLongUrls) {
  std::mt19937 rng(23);
  const std::vector<std::string> hosts = {"a.com", "www.example-host.co.uk", "1.2.3.4", "x.y", "deadbeef.cafe"};
  const std::vector<std::string> segments = {"a", "bb", "ccc", ".", "..", "", ".w", "x.y", "..z", "index.html"};
  const std::vector<std::string> tails = {"", "?", "?a=/./b", "?q//x", "#/../", "?x#y", "/"};
  int fast_shaped = 0;
  for (int i = 0; i < 40000; ++i) {
    std::string url = (rng() % 2 ? "https://" : "http://") + hosts[rng() % hosts.size()];
    const int depth = static_cast<int>(rng() % 12);
    for (int d = 0; d < depth; ++d) url += "/" + segments[rng() % (rng() % 3 ? 3 : segments.size())];
    url += tails[rng() % tails.size()];
    ExpectSameAsFullPath(url);
    if (HasFailure()) return;
    CanonicalUrl c;
    fast_shaped += Canonicalize(url, &c).ok() && c.Spec() == url;
  }
  EXPECT_GT(fast_shaped, 5000);
}

// URLs built from pieces that sit on each boundary of the fast path: dots and dot segments, numeric-looking
// labels (hex, octal, "0x"), ports, userinfo, upper case, escapes, empty segments, queries and fragments.
TEST(UrlCanonFastPath, AgreesWithTheFullAlgorithmOnNearCanonicalUrls) {
  std::mt19937 rng(77);
  const std::vector<std::string> schemes = {"http://", "https://", "HTTP://", "http:/", "http:///", "ftp://", ""};
  const std::vector<std::string> labels = {"a",  "com", "x",   "0x",  "0x1f", "1",   "255", "08", "017", "abc",
                                           "def", "g",  "xn--bcher-kva", "-", "www", "",    "B",  "a%41", "é"};
  const std::vector<std::string> tails = {"",   ":80", ":",  "@",  ".",  "..", "/", "//", "/.", "/..", "/./",
                                          "/../", "/a", "/a/", "/a.b", "?", "?x=1", "?a/../b", "#f", "/%2e", "\\",
                                          "/ ", "/\x7f", "/x?y#z", "?#"};
  int fast_shaped = 0;
  for (int i = 0; i < 60000; ++i) {
    std::string url = schemes[rng() % schemes.size()];
    const int parts = 1 + static_cast<int>(rng() % 4);
    for (int p = 0; p < parts; ++p) {
      if (p > 0) url += '.';
      url += labels[rng() % labels.size()];
    }
    const int n_tails = static_cast<int>(rng() % 4);
    for (int t = 0; t < n_tails; ++t) url += tails[rng() % tails.size()];
    ExpectSameAsFullPath(url);
    if (HasFailure()) return;
    CanonicalUrl c;
    fast_shaped += Canonicalize(url, &c).ok() && c.Spec() == url;
  }
  // The generator reaches the fast path's territory (already-canonical URLs), not only its rejections.
  EXPECT_GT(fast_shaped, 500);
}

}  // namespace
}  // namespace urlguard
