// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The client's half of Ed25519: verification, public keys, signature files. Signatures come from the RFC
// 8032 test vectors and the golden files signed by the fixture key (fixtures/keys/README.md); the
// publisher's signing code is tested in signing/signer_test.cc.
#include "format/signature.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/sha256.h"
#include "tests/ed25519_test_util.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::kRfc8032;
using ::urlguard::testing::OtherKeyPem;
using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::Rfc8032Vector;
using ::urlguard::testing::SourcePath;
using ::urlguard::testing::Unhex;

PublicKey KeyFromHex(std::string_view hex) {
  PublicKey k;
  EXPECT_TRUE(FromHex(hex, k.raw.data(), k.raw.size())) << hex;
  return k;
}

Ed25519Signature SignatureFromHex(std::string_view hex) {
  Ed25519Signature sig{};
  EXPECT_TRUE(FromHex(hex, sig.data(), sig.size())) << hex;
  return sig;
}

TEST(Ed25519, VerifiesRfc8032Vectors) {
  for (const Rfc8032Vector& v : kRfc8032) {
    SCOPED_TRACE(v.public_key);
    const PublicKey key = KeyFromHex(v.public_key);
    const std::string message = Unhex(v.message);
    const Ed25519Signature sig = SignatureFromHex(v.signature);
    EXPECT_TRUE(VerifySignature(key, message, sig.data()));
    // Any flipped bit of the signature or the message is refused.
    for (size_t bit = 0; bit < 512; ++bit) {
      Ed25519Signature bad = sig;
      bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      EXPECT_FALSE(VerifySignature(key, message, bad.data())) << "bit " << bit;
    }
    EXPECT_FALSE(VerifySignature(key, message + "x", sig.data()));
    if (!message.empty()) {
      std::string m = message;
      m[0] ^= 1;
      EXPECT_FALSE(VerifySignature(key, m, sig.data()));
    }
  }
  // A vector's signature under another vector's key.
  EXPECT_FALSE(VerifySignature(KeyFromHex(kRfc8032[1].public_key), Unhex(kRfc8032[0].message),
                               SignatureFromHex(kRfc8032[0].signature).data()));
  PublicKey ones;
  ones.raw.fill(0xff);  // y >= p: not a canonical point encoding
  EXPECT_FALSE(VerifySignature(ones, "", SignatureFromHex(kRfc8032[0].signature).data()));
}

TEST(Ed25519, KeyIdIsFirstEightBytesOfSha256) {
  PublicKey k;
  k.raw.fill(0);
  // SHA-256 of 32 zero bytes = 66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925.
  EXPECT_EQ(k.KeyId(), "66687aadf862bd77");
  EXPECT_EQ(KeyFromHex(kRfc8032[0].public_key).KeyId(), "21fe31dfa154a261");
}

TEST(Ed25519, FixturePublicKey) {
  auto pub = PublicKeyFromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem")));
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  // Pinned: `openssl pkey -pubin -outform DER | tail -c 32` and `sha256sum` of those bytes.
  EXPECT_EQ(ToHex(pub->raw.data(), 32), "d8914d566c988c265c18814f498316ca68ff015622484820a2435e319c29629b");
  EXPECT_EQ(pub->KeyId(), "77e0fa09c1b10c24");
}

TEST(Ed25519, PublicKeyFromPemRefusesEverythingElse) {
  const std::string good = ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem"));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"garbage", "hello world"},
      {"garbage PEM body", "-----BEGIN PUBLIC KEY-----\nAAAA!!!!\n-----END PUBLIC KEY-----\n"},
      {"truncated", good.substr(0, good.size() / 2)},
      {"no end line", good.substr(0, good.find("-----END"))},
      {"private key", ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem"))},
      {"RSA public key", OtherKeyPem("RSA", false)},
      {"EC P-256 public key", OtherKeyPem("EC", false)},
      {"X25519 public key", OtherKeyPem("X25519", false)},
      {"Ed448 public key", OtherKeyPem("ED448", false)},
      {"oversized", good + std::string(kMaxPemBytes, '\n')},
  };
  for (const auto& [name, pem] : bad) {
    auto r = PublicKeyFromPem(pem);
    EXPECT_FALSE(r.ok()) << name;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name << ": " << r.status().ToString();
    }
  }
  EXPECT_TRUE(PublicKeyFromPem(good).ok());
}

