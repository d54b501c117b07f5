// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/entry_list.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "platform/env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

EntryList Sample() {
  EntryList l;
  l.list = "phishing";
  l.version = 7;
  l.url_entries = 12;
  l.domains = {"b.example", "a.example", "b.example"};
  l.ip_ranges = {"2001:db8::/32", "203.0.113.0/24"};
  return l;
}

TEST(EntryListTest, SerializesSortedAndUnique) {
  EXPECT_EQ(SerializeEntryList(Sample()),
            "urlguard-entries 1\nlist phishing\nversion 7\nurl-entries 12\n"
            "domain a.example\ndomain b.example\nip 2001:db8::/32\nip 203.0.113.0/24\nend 4\n");
}

TEST(EntryListTest, RoundTrips) {
  auto parsed = ParseEntryList(SerializeEntryList(Sample()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->list, "phishing");
  EXPECT_EQ(parsed->version, 7u);
  EXPECT_EQ(parsed->url_entries, 12u);
  EXPECT_EQ(parsed->domains, (std::vector<std::string>{"a.example", "b.example"}));
  EXPECT_EQ(parsed->ip_ranges, (std::vector<std::string>{"2001:db8::/32", "203.0.113.0/24"}));
}

TEST(EntryListTest, EmptyListRoundTrips) {
  EntryList l;
  l.list = "x";
  l.version = 1;
  auto parsed = ParseEntryList(SerializeEntryList(l));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->domains.empty());
}

TEST(EntryListTest, RefusesDamage) {
  const std::string good = SerializeEntryList(Sample());
  // Every strict prefix is a truncated file.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(ParseEntryList(good.substr(0, n)).ok()) << n;
  }
  auto corrupt = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    auto r = ParseEntryList(s);
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << to;
  };
  corrupt("urlguard-entries 1", "urlguard-entries 2");
  corrupt("end 4", "end 3");
  corrupt("ip 203.0.113.0/24", "ip 203.0.113.0/33");
  corrupt("domain a.example", "domain a example");
  corrupt("domain a.example", "domian a.example");
  corrupt("version 7", "version x");
  corrupt("list phishing\n", "");
  EXPECT_FALSE(ParseEntryList(good + "domain late.example\n").ok());
  EXPECT_FALSE(ParseEntryList(good.substr(0, good.find("domain")) + "domain " +
                              std::string(kMaxEntryListLineBytes, 'a') + "\nend 1\n")
                   .ok());
}

}  // namespace
}  // namespace urlguard

namespace urlguard {
namespace {

EntryListDelta SampleDelta() {
  EntryListDelta d;
  d.list = "phishing";
  d.version = 8;
  d.url_entries_change = -2;
  d.added_domains = {"new.example", "a.example"};
  d.removed_domains = {"b.example"};
  d.added_ip_ranges = {"198.51.100.0/24"};
  d.removed_ip_ranges = {"2001:db8::/32", "203.0.113.0/24"};
  return d;
}

// The delta's bytes, pinned in fixtures/golden/entry_list_delta_v1.txt (URLGUARD_UPDATE_GOLDEN=1 rewrites it only
// for a deliberate format change; docs/rpz.md describes it).
TEST(EntryListDeltaTest, GoldenBytes) {
  const std::string bytes = SerializeEntryListDelta(SampleDelta());
  EXPECT_EQ(bytes,
            "urlguard-entries-delta 1\nlist phishing\nversion 8\nbase 7\nurl-entries-change -2\n"
            "+domain a.example\n-domain b.example\n+domain new.example\n"
            "+ip 198.51.100.0/24\n-ip 2001:db8::/32\n-ip 203.0.113.0/24\nend 6\n");
  const std::string golden = testing::SourcePath("fixtures/golden/entry_list_delta_v1.txt");
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(golden, std::ios::binary) << bytes;
  EXPECT_EQ(bytes, testing::ReadFileOrDie(golden)) << "entry list delta format changed";
}

TEST(EntryListDeltaTest, RoundTrips) {
  auto d = ParseEntryListDelta(SerializeEntryListDelta(SampleDelta()));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->list, "phishing");
  EXPECT_EQ(d->version, 8u);
  EXPECT_EQ(d->url_entries_change, -2);
  EXPECT_EQ(d->added_domains, (std::vector<std::string>{"a.example", "new.example"}));
  EXPECT_EQ(d->removed_domains, (std::vector<std::string>{"b.example"}));
  EXPECT_EQ(d->added_ip_ranges, (std::vector<std::string>{"198.51.100.0/24"}));
  EXPECT_EQ(d->removed_ip_ranges, (std::vector<std::string>{"2001:db8::/32", "203.0.113.0/24"}));
  EntryListDelta empty;
  empty.list = "x";
  empty.version = 2;
  auto e = ParseEntryListDelta(SerializeEntryListDelta(empty));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->url_entries_change, 0);
  EXPECT_TRUE(e->added_domains.empty());
}

