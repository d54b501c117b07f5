// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/key_rotation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/sha256.h"
#include "signing/signer.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::SourcePath;

constexpr int64_t kT = 1700000000;

class KeyRotationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto* k : {&a_, &b_, &c_, &d_}) {
      auto g = SigningKey::Generate();
      ASSERT_TRUE(g.ok());
      *k = std::make_unique<SigningKey>(std::move(*g));
    }
  }
  std::string Statement(const SigningKey& from, const SigningKey& to, int64_t not_before = kT) {
    auto s = MakeRotationStatement(from, to.public_key(), not_before);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : std::string();
  }

  std::unique_ptr<SigningKey> a_, b_, c_, d_;
};

TEST(KeyRotation, GoldenStatement) {
  // The fixture test key vouches for the RFC 8032 TEST 1 public key from kT on. Ed25519 is deterministic,
  // so the bytes are pinned in fixtures/golden/key_rotation_v1.txt (URLGUARD_UPDATE_GOLDEN=1 rewrites it).
  auto old_key = SigningKey::FromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem")));
  ASSERT_TRUE(old_key.ok());
  PublicKey new_key;
  ASSERT_TRUE(
      FromHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", new_key.raw.data(), 32));
  auto statement = MakeRotationStatement(*old_key, new_key, kT);
  ASSERT_TRUE(statement.ok()) << statement.status().ToString();
  const std::string path = SourcePath("fixtures/golden/key_rotation_v1.txt");
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << *statement;
  const std::string golden = ReadFileOrDie(path);
  EXPECT_EQ(*statement, golden) << "rotation statement bytes changed: update docs/manifest-format.md too";
  // The layout of docs/manifest-format.md §7.
  const std::string body =
      "urlguard key rotation v1\n"
      "old-key d8914d566c988c265c18814f498316ca68ff015622484820a2435e319c29629b\n"
      "new-key d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\n"
      "not-before 1700000000\n";
  ASSERT_EQ(golden.substr(0, body.size()), body);
  EXPECT_EQ(golden.substr(body.size(), 25), "ed25519 77e0fa09c1b10c24 ");
  EXPECT_EQ(golden.size(), body.size() + kSignatureLineBytes);
  // The signature covers the domain prefix and the body, verified independently of AcceptRotation.
  auto sig = ParseSignatureFile(golden.substr(body.size()));
  ASSERT_TRUE(sig.ok());
  EXPECT_TRUE(VerifySignature(old_key->public_key(), std::string(kRotationSignatureDomain) + body,
                              (*sig)[0].signature.data()));
  EXPECT_EQ(kRotationSignatureDomain, std::string_view("urlguard key rotation v1\0", 25));

  auto parsed = ParseRotationStatement(golden);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->old_key, old_key->public_key());
  EXPECT_EQ(parsed->new_key, new_key);
  EXPECT_EQ(parsed->not_before_unix, kT);
  auto accepted = AcceptRotation({old_key->public_key()}, golden, kT);
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_EQ(*accepted, new_key);
}

TEST_F(KeyRotationTest, AcceptedWhenSignedByATrustedKey) {
  const std::string s = Statement(*a_, *b_);
  auto r = AcceptRotation({c_->public_key(), a_->public_key()}, s, kT + 1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, b_->public_key());
}

TEST_F(KeyRotationTest, RefusedWhenSignedByAnUntrustedKey) {
  const std::string s = Statement(*a_, *b_);
  for (const std::vector<PublicKey>& trusted :
       {std::vector<PublicKey>{}, std::vector<PublicKey>{c_->public_key()},
        std::vector<PublicKey>{b_->public_key()}}) {  // trusting the new key is not enough
    auto r = AcceptRotation(trusted, s, kT);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(r.status().message().rfind("rotation signed by an untrusted key", 0), 0u)
        << r.status().ToString();
  }
}

