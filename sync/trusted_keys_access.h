// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The library's view into urlguard::TrustedKeys (include/urlguard/keys.h): the parsed Ed25519 keys, for the
// sync engine and the client.
#ifndef URLGUARD_SYNC_TRUSTED_KEYS_ACCESS_H_
#define URLGUARD_SYNC_TRUSTED_KEYS_ACCESS_H_

#include <vector>

#include "format/key_rotation.h"
#include "format/signature.h"
#include "urlguard/keys.h"

namespace urlguard {

struct TrustedKeys::Rep {
  std::vector<PublicKey> keys;         // may sign manifests now (retired keys left out)
  std::vector<HighWaterReset> resets;  // signed high-water resets of the accepted rotation statements
};

namespace internal {

struct TrustedKeysAccess {
  static const std::vector<PublicKey>& Keys(const TrustedKeys& k) { return k.rep_->keys; }
  static const std::vector<HighWaterReset>& Resets(const TrustedKeys& k) { return k.rep_->resets; }
  static TrustedKeys Make(std::vector<PublicKey> keys, std::vector<HighWaterReset> resets = {}) {
    TrustedKeys t;
    auto rep = std::make_shared<TrustedKeys::Rep>();
    rep->keys = std::move(keys);
    rep->resets = std::move(resets);
    t.rep_ = std::move(rep);
    return t;
  }
};

}  // namespace internal
}  // namespace urlguard

#endif  // URLGUARD_SYNC_TRUSTED_KEYS_ACCESS_H_
