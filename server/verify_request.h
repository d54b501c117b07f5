// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Parsing of verify API requests (docs/sync-protocol.md, docs/verify-server.md): the POST body and the GET
// "prefixes" list. Pure functions on untrusted bytes (fuzzed by fuzz/verify_request_fuzz.cc).
#ifndef URLGUARD_SERVER_VERIFY_REQUEST_H_
#define URLGUARD_SERVER_VERIFY_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// Verify API limits (docs/sync-protocol.md).
constexpr size_t kMaxVerifyPrefixes = 30;
constexpr size_t kVerifyPrefixHexDigits = 8;
// The largest max_body_bytes a server accepts, and what ParseVerifyRequest refuses past.
constexpr size_t kMaxVerifyBodyBytes = size_t{1} << 20;
constexpr size_t kMinVerifyBodyBytes = 256;

// The prefixes of one request, without allocation.
struct VerifyPrefixes {
  uint32_t values[kMaxVerifyPrefixes];
  size_t count = 0;
  std::span<const uint32_t> span() const { return {values, count}; }
};

// ParseVerifyRequest into `*out` (count 0 on failure): the server's hot path. Same results and failures.
Status ParseVerifyRequestInto(std::string_view body, VerifyPrefixes* out);

// Parses a verify request body: a JSON object whose "prefixes" member is an array of 1 to kMaxVerifyPrefixes
// strings of exactly 8 hex digits (either case); other members are ignored. Returns the prefixes as
// big-endian integers, in request order, duplicates kept. Failures: kResourceExhausted (more than
// kMaxVerifyPrefixes prefixes, or a body over kMaxVerifyBodyBytes), kInvalidArgument (anything else
// malformed; the message names the problem, never echoes input). Pure; never throws; safe on arbitrary bytes.
Result<std::vector<uint32_t>> ParseVerifyRequest(std::string_view body);

// The GET form: "a1b2c3d4,00ff00ff" (comma-separated, no spaces). Same results and failures.
Result<std::vector<uint32_t>> ParseVerifyPrefixList(std::string_view list);

}  // namespace urlguard

#endif  // URLGUARD_SERVER_VERIFY_REQUEST_H_
