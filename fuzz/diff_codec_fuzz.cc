// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for DecodeDiff (core/diff_codec.h): arbitrary bytes must never crash the decoder, and a
// diff it accepts must re-encode to bytes that decode to the same diff.
//
// Every input is tried twice: as is, and with a valid SHA-256 trailer appended. A random trailer almost
// never matches, so without the second form the fuzzer would only ever exercise the checks up to the
// checksum; with it, the header, count and Rice stream parsers behind the checksum get the mutations.
// Seeds: diff bytes without their last 32 bytes (e.g. the golden diff of core/diff_codec_test.cc).
// Accepted diffs with small layers are also applied (ApplyLayerDiff) to a synthetic old state.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/diff_codec.h"
#include "core/sha256.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "diff_codec_fuzz: %s\n", what);
  std::abort();
}

void Check(std::string_view bytes) {
  urlguard::Result<urlguard::Diff> d = urlguard::DecodeDiff(bytes);
  if (!d.ok()) return;
  if (!urlguard::ValidateDiff(*d).ok()) Fail("decoded a diff that ValidateDiff rejects");
  const std::string again = urlguard::EncodeDiff(*d);
  urlguard::Result<urlguard::Diff> d2 = urlguard::DecodeDiff(again);
  if (!d2.ok()) Fail("re-encoded diff does not decode");
  if (!(*d2 == *d)) Fail("re-encoded diff decodes to a different diff");
  if (urlguard::EncodeDiff(*d2) != again) Fail("encoding is not deterministic");

  // Apply small layers to the state {0, 1, ..., old_count - 1} (valid: old_count <= universe).
  for (const urlguard::LayerDiff& layer : d->layers) {
    if (layer.old_count > 4096) continue;
    std::vector<uint64_t> old_state(layer.old_count);
    for (uint64_t i = 0; i < layer.old_count; ++i) old_state[i] = i;
    std::vector<uint64_t> out;
    if (urlguard::ApplyLayerDiff(old_state, layer, &out).ok()) {
      if (out.size() != layer.new_count) Fail("applied layer has the wrong size");
      for (size_t i = 1; i < out.size(); ++i) {
        if (out[i] <= out[i - 1]) Fail("applied layer is not strictly increasing");
      }
      if (!out.empty() && out.back() >= layer.universe) Fail("applied layer leaves the universe");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Check(input);
  std::string sealed(input);
  const urlguard::Sha256Digest digest = urlguard::Sha256(input);
  sealed.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  Check(sealed);
  return 0;
}
