// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard.Client on a data directory synced from a real urlguard-server on 127.0.0.1.
'use strict';

const assert = require('node:assert/strict');
const fs = require('fs');
const net = require('net');
const path = require('path');
const { after, before, test } = require('node:test');

const urlguard = require('..');
const { cliJsonLines, run, startServer, workdir } = require('./helpers');

const CLEAN = Array.from({ length: 1500 }, (_, i) => `https://news-site-${i}.example.org/articles/2026/story-${i}.html`);

const dir = workdir('client');
let server;
let client;
const data = path.join(dir, 'client-data');

before(async () => {
  server = await startServer(dir);
  fs.mkdirSync(data);
  client = new urlguard.Client(data, {
    serverUrl: server.url, publicKeyFiles: [server.publicKey], lists: ['phishing', 'malware'], watch: false,
  });
});

after(async () => {
  if (client) client.close();
  if (server) await server.stop();
});

test('subscribed lists are stale until a sync installs them', async () => {
  assert.deepEqual(client.lists().map((l) => [l.list, l.version, l.stale, l.staleReason]),
    [['malware', 0, true, 'not_installed'], ['phishing', 0, true, 'not_installed']]);
  assert.equal(client.checkLocal('https://news-site-1.example.org/').stale, true);
  // Off the JS thread: the promise resolves with the reports of the first sync.
  const reports = await client.syncNowAsync();
  assert.deepEqual(reports.map((r) => [r.list, r.result, r.fromVersion, r.toVersion, r.usedDiff, r.error]),
    [['malware', 'updated', 0, 1, false, null], ['phishing', 'updated', 0, 1, false, null]]);
  assert.ok(reports.every((r) => r.bytes > 0));
  client.refresh();
  const lists = client.lists();
  assert.deepEqual(lists.map((l) => [l.list, l.version, l.lastSyncResult, l.stale, l.staleReason]),
    [['malware', 1, 'ok', false, ''], ['phishing', 1, 'ok', false, '']]);
  assert.ok(lists.every((l) => l.entries > 0 && l.expiresUnix > l.createdUnix && l.nextSyncUnix > 0));
  assert.ok(client.stats().generation >= 1);
  assert.ok(client.syncNow().every((r) => ['up_to_date', 'not_modified'].includes(r.result)));
});

test('local and verified verdicts', async () => {
  assert.equal(client.checkLocal('http://evil.example/login').kind, 'hit');
  const v = client.check('http://evil.example/login');
  assert.deepEqual([v.kind, v.list, v.expression, v.threat], ['malicious', 'phishing', 'evil.example/', 'phishing']);
  assert.equal(client.check('https://www.wikipedia.org/').kind, 'safe');
  assert.equal(client.check('javascript:alert(1)').kind, 'invalid');
  // At a 1% filter rate some clean URLs hit locally; the server's answer makes them safe_verified.
  const kinds = new Set((await client.checkManyAsync(CLEAN)).map((x) => x.kind));
  assert.deepEqual([...kinds].sort(), ['safe', 'safe_verified']);
  const stats = client.stats();
  assert.ok(stats.verifications >= 1 && stats.verificationFailures === 0, JSON.stringify(stats));
  assert.ok(stats.byVerdict.malicious >= 1 && stats.byVerdict.safe_verified >= 1);
  assert.ok(stats.lookups >= CLEAN.length + 2);
});

test('verdicts equal `urlguard check --json`, sync and async', async () => {
  const urls = ['http://evil.example/login', 'http://downloads.example/setup.exe', 'https://www.wikipedia.org/',
    'mailto:x@y.example', ...CLEAN.slice(0, 300)];
  const input = urls.join('\n') + '\n';
  const cli = cliJsonLines(['check', '--json', '--data-dir', data, '--verify', '--server', server.url, '-'], input);
  assert.deepEqual(client.checkMany(urls, { canonical: true }).map((v) => v.toJSON()), cli);
  assert.deepEqual((await client.checkManyAsync(urls, { canonical: true })).map((v) => v.toJSON()), cli);
  assert.deepEqual((await Promise.all(urls.slice(0, 20).map((u) => client.checkAsync(u, { canonical: true }))))
    .map((v) => v.toJSON()), cli.slice(0, 20));
  const local = cliJsonLines(['check', '--json', '--data-dir', data, '-'], input);
  assert.deepEqual(client.checkMany(urls, { canonical: true, local: true }).map((v) => v.toJSON()), local);
  assert.deepEqual((await client.checkAsync(urls[0], { canonical: true, local: true })).toJSON(), local[0]);
});

