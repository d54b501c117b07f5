#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every test: install dependencies, then
#   1. a -Werror build with the Qt demo browser and the benchmarks (bench/, built so that the commands of
#      docs/performance.md keep working; no timing is asserted) and the whole CTest suite (unit, end-to-end, C API,
#      CLI, install, headless browser, the layer and citation checks). RelWithDebInfo, not Release: GCC 12 at -O3
#      reports -Warray-bounds false positives through inlined std::string_view (http/framing_test.cc), which
#      -Werror would turn into failures; the benchmarks' sources are the same at either level,
#   2. the Debian packages (debian/): built, installed, smoke-tested and purged (tests/package_test.sh),
#   3. an ASan+UBSan build (Debug: at -O1 GCC's sanitizer build took 19 min against about 10, for 2 min less of
#      tests) and the same suite,
#   4. a ThreadSanitizer build of the concurrency tests (lookups during generation swaps),
#   5. a clang build of every library with -Wthread-safety as an error (the GUARDED_BY annotations), instrumented for
#      libFuzzer, and each fuzz target for a few seconds on its own, two at a time.
# and ends by checking that no process the run started is still running (tests/leftover_processes.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${URLGUARD_TEST_SH_WATCHED:-}" ]; then
  scripts/install-deps.sh --with-qt   # before the watch: a service a package starts is not the run's
  # The rest of the run again, under tests/leftover_processes.sh: every process it starts is marked
  # (URLGUARD_TEST_RUN) and stays its descendant; when the run ends (passed or failed), any still running is
  # printed with its command line, killed, and fails the run.
  URLGUARD_TEST_SH_WATCHED=1 exec tests/leftover_processes.sh run -- scripts/test.sh "$@"
fi
jobs=$(nproc)
# Every build below (the suites and the package build) goes through ccache: a second run recompiles only what changed.
if command -v ccache > /dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
fuzz_seconds=${URLGUARD_FUZZ_SECONDS:-5}

stage() { echo "== [$((SECONDS / 60)) min $((SECONDS % 60)) s] $* =="; }

run_suite() {  # NAME BUILD_DIR CMAKE_ARGS...
  local name=$1 dir=$2
  shift 2
  stage "$name: configure and build ($dir)"
  cmake -S . -B "$dir" -G Ninja -DURLGUARD_WERROR=ON "$@" > "$dir.log" 2>&1 || { tail -40 "$dir.log"; exit 1; }
  cmake --build "$dir" -j"$jobs" >> "$dir.log" 2>&1 || { grep -E "error|FAILED" -A3 "$dir.log" | head -60; exit 1; }
  stage "$name: tests"
  ctest --test-dir "$dir" -j"$jobs" --output-on-failure
}

# Line tables only (-g1) in every suite: failures and sanitizer reports still name file and line, and the builds
# take about a quarter less CPU than with full debug information (28.2 s -> 21.3 s for tests/daemon_test.cc).
g1_relwithdebinfo=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
run_suite "release" build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo "${g1_relwithdebinfo[@]}" -DURLGUARD_BUILD_DEMO=ON \
  -DURLGUARD_BUILD_BENCH=ON

stage "debian packages: dpkg-buildpackage, lintian, apt-get install, smoke tests, apt-get purge"
tests/package_test.sh build-pkg
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite "asan+ubsan" build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DURLGUARD_SANITIZE=ON

stage "tsan: concurrent lookups during generation swaps (in-process)"
cmake -S . -B build-tsan -G Ninja -DURLGUARD_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "${g1_relwithdebinfo[@]}" \
  -DURLGUARD_SANITIZE_THREAD=ON \
  > build-tsan.log 2>&1 || { tail -40 build-tsan.log; exit 1; }
cmake --build build-tsan -j"$jobs" --target client_e2e_test checker_e2e_test sync_store_test urlguard_cli \
  >> build-tsan.log 2>&1 || { grep -E "error|FAILED" -A3 build-tsan.log | head -60; exit 1; }
# The fork-based cross-process tests run in the other suites (TSan does not support fork from a threaded process).
GTEST_FILTER="-*1000Swaps*:*KillNine*" TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build-tsan -R "client_e2e_test|checker_e2e_test|sync_store_test" --output-on-failure

stage "clang -Wthread-safety build and fuzz smoke: every target ${fuzz_seconds}s"
# -O1 with line tables: libFuzzer's coverage and ASan's reports need no more, and the instrumented build is the
# slowest of the run. -Wthread-safety is an error in every clang build (CMakeLists.txt).
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DURLGUARD_FUZZ=ON -DURLGUARD_BUILD_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" > build-fuzz.log 2>&1 || { tail -40 build-fuzz.log; exit 1; }
cmake --build build-fuzz -j"$jobs" --target fuzz_targets >> build-fuzz.log 2>&1 ||
  { grep -E "error|FAILED" -A3 build-fuzz.log | head -60; exit 1; }
fuzz_one() {  # TARGET RESULTS_DIR: runs TARGET on an empty corpus; writes one line (and the log's tail on failure)
  local target=$1 out="$2/$(basename "$1")" corpus
  corpus=$(mktemp -d)
  if "$target" -max_total_time="$fuzz_seconds" -rss_limit_mb=4096 "$corpus" > "$corpus.log" 2>&1; then
    echo "  $(basename "$target"): $(grep -o 'Done [0-9]* runs' "$corpus.log" || echo ok)" > "$out.passed"
  else
    { echo "  $(basename "$target"): FAILED"; tail -30 "$corpus.log"; } > "$out.failed"
  fi
  rm -rf "$corpus" "$corpus.log"
}
export -f fuzz_one
export fuzz_seconds
fuzz_results=$(mktemp -d)
find build-fuzz/fuzz -maxdepth 1 -name '*_fuzz' -type f -print0 |
  xargs -0 -n1 -P"$jobs" bash -c 'fuzz_one "$1" "$0"' "$fuzz_results"
cat "$fuzz_results"/*
fuzz_passed=$(find "$fuzz_results" -name '*.passed' | wc -l)
fuzz_failed=$(find "$fuzz_results" -name '*.failed' | wc -l)
rm -rf "$fuzz_results"
echo "fuzz: $fuzz_passed passed, $fuzz_failed failed"
[ "$fuzz_failed" = 0 ] && [ "$fuzz_passed" -gt 0 ]
stage "all stages passed"