TEST(EntryListDeltaTest, RefusesDamage) {
  const std::string good = SerializeEntryListDelta(SampleDelta());
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(ParseEntryListDelta(good.substr(0, n)).ok()) << n;
  }
  auto corrupt = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    ASSERT_NE(s.find(from), std::string::npos) << from;
    s.replace(s.find(from), from.size(), to);
    EXPECT_EQ(ParseEntryListDelta(s).status().code(), StatusCode::kCorruption) << to;
  };
  corrupt("urlguard-entries-delta 1", "urlguard-entries-delta 2");
  corrupt("end 6", "end 5");
  corrupt("base 7", "base 6");
  corrupt("version 8\nbase 7", "version 1\nbase 0");
  corrupt("url-entries-change -2", "url-entries-change -0");
  corrupt("url-entries-change -2", "url-entries-change 02");
  corrupt("url-entries-change -2", "url-entries-change 9223372036854775808");
  corrupt("version 8", "version 08");
  corrupt("end 6", "end 06");
  corrupt("list phishing\nversion 8", "version 8\nlist phishing");           // header out of order
  corrupt("+domain a.example\n-domain b.example", "-domain b.example\n+domain a.example");  // not ascending
  corrupt("-domain b.example", "-domain a.example");                         // added and removed
  corrupt("+domain new.example\n+ip", "+ip 192.0.2.0/24\n+domain new.example\n+ip");  // ip before domain
  corrupt("+ip 198.51.100.0/24", "+ip 198.51.100.0/33");
  corrupt("+ip 198.51.100.0/24", "ip 198.51.100.0/24");
  corrupt("+domain a.example", "*domain a.example");
  corrupt("+domain a.example", " a.example");  // an empty keyword (found by fuzz/entry_list_delta_fuzz.cc)
  corrupt("+domain a.example", "+ a.example");
  corrupt("+domain a.example", "+domain a example");
  EXPECT_FALSE(ParseEntryListDelta(good + "+domain late.example\n").ok());
}

class EntryListChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("entry_list_chain_test");
    EntryList base;
    base.list = "phishing";
    base.version = 3;
    base.url_entries = 5;
    base.domains = {"a.example", "c.example", "e.example"};
    base.ip_ranges = {"203.0.113.0/24"};
    testing::WriteFileOrDie(dir_ + "/3.entries", SerializeEntryList(base));
    EntryListDelta d4;
    d4.list = "phishing";
    d4.version = 4;
    d4.url_entries_change = 2;
    d4.added_domains = {"b.example", "f.example"};
    d4.removed_domains = {"a.example"};
    d4.added_ip_ranges = {"2001:db8::/32"};
    testing::WriteFileOrDie(dir_ + "/4.entries-delta", SerializeEntryListDelta(d4));
    EntryListDelta d5;
    d5.list = "phishing";
    d5.version = 5;
    d5.url_entries_change = -7;
    d5.added_domains = {"a.example"};  // back again
    d5.removed_domains = {"f.example", "e.example"};
    d5.removed_ip_ranges = {"203.0.113.0/24"};
    testing::WriteFileOrDie(dir_ + "/5.entries-delta", SerializeEntryListDelta(d5));
  }
  std::string dir_;
};

