// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Tests for the threat-feed parsers: every format against its fixture (fixtures/feeds/, exact values and
// line numbers), the real-feed quirks one by one, bad lines, whole-input failures, gzip input (made here
// with zlib) including a 2 GiB bomb, auto-detection and feed-argument parsing.
#include "feeds/feeds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "tests/feed_test_util.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::testing::HasSubstr;

std::string FixturePath(const std::string& name) {
  return std::string(URLGUARD_SOURCE_DIR) + "/fixtures/feeds/" + name;
}

std::string ReadFixture(const std::string& name) {
  Result<std::string> data = ReadFeedFile(Env::Default(), FixturePath(name));
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  return data.ok() ? data.value() : std::string();
}

// The inflation ReadFeedFile applies to a gzip feed.
Result<std::string> InflateGzip(std::string_view gz, size_t max_bytes = kMaxFeedBytes) {
  return InflateBounded(gz, max_bytes, kFeedInflateOptions);
}

struct Parsed {
  Status status;
  std::vector<FeedEntry> entries;
  std::vector<FeedProblem> problems;
  FeedStats stats;
};

Parsed Parse(FeedFormat format, std::string_view data, const std::string& column = "",
             const std::string& path = "feed") {
  Parsed p;
  FeedSpec spec;
  spec.format = format;
  spec.csv_column = column;
  spec.path = path;
  p.status = ParseFeed(spec, data, &p.entries, &p.problems, &p.stats);
  return p;
}

Parsed ParseFixture(FeedFormat format, const std::string& name, const std::string& column = "") {
  return Parse(format, ReadFixture(name), column, FixturePath(name));
}

using Triple = std::tuple<std::string, std::string, uint64_t>;  // value, threat, line

std::vector<Triple> Triples(const std::vector<FeedEntry>& entries) {
  std::vector<Triple> out;
  for (const FeedEntry& e : entries) out.emplace_back(e.value, e.threat, e.line);
  return out;
}

std::vector<uint64_t> ProblemLines(const std::vector<FeedProblem>& problems) {
  std::vector<uint64_t> out;
  for (const FeedProblem& p : problems) out.push_back(p.line);
  return out;
}

// Checks each problem's line and that its message contains the given phrase.
void ExpectProblems(const Parsed& p, const std::string& file,
                    const std::vector<std::pair<uint64_t, std::string>>& expected) {
  ASSERT_EQ(p.problems.size(), expected.size());
  EXPECT_EQ(p.stats.errors, expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(p.problems[i].file, file);
    EXPECT_EQ(p.problems[i].line, expected[i].first) << p.problems[i].ToString();
    EXPECT_THAT(p.problems[i].message, HasSubstr(expected[i].second)) << p.problems[i].ToString();
  }
}

// ---- each format with its fixture ---------------------------------------------------------------------

TEST(FeedsFixtureTest, Plain) {
  Parsed p = ParseFixture(FeedFormat::kPlain, "plain.txt");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"http://malware.example.com/payload.exe", "", 4},
                                    {"phish.example.net", "", 5},
                                    {"203.0.113.7", "", 6},
                                    {"198.51.100.0/24", "", 7},
                                    {"2001:db8::/32", "", 8},
                                    {"https://login.example.org/secure/?id=1#frag", "", 9},
                                }));
  ExpectProblems(p, FixturePath("plain.txt"),
                 {{10, "unexpected text after the value: 'values.example.com'"},
                  {11, "'localhostonly' is not a URL, domain or IP address"},
                  {12, "is this a hosts file? use hosts:PATH"}});
  EXPECT_EQ(p.stats.format, FeedFormat::kPlain);
  EXPECT_EQ(p.stats.lines, 12u);
  EXPECT_EQ(p.stats.entries, 6u);
  EXPECT_EQ(p.stats.comments, 3u);
  EXPECT_EQ(p.stats.skipped, 0u);
}

TEST(FeedsFixtureTest, Hosts) {
  Parsed p = ParseFixture(FeedFormat::kHosts, "hosts.txt");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"ads.example.com", "", 12},
                                    {"tracker.example.net", "", 13},
                                    {"one.example.org", "", 14},
                                    {"two.example.org", "", 14},
                                    {"three.example.org", "", 14},
                                    {"zero.example.com", "", 15},
                                    {"v6.example.com", "", 16},
                                    {"bare.example.info", "", 19},
                                }));
  ExpectProblems(p, FixturePath("hosts.txt"),
                 {{20, "address '0.0.0.0' without a host name"},
                  {21, "'bad/name.example.com' is not a host name"},
                  {22, "'not-an-ip' is not an IP address"}});
  // localhost x3 (+ .localdomain, local), broadcasthost, ::1 localhost ip6-localhost ip6-loopback,
  // fe80::1%lo0 localhost, ip6-localnet, "0.0.0.0 0.0.0.0", mybox (dotless), 192.0.2.1 (bare IP).
  EXPECT_EQ(p.stats.skipped, 12u);
  EXPECT_EQ(p.stats.comments, 3u);
  EXPECT_EQ(p.stats.lines, 22u);
}

