// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Ed25519 signing over OpenSSL 3 EVP; the signed messages of docs/manifest-format.md §5 and §7.
#include "signing/signer.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "core/list_name.h"
#include "format/key_rotation.h"
#include "format/openssl_pkey.h"

namespace urlguard {
namespace {

using openssl::BioPtr;
using openssl::MdCtxPtr;
using openssl::PkeyPtr;

[[noreturn]] void OpenSslFatal(const char* what) {
  std::fprintf(stderr, "urlguard: OpenSSL failed: %s\n", what);
  std::abort();
}

}  // namespace

Result<SigningKey> SigningKey::Generate() {
  PkeyPtr pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  PublicKey pub;
  if (!pkey || !openssl::RawPublicKey(pkey.get(), &pub)) {
    ERR_clear_error();
    return Status::Internal("Ed25519 key generation failed");
  }
  return SigningKey(pkey.release(), pub);
}

Result<SigningKey> LoadSigningKey(Env* env, const std::string& path) {
  auto pem = env->ReadFile(path, kMaxPemBytes);
  if (!pem.ok()) return pem.status();
  auto key = SigningKey::FromPem(*pem);
  if (!key.ok()) return key.status().WithContext(path);
  return key;
}

Result<SigningKey> SigningKey::FromPem(std::string_view pem) {
  if (pem.size() > kMaxPemBytes) {
    return Status::InvalidArgument("private key PEM larger than " + std::to_string(kMaxPemBytes) + " bytes");
  }
  BioPtr bio = openssl::MemBio(pem);
  if (!bio) return Status::Internal("BIO_new_mem_buf failed");
  PkeyPtr pkey(PEM_read_bio_PrivateKey(bio.get(), nullptr, openssl::NoPassphrase, nullptr));
  ERR_clear_error();
  if (!pkey) return Status::InvalidArgument("not an unencrypted PEM private key");
  if (!openssl::IsEd25519(pkey.get())) return Status::InvalidArgument("private key is not an Ed25519 key");
  PublicKey pub;
  if (!openssl::RawPublicKey(pkey.get(), &pub)) {
    ERR_clear_error();
    return Status::InvalidArgument("cannot derive the Ed25519 public key");
  }
  return SigningKey(pkey.release(), pub);
}

SigningKey::SigningKey(SigningKey&& other) noexcept
    : pkey_(std::exchange(other.pkey_, nullptr)), public_key_(other.public_key_) {}

SigningKey& SigningKey::operator=(SigningKey&& other) noexcept {
  if (this != &other) {
    EVP_PKEY_free(pkey_);
    pkey_ = std::exchange(other.pkey_, nullptr);
    public_key_ = other.public_key_;
  }
  return *this;
}

SigningKey::~SigningKey() { EVP_PKEY_free(pkey_); }

std::string SigningKey::PrivatePem() const {
  assert(pkey_ != nullptr && "use of a moved-from SigningKey");
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), pkey_, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    OpenSslFatal("PEM_write_bio_PrivateKey");
  }
  return openssl::BioContents(bio.get());
}

std::string SigningKey::PublicPem() const {
  assert(pkey_ != nullptr && "use of a moved-from SigningKey");
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), pkey_) != 1) OpenSslFatal("PEM_write_bio_PUBKEY");
  return openssl::BioContents(bio.get());
}

Ed25519Signature SigningKey::Sign(std::string_view message) const {
  assert(pkey_ != nullptr && "use of a moved-from SigningKey");
  Ed25519Signature sig{};
  MdCtxPtr ctx(EVP_MD_CTX_new());
  // Spec (RFC 8032 §5.1.6 via OpenSSL): pure Ed25519 is one-shot, so no digest and no streaming.
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey_) != 1) {
    OpenSslFatal("EVP_DigestSignInit");
  }
  size_t len = sig.size();
  if (EVP_DigestSign(ctx.get(), sig.data(), &len, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1 ||
      len != sig.size()) {
    OpenSslFatal("EVP_DigestSign");
  }
  return sig;
}

Ed25519Signature SignManifest(const SigningKey& key, std::string_view manifest_bytes) {
  std::string message(kManifestSignatureDomain);
  message.append(manifest_bytes);
  return key.Sign(message);
}

std::string MakeManifestSignatureFile(const SigningKey& key, std::string_view manifest_bytes) {
  return FormatSignatureLine(key.public_key(), SignManifest(key, manifest_bytes));
}

Result<std::string> MakeRotationStatement(const SigningKey& old_key, const PublicKey& new_key,
                                          int64_t not_before_unix) {
  RotationStatement s;
  s.old_key = old_key.public_key();
  s.new_key = new_key;
  s.not_before_unix = not_before_unix;
  if (s.new_key == s.old_key) return Status::InvalidArgument("rotation to the same key");
  if (not_before_unix < 0) return Status::InvalidArgument("negative not-before time");
  std::string out = RotationStatementBody(s);
  out += FormatSignatureLine(s.old_key, old_key.Sign(RotationSignedMessage(out, s.version)));
  return out;
}

Result<std::string> MakeRotationStatementV2(const SigningKey& old_key, const RotationStatement& content) {
  RotationStatement s = content;
  s.version = 2;
  s.old_key = old_key.public_key();
  if (s.new_key == s.old_key) return Status::InvalidArgument("rotation to the same key");
  if (s.not_before_unix < 0) return Status::InvalidArgument("negative not-before time");
  if (s.old_key_until_unix < s.not_before_unix ||
      s.old_key_until_unix - s.not_before_unix > kMaxRotationGraceSeconds) {
    return Status::InvalidArgument("the old key's grace must be 0 .. " + std::to_string(kMaxRotationGraceSeconds) +
                                   " s after not-before");
  }
  if (s.resets.size() > kMaxRotationResets) {
    return Status::InvalidArgument("more than " + std::to_string(kMaxRotationResets) + " high-water resets");
  }
  std::sort(s.resets.begin(), s.resets.end(),
            [](const HighWaterReset& a, const HighWaterReset& b) { return a.list < b.list; });
  for (size_t i = 0; i < s.resets.size(); ++i) {
    if (!IsValidListName(s.resets[i].list)) return Status::InvalidArgument("invalid list name " + s.resets[i].list);
    if (s.resets[i].max_version == 0) return Status::InvalidArgument("reset of " + s.resets[i].list + " to 0");
    if (i > 0 && s.resets[i - 1].list == s.resets[i].list) {
      return Status::InvalidArgument("two resets of " + s.resets[i].list);
    }
  }
  std::string out = RotationStatementBody(s);
  out += FormatSignatureLine(s.old_key, old_key.Sign(RotationSignedMessage(out, s.version)));
  if (out.size() > kMaxRotationStatementBytes) return Status::InvalidArgument("statement too long");
  return out;
}

}  // namespace urlguard
