#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# urlguard-publish's progress line: on a terminal (a pseudo-terminal from util-linux `script`) every phase of a
# publication shows, in order: [1/4] parse, [2/4] sort/merge, [3/4] write, [4/4] sign. Piped or redirected to a
# file, the output holds the report and nothing of the progress line (no carriage return, no phase).
# Args: BIN_DIR (urlguard-publish). Exit 77 (skipped) when `script` (util-linux) is missing.
set -euo pipefail
bin=$1
command -v script > /dev/null || { echo "SKIPPED: script (util-linux) is not installed"; exit 77; }
base=${URLGUARD_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
work=$(mktemp -d "$base/publish_progress_test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

"$bin/urlguard-publish" keygen --out keys > /dev/null
for i in $(seq 1 2000); do echo "h$i.example"; done > feed.txt
publish="$bin/urlguard-publish publish --repo repo --key keys/urlguard-ed25519.pem --list phishing --input plain:feed.txt"

passed=0 failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

# On a terminal: script gives the command a pty for stdin, stdout and stderr and copies what it writes.
script -qefc "$publish" /dev/null < /dev/null > tty.out
grep -q "published phishing version 1" tty.out && ok || fail "no report on the terminal"
last=0
for phase in "[1/4] parse" "[2/4] sort/merge" "[3/4] write" "[4/4] sign"; do
  at=$(grep -a -o -b -F "$phase" tty.out | head -1 | cut -d: -f1)
  if [ -z "$at" ]; then fail "phase '$phase' not shown on the terminal"; continue; fi
  if [ "$at" -lt "$last" ]; then fail "phase '$phase' shown out of order"; else ok; fi
  last=$at
done
grep -q -a -F "write: diff" tty.out && fail "a first version has no diff to write" || ok

# Piped, and redirected to files: the report only.
$publish 2>&1 | cat > piped.out
$publish > file.out 2> file.err
for f in piped.out file.out file.err; do
  if grep -q -a -e $'\r' -e "\[[1-4]/4\]" "$f"; then fail "progress written to $f (not a terminal)"; else ok; fi
done
grep -q "published phishing version 2" piped.out && ok || fail "no report when piped"
grep -q "published phishing version 3" file.out && ok || fail "no report in the file"
# A second version on the terminal also writes its diff.
script -qefc "$publish" /dev/null < /dev/null > tty2.out
grep -q -a -F "[3/4] write: diff from version 3" tty2.out && ok || fail "the diff step not shown"

echo "publish progress: $passed passed, $failed failed"
[ "$failed" = 0 ]