TEST_F(KeyRotationTest, ForgeriesAreRefused) {
  const std::string s = Statement(*a_, *b_);
  const std::vector<PublicKey> trusted = {a_->public_key()};
  // Every single-bit change anywhere in the statement is refused (format error or bad signature), never
  // accepted with another meaning.
  for (size_t i = 0; i < s.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string f = s;
      f[i] = static_cast<char>(f[i] ^ (1 << bit));
      auto r = AcceptRotation(trusted, f, kT);
      ASSERT_FALSE(r.ok()) << "byte " << i << " bit " << bit;
    }
  }
  // Pointing the statement at another new key (a valid statement otherwise) breaks the signature.
  std::string retarget = s;
  const std::string new_hex = ToHex(b_->public_key().raw.data(), 32);
  retarget.replace(retarget.find(new_hex), 64, ToHex(c_->public_key().raw.data(), 32));
  auto r = AcceptRotation(trusted, retarget, kT);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(r.status().message().rfind("bad signature", 0), 0u) << r.status().ToString();
  // An earlier not-before: also breaks the signature.
  std::string earlier = s;
  earlier.replace(earlier.find("not-before 1700000000"), 21, "not-before 1600000000");
  EXPECT_EQ(AcceptRotation(trusted, earlier, kT).status().code(), StatusCode::kPermissionDenied);
}

TEST_F(KeyRotationTest, DomainSeparatedFromManifestSignatures) {
  const std::string good = Statement(*a_, *b_);
  const std::string body = good.substr(0, good.size() - kSignatureLineBytes);
  // A manifest signature over the same bytes (e.g. a "manifest" a publisher was tricked into signing) is
  // not a rotation signature, and the other way round.
  const std::string as_manifest = body + MakeManifestSignatureFile(*a_, body);
  auto r = AcceptRotation({a_->public_key()}, as_manifest, kT);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("bad signature", 0), 0u) << r.status().ToString();
  EXPECT_EQ(VerifyManifestSignature({a_->public_key()}, body, good.substr(body.size())).code(),
            StatusCode::kPermissionDenied);
  // A plain signature without any domain is refused too.
  const std::string bare = body + FormatSignatureLine(a_->public_key(), a_->Sign(body));
  EXPECT_FALSE(AcceptRotation({a_->public_key()}, bare, kT).ok());
}

TEST_F(KeyRotationTest, NotBeforeIsHonoured) {
  const std::string s = Statement(*a_, *b_, kT);
  auto early = AcceptRotation({a_->public_key()}, s, kT - 1);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.status().code(), StatusCode::kFailedPrecondition) << early.status().ToString();
  EXPECT_TRUE(AcceptRotation({a_->public_key()}, s, kT).ok());
  // Zero is a valid time; a negative one cannot be written.
  EXPECT_TRUE(AcceptRotation({a_->public_key()}, Statement(*a_, *b_, 0), 0).ok());
  auto neg = MakeRotationStatement(*a_, b_->public_key(), -1);
  EXPECT_EQ(neg.status().code(), StatusCode::kInvalidArgument);
  auto max = MakeRotationStatement(*a_, b_->public_key(), INT64_MAX);
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(ParseRotationStatement(*max)->not_before_unix, INT64_MAX);
}

TEST_F(KeyRotationTest, RotationToTheSameKeyIsRefused) {
  EXPECT_EQ(MakeRotationStatement(*a_, a_->public_key(), kT).status().code(), StatusCode::kInvalidArgument);
  // Hand-made (validly signed) statement with new == old.
  const std::string hex = ToHex(a_->public_key().raw.data(), 32);
  const std::string body =
      "urlguard key rotation v1\nold-key " + hex + "\nnew-key " + hex + "\nnot-before 1\n";
  const std::string s =
      body + FormatSignatureLine(a_->public_key(), a_->Sign(std::string(kRotationSignatureDomain) + body));
  auto r = AcceptRotation({a_->public_key()}, s, kT);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << r.status().ToString();
}

