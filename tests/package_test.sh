#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages (debian/), built, installed and used on this machine, then purged again:
#   1. dpkg-buildpackage -b -us -uc in a scratch copy of the source (the files git tracks or would track, as they
#      are in the work tree; the work tree is not written to), then lintian (errors fail the test);
#   2. apt-get install -y ./*.deb (Depends resolved from the archive);
#   3. smoke tests against the installed files only: urlguard --help and check on a snapshot built by the
#      installed urlguard-publish; a repository (keys from the installed keygen) served by the installed
#      urlguard-server on 127.0.0.1; urlguardd started AS the urlguard user with the command line of the installed
#      unit and conffile, on /var/lib/urlguard as postinst created it, answering /v1/check; /usr/bin/python3
#      importing the installed module; no fault point (tests/fault_points_test.sh) in the installed binaries and
#      library; a C program built with `pkg-config --cflags --libs urlguard` and a C++ one
#      with find_package(urlguard); systemd-analyze on the installed unit;
#   4. apt-get purge -y of every package (and the urlguard user when this test created it).
# Needs root and the Build-Depends of debian/control (scripts/install-deps.sh). Refuses to run when any of the
# packages is already installed (it would purge them). Usage: tests/package_test.sh [OUT_DIR] (default
# build-pkg/; the .deb files and logs stay there).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$src/build-pkg}")
packages=(liburlguard0 liburlguard-dev urlguard urlguardd urlguard-server python3-urlguard)

[ "$(id -u)" = 0 ] || { echo "package_test: needs root (installs and purges packages)"; exit 1; }
for p in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed'; then
    echo "package_test: $p is already installed; this test installs and purges the packages: remove it first"
    exit 1
  fi
done
user_existed=0
getent passwd urlguard > /dev/null && user_existed=1

version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
rm -rf "$out"
tree="$out/src/urlguard-$version"   # a fixed path, so ccache hits across runs (-ffile-prefix-map keeps it out)
mkdir -p "$tree"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
   tar --null --ignore-failed-read -T - -cf - 2> /dev/null) | tar -xf - -C "$tree"

