#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The worked example of docs/migrating-from-safe-browsing-v4.md, run from the page itself so that it cannot drift:
# every fenced block opened with ```sh {test} or ```python {test} is taken in order (python blocks through
# python3), ports 8080 and 8089 become free loopback ports, and the result runs under `set -euo pipefail` in a
# scratch directory with BIN_DIR on PATH. The blocks start urlguard-server and urlguardd on 127.0.0.1 and stop
# them; the script runs in its own process group, which is killed at the end whatever happened.
# Args: BIN_DIR SOURCE_DIR PYTHON PYTHONPATH (the built python package) PYTHON_BUILT ("built" when this build tree
# builds the Python module). Exit 77 (skipped) without curl, or when the Python module is not part of the build; a
# module that is built but does not import is a failure.
set -euo pipefail
bin=$1 src=$2 python=$3 pypath=$4 python_built=${5:-}
doc="$src/docs/migrating-from-safe-browsing-v4.md"
command -v curl > /dev/null || { echo "SKIPPED: curl is not installed"; exit 77; }
if ! err=$(PYTHONPATH="$pypath" "$python" -c "import urlguard" 2>&1); then
  if [ "$python_built" != built ]; then echo "SKIPPED: the urlguard Python module is not built"; exit 77; fi
  echo "FAIL: the urlguard Python module is built but does not import from $pypath:"; echo "$err"; exit 1
fi
. "$src/tests/process_group.sh"  # stop_group: the example's process group, ended whatever happened
base=${URLGUARD_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
work=$(mktemp -d "$base/migration_example_test.XXXXXX")
pgid=""
cleanup() {
  stop_group "$pgid"
  rm -rf "$work"
}
trap cleanup EXIT

# Two free loopback ports, from the kernel.
read -r port1 port2 < <("$python" -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

# The blocks, in order. A python block becomes a here-document for the interpreter.
awk -v py="$python" '
  /^```sh \{test\}$/     { inside = "sh"; next }
  /^```python \{test\}$/ { inside = "py"; print py " - << '\''URLGUARD_PY_BLOCK'\''"; next }
  /^```/ && inside != "" { if (inside == "py") print "URLGUARD_PY_BLOCK"; inside = ""; next }
  inside != ""           { print }
' "$doc" | sed -e "s/127\.0\.0\.1:8080/127.0.0.1:$port1/g" -e "s/127\.0\.0\.1:8089/127.0.0.1:$port2/g" \
  > "$work/example.sh"
blocks=$(grep -c -E '^```(sh|python) \{test\}$' "$doc" || true)
if [ "$blocks" -lt 5 ]; then echo "FAIL: $doc has $blocks test blocks, the example needs 5"; exit 1; fi
grep -q "127.0.0.1:$port1" "$work/example.sh" || { echo "FAIL: the example uses no server on 127.0.0.1:8080"; exit 1; }

cd "$work"
mkdir run
set +e
(cd run && PATH="$bin:$PATH" PYTHONPATH="$pypath" PYTHONDONTWRITEBYTECODE=1 \
   exec setsid bash -c 'set -euo pipefail -x; . ../example.sh' > ../example.log 2>&1) &
pgid=$!
wait "$pgid"
rc=$?
set -e
if [ "$rc" != 0 ]; then
  echo "FAIL: the worked example exited with $rc; its trace:"
  tail -60 example.log
  for log in run/server.log run/daemon.log; do [ -f "$log" ] && { echo "== $log"; tail -20 "$log"; }; done
  exit 1
fi
echo "migration example: $blocks blocks ran"
