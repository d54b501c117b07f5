// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Resident-memory measurements of the calling process, from /proc/self/status (Linux), for the tests and
// benchmarks that hold a memory bound (a client update of a list costs at most the list file's size above
// idle: sync/apply_test.cc, bench/update_bench.cc). RSS counts heap pages and the touched pages of every file
// mapping, which is what an update streaming through a mapped list would grow.
#ifndef URLGUARD_TESTS_PEAK_RSS_H_
#define URLGUARD_TESTS_PEAK_RSS_H_

#include <cstdint>
#include <cstdio>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace urlguard::testing {

// Sanitizer runtimes keep shadow memory for what the program touches (ThreadSanitizer: several times every byte
// read, mapped files included) and a quarantine of freed heap: RSS then measures the tool, not the code.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kRssMeasurable = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kRssMeasurable = false;
#else
inline constexpr bool kRssMeasurable = true;
#endif
#else
inline constexpr bool kRssMeasurable = true;
#endif

// A "Vm...:" field of /proc/self/status in bytes, or -1 when it cannot be read.
inline int64_t ProcStatusBytes(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kb = -1;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, len) == 0 && line[len] == ':') {
      long long v = 0;
      if (std::sscanf(line + len + 1, "%lld", &v) == 1) kb = v;
      break;
    }
  }
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

inline int64_t CurrentRssBytes() { return ProcStatusBytes("VmRSS"); }
inline int64_t PeakRssBytes() { return ProcStatusBytes("VmHWM"); }

// Returns free heap pages to the kernel (glibc malloc_trim), so that memory a measured step allocates shows
// up as growth instead of reusing pages an earlier step left resident. Call before taking a baseline.
inline void TrimHeap() {
#if defined(__GLIBC__)
  (void)malloc_trim(0);
#endif
}

// Resets the peak (VmHWM) to the current RSS ("5" to /proc/self/clear_refs, Linux 4.0+). False when the
// kernel does not allow it; a caller then cannot measure a peak.
inline bool ResetPeakRss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_PEAK_RSS_H_
