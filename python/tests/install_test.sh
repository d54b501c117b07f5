#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build tree into a scratch prefix and imports the urlguard package from there, as a user of the
# installed tree (or a Debian package) would: only PYTHONPATH to the package directory, liburlguard found through
# the module's RPATH. Args: BUILD_DIR PYTHON SITE_DIR_RELATIVE_TO_PREFIX SNAPSHOT.
set -euo pipefail
build=$1 python=$2 site=$3 snapshot=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
pkg="$work/prefix/$site/urlguard"
for f in __init__.py __init__.pyi _types.py py.typed; do test -f "$pkg/$f" || { echo "missing $pkg/$f"; exit 1; }; done
module=$(ls "$pkg"/_urlguard*.so)
# Only the public library: liburlguard.so.0 is NEEDED and the library's code is not copied in (Checker::Open is
# an undefined symbol the shared library provides).
needed=$(objdump -p "$module")
undefined=$(nm -D -C --undefined-only "$module")
grep -q "NEEDED.*liburlguard.so.0" <<< "$needed" || { echo "$module does not link liburlguard.so.0"; exit 1; }
grep -q "urlguard::Checker::Open" <<< "$undefined" || { echo "$module carries its own copy of the library"; exit 1; }
cd "$work"  # not the source tree: nothing else named urlguard on the path
PYTHONPATH="$work/prefix/$site" PYTHONDONTWRITEBYTECODE=1 "$python" - "$snapshot" "$pkg" <<'PY'
import sys
import urlguard
assert urlguard.__file__.startswith(sys.argv[2]), urlguard.__file__
c = urlguard.Checker(sys.argv[1])
found = urlguard.extract_urls("have a look at hxxp://login.evil[.]example/ ok?")
verdicts = c.check_many(u.url for u in found)
assert [v.verdict for v in verdicts] == ["hit"], verdicts
assert c.check("https://www.example.com/").verdict == "safe"
import importlib.metadata
meta = importlib.metadata.metadata("urlguard")
assert meta["License"] == "Apache-2.0", meta["License"]
assert importlib.metadata.version("urlguard") == urlguard.__version__, importlib.metadata.version("urlguard")
print("python install: ok,", urlguard.__file__)
PY
