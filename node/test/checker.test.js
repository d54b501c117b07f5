// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard.Checker against snapshot files built by the real publisher; verdicts compared with the CLI's JSON.
'use strict';

const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { test } = require('node:test');

const urlguard = require('..');
const { buildSnapshots, cliJsonLines, workdir } = require('./helpers');

const dir = workdir('checker');
const snapshots = buildSnapshots(dir);
const checker = new urlguard.Checker(snapshots);

const HITS = [
  ['http://evil.example/', 'phishing', 'domain', 'evil.example/'],
  ['https://a.b.evil.example/any/path?q=1', 'phishing', 'domain', 'evil.example/'],
  ['HTTP://Secure-Bank.EXAMPLE/login.php#form', 'phishing', 'url', 'secure-bank.example/login.php'],
  ['http://downloads.example/setup.exe', 'malware', 'url', 'downloads.example/setup.exe'],
  ['http://0xC6.51.100.23/payload', 'malware', 'ip', '198.51.100.0/24'],
  ['http://[2001:db8:bad::1]/x', 'malware', 'ip', '2001:db8:bad::/48'],
];
const SAFE = ['https://www.wikipedia.org/', 'http://example.com/index.html', 'http://secure-bank.example/other.php',
  'notevil.example'];
const INVALID = ['javascript:alert(1)', 'http://', 'mailto:someone@example.com', 'x'.repeat(9000)];

test('version is the loaded library\'s', () => {
  assert.match(urlguard.version, /^\d+\.\d+\.\d+$/);
});

test('hits name the list, layer and expression', () => {
  for (const [url, list, layer, expression] of HITS) {
    const v = checker.check(url);
    assert.equal(v instanceof urlguard.Verdict, true);
    assert.equal(v.kind, 'hit', url);
    assert.deepEqual([v.list, v.layer, v.expression], [list, layer, expression]);
    assert.equal(v.sha256, urlguard.expressionSha256(expression));
    assert.equal(v.listVersion, 1);
    assert.deepEqual(v.matches[0], { list, layer, expression, sha256: v.sha256, listVersion: 1 });
    assert.equal(v.error, null);
    assert.equal(v.stale, false);
    assert.equal(v.allowlisted, false);
    assert.equal(v.input, url);
  }
});

test('safe and invalid verdicts', () => {
  for (const url of SAFE) {
    const v = checker.check(url);
    assert.equal(v.kind, 'safe', url);
    assert.deepEqual([v.list, v.layer, v.matches, v.error], [null, null, [], null]);
  }
  for (const url of INVALID) {
    const v = checker.check(url);
    assert.equal(v.kind, 'invalid', url.slice(0, 40));
    assert.ok(v.error);
    assert.deepEqual(v.matches, []);
  }
});

test('a Buffer is checked as bytes and kept as the input; other types are TypeErrors', () => {
  const input = Buffer.from('http://evil.example/');
  const v = checker.check(input);
  assert.equal(v.kind, 'hit');
  assert.equal(v.input, input);
  assert.equal(checker.check(new Uint8Array(Buffer.from('http://evil.example/'))).kind, 'hit');
  assert.throws(() => checker.check(42), TypeError);
  assert.throws(() => checker.check(), TypeError);
  assert.throws(() => checker.check('http://evil.example/', 'canonical'), TypeError);
  assert.throws(() => checker.checkMany('http://evil.example/'), TypeError);
  assert.throws(() => checker.checkMany(['http://evil.example/', {}]), TypeError);
});

test('verdicts equal the CLI\'s JSON', () => {
  const urls = [...HITS.map((h) => h[0]), ...SAFE, ...INVALID.slice(0, 3), 'http://münchen-bank.example/konto'];
  const args = ['check', '--json'];
  for (const s of snapshots) args.push('--snapshot', s);
  const cli = cliJsonLines([...args, '-'], urls.join('\n') + '\n');
  assert.equal(cli.length, urls.length);
  urls.forEach((url, i) => {
    const v = checker.check(url, { canonical: true });
    assert.deepEqual(JSON.parse(JSON.stringify(v)), cli[i], url);
    assert.equal(v.canonical, cli[i].canonical);
  });
});

test('checkMany equals check, in order', () => {
  const urls = [...HITS.map((h) => h[0]), ...SAFE, ...INVALID, Buffer.from('http://evil.example/')];
  const many = checker.checkMany(urls, { canonical: true });
  assert.deepEqual(many.map((v) => v.toJSON()), urls.map((u) => checker.check(u, { canonical: true }).toJSON()));
  assert.equal(many.at(-1).input, urls.at(-1));
  assert.deepEqual(checker.checkMany([]), []);
});

