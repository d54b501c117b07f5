// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Ed25519 public keys and signature verification for update manifests (docs/architecture.md §5; every byte is specified in
// docs/manifest-format.md).
//
// Why Ed25519: small keys (32 bytes) and signatures (64 bytes), fast verification, no parameters to get
// wrong, and deterministic signing (RFC 8032: equal key and message give equal bytes), so the golden test
// can pin a signature. Everything goes through OpenSSL 3's EVP interface (EVP_PKEY_ED25519, one-shot
// EVP_DigestSign / EVP_DigestVerify with a NULL digest: "pure" Ed25519, as RFC 8032 §5.1 defines it).
//
// Domain separation: a manifest signature covers "urlguard manifest v1\0" || manifest bytes, never the bare
// bytes, so a signature made for one purpose (a manifest, a key rotation statement, anything a future
// version signs) can never be replayed as another.
//
// This is the client's half: verification and public keys only. Private keys, signing and key generation
// live in the publisher (signing/signer.h, signing/keygen.h), so the client library holds no private-key
// code.
//
// Trust: public keys come from the embedder's configuration or are compiled in, never from an update. A
// signature file names the key it was made with by its key id (a hint, not trusted: the signature is then
// checked against the trusted key with that id), so a client can tell "signed by a key I do not trust"
// from "bad signature", and a publisher can sign with the old and the new key during a rotation.
//
// Changes the signed bytes or the signature file format: bump the domain strings, the docs and the golden
// test (format/manifest_test.cc, signing/signer_test.cc).
#ifndef URLGUARD_FORMAT_SIGNATURE_H_
#define URLGUARD_FORMAT_SIGNATURE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

constexpr size_t kEd25519PublicKeyBytes = 32;
constexpr size_t kEd25519SignatureBytes = 64;
using Ed25519Signature = std::array<uint8_t, kEd25519SignatureBytes>;

// The domain-separation prefix of a manifest signature, including its NUL byte (21 bytes).
// Changes the signed bytes: every deployed signature becomes invalid.
inline constexpr std::string_view kManifestSignatureDomain{"urlguard manifest v1\0", 21};

// Caps on key material and signature files from outside (configuration files, downloads).
constexpr size_t kMaxPemBytes = 16 << 10;
// A signature file line: "ed25519 " + 16 hex key id + " " + 88 base64 characters + "\n".
constexpr size_t kSignatureLineBytes = 8 + 16 + 1 + 88 + 1;  // 114
constexpr size_t kMaxSignatureLines = 4;  // one per key a publisher signs with (two during a rotation)
constexpr size_t kMaxSignatureFileBytes = kMaxSignatureLines * kSignatureLineBytes;  // 456

// An Ed25519 public key: the 32 raw bytes of RFC 8032 §5.1.5. A plain value; thread-compatible.
struct PublicKey {
  std::array<uint8_t, kEd25519PublicKeyBytes> raw{};

  // The key id: lower-case hex of the first 8 bytes of SHA-256(raw), 16 characters. Names the key in
  // signature files, rotation statements and error messages. Not secret; not a security boundary (a
  // collision only makes the verifier try one more key).
  std::string KeyId() const;

  bool operator==(const PublicKey&) const = default;
};

// Reads a SubjectPublicKeyInfo PEM public key ("-----BEGIN PUBLIC KEY-----"). kInvalidArgument for input
// over kMaxPemBytes, garbage, a private key, or a key that is not Ed25519 (RSA, EC, X25519...).
Result<PublicKey> PublicKeyFromPem(std::string_view pem);

// True when `signature` is a valid Ed25519 signature of `message` by `key` (OpenSSL's verifier: it refuses
// non-canonical S values, so signatures are not malleable). False for anything else, including a `key` that
// is not a valid curve point. Thread-safe.
bool VerifySignature(const PublicKey& key, std::string_view message,
                     const uint8_t signature[kEd25519SignatureBytes]);

// One line of a signature file: "ed25519 <key id> <base64 of the 64-byte signature>\n" (standard base64
// alphabet with '=' padding, RFC 4648 §4). `key` only supplies the key id.
std::string FormatSignatureLine(const PublicKey& key, const Ed25519Signature& signature);

// A parsed signature line. `key_id` is a claim of the file, not yet checked.
struct SignatureEntry {
  std::string key_id;  // 16 lower-case hex digits
  Ed25519Signature signature{};
};

// Parses a signature file: 1..kMaxSignatureLines lines, each exactly as FormatSignatureLine() writes it
// (every line ends with "\n"; no other bytes; no two lines with the same key id; canonical base64 only).
// kPermissionDenied "malformed signature file: ..." for anything else, including a file over
// kMaxSignatureFileBytes and an empty or truncated file.
Result<std::vector<SignatureEntry>> ParseSignatureFile(std::string_view bytes);

// Checks a downloaded manifest against its signature file, before anything parses the manifest
// (docs/architecture.md §5). Lines whose key id names no key of `trusted` are ignored (they are for clients that
// trust other keys); every line whose key id does name a trusted key must verify against it (against any
// trusted key with that id). Fails with kPermissionDenied and a message that starts with:
//   "malformed signature file"        ParseSignatureFile() refused the file;
//   "signature by an untrusted key"   no line names a trusted key (also when `trusted` is empty);
//   "bad signature"                   a line by a trusted key does not verify (a changed manifest byte,
//                                     a changed signature bit, a manifest for another purpose).
// Thread-safe.
Status VerifyManifestSignature(const std::vector<PublicKey>& trusted, std::string_view manifest_bytes,
                               std::string_view signature_file_bytes);

// The same check for any detached signature file over `domain` || `document_bytes` (`domain` names what the
// document is, e.g. kManifestSignatureDomain or kListIndexSignatureDomain in format/list_index.h, so a
// signature made for one kind of document never verifies another). Same failures as above. Thread-safe.
Status VerifyDetachedSignature(std::string_view domain, const std::vector<PublicKey>& trusted,
                               std::string_view document_bytes, std::string_view signature_file_bytes);

// Base64 (RFC 4648 §4, standard alphabet, '=' padding). Exposed for the rotation statement and tests.
std::string Base64Encode(const uint8_t* data, size_t size);
// Strict decoding: only the canonical encoding of some byte string is accepted (length a multiple of 4,
// padding only at the end, zero unused bits, no whitespace). False for anything else.
bool Base64Decode(std::string_view text, std::string* out);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_SIGNATURE_H_