TEST(FeedsFixtureTest, Abp) {
  Parsed p = ParseFixture(FeedFormat::kAbp, "abp.txt");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"malware.example.com", "", 5},
                                    {"phish.example.net", "", 6},
                                    {"Cdn.Example.Org", "", 7},
                                    {"192.0.2.44", "", 8},
                                }));
  EXPECT_TRUE(p.problems.empty());
  EXPECT_EQ(p.stats.errors, 0u);
  EXPECT_EQ(p.stats.comments, 4u);     // two "!" comments, the "[Adblock Plus 2.0]" header, a blank line
  EXPECT_EQ(p.stats.unsupported, 9u);  // path, wildcard, no '^', $third-party, "^|", @@, ##, regex, |url
  EXPECT_EQ(p.stats.skipped, 1u);      // ||zip^
}

TEST(FeedsFixtureTest, PhishtankCsv) {
  Parsed p = ParseFixture(FeedFormat::kPhishtankCsv, "phishtank.csv");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"http://login.example.com/signin.php", "phishing", 2},
                                    {"http://bank.example.net/a,b/login?q=\"x\"", "phishing", 3},
                                    {"https://after.example.org/ok", "phishing", 7},
                                }));
  ExpectProblems(p, FixturePath("phishtank.csv"),
                 {{4, "empty 'url' field"},
                  {5, "'http://multi.example.org/\\x0asplit' contains whitespace or a control character"},
                  {8, "row has 1 field; column 'url' (2) is missing"}});
  EXPECT_EQ(p.stats.comments, 1u);  // the header row
  EXPECT_EQ(p.stats.lines, 8u);
}

TEST(FeedsFixtureTest, PhishtankJsonArray) {
  Parsed p = ParseFixture(FeedFormat::kPhishtankJson, "phishtank.json");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"http://login.example.com/signin.php", "phishing", 2},
                                    {"https://pay.example.net/verify?a=[1]&b={2}", "phishing", 3},
                                    {"https://xn--bcher-kva.example.org/login", "phishing", 12},
                                }));
  ExpectProblems(p, FixturePath("phishtank.json"),
                 {{9, "object has no string \"url\" member (array element 3)"},
                  {10, "object has no string \"url\" member (array element 4)"},
                  {11, "expected a JSON object (array element 5)"}});
}

TEST(FeedsFixtureTest, PhishtankJsonLines) {
  Parsed p = ParseFixture(FeedFormat::kPhishtankJson, "phishtank_lines.json");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"http://login.example.com/signin.php", "phishing", 1},
                                    {"https://pay.example.net/verify", "phishing", 2},
                                    {"https://last.example.org/x", "phishing", 5},
                                }));
  ExpectProblems(p, FixturePath("phishtank_lines.json"), {{4, "malformed JSON"}});
  EXPECT_EQ(p.stats.comments, 1u);  // the blank line
}

TEST(FeedsFixtureTest, UrlhausCsv) {
  Parsed p = ParseFixture(FeedFormat::kUrlhausCsv, "urlhaus.csv");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"http://192.0.2.10:8080/bins/x86", "malware_download", 9},
                                    {"https://dl.example.com/invoice.zip", "malware_download", 10},
                                    {"http://odd.example.net/a?b=\"c\"&d=e,f", "", 11},
                                    {"http://198.51.100.9/i.sh", "malware_download", 14},
                                }));
  ExpectProblems(
      p, FixturePath("urlhaus.csv"),
      {{12, "unusable threat type 'mal ware'"}, {13, "row has 2 fields; column 'url' (3) is missing"}});
  EXPECT_EQ(p.stats.comments, 8u);
}

TEST(FeedsFixtureTest, UrlhausCsvColumnsFromHeaderComment) {
  // The header comment decides where url and threat are, not the default positions.
  const std::string data =
      "# id,threat,url\n"
      "\"1\",\"malware_download\",\"http://moved.example.com/x\"\n";
  Parsed p = Parse(FeedFormat::kUrlhausCsv, data);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{{"http://moved.example.com/x", "malware_download", 2}}));
  // Without any header the documented positions (url 3rd, threat 6th) are used.
  Parsed q = Parse(FeedFormat::kUrlhausCsv, "\"1\",\"d\",\"http://a.example.com/\",\"online\",\"\",\"t\"\n");
  EXPECT_EQ(Triples(q.entries), (std::vector<Triple>{{"http://a.example.com/", "t", 1}}));
  // An uncommented header row works too.
  Parsed r = Parse(FeedFormat::kUrlhausCsv, "url,threat\nhttp://b.example.com/,malware_download\n");
  EXPECT_EQ(Triples(r.entries), (std::vector<Triple>{{"http://b.example.com/", "malware_download", 2}}));
}

TEST(FeedsFixtureTest, Openphish) {
  Parsed p = ParseFixture(FeedFormat::kOpenphish, "openphish_feed.txt");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"https://login.example.com/account/verify", "phishing", 1},
                                    {"http://secure.example.net/update.php?id=7", "phishing", 2},
                                    {"http://last.example.org/", "phishing", 5},
                                }));
  ExpectProblems(p, FixturePath("openphish_feed.txt"),
                 {{3, "'login.example.org/no-scheme' is not a URL (no scheme)"},
                  {4, "unexpected text after the value: 'https://three.example.com/'"}});
}