test('checkAsync and checkManyAsync resolve to what check and checkMany return', async () => {
  const urls = [...HITS.map((h) => h[0]), ...SAFE, ...INVALID];
  const pending = checker.checkAsync(urls[0], { canonical: true });
  assert.equal(pending instanceof Promise, true);
  assert.deepEqual((await pending).toJSON(), checker.check(urls[0], { canonical: true }).toJSON());
  const many = await checker.checkManyAsync(urls);
  assert.deepEqual(many.map((v) => v.toJSON()), checker.checkMany(urls).map((v) => v.toJSON()));
  assert.equal(many[0].input, urls[0]);
  // Many at once, on the libuv pool's threads: every one equals the synchronous answer.
  const all = await Promise.all(urls.map((u) => checker.checkAsync(u)));
  assert.deepEqual(all.map((v) => v.kind), urls.map((u) => checker.check(u).kind));
  // Bad arguments reject; they do not throw.
  await assert.rejects(checker.checkAsync(42), TypeError);
  await assert.rejects(checker.checkManyAsync('x'), TypeError);
});

test('checkHost and checkIp', () => {
  assert.equal(checker.checkHost('a.b.evil.example').kind, 'hit');
  assert.equal(checker.checkHost('good.example').kind, 'safe');
  assert.equal(checker.checkIp('198.51.100.7').expression, '198.51.100.0/24');
  assert.equal(checker.checkIp('203.0.113.1').kind, 'safe');
  assert.equal(checker.checkIp('not-an-ip').kind, 'invalid');
});

test('lists describe the open files', () => {
  const lists = checker.lists();
  assert.deepEqual(lists.map((l) => l.name), ['phishing', 'malware']);
  assert.deepEqual(lists.map((l) => l.path), snapshots);
  for (const l of lists) {
    assert.equal(l.version, 1);
    assert.ok(l.entries > 0);
    assert.equal(l.bytes, fs.statSync(l.path).size);
    assert.match(l.sha256, /^[0-9a-f]{64}$/);
  }
  assert.equal(lists[1].layers.ip.entries, 3);
  assert.ok(Object.keys(lists[1].layers).every((k) => ['domain', 'url', 'ip'].includes(k)));
});

test('a missing file is a NotFoundError with its code', () => {
  const missing = path.join(dir, 'absent.ugs');
  assert.throws(() => new urlguard.Checker(missing), (e) => {
    assert.equal(e instanceof urlguard.NotFoundError, true);
    assert.equal(e instanceof urlguard.UrlguardError, true);
    assert.equal(e instanceof Error, true);
    assert.equal(e.name, 'NotFoundError');
    assert.equal(e.code, urlguard.StatusCode.NOT_FOUND);
    assert.equal(e.codeName, 'not_found');
    assert.ok(e.message.startsWith('not_found: ') && e.message.includes('absent.ugs'), e.message);
    assert.equal(e.message, `not_found: ${e.statusMessage}`);
    return true;
  });
});

test('damaged snapshots are CorruptionErrors', () => {
  const good = fs.readFileSync(snapshots[0]);
  const damaged = {
    truncate: good.subarray(0, good.length >> 1),
    flip: Buffer.from(good).fill(good[good.length - 10] ^ 0xff, good.length - 10, good.length - 9),
    foreign: Buffer.concat([Buffer.from('PK\x03\x04 not a snapshot'), Buffer.alloc(100)]),
  };
  for (const [name, bytes] of Object.entries(damaged)) {
    const file = path.join(dir, `damaged-${name}.ugs`);
    fs.writeFileSync(file, bytes);
    assert.throws(() => new urlguard.Checker([file]), (e) => {
      assert.equal(e instanceof urlguard.CorruptionError, true, `${name}: ${e}`);
      assert.equal(e.code, 3);
      assert.ok(e.message.includes(file));
      return true;
    });
  }
});

test('the same list twice is an InvalidArgumentError', () => {
  assert.throws(() => new urlguard.Checker([snapshots[0], snapshots[0]]), urlguard.InvalidArgumentError);
  assert.throws(() => new urlguard.Checker(snapshots, 'verify'), TypeError);
});

test('openDirectory opens every snapshot of a directory', () => {
  const only = path.join(dir, 'only-snapshots');
  fs.mkdirSync(only);
  for (const s of snapshots) fs.copyFileSync(s, path.join(only, path.basename(s)));
  const c = urlguard.Checker.openDirectory(only);
  assert.equal(c instanceof urlguard.Checker, true);
  assert.deepEqual(c.lists().map((l) => l.name).sort(), ['malware', 'phishing']);
  assert.equal(c.check('http://evil.example/').kind, 'hit');
  const empty = path.join(dir, 'empty-dir');
  fs.mkdirSync(empty);
  assert.throws(() => urlguard.Checker.openDirectory(empty), urlguard.NotFoundError);
});

test('close: later calls fail, lookups in flight finish', async () => {
  const c = new urlguard.Checker(snapshots);
  const urls = Array.from({ length: 20000 }, (_, i) => `http://host${i}.evil.example/p${i}`);
  const inFlight = c.checkManyAsync(urls);
  c.close();
  assert.equal(c.closed, true);
  assert.throws(() => c.check('http://evil.example/'), urlguard.FailedPreconditionError);
  await assert.rejects(c.checkAsync('http://evil.example/'), urlguard.FailedPreconditionError);
  const verdicts = await inFlight;
  assert.equal(verdicts.length, urls.length);
  assert.ok(verdicts.every((v) => v.kind === 'hit'));
});
