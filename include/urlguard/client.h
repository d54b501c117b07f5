// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::Client — the living client: lookups against a data directory that a sync process keeps current,
// verification of local hits (only 4-byte hash prefixes leave the device), a result cache, and sync itself.
//
//   urlguard::ClientOptions o;
//   o.data_dir = "/var/lib/urlguard";
//   o.server_url = "https://lists.example.net";        // for verification (and SyncNow)
//   o.trusted_keys = *urlguard::TrustedKeys::LoadFiles({"publisher.pub.pem"});  // for SyncNow (urlguard/keys.h)
//   auto client = urlguard::Client::Open(o);
//   urlguard::Verdict v = (*client)->Check("http://evil.example/login");
//   switch (v.kind) { case urlguard::VerdictKind::kMalicious: ... }
//
// Verdicts (docs/architecture.md): kSafe (no local hit: definitive for the installed list versions), kSafeVerified
// (local hits that the cache or the verification API showed to be filter false positives), kMalicious (confirmed,
// or the list's signed emergency policy says local hits count), kUnverifiedHit (a local hit nobody could decide in
// time: the embedder's policy decides), kInvalid. Verdict::stale is set when a list is past its signed expiry;
// a stale "safe" is never confident. Also stale: a subscribed list (ClientOptions::lists, or recorded as subscribed
// in the data directory by the SyncEngine, urlguard/sync.h) that is not installed,
// and a list whose file was found damaged (Lists() says which and why). Verdict::allowlisted marks URLs the local allowlist let through.
//
// Thread safety: all methods may be called from any number of threads. Lookups never wait for an update: the
// installed lists are an immutable generation behind an atomically swapped pointer; a background thread notices a
// new generation in the data directory (written by urlguardd or SyncNow, in this or another process) within about
// a second and swaps it in.
#ifndef URLGUARD_CLIENT_H_
#define URLGUARD_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/checker.h"
#include "urlguard/export.h"
#include "urlguard/keys.h"
#include "urlguard/status.h"
#include "urlguard/sync.h"

