#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A fleet node's /metrics as Prometheus reads it: urlguard-server with the shared guard on a real redis-server
# (127.0.0.1, a free port), a few verify requests, then `promtool check metrics` on /metrics twice: with Redis
# up (guard backend redis, a latency histogram with samples) and after Redis was killed (backend local, the
# errors and fallbacks counters moved). Any problem promtool prints fails the test.
# Args: BIN_DIR. Exit 77 (skipped) when promtool or redis-server is not installed.
set -euo pipefail
bin=$1
for tool in promtool redis-server; do
  command -v $tool > /dev/null || { echo "SKIPPED: $tool is not installed (scripts/install-deps.sh)"; exit 77; }
done
base=${URLGUARD_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
work=$(mktemp -d "$base/fleet_metrics_promtool_test.XXXXXX")
. "$(dirname "$0")/process_group.sh"  # setsid + stop_group: each server stopped with its process group
pids=()
cleanup() {
  stop_group "${pids[@]}"
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

"$bin/urlguard-publish" keygen --out keys > /dev/null
printf 'evil.example\nhttp://phish.example/login.php\n' > feed.txt
"$bin/urlguard-publish" publish --repo repo --key keys/urlguard-ed25519.pem --list phishing --input feed.txt > /dev/null

redis_port=""
for attempt in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 40000))
  setsid redis-server --port $port --bind 127.0.0.1 --save "" --appendonly no > redis.log 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    kill -0 $pid 2> /dev/null || break
    [ "$(redis-cli -p $port PING 2> /dev/null)" = PONG ] && { redis_port=$port; break; }
    sleep 0.05
  done
  [ -n "$redis_port" ] && { redis_pid=$pid; pids+=($pid); break; }
  stop_group $pid
done
[ -n "$redis_port" ] || { echo "redis-server did not start:"; cat redis.log; exit 1; }

setsid "$bin/urlguard-server" --repo repo --listen 127.0.0.1:0 --guard "redis://127.0.0.1:$redis_port?timeout_ms=200" \
    > server.out 2> server.err &
pids+=($!)
for _ in $(seq 100); do grep -q '^listening on' server.out && break; sleep 0.05; done
server=$(sed -n 's/^listening on //p' server.out)
[ -n "$server" ] || { echo "urlguard-server did not start:"; cat server.err; exit 1; }

failed=0
check() {  # NAME WANT...: promtool on /metrics, and each WANT line present
  local name=$1; shift
  curl -sf "$server/metrics" > "$name.metrics"
  for want in "$@"; do
    grep -qF "$want" "$name.metrics" || { echo "FAIL: $name: /metrics lacks '$want'"; failed=1; }
  done
  if out=$(promtool check metrics < "$name.metrics" 2>&1) && [ -z "$out" ]; then
    echo "$name: promtool check metrics: ok ($(grep -vc '^#' "$name.metrics") samples)"
  else
    echo "FAIL: $name: promtool check metrics:"; echo "$out"; failed=1
  fi
}

for _ in 1 2 3; do curl -sf "$server/v1/verify?prefixes=00000001" > /dev/null; done
check redis-up 'urlguard_server_guard_backend{backend="redis"} 1' 'urlguard_server_guard_redis_seconds_count 3' \
    'urlguard_server_guard_fallbacks_total 0'

kill -9 "$redis_pid"; wait "$redis_pid" 2> /dev/null || true
curl -sf "$server/v1/verify?prefixes=00000001" > /dev/null  # decided locally: Redis is gone
check redis-down 'urlguard_server_guard_backend{backend="local"} 1' 'urlguard_server_guard_fallbacks_total 1'
grep -q 'switched to the local guard' server.err || { echo "FAIL: no fallback line in the log"; failed=1; }
grep -q 'urlguard_server_guard_redis_errors_total 0$' redis-down.metrics && { echo "FAIL: no redis error counted"; failed=1; }
exit $failed
