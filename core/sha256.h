// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// SHA-256 through OpenSSL's libcrypto (which uses SHA-NI or AVX2 where the CPU has them).
//
// Why the low-level SHA256_* calls and not EVP: they are deprecated in OpenSSL 3 but still shipped and
// dispatch straight to the same assembly. Measured on this project's CI machine for a 29-byte expression:
// SHA256_Init/Update/Final 56 ns, EVP with a reused context and pre-fetched EVP_MD 97 ns, EVP_Digest
// 152 ns, one-shot SHA256() 356 ns. A URL hashes up to 30 expressions, so this is the single largest
// cost of a lookup. Everything else (streaming over files) uses the same incremental class.
#ifndef URLGUARD_CORE_SHA256_H_
#define URLGUARD_CORE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace urlguard {

using Sha256Digest = std::array<uint8_t, 32>;

// Hashes `data`. Thread-safe, allocation-free.
Sha256Digest Sha256(const void* data, size_t size);
inline Sha256Digest Sha256(std::string_view s) { return Sha256(s.data(), s.size()); }

// Incremental hashing for large inputs. Not thread-safe (one object per thread).
class Sha256Hasher {
 public:
  Sha256Hasher();
  void Update(const void* data, size_t size);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  Sha256Digest Finish();  // the object must not be used afterwards

 private:
  alignas(8) unsigned char ctx_[112];  // SHA256_CTX, kept opaque here (static_assert in sha256.cc)
};

// Lower-case hex of `bytes`, appended to `out` (no temporary string: the verify answer's hot path).
void AppendHex(const uint8_t* bytes, size_t size, std::string* out);
// Lower-case hex of `bytes`.
std::string ToHex(const uint8_t* bytes, size_t size);
inline std::string ToHex(const Sha256Digest& d) { return ToHex(d.data(), d.size()); }

// Parses exactly 2*size lower- or upper-case hex digits into `out`. False on any other input.
bool FromHex(std::string_view hex, uint8_t* out, size_t size);

// The first 8 bytes of a digest as a big-endian integer: the value filters derive fingerprints from.
inline uint64_t DigestPrefix64(const Sha256Digest& d) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[i];
  return v;
}

// The first 4 bytes of a digest as a big-endian integer: the prefix the verification API is asked with.
inline uint32_t DigestPrefix32(const Sha256Digest& d) {
  return (uint32_t{d[0]} << 24) | (uint32_t{d[1]} << 16) | (uint32_t{d[2]} << 8) | uint32_t{d[3]};
}

}  // namespace urlguard

#endif  // URLGUARD_CORE_SHA256_H_