TEST(FeedsFixtureTest, DropJson) {
  Parsed p = ParseFixture(FeedFormat::kDropJson, "drop_v4.json");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"192.0.2.0/24", "malicious-network", 1},
                                    {"198.51.100.0/22", "malicious-network", 2},
                                    {"2001:db8:1000::/36", "malicious-network", 3},
                                    {"203.0.113.128/25", "malicious-network", 7},
                                }));
  ExpectProblems(p, FixturePath("drop_v4.json"),
                 {{4, "object has no string \"cidr\" member"},
                  {5, "'not-a-range' is not a CIDR range"},
                  {6, "malformed JSON"}});
  EXPECT_EQ(p.stats.skipped, 1u);  // the trailing metadata object
}

TEST(FeedsFixtureTest, DropTxt) {
  Parsed p = ParseFixture(FeedFormat::kDropTxt, "drop.txt");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"192.0.2.0/24", "malicious-network", 5},
                                    {"198.51.100.0/22", "malicious-network", 6},
                                    {"203.0.113.0/25", "malicious-network", 7},
                                    {"2001:db8:2000::/36", "malicious-network", 8},
                                }));
  ExpectProblems(
      p, FixturePath("drop.txt"),
      {{9, "unexpected text after the range: 'a range'"}, {10, "'203.0.113.128' is not a CIDR range"}});
  EXPECT_EQ(p.stats.comments, 4u);
}

const std::vector<Triple> kGenericCsvEntries = {
    {"http://one.example.com/a", "", 4},
    {"http://two.example.com/b?x=1,2", "", 5},
    {"http://three.example.com/\"q\"", "", 6},
    {"four.example.net", "", 7},
    {"192.0.2.55", "", 9},
    {"spaced.example.org", "", 12},
};

TEST(FeedsFixtureTest, GenericCsvByHeaderName) {
  Parsed p = ParseFixture(FeedFormat::kCsv, "generic.csv", "indicator");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), kGenericCsvEntries);
  ExpectProblems(p, FixturePath("generic.csv"),
                 {{11, "unexpected character 'x' after a closing quote"},
                  {13, "'short' is not a URL, domain or IP address"}});
  EXPECT_EQ(p.stats.skipped, 1u);   // the empty cell on line 10
  EXPECT_EQ(p.stats.comments, 3u);  // two comment lines and the header row
  EXPECT_EQ(p.stats.lines, 13u);
}

TEST(FeedsFixtureTest, GenericCsvByColumnNumber) {
  // Column 1's header cell "indicator" is no plausible entry, so the first row is taken as the header.
  Parsed p = ParseFixture(FeedFormat::kCsv, "generic.csv", "1");
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), kGenericCsvEntries);
  EXPECT_EQ(ProblemLines(p.problems), (std::vector<uint64_t>{11, 13}));
}

TEST(FeedsFixtureTest, GenericCsvWithBomCrlfAndQuotedHeader) {
  for (const std::string column : {"domain name", "2"}) {
    Parsed p = ParseFixture(FeedFormat::kCsv, "generic_crlf_bom.csv", column);
    ASSERT_TRUE(p.status.ok()) << p.status.ToString();
    EXPECT_EQ(Triples(p.entries),
              (std::vector<Triple>{{"crlf.example.com", "", 3}, {"last.example.net", "", 6}}));
    // The quoted field holds "\r\n": the record spans lines 4-5 and its value cannot be an entry.
    ExpectProblems(p, FixturePath("generic_crlf_bom.csv"), {{4, "'quoted\\x0d\\x0anewline.example.com'"}});
  }
}

// ---- auto-detection ---------------------------------------------------------------------------------------

TEST(FeedsDetectTest, EachFixture) {
  const std::vector<std::pair<std::string, FeedFormat>> cases = {
      {"plain.txt", FeedFormat::kPlain},
      {"hosts.txt", FeedFormat::kHosts},
      {"abp.txt", FeedFormat::kAbp},
      {"phishtank.csv", FeedFormat::kPhishtankCsv},
      {"phishtank.json", FeedFormat::kPhishtankJson},
      {"phishtank_lines.json", FeedFormat::kPhishtankJson},
      {"urlhaus.csv", FeedFormat::kUrlhausCsv},
      {"openphish_feed.txt", FeedFormat::kOpenphish},
      {"drop_v4.json", FeedFormat::kDropJson},
      {"drop.txt", FeedFormat::kDropTxt},
      // A generic CSV needs csv:COLUMN:PATH; detection falls back to plain, never guesses a column.
      {"generic.csv", FeedFormat::kPlain},
  };
  for (const auto& [name, format] : cases) {
    const std::string data = ReadFixture(name);
    EXPECT_EQ(DetectFeedFormat(FixturePath(name), data), format) << name;
    // The same through ParseFeed with kAuto, which must then parse exactly as the explicit format.
    Parsed automatic = Parse(FeedFormat::kAuto, data, "", FixturePath(name));
    Parsed explicit_format = Parse(format, data, "", FixturePath(name));
    EXPECT_EQ(automatic.stats.format, format) << name;
    EXPECT_EQ(Triples(automatic.entries), Triples(explicit_format.entries)) << name;
    EXPECT_EQ(ProblemLines(automatic.problems), ProblemLines(explicit_format.problems)) << name;
  }
}

