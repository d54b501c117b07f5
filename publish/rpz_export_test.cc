// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/rpz_export.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>

#include "platform/env.h"
#include "format/manifest.h"
#include "publish/publisher.h"
#include "signing/signer.h"
#include "urlguard/publish.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

std::string Trigger(std::string_view range) {
  auto r = RpzIpTriggerName(range);
  return r.ok() ? *r : "error: " + r.status().ToString();
}

// Spec examples (draft-vixie-dnsop-dns-rpz §4.2) and the "zz" rules.
TEST(RpzExportTest, IpTriggerNames) {
  EXPECT_EQ(Trigger("203.0.113.0/24"), "24.0.113.0.203.rpz-ip");
  EXPECT_EQ(Trigger("192.0.2.1/32"), "32.1.2.0.192.rpz-ip");
  EXPECT_EQ(Trigger("192.0.2.1"), "32.1.2.0.192.rpz-ip");
  EXPECT_EQ(Trigger("10.0.0.0/8"), "8.0.0.0.10.rpz-ip");
  EXPECT_EQ(Trigger("2001:db8::/32"), "32.zz.db8.2001.rpz-ip");
  EXPECT_EQ(Trigger("2001:db8::1/128"), "128.1.zz.db8.2001.rpz-ip");
  EXPECT_EQ(Trigger("1:0:0:4:5:0:0:0/128"), "128.zz.5.4.0.0.1.rpz-ip");  // the longest run, not the first
  EXPECT_EQ(Trigger("1:0:0:4:5:0:0:8/128"), "128.8.0.0.5.4.zz.1.rpz-ip");  // a tie: the first run
  EXPECT_EQ(Trigger("1:2:3:4:5:6:0:8/128"), "128.8.0.6.5.4.3.2.1.rpz-ip");  // one zero word stays
  EXPECT_EQ(Trigger("::/1"), "1.zz.rpz-ip");
  EXPECT_EQ(Trigger("2001:DB8:ABCD::/48"), "48.zz.abcd.db8.2001.rpz-ip");
  EXPECT_FALSE(RpzIpTriggerName("0.0.0.0/0").ok());
  EXPECT_FALSE(RpzIpTriggerName("::/0").ok());
  EXPECT_FALSE(RpzIpTriggerName("evil.example").ok());
}

TEST(RpzExportTest, ParsesActionsAndOrigins) {
  RpzAction a;
  std::string target = "x";
  ASSERT_TRUE(ParseRpzAction("nxdomain", &a, &target).ok());
  EXPECT_EQ(a, RpzAction::kNxdomain);
  EXPECT_EQ(target, "");
  ASSERT_TRUE(ParseRpzAction("cname:Warning.Example.NET", &a, &target).ok());
  EXPECT_EQ(a, RpzAction::kCname);
  EXPECT_EQ(target, "warning.example.net.");
  ASSERT_TRUE(ParseRpzAction("cname:warning.example.", &a, &target).ok());
  EXPECT_EQ(target, "warning.example.");
  ASSERT_TRUE(ParseRpzAction("nodata", &a, &target).ok());
  EXPECT_EQ(a, RpzAction::kNodata);
  EXPECT_EQ(target, "");
  ASSERT_TRUE(ParseRpzAction("null", &a, &target).ok());
  EXPECT_EQ(a, RpzAction::kNull);
  for (const char* bad : {"", "NXDOMAIN", "cname:", "cname:.", "cname:a..b", "cname:a b", "drop", "cname:a;b",
                          "NULL", "nodata:x", "null ", "passthru"}) {
    EXPECT_FALSE(ParseRpzAction(bad, &a, &target).ok()) << bad;
  }
  EXPECT_EQ(*NormalizeRpzOrigin("RPZ.Example"), "rpz.example.");
  EXPECT_EQ(*NormalizeRpzOrigin("rpz.example."), "rpz.example.");
  EXPECT_FALSE(NormalizeRpzOrigin(".").ok());
  EXPECT_FALSE(NormalizeRpzOrigin("").ok());
  EXPECT_FALSE(NormalizeRpzOrigin(std::string(64, 'a') + ".example").ok());
}

