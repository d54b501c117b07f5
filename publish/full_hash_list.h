// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The full hashes of one list version as the publisher collects them (one record per listed expression, in feed
// order, duplicates possible), and the step that turns them into the version's full-hash file
// (format/full_hash_file.h, docs/full-hash-format.md) for the verify API.
#ifndef URLGUARD_PUBLISH_FULL_HASH_LIST_H_
#define URLGUARD_PUBLISH_FULL_HASH_LIST_H_

#include <string>
#include <vector>

#include "core/layer_kind.h"
#include "core/sha256.h"
#include "urlguard/env.h"
#include "urlguard/status.h"

namespace urlguard {

// One full hash of one list layer.
struct FullHashRecord {
  Sha256Digest sha256{};
  std::string list;
  LayerKind layer = LayerKind::kUrl;
  std::string threat;

  bool operator==(const FullHashRecord&) const = default;
};

// Writes `records` (all of list `list`) as version `version`'s full-hash file at `path`, atomically. Sorts
// them by (sha256, layer); a (sha256, layer) pair given twice keeps the LAST record's threat (a later feed
// line overrides an earlier one). Memory: the sort is in place; the writer adds its bounded buffers.
// Failures: kInvalidArgument (a record of another list, a bad list or threat name, more than
// kMaxFullHashThreats distinct threats), kIoError and the like from the Env.
Status WriteFullHashList(Env* env, const std::string& path, const std::string& list, uint64_t version,
                         std::vector<FullHashRecord>* records);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_FULL_HASH_LIST_H_
