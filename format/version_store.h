// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// VersionStore: the seam between the publisher (publish/publisher.h) and wherever a list's committed versions
// are recorded. The publisher asks it for the last committed version under a per-list lock, builds version
// V + 1's files, and commits V + 1 with its manifest and signature BEFORE it writes manifest.json and
// manifest.sig; only then may clients see V + 1. The store's commit is what makes a version exist: two
// publishers can never both commit one version (so never two different manifests for one version), and the
// version only grows.
//
// Implementations:
//   - none (PublishOptions::version_store == nullptr): today's single-machine behaviour. The repository's
//     private snapshot copies say which versions exist and a file lock per list
//     (REPO/private/lists/LIST/publish.lock, publish/repo_lock.h) keeps one publisher per list.
//   - PgState (pg/pg_state.h): PostgreSQL, for several publishers on several machines
//     (docs/runbook-publishers.md describes the order of a publish run and what a kill at each point leaves).
//
// Thread safety: implementations say; a publisher uses one store from one thread.
#ifndef URLGUARD_FORMAT_VERSION_STORE_H_
#define URLGUARD_FORMAT_VERSION_STORE_H_

#include <cstdint>
#include <string>

#include "core/sha256.h"
#include "urlguard/status.h"

namespace urlguard {

// The last committed version of a list, as BeginPublish finds it.
struct CommittedVersion {
  uint64_t version = 0;   // 0: no version committed yet
  std::string manifest;   // the exact manifest.json bytes of that version (empty when version == 0)
  std::string signature;  // the exact manifest.sig bytes
};

// What CommitVersion records.
struct VersionCommit {
  std::string list;
  uint64_t version = 0;
  std::string manifest;   // manifest.json bytes
  std::string signature;  // manifest.sig bytes
  Sha256Digest state_sha256{};  // the snapshot's checksum, as in the manifest
};

class VersionStore {
 public:
  virtual ~VersionStore() = default;

  // Takes `list`'s publish lock (waiting for another publisher to finish) and returns the last committed
  // version. The lock is held until EndPublish (or until the process dies: the store must release it then).
  // Failures: kUnavailable (the store is down), others from the store.
  virtual Result<CommittedVersion> BeginPublish(const std::string& list) = 0;

  // Makes `commit.version` (= the BeginPublish answer + 1) the list's last committed version, atomically with
  // whatever the store changed for it since BeginPublish. Fails with kFailedPrecondition when that version is
  // already committed (nothing changes then), kUnavailable when the store is down (the version may then be
  // committed or not: the next BeginPublish tells).
  virtual Status CommitVersion(const VersionCommit& commit) = 0;

  // Ends the run BeginPublish started: abandons an uncommitted change and releases the lock. Always call it.
  virtual void EndPublish(const std::string& list) = 0;
};

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_VERSION_STORE_H_
