// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for SeenFilter::Deserialize (publish/seen_filter.h, docs/seen-filter-format.md): arbitrary
// bytes must never crash the parser, and a filter it accepts must re-serialize to exactly the input bytes and
// keep working (Query, Record, growth) without tripping an assertion.
//
// Every input is tried twice: as is, and with a valid SHA-256 trailer appended. A random trailer almost never
// matches, so without the second form the fuzzer would only ever exercise the checks up to the checksum; with
// it, the header, stage and sketch checks behind the checksum get the mutations.
// Seeds: fixtures/golden/seen_filter_v1.bin without its last 32 bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/sha256.h"
#include "publish/seen_filter.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "seen_filter_fuzz: %s\n", what);
  std::abort();
}

// Keeps each input cheap: the parser accepts up to kMaxSeenFilterBytes, but exercising Record on a large
// accepted filter only repeats work.
constexpr size_t kMaxExercisedBytes = size_t{1} << 20;

void Check(std::string_view bytes) {
  urlguard::Result<urlguard::SeenFilter> f = urlguard::SeenFilter::Deserialize(bytes);
  if (!f.ok()) {
    if (f.status().code() != urlguard::StatusCode::kCorruption &&
        f.status().code() != urlguard::StatusCode::kResourceExhausted) {
      Fail("refused with a code other than corruption / resource_exhausted");
    }
    return;
  }
  const std::string again = f->Serialize();
  if (again != bytes) Fail("accepted bytes do not re-serialize to themselves");
  if (again.size() != f->serialized_size()) Fail("serialized_size() disagrees with Serialize()");
  if (bytes.size() > kMaxExercisedBytes) return;

  // Keys taken from the input: Record them twice and check the contract each time.
  uint64_t key = 0x9e3779b97f4a7c15ull ^ bytes.size();
  for (size_t i = 0; i < 64; ++i) {
    key = key * 6364136223846793005ull + static_cast<uint8_t>(bytes[i % bytes.size()]);
    const uint64_t before_total = f->total_sightings();
    (void)f->Record(key);
    const urlguard::Sighting s = f->Query(key);
    if (!s.seen_before || s.approx_count_before < 1) Fail("a recorded key reads as never seen");
    const uint64_t expected_total =
        before_total == UINT64_MAX ? before_total : before_total + 1;  // saturates
    if (f->total_sightings() != expected_total) Fail("Record did not count one sighting");
    if (f->distinct_estimate() > f->total_sightings()) Fail("more distinct keys than sightings");
  }
  const std::string grown = f->Serialize();
  urlguard::Result<urlguard::SeenFilter> g = urlguard::SeenFilter::Deserialize(grown);
  if (!g.ok()) Fail("a filter that was used does not deserialize");
  if (g->Serialize() != grown) Fail("a used filter does not round-trip");
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
