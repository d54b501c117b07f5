#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the urlguard npm package as a user of an installed liburlguard would: `cmake --install` of the build
# tree into a scratch prefix (what liburlguard-dev ships), `npm pack` of node/, then `npm install` of that tarball
# in a scratch app, which builds the addon from source (package.json "install": scripts/build.js, standalone,
# against the prefix). Offline: node-addon-api is installed from the local copy the project build found.
# Then require('urlguard') from the app. Args: BUILD_DIR NODE_ADDON_API_DIR SNAPSHOT.
set -euo pipefail
build=$(realpath "$1") addon_api=$(realpath "$2") snapshot=$(realpath "$3")
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset URLGUARD_NODE_ADDON  # index.js must find its own build/urlguard.node
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
# Both packages as tarballs, as the registry serves them (a folder would be linked, and npm would then want the
# folder's devDependencies).
(cd "$addon_api" && npm pack --silent --pack-destination "$work" > "$work/pack-addon-api.log")
(cd "$here" && npm pack --silent --pack-destination "$work" > "$work/pack.log")
addon_api_tarball=$(ls "$work"/node-addon-api-*.tgz)
tarball=$(ls "$work"/urlguard-*.tgz)
tar tzf "$tarball" | sort > "$work/files"
for f in package/package.json package/index.js package/index.d.ts package/CMakeLists.txt package/scripts/build.js \
         package/src/addon.cc package/cmake/find_node_headers.cmake; do
  grep -qx "$f" "$work/files" || { echo "$tarball lacks $f"; cat "$work/files"; exit 1; }
done
if grep -q "^package/test/" "$work/files"; then echo "$tarball ships the tests"; exit 1; fi
mkdir "$work/app"
cd "$work/app"
echo '{"name": "app", "version": "1.0.0", "private": true}' > package.json
URLGUARD_PREFIX="$work/prefix" npm install --offline --no-audit --no-fund --foreground-scripts \
  "$addon_api_tarball" "$tarball" > "$work/npm.log" 2>&1 || { tail -40 "$work/npm.log"; exit 1; }
addon="$work/app/node_modules/urlguard/build/urlguard.node"
test -f "$addon" || { echo "no $addon"; tail -40 "$work/npm.log"; exit 1; }
# Only the public library: liburlguard.so.0 from the prefix is NEEDED, the library's code is not copied in.
# (Outputs captured first: grep -q closing a pipe early would fail the pipeline under pipefail.)
needed=$(objdump -p "$addon")
undefined=$(nm -D -C --undefined-only "$addon")
resolved=$(ldd "$addon")
grep -q "NEEDED.*liburlguard.so.0" <<< "$needed" || { echo "$addon does not link liburlguard.so.0"; exit 1; }
grep -q "urlguard::Checker::Open" <<< "$undefined" || { echo "$addon carries its own copy of the library"; exit 1; }
grep -q "liburlguard.so.0 => $work/prefix/" <<< "$resolved" ||
  { grep liburlguard <<< "$resolved"; echo "not the prefix's library"; exit 1; }
node - "$snapshot" <<'JS'
const urlguard = require('urlguard');
const assert = require('assert');
assert.ok(require.resolve('urlguard').includes('/app/node_modules/urlguard/'));
const c = new urlguard.Checker(process.argv[2]);
const found = urlguard.extractUrls('have a look at hxxp://login.evil[.]example/ ok?');
assert.deepEqual(c.checkMany(found.map((u) => u.url)).map((v) => v.kind), ['hit']);
assert.equal(c.check('https://www.example.com/').kind, 'safe');
assert.throws(() => new urlguard.Checker('/nonexistent.ugs'), urlguard.NotFoundError);
console.log('node install: ok,', require.resolve('urlguard'));
JS
