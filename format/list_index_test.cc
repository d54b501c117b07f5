// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The list index reader against the golden files (fixtures/golden/list_index_v1.json and .sig, written by
// publish/list_index_writer_test.cc): verify before parse, domain separation, and every rule of the format.
#include "format/list_index.h"

#include <gtest/gtest.h>

#include <string>

#include "format/signature.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using testing::ReadFileOrDie;
using testing::SourcePath;

class ListIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = ReadFileOrDie(SourcePath("fixtures/golden/list_index_v1.json"));
    sig_ = ReadFileOrDie(SourcePath("fixtures/golden/list_index_v1.json.sig"));
    auto key = PublicKeyFromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem")));
    ASSERT_TRUE(key.ok());
    key_ = *key;
  }
  std::string golden_, sig_;
  PublicKey key_;
};

TEST_F(ListIndexTest, GoldenVerifiesAndParses) {
  auto index = VerifyAndParseListIndex({key_}, golden_, sig_);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(index->format, 1u);
  EXPECT_EQ(index->created_unix, 1700000100);
  ASSERT_EQ(index->lists.size(), 2u);
  EXPECT_EQ(index->lists[0], (ListIndexEntry{"malware", 7, 1699990000, 1700076400}));
  EXPECT_EQ(index->lists[1], (ListIndexEntry{"phishing", 42, 1700000000, 1700086400}));
}