TEST(FeedsDetectTest, ContentAndNameSignals) {
  EXPECT_EQ(DetectFeedFormat("x", "[Adblock Plus 2.0]\n||a.example.com^\n"), FeedFormat::kAbp);
  EXPECT_EQ(DetectFeedFormat("x", "||a.example.com^\n"), FeedFormat::kAbp);
  EXPECT_EQ(DetectFeedFormat("x", "  [ {\"url\": \"http://a.example.com/\"} ]"), FeedFormat::kPhishtankJson);
  EXPECT_EQ(DetectFeedFormat("drop_v6.json", "[]"), FeedFormat::kDropJson);
  EXPECT_EQ(DetectFeedFormat("x", "{\"cidr\":\"2001:db8::/32\",\"sblid\":\"SBL1\"}\n"),
            FeedFormat::kDropJson);
  EXPECT_EQ(DetectFeedFormat("x", "192.0.2.0/24 ; SBL1\n"), FeedFormat::kDropTxt);
  EXPECT_EQ(DetectFeedFormat("x", "# comment\n0.0.0.0 a.example.com\n"), FeedFormat::kHosts);
  EXPECT_EQ(DetectFeedFormat("x", "0.0.0.0\n"), FeedFormat::kPlain);  // an address alone is a plain entry
  EXPECT_EQ(DetectFeedFormat("/feeds/OpenPhish.TXT.gz", "https://a.example.com/\n"), FeedFormat::kOpenphish);
  EXPECT_EQ(DetectFeedFormat("/etc/hosts", "# only comments\n"), FeedFormat::kHosts);
  // URLhaus' plain-text dump has the banner but unquoted URLs: plain.
  EXPECT_EQ(DetectFeedFormat("x", "# abuse.ch URLhaus Database Dump (text)\nhttp://a.example.com/\n"),
            FeedFormat::kPlain);
  EXPECT_EQ(DetectFeedFormat("x", "# abuse.ch URLhaus\n\"1\",\"2\",\"http://a.example.com/\"\n"),
            FeedFormat::kUrlhausCsv);
  EXPECT_EQ(DetectFeedFormat("x", "\xEF\xBB\xBFphish_id,url\n"), FeedFormat::kPhishtankCsv);
  EXPECT_EQ(DetectFeedFormat("x", ""), FeedFormat::kPlain);
}

// ---- CRLF and byte-order mark on every fixture ---------------------------------------------------------

TEST(FeedsQuirkTest, CrlfAndBomGiveTheSameEntriesForEveryFixture) {
  const std::vector<std::tuple<std::string, FeedFormat, std::string>> cases = {
      {"plain.txt", FeedFormat::kPlain, ""},
      {"hosts.txt", FeedFormat::kHosts, ""},
      {"abp.txt", FeedFormat::kAbp, ""},
      {"phishtank.csv", FeedFormat::kPhishtankCsv, ""},
      {"phishtank.json", FeedFormat::kPhishtankJson, ""},
      {"phishtank_lines.json", FeedFormat::kPhishtankJson, ""},
      {"urlhaus.csv", FeedFormat::kUrlhausCsv, ""},
      {"openphish_feed.txt", FeedFormat::kOpenphish, ""},
      {"drop_v4.json", FeedFormat::kDropJson, ""},
      {"drop.txt", FeedFormat::kDropTxt, ""},
      {"generic.csv", FeedFormat::kCsv, "indicator"},
  };
  for (const auto& [name, format, column] : cases) {
    const std::string lf = ReadFixture(name);
    std::string crlf = "\xEF\xBB\xBF";
    for (char c : lf) {
      if (c == '\n') crlf += '\r';
      crlf += c;
    }
    Parsed a = Parse(format, lf, column);
    Parsed b = Parse(format, crlf, column);
    ASSERT_TRUE(a.status.ok() && b.status.ok()) << name;
    EXPECT_FALSE(a.entries.empty()) << name;
    EXPECT_EQ(Triples(a.entries), Triples(b.entries)) << name;
    EXPECT_EQ(ProblemLines(a.problems), ProblemLines(b.problems)) << name;
    EXPECT_EQ(a.stats.lines, b.stats.lines) << name;
    EXPECT_EQ(DetectFeedFormat(FixturePath(name), crlf), DetectFeedFormat(FixturePath(name), lf)) << name;
  }
}

// ---- hosts quirks ---------------------------------------------------------------------------------------

TEST(FeedsQuirkTest, HostsSkipsLocalNamesAndCountsThem) {
  for (const char* name :
       {"localhost", "LOCALHOST", "localhost.localdomain", "broadcasthost", "local", "ip6-localhost",
        "ip6-allnodes", "ip6-allrouters", "localhost4.localdomain4", "LocalHost6.LocalDomain6", "localhost6",
        "router", "0.0.0.0", "192.0.2.1", "::1", "fe80::1%lo0"}) {
    Parsed p = Parse(FeedFormat::kHosts, std::string("127.0.0.1 ") + name + "\n");
    ASSERT_TRUE(p.status.ok());
    EXPECT_TRUE(p.entries.empty()) << name;
    EXPECT_EQ(p.stats.skipped, 1u) << name;
    EXPECT_EQ(p.stats.errors, 0u) << name;
  }
}

