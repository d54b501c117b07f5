// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The publisher's half of the list index (format/list_index.h; docs/list-index.md): the canonical bytes, the
// signature file, and REPO/public/v1/lists/index.json + index.sig rebuilt from the manifests a repository serves.
// Publish() (publish/publisher.h) rewrites the index after every publication of any list. Publishers of different
// lists run side by side, so the index has its own lock (REPO/private/index.lock, publish/repo_lock.h): whoever
// holds it re-reads every list's manifest and writes the pair, so the last writer's index names every manifest
// written before it took the lock, and index.json and index.sig are never written by two processes at once.
//
// Thread safety: the functions share no state; WriteListIndex may run in any number of processes and threads at
// once (it takes the index lock).
#ifndef URLGUARD_PUBLISH_LIST_INDEX_WRITER_H_
#define URLGUARD_PUBLISH_LIST_INDEX_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "format/list_index.h"
#include "platform/env.h"
#include "signing/signer.h"
#include "urlguard/status.h"

namespace urlguard {

// The canonical bytes (docs/list-index.md §2): UTF-8 JSON, object members sorted by name, two-space indentation,
// integers in plain decimal, a final "\n". Deterministic. Precondition: ValidateListIndex(index).ok(); violating
// it is a bug and aborts the process in every build type (a publisher must never sign an index its clients
// would refuse). Thread-safe.
std::string SerializeListIndex(const ListIndex& index);

// The signature file for `index_bytes`: one line (format/signature.h) over kListIndexSignatureDomain ||
// index_bytes. Deterministic. Thread-safe.
std::string MakeListIndexSignatureFile(const SigningKey& key, std::string_view index_bytes);

// The index of what REPO/public/v1/lists/ serves now: one entry per subdirectory with a manifest.json, taken
// from that manifest (which must parse: the publisher wrote it). created_unix = `now_unix`. kCorruption naming
// the manifest that does not parse, kResourceExhausted over kMaxListIndexLists lists, I/O errors.
Result<ListIndex> BuildListIndex(Env* env, const std::string& repo_dir, int64_t now_unix);

// Under the index lock (waiting up to kIndexLockWaitMillis for another writer): BuildListIndex, then writes
// index.sig and index.json (in that order, each by atomic rename: a client that catches the pair between the two
// renames sees a bad signature and tries again later; once the lock is released the pair matches). Returns the
// index written. Failures: kFailedPrecondition when the lock stays held, BuildListIndex's, write errors (the pair
// then may not match until the next WriteListIndex).
Result<ListIndex> WriteListIndex(Env* env, const SigningKey& key, const std::string& repo_dir, int64_t now_unix);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_LIST_INDEX_WRITER_H_
