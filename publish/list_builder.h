// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// ListBuilder: turns list entries (text) into a snapshot's layers.
//
// Sizing (docs/architecture.md §2, §4, docs/scale.md §3). The target is a per-URL false-positive rate p. The sizing
// assumes a URL probes each layer L k_L times (BuildOptions::probes: by default the Safe Browsing maximum, 5 domain
// and 25 url probes, core/probe_model.h, so the target holds for every URL), and a probe of a layer holding n_L fingerprints in universe U_L hits
// falsely with probability n_L / U_L, so the per-URL rate is sum_L k_L n_L / U_L. Minimising the total size
// sum_L n_L log2(U_L / n_L) under that constraint (Lagrange) gives U_L = k_L * N / p with N the total entry
// count: every layer gets the same "false hits per probe per entry", and big layers are not starved.
// The universes are exact integers, not powers of two, so no bits are lost to rounding.
//
// Thread safety: not thread-safe; one builder per thread.
#ifndef URLGUARD_PUBLISH_LIST_BUILDER_H_
#define URLGUARD_PUBLISH_LIST_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "url/entry.h"
#include "core/key_hash.h"
#include "core/probe_model.h"
#include "core/snapshot.h"
#include "urlguard/status.h"

namespace urlguard {

// ProbeModel, kSizingProbeModel, kLegacyProbeModel: core/probe_model.h.

struct BuildOptions {
  std::string list_name;
  uint64_t version = 1;
  int64_t created_unix = 0;
  double fp_rate = 0.001;  // per-URL false-positive target, 0 < p < 1
  // The probes per URL the target is promised for. kLegacyProbeModel only for benchmarks' baselines.
  ProbeModel probes = kSizingProbeModel;
  FilterKind filter = FilterKind::kFingerprintArray;
  // When nonzero, use these universes instead of sizing (the publisher keeps a list's universes stable across
  // versions so diffs stay small). Index by LayerKind.
  uint64_t universe_override[3] = {0, 0, 0};
};

struct LayerBuildStats {
  uint64_t entries = 0;     // unique keys
  uint64_t duplicates = 0;  // entries whose key was already present
  uint64_t universe = 0;    // fingerprint arrays
  uint64_t collisions = 0;  // distinct keys that share a fingerprint (harmless: still no false negative)
  double expected_fp_per_probe = 0;
};

// The universe for `layer` of a list of `total_entries` keys over all layers (U_L = k_L N / p, see above), given
// the ip layer's prefix lengths. Never below 1, never above 2^63. The streaming publisher sizes with this.
uint64_t UniverseForCount(LayerKind layer, uint64_t total_entries, const IpPrefixLengths& ip_prefixes, double fp_rate,
                          const ProbeModel& model = kSizingProbeModel);

class ListBuilder {
 public:
  // Keys are hashed with `key_hash` (core/key_hash.h); Finish() records it in the content, which decides the
  // snapshot format version. kXxh3 unless a list must stay readable by clients that only read version 1.
  explicit ListBuilder(KeyHashKind key_hash = KeyHashKind::kXxh3) : key_hash_(key_hash) {}

  // Adds one entry (see url/entry.h for how text maps to a layer). kInvalidArgument with the reason when the
  // text is not a URL, domain, address or range; the builder is unchanged then.
  Status Add(std::string_view entry);
  // Adds a computed key: the key hash of `key.expression`.
  void AddKey(const EntryKey& key);

  uint64_t added() const { return added_; }
  KeyHashKind key_hash() const { return key_hash_; }

  // Sizes and builds the layers. Fails with kInvalidArgument for bad options (list name, fp rate).
  Result<SnapshotContent> Finish(const BuildOptions& options, LayerBuildStats stats[3]);

  // The universe Finish would choose for `layer` given the current contents.
  uint64_t UniverseFor(LayerKind layer, double fp_rate, const ProbeModel& model = kSizingProbeModel) const;

  // The 64-bit key hashes added to `layer`, sorted and without duplicates once Finish() has run (benchmarks
  // use them as the ground truth of what is listed).
  const std::vector<uint64_t>& keys(LayerKind layer) const { return keys_[static_cast<size_t>(layer)]; }

 private:
  KeyHashKind key_hash_;
  std::vector<uint64_t> keys_[3];  // the 64-bit key hash of each entry: all that either filter uses
  IpPrefixLengths ip_prefixes_;
  uint64_t added_ = 0;
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_LIST_BUILDER_H_
