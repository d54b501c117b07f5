// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Measures the largest single heap allocation a piece of code makes, so a test can prove that a size
// read from untrusted bytes never reaches an allocation before it is checked against its cap.
//
// Include this header in exactly ONE translation unit of a test executable: it replaces the global
// operator new/delete (a replacement may not be inline, so a second includer would not link).
#ifndef URLGUARD_TESTS_LARGEST_ALLOC_H_
#define URLGUARD_TESTS_LARGEST_ALLOC_H_

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>

namespace urlguard::testing {

inline std::atomic<bool> g_track_allocations{false};
inline std::atomic<size_t> g_largest_allocation{0};

// Returns fn()'s result and stores in *largest the size of the largest single operator new call fn()
// made (0 if none). Not thread-safe: allocations by other threads during fn() are counted too.
template <typename Fn>
auto TrackLargestAllocation(size_t* largest, Fn&& fn) {
  g_largest_allocation = 0;
  g_track_allocations = true;
  auto result = std::forward<Fn>(fn)();
  g_track_allocations = false;
  *largest = g_largest_allocation.load();
  return result;
}

}  // namespace urlguard::testing

// The replaced operator new/delete pair uses malloc/free; GCC cannot see that they match.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(size_t size) {
  if (urlguard::testing::g_track_allocations.load(std::memory_order_relaxed)) {
    size_t prev = urlguard::testing::g_largest_allocation.load(std::memory_order_relaxed);
    while (size > prev && !urlguard::testing::g_largest_allocation.compare_exchange_weak(prev, size)) {
    }
  }
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

#endif  // URLGUARD_TESTS_LARGEST_ALLOC_H_
