// Copyright urlguard authors.
#include "publish/rpz_export.h"

#include <gtest/gtest.h>

#include "platform/env.h"
#include "publish/publisher.h"
#include "publish/signer.h"
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
  for (const char* bad : {"", "NXDOMAIN", "cname:", "cname:.", "cname:a..b", "cname:a b", "drop", "cname:a;b"}) {
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

}  // namespace
}  // namespace urlguard
