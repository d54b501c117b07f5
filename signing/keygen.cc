// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "signing/keygen.h"

namespace urlguard {

Status WriteKeyPair(Env* env, const std::string& dir, PublicKey* public_key) {
  const std::string private_path = JoinPath(dir, kPrivateKeyFileName);
  const std::string public_path = JoinPath(dir, kPublicKeyFileName);
  if (env->FileExists(private_path)) {
    return Status::FailedPrecondition(private_path + " already exists; refusing to overwrite a private key");
  }
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(dir));
  URLGUARD_ASSIGN_OR_RETURN(SigningKey key, SigningKey::Generate());
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, public_path, key.PublicPem(), /*private_file=*/false));
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, private_path, key.PrivatePem(), /*private_file=*/true));
  if (public_key != nullptr) *public_key = key.public_key();
  return Status::Ok();
}

}  // namespace urlguard
