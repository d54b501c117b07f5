// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the two parsers of the publishing loop (publish/publish_loop.h): ParseClaimMarkerName,
// which reads file names in SPOOL/claimed/ (anyone who can write to the spool chooses them), and
// ParseCommittedVersion, which reads the public manifest (and falls back to a plain scan when ParseManifest refuses
// it). Arbitrary bytes must never crash either; a marker that parses must print back as the same name; a version
// that parses is >= 1 with a non-negative creation time. Input: the first byte picks the parser, the rest is the
// name or the manifest. Seeds: "\x00target-42", "\x01" + a manifest from fixtures/golden.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "publish/publish_loop.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "publish_loop_spool_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] & 1) {
    auto v = urlguard::ParseCommittedVersion(text);
    if (v.ok() && (v->version == 0 || v->created_unix < 0)) Fail("a parsed version out of range");
  } else {
    auto v = urlguard::ParseClaimMarkerName(text);
    if (v && urlguard::ClaimMarkerName(*v) != text) Fail("a marker that does not print back as itself");
  }
  return 0;
}