TEST(FeedsQuirkTest, HostsAddressForms) {
  Parsed p = Parse(FeedFormat::kHosts,
                   "0.0.0.0 a.example.com\n"
                   "127.0.0.1 b.example.com\n"
                   "::1 c.example.com\n"
                   "0 d.example.com\n"
                   "::  e.example.com  f.example.com   # trailing comment with more.example.com\n"
                   "  \t 203.0.113.9\tg.example.com\r\n"
                   "#0.0.0.0 commented.example.com\n");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{
                                    {"a.example.com", "", 1},
                                    {"b.example.com", "", 2},
                                    {"c.example.com", "", 3},
                                    {"d.example.com", "", 4},
                                    {"e.example.com", "", 5},
                                    {"f.example.com", "", 5},
                                    {"g.example.com", "", 6},
                                }));
  EXPECT_EQ(p.stats.comments, 1u);
  EXPECT_EQ(p.stats.errors, 0u);
}

// ---- CSV quirks -----------------------------------------------------------------------------------------

TEST(FeedsQuirkTest, CsvStrayQuoteCostsOneLine) {
  Parsed p = Parse(FeedFormat::kCsv,
                   "url\n"
                   "a.example.com\n"
                   "\"unterminated.example.com\n"
                   "b.example.com\n",
                   "url");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{{"a.example.com", "", 2}, {"b.example.com", "", 4}}));
  ExpectProblems(p, "feed", {{3, "unterminated quoted field"}});
}

TEST(FeedsQuirkTest, CsvRecordLongerThanTheCapIsAnErrorAndParsingGoesOn) {
  std::string long_quoted = "\"x";
  while (long_quoted.size() <= kMaxFeedLineBytes) long_quoted += "long line inside a quoted field\n";
  long_quoted += "\"\n";
  const std::string data = "url\n" + long_quoted + "after.example.com\n";
  Parsed p = Parse(FeedFormat::kCsv, data, "url");
  ASSERT_TRUE(p.status.ok());
  ASSERT_FALSE(p.problems.empty());
  EXPECT_EQ(p.problems[0].line, 2u);
  EXPECT_THAT(p.problems[0].message, HasSubstr("record is longer than 65536 bytes"));
  // Reading resumed on line 3 (the inside of the broken field: dotless words, each an error), and the line
  // after the field is an entry with its true line number.
  ASSERT_FALSE(p.entries.empty());
  EXPECT_EQ(
      Triples(p.entries).back(),
      Triple("after.example.com", "", static_cast<uint64_t>(std::count(data.begin(), data.end(), '\n'))));
}

TEST(FeedsQuirkTest, CsvColumnErrorsAreWholeInputFailures) {
  std::vector<FeedEntry> entries = {{"kept.example.com", "", 1}};
  std::vector<FeedProblem> problems;
  FeedStats stats;
  FeedSpec spec{FeedFormat::kCsv, "nope", "f.csv"};
  Status s = ParseFeed(spec, "# c\nurl,threat\nhttp://a.example.com/,x\n", &entries, &problems, &stats);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("f.csv: csv: no column 'nope' in the header on line 2 (columns: 'url'"));
  EXPECT_EQ(entries.size(), 1u);  // untouched
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.format, FeedFormat::kCsv);

  EXPECT_EQ(Parse(FeedFormat::kCsv, "# only a comment\n", "url").status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Parse(FeedFormat::kCsv, "url\n", "").status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Parse(FeedFormat::kCsv, "url\n", "0").status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Parse(FeedFormat::kPhishtankCsv, "phish_id,link\n1,http://a.example.com/\n").status.code(),
            StatusCode::kCorruption);
  EXPECT_EQ(Parse(FeedFormat::kPhishtankCsv, "").status.code(), StatusCode::kCorruption);
}

TEST(FeedsQuirkTest, CsvColumnNumberWithoutHeaderRow) {
  // The first row's cell is a plausible entry, so it is data, not a header.
  Parsed p = Parse(FeedFormat::kCsv, "1,first.example.com\n2,second.example.com\n", "2");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(Triples(p.entries),
            (std::vector<Triple>{{"first.example.com", "", 1}, {"second.example.com", "", 2}}));
  EXPECT_EQ(p.stats.comments, 0u);
}

TEST(FeedsQuirkTest, CsvCommentLinesAfterTheHeaderAndBlankLines) {
  Parsed p = Parse(FeedFormat::kCsv, "# a\n\nurl\n\n# b\na.example.com\n   \nb.example.com", "URL");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{{"a.example.com", "", 6}, {"b.example.com", "", 8}}));
  EXPECT_EQ(p.stats.comments, 6u);
  EXPECT_EQ(p.stats.lines, 8u);
}

// ---- JSON quirks ----------------------------------------------------------------------------------------

TEST(FeedsQuirkTest, JsonArrayTopLevelFailuresLeaveTheOutputsAsTheyWere) {
  for (const char* bad : {"[{\"url\":\"http://a.example.com/\"}", "[{\"url\":\"http://a.example.com/\"},",
                          "[{\"url\":\"http://a.example.com/\"}] trailing", "[{\"url\":\"x.example.com\"}}]",
                          "\"a string\"", "42", "[\"unterminated string]"}) {
    std::vector<FeedEntry> entries = {{"kept.example.com", "", 1}};
    std::vector<FeedProblem> problems = {{"other", 1, "earlier feed"}};
    FeedStats stats;
    FeedSpec spec{FeedFormat::kPhishtankJson, "", "p.json"};
    Status s = ParseFeed(spec, bad, &entries, &problems, &stats);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << bad;
    EXPECT_THAT(s.message(), HasSubstr("p.json: ")) << bad;
    EXPECT_EQ(entries.size(), 1u) << bad;
    EXPECT_EQ(problems.size(), 1u) << bad;
    EXPECT_EQ(stats.entries, 0u) << bad;
    EXPECT_EQ(stats.errors, 0u) << bad;
  }
}

