// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// What the binding's tests share (node/CMakeLists.txt sets the environment): the real urlguard binaries of the
// build tree, snapshot files they build from fixtures/lists, the CLI's JSON for reference, and a real
// urlguard-server on 127.0.0.1.
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const BIN = process.env.URLGUARD_BIN_DIR || path.join(__dirname, '..', '..', 'build', 'bin');
const SRC = process.env.URLGUARD_SOURCE_DIR || path.join(__dirname, '..', '..');

// Runs a urlguard binary; returns {status, stdout, stderr}. Throws on a non-zero exit when check is set.
function run(args, { check = true, input } = {}) {
  const [bin, ...rest] = args;
  const r = childProcess.spawnSync(path.join(BIN, bin), rest.map(String),
    { input, encoding: 'utf8', timeout: 120000, maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  if (check && r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r;
}

// `urlguard ARGS`: one parsed JSON object per output line (exit statuses 0-3 are results, not failures).
function cliJsonLines(args, input) {
  const r = run(['urlguard', ...args], { check: false, input });
  if (![0, 1, 2, 3].includes(r.status)) throw new Error(`urlguard ${args.join(' ')}: ${r.status} ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l).map((l) => JSON.parse(l));
}

// A fresh scratch directory under URLGUARD_TEST_TMPDIR (removed when the process exits).
function workdir(prefix) {
  const base = process.env.URLGUARD_TEST_TMPDIR || os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, `node_test.${prefix}.`));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// phishing.ugs and malware.ugs from fixtures/lists, built with `urlguard-publish build`.
function buildSnapshots(dir) {
  return ['phishing', 'malware'].map((name) => {
    const out = path.join(dir, `${name}.ugs`);
    run(['urlguard-publish', 'build', '--list', name, '--input', path.join(SRC, 'fixtures', 'lists', `${name}.txt`),
      '--out', out]);
    return out;
  });
}

// A signed repository (keygen, then both fixture lists published at a 1% filter rate) served by urlguard-server
// on 127.0.0.1 (a free port). Resolves {url, publicKey, repo, stop()}.
async function startServer(dir) {
  const keys = path.join(dir, 'keys');
  const repo = path.join(dir, 'repo');
  run(['urlguard-publish', 'keygen', '--out', keys]);
  const key = path.join(keys, 'urlguard-ed25519.pem');
  for (const name of ['phishing', 'malware']) {
    run(['urlguard-publish', 'publish', '--repo', repo, '--key', key, '--list', name, '--input',
      path.join(SRC, 'fixtures', 'lists', `${name}.txt`), '--fp-rate', '0.01']);
  }
  const server = childProcess.spawn(path.join(BIN, 'urlguard-server'), ['--repo', repo, '--listen', '127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (d) => { stderr += d; });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n')) {
        if (line.startsWith('listening on http://127.0.0.1:')) resolve(line.split(' ').pop());
        else reject(new Error(`urlguard-server said ${line}`));
      }
    });
    server.on('exit', (code) => reject(new Error(`urlguard-server exited ${code}: ${stderr}`)));
  });
  const stop = () => new Promise((resolve) => {
    if (server.exitCode !== null) return resolve();
    server.on('exit', () => resolve());
    server.kill('SIGTERM');
  });
  return { url, publicKey: path.join(keys, 'urlguard-ed25519.pub.pem'), repo, stop };
}

module.exports = { BIN, SRC, run, cliJsonLines, workdir, buildSnapshots, startServer };
