#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# packaging/urlguardd.service (and the publisher's urlguard-publish-update.service + .timer, at the end) as systemd reads it, without a running systemd (works in a Debian 12 container):
#   - `systemd-analyze verify` on a copy of the unit whose ExecStart names the build's urlguardd (verify checks
#     that the binary exists and is executable; the shipped unit names the install path /usr/local/bin/urlguardd,
#     and `--root=DIR` would need a whole OS tree with sysinit.target). verify exits 0 even for an unknown key or
#     a bad value, so any output fails the test.
#   - `systemd-analyze security --offline=true` keeps the sandbox's exposure rating at or under 2.0 ("OK").
# Args: SOURCE_DIR BIN_DIR. Exit 77 (skipped) when systemd-analyze is not installed.
set -euo pipefail
src=$1 bin=$2
command -v systemd-analyze > /dev/null || {
  echo "SKIPPED: systemd-analyze is not installed (Debian: systemd; scripts/install-deps.sh)"
  exit 77
}
base=${URLGUARD_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
work=$(mktemp -d "$base/systemd_unit_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
unit="$work/urlguardd.service"
grep -q '^ExecStart=/usr/local/bin/urlguardd ' "$src/packaging/urlguardd.service" ||
  { echo "FAIL: ExecStart no longer starts /usr/local/bin/urlguardd: update this test"; exit 1; }
sed "s|^ExecStart=/usr/local/bin/urlguardd |ExecStart=$bin/urlguardd |" "$src/packaging/urlguardd.service" > "$unit"

failed=0
if out=$(systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ]; then
  echo "systemd-analyze verify: ok"
else
  echo "FAIL: systemd-analyze verify:"; echo "$out"; failed=1
fi
if systemd-analyze security --offline=true --threshold=20 "$unit" > "$work/security.txt" 2>&1; then
  grep 'Overall exposure' "$work/security.txt"
else
  echo "FAIL: systemd-analyze security: exposure above 2.0:"; cat "$work/security.txt"; failed=1
fi

# The publisher's feed loop (packaging/urlguard-publish-update.service + .timer, docs/runbook-publishers.md): verified
# together (the timer names the service) with the build's urlguard-publish, and held to the same exposure rating.
grep -q '^ExecStart=/usr/local/bin/urlguard-publish update ' "$src/packaging/urlguard-publish-update.service" ||
  { echo "FAIL: urlguard-publish-update.service no longer runs /usr/local/bin/urlguard-publish update"; exit 1; }
sed "s|^ExecStart=/usr/local/bin/urlguard-publish |ExecStart=$bin/urlguard-publish |" \
  "$src/packaging/urlguard-publish-update.service" > "$work/urlguard-publish-update.service"
cp "$src/packaging/urlguard-publish-update.timer" "$work/"
if out=$(systemd-analyze verify "$work/urlguard-publish-update.service" "$work/urlguard-publish-update.timer" 2>&1) &&
   [ -z "$out" ]; then
  echo "systemd-analyze verify urlguard-publish-update: ok"
else
  echo "FAIL: systemd-analyze verify urlguard-publish-update:"; echo "$out"; failed=1
fi
if systemd-analyze security --offline=true --threshold=20 "$work/urlguard-publish-update.service" \
     > "$work/security-publish.txt" 2>&1; then
  grep 'Overall exposure' "$work/security-publish.txt"
else
  echo "FAIL: systemd-analyze security urlguard-publish-update: exposure above 2.0:"
  cat "$work/security-publish.txt"; failed=1
fi
exit $failed
