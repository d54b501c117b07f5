// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Type declarations of the urlguard Node.js binding (index.js; docs/node.md).

/** A URL, host, IP or text: a string (as UTF-8), or bytes. */
export type Text = string | Uint8Array;

export type VerdictKind = 'safe' | 'hit' | 'invalid' | 'safe_verified' | 'malicious' | 'unverified_hit';
export type Layer = 'domain' | 'url' | 'ip';

/** One list entry a URL matched. */
export interface Match {
  list: string;
  layer: Layer;
  expression: string;
  /** SHA-256 of the expression, lower-case hex; its first 8 digits are the verification prefix. */
  sha256: string;
  listVersion: number;
}

/** The object `urlguard check --json` prints for a verdict (Verdict.toJSON()). */
export interface VerdictJson {
  input: string;
  verdict: VerdictKind;
  list: string | null;
  layer: Layer | null;
  expression: string | null;
  sha256: string | null;
  list_version: number | null;
  matches: { list: string; layer: Layer; expression: string; sha256: string; list_version: number }[];
  canonical: string | null;
  threat: string | null;
  stale: boolean;
  allowlisted: boolean;
  emergency: boolean;
  error: string | null;
}

/** The answer of a lookup. Made by the library only. */
export class Verdict {
  private constructor();
  /** What was checked, as given. */
  readonly input: Text;
  /** Checker: safe, hit or invalid. Client.check: safe, safe_verified, malicious, unverified_hit or invalid. */
  readonly kind: VerdictKind;
  /** The list that confirmed a malicious verdict, else the first match's list. */
  readonly list: string | null;
  readonly layer: Layer | null;
  readonly expression: string | null;
  readonly sha256: string | null;
  readonly listVersion: number | null;
  /** Every match, lists in open order (at most 16). */
  readonly matches: Match[];
  /** The canonical URL when asked for ({canonical: true}). */
  readonly canonical: string | null;
  /** The threat type of a malicious verdict. */
  readonly threat: string | null;
  /** A list is past its signed expiry, not installed or damaged: a "safe" is not confident. */
  readonly stale: boolean;
  /** The local allowlist let this URL through. */
  readonly allowlisted: boolean;
  /** Malicious by a list's signed emergency policy, without asking. */
  readonly emergency: boolean;
  /** Decided by the result cache, without the network. */
  readonly fromCache: boolean;
  /** Why the input is invalid, or why verification failed. */
  readonly error: string | null;
  toJSON(): VerdictJson;
}

export interface CheckOptions {
  /** Fill Verdict.canonical. */
  canonical?: boolean;
}

export interface ClientCheckOptions extends CheckOptions {
  /** Local lookup only (no cache, no network): safe, hit or invalid. */
  local?: boolean;
}

export interface OpenOptions {
  /** Recompute each snapshot's SHA-256 at open (default true). */
  verifyChecksum?: boolean;
}

export interface ListInfo {
  name: string;
  version: number;
  createdUnix: number;
  entries: number;
  /** The layers present: entries and filter kind ("fingerprint-array" or "blocked-bloom"). */
  layers: Partial<Record<Layer, { entries: number; filter: string }>>;
  bytes: number;
  path: string;
  sha256: string;
}

/** Offline lookups against memory-mapped snapshot files. */
export class Checker {
  /**
   * Maps and validates one snapshot file or several. Throws NotFoundError, IoError, CorruptionError (foreign,
   * truncated or corrupt file) or InvalidArgumentError (two files of one list).
   */
  constructor(paths: string | readonly string[], options?: OpenOptions);
  /** Opens every *.ugs file of a directory (sorted by name); NotFoundError when there is none. */
  static openDirectory(directory: string, options?: OpenOptions): Checker;
  /** Looks up a URL (any spelling a browser accepts), on the calling thread. */
  check(url: Text, options?: CheckOptions): Verdict;
  /** Looks up many URLs in one batch (faster per URL); verdicts in input order. */
  checkMany(urls: readonly Text[], options?: CheckOptions): Verdict[];
  /** check() on the libuv thread pool. Rejects (never throws) on bad arguments or a closed Checker. */
  checkAsync(url: Text, options?: CheckOptions): Promise<Verdict>;
  /** checkMany() on the libuv thread pool. */
  checkManyAsync(urls: readonly Text[], options?: CheckOptions): Promise<Verdict[]>;
  /** Looks up a host name and its parent domains in the domain layers. */
  checkHost(host: Text): Verdict;
  /** Looks up an IPv4 or IPv6 address in the ip layers. */
  checkIp(ip: Text): Verdict;
  /** The open lists, in open order. */
  lists(): ListInfo[];
  /** Releases the mappings once no lookup is in flight; later calls throw (or reject) FailedPreconditionError. */
  close(): void;
  readonly closed: boolean;
}

export interface ClientOptions {
  /** Base URL of the update and verification server; "" (default) = offline. */
  serverUrl?: string;
  /** Trusted publisher keys (PEM files), for syncNow. */
  publicKeyFiles?: string[];
  /** Key rotation statements, chained from publicKeyFiles. */
  keyRotationFiles?: string[];
  /** More trusted keys as PEM text. */
  publicKeyPems?: string[];
  /** Lists to sync; default: the installed ones. */
  lists?: string[];
  /** Ask the verification API on local hits (default true; needs serverUrl). */
  verify?: boolean;
  /** check() gives unverified_hit after this (default 1500). */
  verifyDeadlineMs?: number;
  /** Hosts, URLs or IPs (list-entry syntax) that always pass. */
  allowlist?: string[];
  /** "" = the system's. */
  caBundle?: string;
  /** "" = libcurl's default. */
  proxy?: string;
  asyncQueueCapacity?: number;
  /** Follow new generations of the data directory in the background (default true). */
  watch?: boolean;
  /** The longest a "not in the list" answer is cached (default 3600). */
  maxNegativeCacheSeconds?: number;
}

