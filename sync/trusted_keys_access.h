// Copyright urlguard authors.
//
// The library's view into urlguard::TrustedKeys (include/urlguard/keys.h): the parsed Ed25519 keys, for the
// sync engine and the client.
#ifndef URLGUARD_SYNC_TRUSTED_KEYS_ACCESS_H_
#define URLGUARD_SYNC_TRUSTED_KEYS_ACCESS_H_

#include <vector>

#include "sync/signature.h"
#include "urlguard/keys.h"

namespace urlguard {

struct TrustedKeys::Rep {
  std::vector<PublicKey> keys;
};

namespace internal {

struct TrustedKeysAccess {
  static const std::vector<PublicKey>& Keys(const TrustedKeys& k) { return k.rep_->keys; }
  static TrustedKeys Make(std::vector<PublicKey> keys) {
    TrustedKeys t;
    auto rep = std::make_shared<TrustedKeys::Rep>();
    rep->keys = std::move(keys);
    t.rep_ = std::move(rep);
    return t;
  }
};

}  // namespace internal
}  // namespace urlguard

#endif  // URLGUARD_SYNC_TRUSTED_KEYS_ACCESS_H_