TEST(FeedsQuirkTest, JsonArrayLenientBits) {
  // Empty array, whitespace only, a trailing comma.
  EXPECT_TRUE(Parse(FeedFormat::kPhishtankJson, " [ ] \n").status.ok());
  EXPECT_TRUE(Parse(FeedFormat::kPhishtankJson, " \n ").status.ok());
  Parsed p = Parse(FeedFormat::kPhishtankJson, "[\n{\"url\":\"http://a.example.com/\"},\n]\n");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{{"http://a.example.com/", "phishing", 2}}));
  // An empty element in the middle is an error for that element only.
  Parsed q = Parse(FeedFormat::kPhishtankJson,
                   "[{\"url\":\"http://a.example.com/\"},,\n{\"url\":\"b.example.com\"}]");
  ASSERT_TRUE(q.status.ok());
  EXPECT_EQ(q.entries.size(), 2u);
  EXPECT_EQ(ProblemLines(q.problems), (std::vector<uint64_t>{1}));
}

TEST(FeedsQuirkTest, JsonElementTooLongOrInvalidUtf8IsOneError) {
  std::string big =
      "{\"url\":\"http://a.example.com/\",\"pad\":\"" + std::string(kMaxFeedLineBytes, 'p') + "\"}";
  const std::string data =
      "[" + big + ",\n{\"url\":\"http://\xff.example.com/\"},\n{\"url\":\"http://ok.example.com/\"}]";
  Parsed p = Parse(FeedFormat::kPhishtankJson, data);
  ASSERT_TRUE(p.status.ok()) << p.status.ToString();
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{{"http://ok.example.com/", "phishing", 3}}));
  ExpectProblems(p, "feed",
                 {{1, "JSON array element is longer than 65536 bytes (array element 1)"},
                  {2, "malformed JSON (array element 2)"}});
}

TEST(FeedsQuirkTest, DropMetadataIsSkippedWherever) {
  Parsed p = Parse(FeedFormat::kDropJson,
                   "{\"type\":\"metadata\",\"timestamp\":1}\n{\"cidr\":\"192.0.2.0/24\"}\n"
                   "{\"type\":\"metadata\",\"timestamp\":2,\"records\":1}");
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{{"192.0.2.0/24", "malicious-network", 2}}));
  EXPECT_EQ(p.stats.skipped, 2u);
  EXPECT_EQ(p.stats.errors, 0u);
}

// ---- bad lines, caps and accounting ---------------------------------------------------------------------

TEST(FeedsLimitsTest, LongLineIsAnErrorAndTheNextLineIsRead) {
  const std::string data = "a.example.com\n" + std::string(kMaxFeedLineBytes + 1, 'x') + "\nb.example.com\n";
  Parsed p = Parse(FeedFormat::kPlain, data);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(Triples(p.entries), (std::vector<Triple>{{"a.example.com", "", 1}, {"b.example.com", "", 3}}));
  ExpectProblems(p, "feed", {{2, "line is longer than 65536 bytes"}});
  // Exactly at the cap the line is read (and here rejected only by the value cap).
  Parsed q = Parse(FeedFormat::kPlain, std::string(kMaxFeedLineBytes, 'y') + ".example");
  ExpectProblems(q, "feed", {{1, "line is longer"}});
  Parsed r = Parse(FeedFormat::kPlain, std::string(kMaxFeedLineBytes - 8, 'y') + ".example");
  ExpectProblems(r, "feed", {{1, "is longer than 8192 bytes"}});
}

TEST(FeedsLimitsTest, ValueChecks) {
  Parsed p = Parse(FeedFormat::kPlain, std::string("a\x01.example.com\n") +
                                           std::string(kMaxFeedValueBytes - 4, 'v') + ".com\n" +
                                           std::string(kMaxFeedValueBytes - 3, 'v') + ".com\n");
  ASSERT_TRUE(p.status.ok());
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_EQ(p.entries[0].value.size(), kMaxFeedValueBytes);
  ExpectProblems(p, "feed",
                 {{1, "'a\\x01.example.com' contains whitespace or a control character"},
                  {3, "is longer than 8192 bytes"}});
}

TEST(FeedsLimitsTest, ProblemsAreCappedButAllCounted) {
  std::string data;
  for (size_t i = 0; i < kMaxFeedProblems + 5; ++i) data += "bad\n";
  data += "good.example.com\n";
  Parsed p = Parse(FeedFormat::kPlain, data);
  ASSERT_TRUE(p.status.ok());
  EXPECT_EQ(p.problems.size(), kMaxFeedProblems);
  EXPECT_EQ(p.stats.errors, kMaxFeedProblems + 5);
  EXPECT_EQ(p.entries.size(), 1u);
  EXPECT_EQ(p.entries[0].line, kMaxFeedProblems + 6);
}

