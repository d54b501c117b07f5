// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/entry_list.h"

#include <gtest/gtest.h>

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
