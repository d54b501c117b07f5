// Copyright urlguard authors.
#include "core/filter_chain.h"

namespace urlguard {
namespace {

void AddHit(LookupScratch* s, uint32_t list, LayerKind layer, uint32_t expression, int prefix_length,
            const Sha256Digest& key) {
  if (s->hit_count == kMaxHitsPerUrl) {
    ++s->hits_dropped;
    return;
  }
  s->hits[s->hit_count++] = LookupHit{list, layer, expression, prefix_length, key};
}

template <typename Fn>
void ForEachIpPrefix(const CanonicalUrl& url, const LayerView& ip, Fn&& fn) {
  const bool v6 = url.host_kind == HostKind::kIpv6;
  const int max_len = v6 ? 128 : 32;
  for (int len = max_len; len >= 0; --len) {
    if (v6 ? ip.ip_prefixes.HasV6(len) : ip.ip_prefixes.HasV4(len)) fn(v6, len);
  }
}

}  // namespace

void FilterChain::HashExpressions(LookupScratch* s) {
  MakeExpressions(s->url, &s->expressions);
  for (size_t i = 0; i < s->expressions.size(); ++i) s->digests[i] = Sha256(s->expressions[i]);
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
  for (const SnapshotView& list : lists_) {
    const LayerView* domain = list.layer(LayerKind::kDomain);
    const LayerView* url = list.layer(LayerKind::kUrl);
    for (size_t i = 0; i < s.expressions.size(); ++i) {
      const LayerView* layer = s.expressions.is_host_root(i) ? domain : url;
      if (layer != nullptr) layer->Prefetch(s.digests[i]);
    }
  }
}

void FilterChain::Probe(LookupScratch* s) const {
  s->hit_count = 0;
  s->hits_dropped = 0;
  const bool ip_host = s->url.host_kind != HostKind::kName;
  for (uint32_t li = 0; li < lists_.size(); ++li) {
    const SnapshotView& list = lists_[li];
    const LayerView* domain = list.layer(LayerKind::kDomain);
    const LayerView* url = list.layer(LayerKind::kUrl);
    for (uint32_t i = 0; i < s->expressions.size(); ++i) {
      const bool host_root = s->expressions.is_host_root(i);
      const LayerView* layer = host_root ? domain : url;
      if (layer != nullptr && layer->MayContain(s->digests[i])) {
        AddHit(s, li, host_root ? LayerKind::kDomain : LayerKind::kUrl, i, 0, s->digests[i]);
      }
    }
    const LayerView* ip = list.layer(LayerKind::kIp);
    if (ip_host && ip != nullptr) {
      ForEachIpPrefix(s->url, *ip, [&](bool v6, int len) {
        char buf[kMaxIpExpressionBytes];
        size_t n = IpPrefixExpression(s->url.ip, v6, len, buf);
        Sha256Digest key = Sha256(buf, n);
        if (ip->MayContain(key)) {
          AddHit(s, li, LayerKind::kIp, kIpExpression, len, key);
        }
      });
    }
  }
}

}  // namespace urlguard
