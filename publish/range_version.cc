// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.

#include "publish/range_version.h"

#include <algorithm>
#include <string>

#include "core/byte_io.h"
#include "core/layer_kind.h"
#include "core/sha256.h"
#include "format/deflate.h"
#include "format/repository_files.h"
#include "platform/env.h"
#include "publish/state_delta.h"

namespace urlguard {

namespace {
// Rice codes are near their entropy, so deflate finds nothing in a range diff (docs/diff-format.md §2):
// measured on the 9 range diffs of a version 21 versions into an epoch (9.3 MB), level 1 output was 1.0003x
// its input and cost 1.15 G instructions of the version's 10.3 G (callgrind). Level 0 (stored blocks) keeps
// the zlib framing every download has for the cost of a copy and an Adler-32: 1.0001x.
constexpr int kRangeDiffDeflateLevel = 0;
// The checkpoint record is a manifest: the same cap.
constexpr size_t kMaxCheckpointRecordBytes = kMaxManifestBytes;
}  // namespace

Result<std::vector<TouchedFingerprint>> TouchedFingerprintsOf(const LsmState& before, const LsmState& after,
                                                              std::span<const KeyRecord> change,
                                                              const std::array<uint64_t, kLayerKindCount>& universe) {
  std::vector<TouchedFingerprint> out;
  out.reserve(change.size());
  for (const KeyRecord& r : change) {
    if (r.layer >= kLayerKindCount) return Status::Corruption("state change record with a bad layer");
    const uint64_t u = universe[r.layer];
    const auto layer = static_cast<LayerKind>(r.layer);
    if (u == 0) {
      return Status::FailedPrecondition(std::string("layer ") + LayerKindName(layer) +
                                        " has no fingerprint universe since the last checkpoint: run a checkpoint "
                                        "(urlguard-publish compact) or a full publish");
    }
    // Keys ascend within a layer and the fingerprint is monotone in the key: equal fingerprints are neighbours.
    const uint64_t fp = MulHi64(r.key, u);
    if (!out.empty() && out.back().layer == layer && out.back().fingerprint == fp) continue;
    const KeyRange range = KeyRangeOfFingerprint(fp, u);
    out.push_back({layer, fp, before.AnyInKeyRange(r.layer, range.first, range.last),
                   after.AnyInKeyRange(r.layer, range.first, range.last)});
  }
  return out;
}

Result<std::vector<TouchedFingerprint>> TouchedFingerprintsOf(
    const LsmState& before, std::span<const KeyRecord> change,
    const std::array<uint64_t, kLayerKindCount>& universe) {
  std::vector<uint64_t> in_range(change.size(), 0);
  for (size_t i = 0; i < change.size(); ++i) {
    const KeyRecord& r = change[i];
    if (r.layer >= kLayerKindCount || universe[r.layer] == 0) continue;  // refused below
    const KeyRange range = KeyRangeOfFingerprint(MulHi64(r.key, universe[r.layer]), universe[r.layer]);
    URLGUARD_RETURN_IF_ERROR(before.ForEachInKeyRange(r.layer, range.first, range.last, [&](const KeyRecord&) {
      ++in_range[i];
      return Status::Ok();
    }));
  }
  return TouchedFingerprintsOf(change, in_range, universe);
}

Result<std::vector<TouchedFingerprint>> TouchedFingerprintsOf(
    std::span<const KeyRecord> change, std::span<const uint64_t> before_in_range,
    const std::array<uint64_t, kLayerKindCount>& universe) {
  if (before_in_range.size() != change.size()) {
    return Status::InvalidArgument("touched fingerprints: " + std::to_string(before_in_range.size()) +
                                   " range counts for " + std::to_string(change.size()) + " change records");
  }
  std::vector<TouchedFingerprint> out;
  out.reserve(change.size());
  size_t i = 0;
  while (i < change.size()) {
    const KeyRecord& r = change[i];
    if (r.layer >= kLayerKindCount) return Status::Corruption("state change record with a bad layer");
    const uint64_t u = universe[r.layer];
    const auto layer = static_cast<LayerKind>(r.layer);
    if (u == 0) {
      return Status::FailedPrecondition(
          std::string("layer ") + LayerKindName(layer) +
          " has no fingerprint universe since the last checkpoint: run a checkpoint "
          "(urlguard-publish compact) or a full publish");
    }
    // Keys ascend within a layer and the fingerprint is monotone in the key: the records of one fingerprint
    // are neighbours, and share its range (and so its count). Count their puts and deletes.
    const uint64_t fp = MulHi64(r.key, u);
    const uint64_t in_range = before_in_range[i];
    uint64_t puts = 0, deletes = 0;
    for (; i < change.size() && change[i].layer == r.layer && MulHi64(change[i].key, u) == fp; ++i) {
      const uint8_t op = change[i].reserved;
      if (op == static_cast<uint8_t>(DeltaOp::kPut)) {
        ++puts;
      } else if (op == static_cast<uint8_t>(DeltaOp::kDelete)) {
        ++deletes;
      } else {
        return Status::Corruption("state change record with a bad op");
      }
    }
    // Present after when the change puts an entry in the range, or when `before` holds more entries there than
    // the change deletes (a delete always names an entry of `before`).
    if (deletes > in_range) {
      return Status::Corruption("state change deletes " + std::to_string(deletes) + " entries of a fingerprint " +
                                "range that held " + std::to_string(in_range));
    }
    out.push_back({layer, fp, in_range != 0, puts != 0 || in_range > deletes});
  }
  return out;
}

Result<ManifestDiff> WriteRangeDiffFile(Env* env, const std::string& public_dir, RangeDiff diff,
                                        uint64_t value_cap, const RangeDiffCaps* large, bool* is_large) {
  const uint64_t from = diff.from_version, to = diff.to_version;
  const std::string name = "range diff (" + std::to_string(from) + ", " + std::to_string(to) + "]";
  const RangeDiffCaps regular{kMaxDiffBytes, std::min(value_cap, kMaxDiffEntries)};
  // Checked before encoding: EncodeRangeDiff stops the process on a diff no reader takes.
  uint64_t most = 0;
  LayerKind most_layer = LayerKind::kDomain;
  for (const RangeLayerDiff& l : diff.layers) {
    const uint64_t n = std::max(l.absent.size(), l.present.size());
    if (n > most) {
      most = n;
      most_layer = l.layer;
    }
  }
  const RangeDiffCaps& caps = most > regular.max_values && large != nullptr ? *large : regular;
  if (most > caps.max_values) {
    return Status::ResourceExhausted(name + ": " + std::to_string(most) + " " + LayerKindName(most_layer) +
                                     " values in one stream, more than a reader takes (" +
                                     std::to_string(caps.max_values) + ")");
  }
  const uint64_t byte_cap = large != nullptr ? std::max(large->max_bytes, regular.max_bytes) : regular.max_bytes;
  std::string bytes = EncodeRangeDiff(diff, caps);
  std::vector<RangeLayerDiff>().swap(diff.layers);  // encoded: its values are not needed beside the file
  if (bytes.size() > byte_cap) {
    return Status::ResourceExhausted(name + ": " + std::to_string(bytes.size()) + " bytes, more than a reader takes");
  }
  std::string z = DeflateBytes(bytes, kRangeDiffDeflateLevel);
  if (z.size() > byte_cap) {
    return Status::ResourceExhausted(name + ": " + std::to_string(z.size()) + " deflated bytes, more than a reader takes");
  }
  if (is_large != nullptr) {
    *is_large = most > regular.max_values || bytes.size() > regular.max_bytes || z.size() > regular.max_bytes;
  }
  ManifestDiff md;
  md.from_version = from;
  md.to_version = to;
  md.file.path = RangeDiffFileName(from, to);
  md.file.size = z.size();
  md.file.sha256 = Sha256(z);
  md.file.inflated_size = bytes.size();
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, JoinPath(public_dir, md.file.path), z));
  return md;
}

Status WriteCheckpointRecord(Env* env, const std::string& path, const Manifest& record) {
  URLGUARD_RETURN_IF_ERROR(ValidateManifest(record));
  return WriteFileAtomic(env, path, SerializeManifest(record), /*private_file=*/true);
}

Result<Manifest> ReadCheckpointRecord(Env* env, const std::string& path, const std::string& list) {
  URLGUARD_ASSIGN_OR_RETURN(std::string bytes, env->ReadFile(path, kMaxCheckpointRecordBytes));
  auto parsed = ParseManifest(bytes);
  if (!parsed.ok()) return Status::Corruption(path + ": " + parsed.status().message());
  Manifest m = std::move(parsed).value();
  if (m.format != kManifestFormat2 || m.checkpoint.version != m.version || m.list != list) {
    return Status::Corruption(path + ": not a checkpoint record of list " + list);
  }
  return m;
}

}  // namespace urlguard
