// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The three layers of a list (docs/architecture.md §2). The numeric values are stored in snapshot and diff files.
// Changes the on-disk format: never renumber.
#ifndef URLGUARD_CORE_LAYER_KIND_H_
#define URLGUARD_CORE_LAYER_KIND_H_

#include <cstdint>

namespace urlguard {

enum class LayerKind : uint8_t { kDomain = 0, kUrl = 1, kIp = 2 };

// Number of layer kinds; valid kinds are exactly the values 0 .. kLayerKindCount - 1.
constexpr int kLayerKindCount = 3;

// True when `value` (a byte read from a file) names a LayerKind.
constexpr bool IsValidLayerKind(uint8_t value) { return value < kLayerKindCount; }

// "domain", "url", "ip"; "invalid" for a value outside the enum. Never null.
constexpr const char* LayerKindName(LayerKind kind) {
  switch (kind) {
    case LayerKind::kDomain:
      return "domain";
    case LayerKind::kUrl:
      return "url";
    case LayerKind::kIp:
      return "ip";
  }
  return "invalid";
}

}  // namespace urlguard

#endif  // URLGUARD_CORE_LAYER_KIND_H_