EntryList Sample() {
  EntryList l;
  l.list = "phishing";
  l.version = 3;
  l.url_entries = 2;
  l.domains = {"evil.example", "xn--bcher-kva.example"};
  l.ip_ranges = {"203.0.113.0/24", "2001:db8::/32"};
  return l;
}

TEST(RpzExportTest, RendersTheWholeZone) {
  RpzZoneOptions o;
  o.origin = "phishing.rpz.urlguard.";
  RpzZoneStats stats;
  auto zone = RenderRpzZone(Sample(), o, &stats);
  ASSERT_TRUE(zone.ok()) << zone.status().ToString();
  EXPECT_EQ(*zone,
            "; urlguard Response Policy Zone (docs/rpz.md): list phishing, version 3\n"
            "; policy: NXDOMAIN for each listed domain and every name under it (2 domains), and for answers "
            "holding an address in a listed range (2 ranges)\n"
            "; left out: 2 url-layer entries (DNS cannot match a URL's path; clients of the urlguard library "
            "still check them)\n"
            "$TTL 300\n"
            "$ORIGIN phishing.rpz.urlguard.\n"
            "@ IN SOA localhost. hostmaster.localhost. 3 300 60 604800 300\n"
            "@ IN NS localhost.\n"
            "evil.example CNAME .\n"
            "*.evil.example CNAME .\n"
            "xn--bcher-kva.example CNAME .\n"
            "*.xn--bcher-kva.example CNAME .\n"
            "24.0.113.0.203.rpz-ip CNAME .\n"
            "32.zz.db8.2001.rpz-ip CNAME .\n");
  EXPECT_EQ(stats.domains, 2u);
  EXPECT_EQ(stats.ip_ranges, 2u);
  EXPECT_EQ(stats.url_entries_left_out, 2u);
  EXPECT_EQ(stats.unexpressible_left_out, 0u);
}

TEST(RpzExportTest, CnameActionAndLeftOutEntries) {
  EntryList l = Sample();
  l.domains.push_back("bad%20host.example");                        // not a host name
  l.domains.push_back(std::string(64, 'a') + ".example");            // label too long
  l.domains.push_back("x.rpz-ip");                                  // would read as an ip trigger
  l.domains.push_back(std::string(60, 'b') + "." + std::string(60, 'c') + "." + std::string(60, 'd') + "." +
                      std::string(50, 'e'));                          // too long under the origin
  l.ip_ranges.push_back("0.0.0.0/0");
  l.version = (uint64_t{1} << 32) + 5;
  RpzZoneOptions o;
  o.origin = "phishing.rpz.urlguard.";
  ASSERT_TRUE(ParseRpzAction("cname:warning.example.net", &o.action, &o.cname_target).ok());
  RpzZoneStats stats;
  auto zone = RenderRpzZone(l, o, &stats);
  ASSERT_TRUE(zone.ok()) << zone.status().ToString();
  EXPECT_NE(zone->find("\nevil.example CNAME warning.example.net.\n*.evil.example CNAME warning.example.net.\n"),
            std::string::npos);
  EXPECT_NE(zone->find("\n24.0.113.0.203.rpz-ip CNAME warning.example.net.\n"), std::string::npos);
  EXPECT_NE(zone->find("; left out: 5 entries that are no DNS host name"), std::string::npos);
  EXPECT_NE(zone->find(" SOA localhost. hostmaster.localhost. 5 "), std::string::npos);  // serial mod 2^32
  EXPECT_EQ(zone->find("bad%20"), std::string::npos);
  EXPECT_EQ(zone->find("x.rpz-ip"), std::string::npos);
  EXPECT_EQ(stats.domains, 2u);
  EXPECT_EQ(stats.unexpressible_left_out, 5u);

  o.cname_target = "";
  EXPECT_EQ(RenderRpzZone(l, o, nullptr).status().code(), StatusCode::kInvalidArgument);
  o.action = RpzAction::kNxdomain;
  o.origin = "";
  EXPECT_EQ(RenderRpzZone(l, o, nullptr).status().code(), StatusCode::kInvalidArgument);
}

