// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "client/filter_chain.h"

#include "core/key_hash.h"

namespace urlguard {
namespace {

// Records a hit. The expression's SHA-256 is computed here, for hits only.
void AddHit(LookupScratch* s, uint32_t list, LayerKind layer, uint32_t expression, int prefix_length,
            std::string_view text) {
  if (s->hit_count == kMaxHitsPerUrl) {
    ++s->hits_dropped;
    return;
  }
  s->hits[s->hit_count++] = LookupHit{list, layer, expression, prefix_length, Sha256(text)};
}

size_t KindIndex(const SnapshotView& list) { return static_cast<size_t>(list.key_hash()); }

template <typename Fn>
void ForEachIpPrefix(const CanonicalUrl& url, const LayerView& ip, Fn&& fn) {
  const bool v6 = url.host_kind == HostKind::kIpv6;
  const int max_len = v6 ? 128 : 32;
  for (int len = max_len; len >= 0; --len) {
    if (v6 ? ip.ip_prefixes.HasV6(len) : ip.ip_prefixes.HasV4(len)) fn(v6, len);
  }
}

// Calls fn(layer, key) for every domain- and url-layer probe of the URL in `s`, list by list, in Probe's order
// (the prefetch passes walk exactly the probes Probe resolves).
template <typename Fn>
void ForEachLayerProbeOf(const std::vector<SnapshotView>& lists, const LookupScratch& s, Fn&& fn) {
  for (const SnapshotView& list : lists) {
    const LayerView* domain = list.layer(LayerKind::kDomain);
    const LayerView* url = list.layer(LayerKind::kUrl);
    const uint64_t* keys = s.keys[KindIndex(list)];
    for (size_t i = 0; i < s.expressions.size(); ++i) {
      const LayerView* layer = s.expressions.is_host_root(i) ? domain : url;
      if (layer != nullptr) fn(*layer, keys[i]);
    }
  }
}

}  // namespace

FilterChain::FilterChain(std::vector<SnapshotView> lists) : lists_(std::move(lists)) {
  for (const SnapshotView& l : lists_) uses_[KindIndex(l)] = true;
}

void FilterChain::HashExpressions(LookupScratch* s) const {
  MakeExpressions(s->url, &s->expressions);
  const size_t n = s->expressions.size();
  if (uses_[static_cast<size_t>(KeyHashKind::kXxh3)]) {
    // One pass over the expressions, all substrings of one buffer (MakeExpressions copies the URL once).
    const ExpressionList& e = s->expressions;
    Xxh3KeysOfSubstrings(e.data(), e.begins(), e.ends(), n, s->keys[static_cast<size_t>(KeyHashKind::kXxh3)]);
  }
  if (uses_[static_cast<size_t>(KeyHashKind::kSha256Prefix)]) {
    uint64_t* keys = s->keys[static_cast<size_t>(KeyHashKind::kSha256Prefix)];
    for (size_t i = 0; i < n; ++i) keys[i] = Sha256PrefixKey(s->expressions[i]);
  }
}

Status FilterChain::LookupUrl(std::string_view url, LookupScratch* s) const {
  s->hit_count = 0;
  s->hits_dropped = 0;
  URLGUARD_RETURN_IF_ERROR(Canonicalize(url, &s->url));
  HashExpressions(s);
  PrefetchProbes(*s);
  Probe(s);
  return Status::Ok();
}

void FilterChain::PrefetchProbes(const LookupScratch& s) const {
  ForEachLayerProbeOf(lists_, s, [](const LayerView& layer, uint64_t key) { layer.Prefetch(key); });
}

void FilterChain::PrefetchSamples(const LookupScratch& s) const {
  ForEachLayerProbeOf(lists_, s, [](const LayerView& layer, uint64_t key) {
    if (layer.filter == FilterKind::kFingerprintArray) {
      layer.fingerprints.PrefetchSample(layer.fingerprints.FingerprintOf(key));
    }
  });
}

void FilterChain::Probe(LookupScratch* s) const {
  s->hit_count = 0;
  s->hits_dropped = 0;
  const bool ip_host = s->url.host_kind != HostKind::kName;
  for (uint32_t li = 0; li < lists_.size(); ++li) {
    const SnapshotView& list = lists_[li];
    const LayerView* domain = list.layer(LayerKind::kDomain);
    const LayerView* url = list.layer(LayerKind::kUrl);
    const KeyHashKind kind = list.key_hash();
    const uint64_t* keys = s->keys[static_cast<size_t>(kind)];
    for (uint32_t i = 0; i < s->expressions.size(); ++i) {
      const bool host_root = s->expressions.is_host_root(i);
      const LayerView* layer = host_root ? domain : url;
      if (layer != nullptr && layer->MayContain(keys[i])) {
        AddHit(s, li, host_root ? LayerKind::kDomain : LayerKind::kUrl, i, 0, s->expressions[i]);
      }
    }
    const LayerView* ip = list.layer(LayerKind::kIp);
    if (ip_host && ip != nullptr) {
      ForEachIpPrefix(s->url, *ip, [&](bool v6, int len) {
        char buf[kMaxIpExpressionBytes];
        const std::string_view text(buf, IpPrefixExpression(s->url.ip, v6, len, buf));
        if (ip->MayContain(KeyHash(kind, text))) AddHit(s, li, LayerKind::kIp, kIpExpression, len, text);
      });
    }
  }
}

}  // namespace urlguard
