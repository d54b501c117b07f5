// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/list_builder.h"

#include <algorithm>
#include <cmath>

#include "core/blocked_bloom.h"
#include "core/byte_io.h"

namespace urlguard {
namespace {

double ExpectedProbes(LayerKind layer, const IpPrefixLengths& ip, const ProbeModel& model) {
  switch (layer) {
    case LayerKind::kDomain: return model.domain;
    case LayerKind::kUrl: return model.url;
    case LayerKind::kIp: {
      int v4 = 0, v6 = 0;
      for (int l = 0; l <= 32; ++l) v4 += ip.HasV4(l);
      for (int l = 0; l <= 128; ++l) v6 += ip.HasV6(l);
      return std::max(1, std::max(v4, v6));
    }
  }
  return 1;
}

}  // namespace

Status ListBuilder::Add(std::string_view entry) {
  auto key = EntryKeyFor(entry);
  if (!key.ok()) return key.status();
  AddKey(*key);
  return Status::Ok();
}

void ListBuilder::AddKey(const EntryKey& key) {
  keys_[static_cast<size_t>(key.layer)].push_back(KeyHash(key_hash_, key.expression));
  if (key.layer == LayerKind::kIp) {
    if (key.ipv6) {
      ip_prefixes_.AddV6(key.prefix_length);
    } else {
      ip_prefixes_.AddV4(key.prefix_length);
    }
  }
  ++added_;
}

uint64_t ListBuilder::UniverseFor(LayerKind layer, double fp_rate, const ProbeModel& model) const {
  uint64_t total = 0;
  for (const auto& k : keys_) total += k.size();
  return UniverseForCount(layer, total, ip_prefixes_, fp_rate, model);
}

uint64_t UniverseForCount(LayerKind layer, uint64_t total, const IpPrefixLengths& ip_prefixes, double fp_rate,
                          const ProbeModel& model) {
  // U_L = k_L * N / p (see the header), rounded up: a probe's false-hit rate n_L / U_L is then never above the
  // layer's share of the target, at any N (the universe is an exact integer; FingerprintSetGeometryFor's choice
  // of remainder bits changes the bytes, never U). Never below 1, never above 2^63.
  double u = ExpectedProbes(layer, ip_prefixes, model) * static_cast<double>(std::max<uint64_t>(total, 1)) / fp_rate;
  if (!(u < 9.2e18)) return uint64_t{1} << 63;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(u)));
}

Result<SnapshotContent> ListBuilder::Finish(const BuildOptions& options, LayerBuildStats stats[3]) {
  if (!IsValidListName(options.list_name)) {
    return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: '" + options.list_name + "'");
  }
  if (!(options.fp_rate > 0 && options.fp_rate < 1)) {
    return Status::InvalidArgument("false-positive rate must be between 0 and 1");
  }
  SnapshotContent content;
  content.list_name = options.list_name;
  content.version = options.version;
  content.created_unix = options.created_unix;
  content.key_hash = key_hash_;
  uint64_t total = 0;
  for (const auto& k : keys_) total += k.size();

  for (int li = 0; li < 3; ++li) {
    LayerKind kind = static_cast<LayerKind>(li);
    LayerBuildStats& st = stats[li];
    st = LayerBuildStats();
    std::vector<uint64_t>& keys = keys_[li];
    if (keys.empty()) continue;
    std::sort(keys.begin(), keys.end());
    size_t before = keys.size();
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    st.duplicates = before - keys.size();
    st.entries = keys.size();

    LayerContent layer;
    layer.kind = kind;
    layer.filter = options.filter;
    layer.entries = keys.size();
    if (kind == LayerKind::kIp) layer.ip_prefixes = ip_prefixes_;
    // The per-probe false-positive target of this layer: n_L / U_L with U_L = k_L N / p.
    const double probes = ExpectedProbes(kind, ip_prefixes_, options.probes);
    const double eps = std::min(0.5, options.fp_rate * static_cast<double>(keys.size()) /
                                         (probes * static_cast<double>(std::max<uint64_t>(total, 1))));
    if (options.filter == FilterKind::kFingerprintArray) {
      uint64_t universe = options.universe_override[li] != 0 ? options.universe_override[li]
                                                             : UniverseFor(kind, options.fp_rate, options.probes);
      layer.universe = universe;
      layer.fingerprints.reserve(keys.size());
      for (uint64_t h : keys) layer.fingerprints.push_back(MulHi64(h, universe));
      // keys are sorted, and MulHi64 is monotone, so fingerprints are sorted: only equal neighbours to drop.
      size_t n = layer.fingerprints.size();
      layer.fingerprints.erase(std::unique(layer.fingerprints.begin(), layer.fingerprints.end()),
                               layer.fingerprints.end());
      st.collisions = n - layer.fingerprints.size();
      st.universe = universe;
      st.expected_fp_per_probe = static_cast<double>(layer.fingerprints.size()) / static_cast<double>(universe);
    } else {
      BlockedBloom bloom = BlockedBloom::ForCapacity(keys.size(), eps);
      for (uint64_t h : keys) bloom.Insert(h);
      layer.bloom_body = bloom.Serialize();
      st.expected_fp_per_probe = BlockedBloomFalsePositiveRate(keys.size(), bloom.blocks(), bloom.hashes());
    }
    content.layers.push_back(std::move(layer));
  }
  if (content.layers.empty()) return Status::InvalidArgument("the list has no valid entries");
  return content;
}

}  // namespace urlguard
