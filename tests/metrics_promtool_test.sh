#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# /metrics as Prometheus reads it: starts urlguard-server and urlguardd for real on 127.0.0.1 (a published list,
# a synced data directory, a few requests so that counters, histograms and per-list series all have samples),
# fetches each /metrics with curl and runs `promtool check metrics` (Debian: prometheus) on it: text-format
# parsing plus promtool's naming, HELP/TYPE and unit lint. Any problem it prints fails the test.
# Args: BIN_DIR. Exit 77 (skipped) when promtool is not installed.
set -euo pipefail
bin=$1
command -v promtool > /dev/null || {
  echo "SKIPPED: promtool is not installed (Debian: apt-get install prometheus; scripts/install-deps.sh does)"
  exit 77
}
base=${URLGUARD_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
work=$(mktemp -d "$base/metrics_promtool_test.XXXXXX")
. "$(dirname "$0")/process_group.sh"  # setsid + stop_group: each server stopped with its process group
pids=()
cleanup() {
  stop_group "${pids[@]}"
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

"$bin/urlguard-publish" keygen --out keys > /dev/null
printf 'evil.example\nhttp://phish.example/login.php\n198.51.100.0/24\n' > feed.txt
"$bin/urlguard-publish" publish --repo repo --key keys/urlguard-ed25519.pem --list phishing --input feed.txt > /dev/null

setsid "$bin/urlguard-server" --repo repo --listen 127.0.0.1:0 > server.out 2> server.err &
pids+=($!)
for _ in $(seq 100); do grep -q '^listening on' server.out && break; sleep 0.05; done
server=$(sed -n 's/^listening on //p' server.out)
[ -n "$server" ] || { echo "urlguard-server did not start:"; cat server.err; exit 1; }
"$bin/urlguard" sync --data-dir data --server "$server" --public-key keys/urlguard-ed25519.pub.pem --list phishing \
    --once > /dev/null

api=""
for attempt in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 40000))
  setsid "$bin/urlguardd" --data-dir data --server "$server" --public-key keys/urlguard-ed25519.pub.pem --list phishing \
      --listen 127.0.0.1:$port 2> daemon.err &
  pid=$!
  for _ in $(seq 100); do
    kill -0 $pid 2> /dev/null || break
    if curl -sf "http://127.0.0.1:$port/metrics" > /dev/null; then api="http://127.0.0.1:$port"; break; fi
    sleep 0.05
  done
  if [ -n "$api" ]; then pids+=($pid); break; fi
  stop_group $pid
done
[ -n "$api" ] || { echo "urlguardd did not start:"; cat daemon.err; exit 1; }

# Samples for every family: a clean lookup, a hit (verified against the server: verify histogram, matches), an
# invalid input, a static file, a 404.
curl -sf "$api/v1/check?url=http://clean.example/" > /dev/null
curl -sf "$api/v1/check?url=http://www.evil.example/" > /dev/null
curl -s "$api/v1/check?url=http://%5B/" > /dev/null || true
curl -sf "$server/v1/lists/phishing/manifest.json" > /dev/null
curl -s "$server/v1/lists/phishing/no-such-file" > /dev/null || true

failed=0
for target in "urlguard-server $server/metrics" "urlguardd $api/metrics"; do
  name=${target%% *} url=${target#* }
  curl -sf "$url" > "$name.metrics"
  # The series this test made sure exist: an empty or truncated body must not pass as "no problems".
  case $name in
    urlguard-server) want='urlguard_server_requests_total{endpoint="static",status="404"} 1' ;;
    urlguardd) want='urlguard_client_list_version{list="phishing"} 1' ;;
  esac
  grep -qF "$want" "$name.metrics" || { echo "FAIL: $name /metrics lacks '$want'"; failed=1; }
  if out=$(promtool check metrics < "$name.metrics" 2>&1) && [ -z "$out" ]; then
    echo "$name: promtool check metrics: ok ($(grep -vc '^#' "$name.metrics") samples)"
  else
    echo "FAIL: $name: promtool check metrics:"; echo "$out"; failed=1
  fi
done
exit $failed
