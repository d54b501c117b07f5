// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Little-endian loads and stores on byte buffers (every file format of urlguard is little-endian). The
// loads use memcpy, so they are safe on unaligned data and compile to one instruction on x86-64/ARM64.
#ifndef URLGUARD_CORE_BYTE_IO_H_
#define URLGUARD_CORE_BYTE_IO_H_

#include <cstdint>
#include <cstring>
#include <string>

namespace urlguard {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "urlguard's mapped formats assume a little-endian CPU");

inline uint16_t LoadLE16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t LoadLE32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t LoadLE64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void StoreLE32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void StoreLE64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

inline void AppendLE16(std::string* s, uint16_t v) { s->append(reinterpret_cast<const char*>(&v), 2); }
inline void AppendLE32(std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), 4); }
inline void AppendLE64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }
inline void PadTo(std::string* s, size_t alignment) {
  while (s->size() % alignment != 0) s->push_back('\0');
}

// floor(h * n / 2^64): maps a uniform 64-bit hash onto [0, n) preserving order (Lemire's "fastrange").
inline uint64_t MulHi64(uint64_t h, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

}  // namespace urlguard

#endif  // URLGUARD_CORE_BYTE_IO_H_