echo "== package: dpkg-buildpackage -b (log: $out/build.log) =="
export DEB_BUILD_OPTIONS="parallel=$(nproc) noautodbgsym ${DEB_BUILD_OPTIONS:-}"
if command -v ccache > /dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
start=$(date +%s)
(cd "$tree" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1 ||
  { grep -E "error|FAILED|dh_[a-z_]+: " -A3 "$out/build.log" | tail -60; echo "package_test: build FAILED"; exit 1; }
echo "built in $(( $(date +%s) - start ))s"
for deb in "$out"/src/*.deb; do
  printf '  %-44s %8s bytes, installed %6s KiB\n' "$(basename "$deb")" "$(stat -c %s "$deb")" \
    "$(dpkg-deb -f "$deb" Installed-Size)"
done

passed=0 failed=0
check() {  # NAME COMMAND...: one smoke test
  local name=$1
  shift
  if "$@" > "$out/check.log" 2>&1; then
    passed=$((passed + 1)); echo "  ok   $name"
  else
    failed=$((failed + 1)); echo "  FAIL $name"; sed 's/^/       /' "$out/check.log" | tail -20
  fi
}

echo "== package: lintian =="
if lintian --fail-on error --suppress-tags-from-file /dev/null "$out"/src/*.changes > "$out/lintian.log" 2>&1; then
  passed=$((passed + 1))
  echo "  ok   lintian: no errors ($(grep -c '^W: ' "$out/lintian.log" || true) warnings, $out/lintian.log)"
else
  failed=$((failed + 1)); echo "  FAIL lintian:"; grep -v '^[WIP]: ' "$out/lintian.log" | head -30
fi

work=$(mktemp -d /tmp/urlguard-package-test.XXXXXX)
chmod 0755 "$work"   # the urlguard user reads the public key from here
. "$src/tests/process_group.sh"  # setsid + stop_group: each server stopped with its process group
server_pid="" daemon_pid=""
cleanup() {
  local rc=$?
  stop_group "$daemon_pid" "$server_pid"
  echo "== package: apt-get purge =="
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" > "$out/purge.log" 2>&1 ||
    { tail -20 "$out/purge.log"; rc=1; }
  if [ "$user_existed" = 0 ] && getent passwd urlguard > /dev/null; then
    deluser --system --quiet urlguard > /dev/null 2>&1 || true
    getent group urlguard > /dev/null && delgroup --system --quiet urlguard > /dev/null 2>&1 || true
  fi
  local left
  left=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2> /dev/null | grep -c ' installed' || true)
  if [ "$left" != 0 ] || [ -e /var/lib/urlguard ] || [ -e /etc/urlguard ]; then
    echo "package_test: purge left packages ($left), /var/lib/urlguard or /etc/urlguard behind"; rc=1
  else
    echo "purged: no package, /var/lib/urlguard or /etc/urlguard left"
  fi
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

echo "== package: apt-get install ./*.deb =="
(cd "$out/src" && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./*.deb) > "$out/install.log" 2>&1 ||
  { tail -30 "$out/install.log"; exit 1; }

free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
expect_exit() {  # CODE COMMAND...: the command exits with CODE
  local want=$1 got=0
  shift
  "$@" || got=$?
  [ "$got" = "$want" ] || { echo "exit $got, expected $want: $*"; return 1; }
}
matches() {  # ERE TEXT: TEXT matches ERE (else prints both)
  grep -Eq "$1" <<< "$2" || { echo "'$1' not in: ${2:-(nothing)}"; return 1; }
}

echo "== package: smoke tests on the installed files =="
check "installed from the packages: /usr/bin/urlguard{,d,-publish,-server}" \
  dpkg -S /usr/bin/urlguard /usr/bin/urlguardd /usr/bin/urlguard-publish /usr/bin/urlguard-server
check "no fault points in the installed binaries (tests/fault_points_test.sh)" \
  sh "$src/tests/fault_points_test.sh" absent /usr/bin/urlguard /usr/bin/urlguardd /usr/bin/urlguard-publish \
  /usr/bin/urlguard-server $(dpkg -L liburlguard0 | grep '/liburlguard\.so\.[0-9.]*$')
check "urlguard --help" /usr/bin/urlguard --help
check "urlguard-publish build (installed)" /usr/bin/urlguard-publish build --list phishing \
  --input "$src/fixtures/lists/phishing.txt" --out "$work/phishing.ugs"
check "urlguard check: listed URL exits 1" expect_exit 1 /usr/bin/urlguard check --snapshot "$work/phishing.ugs" \
  "http://login.evil.example/verify"
check "urlguard check: clean URL exits 0" expect_exit 0 /usr/bin/urlguard check --snapshot "$work/phishing.ugs" \
  "https://www.example.org/"

# A signed repository served on loopback, all by the installed tools.
/usr/bin/urlguard-publish keygen --out "$work/keys" > /dev/null
chmod 0755 "$work/keys"
chmod 0644 "$work/keys/urlguard-ed25519.pub.pem"
/usr/bin/urlguard-publish publish --repo "$work/repo" --key "$work/keys/urlguard-ed25519.pem" --list phishing \
  --input "$src/fixtures/lists/phishing.txt" > "$work/publish.log" 2>&1
setsid /usr/bin/urlguard-server --repo "$work/repo" --listen 127.0.0.1:0 > "$work/server.out" 2> "$work/server.err" &
server_pid=$!
for _ in $(seq 1 100); do grep -q '^listening on http://127.0.0.1:' "$work/server.out" && break; sleep 0.1; done
server_url=$(awk '/^listening on/ {print $3; exit}' "$work/server.out")
check "urlguard-server (installed) listens on loopback: ${server_url:-none}" test -n "$server_url"

# The daemon: the installed unit's ExecStart with the shipped conffile's variables (server, key, listen address
# and lists overridden for this test), run as the urlguard user on the data directory postinst created.
unit=$(dpkg -L urlguardd | grep '/systemd/system/urlguardd.service$')
conf=/etc/urlguard/urlguardd.conf
check "data dir /var/lib/urlguard: owner urlguard, mode 700" \
  test "$(stat -c '%U:%G %a' /var/lib/urlguard)" = "urlguard:urlguard 700"
check "conffile $conf is a conffile of urlguardd" grep -q "^ $conf " <(dpkg-query -W -f='${Conffiles}\n' urlguardd)
check "unit's Documentation= file exists" \
  test -f "$(sed -n 's|^Documentation=file://||p' "$unit")"
set -a
# shellcheck source=/dev/null
. "$conf"
set +a
daemon_port=$(free_port)
URLGUARD_SERVER=$server_url URLGUARD_PUBLIC_KEY=$work/keys/urlguard-ed25519.pub.pem \
  URLGUARD_LISTEN=127.0.0.1:$daemon_port URLGUARDD_OPTS="--list phishing"
exec_start=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/\\$//' | tr '\n' ' ')
exec_start=${exec_start#ExecStart=}
# systemd: ${VAR} is one argument, $VAR is split on whitespace; the same in bash with "${VAR}" and $VAR.
eval "daemon_cmd=($(sed -E 's/\$\{([A-Z_]+)\}/"${\1}"/g' <<< "$exec_start"))"
check "unit ExecStart runs /usr/bin/urlguardd" test "${daemon_cmd[0]}" = /usr/bin/urlguardd
setsid runuser -u urlguard -- "${daemon_cmd[@]}" > "$work/daemon.log" 2>&1 &
daemon_pid=$!
# The first sync runs within a minute of start (jitter, sync/scheduler.h): wait up to 90 s.
verdict=""
for _ in $(seq 1 450); do
  verdict=$(curl -s "http://127.0.0.1:$daemon_port/v1/check?url=http://login.evil.example/verify" || true)
  grep -Eq '"verdict":"(hit|malicious)"' <<< "$verdict" && break
  kill -0 "$daemon_pid" 2> /dev/null || break
  sleep 0.2
done
check "urlguardd as urlguard: synced, /v1/check says listed" matches '"verdict":"(hit|malicious)"' "$verdict"
check "urlguardd: /v1/check says safe for a clean URL" matches '"verdict":"safe"' \
  "$(curl -s "http://127.0.0.1:$daemon_port/v1/check?url=https://www.example.org/")"
check "urlguardd runs as urlguard" test "$(ps -o user= -p "$(pgrep -P "$daemon_pid" -x urlguardd || echo "$daemon_pid")")" = urlguard
check "data dir files owned by urlguard" test -z "$(find /var/lib/urlguard ! -user urlguard)"
if [ "$failed" != 0 ]; then sed 's/^/       daemon: /' "$work/daemon.log" | tail -20; fi
stop_group "$daemon_pid"
daemon_pid=""
if command -v systemd-analyze > /dev/null; then
  check "systemd-analyze verify (installed unit)" bash -c "out=\$(systemd-analyze verify '$unit' 2>&1); echo \"\$out\"; [ -z \"\$out\" ]"
  check "systemd-analyze security <= 2.0 (installed unit)" \
    systemd-analyze security --offline=true --threshold=20 "$unit"
fi

# The publisher's feed loop: installed by urlguard-server (not enabled), running the installed binary.
feed_unit=$(dpkg -L urlguard-server | grep '/systemd/system/urlguard-publish-update.service$' || true)
feed_timer=$(dpkg -L urlguard-server | grep '/systemd/system/urlguard-publish-update.timer$' || true)
check "urlguard-server installs urlguard-publish-update.service and .timer" test -n "$feed_unit" -a -n "$feed_timer"
check "feed unit ExecStart runs /usr/bin/urlguard-publish update" grep -q '^ExecStart=/usr/bin/urlguard-publish update ' "$feed_unit"
if command -v systemd-analyze > /dev/null; then
  check "systemd-analyze verify (installed feed service and timer)" \
    bash -c "out=\$(systemd-analyze verify '$feed_unit' '$feed_timer' 2>&1); echo \"\$out\"; [ -z \"\$out\" ]"
fi

check "python3: import urlguard (installed) and check" /usr/bin/python3 -c "
import urlguard, sys
assert urlguard.__file__.startswith('/usr/lib/python3/dist-packages/'), urlguard.__file__
with urlguard.Checker([sys.argv[1]]) as c:
    assert c.check('http://login.evil.example/verify').verdict == 'hit'
    assert c.check('https://www.example.org/').verdict == 'safe'
" "$work/phishing.ugs"

check "C consumer via pkg-config --cflags --libs urlguard" bash -c "
  cc -o '$work/consumer_c' '$src/tests/install_consumer/consumer.c' \$(pkg-config --cflags --libs urlguard) &&
  ldd '$work/consumer_c' | grep -q 'liburlguard.so.0 => /lib/' &&
  { '$work/consumer_c' '$work/phishing.ugs' http://login.evil.example/x; [ \$? = 1 ]; }"
check "C++ consumer via find_package(urlguard)" bash -c "
  cmake -S '$src/tests/install_consumer' -B '$work/consumer' -G Ninja &&
  cmake --build '$work/consumer' --target consumer &&
  { '$work/consumer/consumer' '$work/phishing.ugs' 'see hxxp://login.evil[.]example/ ok'; [ \$? = 1 ]; }"

echo "package: $passed passed, $failed failed"
[ "$failed" = 0 ]
