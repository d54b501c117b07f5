// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Freshness: when the client may call a verdict confident, and how long a signed manifest may live.
//
// A "safe" verdict is only as good as the lists behind it. A subscribed list that is not installed, whose file
// was found damaged and dropped (sync/store.h keeps its high-water mark but no installed version), or whose
// signed expiry has passed makes every verdict stale: the URL may be on exactly the list the client lacks.
// StaleLists() names each such list with its reason, for the verdict's `stale` flag, `urlguard status` and
// the daemon's metrics.
//
// Bounded lifetime. A manifest signs its own expiry; a stolen key could sign one that never expires
// (expires_unix = 2^63-1), and the client would serve that version as fresh forever. The client refuses a
// manifest whose expires_unix lies more than kMaxManifestLifetimeSeconds after its created_unix, and one
// created more than kMaxManifestCreatedAheadSeconds in the future of the client's trusted time (such a
// `created` would also push the time floor, sync/time_floor.h, into the future).
//
// Thread safety: pure functions.
#ifndef URLGUARD_SYNC_FRESHNESS_H_
#define URLGUARD_SYNC_FRESHNESS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/manifest.h"
#include "sync/store.h"
#include "urlguard/client.h"
#include "urlguard/status.h"

namespace urlguard {

// kMaxManifestLifetimeSeconds and kMaxManifestCreatedAheadSeconds: format/manifest.h.

// StaleReason and StaleReasonName() are public: urlguard/client.h.

struct StaleList {
  std::string list;
  StaleReason reason = StaleReason::kNotInstalled;
  int64_t expires_unix = 0;  // kExpired: the signed expiry that passed; 0 otherwise

  bool operator==(const StaleList&) const = default;
};

// Every list that makes verdicts stale at `now_unix`, sorted by name: each record of `state` that has no
// installed version (kDamaged) or has expired (kExpired), and each name of `subscribed` that `state` has no
// record of (kNotInstalled). `subscribed` may be empty (then only the recorded lists count) and may repeat
// names. A state with no list at all is stale too: the result is then {"", kNotInstalled} when `subscribed`
// is empty (nothing can be confidently safe before the first install).
std::vector<StaleList> StaleLists(const StoreState& state, const std::vector<std::string>& subscribed,
                                  int64_t now_unix);

// !StaleLists(state, subscribed, now_unix).empty(), without allocating (for every lookup).
bool AnyListStale(const StoreState& state, const std::vector<std::string>& subscribed, int64_t now_unix);

// "phishing: expired at 1700086400; malware: damaged". "" for none.
std::string DescribeStaleLists(const std::vector<StaleList>& stale);

// kFailedPrecondition when the manifest's lifetime (expires_unix - created_unix) exceeds
// kMaxManifestLifetimeSeconds, or its created_unix lies more than kMaxManifestCreatedAheadSeconds after
// `trusted_now_unix`. Precondition (ParseManifest checks it): 1 <= created_unix < expires_unix.
Status CheckManifestLifetime(int64_t created_unix, int64_t expires_unix, int64_t trusted_now_unix);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_FRESHNESS_H_
