#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build tree into a scratch prefix, builds tests/install_consumer against it (CMake package and
# pkg-config) once with g++ and once with clang++ (when installed), and runs the programs on a fixture snapshot.
# The consumer sets no C++ standard: clang 14 defaults to C++14, so the clang++ build proves that the exported
# target carries the C++17 the headers need. Args: BUILD_DIR SOURCE_DIR SNAPSHOT.
set -euo pipefail
build=$1 src=$2 snapshot=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/include/urlguard/urlguard.h"
soname=$(objdump -p "$work"/prefix/lib*/liburlguard.so | awk '/SONAME/ {print $2}')
[ "$soname" = "liburlguard.so.0" ] || { echo "unexpected SONAME '$soname'"; exit 1; }
export PKG_CONFIG_PATH="$(echo "$work"/prefix/lib*/pkgconfig)"
grep -q "^License: Apache-2.0$" "$PKG_CONFIG_PATH/urlguard.pc" || { echo "urlguard.pc names no license"; exit 1; }
export LD_LIBRARY_PATH="$(echo "$work"/prefix/lib*)"
compilers="g++"
if command -v clang++ > /dev/null; then compilers="g++ clang++"; else echo "note: clang++ not installed, g++ only"; fi
passed=0 failed=0
check() {  # check WHAT GOT WANT
  if [ "$2" = "$3" ]; then passed=$((passed+1)); else failed=$((failed+1)); echo "FAIL: $1: exit $2, wanted $3"; fi
}
for cxx in $compilers; do
  dir="$work/consumer-$cxx"
  cmake -S "$src/tests/install_consumer" -B "$dir" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
      > "$work/cfg-$cxx.log"
  if ! cmake --build "$dir" > "$work/build-$cxx.log" 2>&1; then
    echo "FAIL: the consumer does not build with $cxx and no standard set:"; grep -E "error" "$work/build-$cxx.log" | head
    failed=$((failed+1))
    continue
  fi
  set +e
  "$dir/consumer" "$snapshot" "have a look at hxxp://login.evil[.]example/ ok?"; check "$cxx hit" $? 1
  "$dir/consumer" "$snapshot" "see www.example.com/ and README.md"; check "$cxx safe" $? 0
  "$dir/consumer_c" "$snapshot" "http://evil.example/x"; check "$cxx C API hit" $? 1
  set -e
done
echo "install: $passed passed, $failed failed"
[ "$failed" = 0 ]
