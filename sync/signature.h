// Copyright urlguard authors.
//
// Ed25519 keys and signatures for update manifests (ARCHITECTURE §5; every byte is specified in
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
// Trust: public keys come from the embedder's configuration or are compiled in, never from an update. A
// signature file names the key it was made with by its key id (a hint, not trusted: the signature is then
// checked against the trusted key with that id), so a client can tell "signed by a key I do not trust"
// from "bad signature", and a publisher can sign with the old and the new key during a rotation.
//
// Changes the signed bytes or the signature file format: bump the domain strings, the docs and the golden
// test (sync/manifest_test.cc).
#ifndef URLGUARD_SYNC_SIGNATURE_H_
#define URLGUARD_SYNC_SIGNATURE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

typedef struct evp_pkey_st EVP_PKEY;  // OpenSSL's type (openssl/types.h), kept out of this header

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

// Reads a SubjectPublicKeyInfo PEM public key ("-----BEGIN PUBLIC KEY-----"). kInvalidArgument for input
// over kMaxPemBytes, garbage, a private key, or a key that is not Ed25519 (RSA, EC, X25519...).
Result<PublicKey> PublicKeyFromPem(std::string_view pem);

// True when `signature` is a valid Ed25519 signature of `message` by `key` (OpenSSL's verifier: it refuses
// non-canonical S values, so signatures are not malleable). False for anything else, including a `key` that
// is not a valid curve point. Thread-safe.
bool VerifySignature(const PublicKey& key, std::string_view message,
                     const uint8_t signature[kEd25519SignatureBytes]);

// Signs kManifestSignatureDomain || manifest_bytes.
Ed25519Signature SignManifest(const SigningKey& key, std::string_view manifest_bytes);

// One line of a signature file: "ed25519 <key id> <base64 of the 64-byte signature>\n" (standard base64
// alphabet with '=' padding, RFC 4648 §4). `key` only supplies the key id.
std::string FormatSignatureLine(const PublicKey& key, const Ed25519Signature& signature);

// The manifest signature file for one key: FormatSignatureLine(key.public_key(), SignManifest(...)). A
// publisher signing with several keys (during a rotation) concatenates the files of each key.
std::string MakeManifestSignatureFile(const SigningKey& key, std::string_view manifest_bytes);

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
// (ARCHITECTURE §5). Lines whose key id names no key of `trusted` are ignored (they are for clients that
// trust other keys); every line whose key id does name a trusted key must verify against it (against any
// trusted key with that id). Fails with kPermissionDenied and a message that starts with:
//   "malformed signature file"        ParseSignatureFile() refused the file;
//   "signature by an untrusted key"   no line names a trusted key (also when `trusted` is empty);
//   "bad signature"                   a line by a trusted key does not verify (a changed manifest byte,
//                                     a changed signature bit, a manifest for another purpose).
// Thread-safe.
Status VerifyManifestSignature(const std::vector<PublicKey>& trusted, std::string_view manifest_bytes,
                               std::string_view signature_file_bytes);

// Base64 (RFC 4648 §4, standard alphabet, '=' padding). Exposed for the rotation statement and tests.
std::string Base64Encode(const uint8_t* data, size_t size);
// Strict decoding: only the canonical encoding of some byte string is accepted (length a multiple of 4,
// padding only at the end, zero unused bits, no whitespace). False for anything else.
bool Base64Decode(std::string_view text, std::string* out);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_SIGNATURE_H_
