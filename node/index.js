// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard for Node.js and Electron: on-device URL threat lookup against memory-mapped, signed threat lists.
//
//   const urlguard = require('urlguard');
//   const checker = new urlguard.Checker(['phishing.ugs', 'malware.ugs']);
//   const v = checker.check('http://evil.example/login.php');
//   if (v.kind === 'hit') console.log(v.list, v.layer, v.expression);
//
// This file loads the compiled addon (build/urlguard.node, or the file named by URLGUARD_NODE_ADDON), defines the
// error classes and the Verdict class, and hands them to the addon. docs/node.md describes the API; index.d.ts
// types it.
'use strict';

const path = require('path');

// urlguard::StatusCode: the same numbers as the C API's ug_status and the Python module's StatusCode.
const StatusCode = Object.freeze({
  OK: 0,
  INVALID_ARGUMENT: 1,
  NOT_FOUND: 2,
  CORRUPTION: 3,
  IO_ERROR: 4,
  RESOURCE_EXHAUSTED: 5,
  UNAVAILABLE: 6,
  FAILED_PRECONDITION: 7,
  PERMISSION_DENIED: 8,
  INTERNAL: 9,
});

// The base class of every error the library reports: message is the Status text ("not_found: open x.ugs: No
// such file or directory"), code the StatusCode number, codeName its name ("not_found"), statusMessage the
// message without the code name. Wrong argument types are TypeErrors, as everywhere in Node.
class UrlguardError extends Error {
  constructor(message, code, codeName, statusMessage) {
    super(message);
    this.code = code;
    this.codeName = codeName;
    this.statusMessage = statusMessage;
  }

  get name() {
    return this.constructor.name;
  }
}
class InvalidArgumentError extends UrlguardError {}  // malformed input or option
class NotFoundError extends UrlguardError {}  // a file or entry that should exist does not
class CorruptionError extends UrlguardError {}  // malformed bytes from disk or network
class IoError extends UrlguardError {}  // the operating system refused an operation
class ResourceExhaustedError extends UrlguardError {}  // a named size cap was hit
class UnavailableError extends UrlguardError {}  // a remote party did not answer
class FailedPreconditionError extends UrlguardError {}  // state forbids the operation (a lock held, closed)
class PermissionDeniedError extends UrlguardError {}  // a signature or key check failed
class InternalError extends UrlguardError {}  // a dependency failed unexpectedly

const errorClasses = [UrlguardError, InvalidArgumentError, NotFoundError, CorruptionError, IoError,
  ResourceExhaustedError, UnavailableError, FailedPreconditionError, PermissionDeniedError, InternalError];

const KINDS = ['safe', 'hit', 'invalid', 'safe_verified', 'malicious', 'unverified_hit'];

// The answer of a lookup. Fields: input (as given), kind ("safe", "hit", "invalid", "safe_verified", "malicious",
// "unverified_hit"), list, layer, expression, sha256, listVersion (of the first match; list is the confirming list
// of a malicious verdict), matches, canonical, threat, stale, allowlisted, emergency, error (null where the CLI's
// JSON has null), fromCache. toJSON() is the object `urlguard check --json` prints, so JSON.stringify(verdict)
// reads like the CLI's output. Made by the addon only.
class Verdict {
  constructor(input, kind, flags, matches, error, canonical, list, threat) {
    const first = matches === undefined ? undefined : matches[0];
    this.input = input;
    this.kind = KINDS[kind];
    this.list = first === undefined ? (list === undefined ? null : list)
      : (this.kind === 'malicious' && list !== undefined ? list : first.list);
    this.layer = first === undefined ? null : first.layer;
    this.expression = first === undefined ? null : first.expression;
    this.sha256 = first === undefined ? null : first.sha256;
    this.listVersion = first === undefined ? null : first.listVersion;
    this.matches = matches === undefined ? [] : matches;
    this.canonical = canonical === undefined ? null : canonical;
    this.threat = threat === undefined ? null : threat;
    this.stale = (flags & 1) !== 0;
    this.allowlisted = (flags & 2) !== 0;
    this.emergency = (flags & 4) !== 0;
    this.fromCache = (flags & 8) !== 0;
    this.error = error === undefined ? null : error;
  }

  // The verdict JSON object of include/urlguard/render.h (fromCache left out, as there).
  toJSON() {
    return {
      input: typeof this.input === 'string' ? this.input : Buffer.from(this.input).toString('utf8'),
      verdict: this.kind,
      list: this.list,
      layer: this.layer,
      expression: this.expression,
      sha256: this.sha256,
      list_version: this.listVersion,
      matches: this.matches.map((m) => ({
        list: m.list, layer: m.layer, expression: m.expression, sha256: m.sha256, list_version: m.listVersion,
      })),
      canonical: this.canonical,
      threat: this.threat,
      stale: this.stale,
      allowlisted: this.allowlisted,
      emergency: this.emergency,
      error: this.error,
    };
  }
}

function loadAddon() {
  // URLGUARD_NODE_ADDON: another build's addon (the project's CMake build, the tests, the bench); relative to the
  // working directory.
  const file = process.env.URLGUARD_NODE_ADDON ? path.resolve(process.env.URLGUARD_NODE_ADDON)
    : path.join(__dirname, 'build', 'urlguard.node');
  return require(file);
}

const addon = loadAddon();
addon.setup({ errors: errorClasses, Verdict });

// scan(text): every URL a person could have meant in free text, defanged ones included: {urls, truncated,
// scannedBytes}. Each found URL has begin/end (indices of a string, byte offsets of a Uint8Array), text (the URL
// as written: text.slice(begin, end)), url (normalized: give it to check()), defanged, hadScheme, cut.
function scan(text) {
  const result = addon.scan(text);
  for (const u of result.urls) {
    u.text = typeof text === 'string' ? text.slice(u.begin, u.end) : text.subarray(u.begin, u.end);
  }
  return result;
}

module.exports = {
  Checker: addon.Checker,
  Client: addon.Client,
  Verdict,
  canonicalize: addon.canonicalize,
  expressionSha256: addon.expressionSha256,
  scan,
  extractUrls: (text) => scan(text).urls,
  MAX_SCANNED_TEXT_BYTES: addon.MAX_SCANNED_TEXT_BYTES,
  MAX_FOUND_URLS_PER_TEXT: addon.MAX_FOUND_URLS_PER_TEXT,
  MAX_FOUND_URL_BYTES: addon.MAX_FOUND_URL_BYTES,
  StatusCode,
  UrlguardError,
  InvalidArgumentError,
  NotFoundError,
  CorruptionError,
  IoError,
  ResourceExhaustedError,
  UnavailableError,
  FailedPreconditionError,
  PermissionDeniedError,
  InternalError,
  version: addon.version,
};