TEST(RpzExportTest, NodataAndNullActions) {
  RpzZoneOptions o;
  o.origin = "phishing.rpz.urlguard.";
  ASSERT_TRUE(ParseRpzAction("nodata", &o.action, &o.cname_target).ok());
  auto zone = RenderRpzZone(Sample(), o, nullptr);
  ASSERT_TRUE(zone.ok()) << zone.status().ToString();
  // Spec (the draft's NODATA action): "CNAME *.".
  EXPECT_NE(zone->find("; policy: NODATA for each listed domain"), std::string::npos);
  EXPECT_NE(zone->find("\nevil.example CNAME *.\n*.evil.example CNAME *.\n"), std::string::npos);
  EXPECT_NE(zone->find("\n24.0.113.0.203.rpz-ip CNAME *.\n"), std::string::npos);
  EXPECT_EQ(zone->find(" CNAME .\n"), std::string::npos);

  ASSERT_TRUE(ParseRpzAction("null", &o.action, &o.cname_target).ok());
  RpzZoneStats stats;
  zone = RenderRpzZone(Sample(), o, &stats);
  ASSERT_TRUE(zone.ok()) << zone.status().ToString();
  // The draft's Local Data action: both families answered with the unspecified address, for the name, the names under
  // it and the answers in a listed range.
  EXPECT_NE(zone->find("; policy: A 0.0.0.0 / AAAA :: for each listed domain"), std::string::npos);
  EXPECT_NE(zone->find("\nevil.example A 0.0.0.0\nevil.example AAAA ::\n"
                       "*.evil.example A 0.0.0.0\n*.evil.example AAAA ::\n"),
            std::string::npos);
  EXPECT_NE(zone->find("\n32.zz.db8.2001.rpz-ip A 0.0.0.0\n32.zz.db8.2001.rpz-ip AAAA ::\n"), std::string::npos);
  EXPECT_EQ(zone->find("CNAME"), std::string::npos);
  EXPECT_EQ(stats.domains, 2u);
  EXPECT_EQ(stats.ip_ranges, 2u);
}

TEST(RpzExportTest, ParsesAllowlists) {
  auto a = ParseRpzAllowlist(
      "# our own hosts\n"
      "Good.Example\n"
      "  www.evil.example  \r\n"
      "\n"
      "http://cdn.example/some/path\n"        // a URL with a path: DNS cannot let only the path through
      "https://login.phish.example/\n"        // a URL with path "/": the domain
      "198.51.100.7\n"
      "2001:db8:bad::/64\n"
      "good.example\n",                       // a repeat
      "allow.txt");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->domains, (std::vector<std::string>{"good.example", "login.phish.example", "www.evil.example"}));
  EXPECT_EQ(a->ip_ranges, (std::vector<std::string>{"198.51.100.7/32", "2001:db8:bad::/64"}));
  EXPECT_EQ(a->url_entries_left_out, 1u);
  EXPECT_TRUE(ParseRpzAllowlist("", "empty.txt").ok());

  // Nothing is skipped: a line that is no entry fails the whole allowlist, naming file and line.
  auto bad = ParseRpzAllowlist("good.example\n# fine\nhttp://[::1\n", "allow.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().rfind("allow.txt:3: ", 0), 0u) << bad.status().ToString();
  bad = ParseRpzAllowlist("bad%20host.example\n", "allow.txt");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("allow.txt:1: not a DNS host name"), std::string::npos);
  EXPECT_EQ(ParseRpzAllowlist("0.0.0.0/0\n", "a").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseRpzAllowlist("x.rpz-ip\n", "a").status().code(), StatusCode::kInvalidArgument);

  std::string many;
  for (size_t i = 0; i <= kMaxRpzAllowlistEntries; ++i) many += "h" + std::to_string(i) + ".example\n";
  EXPECT_EQ(ParseRpzAllowlist(many, "a").status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ParseRpzAllowlist(std::string(kMaxRpzAllowlistBytes + 1, '#'), "a").status().code(),
            StatusCode::kResourceExhausted);
}

