#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs urlguard's build and test dependencies from Debian 12 packages (as root, or through sudo).
# Skips apt entirely when everything is already installed. Usage: scripts/install-deps.sh [--with-qt]
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config git
          libssl-dev libidn2-dev libxxhash-dev zlib1g-dev libsqlite3-dev libcurl4-openssl-dev
          nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libmicrohttpd-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          clang libclang-rt-14-dev binutils openssl curl
          nodejs python3-dev pybind11-dev python3-pybind11 python3-pytest
          # checked by their own tools: Unbound + dig (the RPZ export), promtool (/metrics), systemd-analyze (unit)
          unbound bind9-dnsutils prometheus systemd
          # a real HTTP proxy for the --proxy tests; help2man and groff for the man pages (man/)
          tinyproxy help2man groff
          # PostgreSQL 15: libpq for --state postgresql://, the server binaries for tests/fleet_pg_test (a throwaway cluster)
          libpq-dev postgresql
          # the fleet (docs/fleet.md): hiredis for the shared abuse guard; Redis and nginx started by the fleet tests
          libhiredis-dev redis-server nginx
          # the Debian packages (debian/, tests/package_test.sh); ccache makes repeated builds of the suites cheap
          debhelper dh-python dpkg-dev lintian ccache
          # the scale and load benchmarks (bench/scale_bench.py): HTTP load and peak RSS of the tools
          wrk time

          # bench only (bench/perf_table.py baselines): DCSO's bloom CLI, the Redis GETBIT design
          golang-github-dcso-bloom-cli redis-server libhiredis-dev)
if [ "${1:-}" = "--with-qt" ]; then
  packages+=(qt6-base-dev qt6-webengine-dev libgl-dev xvfb)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" > /tmp/urlguard-apt.log 2>&1 ||
  { tail -30 /tmp/urlguard-apt.log; exit 1; }
