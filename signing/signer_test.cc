// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "signing/signer.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <string>
#include <vector>

#include "core/sha256.h"
#include "format/signature.h"
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

// An unencrypted PKCS#8 PEM for a raw 32-byte Ed25519 seed (RFC 8410 §7: the DER prefix
// 30 2e 02 01 00 30 05 06 03 2b 65 70 04 22 04 20, then the seed).
std::string SeedPem(std::string_view seed_hex) {
  const std::string der = Unhex("302e020100300506032b657004220420") + Unhex(seed_hex);
  return "-----BEGIN PRIVATE KEY-----\n" +
         Base64Encode(reinterpret_cast<const uint8_t*>(der.data()), der.size()) +
         "\n-----END PRIVATE KEY-----\n";
}

std::string Hex(const Ed25519Signature& s) { return ToHex(s.data(), s.size()); }

TEST(Ed25519, Rfc8032Vectors) {
  for (const Rfc8032Vector& v : kRfc8032) {
    SCOPED_TRACE(v.public_key);
    auto key = SigningKey::FromPem(SeedPem(v.seed));
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    EXPECT_EQ(ToHex(key->public_key().raw.data(), 32), v.public_key);
    const std::string message = Unhex(v.message);
    const Ed25519Signature sig = key->Sign(message);
    EXPECT_EQ(Hex(sig), v.signature);  // so format/signature_test.cc's checks of v.signature apply to it
    EXPECT_TRUE(VerifySignature(key->public_key(), message, sig.data()));
  }
}

TEST(Ed25519, WrongKeyOrInvalidPointDoesNotVerify) {
  auto a = SigningKey::FromPem(SeedPem(kRfc8032[0].seed));
  auto b = SigningKey::FromPem(SeedPem(kRfc8032[1].seed));
  ASSERT_TRUE(a.ok() && b.ok());
  const Ed25519Signature sig = a->Sign("hello");
  EXPECT_TRUE(VerifySignature(a->public_key(), "hello", sig.data()));
  EXPECT_FALSE(VerifySignature(b->public_key(), "hello", sig.data()));
  PublicKey zero;  // all-zero bytes: not a usable key
  EXPECT_FALSE(VerifySignature(zero, "hello", sig.data()));
  PublicKey ones;
  ones.raw.fill(0xff);  // y >= p: not a canonical point encoding
  EXPECT_FALSE(VerifySignature(ones, "hello", sig.data()));
}

TEST(Ed25519, GeneratePemRoundTripAndDeterminism) {
  auto key = SigningKey::Generate();
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  auto other = SigningKey::Generate();
  ASSERT_TRUE(other.ok());
  EXPECT_NE(key->public_key(), other->public_key());

  const std::string priv = key->PrivatePem();
  EXPECT_EQ(priv.rfind("-----BEGIN PRIVATE KEY-----\n", 0), 0u) << priv;
  auto reread = SigningKey::FromPem(priv);
  ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  EXPECT_EQ(reread->public_key(), key->public_key());
  EXPECT_EQ(reread->Sign("abc"), key->Sign("abc"));  // RFC 8032 signing is deterministic

  const std::string pub = key->PublicPem();
  EXPECT_EQ(pub.rfind("-----BEGIN PUBLIC KEY-----\n", 0), 0u) << pub;
  auto pk = PublicKeyFromPem(pub);
  ASSERT_TRUE(pk.ok()) << pk.status().ToString();
  EXPECT_EQ(*pk, key->public_key());

  // Moving keeps the key usable and leaves the source empty (not double-freed: ASan would tell).
  SigningKey moved = std::move(*key);
  EXPECT_EQ(moved.public_key(), pk.value());
  SigningKey assigned = std::move(*other);
  assigned = std::move(moved);
  EXPECT_EQ(assigned.public_key(), pk.value());
  EXPECT_TRUE(VerifySignature(*pk, "m", assigned.Sign("m").data()));
}

