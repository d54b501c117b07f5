#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole urlguard server side on one machine, for trying it out (docs/fleet.md): Redis (the shared abuse
# guard), three verify servers (urlguard-server --guard redis://...), nginx in front (rendered from
# packaging/nginx/urlguard.conf with the ports filled in), and the publishing side at a minute cadence: an
# ingestor that turns each change of the feed in FLEET/feeds/ into change files in FLEET/spool/incoming/, and
# `urlguard-publish loop --every 60` that publishes them as one version a minute (min_wait_seconds 60;
# docs/runbook-publishers.md, "A minute cadence"). Everything listens on 127.0.0.1 only, on free ports, and lives
# in one directory. Optionally PostgreSQL as the publishers' state (--pg; see below).
#
#   scripts/fleet.sh start  [--dir DIR] [--bin BIN_DIR] [--servers N] [--pg] [--every SECONDS]
#   scripts/fleet.sh status [--dir DIR]        each part's health; exit 0 only when all are healthy
#   scripts/fleet.sh stop   [--dir DIR]        stops every process this directory started (by its pid file)
#
# DIR defaults to $URLGUARD_FLEET_DIR, else /tmp/urlguard-fleet. BIN_DIR (urlguard-server, urlguard-publish,
# urlguard) defaults to $URLGUARD_BIN, else the build/bin next to this script, else $PATH.
# After `start`, DIR/fleet.env lists every address; try:
#   . DIR/fleet.env; urlguard sync --data-dir d --server "$FLEET_URL" --public-key "$FLEET_PUBKEY" --list phishing --once
#
# --every: the loop's cadence (default $URLGUARD_FLEET_EVERY, else 60); below 60 s only for tests (clients are
# told to poll that often too). Every version's manifest, the first one's and the --pg publishers' included, says
# min_wait_seconds max(60, --every): clients poll at that cadence.
#
# --pg: a PostgreSQL 15 cluster in DIR/pg (initdb/pg_ctl, as the `postgres` user when run as root) and the
# publishers keep their state there (docs/postgres-schema.md): instead of the ingestor and the loop, two publisher
# loops (shell) each ingest the feed
# (`urlguard-publish ingest --state ...`) and publishes from the database (`publish --state ...`; PostgreSQL's
# per-list lock serializes the two publishers); the verify servers answer from the versions the database
# committed (`urlguard-server --state ...`) instead of the repository's private files.
#
# Needs: redis-server, nginx (Debian: redis-server, nginx; scripts/install-deps.sh), curl, redis-cli.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
cmd=${1:-}
[ $# -gt 0 ] && shift
if [ "$cmd" = render-nginx ]; then
  # Used by tests/fleet_test and bench/fleet_load_bench: LISTEN_PORT ROOT RATE LOG_DIR UPSTREAM_PORT...
  # prints packaging/nginx/urlguard.conf filled in.
  [ $# -ge 5 ] || { echo "usage: fleet.sh render-nginx LISTEN_PORT ROOT RATE LOG_DIR UPSTREAM_PORT..." >&2; exit 4; }
  render_args=("$@")
  set --
fi
dir=${URLGUARD_FLEET_DIR:-/tmp/urlguard-fleet}
bin=${URLGUARD_BIN:-}
servers=3
pg=0
every=${URLGUARD_FLEET_EVERY:-60}
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --servers) servers=$2; shift 2 ;;
    --pg) pg=1; shift ;;
    --every) every=$2; shift 2 ;;
    *) echo "fleet.sh: unknown option $1" >&2; exit 4 ;;
  esac
done
# The manifests' min_wait_seconds: the cadence clients poll at (docs/sync-protocol.md §2), at least a minute.
min_wait=$(( every < 60 ? 60 : every ))
if [ -z "$bin" ]; then
  if [ -x "$src/build/bin/urlguard-server" ]; then bin=$src/build/bin; else bin=$(dirname "$(command -v urlguard-server || echo /usr/bin/x)"); fi
fi

