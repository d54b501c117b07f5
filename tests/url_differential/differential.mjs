// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Browser differential test: urlguard's host reading against a browser-grade WHATWG URL parser (Node's
// `URL`, the same standard Chrome, Firefox and Safari implement).
//
// A deterministic generator (seeded PRNG, no clock, no network) writes thousands of hostile spellings of
// a few listed hosts: slash and backslash runs after the scheme (none at all included), scheme case,
// tabs/CR/LF inside, leading and trailing spaces and C0 controls, userinfo with '@' and ':' (percent-
// escaped delimiters in it too), ports, percent-encoding in the host, fullwidth letters and dots,
// ideographic full stops, trailing dots, soft hyphens, upper-case IDN, punycode, IPv4 in decimal, octal,
// hex and short forms, IPv4-mapped and NAT64 IPv6, IPv6 spellings, and combinations.
//
// For each spelling, `new URL(input)` gives the host a browser contacts (or throws: the browser does not
// navigate). Whenever Node parses it with a special scheme and the host is a listed host, under a listed
// domain, or an address in a listed range, urlguard must report a hit: url_host_dump (the helper next to
// this file) canonicalizes the input with urlguard::Canonicalize() and prints its lookup hosts, which must
// include the listed one. A second pass puts every spelling without whitespace or controls into a chat
// message and requires the same of `urlguard scan`'s extraction (ExtractUrls() then Canonicalize()).
//
// Usage: node differential.mjs <url_host_dump> [seed] [count]. Exit status 0 when no spelling is missed.
import { spawnSync } from 'node:child_process';

const [helper, seedArg = '20240601', countArg = '6000'] = process.argv.slice(2);
if (!helper) {
  console.error('usage: node differential.mjs <url_host_dump> [seed] [count]');
  process.exit(2);
}

// ---- the list --------------------------------------------------------------------------------------

const LISTED_DOMAINS = ['evil.example', 'login.phish.test', 'xn--bcher-kva.example'];
const LISTED_IPV4 = ['192.0.2.77'];
const LISTED_IPV4_RANGES = [['198.51.100.0', 24]];
const LISTED_IPV6 = ['[2001:db8::bad]'];

function ipv4ToInt(s) {
  const p = s.split('.').map(Number);
  return ((p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]) >>> 0;
}
function inListedRange(ip) {
  const v = ipv4ToInt(ip);
  return LISTED_IPV4.includes(ip) ||
         LISTED_IPV4_RANGES.some(([base, len]) => ((v ^ ipv4ToInt(base)) >>> (32 - len)) === 0);
}

