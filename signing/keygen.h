// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Key pair files for the publisher (`urlguard-publish keygen`): an Ed25519 signing key for manifests and
// key rotation statements (format/signature.h, docs/manifest-format.md).
#ifndef URLGUARD_SIGNING_KEYGEN_H_
#define URLGUARD_SIGNING_KEYGEN_H_

#include <string>

#include "platform/env.h"
#include "signing/signer.h"
#include "urlguard/status.h"

namespace urlguard {

// File names inside the key directory.
inline constexpr char kPrivateKeyFileName[] = "urlguard-ed25519.pem";     // PKCS#8 PEM, mode 0600
inline constexpr char kPublicKeyFileName[] = "urlguard-ed25519.pub.pem";  // SubjectPublicKeyInfo PEM

// Generates a fresh Ed25519 key pair and writes DIR/urlguard-ed25519.pub.pem (mode 0644) and then
// DIR/urlguard-ed25519.pem (mode 0600, created private from the start: never readable by others, not even
// briefly), each atomically (WriteFileAtomic: temporary file, fsync, rename, fsync directory). Creates DIR
// when missing. The public key is written first, so a failure never leaves a private key without its public
// half; a leftover public file from a failed run is simply replaced by the next one.
// Fails with kFailedPrecondition, writing nothing, when DIR/urlguard-ed25519.pem already exists (a key is
// never overwritten; the check is not atomic against a concurrent keygen in the same directory), and with
// the Env's error (kIoError...) when a write fails. On success, *public_key (if not null) receives the new
// public key, e.g. to print its key id.
Status WriteKeyPair(Env* env, const std::string& dir, PublicKey* public_key = nullptr);

}  // namespace urlguard

#endif  // URLGUARD_SIGNING_KEYGEN_H_