TEST(Ed25519, FixtureKeyPairWrittenByOpensslCli) {
  // fixtures/keys/test-ed25519*.pem were written by `openssl genpkey -algorithm ed25519` (see the README).
  auto key = SigningKey::FromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem")));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  auto pub = PublicKeyFromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem")));
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ(key->public_key(), *pub);  // its bytes and key id are pinned in format/signature_test.cc
  // Our PEM writers produce the same text as the OpenSSL CLI.
  EXPECT_EQ(key->PublicPem(), ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem")));
  EXPECT_EQ(key->PrivatePem(), ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem")));
}

TEST(Ed25519, SigningKeyFromPemRefusesEverythingElse) {
  // An encrypted PKCS#8 key: refused without prompting for a passphrase (the test would hang otherwise).
  auto key = SigningKey::FromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem")));
  ASSERT_TRUE(key.ok());
  std::string encrypted;
  {
    EVP_PKEY* pkey = EVP_PKEY_new_raw_private_key(
        EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(Unhex(kRfc8032[0].seed).data()),
        32);
    ASSERT_NE(pkey, nullptr);
    BIO* bio = BIO_new(BIO_s_mem());
    char pass[] = "secret";
    ASSERT_EQ(PEM_write_bio_PKCS8PrivateKey(bio, pkey, EVP_aes_256_cbc(), pass, 6, nullptr, nullptr), 1);
    char* p = nullptr;
    long n = BIO_get_mem_data(bio, &p);
    encrypted.assign(p, static_cast<size_t>(n));
    BIO_free(bio);
    EVP_PKEY_free(pkey);
  }
  ASSERT_NE(encrypted.find("ENCRYPTED PRIVATE KEY"), std::string::npos);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"garbage", "-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n"},
      {"public key", ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pub.pem"))},
      {"encrypted", encrypted},
      {"RSA private key", OtherKeyPem("RSA", true)},
      {"EC private key", OtherKeyPem("EC", true)},
      {"X25519 private key", OtherKeyPem("X25519", true)},
      {"oversized", key->PrivatePem() + std::string(kMaxPemBytes, ' ')},
  };
  for (const auto& [name, pem] : bad) {
    auto r = SigningKey::FromPem(pem);
    EXPECT_FALSE(r.ok()) << name;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << name << ": " << r.status().ToString();
    }
  }
}

// ---- signature files and manifest signatures ----------------------------------------------------------

class ManifestSignatureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto a = SigningKey::FromPem(SeedPem(kRfc8032[0].seed));
    auto b = SigningKey::FromPem(SeedPem(kRfc8032[1].seed));
    auto c = SigningKey::FromPem(SeedPem(kRfc8032[2].seed));
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    a_ = std::make_unique<SigningKey>(std::move(*a));
    b_ = std::make_unique<SigningKey>(std::move(*b));
    c_ = std::make_unique<SigningKey>(std::move(*c));
  }

  std::unique_ptr<SigningKey> a_, b_, c_;
  const std::string manifest_ = "{\n  \"list\": \"phishing\",\n  \"version\": 42\n}\n";
};

TEST_F(ManifestSignatureTest, SignedMessageIsDomainSeparated) {
  EXPECT_EQ(kManifestSignatureDomain.size(), 21u);
  EXPECT_EQ(kManifestSignatureDomain.back(), '\0');
  const Ed25519Signature sig = SignManifest(*a_, manifest_);
  EXPECT_TRUE(VerifySignature(a_->public_key(), std::string("urlguard manifest v1", 20) + '\0' + manifest_,
                              sig.data()));
  // A signature over the bare bytes (or any other domain) is not a manifest signature.
  EXPECT_FALSE(VerifySignature(a_->public_key(), manifest_, sig.data()));
  const std::string bare = FormatSignatureLine(a_->public_key(), a_->Sign(manifest_));
  Status s = VerifyManifestSignature({a_->public_key()}, manifest_, bare);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message().rfind("bad signature", 0), 0u) << s.ToString();
}

