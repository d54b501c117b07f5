// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/sha256.h"

// See sha256.h for why the deprecated low-level interface is used.
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#include <cstring>

#include "core/ascii.h"

namespace urlguard {

static_assert(sizeof(SHA256_CTX) <= 112, "grow Sha256Hasher::ctx_");

Sha256Digest Sha256(const void* data, size_t size) {
  Sha256Digest out;
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data, size);
  SHA256_Final(out.data(), &ctx);
  return out;
}

Sha256Hasher::Sha256Hasher() { SHA256_Init(reinterpret_cast<SHA256_CTX*>(ctx_)); }

void Sha256Hasher::Update(const void* data, size_t size) {
  SHA256_Update(reinterpret_cast<SHA256_CTX*>(ctx_), data, size);
}

Sha256Digest Sha256Hasher::Finish() {
  Sha256Digest out;
  SHA256_Final(out.data(), reinterpret_cast<SHA256_CTX*>(ctx_));
  return out;
}

void AppendHex(const uint8_t* bytes, size_t size, std::string* out) {
  static const char kDigits[] = "0123456789abcdef";
  const size_t at = out->size();
  out->resize(at + size * 2);
  char* hex = out->data() + at;
  for (size_t i = 0; i < size; ++i) {
    hex[2 * i] = kDigits[bytes[i] >> 4];
    hex[2 * i + 1] = kDigits[bytes[i] & 15];
  }
}

std::string ToHex(const uint8_t* bytes, size_t size) {
  std::string out;
  AppendHex(bytes, size, &out);
  return out;
}

bool FromHex(std::string_view hex, uint8_t* out, size_t size) {
  if (hex.size() != size * 2) return false;
  for (size_t i = 0; i < size; ++i) {
    int hi = AsciiHexDigitValue(hex[2 * i]);
    int lo = AsciiHexDigitValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace urlguard