TEST(FeedsLimitsTest, AppendsAcrossCallsAndNamesTheInput) {
  std::vector<FeedEntry> entries;
  std::vector<FeedProblem> problems;
  FeedStats stats;
  ASSERT_TRUE(
      ParseFeed(FeedSpec{FeedFormat::kPlain, "", ""}, "a.example.com\nbad\n", &entries, &problems, &stats)
          .ok());
  ASSERT_TRUE(
      ParseFeed(FeedSpec{FeedFormat::kPlain, "", "second"}, "b.example.com\n", &entries, &problems, &stats)
          .ok());
  EXPECT_EQ(Triples(entries), (std::vector<Triple>{{"a.example.com", "", 1}, {"b.example.com", "", 1}}));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].ToString(), "<input>:2: 'bad' is not a URL, domain or IP address (no '.' or ':')");
  EXPECT_EQ(stats.entries, 1u);  // the stats are the last call's
  EXPECT_EQ(stats.errors, 0u);
}

TEST(FeedsLimitsTest, Utf16IsRefused) {
  EXPECT_EQ(Parse(FeedFormat::kPlain, std::string("\xFF\xFE"
                                                  "a\0.\0",
                                                  6))
                .status.code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Parse(FeedFormat::kAuto, std::string("\xFE\xFF\0a", 4)).status.code(),
            StatusCode::kInvalidArgument);
}

TEST(FeedsLimitsTest, PathologicalQuotesStayLinear) {
  // Lines that each open a quoted field: the parser must neither loop nor rescan quadratically; the
  // outcome is pinned so the test checks behaviour, not time.
  std::string data = "url\n";
  for (int i = 0; i < 200000; ++i) data += (i % 2 == 0) ? "\"x\n" : "\"\"\"y\n";
  data += "end.example.com\n";
  Parsed p = Parse(FeedFormat::kCsv, data, "url");
  ASSERT_TRUE(p.status.ok());
  ASSERT_FALSE(p.entries.empty());
  EXPECT_EQ(p.entries.back().value, "end.example.com");
  EXPECT_EQ(p.entries.back().line, 200002u);
}

// ---- gzip -----------------------------------------------------------------------------------------------

using testing::Gzip;

// Streams `zeros` zero bytes through deflate (run-length strategy: fast, ~1000:1) into a gzip file.
void WriteZerosGzip(const std::string& path, uint64_t zeros) {
  Result<std::unique_ptr<WritableFile>> file = Env::Default()->NewWritableFile(path);
  ASSERT_TRUE(file.ok());
  z_stream zs{};
  ASSERT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_RLE), Z_OK);
  std::vector<unsigned char> in(size_t{1} << 20, 0);
  std::vector<unsigned char> out(size_t{1} << 16);
  uint64_t left = zeros;
  while (true) {
    if (zs.avail_in == 0 && left > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, in.size()));
      zs.next_in = in.data();
      zs.avail_in = static_cast<uInt>(n);
      left -= n;
    }
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    const int ret = deflate(&zs, left == 0 ? Z_FINISH : Z_NO_FLUSH);
    ASSERT_TRUE(ret == Z_OK || ret == Z_STREAM_END || ret == Z_BUF_ERROR);
    ASSERT_TRUE((*file)
                    ->Append(std::string_view(reinterpret_cast<char*>(out.data()), out.size() - zs.avail_out))
                    .ok());
    if (ret == Z_STREAM_END) break;
  }
  deflateEnd(&zs);
  ASSERT_TRUE((*file)->Close().ok());
}

long MaxRssKiB() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

TEST(FeedsGzipTest, GzippedFixtureReadsAndParsesLikeThePlainFile) {
  const std::string raw = ReadFixture("hosts.txt");
  const std::string path = JoinPath(testing::ScratchDir("feeds_test"), "hosts.txt.gz");
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), path, Gzip(raw)).ok());
  Result<std::string> read = ReadFeedFile(Env::Default(), path);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, raw);
  EXPECT_EQ(DetectFeedFormat(path, *read), FeedFormat::kHosts);
  Parsed p = Parse(FeedFormat::kAuto, *read, "", path);
  EXPECT_EQ(p.stats.format, FeedFormat::kHosts);
  EXPECT_EQ(p.entries.size(), 8u);
  // Detection is by magic bytes, not by name.
  const std::string renamed = JoinPath(testing::ScratchDir("feeds_test"), "hosts-no-suffix");
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), renamed, Gzip(raw)).ok());
  Result<std::string> again = ReadFeedFile(Env::Default(), renamed);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, raw);
}

