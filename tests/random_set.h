// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// RandomSet: the random fingerprint sets the filter, diff and apply tests and bench/update_bench build,
// written once so they all draw the same sets from the same seed. Header-only, for tests and benchmarks.
#ifndef URLGUARD_TESTS_RANDOM_SET_H_
#define URLGUARD_TESTS_RANDOM_SET_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace urlguard::testing {

// `n` distinct values in [0, universe), sorted, drawn from `rng`: the first n distinct values of rng() %
// universe (draws that repeat an earlier value are skipped), so the set depends only on the generator's
// state. Precondition: n <= universe (otherwise it never returns).
inline std::vector<uint64_t> RandomSet(std::mt19937_64& rng, uint64_t n, uint64_t universe) {
  std::vector<uint64_t> v;
  v.reserve(n);
  // Drawing the missing count, then sorting and dropping repeats, gives the set of the first n distinct draws
  // (a round ends at n only when its every draw was new) without a tree node per value.
  while (v.size() < n) {
    while (v.size() < n) v.push_back(rng() % universe);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return v;
}

// The same from a fresh std::mt19937_64 seeded with `seed`.
inline std::vector<uint64_t> RandomSet(uint64_t n, uint64_t universe, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return RandomSet(rng, n, universe);
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_RANDOM_SET_H_
