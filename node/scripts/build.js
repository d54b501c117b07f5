#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Builds build/urlguard.node from source: package.json's "install" script, so `npm install` runs it. Needs CMake
// and a C++20 compiler; the Node.js headers come from the running node's prefix, node-addon-api from the
// dependency npm installed next to this package (docs/node.md, "Install"). Two cases:
//
//   - inside a urlguard source tree (node/ of the repository, or `npm install /path/to/urlguard/node`): configures
//     the whole project in build/ (no tests, no Python module) and builds liburlguard and the addon;
//   - anywhere else (the packed package from `npm pack`): builds only the addon, against the liburlguard that is
//     installed (its CMake package: liburlguard-dev, or `cmake --install` of the project). Set URLGUARD_PREFIX
//     when it is not under a standard prefix (it becomes CMAKE_PREFIX_PATH).
//
// Environment: URLGUARD_PREFIX (above), URLGUARD_BUILD_TYPE (default Release), CMAKE_GENERATOR and the compiler
// launcher variables as CMake reads them.
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const path = require('path');

const here = path.resolve(__dirname, '..');
const build = path.join(here, 'build');
const tree = path.resolve(here, '..');
const inTree = fs.existsSync(path.join(tree, 'CMakeLists.txt')) &&
  fs.existsSync(path.join(tree, 'include', 'urlguard', 'checker.h'));

function fail(message) {
  console.error(`urlguard: ${message}`);
  process.exit(1);
}

function run(cmd, args) {
  console.log(`urlguard: ${cmd} ${args.join(' ')}`);
  const r = childProcess.spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.error) fail(`${cmd}: ${r.error.message}${r.error.code === 'ENOENT' ? ' (is it installed?)' : ''}`);
  if (r.status !== 0) fail(`${cmd} exited with ${r.status}`);
}

let addonApi;
try {
  addonApi = path.resolve(require('node-addon-api').include_dir);
} catch (e) {
  fail(`node-addon-api is missing (${e.message}); npm installs it as a dependency of this package`);
}
const nodeHeaders = path.resolve(path.dirname(process.execPath), '..', 'include', 'node');
const args = [
  '-S', inTree ? tree : here, '-B', build,
  `-DCMAKE_BUILD_TYPE=${process.env.URLGUARD_BUILD_TYPE || 'Release'}`,
  `-DURLGUARD_NODE_ADDON_API_DIR=${addonApi}`,
  `-DURLGUARD_NODE_OUTPUT_DIR=${build}`,
];
if (fs.existsSync(path.join(nodeHeaders, 'node_api.h'))) args.push(`-DURLGUARD_NODE_INCLUDE_DIR=${nodeHeaders}`);
if (inTree) {
  args.push('-DURLGUARD_BUILD_TESTS=OFF', '-DURLGUARD_BUILD_PYTHON=OFF', '-DURLGUARD_BUILD_NODE=ON');
}
if (process.env.URLGUARD_PREFIX) args.push(`-DCMAKE_PREFIX_PATH=${process.env.URLGUARD_PREFIX}`);
if (!process.env.CMAKE_GENERATOR && childProcess.spawnSync('ninja', ['--version']).status === 0) {
  args.push('-G', 'Ninja');
}
run('cmake', args);
// All cores unless CMAKE_BUILD_PARALLEL_LEVEL says otherwise (cmake reads it when --parallel is not given).
run('cmake', ['--build', build, '--target', 'urlguard_node',
  ...(process.env.CMAKE_BUILD_PARALLEL_LEVEL ? [] : ['--parallel'])]);
console.log(`urlguard: built ${path.join(build, 'urlguard.node')}`);
