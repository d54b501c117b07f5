// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// diff_size_bench: how many bytes a realistic update costs on the wire (docs/architecture.md §5's budget).
//
// Not a Google Benchmark: sizes are deterministic, so this is a plain program. It builds a 10 M-fingerprint
// layer with U = 10 M * 2^14 (~2^37.3, a false-positive rate of 2^-14 per probe) from a fixed seed, removes
// 25 k entries and adds 25 k new ones, encodes the diff (core/diff_codec.h), deflates it
// (format/deflate.h) and prints the sizes next to the formula of docs/architecture.md §5
//   added:   log2(U / added) + 1.5 bits each,   removed: log2(n / removed) + 1.5 bits each,
// and, for scale, the full snapshot as 8-byte values and as ideal Elias-Fano (n * (2 + log2(U / n)) bits).
// It also decodes and applies the diff and exits non-zero if the result is not the new set.
//
// Usage: diff_size_bench [n] [changes_each]   (defaults 10000000 25000)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/byte_io.h"
#include "core/diff_codec.h"
#include "format/deflate.h"

namespace urlguard {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// n distinct fingerprints floor(h * U / 2^64) of uniform 64-bit hashes h, sorted.
std::vector<uint64_t> MakeSet(size_t n, uint64_t universe, std::mt19937_64* rng) {
  std::vector<uint64_t> v;
  v.reserve(n);
  while (v.size() < n) {
    while (v.size() < n) v.push_back(MulHi64((*rng)(), universe));
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return v;
}

int Run(size_t n, size_t changes_each) {
  const uint64_t universe = uint64_t{n} << 14;
  std::mt19937_64 rng(20240601);
  const std::vector<uint64_t> old_set = MakeSet(n, universe, &rng);

  // Remove `changes_each` distinct random positions; add `changes_each` values not in the old set.
  std::vector<uint8_t> drop(n, 0);
  for (size_t removed = 0; removed < changes_each;) {
    const size_t pos = rng() % n;
    if (!drop[pos]) {
      drop[pos] = 1;
      ++removed;
    }
  }
  std::vector<uint64_t> additions;
  while (additions.size() < changes_each) {
    const uint64_t v = MulHi64(rng(), universe);
    if (std::binary_search(old_set.begin(), old_set.end(), v)) continue;
    additions.push_back(v);
    std::sort(additions.begin(), additions.end());
    additions.erase(std::unique(additions.begin(), additions.end()), additions.end());
  }
  std::vector<uint64_t> new_set;
  new_set.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!drop[i]) new_set.push_back(old_set[i]);
  }
  new_set.insert(new_set.end(), additions.begin(), additions.end());
  std::sort(new_set.begin(), new_set.end());

  Diff diff;
  diff.list_name = "phishing";
  diff.from_version = 1000;
  diff.to_version = 1001;
  const auto t0 = Clock::now();
  diff.layers.push_back(MakeLayerDiff(LayerKind::kUrl, universe, old_set, new_set));
  const auto t1 = Clock::now();
  const std::string raw = EncodeDiff(diff);
  const auto t2 = Clock::now();
  const std::string deflated = DeflateBytes(raw, 9);
  const auto t3 = Clock::now();
  Result<Diff> decoded = DecodeDiff(raw);
  const auto t4 = Clock::now();
  if (!decoded.ok()) {
    std::fprintf(stderr, "decode failed: %s\n", decoded.status().ToString().c_str());
    return 1;
  }
  std::vector<uint64_t> applied;
  const Status st = ApplyLayerDiff(old_set, decoded->layers[0], &applied);
  const auto t5 = Clock::now();
  if (!st.ok() || applied != new_set) {
    std::fprintf(stderr, "apply failed or gave the wrong set: %s\n", st.ToString().c_str());
    return 1;
  }

  const LayerDiff& d = diff.layers[0];
  const double changed = static_cast<double>(d.added.size() + d.removed_positions.size());
  const double added_bits =
      d.added.size() * (std::log2(static_cast<double>(universe) / static_cast<double>(d.added.size())) + 1.5);
  const double removed_bits =
      d.removed_positions.size() *
      (std::log2(static_cast<double>(n) / static_cast<double>(d.removed_positions.size())) + 1.5);
  const double formula_bytes = (added_bits + removed_bits) / 8;
  const double snapshot_u64 = 8.0 * static_cast<double>(n);
  const double snapshot_ef =
      static_cast<double>(n) * (2 + std::log2(static_cast<double>(universe) / static_cast<double>(n))) / 8;

  std::printf("diff_size_bench: n = %zu fingerprints, U = %llu (log2 U = %.2f), %zu removed + %zu added\n", n,
              static_cast<unsigned long long>(universe), std::log2(static_cast<double>(universe)),
              d.removed_positions.size(), d.added.size());
  std::printf("  raw diff                 %10zu bytes   %.3f bytes per changed entry\n", raw.size(),
              raw.size() / changed);
  std::printf("  deflated diff (level 9)  %10zu bytes   %.3f bytes per changed entry\n", deflated.size(),
              deflated.size() / changed);
  std::printf(
      "  formula (ARCH §5)        %10.0f bytes   %.3f bytes per changed entry  (raw / formula = %.4f)\n",
      formula_bytes, formula_bytes / changed, raw.size() / formula_bytes);
  std::printf("    added:   %.2f bits each predicted;  removed: %.2f bits each predicted\n",
              added_bits / d.added.size(), removed_bits / d.removed_positions.size());
  std::printf("  budget                   <= 2.5 bytes per changed entry: %s\n",
              raw.size() / changed <= 2.5 ? "met" : "MISSED");
  std::printf("  full snapshot, u64 each  %10.0f bytes   (%.0fx the raw diff)\n", snapshot_u64,
              snapshot_u64 / raw.size());
  std::printf("  full snapshot, ideal EF  %10.0f bytes   (%.2f bits per entry, %.0fx the raw diff)\n",
              snapshot_ef, snapshot_ef * 8 / n, snapshot_ef / raw.size());
  std::printf(
      "  time (informational): make %.1f ms, encode %.1f ms, deflate %.1f ms, decode %.1f ms, "
      "apply %.1f ms\n",
      Ms(t0, t1), Ms(t1, t2), Ms(t2, t3), Ms(t3, t4), Ms(t4, t5));
  return 0;
}

}  // namespace
}  // namespace urlguard

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000000;
  const size_t changes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 25000;
  if (n == 0 || changes == 0 || changes > n / 2 || changes > urlguard::kMaxDiffEntries) {
    std::fprintf(stderr, "usage: diff_size_bench [n] [changes_each], 0 < changes_each <= n / 2\n");
    return 2;
  }
  return urlguard::Run(n, changes);
}