// Node's hostname -> what the listed check compares: IPv4 dotted, IPv6 bracketed (IPv4-mapped and
// NAT64 addresses as the IPv4 address they reach), a domain without its root dot.
function target(hostname) {
  if (hostname.startsWith('[')) {
    const m = /^\[(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(hostname);
    if (m) {
      const hi = parseInt(m[1], 16), lo = parseInt(m[2], 16);
      return { kind: 'ipv4', host: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}` };
    }
    return { kind: 'ipv6', host: hostname };
  }
  if (/^\d+\.\d+\.\d+\.\d+$/.test(hostname)) return { kind: 'ipv4', host: hostname };
  return { kind: 'name', host: hostname.replace(/\.$/, '') };
}

// The listed entry a browser-contacted host falls under, or null.
function listedEntry(t) {
  if (t.kind === 'ipv4') return inListedRange(t.host) ? t.host : null;
  if (t.kind === 'ipv6') return LISTED_IPV6.includes(t.host) ? t.host : null;
  for (const d of LISTED_DOMAINS) {
    if (t.host === d || t.host.endsWith('.' + d)) return d;
  }
  return null;
}

// Whether urlguard's lookup hosts hit that entry.
function urlguardHits(entry, lookupHosts) {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(entry)) {
    return lookupHosts.some((h) => /^\d+\.\d+\.\d+\.\d+$/.test(h) && inListedRange(h));
  }
  return lookupHosts.includes(entry);
}

// ---- the generator ---------------------------------------------------------------------------------

// mulberry32: small, fast, and the same on every machine.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(Number(seedArg));
const pick = (a) => a[Math.floor(rand() * a.length)];
const chance = (p) => rand() < p;
const hex2 = (b) => b.toString(16).padStart(2, '0');

function randomCase(s) {
  return [...s].map((c) => (chance(0.5) ? c.toUpperCase() : c.toLowerCase())).join('');
}
function percentEncodeSome(s, p) {
  // Percent-encodes some code points (UTF-8 bytes, random hex case).
  return [...s].map((c) => {
    if (!chance(p)) return c;
    return [...Buffer.from(c, 'utf8')].map((b) => '%' + (chance(0.5) ? hex2(b).toUpperCase() : hex2(b))).join('');
  }).join('');
}
function fullwidthSome(s, p) {
  // ASCII letters and digits to U+FF21.., dots to U+FF0E, U+3002 or U+FF61 (UTS #46 maps them back).
  return [...s].map((c) => {
    if (!chance(p)) return c;
    if (c === '.') return pick(['\uFF0E', '\u3002', '\uFF61']);
    const code = c.charCodeAt(0);
    if ((code >= 0x21 && code <= 0x7e) && /[A-Za-z0-9]/.test(c)) return String.fromCharCode(code + 0xfee0);
    return c;
  }).join('');
}
function softHyphens(s) {
  return [...s].map((c) => (chance(0.15) ? c + '\u00AD' : c)).join('');
}

const NAME_HOSTS = ['evil.example', 'www.evil.example', 'a.b.evil.example', 'login.phish.test',
                    'x.login.phish.test', 'bücher.example', 'shop.bücher.example', 'xn--bcher-kva.example',
                    'good.example', 'evil.example.good.example', 'notevil.example'];

function ipv4Spelling(a) {
  // a: four bytes. Decimal, octal, hex per part, short forms, a single number.
  const v = ((a[0] << 24) | (a[1] << 16) | (a[2] << 8) | a[3]) >>> 0;
  const num = (n) => pick([String(n), '0' + n.toString(8), '0x' + n.toString(16), '0X' + n.toString(16).toUpperCase(),
                           '0x0' + n.toString(16), '00' + n.toString(8)]);
  switch (Math.floor(rand() * 4)) {
    case 0: return a.map(num).join('.');
    case 1: return `${num(a[0])}.${num(a[1])}.${num((a[2] << 8) | a[3])}`;
    case 2: return `${num(a[0])}.${num((a[1] << 16) | (a[2] << 8) | a[3])}`;
    default: return num(v);
  }
}
function randomIpv4Target() {
  switch (Math.floor(rand() * 3)) {
    case 0: return [192, 0, 2, 77];
    case 1: return [198, 51, 100, Math.floor(rand() * 256)];
    default: return [192, 0, 2, Math.floor(rand() * 256)];  // mostly not listed: must not matter
  }
}
function ipv6Spelling() {
  switch (Math.floor(rand() * 6)) {
    case 0: return randomCase('[2001:db8::bad]');
    case 1: return '[2001:0DB8:0000:0000:0000:0000:0000:0BAD]';
    case 2: return '[2001:db8:0:0::0:bad]';
    case 3: {
      const a = randomIpv4Target();
      return `[::ffff:${a.join('.')}]`;
    }
    case 4: {
      const a = randomIpv4Target();
      return `[::ffff:${hex2(a[0])}${hex2(a[1])}:${hex2(a[2])}${hex2(a[3])}]`;
    }
    default: {
      const a = randomIpv4Target();
      return `[64:ff9b::${a.join('.')}]`;
    }
  }
}

function hostSpelling() {
  const r = rand();
  if (r < 0.2) return ipv4Spelling(randomIpv4Target());
  if (r < 0.3) return ipv6Spelling();
  let h = pick(NAME_HOSTS);
  if (chance(0.5)) h = randomCase(h);
  if (chance(0.2)) h = softHyphens(h);
  if (chance(0.25)) h = fullwidthSome(h, 0.4);
  if (chance(0.3)) h = percentEncodeSome(h, 0.3);
  if (chance(0.15)) h += '.';
  return h;
}

function slashes() {
  const n = pick([0, 0, 1, 2, 2, 3, 4]);
  let s = '';
  for (let i = 0; i < n; ++i) s += pick(['/', '/', '\\']);
  return s;
}

const USERINFO = ['', '', '', 'user@', 'user:pass@', 'good.example@', 'a@b@', 'good.example:443@', ':@',
                  '%40@', 'u%2F@', 'x:y%3F@', 'a%5C@', 'evil.example@', 'u:p%40good.example@', '@'];
const PORTS = ['', '', '', ':', ':80', ':0080', ':443', ':65535', ':8080', ':65536', ':x'];
const TAILS = ['', '', '/', '\\', '/x', '\\x\\y', '?q=1', '?a@b', '/#frag', '#f', '/a/../b', '/%2F', '\\@good.example/'];

function spelling() {
  let scheme = pick(['http', 'https', 'ws', 'wss', 'ftp', 'http', 'https']);
  if (chance(0.4)) scheme = randomCase(scheme);
  let s = scheme + ':' + slashes() + pick(USERINFO) + hostSpelling() + pick(PORTS) + pick(TAILS);
  // Tabs, CR and LF anywhere are removed by the parser.
  if (chance(0.2)) {
    const k = Math.floor(rand() * (s.length + 1));
    s = s.slice(0, k) + pick(['\t', '\n', '\r', '\r\n']) + s.slice(k);
  }
  // Leading and trailing C0 controls and spaces are stripped.
  if (chance(0.15)) s = pick([' ', '  ', '\x01', '\x1f', '\x00', '\x0b ']) + s;
  if (chance(0.15)) s += pick([' ', '\x7f'.slice(0, 0) + '\x1f', '\x0c', '  ']);
  return s;
}

// ---- run -------------------------------------------------------------------------------------------

function runHelper(mode, inputs) {
  const stdin = inputs.map((s) => Buffer.from(s, 'utf8').toString('hex')).join('\n') + '\n';
  const r = spawnSync(helper, [mode], { input: stdin, maxBuffer: 1 << 28 });
  if (r.status !== 0) {
    console.error(`url_host_dump ${mode} failed (${r.status}): ${r.stderr}`);
    process.exit(2);
  }
  const lines = r.stdout.toString('utf8').split('\n');
  lines.pop();
  if (lines.length !== inputs.length) {
    console.error(`url_host_dump ${mode}: ${lines.length} answers for ${inputs.length} inputs`);
    process.exit(2);
  }
  return lines.map((l) => {
    const [status, host = '', lookups = ''] = l.split('\t');
    return { ok: status === 'ok', host, lookups: lookups ? lookups.split(' ') : [], message: host };
  });
}

const count = Number(countArg);
const inputs = [];
for (let i = 0; i < count; ++i) inputs.push(spelling());

const SPECIAL = new Set(['http:', 'https:', 'ws:', 'wss:', 'ftp:']);
const expected = inputs.map((input) => {
  let u;
  try {
    u = new URL(input);
  } catch {
    return null;
  }
  if (!SPECIAL.has(u.protocol)) return null;
  return listedEntry(target(u.hostname)) ? { entry: listedEntry(target(u.hostname)), hostname: u.hostname } : null;
});

const show = (s) => JSON.stringify(s);
let failures = 0;
function check(mode, inputsForMode, expectedForMode) {
  const answers = runHelper(mode, inputsForMode);
  let required = 0, missed = 0;
  const classes = new Map();
  for (let i = 0; i < inputsForMode.length; ++i) {
    const want = expectedForMode[i];
    if (!want) continue;
    ++required;
    const got = answers[i];
    if (got.ok && urlguardHits(want.entry, got.lookups)) continue;
    ++missed;
    if (missed <= (process.env.URLGUARD_DIFF_SHOW ? 1e9 : 25)) {
      console.log(`MISS (${mode}) ${show(inputsForMode[i])}: browser host ${want.hostname} (listed ${want.entry}); ` +
                  `urlguard ${got.ok ? 'lookup hosts ' + show(got.lookups) : 'error: ' + got.message}`);
    }
  }
  console.log(`${mode}: ${inputsForMode.length} inputs, ${required} open a listed host in Node, ${missed} missed`);
  failures += missed;
  return required;
}

const parsed = expected.filter((e) => e !== null).length;
const required = check('canon', inputs, expected);
// Chat messages: only spellings a message can carry as one word (no whitespace or controls inside).
const chat = [], chatExpected = [];
const wrappers = [(s) => `see ${s} now`, (s) => s, (s) => `(${s})`, (s) => `look: ${s}, thanks`, (s) => `"${s}"`];
for (let i = 0; i < inputs.length; ++i) {
  if (/[\x00-\x20\x7f]/.test(inputs[i])) continue;
  chat.push(pick(wrappers)(inputs[i]));
  chatExpected.push(expected[i]);
}
const chatRequired = check('scan', chat, chatExpected);
if (required < count / 10 || chatRequired < count / 20) {
  console.log(`too few listed spellings generated (${required}, ${chatRequired}): the generator is broken`);
  process.exit(1);
}
console.log(`seed ${seedArg}: ${count} spellings, ${parsed} listed per Node; total misses ${failures}`);
process.exit(failures === 0 ? 0 : 1);
