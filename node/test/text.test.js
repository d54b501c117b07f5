// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// canonicalize / scan / extractUrls against the CLI's `canon --json` and `scan --json` output.
'use strict';

const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { test } = require('node:test');

const urlguard = require('..');
const { buildSnapshots, cliJsonLines, workdir } = require('./helpers');

const CANON = [
  'HTTP://Login.EVIL.example:8080/account/../verify?id=7',
  'http://www.GOOgle.com/',
  'http://%31%36%38%2e%31%38%38%2e%39%39%2e%32%36/%2E%73%65%63%75%72%65/%77%77%77%2E%65%62%61%79%2E%63%6F%6D/',
  'http://3279880203/blah',
  'www.google.com/q?r?s',
  'http://[2001:DB8::1]:80/a/./b/../c',
  'http://münchen.example/straße',
  'evil.example',
  'http://a.b.c.d.e.f.g/1/2/3/4/5/6.html?x=y',
];
const INVALID = ['javascript:alert(1)', 'http://', 'http://[::zz]/', 'mailto:a@b.example'];

const MESSAGES = [
  'morning! the doc is at https://docs.example.com/q3 btw',
  'URGENT verify your account: hxxp://login[.]evil[.]example/secure now',
  'release notes for v1.2.3 are in readme.txt, mail me at bob@example.com',
  'two: www.example.org/x and 203.0.113.50/paypal/ plus https://münchen-bank.example/konto.',
  'Grüße — see evil[.]example/a and http://secure-bank.example/login.php',
  'an emoji 😀 before hxxps://evil[.]example/after-astral',
];

test('canonicalize equals the CLI', () => {
  const cli = cliJsonLines(['canon', '--json', '--', ...CANON, ...INVALID]);
  assert.equal(cli.length, CANON.length + INVALID.length);
  CANON.forEach((url, i) => {
    const form = urlguard.canonicalize(url);
    assert.deepEqual({
      input: form.input,
      canonical: form.url,
      expressions: form.expressions.map((e) => ({ expression: e.expression, sha256: e.sha256 })),
      error: null,
    }, cli[i], url);
    for (const e of form.expressions) assert.equal(e.sha256, urlguard.expressionSha256(e.expression));
  });
  INVALID.forEach((url, i) => {
    const expected = cli[CANON.length + i];
    assert.equal(expected.canonical, null);
    assert.throws(() => urlguard.canonicalize(url), (e) => {
      assert.equal(e instanceof urlguard.InvalidArgumentError, true);
      assert.equal(e.code, urlguard.StatusCode.INVALID_ARGUMENT);
      assert.equal(e.statusMessage, expected.error);
      return true;
    });
  });
});

test('canonical parts', () => {
  const f = urlguard.canonicalize('HTTP://Login.EVIL.example:8080/account/../verify?id=7');
  assert.deepEqual([f.url, f.scheme, f.host, f.path, f.query],
    ['http://login.evil.example/verify?id=7', 'http', 'login.evil.example', '/verify', 'id=7']);
  assert.deepEqual(f.expressions.at(-1),
    { expression: 'evil.example/', layer: 'domain', sha256: urlguard.expressionSha256('evil.example/') });
  assert.equal(urlguard.canonicalize('http://a.example/').query, null);
  assert.equal(urlguard.canonicalize('http://a.example/?').query, '');
  assert.throws(() => urlguard.canonicalize(7), TypeError);
});

test('scan equals the CLI, and each found URL indexes the string', () => {
  const dir = workdir('text');
  const snapshots = buildSnapshots(dir);
  const checker = new urlguard.Checker(snapshots);
  const chat = path.join(dir, 'chat.txt');
  fs.writeFileSync(chat, MESSAGES.join('\n') + '\n');
  const args = ['scan', '--json'];
  for (const s of snapshots) args.push('--snapshot', s);
  const cli = cliJsonLines([...args, chat]);
  const ours = [];
  MESSAGES.forEach((message, i) => {
    for (const u of urlguard.extractUrls(message)) {
      assert.equal(message.slice(u.begin, u.end), u.text);
      ours.push({ ...checker.check(u.url).toJSON(), file: chat, line: i + 1, text: u.text, defanged: u.defanged });
    }
  });
  assert.deepEqual(ours, cli);
  assert.ok(ours.some((d) => d.verdict === 'hit') && ours.some((d) => d.defanged));
});

test('offsets: UTF-16 indices for a string, bytes for a Buffer', () => {
  const text = 'ü😀 hxxp://evil[.]example/x';
  const r = urlguard.scan(text);
  assert.equal(r.truncated, false);
  assert.equal(r.scannedBytes, Buffer.byteLength(text));
  assert.equal(r.urls.length, 1);
  const [u] = r.urls;
  assert.deepEqual([u.begin, u.url, u.defanged, u.hadScheme, u.cut], [4, 'http://evil.example/x', true, true, false]);
  assert.equal(u.text, 'hxxp://evil[.]example/x');
  const bytes = Buffer.from(text);
  const [b] = urlguard.extractUrls(bytes);
  assert.equal(b.begin, 7);
  assert.deepEqual(b.text, bytes.subarray(7));
  assert.deepEqual(urlguard.extractUrls('main.py and README.md, a@b.example'), []);
});

test('scan caps', () => {
  const text = Array.from({ length: urlguard.MAX_FOUND_URLS_PER_TEXT + 5 }, (_, i) => `https://w${i}.example/`)
    .join(' ');
  const r = urlguard.scan(text);
  assert.equal(r.truncated, true);
  assert.equal(r.urls.length, urlguard.MAX_FOUND_URLS_PER_TEXT);
});
