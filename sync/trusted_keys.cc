// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::TrustedKeys: PEM public keys plus an accepted key-rotation chain (format/key_rotation.h).
#include "urlguard/keys.h"

#include "platform/env.h"
#include "format/key_rotation.h"
#include "format/signature.h"
#include "sync/trusted_keys_access.h"

namespace urlguard {

static_assert(kMaxPublicKeyPemBytes == kMaxPemBytes, "one cap for PEM files");
static_assert(kMaxRotationStatementFileBytes == kMaxRotationStatementBytes, "one cap for rotation statements");
static_assert(kMaxRotationStatements == kMaxRotationChainLength, "one cap for rotation chains");

TrustedKeys::TrustedKeys() : rep_(std::make_shared<Rep>()) {}
TrustedKeys::~TrustedKeys() = default;
TrustedKeys::TrustedKeys(const TrustedKeys&) = default;
TrustedKeys& TrustedKeys::operator=(const TrustedKeys&) = default;

Result<TrustedKeys> TrustedKeys::FromPems(const std::vector<std::string>& pems,
                                          const std::vector<std::string>& rotation_statements, int64_t now_unix) {
  if (pems.empty()) return Status::InvalidArgument("no trusted public key");
  std::vector<PublicKey> keys;
  std::vector<HighWaterReset> resets;
  for (size_t i = 0; i < pems.size(); ++i) {
    auto k = PublicKeyFromPem(pems[i]);
    if (!k.ok()) return k.status().WithContext("public key " + std::to_string(i + 1));
    keys.push_back(*k);
  }
  // A new key is trusted only through statements signed by an already trusted key, in order.
  if (!rotation_statements.empty()) {
    auto chain = AcceptTrustChain(keys, rotation_statements, now_unix);
    if (!chain.ok()) return chain.status().WithContext("key rotation refused");
    // Retired keys may no longer sign manifests alone; the resets go to the data directory (SyncEngine).
    keys = chain->keys;
    resets = chain->resets;
  }
  return internal::TrustedKeysAccess::Make(std::move(keys), std::move(resets));
}

Result<TrustedKeys> TrustedKeys::LoadFiles(const std::vector<std::string>& public_key_files,
                                           const std::vector<std::string>& rotation_files, Env* env) {
  if (env == nullptr) env = Env::Default();
  if (public_key_files.empty()) return Status::InvalidArgument("no trusted public key file");
  std::vector<PublicKey> keys;
  std::vector<HighWaterReset> resets;
  for (const std::string& f : public_key_files) {
    auto pem = env->ReadFile(f, kMaxPemBytes);
    if (!pem.ok()) return pem.status();
    auto k = PublicKeyFromPem(*pem);
    if (!k.ok()) return k.status().WithContext(f);
    keys.push_back(*k);
  }
  std::vector<std::string> statements;
  for (const std::string& f : rotation_files) {
    auto st = env->ReadFile(f, kMaxRotationStatementBytes);
    if (!st.ok()) return st.status();
    statements.push_back(*st);
  }
  if (!statements.empty()) {
    auto chain = AcceptTrustChain(keys, statements, env->NowUnixSeconds());
    if (!chain.ok()) return chain.status().WithContext("key rotation refused");
    // Retired keys may no longer sign manifests alone; the resets go to the data directory (SyncEngine).
    keys = chain->keys;
    resets = chain->resets;
  }
  return internal::TrustedKeysAccess::Make(std::move(keys), std::move(resets));
}

size_t TrustedKeys::size() const { return rep_->keys.size(); }

std::vector<std::string> TrustedKeys::KeyIds() const {
  std::vector<std::string> ids;
  for (const PublicKey& k : rep_->keys) ids.push_back(k.KeyId());
  return ids;
}

}  // namespace urlguard
