// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The local key hash: the 64-bit value `h` a snapshot layer derives its fingerprints from (fp = floor(h * U /
// 2^64), core/fingerprint_set.h) and a blocked Bloom filter its block and bits (core/blocked_bloom.h).
//
// Two kinds exist, recorded in the snapshot header (docs/snapshot-format.md, "Key hash"):
//   - kSha256Prefix (format version 1): the first 8 bytes of SHA-256(expression), big-endian.
//   - kXxh3 (format version 2, the default): XXH3-64(expression, seed kXxh3KeySeed) from Debian's
//     libxxhash (the XXH3 output is frozen since xxHash 0.8.0).
// Why XXH3: a lookup hashes every expression of a URL (6 on average, up to 30) against every list. SHA-256
// through OpenSSL costs 56-100 ns per short expression, XXH3 4-6 ns (bench/lookup_bench, BM_KeyHash). The local
// filter only needs a well-spread 64-bit value; it was never a security boundary, because a false positive is
// already cheap to make (about U/n ~ 10^4 random tries at the default sizing). A hit is then decided by the
// verify server with the full SHA-256 (the verify protocol sends 4-byte SHA-256 prefixes, computed only for
// the expressions that hit locally). docs/threat-model.md has the argument.
//
// Why one documented constant seed and not one per list: one hash per expression then serves every open list
// of that kind. A per-list secret seed would not be secret (it ships in every client).
//
// Changes the on-disk format: a new kind needs a new snapshot format version (core/snapshot.h) and golden test.
// Thread safety: pure functions, allocation-free.
#ifndef URLGUARD_CORE_KEY_HASH_H_
#define URLGUARD_CORE_KEY_HASH_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace urlguard {

enum class KeyHashKind : uint8_t { kSha256Prefix = 0, kXxh3 = 1 };

// The seed of kXxh3 keys: the ASCII bytes "urlguard" read big-endian.
constexpr uint64_t kXxh3KeySeed = 0x75726c6775617264ull;

const char* KeyHashKindName(KeyHashKind kind);  // "sha256-prefix", "xxh3-64"

// XXH3-64 of `s` with seed kXxh3KeySeed.
uint64_t Xxh3Key(const void* data, size_t size);
inline uint64_t Xxh3Key(std::string_view s) { return Xxh3Key(s.data(), s.size()); }

// keys[i] = Xxh3Key(base + begin[i], end[i] - begin[i]) for i < n (begin[i] <= end[i]): the keys of n
// substrings of one buffer, in one call, so that XXH3's short-input code runs inline in one loop (a lookup
// hashes about 6 expressions, all substrings of one string: url/url_canon.h, ExpressionList).
void Xxh3KeysOfSubstrings(const char* base, const uint32_t* begin, const uint32_t* end, size_t n,
                          uint64_t* keys);

// The first 8 bytes of SHA-256(s), big-endian.
uint64_t Sha256PrefixKey(std::string_view s);

// The key hash of `expression` under `kind`.
inline uint64_t KeyHash(KeyHashKind kind, std::string_view expression) {
  return kind == KeyHashKind::kXxh3 ? Xxh3Key(expression) : Sha256PrefixKey(expression);
}

}  // namespace urlguard

#endif  // URLGUARD_CORE_KEY_HASH_H_
