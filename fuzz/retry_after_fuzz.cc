// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseRetryAfter (sync/fetcher.h), which reads a header value straight from the
// network: arbitrary bytes (and an arbitrary "now") must never crash it, and the result is -1 or within [0,
// kMaxRetryAfterSeconds]. A value of digits only is delta-seconds, exactly (or the cap). Input: 8 bytes of
// "now" (little-endian), then the header value. Seeds: "120", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday,
// 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994".
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "sync/fetcher.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "retry_after_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int64_t now = 1700000000;
  if (size >= sizeof(now)) {
    uint64_t bits = 0;
    for (size_t i = 0; i < sizeof(bits); ++i) bits |= uint64_t{data[i]} << (8 * i);
    std::memcpy(&now, &bits, sizeof(now));
    data += sizeof(now);
    size -= sizeof(now);
  }
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  const int64_t seconds = urlguard::ParseRetryAfter(value, now);
  if (seconds != -1 && (seconds < 0 || seconds > urlguard::kMaxRetryAfterSeconds))
    Fail("result out of range");
  if (!value.empty() && value.size() <= 5 &&
      value.find_first_not_of("0123456789") == std::string_view::npos) {
    int64_t expected = 0;
    for (char c : value) expected = expected * 10 + (c - '0');
    if (expected > urlguard::kMaxRetryAfterSeconds) expected = urlguard::kMaxRetryAfterSeconds;
    if (seconds != expected) Fail("delta-seconds misread");
  }
  return 0;
}