TEST(RpzExportTest, AllowlistBecomesPassthruAheadOfTheBlocks) {
  EntryList l = Sample();
  l.domains = {"evil.example", "www.evil.example", "deep.www.evil.example", "notwww.evil.example", "x.example"};
  l.ip_ranges = {"203.0.113.0/24", "203.0.113.128/25", "198.51.100.0/24", "2001:db8::/32"};
  RpzZoneOptions o;
  o.origin = "phishing.rpz.urlguard.";
  auto allow = ParseRpzAllowlist("www.evil.example\n198.51.100.7\n203.0.113.0/24\n", "allow.txt");
  ASSERT_TRUE(allow.ok()) << allow.status().ToString();
  o.allowlist = *allow;
  RpzZoneStats stats;
  auto zone = RenderRpzZone(l, o, &stats);
  ASSERT_TRUE(zone.ok()) << zone.status().ToString();
  // Spec (the draft's PASSTHRU action): "CNAME rpz-passthru.". The rules come first, right after the NS record.
  EXPECT_NE(zone->find("@ IN NS localhost.\n"
                       "www.evil.example CNAME rpz-passthru.\n"
                       "*.www.evil.example CNAME rpz-passthru.\n"
                       "32.7.100.51.198.rpz-ip CNAME rpz-passthru.\n"
                       "24.0.113.0.203.rpz-ip CNAME rpz-passthru.\n"
                       "evil.example CNAME .\n"),
            std::string::npos)
      << *zone;
  // www.evil.example and the name under it are allowed, as the library's allowlist allows them: their exact
  // blocks would beat the allowed wildcard, so they are left out. A sibling stays blocked.
  EXPECT_EQ(zone->find("\nwww.evil.example CNAME .\n"), std::string::npos);
  EXPECT_EQ(zone->find("deep.www.evil.example CNAME ."), std::string::npos);
  EXPECT_NE(zone->find("\nnotwww.evil.example CNAME .\n"), std::string::npos);
  // A range inside (or equal to) an allowed one is left out; a range around an allowed address stays (the longer
  // prefix of the passthru rule wins there).
  EXPECT_EQ(zone->find("25.128.113.0.203.rpz-ip"), std::string::npos);
  EXPECT_EQ(zone->find("24.0.113.0.203.rpz-ip CNAME .\n"), std::string::npos);
  EXPECT_NE(zone->find("\n24.0.100.51.198.rpz-ip CNAME .\n"), std::string::npos);
  EXPECT_NE(zone->find("; passthru: 3 allowlisted domains and ranges (rpz-passthru, before the blocks); 4 listed "
                       "entries they cover left out\n"),
            std::string::npos);
  EXPECT_EQ(stats.passthru, 3u);
  EXPECT_EQ(stats.allowed_left_out, 4u);
  EXPECT_EQ(stats.domains, 3u);
  EXPECT_EQ(stats.ip_ranges, 2u);

  // An allowlisted name too long for the origin cannot be written: refused, not dropped.
  o.allowlist.domains = {std::string(60, 'b') + "." + std::string(60, 'c') + "." + std::string(60, 'd') + "." +
                         std::string(60, 'e')};
  EXPECT_EQ(RenderRpzZone(l, o, nullptr).status().code(), StatusCode::kInvalidArgument);
}

// The zone's bytes with the null action and an allowlist, pinned in fixtures/golden/rpz_null_allowlist.rpz
// (URLGUARD_UPDATE_GOLDEN=1 rewrites it; docs/rpz.md describes it).
TEST(RpzExportTest, GoldenZone) {
  EntryList l = Sample();
  l.domains.push_back("www.good.example");
  RpzZoneOptions o;
  o.origin = "phishing.rpz.urlguard.";
  ASSERT_TRUE(ParseRpzAction("null", &o.action, &o.cname_target).ok());
  auto allow = ParseRpzAllowlist("good.example\n203.0.113.9\nhttp://evil.example/ok.html\n", "allow.txt");
  ASSERT_TRUE(allow.ok()) << allow.status().ToString();
  o.allowlist = *allow;
  auto zone = RenderRpzZone(l, o, nullptr);
  ASSERT_TRUE(zone.ok()) << zone.status().ToString();
  const std::string path = testing::SourcePath("fixtures/golden/rpz_null_allowlist.rpz");
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << *zone;
  EXPECT_EQ(*zone, testing::ReadFileOrDie(path)) << "RPZ zone bytes changed: update docs/rpz.md too";
}