namespace urlguard {

class Env;

struct ClientOptions {
  std::string data_dir;                      // required
  std::string server_url;                    // base URL of the update/verification server; "" = offline
  TrustedKeys trusted_keys;                  // for SyncNow (urlguard/keys.h); never from an update
  std::vector<std::string> public_key_pems;  // more trusted Ed25519 keys as PEM text (added to trusted_keys)
  std::vector<std::string> lists;            // lists to sync (SyncNow); empty = the installed ones
  bool verify = true;                        // ask the verification API on local hits (needs server_url)
  int verify_deadline_ms = 1500;             // Check() returns kUnverifiedHit after this
  std::vector<std::string> allowlist;        // hosts, URLs or IPs (list-entry syntax) that always pass
  std::string ca_bundle;                     // "" = the system's
  std::string proxy;                         // "" = libcurl's default
  size_t async_queue_capacity = 1024;        // CheckAsync() refuses work beyond this
  bool watch = true;                         // follow new generations in the background
  Env* env = nullptr;                        // files and clock; nullptr = the process default. Not owned: must
                                             // outlive the Client.
  // The longest a "not in the list" answer of the verification API is cached, whatever the server says
  // (0 .. 30 days; one lying answer must not be trusted for long). No answer is cached past its list's expiry.
  int64_t max_negative_cache_seconds = 3600;
};

// Why a list makes verdicts stale (ListStatus::stale_reason).
enum class StaleReason : uint8_t {
  kNone,          // fresh
  kNotInstalled,  // subscribed (ClientOptions::lists, or in the data directory), but no version is installed
  kDamaged,       // its file was found missing or corrupt and dropped; the next sync installs it again
  kExpired,       // past its signed expiry
};
// "", "not_installed", "damaged", "expired". Never null.
URLGUARD_EXPORT const char* StaleReasonName(StaleReason reason);

struct ListStatus {
  std::string name;
  uint64_t version = 0;
  uint64_t entries = 0;
  int64_t created_unix = 0;
  int64_t expires_unix = 0;
  bool stale = false;       // not installed, damaged (its file was lost), or now >= expires_unix
  StaleReason stale_reason = StaleReason::kNone;
  bool emergency = false;   // signed policy: local hits are malicious
  int64_t last_sync_unix = 0;       // last attempt (0: never)
  SyncResult last_sync_result = SyncResult::kNone;  // kNone, kOk, kNotModified or kFailed (urlguard/sync.h)
  std::string last_sync_error;      // kFailed: why
  int64_t next_sync_unix = 0;
  uint32_t consecutive_failures = 0;
};

// The readiness rule (Client::WaitUntilReady, urlguardd --wait-for-first-sync): true when every list named in
// `subscribed` has an entry in `lists` that is not stale (installed, intact, within its signed expiry), or, with
// `subscribed` empty, when `lists` is not empty and none of its entries is stale. When `unready` is given it
// receives the lists in the way, in name order: the stale entries of `lists`, and for a subscribed name `lists`
// lacks an entry with stale = true and kNotInstalled. Thread safety: a pure function.
URLGUARD_EXPORT bool ListsReady(const std::vector<ListStatus>& lists, const std::vector<std::string>& subscribed,
                                std::vector<ListStatus>* unready = nullptr);
// "NAME (REASON), NAME (REASON)" for the lists ListsReady returned in `unready` ("" when empty).
URLGUARD_EXPORT std::string DescribeUnreadyLists(const std::vector<ListStatus>& unready);

struct ClientStats {
  uint64_t lookups = 0;
  uint64_t by_verdict[6] = {0, 0, 0, 0, 0, 0};  // indexed by VerdictKind
  uint64_t verifications = 0;          // verification API requests
  uint64_t verification_failures = 0;
  double verification_seconds = 0;     // total latency of those requests
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t generation = 0;             // of the installed lists
  uint64_t swaps = 0;                  // generations swapped in since Open
};

class URLGUARD_EXPORT Client {
 public:
  // Opens the data directory read-only (no lock: any number of processes may). An empty directory is fine
  // (every lookup is kSafe with stale = true until a sync installs lists). kInvalidArgument for bad options;
  // kPermissionDenied when another user could have written the directory or a directory or symlink on the way
  // to it (the message names the path and the chmod/chown that fixes it; docs/data-dir.md §1.1); kIoError
  // naming the path when D/current or a list file is not a regular file (a FIFO: refused, never waited on).
  static Result<std::unique_ptr<Client>> Open(const ClientOptions& options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Local lookup; on a hit, the cache and then (within verify_deadline_ms) the verification API decide.
  // Never fails: an unusable URL is kInvalid, an undecidable hit kUnverifiedHit (Verdict::error says why).
  Verdict Check(std::string_view url, const CheckOptions& options = {}) const;
  // Local lookup only (no cache, no network): kSafe, kHit or kInvalid.
  Verdict CheckLocal(std::string_view url, const CheckOptions& options = {}) const;
  // Queues a Check on a worker thread; `done` runs there. False (and `done` is not called) when the queue is full.
  bool CheckAsync(std::string url, std::function<void(Verdict)> done) const;

  // Swaps in the data directory's current generation now, if it changed. Lookups continue meanwhile. Checks the
  // directory's trust first (as Open does): kPermissionDenied, and the generation loaded before keeps serving.
  Status Refresh();

  // One sync pass over the subscribed lists (needs server_url and trusted keys), through a temporary SyncEngine
  // (urlguard/sync.h). Takes the data directory's
  // single-writer lock: kFailedPrecondition when urlguardd (or another SyncNow) holds it. Per-list failures are
  // reported in the SyncReports, not as the Status.
  Result<std::vector<SyncReport>> SyncNow();

  // Every list of the installed generation and every subscribed one (ClientOptions::lists, and the lists the
  // data directory records as subscribed, docs/data-dir.md §8; one not installed has stale_reason kNotInstalled),
  // with its sync schedule (reads the data directory's small schedule file: not for a request path).
  std::vector<ListStatus> Lists() const;

  // Blocks until the client is ready (ListsReady over Lists() and ClientOptions::lists: every subscribed list
  // installed, intact and within its signed expiry; with no `lists` given, at least one list installed and none
  // stale), swapping in new generations as they appear (Refresh), or until `timeout_ms` (>= 0) has passed.
  // Ok when ready; kUnavailable "not ready after N ms: NAME (REASON), ..." naming the lists still stale (and,
  // when the last Refresh failed, "; the last refresh failed: STATUS"). It only waits: the data directory is
  // synced by urlguardd, SyncNow or a SyncEngine elsewhere. With no `lists` given the client cannot know what a
  // syncer discovering lists will subscribe to: it is ready as soon as the first list is installed. The Go Safe
  // Browsing client's WaitUntilReady. Looks every 200 ms; call from any thread but not from a lookup's path.
  Status WaitUntilReady(int64_t timeout_ms);
  // Counters since Open (no I/O).
  ClientStats Stats() const;

 private:
  struct Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlguard

#endif  // URLGUARD_CLIENT_H_
