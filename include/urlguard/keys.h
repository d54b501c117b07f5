// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::TrustedKeys — the Ed25519 public keys a client trusts to sign list updates, and the one way to load
// them: PEM public keys, then key-rotation statements that move trust to a new key only when signed by an
// already trusted key (docs/architecture.md, "Key rotation"). `urlguard sync`, urlguardd and embedders all load
// keys through here.
//
//   auto keys = urlguard::TrustedKeys::LoadFiles({"/etc/urlguard/publisher.pub.pem"},
//                                                {"/etc/urlguard/rotation-1.txt"});
//   if (!keys.ok()) { /* keys.status().ToString() names the file and the problem */ }
//   options.trusted_keys = *keys;
//
// Keys never come from an update itself: only from the embedder's configuration.
//
// Thread safety: a TrustedKeys is an immutable value (copies share one read-only representation); use it from
// any number of threads.
#ifndef URLGUARD_KEYS_H_
#define URLGUARD_KEYS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "urlguard/export.h"
#include "urlguard/status.h"

namespace urlguard {

class Env;

namespace internal {
struct TrustedKeysAccess;
}  // namespace internal

// Caps on what is read from configuration (one place; the loaders refuse anything larger).
inline constexpr size_t kMaxPublicKeyPemBytes = 16 << 10;     // one PEM public key file
inline constexpr size_t kMaxRotationStatementFileBytes = 2048;  // one key-rotation statement file
inline constexpr size_t kMaxRotationStatements = 16;           // statements in one chain

class URLGUARD_EXPORT TrustedKeys {
 public:
  // No keys: a client with these can look up but never sync.
  TrustedKeys();
  ~TrustedKeys();
  TrustedKeys(const TrustedKeys&);
  TrustedKeys& operator=(const TrustedKeys&);

  // Parses PEM public keys ("-----BEGIN PUBLIC KEY-----", Ed25519 SubjectPublicKeyInfo), then accepts each
  // rotation statement in order: a statement adds its new key only if an already trusted key signed it and
  // `now_unix` is at or after its not-before time. A statement's old key may no longer sign manifests alone once
  // its grace has ended (v1: at not-before; v2: at old-key-until), nor sign later statements; a v2 statement's
  // signed high-water resets are applied by SyncEngine::Open (docs/manifest-format.md §7.1). Failures: kInvalidArgument when `pems` is empty or a PEM is
  // not an Ed25519 public key (the message names its index); and, each message starting "key rotation refused: ",
  // kPermissionDenied for a statement with a bad, untrusted or retired signer, kFailedPrecondition for one whose
  // not-before time is still in the future, kCorruption for a malformed statement and kResourceExhausted for
  // more than kMaxRotationStatements statements.
  static Result<TrustedKeys> FromPems(const std::vector<std::string>& pems,
                                      const std::vector<std::string>& rotation_statements = {},
                                      int64_t now_unix = 0);

  // Reads the PEM files, then the rotation statement files (in chain order), and accepts them as FromPems does
  // at the clock of `env`. Reads through `env` (nullptr: the process default). Failures as FromPems, plus the
  // read errors of each file (kNotFound, kIoError, kResourceExhausted over the caps above), each message naming
  // the file.
  static Result<TrustedKeys> LoadFiles(const std::vector<std::string>& public_key_files,
                                       const std::vector<std::string>& rotation_files = {}, Env* env = nullptr);

  // Number of trusted keys (configured plus rotated-in).
  size_t size() const;
  bool empty() const { return size() == 0; }
  // Each key's short id (hex of the first 8 bytes of its SHA-256), in trust order, for logs.
  std::vector<std::string> KeyIds() const;

 private:
  friend struct internal::TrustedKeysAccess;
  struct Rep;
  std::shared_ptr<const Rep> rep_;
};

}  // namespace urlguard

#endif  // URLGUARD_KEYS_H_