TEST_F(KeyRotationTest, MalformedStatements) {
  const std::string s = Statement(*a_, *b_);
  const std::string old_hex = ToHex(a_->public_key().raw.data(), 32);
  const std::string sig_line = s.substr(s.size() - kSignatureLineBytes);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = s;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  std::string upper = old_hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"header only", std::string(kRotationHeaderLine)},
      {"no signature", s.substr(0, s.size() - kSignatureLineBytes)},
      {"truncated signature", s.substr(0, s.size() - 1)},
      {"two signatures", s + sig_line},
      {"trailing byte", s + "\n"},
      {"other header", replace("urlguard key rotation v1", "urlguard key rotation v2")},
      {"upper-case hex", replace(old_hex, upper)},
      {"short key", replace("old-key " + old_hex, "old-key " + old_hex.substr(2))},
      {"leading zero", replace("not-before 1700000000", "not-before 01700000000")},
      {"sign", replace("not-before 1700000000", "not-before +1700000000")},
      {"negative", replace("not-before 1700000000", "not-before -1700000000")},
      {"over int64", replace("not-before 1700000000", "not-before 9223372036854775808")},
      {"20 digits", replace("not-before 1700000000", "not-before 17000000000000000000")},
      {"empty time", replace("not-before 1700000000", "not-before ")},
      {"CRLF", replace("\nnew-key", "\r\nnew-key")},
      {"swapped lines", replace("old-key " + old_hex + "\n", "") + "old-key " + old_hex + "\n"},
      {"signature by another key id", replace(a_->public_key().KeyId(), b_->public_key().KeyId())},
      {"oversized", s + std::string(kMaxRotationStatementBytes, 'x')},
  };
  for (const auto& [name, bytes] : bad) {
    auto p = ParseRotationStatement(bytes);
    EXPECT_FALSE(p.ok()) << name;
    auto r = AcceptRotation({a_->public_key()}, bytes, kT);
    ASSERT_FALSE(r.ok()) << name;
    const StatusCode expected =
        bytes.size() > kMaxRotationStatementBytes ? StatusCode::kResourceExhausted : StatusCode::kCorruption;
    EXPECT_EQ(r.status().code(), expected) << name << ": " << r.status().ToString();
  }
}

TEST_F(KeyRotationTest, ChainIsAcceptedInOrderOnly) {
  const std::string ab = Statement(*a_, *b_);
  const std::string bc = Statement(*b_, *c_);
  const std::string cd = Statement(*c_, *d_);
  auto keys = AcceptRotationChain({a_->public_key()}, {ab, bc, cd}, kT);
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  // v1 statements retire their old key at once: only the last key of the chain signs manifests.
  EXPECT_EQ(*keys, (std::vector<PublicKey>{d_->public_key()}));
  // Step by step with AcceptRotation gives the same.
  std::vector<PublicKey> trusted = {a_->public_key()};
  for (const std::string& s : {ab, bc, cd}) {
    auto next = AcceptRotation(trusted, s, kT);
    ASSERT_TRUE(next.ok()) << next.status().ToString();
    trusted.push_back(*next);
  }
  EXPECT_EQ(trusted,
            (std::vector<PublicKey>{a_->public_key(), b_->public_key(), c_->public_key(), d_->public_key()}));

  // Out of order: B->C comes before anything made B trusted.
  auto swapped = AcceptRotationChain({a_->public_key()}, {bc, ab}, kT);
  ASSERT_FALSE(swapped.ok());
  EXPECT_EQ(swapped.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(swapped.status().message().find("rotation statement 0"), std::string::npos)
      << swapped.status().ToString();
  // A chain that does not start at a trusted key.
  EXPECT_FALSE(AcceptRotationChain({d_->public_key()}, {ab, bc}, kT).ok());
  // A broken link in the middle stops the chain.
  std::string bad_bc = bc;
  bad_bc[bad_bc.size() - 10] = bad_bc[bad_bc.size() - 10] == 'A' ? 'B' : 'A';
  auto broken = AcceptRotationChain({a_->public_key()}, {ab, bad_bc, cd}, kT);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("rotation statement 1"), std::string::npos)
      << broken.status().ToString();
  // Re-stating a trusted key does not duplicate it; an empty chain changes nothing.
  auto again = AcceptRotationChain({a_->public_key(), b_->public_key()}, {ab}, kT);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, std::vector<PublicKey>{b_->public_key()});  // A retired, B not repeated
  EXPECT_EQ(AcceptRotationChain({a_->public_key()}, {}, kT).value(),
            std::vector<PublicKey>{a_->public_key()});
  // Length cap.
  std::vector<std::string> long_chain(kMaxRotationChainLength + 1, ab);
  EXPECT_EQ(AcceptRotationChain({a_->public_key()}, long_chain, kT).status().code(),
            StatusCode::kResourceExhausted);
}

