// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for DecodeRangeDiff (core/diff_codec.h, format version 2): arbitrary bytes must never
// crash the decoder; a range diff it accepts must validate, re-encode deterministically to bytes that decode
// to the same diff, and apply (MergeRangeLayerDiff through ApplyRangeLayerDiff) to a synthetic old state
// either with a strictly increasing result of exactly new_count values or with a clean error.
//
// Also decoded with a large diff's caps (docs/manifest-format.md §8.5), which must accept whatever the defaults do,
// and parsed (ParseRangeDiff, the client's form), which must accept exactly what DecodeRangeDiff accepts, refuse
// with the same code, and merge each layer from its streams to what the decoded layer gives.
// Every input is tried as is and with a valid SHA-256 trailer appended (see diff_codec_fuzz.cc for why).
// Seeds: range diff bytes without their last 32 bytes (e.g. the golden range diff of core/diff_codec_test.cc).
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
  std::fprintf(stderr, "range_diff_fuzz: %s\n", what);
  std::abort();
}

void Check(std::string_view bytes) {
  // A large diff's caps (what a manifest's large_diffs lets a reader take): never more accepted by the default
  // caps than by them, and the same diff where both accept. Their memory stays bounded by the bytes present.
  const urlguard::RangeDiffCaps large{bytes.size(), urlguard::kMaxDiffEntries * 4};
  urlguard::Result<urlguard::RangeDiff> l = urlguard::DecodeRangeDiff(bytes, large);
  urlguard::Result<urlguard::RangeDiff> d = urlguard::DecodeRangeDiff(bytes);
  if (d.ok() && (!l.ok() || !(*l == *d))) Fail("the default caps accept what a large diff's caps refuse");
  urlguard::Result<urlguard::RangeDiffStreams> p = urlguard::ParseRangeDiff(bytes);
  if (p.ok() != d.ok()) Fail("ParseRangeDiff and DecodeRangeDiff disagree");
  if (!d.ok() && p.status().code() != d.status().code()) Fail("ParseRangeDiff refuses with another code");
  if (l.ok() && !urlguard::ValidateRangeDiff(*l, large).ok()) Fail("a large diff that ValidateRangeDiff rejects");
  if (!d.ok()) return;
  if (!urlguard::ValidateRangeDiff(*d).ok()) Fail("decoded a range diff that ValidateRangeDiff rejects");
  const std::string again = urlguard::EncodeRangeDiff(*d);
  urlguard::Result<urlguard::RangeDiff> d2 = urlguard::DecodeRangeDiff(again);
  if (!d2.ok()) Fail("re-encoded range diff does not decode");
  if (!(*d2 == *d)) Fail("re-encoded range diff decodes to a different diff");
  if (urlguard::EncodeRangeDiff(*d2) != again) Fail("encoding is not deterministic");

  // Apply small layers to the state {0, 1, ..., n - 1} for n = new_count (often valid) and a few others.
  for (const urlguard::RangeLayerDiff& layer : d->layers) {
    if (layer.new_count > 4096) continue;
    for (uint64_t n : {layer.new_count, layer.new_count / 2, layer.new_count + 1}) {
      if (n > layer.universe) continue;
      std::vector<uint64_t> old_state(n);
      for (uint64_t i = 0; i < n; ++i) old_state[i] = i;
      std::vector<uint64_t> out;
      const urlguard::Status applied = urlguard::ApplyRangeLayerDiff(old_state, layer, &out);
      // The same merge from the parsed layer's streams (the layers are in the same order).
      const urlguard::RangeLayerStreams& streams = p->layers[static_cast<size_t>(&layer - d->layers.data())];
      std::vector<uint64_t> streamed;
      size_t i = 0;
      const urlguard::Status merged = urlguard::MergeRangeLayerDiff(
          streams,
          [&](uint64_t* v) {
            if (i == old_state.size()) return false;
            *v = old_state[i++];
            return true;
          },
          [&](uint64_t v) {
            streamed.push_back(v);
            return urlguard::Status::Ok();
          });
      if (merged.ok() != applied.ok() || (applied.ok() && streamed != out)) {
        Fail("the merge from the streams differs from the decoded layer's");
      }
      if (applied.ok()) {
        if (out.size() != layer.new_count) Fail("applied layer has the wrong size");
        for (size_t i = 1; i < out.size(); ++i) {
          if (out[i] <= out[i - 1]) Fail("applied layer is not strictly increasing");
        }
        if (!out.empty() && out.back() >= layer.universe) Fail("applied layer leaves the universe");
      } else if (!out.empty()) {
        Fail("a failed apply left output behind");
      }
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
