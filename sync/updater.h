// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The updater: one sync pass for one list, from the update server's static files into the data directory
// (docs/architecture.md §5; the order of checks is docs/manifest-format.md §6, quoted step by step in updater.cc).
//
// Server layout, for a base URL B and a list LIST (publish/publisher.h writes it, any static server or CDN
// serves it):
//   B/v1/lists/LIST/manifest.json    the signed manifest (format/manifest.h), fetched conditionally (ETag)
//   B/v1/lists/LIST/manifest.sig     its detached signature file (format/signature.h)
//   B/v1/lists/LIST/<path>           the snapshot and the diffs the manifest names (zlib, signed
//   sizes/hashes)
//
// Nothing downloaded is used before the step that checks it, and any failure leaves the previous state
// serving (the Store switches only at its final rename). The security state is the per-list high-water mark
// in D/current (sync/store.h): a lower version is a rollback, the same version with other manifest bytes is
// equivocation; both are refused even when correctly signed.
//
// Trusted keys and rotation. The keys come from the embedder's configuration or are compiled in, never from
// an update. Key rotation statements (format/key_rotation.h) are configuration too: the daemon reads them with
// its keys at startup and passes AcceptRotationChain(configured keys, statements, now) as trusted_keys, so a
// statement extends trust only when it chains from a configured key. The updater does not fetch statements.
//
// Thread safety: SyncList() uses the Store, which has one writer; call it from one thread at a time per
// Store. The Fetcher may be shared.
#ifndef URLGUARD_SYNC_UPDATER_H_
#define URLGUARD_SYNC_UPDATER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/signature.h"
#include "sync/fetcher.h"
#include "sync/store.h"
#include "urlguard/status.h"

namespace urlguard {

struct UpdaterOptions {
  // B: "https://updates.example.org" (or "http://127.0.0.1:PORT" for a local server; the Fetcher enforces
  // https elsewhere). A trailing '/' is allowed. Must not be empty.
  std::string server_base_url;
  // Keys a manifest signature must come from (see "Trusted keys and rotation" above). Empty: every manifest
  // is refused as signed by an untrusted key.
  std::vector<PublicKey> trusted_keys;
};

struct SyncOutcome {
  enum Kind {
    kUpdated,      // a new version (or a repair of the current one) was installed
    kNotModified,  // the server answered 304 to the conditional GET: nothing to do
    kUpToDate,     // the signed manifest is the one installed: nothing to do
    kFailed,       // see `error`; the previous state still serves
  };
  Kind kind = kFailed;
  uint64_t from_version = 0;  // the installed version before the pass (0: none)
  uint64_t to_version = 0;    // the installed version after the pass (0: none)
  bool used_diff = false;     // kUpdated from a diff (format 2: from range diffs only, no snapshot)
  // Format 2 (docs/manifest-format.md §8.3): the range diffs applied by the pass that installed (1 or 2; 1
  // also after the checkpoint snapshot when the checkpoint is older than the version), whether the checkpoint
  // snapshot was downloaded, and the bytes of the diff files downloaded (on the wire, counted in
  // bytes_downloaded too).
  uint32_t range_diffs = 0;
  bool used_checkpoint_snapshot = false;
  uint64_t diff_bytes = 0;
  bool fell_back_to_snapshot =
      false;                      // a diff was tried and failed (diff_error says why); the snapshot was next
  bool repaired = false;          // kUpdated re-installed the high-water version after its file was lost
  uint64_t bytes_downloaded = 0;  // response bodies, all requests of the pass
  Status error;                   // ok unless kFailed
  Status diff_error;              // why the diff was abandoned when fell_back_to_snapshot
  int64_t retry_after_seconds = -1;  // the largest Retry-After the server sent during the pass (-1: none)
  // The Date of the pass's first response (the manifest's, or its 304), -1 when it sent none: with
  // created_unix, where the next poll goes (sync/scheduler.h PublisherClock).
  int64_t server_date_unix = -1;
  int64_t created_unix = 0;  // the installed manifest's created_unix after the pass (0: none)
  // True when no fresh state serves the list after the pass: nothing installed, or now >= the installed
  // version's expires_unix. Also true when the pass refused an expired manifest.
  bool stale = false;
  // The ETag the caller passes to the next SyncList (D/sync-state.json keeps it): the served manifest's ETag
  // after kUpdated / kUpToDate, the caller's after kNotModified, "" after kFailed (the caller keeps the one
  // it had, which still describes the installed manifest).
  std::string etag;
  uint32_t min_wait_seconds =
      0;  // the installed manifest's minimum polling interval after the pass (0: none)
};

// "updated", "not_modified", "up_to_date", "failed".
const char* SyncOutcomeKindName(SyncOutcome::Kind kind);

// One sync pass for `list` (docs/architecture.md §5):
//   1. GET manifest.json (If-None-Match: `etag`, only when the list's installed version is its high-water
//      version; at most kMaxManifestBytes) and manifest.sig (at most kMaxSignatureFileBytes);
//   2. verify the signature against options.trusted_keys BEFORE parsing; parse; it must name `list`;
//   3. version below the high-water mark: refused (rollback); equal with other bytes: refused (equivocation);
//      equal with the same bytes: kUpToDate, or a repair when the list's file was dropped;
//   4. a lifetime over kMaxManifestLifetimeSeconds or a `created` far in the future (sync/freshness.h):
//      refused; expired (now >= expires_unix): refused, stale; the installed manifest served again (200 with
//      the same bytes, or 304) after its expiry: a freeze, kFailed (kFailedPrecondition "frozen"), stale;
//   5. the diff from the installed version if the manifest has one, else the snapshot: downloaded with the
//      signed size as hard cap, SHA-256 checked, inflated with the signed inflated_size as cap, applied
//      (sync/apply.h) and checked against the signed state SHA-256; any diff failure falls back to the
//      snapshot once; a format 2 manifest (docs/manifest-format.md §8.3): one or two range diffs (or the
//      checkpoint snapshot and the diff from the checkpoint, whichever costs fewer bytes), applied by streaming
//      and checked against the signed set digest; any failure of the range-diff path falls back to the
//      checkpoint snapshot path once;
//   6. Store::Install (new file, fsync, rename, D/current): the high-water mark advances with it.
// Failures (kind kFailed, `error`): kInvalidArgument (bad list name or base URL), the Fetcher's kUnavailable
// / kResourceExhausted / kInvalidArgument, kNotFound (HTTP 404/410) and kUnavailable (any other non-200
// status, with retry_after_seconds from 429/503), kPermissionDenied (signature: malformed, untrusted key,
// bad; equivocation), kCorruption (manifest unparsable or for another list; a download truncated, with a
// wrong SHA-256, not inflating to its signed size, or not the signed state), kResourceExhausted (a body over
// its cap, a decompression bomb), kFailedPrecondition (rollback, expired manifest), and the Store's errors.
// Time: every check uses now = max(clock_unix, the time floor of the data directory) (sync/time_floor.h), and
// an install raises the floor to the manifest's created_unix.
// Never throws. See the thread-safety note at the top.
SyncOutcome SyncList(Fetcher& fetcher, Store& store, const UpdaterOptions& options, const std::string& list,
                     const std::string& etag, int64_t clock_unix);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_UPDATER_H_