TEST(FeedsGzipTest, MembersEmptyStreamsAndBadStreams) {
  Result<std::string> two = InflateGzip(Gzip("first.example.com\n") + Gzip("second.example.com\n"));
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(*two, "first.example.com\nsecond.example.com\n");
  Result<std::string> empty = InflateGzip(Gzip(""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");

  const std::string gz = Gzip(ReadFixture("urlhaus.csv"));
  EXPECT_EQ(InflateGzip(gz.substr(0, gz.size() - 4)).status().code(), StatusCode::kCorruption);  // no ISIZE
  EXPECT_EQ(InflateGzip(gz.substr(0, gz.size() / 2)).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(InflateGzip(gz.substr(0, 2)).status().code(), StatusCode::kCorruption);
  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0x01;
  EXPECT_EQ(InflateGzip(bad_crc).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(InflateGzip(gz + "junk").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(InflateGzip(gz + "\x1f").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(InflateGzip(std::string("\x1f\x8b garbage garbage")).status().code(), StatusCode::kCorruption);
}

TEST(FeedsGzipTest, CapBoundary) {
  const std::string payload(size_t{1} << 20, 'a');
  const std::string gz = Gzip(payload);
  Result<std::string> at_cap = InflateGzip(gz, payload.size());
  ASSERT_TRUE(at_cap.ok());
  EXPECT_EQ(at_cap->size(), payload.size());
  EXPECT_EQ(InflateGzip(gz, payload.size() - 1).status().code(), StatusCode::kResourceExhausted);
  // Through the file reader, with a test-only cap: the inflated size is capped, and so is the raw file.
  const std::string path = JoinPath(testing::ScratchDir("feeds_test"), "cap.gz");
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), path, gz).ok());
  Result<std::string> capped = ReadFeedFile(Env::Default(), path, payload.size() - 1);
  EXPECT_EQ(capped.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(capped.status().message(), HasSubstr(path));
  EXPECT_EQ(ReadFeedFile(Env::Default(), path, gz.size() - 1).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(ReadFeedFile(Env::Default(), JoinPath(DirName(path), "missing")).status().code(),
            StatusCode::kNotFound);
}

TEST(FeedsGzipTest, TwoGibibyteBombIsRefusedWithoutKeepingItsOutput) {
  const uint64_t kBombBytes = uint64_t{2} << 30;
  static_assert(kBombBytes > kMaxFeedBytes);
  const std::string path = JoinPath(testing::ScratchDir("feeds_test"), "bomb.gz");
  WriteZerosGzip(path, kBombBytes);
  ASSERT_FALSE(HasFatalFailure());
  Result<std::string> raw = Env::Default()->ReadFile(path, size_t{64} << 20);
  ASSERT_TRUE(raw.ok());
  EXPECT_LT(raw->size(), size_t{8} << 20);  // a few MiB on disk for 2 GiB inflated

  const long rss_before = MaxRssKiB();
  Result<std::string> read = ReadFeedFile(Env::Default(), path);
  EXPECT_EQ(read.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(read.status().message(), HasSubstr("larger than 1073741824 bytes"));
  // Had the reader kept the inflated bytes, the peak would have grown by 1 GiB.
  EXPECT_LT(MaxRssKiB() - rss_before, 256L << 10);
  ASSERT_TRUE(Env::Default()->RemoveFile(path).ok());
}

// ---- feed arguments -------------------------------------------------------------------------------------

TEST(FeedSpecTest, Forms) {
  Result<FeedSpec> s = ParseFeedSpec("hosts:/x/y");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->format, FeedFormat::kHosts);
  EXPECT_EQ(s->path, "/x/y");

  s = ParseFeedSpec("csv:url:/x/y.csv");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->format, FeedFormat::kCsv);
  EXPECT_EQ(s->csv_column, "url");
  EXPECT_EQ(s->path, "/x/y.csv");

  s = ParseFeedSpec("csv:3:rel/path:with:colons.csv");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->csv_column, "3");
  EXPECT_EQ(s->path, "rel/path:with:colons.csv");

  s = ParseFeedSpec("/x/y");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->format, FeedFormat::kAuto);
  EXPECT_EQ(s->path, "/x/y");

  s = ParseFeedSpec("./odd:name.txt");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->format, FeedFormat::kAuto);
  EXPECT_EQ(s->path, "./odd:name.txt");

  s = ParseFeedSpec("PhishTank-CSV:feed.csv");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->format, FeedFormat::kPhishtankCsv);

  // Every format name round-trips.
  for (FeedFormat f : {FeedFormat::kAuto, FeedFormat::kPlain, FeedFormat::kHosts, FeedFormat::kAbp,
                       FeedFormat::kPhishtankCsv, FeedFormat::kPhishtankJson, FeedFormat::kUrlhausCsv,
                       FeedFormat::kOpenphish, FeedFormat::kDropJson, FeedFormat::kDropTxt}) {
    Result<FeedSpec> r = ParseFeedSpec(std::string(FeedFormatName(f)) + ":p");
    ASSERT_TRUE(r.ok()) << FeedFormatName(f);
    EXPECT_EQ(r->format, f);
    EXPECT_EQ(r->path, "p");
  }
}

TEST(FeedSpecTest, Errors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty feed argument"},
      {"hosts:", "no path"},
      {"hostss:/x", "unknown feed format 'hostss'"},
      {"csv:/x/y.csv", "csv needs a column"},
      {"csv:data.csv", "csv needs a column"},
      {"csv::/x", "empty CSV column"},
      {"csv:0:/x", "out of range"},
      {"csv:99999999999999999999999:/x", "out of range"},
      {"csv:url:", "no path"},
      {"C:\\feeds\\x.txt", "unknown feed format 'C'"},
  };
  for (const auto& [arg, message] : cases) {
    Result<FeedSpec> s = ParseFeedSpec(arg);
    ASSERT_FALSE(s.ok()) << arg;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << arg;
    EXPECT_THAT(s.status().message(), HasSubstr(message)) << arg;
  }
}

}  // namespace
}  // namespace urlguard