TEST_F(EntryListChainTest, AppliesTheDeltasInOrder) {
  Env* env = Env::Default();
  auto at5 = ReadEntryListAt(env, dir_, "phishing", 5);
  ASSERT_TRUE(at5.ok()) << at5.status().ToString();
  EXPECT_EQ(at5->version, 5u);
  EXPECT_EQ(at5->url_entries, 0u);
  EXPECT_EQ(at5->domains, (std::vector<std::string>{"a.example", "b.example", "c.example"}));
  EXPECT_EQ(at5->ip_ranges, (std::vector<std::string>{"2001:db8::/32"}));
  auto at4 = ReadEntryListAt(env, dir_, "phishing", 4);
  ASSERT_TRUE(at4.ok()) << at4.status().ToString();
  EXPECT_EQ(at4->url_entries, 7u);
  EXPECT_EQ(at4->domains, (std::vector<std::string>{"b.example", "c.example", "e.example", "f.example"}));
  EXPECT_EQ(at4->ip_ranges, (std::vector<std::string>{"2001:db8::/32", "203.0.113.0/24"}));

  // The fold writes what the chain reads, as a whole entry list; the next reader starts from it.
  ASSERT_TRUE(FoldEntryList(env, dir_, "phishing", 5).ok());
  auto folded = ReadEntryList(env, dir_ + "/5.entries");
  ASSERT_TRUE(folded.ok()) << folded.status().ToString();
  EXPECT_EQ(SerializeEntryList(*folded), SerializeEntryList(*at5));
  ASSERT_TRUE(env->RemoveFile(dir_ + "/4.entries-delta").ok());
  auto chain = EntryListChainReader::Open(env, dir_, "phishing", 5);
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  EXPECT_EQ((*chain)->base_version(), 5u);
  EXPECT_TRUE(FoldEntryList(env, dir_, "phishing", 5).ok());  // nothing to fold
}

TEST_F(EntryListChainTest, RefusesABrokenChain) {
  Env* env = Env::Default();
  // A missing delta: a clear error naming it, never the base alone.
  ASSERT_TRUE(env->RemoveFile(dir_ + "/4.entries-delta").ok());
  auto missing = ReadEntryListAt(env, dir_, "phishing", 5);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("4.entries-delta"), std::string::npos) << missing.status().ToString();
  // No entry list at or below the version.
  EXPECT_EQ(ReadEntryListAt(env, dir_, "phishing", 2).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadEntryListAt(env, dir_ + "/nowhere", "phishing", 2).status().code(), StatusCode::kNotFound);

  auto write4 = [&](std::vector<std::string> added, std::vector<std::string> removed, int64_t urls = 0) {
    EntryListDelta d;
    d.list = "phishing";
    d.version = 4;
    d.url_entries_change = urls;
    d.added_domains = std::move(added);
    d.removed_domains = std::move(removed);
    testing::WriteFileOrDie(dir_ + "/4.entries-delta", SerializeEntryListDelta(d));
  };
  auto expect_corrupt = [&](const char* what) {
    auto r = ReadEntryListAt(env, dir_, "phishing", 4);
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << what << ": " << r.status().ToString();
  };
  write4({"c.example"}, {});  // adds what the base lists
  expect_corrupt("+ of a listed name");
  write4({}, {"zz.example"});  // removes what the base lacks
  expect_corrupt("- of an unlisted name");
  write4({}, {}, -6);  // 5 url entries, 6 removed
  expect_corrupt("negative url count");
  write4({"b.example"}, {});
  testing::WriteFileOrDie(dir_ + "/5.entries-delta", SerializeEntryListDelta([] {
                            EntryListDelta d;
                            d.list = "phishing";
                            d.version = 5;
                            d.added_domains = {"b.example"};  // already added by 4
                            return d;
                          }()));
  EXPECT_EQ(ReadEntryListAt(env, dir_, "phishing", 5).status().code(), StatusCode::kCorruption);
  // A delta of another list, and a truncated one.
  std::string other = SerializeEntryListDelta([] {
    EntryListDelta d;
    d.list = "malware";
    d.version = 4;
    return d;
  }());
  testing::WriteFileOrDie(dir_ + "/4.entries-delta", other);
  expect_corrupt("another list");
  testing::WriteFileOrDie(dir_ + "/4.entries-delta", other.substr(0, other.size() - 3));
  expect_corrupt("truncated");
}

}  // namespace
}  // namespace urlguard
