// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/key_hash.h"

// Header-only use of Debian's libxxhash-dev: the short-input paths of XXH3 inline into Xxh3Key.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/sha256.h"

static_assert(XXH_VERSION_NUMBER >= 800, "XXH3's output is frozen from xxHash 0.8.0 on");

namespace urlguard {

const char* KeyHashKindName(KeyHashKind kind) {
  switch (kind) {
    case KeyHashKind::kSha256Prefix: return "sha256-prefix";
    case KeyHashKind::kXxh3: return "xxh3-64";
  }
  return "unknown";
}

uint64_t Xxh3Key(const void* data, size_t size) { return XXH3_64bits_withSeed(data, size, kXxh3KeySeed); }

// flatten: XXH3's dispatch on the length and its short-input code inline into the loop (GCC otherwise keeps
// one out-of-line copy of XXH3_64bits_withSeed and calls it per key).
__attribute__((flatten)) void Xxh3KeysOfSubstrings(const char* base, const uint32_t* begin, const uint32_t* end,
                                                   size_t n, uint64_t* keys) {
  for (size_t i = 0; i < n; ++i) {
    keys[i] = XXH3_64bits_withSeed(base + begin[i], end[i] - begin[i], kXxh3KeySeed);
  }
}

uint64_t Sha256PrefixKey(std::string_view s) { return DigestPrefix64(Sha256(s)); }

}  // namespace urlguard
