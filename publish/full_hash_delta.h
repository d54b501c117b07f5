// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The full-hash change of one incremental version, REPO/private/lists/LIST/V.ughd (design17 §2): the layout of a
// full-hash file (docs/full-hash-format.md) with magic "UGHDELT\n", header bytes 32..39 = u64 base_version (V-1,
// the version it applies on top of), and record byte 33 = op (0 put: present in V with threat_id; 1 delete: absent
// in V, threat_id 0). Records strictly ascending by (sha256, layer); bucket index, footer and checksum as in .ugh.
// Verify servers map the base V.ugh and each delta after it (server/, another part of issue 17).
//
// TODO(i17-ugh): the branch i17-ugh adds delta support to FullHashFileWriter (format/full_hash_file.*) and the
// name to format/repository_files.h; the lead swaps this writer and FullHashDeltaFileName for those.
#ifndef URLGUARD_PUBLISH_FULL_HASH_DELTA_H_
#define URLGUARD_PUBLISH_FULL_HASH_DELTA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/env.h"
#include "publish/key_record.h"
#include "urlguard/status.h"

namespace urlguard {

inline constexpr char kFullHashDeltaMagic[8] = {'U', 'G', 'H', 'D', 'E', 'L', 'T', '\n'};
enum class FullHashDeltaOp : uint8_t { kPut = 0, kDelete = 1 };

// "V.ughd".
std::string FullHashDeltaFileName(uint64_t version);
std::optional<uint64_t> ParseFullHashDeltaFileName(std::string_view name);

// Writes `path` whole (small: 36 bytes per change plus the index) through a temporary file, fsync and rename.
// `changes`: the version's effective change (publish/state_delta.h records: `reserved` = DeltaOp, a put's threat
// indexing `threats`, sorted names). kInvalidArgument for more than kMaxFullHashThreats names or a bad list name.
Status WriteFullHashDelta(Env* env, const std::string& path, const std::string& list, uint64_t version,
                          uint64_t base_version, const std::vector<std::string>& threats,
                          const std::vector<KeyRecord>& changes);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_FULL_HASH_DELTA_H_
