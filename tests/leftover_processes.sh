#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copyright urlguard authors.
# Runs a command and fails when it leaves any process behind: a test stops everything it starts, children
# included (tests/child_process.h, tests/process_group.sh). scripts/test.sh runs the whole suite under it; ctest
# runs `fleet_leaves_no_process` (fleet_test with nginx and its workers) and `fleet_script_test` under it.
#
#   tests/leftover_processes.sh run [--] COMMAND [ARG...]
#
# How a process of the run is recognised, two ways (either one is enough):
#   - descent: this script makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER, through python3) before
#     it runs COMMAND, so a process whose parent dies is re-parented to it instead of to init. Every process COMMAND
#     starts stays a descendant of this script, orphans included (nginx's workers after their master was
#     SIGKILLed, a server a shell test forgot, a daemon that detached with setsid);
#   - a mark: URLGUARD_TEST_RUN=<id> is exported to COMMAND and inherited by everything it starts; a process whose
#     environment carries the id (or a nested run's "<id>/...") is ours wherever it is in the tree. The mark alone is
#     not enough: nginx, redis-server and PostgreSQL overwrite their initial environment with their process title,
#     so /proc/PID/environ of an nginx worker holds only NUL bytes.
#
# When COMMAND has ended, every process found either way (zombies aside: they hold nothing) that is still there after
# a grace of 5 s is a leftover: each is printed (pid, parent, command line), then killed (SIGKILL, by pid), and the
# script exits 1. Otherwise it exits with COMMAND's status (so 77, a skipped ctest test, stays a skip).
# Linux only (/proc, prctl).
set -uo pipefail

[ "${1:-}" = run ] || { echo "usage: leftover_processes.sh run [--] COMMAND [ARG...]" >&2; exit 4; }

# Become a child subreaper: python3 sets the flag and execs bash on this script again (same pid; the flag survives
# execve). _URLGUARD_SUBREAPER says it is done.
if [ "${_URLGUARD_SUBREAPER:-}" != "$$" ]; then
  py=/usr/bin/python3
  [ -x "$py" ] || py=$(command -v python3) || { echo "leftover_processes.sh: needs python3 (prctl)" >&2; exit 1; }
  exec "$py" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("leftover_processes.sh: prctl(PR_SET_CHILD_SUBREAPER): " + os.strerror(ctypes.get_errno()))
os.environ["_URLGUARD_SUBREAPER"] = str(os.getpid())
os.execv("/bin/bash", ["bash"] + sys.argv[1:])
' "$0" "$@"
fi
unset _URLGUARD_SUBREAPER
shift
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: leftover_processes.sh run [--] COMMAND [ARG...]" >&2; exit 4; }

run_id="${URLGUARD_TEST_RUN:+$URLGUARD_TEST_RUN/}$$.$(date +%s)"
export URLGUARD_TEST_RUN=$run_id

interrupted=0
trap 'interrupted=1' INT TERM   # a Ctrl-C still ends in the check below (COMMAND got the signal too)
"$@"
status=$?

declare -A ppid_of=()
leftovers=()
# Fills ppid_of and leftovers. Only shell builtins while it looks (no child of ours runs meanwhile).
scan() {
  local f pid rest state ppid kv p n
  local -a env
  local -A marked=()
  ppid_of=()
  leftovers=()
  for f in /proc/[0-9]*/stat; do
    pid=${f#/proc/}
    pid=${pid%/stat}
    IFS= read -r rest 2> /dev/null < "$f" || continue   # gone meanwhile
    rest=${rest##*) }                                      # after "(comm) ", which may hold anything
    state=${rest%% *}
    rest=${rest#* }
    ppid=${rest%% *}
    [ "$state" = Z ] && continue
    ppid_of[$pid]=$ppid
    [ "$pid" = $$ ] && continue
    env=()
    mapfile -d '' env 2> /dev/null < "/proc/$pid/environ"
    for kv in "${env[@]}"; do
      case $kv in
        "URLGUARD_TEST_RUN=$run_id" | "URLGUARD_TEST_RUN=$run_id/"*) marked[$pid]=1; break ;;
      esac
    done
  done
  for pid in "${!ppid_of[@]}"; do
    [ "$pid" = $$ ] && continue
    if [ -n "${marked[$pid]:-}" ]; then leftovers+=("$pid"); continue; fi
    p=${ppid_of[$pid]} n=0
    while [ "${p:-0}" -gt 1 ] && [ $n -lt 4096 ]; do
      if [ "$p" = $$ ]; then leftovers+=("$pid"); break; fi
      p=${ppid_of[$p]:-0} n=$((n + 1))
    done
  done
}

alive() {  # PID: still there and not a zombie
  local rest
  IFS= read -r rest 2> /dev/null < "/proc/$1/stat" || return 1
  rest=${rest##*) }
  [ "${rest%% *}" != Z ]
}
scan
if [ ${#leftovers[@]} != 0 ]; then
  for _ in $(seq 50); do   # up to 5 s for processes on their way out, then a last look
    still=0
    for pid in "${leftovers[@]}"; do alive "$pid" && still=1; done
    [ $still = 0 ] && break
    sleep 0.1
  done
  scan
fi

if [ ${#leftovers[@]} != 0 ]; then
  echo "FAIL: ${#leftovers[@]} process(es) left running by: $*" >&2
  for pid in "${leftovers[@]}"; do
    cmdline=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null)
    echo "  pid $pid (parent ${ppid_of[$pid]}, user $(stat -c %U "/proc/$pid" 2> /dev/null)): ${cmdline:-?}" >&2
  done
  kill -KILL "${leftovers[@]}" 2> /dev/null
  wait 2> /dev/null
  exit 1
fi
echo "leftover_processes: nothing left running by $(basename "$1") (run $run_id)" >&2
[ "$interrupted" = 1 ] && [ "$status" = 0 ] && status=130
exit "$status"
