#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A fleet node's /metrics as Prometheus reads it: urlguard-server with the shared guard on a real redis-server
# (127.0.0.1, a free port), a few verify requests, then `promtool check metrics` on /metrics twice
# (tests/promtool_frame.sh): with Redis up (guard backend redis, a latency histogram with samples) and after Redis
# was killed (backend local, the errors and fallbacks counters moved). Any problem promtool prints fails the test.
# Args: BIN_DIR. Exit 77 (skipped) when promtool or redis-server is not installed.
set -euo pipefail
. "$(dirname "$0")/promtool_frame.sh"
promtool_frame_begin fleet_metrics_promtool_test "$1" redis-server

publish_phishing 'evil.example\nhttp://phish.example/login.php\n'

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

start_reference_server --guard "redis://127.0.0.1:$redis_port?timeout_ms=200"

for _ in 1 2 3; do curl -sf "$server/v1/verify?prefixes=00000001" > /dev/null; done
check_metrics redis-up "$server/metrics" 'urlguard_server_guard_backend{backend="redis"} 1' \
    'urlguard_server_guard_redis_seconds_count 3' 'urlguard_server_guard_fallbacks_total 0'

kill -9 "$redis_pid"; wait "$redis_pid" 2> /dev/null || true
curl -sf "$server/v1/verify?prefixes=00000001" > /dev/null  # decided locally: Redis is gone
check_metrics redis-down "$server/metrics" 'urlguard_server_guard_backend{backend="local"} 1' \
    'urlguard_server_guard_fallbacks_total 1'
grep -q 'switched to the local guard' server.err || { echo "FAIL: no fallback line in the log"; failed=1; }
grep -q 'urlguard_server_guard_redis_errors_total 0$' redis-down.metrics && { echo "FAIL: no redis error counted"; failed=1; }
exit $failed