die() { echo "fleet.sh: $*" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_port() {  # PORT SECONDS
  for _ in $(seq $(($2 * 20))); do
    (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null && return 0
    sleep 0.05
  done
  return 1
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2> /dev/null; }

# Runs a command in the background, detached from this shell; its pid goes to run/NAME.pid, output to log/NAME.log.
spawn() {
  local name=$1; shift
  setsid "$@" >> "$dir/log/$name.log" 2>&1 < /dev/null &
  echo $! > "$dir/run/$name.pid"
}

# packaging/nginx/urlguard.conf with this fleet's listen port, root, upstreams and rate. Each replaced value is
# found by its exact default spelling: a packaged file that no longer has one fails the render, never silently.
render_nginx() {  # LISTEN_PORT ROOT RATE LOG_DIR UPSTREAM_PORTS...
  local listen=$1 root=$2 rate=$3 logs=$4; shift 4
  local conf=$src/packaging/nginx/urlguard.conf out
  for want in 'listen 127.0.0.1:8080;' 'root /var/lib/urlguard/repo/public;' 'rate=50r/s;' \
              'server 127.0.0.1:8081 ' 'access_log /var/log/nginx/urlguard.access.log;'; do
    grep -qF "$want" "$conf" || die "packaging/nginx/urlguard.conf has no '$want' to fill in"
  done
  local servers_block=""
  for p in "$@"; do servers_block+="    server 127.0.0.1:$p max_fails=1 fail_timeout=2s;\n"; done
  out=$(sed -e "s|listen 127.0.0.1:8080;|listen 127.0.0.1:$listen;|" \
            -e "s|root /var/lib/urlguard/repo/public;|root $root;|" \
            -e "s|rate=50r/s;|rate=$rate;|" \
            -e "s|access_log /var/log/nginx/urlguard.access.log;|access_log $logs/nginx.access.log;|" \
            -e '/server 127.0.0.1:808[1-9] max_fails/d' \
            -e "s|# urlguard-fleet: upstreams|# urlguard-fleet: upstreams\n$servers_block|" "$conf")
  printf '%s\n' "$out"
}

write_nginx_main() {  # the top-level nginx.conf around the rendered urlguard.conf
  local user_line=""
  [ "$(id -u)" = 0 ] && user_line="user nobody nogroup;"
  cat > "$dir/nginx/nginx.conf" << EOF
# Generated by scripts/fleet.sh.
$user_line
daemon off;
worker_processes 2;
pid $dir/run/nginx.master.pid;
error_log $dir/log/nginx.error.log warn;
events { worker_connections 1024; }
http {
    client_body_temp_path $dir/nginx/tmp/body;
    proxy_temp_path $dir/nginx/tmp/proxy;
    fastcgi_temp_path $dir/nginx/tmp/fastcgi;
    uwsgi_temp_path $dir/nginx/tmp/uwsgi;
    scgi_temp_path $dir/nginx/tmp/scgi;
    sendfile on;
    include $dir/nginx/urlguard.conf;
}
EOF
}

publisher_loop() {  # NAME: publishes feeds/phishing.txt whenever its content differs from the last published
  cat > "$dir/run/publisher.sh" << 'EOF'
#!/usr/bin/env bash
# One publisher of the fleet (scripts/fleet.sh): publishes the feed when it changed. Two run; the list's lock
# (or PostgreSQL's) lets one publish at a time; the other one's refusal is logged and retried. Exit status 0 means
# the version was committed (a later step's failure is only a warning), anything else that nothing was.
dir=$1 bin=$2 name=$3 state=$4 min_wait=$5
while true; do
  sum=$(sha256sum "$dir/feeds/phishing.txt" | cut -d' ' -f1)
  if [ "$sum" != "$(cat "$dir/state/published.sha" 2> /dev/null)" ]; then
    args=(publish --repo "$dir/repo" --key "$dir/keys/urlguard-ed25519.pem" --list phishing --min-wait "$min_wait")
    ok=1
    if [ -n "$state" ]; then  # PostgreSQL state: the feed goes into the database, the version comes out of it
      "$bin/urlguard-publish" ingest --state "$state" --list phishing --input "$dir/feeds/phishing.txt" || ok=0
      args+=(--state "$state")
    else
      args+=(--input "$dir/feeds/phishing.txt")
    fi
    if [ "$ok" = 1 ] && "$bin/urlguard-publish" "${args[@]}"; then
      echo "$sum" > "$dir/state/published.sha"
      echo "$(date -u +%FT%TZ) $name published"
    else
      echo "$(date -u +%FT%TZ) $name: nothing committed (another publisher holds the list?), retrying"
    fi
  fi
  sleep 2
done
EOF
  chmod +x "$dir/run/publisher.sh"
}

ingest_loop() {  # the fleet's ingestor: each change of feeds/phishing.txt becomes change files in the spool
  cat > "$dir/run/ingest.sh" << 'EOF'
#!/usr/bin/env bash
# The fleet's ingestor (scripts/fleet.sh): when feeds/phishing.txt changes, the lines it gained go to
# spool/incoming/T.add and the lines it lost to spool/incoming/T.remove, each written beside the spool and
# renamed in (a file the loop sees is always whole). state/ingested.txt is the content handed over so far.
dir=$1
LC_ALL=C
export LC_ALL
while true; do
  sort -u "$dir/feeds/phishing.txt" > "$dir/state/feed.sorted"
  if ! cmp -s "$dir/state/feed.sorted" "$dir/state/ingested.txt"; then
    t=$(date -u +%Y%m%dT%H%M%S%N)
    comm -13 "$dir/state/ingested.txt" "$dir/state/feed.sorted" > "$dir/spool/.$t.add"
    comm -23 "$dir/state/ingested.txt" "$dir/state/feed.sorted" > "$dir/spool/.$t.remove"
    for kind in add remove; do
      if [ -s "$dir/spool/.$t.$kind" ]; then
        mv "$dir/spool/.$t.$kind" "$dir/spool/incoming/$t.$kind"
      else
        rm -f "$dir/spool/.$t.$kind"
      fi
    done
    mv "$dir/state/feed.sorted" "$dir/state/ingested.txt"
    echo "$(date -u +%FT%TZ) ingested a change of feeds/phishing.txt into the spool"
  fi
  sleep 1
done
EOF
  chmod +x "$dir/run/ingest.sh"
}

start() {
  command -v redis-server > /dev/null || die "redis-server is not installed (apt-get install redis-server)"
  command -v nginx > /dev/null || [ -x /usr/sbin/nginx ] || die "nginx is not installed (apt-get install nginx)"
  [ -x "$bin/urlguard-server" ] || die "no urlguard-server in $bin (--bin DIR)"
  if [ -f "$dir/fleet.env" ] && pid_alive "$dir/run/redis.pid"; then die "a fleet already runs in $dir (fleet.sh stop --dir $dir)"; fi
  mkdir -p "$dir"/{run,log,keys,feeds,state,nginx/tmp}
  dir=$(cd "$dir" && pwd)
  chmod 755 "$dir"
  local pg_url=""
  if [ "$pg" = 1 ]; then pg_url=$(start_pg); fi

  # Keys and a first version.
  [ -f "$dir/keys/urlguard-ed25519.pem" ] || "$bin/urlguard-publish" keygen --out "$dir/keys" > /dev/null
  if [ ! -f "$dir/feeds/phishing.txt" ]; then
    { echo "evil.example"; echo "http://phish.example/login.php"; echo "198.51.100.0/24"
      for i in $(seq 1 200); do echo "bad$i.example"; done; } > "$dir/feeds/phishing.txt"
  fi
  if [ ! -f "$dir/repo/public/v1/lists/phishing/manifest.json" ]; then
    if [ -n "$pg_url" ]; then
      "$bin/urlguard-publish" ingest --state "$pg_url" --list phishing --input "$dir/feeds/phishing.txt" \
          > "$dir/log/publish-initial.log"
      "$bin/urlguard-publish" publish --state "$pg_url" --repo "$dir/repo" --key "$dir/keys/urlguard-ed25519.pem" \
          --list phishing --min-wait "$min_wait" >> "$dir/log/publish-initial.log"
    else
      "$bin/urlguard-publish" publish --repo "$dir/repo" --key "$dir/keys/urlguard-ed25519.pem" --list phishing \
          --input "$dir/feeds/phishing.txt" --min-wait "$min_wait" > "$dir/log/publish-initial.log"
    fi
    sha256sum "$dir/feeds/phishing.txt" | cut -d' ' -f1 > "$dir/state/published.sha"
  fi
  chmod -R o+rX "$dir/repo/public"
  if [ "$(id -u)" = 0 ] && ! runuser -u nobody -- test -r "$dir/repo/public/v1/lists/phishing/manifest.json"; then
    die "nginx's workers (user nobody) cannot read $dir/repo/public: use a --dir whose parent directories others may enter"
  fi

  local redis_port nginx_port
  redis_port=$(free_port)
  spawn redis redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir/state"
  wait_port "$redis_port" 10 || die "redis-server did not start (log/redis.log)"

  local ports=()
  for i in $(seq 1 "$servers"); do
    local p
    p=$(free_port)
    local state_args=()
    [ -n "$pg_url" ] && state_args=(--state "$pg_url")
    spawn "server-$i" "$bin/urlguard-server" --repo "$dir/repo" --listen "127.0.0.1:$p" "${state_args[@]}" \
        --guard "redis://127.0.0.1:$redis_port" --trusted-proxy 127.0.0.1
    wait_port "$p" 10 || die "urlguard-server $i did not start (log/server-$i.log)"
    ports+=("$p")
  done

  nginx_port=$(free_port)
  render_nginx "$nginx_port" "$dir/repo/public" "50r/s" "$dir/log" "${ports[@]}" > "$dir/nginx/urlguard.conf"
  write_nginx_main
  local nginx_bin
  nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
  "$nginx_bin" -t -q -p "$dir/nginx" -c "$dir/nginx/nginx.conf" 2>> "$dir/log/nginx.error.log" ||
    die "nginx rejected the generated configuration (log/nginx.error.log)"
  spawn nginx "$nginx_bin" -p "$dir/nginx" -c "$dir/nginx/nginx.conf"
  wait_port "$nginx_port" 10 || die "nginx did not start (log/nginx.error.log)"

  if [ -n "$pg_url" ]; then
    publisher_loop
    spawn publisher-1 "$dir/run/publisher.sh" "$dir" "$bin" publisher-1 "$pg_url" "$min_wait"
    spawn publisher-2 "$dir/run/publisher.sh" "$dir" "$bin" publisher-2 "$pg_url" "$min_wait"
  else
    # A minute cadence (docs/runbook-publishers.md, "A minute cadence"): the ingestor feeds the spool, the loop
    # publishes what arrived once per --every seconds.
    mkdir -p "$dir/spool/incoming"
    [ -f "$dir/state/ingested.txt" ] || LC_ALL=C sort -u "$dir/feeds/phishing.txt" > "$dir/state/ingested.txt"
    ingest_loop
    spawn ingest "$dir/run/ingest.sh" "$dir"
    local min_every=()
    [ "$every" -lt 60 ] && min_every=(--min-every "$every")
    spawn publish-loop "$bin/urlguard-publish" loop --repo "$dir/repo" --key "$dir/keys/urlguard-ed25519.pem" \
        --list phishing --spool "$dir/spool" --every "$every" "${min_every[@]}"
  fi

  {
    echo "FLEET_DIR=$dir"
    echo "FLEET_URL=http://127.0.0.1:$nginx_port"
    echo "FLEET_PUBKEY=$dir/keys/urlguard-ed25519.pub.pem"
    echo "FLEET_REDIS=redis://127.0.0.1:$redis_port"
    echo "FLEET_SERVERS=\"${ports[*]}\""
    echo "FLEET_PG=$pg_url"
  } > "$dir/fleet.env"
  echo "fleet started in $dir"
  cat "$dir/fleet.env"
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -1; }

as_pg() {  # runs a PostgreSQL tool as the postgres user when we are root (initdb refuses root)
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_pg() {  # prints the publishers' state URL
  local b port
  b=$(pg_bin)
  [ -n "$b" ] || die "--pg: PostgreSQL is not installed (apt-get install postgresql)"
  port=$(free_port)
  mkdir -p "$dir/pg"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir/pg"
  if [ ! -f "$dir/pg/data/PG_VERSION" ]; then
    as_pg "$b/initdb" -D "$dir/pg/data" -U postgres --auth=trust -E UTF8 > "$dir/log/pg-initdb.log" 2>&1 ||
      die "--pg: initdb failed (log/pg-initdb.log)"
  fi
  as_pg "$b/pg_ctl" -D "$dir/pg/data" -l "$dir/pg/postgres.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/pg" start > /dev/null ||
    die "--pg: pg_ctl start failed ($dir/pg/postgres.log)"
  echo "$port" > "$dir/run/pg.port"
  as_pg "$b/createdb" -h 127.0.0.1 -p "$port" -U postgres urlguard 2> /dev/null || true
  echo "postgresql://postgres@127.0.0.1:$port/urlguard"
}

status() {
  [ -f "$dir/fleet.env" ] || die "no fleet in $dir"
  # shellcheck disable=SC1091
  . "$dir/fleet.env"
  local bad=0 line
  report() {  # NAME OK DETAIL
    if [ "$2" = 1 ]; then line="ok  "; else line="DOWN"; bad=1; fi
    printf '%-12s %s  %s\n' "$1" "$line" "$3"
  }
  local redis_port=${FLEET_REDIS##*:}
  if pid_alive "$dir/run/redis.pid" && [ "$(redis-cli -h 127.0.0.1 -p "$redis_port" PING 2> /dev/null)" = PONG ]; then
    report redis 1 "$FLEET_REDIS PING -> PONG"
  else
    report redis 0 "$FLEET_REDIS (pid $(cat "$dir/run/redis.pid" 2> /dev/null))"
  fi
  local i=1
  for p in $FLEET_SERVERS; do
    local code backend
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$p/healthz" || true)
    backend=$(curl -s --max-time 2 "http://127.0.0.1:$p/metrics" 2> /dev/null |
              sed -n 's/^urlguard_server_guard_backend{backend="\([a-z]*\)"} 1$/\1/p' || true)
    if pid_alive "$dir/run/server-$i.pid" && [ "$code" = 200 ]; then
      report "server-$i" 1 "127.0.0.1:$p /healthz 200, guard ${backend:-?}"
    else
      report "server-$i" 0 "127.0.0.1:$p /healthz ${code:-none}"
    fi
    i=$((i + 1))
  done
  local hz mf
  hz=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$FLEET_URL/healthz" || true)
  mf=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$FLEET_URL/v1/lists/phishing/manifest.json" || true)
  if pid_alive "$dir/run/nginx.pid" && [ "$hz" = 200 ] && [ "$mf" = 200 ]; then
    report nginx 1 "$FLEET_URL /healthz 200, manifest 200"
  else
    report nginx 0 "$FLEET_URL /healthz ${hz:-none}, manifest ${mf:-none}"
  fi
  local publishers=(publisher-1 publisher-2)
  [ -n "${FLEET_PG:-}" ] || publishers=(ingest publish-loop)
  for n in "${publishers[@]}"; do
    if pid_alive "$dir/run/$n.pid"; then
      report "$n" 1 "$(tail -1 "$dir/log/$n.log" 2> /dev/null || true)"
    else
      report "$n" 0 "not running"
    fi
  done
  if [ -n "${FLEET_PG:-}" ]; then
    local b
    b=$(pg_bin)
    if "$b/pg_isready" -q -h 127.0.0.1 -p "$(cat "$dir/run/pg.port")"; then
      report postgresql 1 "$FLEET_PG"
    else
      report postgresql 0 "$FLEET_PG"
    fi
  fi
  local version
  version=$(sed -n 's/.*"version": *\([0-9]*\).*/\1/p' "$dir/repo/public/v1/lists/phishing/manifest.json" 2> /dev/null | head -1)
  echo "list phishing: version ${version:-?}"
  return $bad
}

stop() {
  [ -d "$dir/run" ] || die "no fleet in $dir"
  for f in "$dir"/run/publisher-*.pid "$dir"/run/ingest.pid "$dir"/run/publish-loop.pid "$dir"/run/nginx.pid "$dir"/run/server-*.pid "$dir"/run/redis.pid; do
    [ -f "$f" ] || continue
    local pid
    pid=$(cat "$f")
    # setsid made each one a process group leader: end the group (the publisher loop and its child too, nginx's
    # workers), up to 5 s for the leader, then SIGKILL to whatever of the group is left (a worker that outlived
    # its master).
    kill -TERM -- "-$pid" 2> /dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
    kill -KILL -- "-$pid" 2> /dev/null || true
    rm -f "$f"
  done
  if [ -f "$dir/run/pg.port" ]; then
    # pg_ctl started the postmaster in a session of its own (no group above reaches it); when pg_ctl cannot stop
    # it, kill it by its pid if that is still a postgres (its backends exit by themselves when it is gone).
    if ! as_pg "$(pg_bin)/pg_ctl" -D "$dir/pg/data" -m fast -w stop > /dev/null 2>&1 &&
       [ -f "$dir/pg/data/postmaster.pid" ]; then
      local pm
      pm=$(head -1 "$dir/pg/data/postmaster.pid")
      [ "$(cat "/proc/$pm/comm" 2> /dev/null)" = postgres ] && kill -KILL "$pm" 2> /dev/null || true
    fi
    rm -f "$dir/run/pg.port"
  fi
  echo "fleet in $dir stopped"
}

case $cmd in
  start) start ;;
  status) status ;;
  stop) stop ;;
  render-nginx) render_nginx "${render_args[@]}" ;;
  *) echo "usage: fleet.sh start|status|stop [--dir DIR] [--bin BIN_DIR] [--servers N] [--pg] [--every SECONDS]" >&2; exit 4 ;;
esac
