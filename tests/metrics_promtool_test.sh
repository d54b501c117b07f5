#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# /metrics as Prometheus reads it: starts urlguard-server and urlguardd for real on 127.0.0.1 (a published list,
# a synced data directory, a few requests so that counters, histograms and per-list series all have samples),
# fetches each /metrics with curl and runs `promtool check metrics` (Debian: prometheus) on it
# (tests/promtool_frame.sh). Any problem it prints fails the test.
# Args: BIN_DIR. Exit 77 (skipped) when promtool is not installed.
set -euo pipefail
. "$(dirname "$0")/promtool_frame.sh"
promtool_frame_begin metrics_promtool_test "$1"

publish_phishing 'evil.example\nhttp://phish.example/login.php\n198.51.100.0/24\n'
start_reference_server
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

# The series this test made sure exist.
check_metrics urlguard-server "$server/metrics" 'urlguard_server_requests_total{endpoint="static",status="404"} 1'
check_metrics urlguardd "$api/metrics" 'urlguard_client_list_version{list="phishing"} 1'
exit $failed
