// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The publisher's Ed25519 private key and everything signed with it: manifest signature files and key
// rotation statements (docs/manifest-format.md §5 and §7).
//
// Only the publisher holds private keys, so this lives in publish/ and never in the client library: the
// client verifies with format/signature.h and format/key_rotation.h. Signing is deterministic (RFC 8032:
// equal key and message give equal bytes), so golden tests can pin signatures.
#ifndef URLGUARD_SIGNING_SIGNER_H_
#define URLGUARD_SIGNING_SIGNER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "format/key_rotation.h"
#include "format/signature.h"
#include "platform/env.h"
#include "urlguard/status.h"

typedef struct evp_pkey_st EVP_PKEY;  // OpenSSL's type (openssl/types.h), kept out of this header

namespace urlguard {

// An Ed25519 private key (RAII over OpenSSL's EVP_PKEY). Movable, not copyable. Sign() and the accessors
// are const and safe to call from several threads at once; moving or destroying needs exclusive access.
class SigningKey {
 public:
  // A fresh key from OpenSSL's CSPRNG. kInternal when OpenSSL fails (it should not).
  static Result<SigningKey> Generate();
  // Reads an unencrypted PKCS#8 PEM private key ("-----BEGIN PRIVATE KEY-----", what `openssl genpkey
  // -algorithm ed25519` and PrivatePem() write). kInvalidArgument for input over kMaxPemBytes, garbage, an
  // encrypted key (never prompts for a passphrase), or a key of another type (RSA, EC, X25519...).
  static Result<SigningKey> FromPem(std::string_view pem);

  SigningKey(SigningKey&& other) noexcept;
  SigningKey& operator=(SigningKey&& other) noexcept;
  SigningKey(const SigningKey&) = delete;
  SigningKey& operator=(const SigningKey&) = delete;
  ~SigningKey();

  // The private key as unencrypted PKCS#8 PEM. Secret: write it only to a private file (mode 0600).
  std::string PrivatePem() const;
  PublicKey public_key() const { return public_key_; }
  // The public key as SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----"), for PublicKeyFromPem().
  std::string PublicPem() const;

  // The Ed25519 signature of `message` (RFC 8032 §5.1.6; deterministic). Aborts the process if OpenSSL
  // fails, which happens only when it cannot allocate.
  Ed25519Signature Sign(std::string_view message) const;

 private:
  SigningKey(EVP_PKEY* pkey, const PublicKey& public_key) : pkey_(pkey), public_key_(public_key) {}

  EVP_PKEY* pkey_ = nullptr;  // owned; null only after a move
  PublicKey public_key_;
};

// Reads the PEM private key file at `path` (at most kMaxPemBytes) through `env`: ReadFile's failures (they name the
// path), or FromPem's with the path as context.
Result<SigningKey> LoadSigningKey(Env* env, const std::string& path);

// Signs kManifestSignatureDomain || manifest_bytes.
Ed25519Signature SignManifest(const SigningKey& key, std::string_view manifest_bytes);

// The manifest signature file for one key: FormatSignatureLine(key.public_key(), SignManifest(...)). A
// publisher signing with several keys (during a rotation) concatenates the files of each key.
std::string MakeManifestSignatureFile(const SigningKey& key, std::string_view manifest_bytes);

// Writes a key rotation statement signed by `old_key` (format/key_rotation.h reads it). kInvalidArgument
// when `new_key` equals old_key's public key or not_before_unix is negative. Deterministic (Ed25519 signing
// is). Thread-safe.
Result<std::string> MakeRotationStatement(const SigningKey& old_key, const PublicKey& new_key,
                                          int64_t not_before_unix);
// Writes a v2 statement signed by `old_key` for content.new_key, content.not_before_unix,
// content.old_key_until_unix and content.resets (content.version and old_key are ignored; resets are sorted
// here). kInvalidArgument for a key equal to old_key's, a negative not-before, a grace outside
// 0 .. kMaxRotationGraceSeconds, more than kMaxRotationResets resets, an invalid list name, a version 0 or a
// repeated list.
Result<std::string> MakeRotationStatementV2(const SigningKey& old_key, const RotationStatement& content);

}  // namespace urlguard

#endif  // URLGUARD_SIGNING_SIGNER_H_