test('a wrong key fails per list, and nothing installed is stale', () => {
  const other = path.join(dir, 'other-keys');
  run(['urlguard-publish', 'keygen', '--out', other]);
  const fresh = path.join(dir, 'client-wrong-key');
  fs.mkdirSync(fresh);
  const c = new urlguard.Client(fresh, {
    serverUrl: server.url, publicKeyFiles: [path.join(other, 'urlguard-ed25519.pub.pem')], lists: ['phishing'],
    watch: false,
  });
  const [r, ...rest] = c.syncNow();
  assert.equal(rest.length, 0);
  assert.equal(r.result, 'failed');
  assert.ok(r.error.startsWith('permission_denied'), r.error);
  const v = c.check('http://evil.example/');
  assert.deepEqual([v.kind, v.stale], ['safe', true]);
  c.close();
});

test('option errors', async () => {
  assert.throws(() => new urlguard.Client(''), (e) => e instanceof urlguard.InvalidArgumentError &&
    e.code === urlguard.StatusCode.INVALID_ARGUMENT);
  assert.throws(() => new urlguard.Client(dir, { publicKeyFiles: [path.join(dir, 'no-such-key.pem')] }),
    urlguard.NotFoundError);
  assert.throws(() => new urlguard.Client(dir, { lists: 'phishing' }), TypeError);
  assert.throws(() => new urlguard.Client(dir, { verifyDeadlineMs: -1 }), TypeError);
  assert.throws(() => new urlguard.Client(dir, { keyRotationFiles: ['r.json'] }), urlguard.InvalidArgumentError);
  const offline = new urlguard.Client(data, { watch: false });
  assert.throws(() => offline.syncNow(), (e) => e instanceof urlguard.UrlguardError &&
    e.code === urlguard.StatusCode.INVALID_ARGUMENT);  // no server, no keys
  await assert.rejects(offline.syncNowAsync(), urlguard.InvalidArgumentError);
  offline.close();
  assert.equal(offline.closed, true);
  assert.throws(() => offline.check('http://evil.example/'), urlguard.FailedPreconditionError);
  await assert.rejects(offline.checkAsync('http://evil.example/'), urlguard.FailedPreconditionError);
  await assert.rejects(offline.syncNowAsync(), urlguard.FailedPreconditionError);
});

test('checkAsync waits for verification off the JS thread', async () => {
  // The verification server runs in this process, on the JS thread's event loop: it can read the request and
  // hang up only while the lookup that sent it waits somewhere else. If checkAsync ran the lookup on the JS
  // thread, the server would get its turn only after the lookup gave up at its 20 s deadline: the verdict's error
  // would be the timeout, not the hang-up.
  let requestSeen = false;
  const verifier = net.createServer((socket) => {
    socket.once('data', () => {
      requestSeen = true;
      socket.destroy();  // hang up: the lookup learns at once that no answer comes
    });
  });
  await new Promise((resolve) => verifier.listen(0, '127.0.0.1', resolve));
  const c = new urlguard.Client(data, {
    serverUrl: `http://127.0.0.1:${verifier.address().port}`, verifyDeadlineMs: 20000, watch: false,
  });
  try {
    // A hit no earlier test verified (not in the result cache).
    const v = await c.checkAsync('http://www.phish.test/wp-admin/async-test');
    assert.equal(requestSeen, true, 'the verdict came before the server could read the request');
    assert.equal(v.kind, 'unverified_hit');
    assert.match(v.error, /^unavailable: verify: /);
    assert.doesNotMatch(v.error, /timed out|timeout/i, 'the lookup waited for its deadline');
  } finally {
    c.close();
    await new Promise((resolve) => verifier.close(resolve));
  }
});