TEST_F(ListIndexTest, AnyChangedByteOrForeignKeyIsRefusedBeforeParsing) {
  for (size_t i = 0; i < golden_.size(); i += 7) {
    std::string changed = golden_;
    changed[i] ^= 0x01;
    auto r = VerifyAndParseListIndex({key_}, changed, sig_);
    ASSERT_EQ(r.status().code(), StatusCode::kPermissionDenied) << i;
    EXPECT_EQ(r.status().message().rfind("bad signature", 0), 0u) << r.status().message();
  }
  PublicKey other = key_;
  other.raw[0] ^= 1;
  EXPECT_EQ(VerifyAndParseListIndex({other}, golden_, sig_).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(VerifyAndParseListIndex({}, golden_, sig_).status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(VerifyAndParseListIndex({key_}, golden_, "").status().code(), StatusCode::kPermissionDenied);
  // Unsigned garbage is refused as unsigned, never reaching the parser.
  EXPECT_EQ(VerifyAndParseListIndex({key_}, "not json", sig_).status().code(), StatusCode::kPermissionDenied);
}

TEST_F(ListIndexTest, SignatureDomainsDoNotCross) {
  // The index signature is not a manifest signature over the same bytes, and the reverse.
  EXPECT_FALSE(VerifyManifestSignature({key_}, golden_, sig_).ok());
  const std::string manifest = ReadFileOrDie(SourcePath("fixtures/golden/manifest_v1.json"));
  const std::string manifest_sig = ReadFileOrDie(SourcePath("fixtures/golden/manifest_v1.json.sig"));
  ASSERT_TRUE(VerifyManifestSignature({key_}, manifest, manifest_sig).ok());
  EXPECT_EQ(VerifyAndParseListIndex({key_}, manifest, manifest_sig).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(kListIndexSignatureDomain.size(), 23u);
  EXPECT_EQ(kListIndexSignatureDomain.back(), '\0');
}

TEST_F(ListIndexTest, SizeCapComesBeforeTheSignature) {
  const std::string huge(kMaxListIndexBytes + 1, ' ');
  EXPECT_EQ(VerifyAndParseListIndex({key_}, huge, sig_).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ParseListIndex(huge).status().code(), StatusCode::kResourceExhausted);
}

TEST(ListIndexParse, EveryRuleIsEnforced) {
  auto code = [](const std::string& json) { return ParseListIndex(json).status().code(); };
  const std::string entry = R"({"name":"a","version":1,"created_unix":1,"expires_unix":2})";
  auto doc = [](const std::string& lists, const std::string& extra = "") {
    return R"({"format":1,"created_unix":10,"lists":[)" + lists + "]" + extra + "}";
  };
  EXPECT_EQ(code(doc(entry)), StatusCode::kOk);
  EXPECT_EQ(code(doc("")), StatusCode::kOk);
  EXPECT_EQ(code(doc(entry, R"(,"future_member":[1,2])")), StatusCode::kOk);  // unknown members ignored
  EXPECT_EQ(code(R"({"format":2,"created_unix":10,"lists":[]})"), StatusCode::kCorruption);
  EXPECT_EQ(code(R"({"created_unix":10,"lists":[]})"), StatusCode::kCorruption);
  EXPECT_EQ(code(R"({"format":1,"created_unix":0,"lists":[]})"), StatusCode::kCorruption);
  EXPECT_EQ(code(R"({"format":1,"created_unix":-5,"lists":[]})"), StatusCode::kCorruption);
  EXPECT_EQ(code(R"({"format":1,"created_unix":10,"lists":{}})"), StatusCode::kCorruption);
  EXPECT_EQ(code(R"({"format":1,"format":1,"created_unix":10,"lists":[]})"), StatusCode::kCorruption);
  EXPECT_EQ(code("[]"), StatusCode::kCorruption);
  EXPECT_EQ(code(doc(entry + "," + entry)), StatusCode::kCorruption);  // duplicate name
  const std::string b = R"({"name":"b","version":1,"created_unix":1,"expires_unix":2})";
  EXPECT_EQ(code(doc(entry + "," + b)), StatusCode::kOk);
  EXPECT_EQ(code(doc(b + "," + entry)), StatusCode::kCorruption);  // not sorted
  EXPECT_EQ(code(doc(R"({"name":"Bad Name","version":1,"created_unix":1,"expires_unix":2})")),
            StatusCode::kCorruption);
  EXPECT_EQ(code(doc(R"({"name":"a","version":0,"created_unix":1,"expires_unix":2})")), StatusCode::kCorruption);
  EXPECT_EQ(code(doc(R"({"name":"a","version":1.5,"created_unix":1,"expires_unix":2})")),
            StatusCode::kCorruption);
  EXPECT_EQ(code(doc(R"({"name":"a","version":1,"created_unix":2,"expires_unix":2})")), StatusCode::kCorruption);
  EXPECT_EQ(code(doc(R"({"name":"a","version":1,"created_unix":1})")), StatusCode::kCorruption);
  EXPECT_EQ(code(doc(R"({"name":7,"version":1,"created_unix":1,"expires_unix":2})")), StatusCode::kCorruption);
  EXPECT_EQ(code(doc("7")), StatusCode::kCorruption);
  std::string many;
  for (size_t i = 0; i <= kMaxListIndexLists; ++i) many += (i ? ",{}" : "{}");
  EXPECT_EQ(code(doc(many)), StatusCode::kResourceExhausted);
  auto err = ParseListIndex(doc(R"({"name":"a","version":0,"created_unix":1,"expires_unix":2})"));
  EXPECT_EQ(err.status().message(), "list index field 'lists[0].version': must be >= 1");
}

// One number across the index, the data directory and the sync state (core/list_name.h): an index may name
// kMaxLists lists and no more, and one naming more is refused whole with an error the client can count.
TEST(ListIndexLimit, MoreListsThanAClientKeepsIsRefusedWhole) {
  EXPECT_EQ(kMaxListIndexLists, kMaxLists);
  EXPECT_EQ(kMaxLists, 256u);
  auto doc = [](size_t n) {
    std::string lists;
    for (size_t i = 0; i < n; ++i) {
      lists += std::string(i ? "," : "") + R"({"name":"l)" + std::to_string(1000 + i) +
               R"(","version":1,"created_unix":1,"expires_unix":2})";
    }
    return R"({"format":1,"created_unix":1,"lists":[)" + lists + "]}";
  };
  auto full = ParseListIndex(doc(kMaxLists));
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->lists.size(), kMaxLists);
  auto over = ParseListIndex(doc(260));
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over.status().message(), "list index names 260 lists, more than a client keeps (256)");
  EXPECT_TRUE(IsListLimitError(over.status()));
  EXPECT_TRUE(IsListLimitError(over.status().WithContext("list index")));
  ListIndex built = *full;
  built.lists.push_back({"zzz", 1, 1, 2});
  EXPECT_TRUE(IsListLimitError(ValidateListIndex(built)));
  // Other caps are not the list limit.
  EXPECT_FALSE(IsListLimitError(ParseListIndex(std::string(kMaxListIndexBytes + 1, ' ')).status()));
  EXPECT_FALSE(IsListLimitError(Status::Ok()));
}

}  // namespace
}  // namespace urlguard