TEST_F(ManifestSignatureTest, SignatureFileFormat) {
  const std::string file = MakeManifestSignatureFile(*a_, manifest_);
  ASSERT_EQ(file.size(), kSignatureLineBytes);
  EXPECT_EQ(file.substr(0, 25), "ed25519 21fe31dfa154a261 ");
  EXPECT_EQ(file.back(), '\n');
  auto parsed = ParseSignatureFile(file);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].key_id, a_->public_key().KeyId());
  EXPECT_EQ((*parsed)[0].signature, SignManifest(*a_, manifest_));
  EXPECT_EQ(FormatSignatureLine(a_->public_key(), (*parsed)[0].signature), file);
}

TEST_F(ManifestSignatureTest, AcceptsTrustedSignature) {
  const std::string sig = MakeManifestSignatureFile(*a_, manifest_);
  EXPECT_TRUE(VerifyManifestSignature({a_->public_key()}, manifest_, sig).ok());
  EXPECT_TRUE(VerifyManifestSignature({b_->public_key(), a_->public_key()}, manifest_, sig).ok());
}

TEST_F(ManifestSignatureTest, EveryFlippedBitOfManifestOrSignatureIsRefused) {
  const std::string sig = MakeManifestSignatureFile(*a_, manifest_);
  const std::vector<PublicKey> trusted = {a_->public_key()};
  for (size_t bit = 0; bit < manifest_.size() * 8; ++bit) {
    std::string m = manifest_;
    m[bit / 8] = static_cast<char>(m[bit / 8] ^ (1 << (bit % 8)));
    Status s = VerifyManifestSignature(trusted, m, sig);
    ASSERT_EQ(s.code(), StatusCode::kPermissionDenied) << "manifest bit " << bit;
    ASSERT_EQ(s.message().rfind("bad signature", 0), 0u) << s.ToString();
  }
  // Flip each bit of the raw signature, re-encoded canonically (a flipped base64 character is a format
  // error or a different signature; both must be refused).
  const Ed25519Signature raw = SignManifest(*a_, manifest_);
  for (size_t bit = 0; bit < 512; ++bit) {
    Ed25519Signature bad = raw;
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    Status s = VerifyManifestSignature(trusted, manifest_, FormatSignatureLine(a_->public_key(), bad));
    ASSERT_EQ(s.code(), StatusCode::kPermissionDenied) << "signature bit " << bit;
    ASSERT_EQ(s.message().rfind("bad signature", 0), 0u) << s.ToString();
  }
  for (size_t i = 0; i < sig.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string f = sig;
      f[i] = static_cast<char>(f[i] ^ (1 << bit));
      ASSERT_FALSE(VerifyManifestSignature(trusted, manifest_, f).ok())
          << "file byte " << i << " bit " << bit;
    }
  }
}

TEST_F(ManifestSignatureTest, UntrustedKeyIsNamedAsSuch) {
  const std::string sig = MakeManifestSignatureFile(*b_, manifest_);
  Status s = VerifyManifestSignature({a_->public_key()}, manifest_, sig);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message().rfind("signature by an untrusted key", 0), 0u) << s.ToString();
  EXPECT_NE(s.message().find(b_->public_key().KeyId()), std::string::npos) << s.ToString();
  s = VerifyManifestSignature({}, manifest_, sig);
  EXPECT_EQ(s.message().rfind("signature by an untrusted key", 0), 0u) << s.ToString();
}

TEST_F(ManifestSignatureTest, KeyIdIsOnlyAHint) {
  // Signed by B but labelled with A's id, A trusted: checked against A, so a bad signature.
  const std::string forged = FormatSignatureLine(a_->public_key(), SignManifest(*b_, manifest_));
  Status s = VerifyManifestSignature({a_->public_key(), b_->public_key()}, manifest_, forged);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message().rfind("bad signature", 0), 0u) << s.ToString();
}

