// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The list index writer: canonical bytes and signature pinned by golden files, BuildListIndex over a real
// repository, and the reader accepting exactly what the writer signs.
#include "publish/list_index_writer.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "format/list_index.h"
#include "format/manifest.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using testing::ReadFileOrDie;
using testing::SourcePath;

// The golden index: two lists. Its canonical bytes are pinned in fixtures/golden/list_index_v1.json and their
// signature by fixtures/keys/test-ed25519.pem in fixtures/golden/list_index_v1.json.sig. To regenerate after a
// deliberate format change: URLGUARD_WRITE_GOLDEN=1 build/publish_list_index_writer_test (then bump the format).
ListIndex GoldenIndex() {
  ListIndex index;
  index.created_unix = 1700000100;
  index.lists.push_back({"malware", 7, 1699990000, 1700076400});
  index.lists.push_back({"phishing", 42, 1700000000, 1700086400});
  return index;
}

SigningKey TestKey() {
  auto key = SigningKey::FromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem")));
  EXPECT_TRUE(key.ok()) << key.status().ToString();
  return std::move(key).value();
}

TEST(ListIndexWriter, GoldenBytesAndSignature) {
  const std::string bytes = SerializeListIndex(GoldenIndex());
  const std::string sig = MakeListIndexSignatureFile(TestKey(), bytes);
  const std::string json_path = SourcePath("fixtures/golden/list_index_v1.json");
  if (std::getenv("URLGUARD_WRITE_GOLDEN") != nullptr) {
    testing::WriteFileOrDie(json_path, bytes);
    testing::WriteFileOrDie(json_path + ".sig", sig);
  }
  EXPECT_EQ(bytes, ReadFileOrDie(json_path))
      << "list index bytes changed: a format change must bump kListIndexFormatVersion, docs/list-index.md and "
         "this golden file";
  EXPECT_EQ(sig, ReadFileOrDie(json_path + ".sig")) << "Ed25519 signing is deterministic";
  auto parsed = VerifyAndParseListIndex({TestKey().public_key()}, bytes, sig);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, GoldenIndex());
}

TEST(ListIndexWriter, EmptyIndexIsCanonicalToo) {
  ListIndex empty;
  empty.created_unix = 5;
  const std::string bytes = SerializeListIndex(empty);
  EXPECT_EQ(bytes, "{\n  \"created_unix\": 5,\n  \"format\": 1,\n  \"lists\": []\n}\n");
  auto parsed = ParseListIndex(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, empty);
}

TEST(ListIndexWriter, LargestIndexFitsTheReadersCap) {
  ListIndex big;
  big.created_unix = INT64_MAX;
  for (size_t i = 0; i < kMaxListIndexLists; ++i) {
    std::string name = std::to_string(1000000 + i);
    name.resize(64, 'x');
    big.lists.push_back({name, UINT64_MAX, INT64_MAX - 1, INT64_MAX});
  }
  const std::string bytes = SerializeListIndex(big);
  EXPECT_LE(bytes.size(), kMaxListIndexBytes);
  auto parsed = ParseListIndex(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->lists.size(), kMaxListIndexLists);
}

TEST(ListIndexWriter, BuildsFromTheRepositorysManifests) {
  Env* env = Env::Default();
  const std::string repo = testing::ScratchDir("list_index_writer_test");
  const std::string golden_manifest = ReadFileOrDie(SourcePath("fixtures/golden/manifest_v1.json"));  // phishing
  ASSERT_TRUE(env->CreateDirs(repo + "/public/v1/lists/phishing").ok());
  ASSERT_TRUE(env->CreateDirs(repo + "/public/v1/lists/empty-dir").ok());  // no manifest yet: not listed
  ASSERT_TRUE(env->CreateDirs(repo + "/private").ok());
  testing::WriteFileOrDie(repo + "/public/v1/lists/phishing/manifest.json", golden_manifest);
  const SigningKey key = TestKey();
  ASSERT_TRUE(WriteListIndex(env, key, repo, 1700000500).ok());
  const std::string bytes = ReadFileOrDie(repo + "/public/v1/lists/index.json");
  const std::string sig = ReadFileOrDie(repo + "/public/v1/lists/index.sig");
  auto index = VerifyAndParseListIndex({key.public_key()}, bytes, sig);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(index->created_unix, 1700000500);
  ASSERT_EQ(index->lists.size(), 1u);
  EXPECT_EQ(index->lists[0], (ListIndexEntry{"phishing", 42, 1700000000, 1700086400}));

  // A manifest in the wrong directory is a repository defect, reported rather than indexed.
  ASSERT_TRUE(env->CreateDirs(repo + "/public/v1/lists/other").ok());
  testing::WriteFileOrDie(repo + "/public/v1/lists/other/manifest.json", golden_manifest);
  EXPECT_EQ(BuildListIndex(env, repo, 1).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace urlguard
