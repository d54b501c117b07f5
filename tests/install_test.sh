#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, builds tests/install_consumer against it (CMake package and
# pkg-config), and runs both programs on a fixture snapshot. Args: BUILD_DIR SOURCE_DIR SNAPSHOT.
set -euo pipefail
build=$1 src=$2 snapshot=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/include/urlguard/urlguard.h"
soname=$(objdump -p "$work"/prefix/lib*/liburlguard.so | awk '/SONAME/ {print $2}')
[ "$soname" = "liburlguard.so.0" ] || { echo "unexpected SONAME '$soname'"; exit 1; }
export PKG_CONFIG_PATH="$(echo "$work"/prefix/lib*/pkgconfig)"
cmake -S "$src/tests/install_consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/cfg.log"
cmake --build "$work/consumer" > "$work/build.log"
export LD_LIBRARY_PATH="$(echo "$work"/prefix/lib*)"
set +e
"$work/consumer/consumer" "$snapshot" "have a look at hxxp://login.evil[.]example/ ok?"; hit=$?
"$work/consumer/consumer" "$snapshot" "see www.example.com/ and README.md"; safe=$?
"$work/consumer/consumer_c" "$snapshot" "http://evil.example/x"; c_hit=$?
set -e
passed=0 failed=0
for pair in "$hit:1" "$safe:0" "$c_hit:1"; do
  if [ "${pair%%:*}" = "${pair##*:}" ]; then passed=$((passed+1)); else failed=$((failed+1)); fi
done
echo "install: $passed passed, $failed failed"
[ "$failed" = 0 ]
