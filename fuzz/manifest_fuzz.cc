// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseManifest (format/manifest.h): arbitrary bytes must never crash the parser or let an
// exception escape, every failure is one of the documented codes, and an accepted manifest is valid,
// re-serializes to canonical bytes that parse back to the same manifest, and serializing that again gives the
// same bytes (the canonical form is a fixed point).
// Seeds: fixtures/golden/manifest_v1.json and manifest_v2.json (format 2: checkpoint, range diffs, set
// digest); dictionary: fuzz/manifest_fuzz.dict (the member names).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "format/manifest.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "manifest_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  urlguard::Result<urlguard::Manifest> m = urlguard::ParseManifest(input);
  if (!m.ok()) {
    const urlguard::StatusCode code = m.status().code();
    if (code != urlguard::StatusCode::kCorruption && code != urlguard::StatusCode::kResourceExhausted) {
      Fail("unexpected status code");
    }
    if (m.status().message().empty()) Fail("failure without a message");
    return 0;
  }
  if (!urlguard::ValidateManifest(*m).ok()) Fail("parsed a manifest that ValidateManifest refuses");
  const std::string canonical = urlguard::SerializeManifest(*m);  // aborts if invalid
  urlguard::Result<urlguard::Manifest> again = urlguard::ParseManifest(canonical);
  if (!again.ok()) Fail("canonical bytes do not parse");
  if (!(*again == *m)) Fail("canonical bytes parse to a different manifest");
  if (urlguard::SerializeManifest(*again) != canonical) Fail("canonical form is not a fixed point");
  if (canonical.size() > urlguard::kMaxManifestBytes) Fail("canonical form exceeds the size cap");
  return 0;
}
