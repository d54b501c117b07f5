// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// List discovery: which lists a client subscribes to when nobody said (SyncOptions::lists empty): on a fresh data
// directory, and on every pass of one whose subscriptions came from the index (sync/subscriptions.h), so that new
// lists are added and dropped ones unsubscribed. The answer is the server's signed list index (format/list_index.h,
// docs/list-index.md), fetched from B/v1/lists/index.json and B/v1/lists/index.sig and verified with the same
// trusted keys as manifests (under the index's own signature domain) BEFORE it is parsed. The Syncer
// (sync/syncer.h) calls this; urlguardd, `urlguard sync` and Client::SyncNow get it through SyncEngine.
//
// Thread safety: FetchListIndex uses only the Fetcher, which may be shared.
#ifndef URLGUARD_SYNC_LIST_DISCOVERY_H_
#define URLGUARD_SYNC_LIST_DISCOVERY_H_

#include <string>
#include <vector>

#include "format/list_index.h"
#include "format/signature.h"
#include "sync/fetcher.h"
#include "urlguard/status.h"

namespace urlguard {

// GETs B/v1/lists/index.json (at most kMaxListIndexBytes) and index.sig (at most kMaxSignatureFileBytes), then
// VerifyAndParseListIndex. `base_url` may end in '/'. Failures: the Fetcher's transport errors (kUnavailable,
// kResourceExhausted over a cap, kInvalidArgument for a refused URL), kNotFound for a 404/410 (a server without an
// index), kUnavailable for any other non-200 status, then kPermissionDenied (signature) or kCorruption /
// kResourceExhausted (parse). Every message starts with "list index: ".
Result<ListIndex> FetchListIndex(Fetcher& fetcher, const std::string& base_url,
                                 const std::vector<PublicKey>& trusted_keys);

// FetchListIndex with a conditional GET of index.json (If-None-Match: `etag` when not empty): a 304 is
// `not_modified` (index.sig is then not fetched; the caller keeps the index it verified with that ETag).
// Otherwise `index` is verified and parsed as by FetchListIndex and `etag` is index.json's ETag ("" = none).
struct FetchedListIndex {
  bool not_modified = false;
  ListIndex index;
  std::string etag;
};
Result<FetchedListIndex> FetchListIndexIfChanged(Fetcher& fetcher, const std::string& base_url,
                                                 const std::vector<PublicKey>& trusted_keys,
                                                 const std::string& etag);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_LIST_DISCOVERY_H_
