#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/fleet.sh as a user runs it: start (Redis, 3 verify servers, nginx, 2 publisher loops in a temp
# directory), status healthy; a client syncs through nginx; a feed change is published by a loop and reaches
# the client; a killed server makes status fail and name it; stop leaves no process of the fleet behind.
# Args: SOURCE_DIR BIN_DIR. Exit 77 (skipped) when redis-server or nginx is not installed.
set -euo pipefail
src=$1 bin=$2
for tool in redis-server redis-cli nginx curl; do
  command -v $tool > /dev/null || [ -x /usr/sbin/$tool ] ||
    { echo "SKIPPED: $tool is not installed (scripts/install-deps.sh)"; exit 77; }
done
base=${URLGUARD_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
work=$(mktemp -d "$base/fleet_script_test.XXXXXX")
chmod 755 "$work"  # nginx's workers run as nobody when the test runs as root
fleet=$work/fleet
cleanup() { "$src/scripts/fleet.sh" stop --dir "$fleet" > /dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$fleet"/log/*.log; do echo "== $f"; tail -5 "$f"; done; exit 1; }

"$src/scripts/fleet.sh" start --dir "$fleet" --bin "$bin" > "$work/start.out" || { cat "$work/start.out"; fail "start"; }
# shellcheck disable=SC1091
. "$fleet/fleet.env"
"$src/scripts/fleet.sh" status --dir "$fleet" > "$work/status.out" || { cat "$work/status.out"; fail "status after start"; }
# A server whose first Redis call timed out (a busy machine) starts on its local guard and moves to Redis at its
# next retry (every second): give the three up to 10 s.
for _ in $(seq 1 20); do
  grep -c '^server-[123] *ok .*guard redis' "$work/status.out" | grep -qx 3 && break
  sleep 0.5
  "$src/scripts/fleet.sh" status --dir "$fleet" > "$work/status.out" || true
done
grep -c '^server-[123] *ok .*guard redis' "$work/status.out" | grep -qx 3 || { cat "$work/status.out"; fail "servers not on redis"; }

"$bin/urlguard" sync --data-dir "$work/data" --server "$FLEET_URL" --public-key "$FLEET_PUBKEY" --list phishing \
    --once > /dev/null || fail "sync through nginx"
out=$("$bin/urlguard" check --data-dir "$work/data" --verify --server "$FLEET_URL" "http://www.evil.example/" || true)
echo "$out" | grep -q "^MALICIOUS" || fail "evil.example not malicious through nginx: $out"

# A feed change: one of the publisher loops publishes it; the client gets version 2.
echo "fresh-threat.example" >> "$fleet/feeds/phishing.txt"
for _ in $(seq 150); do grep -q '"version": *2' "$fleet/repo/public/v1/lists/phishing/manifest.json" && break; sleep 0.1; done
# The client syncs and verifies at once. The servers load the new version within their refresh interval
# (1 s); until then their answers name version 1 and the client does not trust them (UNVERIFIED, never a
# cached "safe"; docs/verify-server.md "The answer's list versions"), then the entry is MALICIOUS.
"$bin/urlguard" sync --data-dir "$work/data" --server "$FLEET_URL" --public-key "$FLEET_PUBKEY" --list phishing \
    --once > /dev/null || fail "second sync"
malicious=
for _ in $(seq 100); do
  out=$("$bin/urlguard" check --data-dir "$work/data" --verify --server "$FLEET_URL" "http://fresh-threat.example/" || true)
  case "$out" in
    MALICIOUS*) malicious=1; break ;;
    UNVERIFIED*"older than the local version"*) sleep 0.1 ;;
    *) fail "a wrong verdict for a published entry right after the publish: $out" ;;
  esac
done
[ -n "$malicious" ] || fail "the published change did not reach the client: $out"

# A dead server: status fails and names it.
kill -9 "$(cat "$fleet/run/server-2.pid")"
sleep 0.2
if "$src/scripts/fleet.sh" status --dir "$fleet" > "$work/status2.out"; then cat "$work/status2.out"; fail "status ok with a dead server"; fi
grep -q '^server-2 *DOWN' "$work/status2.out" || { cat "$work/status2.out"; fail "server-2 not reported down"; }

pids=$(cat "$fleet"/run/*.pid)
"$src/scripts/fleet.sh" stop --dir "$fleet" > /dev/null
for p in $pids; do
  if kill -0 "$p" 2> /dev/null; then fail "process $p still running after stop"; fi
done
echo "fleet.sh: start, status, publish loop, dead server, stop: ok"