TEST_F(ManifestSignatureTest, SeveralSignaturesForARotation) {
  // The publisher signs with the old key A and the new key B; clients trusting either accept.
  const std::string both =
      MakeManifestSignatureFile(*a_, manifest_) + MakeManifestSignatureFile(*b_, manifest_);
  EXPECT_TRUE(VerifyManifestSignature({a_->public_key()}, manifest_, both).ok());
  EXPECT_TRUE(VerifyManifestSignature({b_->public_key()}, manifest_, both).ok());
  EXPECT_TRUE(VerifyManifestSignature({a_->public_key(), b_->public_key()}, manifest_, both).ok());
  EXPECT_FALSE(VerifyManifestSignature({c_->public_key()}, manifest_, both).ok());
  // A bad line by a trusted key fails the file even if another trusted line is good.
  const std::string bad_b = FormatSignatureLine(b_->public_key(), SignManifest(*c_, manifest_));
  const std::string mixed = MakeManifestSignatureFile(*a_, manifest_) + bad_b;
  EXPECT_TRUE(VerifyManifestSignature({a_->public_key()}, manifest_, mixed).ok());  // B's line: not ours
  Status s = VerifyManifestSignature({a_->public_key(), b_->public_key()}, manifest_, mixed);
  EXPECT_EQ(s.message().rfind("bad signature", 0), 0u) << s.ToString();
}

TEST_F(ManifestSignatureTest, MalformedSignatureFiles) {
  const std::string line = MakeManifestSignatureFile(*a_, manifest_);
  const std::vector<PublicKey> trusted = {a_->public_key()};
  // Every truncation, including the empty file and the line without its "\n".
  for (size_t n = 0; n < line.size(); ++n) {
    Status s = VerifyManifestSignature(trusted, manifest_, line.substr(0, n));
    ASSERT_EQ(s.code(), StatusCode::kPermissionDenied) << n;
    ASSERT_EQ(s.message().rfind("malformed signature file", 0), 0u) << n << ": " << s.ToString();
  }
  std::string upper_id = line;
  upper_id[8] = 'A';  // '2' -> 'A': not lower-case hex
  std::string crlf = line;
  crlf.insert(crlf.size() - 1, "\r");
  std::string raw64(64, 'x');
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"raw 64 bytes", raw64},
      {"trailing byte", line + "x"},
      {"leading space", " " + line},
      {"CRLF", crlf},
      {"uppercase key id", upper_id},
      {"other algorithm", "ed448  " + line.substr(7)},
      {"same key twice", line + line},
      {"five lines", line + MakeManifestSignatureFile(*b_, manifest_) +
                         MakeManifestSignatureFile(*c_, manifest_) + line.substr(0, 8) + "0000000000000000" +
                         line.substr(24) + line.substr(0, 8) + "1111111111111111" + line.substr(24)},
      {"oversized", std::string(kMaxSignatureFileBytes + 1, 'a')},
      {"66-byte signature", line.substr(0, 111) + "AA\n"},
  };
  for (const auto& [name, file] : bad) {
    Status s = VerifyManifestSignature(trusted, manifest_, file);
    EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << name;
    EXPECT_EQ(s.message().rfind("malformed signature file", 0), 0u) << name << ": " << s.ToString();
  }
}

TEST(ManifestSignature, GoldenSignatureIsPinned) {
  const std::string golden = ReadFileOrDie(SourcePath("fixtures/golden/manifest_v1.json"));
  auto key = SigningKey::FromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem")));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  const std::string sig = MakeManifestSignatureFile(*key, golden);
  EXPECT_EQ(sig, ReadFileOrDie(SourcePath("fixtures/golden/manifest_v1.json.sig")))
      << "Ed25519 is deterministic: the signed message or the signature file format changed";
}

}  // namespace
}  // namespace urlguard