// A real publication: the entry list is written with the version, exported from what the manifest names, and
// survives the publisher's clean-up of public files.
TEST(RpzExportTest, ExportsThePublishedVersion) {
  Env* env = Env::Default();
  const std::string dir = testing::ScratchDir("rpz_export_test");
  const std::string repo = dir + "/repo";
  testing::WriteFileOrDie(dir + "/feed.txt",
                          "evil.example\nhttp://Login.Phish.EXAMPLE/\nhttp://evil.example/login.php\n"
                          "203.0.113.0/24\nhttp://[2001:db8::7]/\nhttp://bad%20host.example/\n");
  SigningKey key = std::move(SigningKey::Generate()).value();
  PublishOptions po;
  po.repo_dir = repo;
  po.list = "phishing";
  po.inputs = {*ParseFeedSpec("plain:" + dir + "/feed.txt")};
  po.now_unix = 1'700'000'000;

  RpzZoneOptions zo;
  zo.origin = "phishing.rpz.urlguard.";
  EXPECT_EQ(ExportRpzFile(env, repo, "phishing", zo, "").status().code(), StatusCode::kNotFound);

  ASSERT_TRUE(Publish(env, key, po).ok());
  auto r = ExportRpzFile(env, repo, "phishing", zo, "");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->path, repo + "/public/v1/lists/phishing/phishing.rpz");
  EXPECT_EQ(r->version, 1u);
  EXPECT_EQ(r->stats.domains, 2u);
  EXPECT_EQ(r->stats.ip_ranges, 2u);
  EXPECT_EQ(r->stats.url_entries_left_out, 1u);
  EXPECT_EQ(r->stats.unexpressible_left_out, 1u);  // bad%20host.example: a domain entry, no DNS name
  std::string zone = testing::ReadFileOrDie(r->path);
  EXPECT_NE(zone.find("\nlogin.phish.example CNAME .\n*.login.phish.example CNAME .\n"), std::string::npos);
  EXPECT_NE(zone.find("\n128.7.zz.db8.2001.rpz-ip CNAME .\n"), std::string::npos);
  EXPECT_EQ(r->bytes, zone.size());

  // Version 2 drops evil.example; the old zone survives the clean-up until the next export replaces it.
  testing::WriteFileOrDie(dir + "/feed.txt", "203.0.113.0/24\n");
  ASSERT_TRUE(Publish(env, key, po).ok());
  EXPECT_TRUE(env->FileExists(r->path));
  r = ExportRpzFile(env, repo, "phishing", zo, dir + "/out.rpz");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 2u);
  zone = testing::ReadFileOrDie(dir + "/out.rpz");
  EXPECT_EQ(zone.find("evil.example"), std::string::npos);
  EXPECT_NE(zone.find(" SOA localhost. hostmaster.localhost. 2 "), std::string::npos);

  // A manifest naming a version whose entry list is gone (published by an older publisher) is refused.
  ASSERT_TRUE(env->RemoveFile(repo + "/private/lists/phishing/2.entries").ok());
  EXPECT_EQ(ExportRpzFile(env, repo, "phishing", zo, "").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ExportRpzFile(env, repo, "Bad Name", zo, "").status().code(), StatusCode::kInvalidArgument);
}

// The public API reads allowlist files; a bad one fails the export, naming the file and line, and leaves the
// zone that was there.
TEST(RpzExportTest, ExportRpzReadsAllowlistFiles) {
  const std::string dir = testing::ScratchDir("rpz_export_allowlist_test");
  testing::WriteFileOrDie(dir + "/feed.txt", "evil.example\nwww.good.example\n");
  SigningKey key = std::move(SigningKey::Generate()).value();
  PublishOptions po;
  po.repo_dir = dir + "/repo";
  po.list = "phishing";
  po.inputs = {*ParseFeedSpec("plain:" + dir + "/feed.txt")};
  po.now_unix = 1'700'000'000;
  ASSERT_TRUE(Publish(Env::Default(), key, po).ok());
  testing::WriteFileOrDie(dir + "/a.txt", "good.example\n");
  testing::WriteFileOrDie(dir + "/b.txt", "# b\nhttp://other.example/x\n198.51.100.7\n");
  RpzExportOptions o;
  o.repo_dir = po.repo_dir;
  o.list = "phishing";
  o.action = "null";
  o.allowlist_paths = {dir + "/a.txt", dir + "/b.txt"};
  auto r = ExportRpz(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->domains, 1u);
  EXPECT_EQ(r->passthru, 2u);
  EXPECT_EQ(r->allowed_left_out, 1u);
  EXPECT_EQ(r->allowlist_url_entries_left_out, 1u);
  const std::string zone = testing::ReadFileOrDie(r->path);
  EXPECT_NE(zone.find("\ngood.example CNAME rpz-passthru.\n"), std::string::npos);
  EXPECT_NE(zone.find("\nevil.example A 0.0.0.0\n"), std::string::npos);

  testing::WriteFileOrDie(dir + "/b.txt", "198.51.100.7\nnot an entry\n");
  auto bad = ExportRpz(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(dir + "/b.txt:2: "), std::string::npos) << bad.status().ToString();
  EXPECT_EQ(testing::ReadFileOrDie(r->path), zone);
  o.allowlist_paths = {dir + "/missing.txt"};
  EXPECT_EQ(ExportRpz(o).status().code(), StatusCode::kNotFound);
}

