// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// From a filter-chain lookup (client/filter_chain.h) in a Generation to the public Verdict of a local lookup
// (kSafe, kHit with every match, or kInvalid), and to the LocalHits the verification path decides
// (client/verifier.h).
//
// Thread safety: pure functions over read-only inputs.
#ifndef URLGUARD_CLIENT_LOCAL_VERDICT_H_
#define URLGUARD_CLIENT_LOCAL_VERDICT_H_

#include <cstdint>
#include <vector>

#include "client/filter_chain.h"
#include "client/generation.h"
#include "client/verifier.h"
#include "urlguard/checker.h"

namespace urlguard {

// A local verdict from a lookup: kInvalid (error = canon's message) when canonicalization failed, else kSafe or
// kHit with the matches filled (list names and versions from `g`); canonical filled when `want_canonical`.
Verdict LocalVerdict(const Generation& g, const Status& canon, const LookupScratch& s, bool want_canonical);

// The hits of the last lookup as the verification path needs them.
std::vector<LocalHit> LocalHits(const Generation& g, const LookupScratch& s);

// True when a "safe" from `g` is not confident at `clock` (taken as no earlier than g.time_floor): nothing
// installed, a list of `subscribed` (the embedder's) or of g.subscribed (D/subscriptions) not installed, a list whose file was found damaged, or one past its signed
// expiry (sync/freshness.h). Does not allocate.
bool AnyStale(const Generation& g, const std::vector<std::string>& subscribed, int64_t clock);

}  // namespace urlguard

#endif  // URLGUARD_CLIENT_LOCAL_VERDICT_H_
