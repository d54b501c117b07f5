#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Test-only code (the fault-injecting Env, platform/fault_injection_env.h) is not part of liburlguard.so: it is
# built into the urlguard_test_support archive, which only tests link. Fails when any symbol of the shared
# library (its full symbol table, `nm -C`) names it.
#
# usage: no_test_code_in_library_test.sh LIBURLGUARD_SO TEST_SUPPORT_ARCHIVE
# The test-support archive is the positive control: the same pattern must find the code there, or the pattern
# has gone stale and this test would pass for the wrong reason.
set -eu
lib=$1
control=$2
pattern='FaultInjectionEnv|FaultOpName'

if [ -z "$(nm -C "$lib" 2>/dev/null | head -1)" ]; then
  echo "FAIL: nm -C printed nothing for $lib (stripped or not a library?)"
  exit 1
fi
status=0
found=$(nm -C "$lib" | grep -E "$pattern" || true)
if [ -n "$found" ]; then
  echo "FAIL: test-only code in $lib (nm -C):"
  echo "$found" | head -20
  status=1
fi
control_hits=$(nm -C "$control" 2>/dev/null | grep -E "$pattern" | grep -c . || true)
if [ "$control_hits" -eq 0 ]; then
  echo "FAIL: the pattern finds nothing in the test-support archive ($control): the pattern is stale"
  status=1
fi
[ $status -eq 0 ] && echo "ok: no test-only code in $lib ($control_hits matches in the test-support control)"
exit $status
