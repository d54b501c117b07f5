// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/file_hash_source.h"

#include <gtest/gtest.h>

#include <fstream>

#include "platform/env.h"
#include "publish/full_hash_list.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

class FileHashSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { lists_ = testing::ScratchDir("file_hash_source"); }

  void Publish(const std::string& list, uint64_t version, const std::vector<std::string>& expressions,
               const std::string& threat = "phishing") {
    ASSERT_TRUE(Env::Default()->CreateDirs(JoinPath(lists_, list)).ok());
    std::vector<FullHashRecord> records;
    for (const std::string& e : expressions) records.push_back({Sha256(e), list, LayerKind::kUrl, threat});
    ASSERT_TRUE(WriteFullHashList(Env::Default(), Path(list, version), list, version, &records).ok());
  }
  std::string Path(const std::string& list, uint64_t version) {
    return JoinPath(JoinPath(lists_, list), FullHashFileName(version));
  }
  // The lists that answer for `expression`'s prefix.
  std::vector<std::string> Answer(const VerifyHashSource& source, const std::string& expression) {
    const Sha256Digest h = Sha256(expression);
    const uint32_t prefix[] = {DigestPrefix32(h), DigestPrefix32(h)};  // duplicates count once
    VerifyLookup out;
    EXPECT_TRUE(source.Lookup(prefix, &out).ok());
    std::vector<std::string> lists;
    for (const VerifyRecord& r : out.records) {
      EXPECT_EQ(r.sha256, h);
      lists.emplace_back(r.list);
    }
    return lists;
  }

  std::string lists_;
};

TEST_F(FileHashSourceTest, AnswersFromTheNewestVersionOfEachList) {
  Publish("phishing", 1, {"old.example/"});
  Publish("phishing", 2, {"evil.example/", "both.example/"});
  Publish("malware", 5, {"both.example/"}, "malware");
  auto source = FileHashSource::Open(Env::Default(), lists_);
  const auto loaded = source->Loaded();
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].list, "malware");
  EXPECT_EQ(loaded[1].version, 2u);
  EXPECT_EQ(loaded[1].records, 2u);
  EXPECT_EQ(Answer(*source, "evil.example/"), std::vector<std::string>{"phishing"});
  EXPECT_TRUE(Answer(*source, "old.example/").empty());
  EXPECT_EQ(Answer(*source, "both.example/"), (std::vector<std::string>{"malware", "phishing"}));
}

TEST_F(FileHashSourceTest, RefreshSwapsInNewVersionsAndDropsWithdrawnLists) {
  Publish("phishing", 1, {"evil.example/"});
  auto source = FileHashSource::Open(Env::Default(), lists_);
  VerifyLookup held;  // a lookup in flight keeps its version alive across the swap
  const uint32_t prefix[] = {DigestPrefix32(Sha256("evil.example/"))};
  ASSERT_TRUE(source->Lookup(prefix, &held).ok());
  ASSERT_EQ(held.records.size(), 1u);
  ASSERT_EQ(held.versions.size(), 1u);  // the versions the lookup used, for the answer's "lists"
  EXPECT_EQ(held.versions[0].list, "phishing");
  EXPECT_EQ(held.versions[0].version, 1u);

  Publish("phishing", 2, {"new.example/"});
  ASSERT_TRUE(Env::Default()->RemoveFile(Path("phishing", 1)).ok());
  EXPECT_TRUE(Answer(*source, "new.example/").empty());  // not before Refresh()
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_EQ(Answer(*source, "new.example/"), std::vector<std::string>{"phishing"});
  EXPECT_TRUE(Answer(*source, "evil.example/").empty());
  EXPECT_EQ(held.records[0].list, "phishing");  // still readable: pinned
  EXPECT_EQ(held.records[0].threat, "phishing");
  EXPECT_EQ(held.versions[0].version, 1u);
  VerifyLookup now;
  ASSERT_TRUE(source->Lookup(prefix, &now).ok());
  EXPECT_TRUE(now.records.empty());
  ASSERT_EQ(now.versions.size(), 1u);  // named even without a match
  EXPECT_EQ(now.versions[0].list, "phishing");
  EXPECT_EQ(now.versions[0].version, 2u);

  ASSERT_TRUE(Env::Default()->RemoveFile(Path("phishing", 2)).ok());
  ASSERT_TRUE(source->Refresh().ok());
  EXPECT_TRUE(source->Loaded().empty());
}

TEST_F(FileHashSourceTest, ABadFileNeverAnswersAndTheOldVersionKeepsServing) {
  Publish("phishing", 1, {"evil.example/"});
  auto source = FileHashSource::Open(Env::Default(), lists_);
  Publish("phishing", 2, {"new.example/"});
  {
    // One flipped record byte: only the full check (checksum) sees it.
    std::fstream f(Path("phishing", 2), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(128 + 16 + 5);
    f.put('\x55');
  }
  const Status s = source->Refresh();
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("2.ugh"), std::string::npos);
  EXPECT_EQ(Answer(*source, "evil.example/"), std::vector<std::string>{"phishing"});
  EXPECT_TRUE(Answer(*source, "new.example/").empty());
  EXPECT_TRUE(source->Refresh().ok());  // checked once, then skipped

  // A file whose header names another list or version than its path is refused too.
  Publish("phishing", 3, {"three.example/"});
  ASSERT_TRUE(Env::Default()->RenameFile(Path("phishing", 3), Path("phishing", 4)).ok());
  EXPECT_EQ(source->Refresh().code(), StatusCode::kCorruption);
  EXPECT_EQ(source->Loaded().at(0).version, 1u);
}

TEST_F(FileHashSourceTest, StartsEmptyAndRefusesOversizedLookups) {
  auto source = FileHashSource::Open(Env::Default(), JoinPath(lists_, "missing"));
  EXPECT_TRUE(source->Loaded().empty());
  EXPECT_TRUE(Answer(*source, "evil.example/").empty());
  std::vector<uint32_t> many(kMaxLookupPrefixes + 1, 7);
  VerifyLookup out;
  EXPECT_EQ(source->Lookup(many, &out).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace urlguard
