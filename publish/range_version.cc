// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.

#include "publish/range_version.h"

#include "core/byte_io.h"
#include "core/sha256.h"
#include "format/deflate.h"
#include "format/repository_files.h"
#include "platform/env.h"

namespace urlguard {

namespace {
// Rice codes are near their entropy, so deflate finds almost nothing in a range diff (docs/diff-format.md §2): the
// fastest level keeps the zlib framing every download has for the cost of a copy, where level 6 would spend more
// than the diff's encoding on a version's several megabytes of diffs.
constexpr int kRangeDiffDeflateLevel = 1;
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

Result<ManifestDiff> WriteRangeDiffFile(Env* env, const std::string& public_dir, const RangeDiff& diff) {
  std::string bytes = EncodeRangeDiff(diff);
  if (bytes.size() > kMaxDiffBytes) return Status::ResourceExhausted("range diff over kMaxDiffBytes");
  std::string z = DeflateBytes(bytes, kRangeDiffDeflateLevel);
  if (z.size() > kMaxDiffBytes) return Status::ResourceExhausted("compressed range diff over kMaxDiffBytes");
  ManifestDiff md;
  md.from_version = diff.from_version;
  md.to_version = diff.to_version;
  md.file.path = RangeDiffFileName(diff.from_version, diff.to_version);
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
