// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "client/local_verdict.h"

#include <algorithm>
#include <string>

#include "url/entry.h"
#include "core/sha256.h"
#include "sync/freshness.h"
#include "sync/time_floor.h"

namespace urlguard {

bool AnyStale(const Generation& g, const std::vector<std::string>& subscribed, int64_t clock) {
  if (AnyListStale(g.state, subscribed, TrustedNow(clock, g.time_floor))) return true;
  // That walked every installed list for expiry and damage; of D/subscriptions only a list without a record is
  // left to find (a second AnyListStale would walk them all again on every lookup).
  return std::any_of(g.subscribed.begin(), g.subscribed.end(),
                     [&](const std::string& name) { return g.state.Find(name) == nullptr; });
}

Verdict LocalVerdict(const Generation& g, const Status& canon, const LookupScratch& s, bool want_canonical) {
  Verdict v;
  if (!canon.ok()) {
    v.kind = VerdictKind::kInvalid;
    v.error = canon.message();
    return v;
  }
  if (want_canonical) v.canonical = s.url.Spec();
  if (s.hit_count == 0) return v;
  v.kind = VerdictKind::kHit;
  for (size_t i = 0; i < s.hit_count; ++i) {
    const LookupHit& h = s.hits[i];
    Match m;
    m.list = g.lists[h.list].list;
    m.list_version = g.lists[h.list].version;
    m.layer = static_cast<Layer>(h.layer);
    if (h.expression == kIpExpression) {
      char buf[kMaxIpExpressionBytes];
      m.expression.assign(buf, IpPrefixExpression(s.url.ip, s.url.host_kind == HostKind::kIpv6, h.prefix_length, buf));
    } else {
      m.expression = std::string(s.expressions[h.expression]);
    }
    m.sha256_hex = ToHex(h.key);
    v.matches.push_back(std::move(m));
  }
  return v;
}

std::vector<LocalHit> LocalHits(const Generation& g, const LookupScratch& s) {
  std::vector<LocalHit> hits;
  for (size_t i = 0; i < s.hit_count; ++i) {
    const LookupHit& h = s.hits[i];
    LocalHit lh;
    lh.list = g.lists[h.list].list;
    lh.list_version = g.lists[h.list].version;
    lh.full_hash = h.key;
    lh.emergency = g.lists[h.list].emergency;
    lh.list_expires_unix = g.lists[h.list].expires_unix;
    hits.push_back(std::move(lh));
  }
  return hits;
}

}  // namespace urlguard
