#!/usr/bin/env bash
# The main job on the bundled data: install dependencies, build, publish the fixture lists into snapshots,
# and check a handful of clean and listed URLs, printing verdicts and timings.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DURLGUARD_BUILD_TESTS=OFF > build.log 2>&1 ||
  { tail -40 build.log; exit 1; }
cmake --build build -j"$(nproc)" >> build.log 2>&1 || { tail -40 build.log; exit 1; }
out=build/quickstart
mkdir -p "$out"

echo
echo "== 1. Build list snapshots from the bundled demo feeds (fixtures/lists/*.txt); bad lines are reported and skipped =="
build/bin/urlguard-publish build --list phishing --input fixtures/lists/phishing.txt --out "$out/phishing.ugs"
build/bin/urlguard-publish build --list malware --input fixtures/lists/malware.txt --out "$out/malware.ugs"

echo
echo "== 2. Check URLs on this machine, offline (nothing is sent anywhere) =="
set +e
build/bin/urlguard check --timing --snapshot "$out/phishing.ugs" --snapshot "$out/malware.ugs" \
  "https://www.wikipedia.org/" \
  "http://example.com/index.html" \
  "HTTP://Login.EVIL.example:8080/account/../verify?id=7" \
  "http://secure-bank.example/login.php#form" \
  "http://0xC6.51.100.23/payload" \
  "https://downloads.example/setup.exe" \
  "http://[2001:db8:bad::7]/" \
  "javascript:alert(1)"
rc=$?
set -e
echo "(exit status $rc: bit 1 = a hit, bit 2 = an invalid input)"

echo
echo "== 3. Scan chat messages for links, defanged ones included =="
printf '%s\n' "morning! the doc is at https://docs.example.com/q3 btw" \
  "URGENT verify your account: hxxp://login[.]evil[.]example/secure now" \
  "release notes for v1.2.3 are in readme.txt" > "$out/chat.txt"
build/bin/urlguard scan --snapshot "$out/phishing.ugs" --snapshot "$out/malware.ugs" "$out/chat.txt" || true