TEST(Base64, Rfc4648Vectors) {
  // Spec: RFC 4648 §10 test vectors.
  const std::vector<std::pair<std::string, std::string>> v = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : v) {
    EXPECT_EQ(Base64Encode(reinterpret_cast<const uint8_t*>(plain.data()), plain.size()), encoded);
    std::string out = "junk";
    EXPECT_TRUE(Base64Decode(encoded, &out)) << encoded;
    EXPECT_EQ(out, plain);
  }
  const uint8_t all[3] = {0xfb, 0xff, 0xbf};
  EXPECT_EQ(Base64Encode(all, 3), "+/+/");
}

TEST(Base64, StrictDecodingRefusesNonCanonicalText) {
  std::string out;
  for (const char* bad : {"Zg=", "Zg", "Zh==", "Zm9=", "Z===", "====", "=Zg=", "Zm=v", "Zg==Zg==", "Zm9v\n",
                          " Zm9v", "Zm9v-_", "Zm9_", "Zm 9", "Zg=\n"}) {
    EXPECT_FALSE(Base64Decode(bad, &out)) << bad;
  }
}

// ---- signature files ----------------------------------------------------------------------------------

class GoldenSignatureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pub = PublicKeyFromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem")));
    ASSERT_TRUE(pub.ok());
    key_ = *pub;
  }

  PublicKey key_;
  const std::string manifest_ = ReadFileOrDie(SourcePath("fixtures/golden/manifest_v1.json"));
  const std::string sig_ = ReadFileOrDie(SourcePath("fixtures/golden/manifest_v1.json.sig"));
};

TEST_F(GoldenSignatureTest, ParsesTheGoldenFile) {
  auto parsed = ParseSignatureFile(sig_);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].key_id, key_.KeyId());
  EXPECT_EQ(FormatSignatureLine(key_, (*parsed)[0].signature), sig_);
  // The signed message is the domain prefix followed by the manifest bytes, never the bare bytes.
  EXPECT_TRUE(VerifySignature(key_, std::string(kManifestSignatureDomain) + manifest_,
                              (*parsed)[0].signature.data()));
  EXPECT_FALSE(VerifySignature(key_, manifest_, (*parsed)[0].signature.data()));
}

TEST_F(GoldenSignatureTest, VerifiesOnlyUnchangedBytesByATrustedKey) {
  EXPECT_TRUE(VerifyManifestSignature({key_}, manifest_, sig_).ok());
  const PublicKey other = KeyFromHex(kRfc8032[0].public_key);
  EXPECT_TRUE(VerifyManifestSignature({other, key_}, manifest_, sig_).ok());
  Status s = VerifyManifestSignature({other}, manifest_, sig_);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message().rfind("signature by an untrusted key", 0), 0u) << s.ToString();
  s = VerifyManifestSignature({}, manifest_, sig_);
  EXPECT_EQ(s.message().rfind("signature by an untrusted key", 0), 0u) << s.ToString();
  for (size_t i = 0; i < manifest_.size(); i += 7) {
    std::string m = manifest_;
    m[i] ^= 0x20;
    s = VerifyManifestSignature({key_}, m, sig_);
    EXPECT_EQ(s.message().rfind("bad signature", 0), 0u) << i << ": " << s.ToString();
  }
  // A line claiming an unknown key id is ignored next to a good one; a bad line by a trusted key is not.
  std::string foreign = sig_;
  foreign.replace(8, 16, "0123456789abcdef");
  EXPECT_TRUE(VerifyManifestSignature({key_}, manifest_, foreign + sig_).ok());
  std::string flipped = sig_;
  flipped[40] = flipped[40] == 'A' ? 'B' : 'A';
  s = VerifyManifestSignature({key_}, manifest_, flipped);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
}

TEST_F(GoldenSignatureTest, MalformedFilesAreRefused) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"no line feed", sig_.substr(0, sig_.size() - 1)},
      {"truncated", sig_.substr(0, 60)},
      {"other algorithm", "ed448  " + sig_.substr(7)},
      {"upper-case key id", sig_.substr(0, 8) + "77E0FA09C1B10C24" + sig_.substr(24)},
      {"two spaces", sig_.substr(0, 24) + "  " + sig_.substr(26)},
      {"duplicate key id", sig_ + sig_},
      {"CRLF", sig_.substr(0, sig_.size() - 1) + "\r\n"},
      {"oversized", std::string(kMaxSignatureFileBytes + 1, 'a')},
  };
  for (const auto& [name, file] : bad) {
    auto r = ParseSignatureFile(file);
    EXPECT_FALSE(r.ok()) << name;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << name;
      EXPECT_EQ(r.status().message().rfind("malformed signature file", 0), 0u) << name;
    }
    EXPECT_FALSE(VerifyManifestSignature({key_}, manifest_, file).ok()) << name;
  }
}

}  // namespace
}  // namespace urlguard
