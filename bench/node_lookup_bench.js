#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Lookups per second from Node.js (urlguard Checker.check, checkMany and checkManyAsync) next to the C++ number on
// the same snapshot and the same URLs (`urlguard check --timing`: warm ns per lookup, one thread). The Node twin
// of bench/python_lookup_bench.py, same data shape and output.
//
//   URLGUARD_NODE_ADDON=build/node/urlguard.node node bench/node_lookup_bench.js --bin build/bin [--entries 100000]
//
// The list and the URLs are generated deterministically (fixed seed): `entries` domains and URLs, and queries
// that are 90% clean URLs and 10% listed ones, as a browser or chat backend would see them. Build with
// -DCMAKE_BUILD_TYPE=Release for numbers worth quoting (docs/performance.md, docs/node.md).
'use strict';

const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { parseArgs } = require('util');

const urlguard = require('../node');

// mulberry32: a small seeded generator, so every run uses the same list and queries.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hex(random, digits) {
  let s = '';
  while (s.length < digits) s += Math.floor(random() * 0x10000).toString(16).padStart(4, '0');
  return s.slice(0, digits);
}

// Best-of-`repeats` lookups per second of fn() doing n lookups.
async function bestRate(fn, n, repeats) {
  let best = 0;
  for (let r = 0; r < repeats; r++) {
    const t0 = process.hrtime.bigint();
    await fn();
    best = Math.max(best, n / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  return best;
}

async function main() {
  const { values } = parseArgs({
    options: {
      bin: { type: 'string', default: 'build/bin' },
      entries: { type: 'string', default: '100000' },
      queries: { type: 'string', default: '200000' },
      repeats: { type: 'string', default: '5' },
    },
  });
  const entriesCount = Number(values.entries);
  const queryCount = Number(values.queries);
  const repeats = Number(values.repeats);
  const random = rng(20260101);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'urlguard-nodebench.'));
  try {
    const entries = [];
    for (let i = 0; i < entriesCount; i++) {
      const host = `${hex(random, 10)}-${i}.bad-${i % 97}.example`;
      entries.push(i % 2 ? host : `http://${host}/login/${i}.php`);
    }
    fs.writeFileSync(path.join(tmp, 'list.txt'), entries.join('\n') + '\n');
    const snapshot = path.join(tmp, 'bench.ugs');
    const built = childProcess.spawnSync(path.join(values.bin, 'urlguard-publish'),
      ['build', '--list', 'bench', '--input', path.join(tmp, 'list.txt'), '--out', snapshot]);
    if (built.status !== 0) throw new Error(`urlguard-publish build: ${built.stderr}`);
    const queries = [];
    for (let i = 0; i < queryCount; i++) {
      if (i % 10 === 0) {
        const e = entries[Math.floor(random() * entries.length)];
        queries.push(e.startsWith('http') ? e : `https://${e}/some/page?id=${i}`);
      } else {
        queries.push(`https://www.site-${hex(random, 8)}.example.org/articles/${i}/index.html?utm_source=chat&n=${i}`);
      }
    }
    fs.writeFileSync(path.join(tmp, 'queries.txt'), queries.join('\n') + '\n');

    const checker = new urlguard.Checker(snapshot);
    const n = queries.length;
    const hits = checker.checkMany(queries).filter((v) => v.kind === 'hit').length;
    const single = await bestRate(() => { for (const u of queries) checker.check(u); }, n, repeats);
    const batch = await bestRate(() => checker.checkMany(queries), n, repeats);
    const chunked = await bestRate(() => {
      for (let i = 0; i < n; i += 64) checker.checkMany(queries.slice(i, i + 64));
    }, n, repeats);
    const asyncBatch = await bestRate(() => checker.checkManyAsync(queries), n, repeats);

    // The CLI's warm loop runs about 0.2 s: take the best of `repeats` runs, as for the Node numbers.
    let cxxNs = null;
    for (let r = 0; r < repeats; r++) {
      const cli = childProcess.spawnSync(path.join(values.bin, 'urlguard'),
        ['check', '--timing', '--snapshot', snapshot, '-'],
        { input: fs.readFileSync(path.join(tmp, 'queries.txt')), encoding: 'utf8', maxBuffer: 256 << 20 });
      const m = /then (\d+) ns per lookup warm/.exec(cli.stderr || '');
      if (m && (cxxNs === null || Number(m[1]) < cxxNs)) cxxNs = Number(m[1]);
    }

    console.log(`snapshot: ${entriesCount} entries; ${n} query URLs (${hits} hits); node ${process.version}; ` +
      `urlguard ${urlguard.version}`);
    console.log(`${'path'.padEnd(44)} ${'lookups/s'.padStart(12)} ${'ns/lookup'.padStart(10)}`);
    const rows = [['Node Checker.check (one call per URL)', single],
      ['Node Checker.checkMany (all URLs)', batch],
      ['Node Checker.checkMany (batches of 64)', chunked],
      ['Node Checker.checkManyAsync (all URLs)', asyncBatch]];
    if (cxxNs) rows.push(['C++ Checker::Check (urlguard check --timing)', 1e9 / cxxNs]);
    for (const [name, rate] of rows) {
      console.log(`${name.padEnd(44)} ${Math.round(rate).toLocaleString('en-US').padStart(12)} ` +
        `${Math.round(1e9 / rate).toString().padStart(10)}`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
