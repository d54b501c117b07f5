// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// SnapshotView::Open on arbitrary bytes (with and without checksum verification), then probes of every layer:
// whatever passes Open must answer lookups without reading out of bounds (ASan watches).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/key_hash.h"
#include "core/snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Mapped files are page-aligned; give the parser an 8-byte aligned copy of exactly `size` bytes.
  std::vector<uint64_t> aligned((size + 7) / 8 + 1);
  std::memcpy(aligned.data(), data, size);
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(aligned.data());
  for (bool verify : {false, true}) {
    auto view = urlguard::SnapshotView::Open(bytes, size, verify);
    if (!view.ok()) continue;
    for (int k = 0; k < 3; ++k) {
      const urlguard::LayerView* layer = view->layer(static_cast<urlguard::LayerKind>(k));
      if (layer == nullptr) continue;
      for (uint64_t i = 0; i < 64; ++i) {
        const uint64_t key = urlguard::Xxh3Key(&i, sizeof i);
        (void)layer->MayContain(key);
        layer->Prefetch(key);
      }
      if (layer->filter == urlguard::FilterKind::kFingerprintArray) {
        std::vector<uint64_t> all;
        layer->fingerprints.Decode(&all);
        if (all.size() > layer->fingerprints.size()) __builtin_trap();
        for (uint64_t fp : all) (void)layer->fingerprints.ContainsFingerprint(fp);
      }
    }
  }
  return 0;
}
