// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// CPU clocks for the benchmarks. The machine is shared, so every bench reports CPU time beside wall time: the
// process's (all threads, user + system) or the calling thread's, in seconds.
#ifndef URLGUARD_BENCH_CPU_TIME_H_
#define URLGUARD_BENCH_CPU_TIME_H_

#include <time.h>

namespace urlguard::bench {

inline double ClockSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// User + system CPU of every thread of this process.
inline double ProcessCpuSeconds() { return ClockSeconds(CLOCK_PROCESS_CPUTIME_ID); }
// CPU of the calling thread.
inline double ThreadCpuSeconds() { return ClockSeconds(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace urlguard::bench

#endif  // URLGUARD_BENCH_CPU_TIME_H_