TEST(KeyRotation, GoldenStatementV2) {
  // v2: a day of grace for the old key and two high-water resets, signed by the fixture test key. Pinned in
  // fixtures/golden/key_rotation_v2.txt (URLGUARD_UPDATE_GOLDEN=1 rewrites it).
  auto old_key = SigningKey::FromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem")));
  ASSERT_TRUE(old_key.ok());
  RotationStatement content;
  ASSERT_TRUE(
      FromHex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", content.new_key.raw.data(), 32));
  content.not_before_unix = kT;
  content.old_key_until_unix = kT + 86400;
  content.resets = {{"phishing", 42, 0}, {"malware", 7, 0}};  // sorted by the writer
  auto statement = MakeRotationStatementV2(*old_key, content);
  ASSERT_TRUE(statement.ok()) << statement.status().ToString();
  const std::string path = SourcePath("fixtures/golden/key_rotation_v2.txt");
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << *statement;
  const std::string golden = ReadFileOrDie(path);
  EXPECT_EQ(*statement, golden) << "rotation statement bytes changed: update docs/manifest-format.md too";
  const std::string body =
      "urlguard key rotation v2\n"
      "old-key d8914d566c988c265c18814f498316ca68ff015622484820a2435e319c29629b\n"
      "new-key d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\n"
      "not-before 1700000000\n"
      "old-key-until 1700086400\n"
      "reset malware 7\n"
      "reset phishing 42\n";
  ASSERT_EQ(golden.substr(0, body.size()), body);
  EXPECT_EQ(golden.size(), body.size() + kSignatureLineBytes);
  auto sig = ParseSignatureFile(golden.substr(body.size()));
  ASSERT_TRUE(sig.ok());
  EXPECT_TRUE(VerifySignature(old_key->public_key(), std::string(kRotationSignatureDomainV2) + body,
                              (*sig)[0].signature.data()));
  // A v2 body under the v1 domain (or the other way round) does not verify.
  EXPECT_FALSE(VerifySignature(old_key->public_key(), std::string(kRotationSignatureDomain) + body,
                               (*sig)[0].signature.data()));
  auto parsed = ParseRotationStatement(golden);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->version, 2);
  EXPECT_EQ(parsed->old_key_until_unix, kT + 86400);
  EXPECT_EQ(parsed->resets, (std::vector<HighWaterReset>{{"malware", 7, kT}, {"phishing", 42, kT}}));
  // Changing one byte of the body (a reset's version) breaks the signature.
  std::string altered = golden;
  altered[altered.find("phishing 42") + 9] = '9';
  EXPECT_EQ(AcceptRotation({old_key->public_key()}, altered, kT).status().code(), StatusCode::kPermissionDenied);
}

TEST_F(KeyRotationTest, OldKeyIsRetiredAfterItsGrace) {
  RotationStatement c;
  c.new_key = b_->public_key();
  c.not_before_unix = kT;
  c.old_key_until_unix = kT + 3600;
  auto ab = MakeRotationStatementV2(*a_, c);
  ASSERT_TRUE(ab.ok());
  auto during = AcceptTrustChain({a_->public_key()}, {*ab}, kT + 3599);
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(during->keys, (std::vector<PublicKey>{a_->public_key(), b_->public_key()}));
  auto after = AcceptTrustChain({a_->public_key()}, {*ab}, kT + 3600);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->keys, std::vector<PublicKey>{b_->public_key()});
  EXPECT_EQ(after->retired, std::vector<PublicKey>{a_->public_key()});
  // A retired key cannot vouch for another key (a thief holding A after the rotation).
  const std::string ac = Statement(*a_, *c_, kT + 7200);
  auto stolen = AcceptTrustChain({a_->public_key()}, {*ab, ac}, kT + 7200);
  ASSERT_FALSE(stolen.ok());
  EXPECT_EQ(stolen.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(stolen.status().message().find("retired key"), std::string::npos) << stolen.status().ToString();
  // Grace bounds.
  c.old_key_until_unix = kT - 1;
  EXPECT_EQ(MakeRotationStatementV2(*a_, c).status().code(), StatusCode::kInvalidArgument);
  c.old_key_until_unix = kT + kMaxRotationGraceSeconds + 1;
  EXPECT_EQ(MakeRotationStatementV2(*a_, c).status().code(), StatusCode::kInvalidArgument);
  c.old_key_until_unix = kT;
  c.resets = {{"phishing", 0, 0}};
  EXPECT_EQ(MakeRotationStatementV2(*a_, c).status().code(), StatusCode::kInvalidArgument);
  c.resets = {{"phishing", 1, 0}, {"phishing", 2, 0}};
  EXPECT_EQ(MakeRotationStatementV2(*a_, c).status().code(), StatusCode::kInvalidArgument);
  c.resets = {{"Bad Name", 1, 0}};
  EXPECT_EQ(MakeRotationStatementV2(*a_, c).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace urlguard