export type SyncResult = 'none' | 'ok' | 'updated' | 'up_to_date' | 'not_modified' | 'failed';

export interface SyncReport {
  list: string;
  result: SyncResult;
  fromVersion: number;
  toVersion: number;
  usedDiff: boolean;
  bytes: number;
  error: string | null;
}

export interface ListStatus {
  list: string;
  version: number;
  entries: number;
  createdUnix: number;
  expiresUnix: number;
  stale: boolean;
  staleReason: '' | 'not_installed' | 'damaged' | 'expired';
  emergency: boolean;
  lastSyncUnix: number;
  lastSyncResult: SyncResult;
  lastSyncError: string;
  nextSyncUnix: number;
  consecutiveFailures: number;
}

export interface ClientStats {
  lookups: number;
  byVerdict: Record<VerdictKind, number>;
  verifications: number;
  verificationFailures: number;
  verificationSeconds: number;
  cacheHits: number;
  cacheMisses: number;
  generation: number;
  swaps: number;
}

/** The living client over a data directory kept current by urlguardd, `urlguard sync` or syncNow(). */
export class Client {
  /** Opens a data directory read-only (an empty one is fine). InvalidArgumentError for bad options. */
  constructor(dataDir: string, options?: ClientOptions);
  /**
   * Local lookup; on a hit the result cache, then the verification API decide. Waits for the network (up to
   * verifyDeadlineMs) on the calling thread: prefer checkAsync on a UI or server thread.
   */
  check(url: Text, options?: CheckOptions): Verdict;
  /** Local lookup only (no cache, no network): safe, hit or invalid. */
  checkLocal(url: Text, options?: CheckOptions): Verdict;
  checkMany(urls: readonly Text[], options?: ClientCheckOptions): Verdict[];
  /** check() (or checkLocal() with {local: true}) on the libuv thread pool. */
  checkAsync(url: Text, options?: ClientCheckOptions): Promise<Verdict>;
  checkManyAsync(urls: readonly Text[], options?: ClientCheckOptions): Promise<Verdict[]>;
  /** Swaps in the data directory's current generation now, if it changed. */
  refresh(): void;
  /** One sync pass (needs serverUrl and trusted keys); per-list failures are reports. */
  syncNow(): SyncReport[];
  /** syncNow() on the libuv thread pool. */
  syncNowAsync(): Promise<SyncReport[]>;
  lists(): ListStatus[];
  stats(): ClientStats;
  close(): void;
  readonly closed: boolean;
}

export interface Expression {
  expression: string;
  layer: Layer;
  sha256: string;
}

export interface CanonicalForm {
  input: Text;
  url: string;
  scheme: string;
  host: string;
  path: string;
  /** null when the URL has no '?'. */
  query: string | null;
  /** In lookup order, at most 30. */
  expressions: Expression[];
}

export interface FoundUrl {
  /** Index of the first character in a string (UTF-16 code units), or byte offset in a Uint8Array. */
  begin: number;
  end: number;
  /** The URL as written: text.slice(begin, end) (a subarray for bytes). */
  text: Text;
  /** Normalized (refanged, "http://" added): give it to check() or canonicalize(). */
  url: string;
  defanged: boolean;
  hadScheme: boolean;
  /** url was cut at MAX_FOUND_URL_BYTES. */
  cut: boolean;
}

export interface ScanResult {
  urls: FoundUrl[];
  /** A cap was hit: only scannedBytes were scanned, or only MAX_FOUND_URLS_PER_TEXT reported. */
  truncated: boolean;
  scannedBytes: number;
}

/** The canonical form of a URL; InvalidArgumentError when it has none. */
export function canonicalize(url: Text): CanonicalForm;
/** SHA-256 of a list entry expression, lower-case hex. */
export function expressionSha256(expression: Text): string;
/** Every URL a person could have meant in free text, defanged ones included. */
export function scan(text: Text): ScanResult;
/** scan(text).urls. */
export function extractUrls(text: Text): FoundUrl[];

export const MAX_SCANNED_TEXT_BYTES: number;
export const MAX_FOUND_URLS_PER_TEXT: number;
export const MAX_FOUND_URL_BYTES: number;

export const StatusCode: Readonly<{
  OK: 0;
  INVALID_ARGUMENT: 1;
  NOT_FOUND: 2;
  CORRUPTION: 3;
  IO_ERROR: 4;
  RESOURCE_EXHAUSTED: 5;
  UNAVAILABLE: 6;
  FAILED_PRECONDITION: 7;
  PERMISSION_DENIED: 8;
  INTERNAL: 9;
}>;
export type StatusCodeValue = (typeof StatusCode)[keyof typeof StatusCode];

/** Base class of the library's errors. */
export class UrlguardError extends Error {
  /** The Status text: "not_found: open x.ugs: No such file or directory". */
  readonly message: string;
  readonly code: StatusCodeValue;
  /** "not_found", "corruption", ... */
  readonly codeName: string;
  /** The message without the code name. */
  readonly statusMessage: string;
}
export class InvalidArgumentError extends UrlguardError {}
export class NotFoundError extends UrlguardError {}
export class CorruptionError extends UrlguardError {}
export class IoError extends UrlguardError {}
export class ResourceExhaustedError extends UrlguardError {}
export class UnavailableError extends UrlguardError {}
export class FailedPreconditionError extends UrlguardError {}
export class PermissionDeniedError extends UrlguardError {}
export class InternalError extends UrlguardError {}

/** The loaded liburlguard's version. */
export const version: string;
