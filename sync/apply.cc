// Copyright urlguard authors.
#include "sync/apply.h"

#include <cstring>

namespace urlguard {

Result<std::string> ApplyDiffToSnapshot(const SnapshotView& old, const Diff& diff, const Manifest& m) {
  if (diff.list_name != m.list || old.list_name() != m.list) {
    return Status::Corruption("diff, manifest and state name different lists");
  }
  if (diff.from_version != old.version()) {
    return Status::Corruption("diff from version " + std::to_string(diff.from_version) + " does not apply to version " +
                              std::to_string(old.version()));
  }
  if (diff.to_version != m.version) return Status::Corruption("diff leads to another version than the manifest");

  SnapshotContent content;
  content.list_name = m.list;
  content.version = m.version;
  content.created_unix = m.created_unix;
  content.key_hash = old.key_hash();  // a diff never changes how keys are hashed
  for (int li = 0; li < kLayerKindCount; ++li) {
    const LayerKind kind = static_cast<LayerKind>(li);
    const LayerView* old_layer = old.layer(kind);
    if (old_layer != nullptr && old_layer->filter != FilterKind::kFingerprintArray) {
      return Status::Corruption("a Bloom-filter layer cannot take a diff");
    }
    std::vector<uint64_t> old_fps;
    if (old_layer != nullptr) old_layer->fingerprints.Decode(&old_fps);
    const LayerDiff* d = nullptr;
    for (const LayerDiff& x : diff.layers) {
      if (x.layer == kind) d = &x;
    }
    std::vector<uint64_t> new_fps;
    uint64_t universe = old_layer != nullptr ? old_layer->fingerprints.universe() : 0;
    if (d != nullptr) {
      if (old_layer != nullptr && d->universe != universe) {
        return Status::Corruption(std::string(LayerKindName(kind)) + " layer: diff universe differs from the state's");
      }
      URLGUARD_RETURN_IF_ERROR(ApplyLayerDiff(old_fps, *d, &new_fps).WithContext(LayerKindName(kind)));
      universe = d->universe;
    } else {
      new_fps = std::move(old_fps);
    }
    if (new_fps.empty()) continue;  // empty layers are not written (the publisher does the same)
    if (m.universe[li] != universe) {
      return Status::Corruption(std::string(LayerKindName(kind)) + " layer: universe differs from the manifest's");
    }
    LayerContent layer;
    layer.kind = kind;
    layer.universe = universe;
    layer.entries = new_fps.size();
    layer.fingerprints = std::move(new_fps);
    if (kind == LayerKind::kIp) layer.ip_prefixes.bits = m.ip_prefix_lengths;
    content.layers.push_back(std::move(layer));
  }
  if (content.layers.empty()) return Status::Corruption("the diff leaves the list empty");
  auto bytes = BuildSnapshot(content);
  if (!bytes.ok()) return Status::Corruption("rebuilt state is invalid: " + bytes.status().message());
  if (bytes->size() != m.state_bytes ||
      std::memcmp(bytes->data() + bytes->size() - 32, m.state_sha256.data(), 32) != 0) {
    return Status::Corruption("state hash mismatch after applying the diff");
  }
  return bytes;
}

Status CheckSnapshotAgainstManifest(std::string_view snapshot, const Manifest& m) {
  if (snapshot.size() != m.state_bytes) return Status::Corruption("snapshot size differs from the manifest's");
  if (snapshot.size() < kSnapshotHeaderBytes + 32) return Status::Corruption("snapshot too short");
  if (std::memcmp(snapshot.data() + snapshot.size() - 32, m.state_sha256.data(), 32) != 0) {
    return Status::Corruption("snapshot state hash differs from the manifest's");
  }
  // Copy to 8-byte aligned storage for the structural check.
  std::vector<uint64_t> aligned((snapshot.size() + 7) / 8);
  std::memcpy(aligned.data(), snapshot.data(), snapshot.size());
  auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(aligned.data()), snapshot.size(), true);
  if (!view.ok()) return view.status();
  if (view->list_name() != m.list || view->version() != m.version) {
    return Status::Corruption("snapshot is not the list version the manifest names");
  }
  return Status::Ok();
}

}  // namespace urlguard
