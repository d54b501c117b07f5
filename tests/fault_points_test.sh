#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fault points (platform/fault_point.h) are compiled out of builds without URLGUARD_FAULT_POINTS: no binary of such
# a build names the environment variable that arms them (nor the one the publisher read before fault points, both
# start with URLGUARD_FAULT). `absent` fails when `strings -a` finds the name in any FILE; `present` fails when it
# is missing from any FILE (the positive control of a build with fault points: the pattern still finds them).
#
# usage: fault_points_test.sh absent|present FILE...
# Run by ctest fault_points_test on the built binaries and by tests/package_test.sh on the installed ones.
set -eu
mode=$1
shift
pattern='URLGUARD_FAULT'
case "$mode" in absent | present) ;; *) echo "usage: $0 absent|present FILE..."; exit 2 ;; esac
[ $# -gt 0 ] || { echo "usage: $0 absent|present FILE..."; exit 2; }

status=0
for f in "$@"; do
  if [ -z "$(strings -a "$f" 2> /dev/null | head -1)" ]; then
    echo "FAIL: strings -a printed nothing for $f (missing or unreadable?)"
    status=1
    continue
  fi
  hits=$(strings -a "$f" | grep -c "$pattern" || true)
  if [ "$mode" = absent ] && [ "$hits" -ne 0 ]; then
    echo "FAIL: $f names a fault point variable ($hits strings):"
    strings -a "$f" | grep "$pattern" | head -5
    status=1
  elif [ "$mode" = present ] && [ "$hits" -eq 0 ]; then
    echo "FAIL: no $pattern string in $f, built with fault points: the pattern is stale"
    status=1
  else
    echo "ok: $f ($hits strings match $pattern; expected $mode)"
  fi
done
exit $status
