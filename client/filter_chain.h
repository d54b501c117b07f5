// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// FilterChain: the lookup over a set of open snapshots (docs/architecture.md §3, steps 1-4). For one URL:
//   1. canonicalize (failure -> invalid, never a match);
//   2. generate the host-suffix x path-prefix expressions and hash each with the key hash of the open lists
//      (core/key_hash.h: XXH3-64 for format version 2 lists, SHA-256 prefixes only while a version 1 list is
//      open);
//   3. probe every list: the domain layer with the whole-host expressions ("a.b.c/"), the url layer with the
//      others, and for IP hosts the ip layer once per prefix length that list's ip layer contains;
//   4. report every hit (list, layer, expression, and the expression's SHA-256, computed for hits only: it is
//      what the verify protocol sends a prefix of), or none: safe.
// All probes of a URL (and of a batch of URLs) are prefetched before any is resolved, so their cache misses
// overlap; a batch first hints every probe's sample (PrefetchSamples), then every probe's lines.
//
// Allocation: none once a LookupScratch has served a URL of the current size (reuse one per thread).
// Thread safety: a FilterChain is immutable after construction; any number of threads may probe it, each
// with its own LookupScratch.
#ifndef URLGUARD_CLIENT_FILTER_CHAIN_H_
#define URLGUARD_CLIENT_FILTER_CHAIN_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "url/entry.h"
#include "core/sha256.h"
#include "core/snapshot.h"
#include "url/url_canon.h"
#include "urlguard/status.h"

namespace urlguard {

// At most this many hits are reported for one URL (more are counted in LookupResult::hits_dropped).
constexpr size_t kMaxHitsPerUrl = 16;
// IPv4 has 33 prefix lengths, IPv6 129: the most ip-layer probes one list can need.
constexpr size_t kMaxIpProbes = 129;

struct LookupHit {
  uint32_t list;        // index into the chain's lists
  LayerKind layer;
  uint32_t expression;  // index into LookupScratch::expressions, or kIpExpression
  int prefix_length;    // ip layer only: the expression is IpPrefixExpression(url.ip, ..., prefix_length)
  Sha256Digest key;     // SHA-256 of the expression (the full hash the verify server decides with)
};
constexpr uint32_t kIpExpression = 0xffffffffu;

// Per-thread working memory for lookups.
struct LookupScratch {
  CanonicalUrl url;
  ExpressionList expressions;
  // keys[kind][i]: KeyHash(kind, expressions[i]), filled for the kinds of the chain's lists only.
  uint64_t keys[2][kMaxExpressions];
  LookupHit hits[kMaxHitsPerUrl];
  size_t hit_count = 0;
  size_t hits_dropped = 0;
};

class FilterChain {
 public:
  FilterChain() = default;
  explicit FilterChain(std::vector<SnapshotView> lists);

  const std::vector<SnapshotView>& lists() const { return lists_; }

  // Steps 1-4 for one URL. Returns the canonicalization status (then no probe was made); on ok,
  // scratch->hit_count says how many hits scratch->hits holds.
  Status LookupUrl(std::string_view url, LookupScratch* scratch) const;

  // Probes an already canonicalized URL whose expressions and digests are in `scratch` (steps 3-4).
  void Probe(LookupScratch* scratch) const;
  // Issues the prefetches of Probe(scratch) without resolving them.
  void PrefetchProbes(const LookupScratch& scratch) const;
  // The first pass for a batch of URLs: hints the lines PrefetchProbes itself reads (each fingerprint-array
  // probe's sample), so that PrefetchProbes over the batch does not wait on them one URL at a time.
  void PrefetchSamples(const LookupScratch& scratch) const;

  // Fills scratch->expressions and the key hashes the lists need from scratch->url (step 2).
  void HashExpressions(LookupScratch* scratch) const;

  // True when some list's keys are of that kind.
  bool uses(KeyHashKind kind) const { return uses_[static_cast<size_t>(kind)]; }

 private:
  std::vector<SnapshotView> lists_;
  bool uses_[2] = {false, false};
};

}  // namespace urlguard

#endif  // URLGUARD_CLIENT_FILTER_CHAIN_H_
