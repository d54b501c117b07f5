#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job on the bundled data, the whole system on this machine:
#   1. install dependencies and build;
#   2. publish the bundled feeds as signed lists (urlguard-publish keygen + publish);
#   3. serve them with the reference server on 127.0.0.1 (updates + verification API);
#   4. sync a fresh client data directory (urlguard sync: signature, diff/snapshot, atomic install);
#   5. check clean, listed and false-positive-then-verified URLs, with verdicts and timings;
#   6. scan chat messages for links; then stop everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
mkdir -p build
echo "building (Release; the log is build/quickstart-build.log) ..."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DURLGUARD_BUILD_TESTS=OFF > build/quickstart-build.log 2>&1 ||
  { tail -40 build/quickstart-build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build/quickstart-build.log 2>&1 || { tail -40 build/quickstart-build.log; exit 1; }
bin=build/bin
work=build/quickstart
rm -rf "$work"
mkdir -p "$work"
port=$((20000 + RANDOM % 20000))
server_pid=""
cleanup() { if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

echo
echo "== 1. Publisher: a signing key, then two signed lists from the bundled feeds (bad lines are reported, skipped) =="
$bin/urlguard-publish keygen --out "$work/keys"
# The demo lists are sized for a 1% false-positive rate (production default: 0.1%) so that step 4 has local
# false positives for the verification API to resolve.
$bin/urlguard-publish publish --repo "$work/repo" --key "$work/keys/urlguard-ed25519.pem" --list phishing \
  --input fixtures/lists/phishing.txt --input phishtank-csv:fixtures/feeds/phishtank.csv \
  --input openphish:fixtures/feeds/openphish_feed.txt --fp-rate 0.01 2>&1 | sed 's/^/   /'
$bin/urlguard-publish publish --repo "$work/repo" --key "$work/keys/urlguard-ed25519.pem" --list malware \
  --input fixtures/lists/malware.txt --input urlhaus-csv:fixtures/feeds/urlhaus.csv \
  --input drop-txt:fixtures/feeds/drop.txt --fp-rate 0.01 2>&1 | sed 's/^/   /'

echo
echo "== 2. Reference server on http://127.0.0.1:$port (static signed files + POST /v1/verify + /metrics) =="
$bin/urlguard-server --repo "$work/repo" --listen "127.0.0.1:$port" > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 50); do grep -q listening "$work/server.log" 2>/dev/null && break; sleep 0.1; done
sed 's/^/   /' "$work/server.log"

echo
echo "== 3. Client: sync a fresh data directory (signature checked before parsing, then atomic install) =="
$bin/urlguard sync --once --data-dir "$work/data" --server "http://127.0.0.1:$port" \
  --public-key "$work/keys/urlguard-ed25519.pub.pem" --list phishing --list malware | sed 's/^/   /'
$bin/urlguard status --data-dir "$work/data" | sed 's/^/   /'

echo
echo "== 4. Check URLs: local lookup first; only a local hit asks the server, with a 4-byte hash prefix =="
set +e
$bin/urlguard check --timing --data-dir "$work/data" --verify --server "http://127.0.0.1:$port" \
  "https://www.wikipedia.org/" \
  "http://example.com/index.html" \
  "HTTP://Login.EVIL.example:8080/account/../verify?id=7" \
  "http://secure-bank.example/login.php#form" \
  "http://0xC6.51.100.23/payload" \
  "https://downloads.example/setup.exe" \
  "javascript:alert(1)" 2>&1 | sed 's/^/   /'
echo
echo "   2000 clean URLs: the ones the local filter flags (false positives) are resolved by the verify API:"
for i in $(seq 1 2000); do echo "https://news-site-$i.example.org/articles/2026/story-$i.html"; done > "$work/clean.txt"
$bin/urlguard check --json --data-dir "$work/data" --verify --server "http://127.0.0.1:$port" - < "$work/clean.txt" \
  > "$work/clean.json" 2>&1
rc=$?
set -e
verified=$(grep -c '"verdict":"safe_verified"' "$work/clean.json" || true)
safe=$(grep -c '"verdict":"safe"' "$work/clean.json" || true)
bad=$(grep -c -E '"verdict":"(malicious|unverified_hit)"' "$work/clean.json" || true)
echo "   $safe safe locally, $verified local false positives verified safe by the server, $bad malicious (exit $rc)"
grep -m1 '"verdict":"safe_verified"' "$work/clean.json" | grep -o '"expression":"[^"]*","input":"[^"]*"' |
  sed 's/^/   example: /' || true
echo "   the same again, now answered by the SQLite cache without the network:"
$bin/urlguard check --timing --data-dir "$work/data" --verify --server "http://127.0.0.1:$port" - < "$work/clean.txt" \
  2>&1 >/dev/null | sed 's/^/   /' || true
echo "   server metrics:"
curl -s "http://127.0.0.1:$port/metrics" 2>/dev/null | grep -E '^urlguard_server_(requests_total|prefixes_total|matches_total)' |
  sed 's/^/     /' || echo "     (curl not installed)"

echo
echo "== 5. Scan chat messages for links, defanged ones included =="
printf '%s\n' "morning! the doc is at https://docs.example.com/q3 btw" \
  "URGENT verify your account: hxxp://login[.]evil[.]example/secure now" \
  "release notes for v1.2.3 are in readme.txt" > "$work/chat.txt"
$bin/urlguard scan --data-dir "$work/data" "$work/chat.txt" 2>&1 | sed 's/^/   /' || true
echo
echo "done: everything above ran on this machine; the server is stopped now."