// Manifest format 2 (issue 17): incremental versions write only what changed (V.entries-delta). The export after
// each one must equal, byte for byte, the export of a full rebuild of the same content, through a checkpoint that
// folds the entry list and the prune after it; a missing or damaged delta fails the export instead of a partial
// zone; the seen filter records what incremental versions add.
TEST(RpzExportTest, Format2IncrementalVersionsExportLikeFullRebuilds) {
  Env* env = Env::Default();
  const std::string dir = testing::ScratchDir("rpz_export_format2_test");
  SigningKey key = std::move(SigningKey::Generate()).value();
  const std::string inc_repo = dir + "/inc", full_repo = dir + "/full";
  const std::string priv = inc_repo + "/private/lists/phishing";
  std::set<std::string> content = {"evil.example", "old.example", "203.0.113.0/24", "http://x.example/a",
                                   "http://[2001:db8::7]/", "a.b.example"};
  auto write_lines = [&](const std::string& path, const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& l : lines) text += l + "\n";
    testing::WriteFileOrDie(path, text);
  };
  auto options = [&](const std::string& repo, int64_t now) {
    PublishOptions o;
    o.repo_dir = repo;
    o.list = "phishing";
    o.now_unix = now;
    o.manifest_format = kManifestFormat2;
    o.checkpoint_changes = uint64_t{1} << 40;
    return o;
  };
  RpzZoneOptions zo;
  zo.origin = "phishing.rpz.urlguard.";
  int64_t now = 1'700'000'000;
  auto full_version = [&]() {
    write_lines(dir + "/full.txt", std::vector<std::string>(content.begin(), content.end()));
    PublishOptions o = options(full_repo, now);
    o.manifest_format = 1;
    o.inputs = {*ParseFeedSpec("plain:" + dir + "/full.txt")};
    auto r = Publish(env, key, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  };
  auto expect_same_zone = [&](uint64_t version) {
    auto a = ExportRpzFile(env, inc_repo, "phishing", zo, dir + "/inc.rpz");
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    auto b = ExportRpzFile(env, full_repo, "phishing", zo, dir + "/full.rpz");
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(a->version, version);
    EXPECT_EQ(b->version, version);
    EXPECT_EQ(testing::ReadFileOrDie(dir + "/inc.rpz"), testing::ReadFileOrDie(dir + "/full.rpz"))
        << "version " << version;
  };

  write_lines(dir + "/first.txt", std::vector<std::string>(content.begin(), content.end()));
  PublishOptions first = options(inc_repo, now);
  first.inputs = {*ParseFeedSpec("plain:" + dir + "/first.txt")};
  ASSERT_TRUE(Publish(env, key, first).ok());
  full_version();
  expect_same_zone(1);

  struct Step {
    std::vector<std::string> add, remove;
    bool checkpoint = false;
  };
  const std::vector<Step> steps = {
      // New domains and ranges (v4 and v6), a url entry, an entry listed already (a no-op), a removal of a name
      // never listed, and an entry both added and removed (it stays).
      {{"new.example", "198.51.100.0/24", "2001:db8:1::/48", "http://y.example/b", "evil.example", "both.example"},
       {"old.example", "never.example", "both.example"}},
      {{"c.example", "http://z.example/c"}, {"203.0.113.0/24", "http://x.example/a", "a.b.example"}},
      // The checkpoint folds the entry list (4.entries) after this version.
      {{"old.example", "192.0.2.0/25"}, {"new.example"}, true},
      {{"d.example"}, {"2001:db8:1::/48", "http://[2001:db8::7]/"}},
      {{"203.0.113.0/24"}, {"c.example"}},
  };
  uint64_t version = 1;
  for (const Step& step : steps) {
    ++version;
    now += 60;
    write_lines(dir + "/add.txt", step.add);
    write_lines(dir + "/remove.txt", step.remove);
    PublishOptions o = options(inc_repo, now);
    o.add_inputs = {*ParseFeedSpec("plain:" + dir + "/add.txt")};
    o.remove_inputs = {*ParseFeedSpec("plain:" + dir + "/remove.txt")};
    if (step.checkpoint) o.checkpoint_changes = 0;
    auto r = Publish(env, key, o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->version, version);
    EXPECT_EQ(r->checkpointed, step.checkpoint);
    EXPECT_TRUE(env->FileExists(priv + "/" + std::to_string(version) + ".entries-delta"));
    std::set<std::string> added;
    for (const std::string& a : step.add) added.insert(a);
    for (const std::string& x : step.remove) {
      if (added.count(x) == 0) content.erase(x);
    }
    uint64_t listed_before = 0;
    for (const std::string& a : added) listed_before += content.count(a);
    for (const std::string& a : added) content.insert(a);
    // The seen filter learns an incremental version's additions at the next checkpoint, not from the version.
    EXPECT_TRUE(r->seen_at_checkpoint);
    EXPECT_EQ(r->new_keys, 0u);
    EXPECT_EQ(r->seen_before, 0u);
    if (version == 2) {
      EXPECT_EQ(listed_before, 1u);
    }
    full_version();
    expect_same_zone(version);
    if (step.checkpoint) {
      EXPECT_TRUE(env->FileExists(priv + "/" + std::to_string(version) + ".entries"));
    }
  }
  // The prune after the checkpoint (version 4) dropped the lists and deltas no chain needs.
  EXPECT_FALSE(env->FileExists(priv + "/1.entries"));
  EXPECT_FALSE(env->FileExists(priv + "/3.entries-delta"));
  EXPECT_FALSE(env->FileExists(priv + "/4.entries-delta"));
  EXPECT_TRUE(env->FileExists(priv + "/5.entries-delta"));

  // What incremental versions added up to the checkpoint (version 4) reads as seen (urlguard-publish seen); what
  // came after it (d.example, version 5) waits for the next checkpoint.
  auto seen = SeenCounts(env, inc_repo, {"new.example", "c.example", "192.0.2.0/25", "d.example",
                                          "https://never-listed.example/"});
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_GE((*seen)[0], 1);
  EXPECT_GE((*seen)[1], 1);
  EXPECT_GE((*seen)[2], 1);
  EXPECT_EQ((*seen)[3], 0);
  EXPECT_EQ((*seen)[4], 0);

  // A missing delta: a clear error naming it, and the zone that was there stays.
  const std::string zone_before = testing::ReadFileOrDie(dir + "/inc.rpz");
  const std::string delta6 = priv + "/6.entries-delta";
  const std::string delta6_bytes = testing::ReadFileOrDie(delta6);
  ASSERT_TRUE(env->RemoveFile(delta6).ok());
  auto missing = ExportRpzFile(env, inc_repo, "phishing", zo, dir + "/inc.rpz");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("6.entries-delta"), std::string::npos) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("publish it in full once more"), std::string::npos);
  // A damaged one (cut short), and one that does not apply (it removes a name version 5 does not list).
  testing::WriteFileOrDie(delta6, delta6_bytes.substr(0, delta6_bytes.size() - 4));
  EXPECT_EQ(ExportRpzFile(env, inc_repo, "phishing", zo, dir + "/inc.rpz").status().code(), StatusCode::kCorruption);
  std::string wrong = delta6_bytes;
  wrong.replace(wrong.find("-domain c.example"), 17, "-domain x.example");
  testing::WriteFileOrDie(delta6, wrong);
  EXPECT_EQ(ExportRpzFile(env, inc_repo, "phishing", zo, dir + "/inc.rpz").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(testing::ReadFileOrDie(dir + "/inc.rpz"), zone_before);
  testing::WriteFileOrDie(delta6, delta6_bytes);
  expect_same_zone(6);
}

}  // namespace
}  // namespace urlguard
