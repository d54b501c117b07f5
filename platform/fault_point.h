// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Fault points: named places where a crash test stops a process on purpose, after the idea of RocksDB's sync
// points (test_util/sync_point.h). Production code marks one with
//
//   URLGUARD_FAULT_POINT("pg.publish.before-commit");
//
// Only a build configured with URLGUARD_FAULT_POINTS=ON (CMake; ON by default exactly when the tests are built)
// defines the URLGUARD_FAULT_POINTS macro. There a point kills its process with SIGKILL when the test armed it:
// the environment variable named by kFaultKillEnvVar holds the name of the one armed point. The environment is
// the channel because the kill tests (tests/fleet_pg_test.cc) arm a separate process they start, the installed
// urlguard-publish.
//
// In every other build (release packages: debian/rules passes -DURLGUARD_FAULT_POINTS=OFF) the macro expands
// to a statement that does nothing and does not even evaluate its argument: no environment read, no signal, no
// point name and no variable name reach the binary. tests/fault_points_test.sh checks the built binaries
// (ctest fault_points_test) and tests/package_test.sh the installed ones.
//
// Point names: "<folder>.<operation>.<where>", lower case, e.g. "pg.publish.after-commit"; each is listed where
// its test arms it.
#ifndef URLGUARD_PLATFORM_FAULT_POINT_H_
#define URLGUARD_PLATFORM_FAULT_POINT_H_

#if defined(URLGUARD_FAULT_POINTS)

namespace urlguard {

// The environment variable a test sets to the name of the point at which the process is to die.
inline constexpr char kFaultKillEnvVar[] = "URLGUARD_FAULT_KILL";

// Raises SIGKILL when $URLGUARD_FAULT_KILL (read through Env::Default(), on every call, so a test may arm a
// point after the process started) equals `name`; returns otherwise. Thread-safe.
void FaultPointReached(const char* name);

}  // namespace urlguard

#define URLGUARD_FAULT_POINT(name) ::urlguard::FaultPointReached(name)

#else

// Compiled out: `name` is not evaluated (sizeof keeps it type-checked, so a point does not rot unseen).
#define URLGUARD_FAULT_POINT(name) static_cast<void>(sizeof(name))

#endif  // URLGUARD_FAULT_POINTS

#endif  // URLGUARD_PLATFORM_FAULT_POINT_H_
