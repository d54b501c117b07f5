#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
# `urlguard-publish loop` as an operator runs it (publish/publish_loop.cc, docs/runbook-publishers.md "A minute
# cadence"), with the real binary:
#   - change files renamed into SPOOL/incoming/ become one version per cycle, with the right entry counts;
#   - no change: no version;
#   - SIGTERM (and SIGINT) end the loop with status 0;
#   - kill -9 between the claim and the commit (fault point publish.loop.after-claim): the restarted loop publishes
#     the batch once; kill -9 after the commit (publish.loop.after-commit): the restart moves the batch to done/
#     and publishes no second version;
#   - an HTML page dropped as a change file goes to SPOOL/rejected/ with a .why, the rest publishes;
#   - `publish --min-wait` sets the first version's min_wait_seconds and refuses less than 60 s;
#   - the loop says when its first cycle starts (on the committed version's cadence) and counts skipped slots;
#   - `publish --no-checkpoint` leaves a due checkpoint of a format 2 list to `compact --if-due`, which makes it
#     once (not again, and not for a format 1 list), and the next version adopts it.
# Args: BIN_DIR. The kill -9 part needs a build with fault points (URLGUARD_FAULT_POINTS, on in test builds); without
# them it is skipped (exit 77) after the rest passed.
set -euo pipefail
bin=$1
base=${URLGUARD_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
work=$(mktemp -d "$base/publish_loop_e2e_test.XXXXXX")
loop_pid=
cleanup() {
  if [ -n "$loop_pid" ]; then kill -KILL "$loop_pid" 2> /dev/null || true; wait "$loop_pid" 2> /dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

passed=0 failed=0
ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

publish=$bin/urlguard-publish
"$publish" keygen --out keys > /dev/null
for i in $(seq 1 50); do echo "base$i.example"; done > base.txt
manifest=repo/public/v1/lists/phishing/manifest.json
# `publish --min-wait`: the first version already tells clients the cadence (60 s .. 24 h; less is refused and
# publishes nothing).
rc=0
"$publish" publish --repo repo --key keys/urlguard-ed25519.pem --list phishing --input plain:base.txt \
  --min-wait 59 > /dev/null 2> minwait.err || rc=$?
[ "$rc" = 4 ] && grep -q -- "--min-wait takes a duration from 60 s" minwait.err && [ ! -e "$manifest" ] && ok ||
  fail "publish --min-wait 59: exit $rc, $(cat minwait.err), manifest $(ls "$manifest" 2> /dev/null)"
"$publish" publish --repo repo --key keys/urlguard-ed25519.pem --list phishing --input plain:base.txt \
  --min-wait 2m > /dev/null
grep -q '"min_wait_seconds": 120,' "$manifest" && ok || fail "publish --min-wait 2m: $(grep min_wait "$manifest")"
version() { sed -n 's/^  "version": \([0-9]*\),*$/\1/p' "$manifest"; }
domains() { sed -n '/^  "entries": {/,/^  }/s/^    "domain": \([0-9]*\),*$/\1/p' "$manifest"; }
# As an ingestor: write beside the spool, rename in.
drop() { printf "$2" > "spool/.$1.tmp"; mv "spool/.$1.tmp" "spool/incoming/$1"; }
mkdir -p spool/incoming

start_loop() {  # extra environment as arguments (VAR=VALUE)
  env "$@" "$publish" loop --repo repo --key keys/urlguard-ed25519.pem --list phishing --spool spool --every 1 \
    --min-every 1 >> loop.out 2>> loop.err &
  loop_pid=$!
}
wait_version() {  # VERSION: wait up to 30 s for the manifest to say it
  for _ in $(seq 1 300); do [ "$(version)" = "$1" ] && return 0; sleep 0.1; done
  return 1
}
stop_loop() {  # SIGNAL: send it, expect exit status 0
  kill "-$1" "$loop_pid"
  local rc=0
  wait "$loop_pid" || rc=$?
  loop_pid=
  [ "$rc" = 0 ] && ok || fail "loop exited $rc on SIG$1 (want 0); stderr: $(tail -3 loop.err)"
}

# Two cycles, two versions.
drop a.add 'new1.example\nnew2.example\n'
drop b.remove 'base1.example\n'
start_loop
wait_version 2 && ok || fail "no version 2 from the first batch"
[ "$(domains)" = 51 ] && ok || fail "version 2 has $(domains) domains, want 51"
drop c.add 'new3.example\n'
wait_version 3 && ok || fail "no version 3 from the second batch"
[ "$(domains)" = 52 ] && ok || fail "version 3 has $(domains) domains, want 52"
grep -q '"min_wait_seconds": 1,' "$manifest" && ok || fail "min_wait_seconds is not the loop's --every"
# No change: no version (three more cycles).
sleep 3.5
[ "$(version)" = 3 ] && ok || fail "a version without change: $(version)"
grep -q "ingest-to-commit" loop.out && ok || fail "no ingest-to-commit in the report"
stop_loop TERM
[ "$(ls spool/done | tr '\n' ' ')" = "a.add b.remove c.add " ] && ok || fail "done/ holds: $(ls spool/done)"

# A refused file: rejected with its reason, the rest publishes.
drop page.add '<html><body>502 Bad Gateway</body></html>\n'
drop d.add 'new4.example\n'
start_loop
wait_version 4 && ok || fail "no version 4 beside a refused file"
[ "$(domains)" = 53 ] && ok || fail "version 4 has $(domains) domains, want 53"
[ -f spool/rejected/page.add ] && grep -q "HTML" spool/rejected/page.add.why && ok || fail "page.add not rejected with a reason"
stop_loop INT
grep -q "^loop: first cycle in [0-9]* s (created_unix [0-9]*), on the committed version's cadence" loop.out && ok ||
  fail "the loop did not say when its first cycle starts: $(grep -m1 'first cycle' loop.out)"
# (How many: a slow build may run a 1-s cycle past the next slot; the count itself is PublishLoopTest's.)
grep -q "failed cycles, [0-9]* slots skipped (a cycle ran past the next one)" loop.out && ok ||
  fail "no skipped-slot count in the stop line: $(grep -m1 stopped loop.out)"

# A timer's versions of a format 2 list with the checkpoint left to `compact --if-due` beside them.
m2=repo/public/v1/lists/f2/manifest.json
checkpoint_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["checkpoint"]["version"])' "$m2"; }
"$publish" publish --repo repo --key keys/urlguard-ed25519.pem --list f2 --input plain:base.txt \
  --manifest-format 2 > /dev/null
for i in $(seq 1 40); do echo "f2-new$i.example"; done > f2.add
"$publish" publish --repo repo --key keys/urlguard-ed25519.pem --list f2 --add plain:f2.add --no-checkpoint \
  --checkpoint-changes 10 > f2-v2.out
grep -q "a new checkpoint is due, to be made beside publishing" f2-v2.out && [ "$(checkpoint_of)" = 1 ] && ok ||
  fail "publish --no-checkpoint: checkpoint $(checkpoint_of); $(grep -i checkpoint f2-v2.out)"
"$publish" compact --repo repo --list f2 --if-due --checkpoint-changes 1000000 > f2-c0.out
grep -q "no checkpoint due at version 2" f2-c0.out && ok || fail "compact --if-due made one not due: $(cat f2-c0.out)"
"$publish" compact --repo repo --list f2 --if-due --checkpoint-changes 10 > f2-c1.out
grep -q "f2: made version 2 a checkpoint" f2-c1.out && ok || fail "compact --if-due: $(cat f2-c1.out)"
grep -q "clients at version 1 or later catch up with a range diff to it (1 offered); clients further behind take its snapshot ([0-9]* bytes)" f2-c1.out && ok ||
  fail "compact --if-due does not say what the checkpoint offers clients behind it: $(cat f2-c1.out)"
"$publish" compact --repo repo --list f2 --if-due --checkpoint-changes 10 > f2-c2.out
grep -q "no checkpoint due at version 2" f2-c2.out && ok || fail "compact --if-due again: $(cat f2-c2.out)"
echo "f2-new41.example" > f2.add
"$publish" publish --repo repo --key keys/urlguard-ed25519.pem --list f2 --add plain:f2.add --no-checkpoint \
  --checkpoint-changes 10 > f2-v3.out
[ "$(checkpoint_of)" = 2 ] && ok || fail "version 3 did not adopt checkpoint 2: $(checkpoint_of)"
rc=0
"$publish" compact --repo repo --list phishing --if-due > f1.out 2> f1.err || rc=$?
[ "$rc" = 1 ] && grep -q "manifest format 1" f1.err && ok || fail "compact --if-due on format 1: exit $rc, $(cat f1.err)"

# kill -9 at the fault points.
drop e.add 'new5.example\nnew6.example\n'
start_loop URLGUARD_FAULT_KILL=publish.loop.after-claim
rc=0
wait "$loop_pid" || rc=$?
loop_pid=
if [ "$rc" != 137 ]; then
  echo "urlguard-publish has no fault points (exit $rc, want 137 from SIGKILL); $passed passed, $failed failed"
  [ "$failed" = 0 ] || exit 1
  echo "SKIPPED: kill -9 part"
  exit 77
fi
[ "$(version)" = 4 ] && ok || fail "killed before the commit, yet version $(version)"
[ -f spool/claimed/target-5 ] && [ -f spool/claimed/e.add ] && ok || fail "claimed/ holds: $(ls spool/claimed)"
start_loop
wait_version 5 && ok || fail "the claimed batch was not published after the restart"
[ "$(domains)" = 55 ] && ok || fail "version 5 has $(domains) domains, want 55"
sleep 2.5
[ "$(version)" = 5 ] && ok || fail "the recovered batch made a second version: $(version)"
grep -q "claimed before a restart" loop.out && ok || fail "the report does not say the batch was recovered"
stop_loop TERM

drop f.remove 'new5.example\n'
start_loop URLGUARD_FAULT_KILL=publish.loop.after-commit
rc=0
wait "$loop_pid" || rc=$?
loop_pid=
[ "$rc" = 137 ] && ok || fail "publish.loop.after-commit did not kill the loop (exit $rc)"
[ "$(version)" = 6 ] && ok || fail "killed after the commit, yet version $(version)"
[ -f spool/claimed/f.remove ] && ok || fail "f.remove left claimed/ before the kill"
start_loop
for _ in $(seq 1 100); do [ -f spool/done/f.remove ] && break; sleep 0.1; done
[ -f spool/done/f.remove ] && ok || fail "the committed batch did not move to done/"
sleep 2.5
[ "$(version)" = 6 ] && ok || fail "the committed batch was published again: version $(version)"
[ "$(domains)" = 54 ] && ok || fail "version 6 has $(domains) domains, want 54"
[ -z "$(ls spool/claimed)" ] && ok || fail "claimed/ not empty: $(ls spool/claimed)"
stop_loop TERM

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
