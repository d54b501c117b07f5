// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The client's half of key rotation: parsing and accepting statements. The statements here are the golden
// file signed by the fixture key (fixtures/golden/key_rotation_v1.txt) and edits of it; the publisher's
// writer and round trips through it are tested in signing/key_rotation_test.cc.
#include "format/key_rotation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/sha256.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::SourcePath;

constexpr int64_t kT = 1700000000;  // the golden statement's not-before

class GoldenRotationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pub = PublicKeyFromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem")));
    ASSERT_TRUE(pub.ok());
    old_key_ = *pub;
    // RFC 8032 §7.1 TEST 1's public key.
    ASSERT_TRUE(FromHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
                        new_key_.raw.data(), new_key_.raw.size()));
  }

  PublicKey old_key_, new_key_;
  const std::string golden_ = ReadFileOrDie(SourcePath("fixtures/golden/key_rotation_v1.txt"));
};

TEST_F(GoldenRotationTest, ParsesAndAccepts) {
  auto parsed = ParseRotationStatement(golden_);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->old_key, old_key_);
  EXPECT_EQ(parsed->new_key, new_key_);
  EXPECT_EQ(parsed->not_before_unix, kT);
  // The body writer reproduces the signed part byte for byte.
  EXPECT_EQ(golden_.substr(0, golden_.size() - kSignatureLineBytes), RotationStatementBody(*parsed));
  EXPECT_EQ(RotationSignedMessage("x", 1), std::string("urlguard key rotation v1\0x", 26));
  auto accepted = AcceptRotation({old_key_}, golden_, kT);
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_EQ(*accepted, new_key_);
}

TEST_F(GoldenRotationTest, RefusedByAClientThatDoesNotTrustTheOldKey) {
  auto r = AcceptRotation({new_key_}, golden_, kT);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(r.status().message().find("untrusted key"), std::string::npos) << r.status().ToString();
  EXPECT_FALSE(AcceptRotation({}, golden_, kT).ok());
}

TEST_F(GoldenRotationTest, NotBeforeIsHonoured) {
  auto r = AcceptRotation({old_key_}, golden_, kT - 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(AcceptRotation({old_key_}, golden_, kT + 1).ok());
}

TEST_F(GoldenRotationTest, EveryChangedBodyByteIsRefused) {
  const size_t body_size = golden_.size() - kSignatureLineBytes;
  for (size_t i = 0; i < body_size; ++i) {
    std::string s = golden_;
    s[i] = s[i] == '1' ? '2' : '1';
    EXPECT_FALSE(AcceptRotation({old_key_}, s, kT + (int64_t{1} << 40)).ok()) << "byte " << i;
  }
  // A changed signature character.
  std::string s = golden_;
  s[body_size + 30] = s[body_size + 30] == 'A' ? 'B' : 'A';
  auto r = AcceptRotation({old_key_}, s, kT);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
}

TEST_F(GoldenRotationTest, MalformedStatements) {
  const size_t body_size = golden_.size() - kSignatureLineBytes;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"no signature", golden_.substr(0, body_size)},
      {"two signatures", golden_ + golden_.substr(body_size)},
      {"trailing byte", golden_ + "\n"},
      {"CRLF header", "urlguard key rotation v1\r\n" + golden_.substr(25)},
  };
  for (const auto& [name, text] : bad) {
    auto r = ParseRotationStatement(text);
    EXPECT_FALSE(r.ok()) << name;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << name << ": " << r.status().ToString();
    }
  }
  auto big = ParseRotationStatement(golden_ + std::string(kMaxRotationStatementBytes, 'x'));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
}

TEST_F(GoldenRotationTest, ChainRetiresTheOldKeyAndIsCapped) {
  // A v1 statement retires the old key at its not-before: only the new key signs manifests from then on.
  auto one = AcceptRotationChain({old_key_}, {golden_}, kT);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(*one, (std::vector<PublicKey>{new_key_}));
  // The retired key may not sign a further statement, so repeating the statement is refused.
  auto repeated = AcceptRotationChain({old_key_}, {golden_, golden_}, kT);
  ASSERT_FALSE(repeated.ok());
  EXPECT_EQ(repeated.status().code(), StatusCode::kPermissionDenied);
  // The length cap is checked before any statement is read.
  auto over =
      AcceptRotationChain({old_key_}, std::vector<std::string>(kMaxRotationChainLength + 1, golden_), kT);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace urlguard
