// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync/apply.h"

#include <array>
#include <cstring>
#include <memory>

#include "core/fingerprint_set.h"
#include "core/snapshot_writer.h"
#include "platform/env.h"
#include "platform/file_sink.h"

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

namespace {

// Old fingerprints between two hand-backs of the streamed pages to the kernel (about 150 kB of remainders and unary at 18 bits each).
constexpr uint64_t kReleaseEveryEntries = uint64_t{1} << 16;

}  // namespace

Status WriteDiffAppliedSnapshot(Env* env, const std::string& path, const SnapshotView& old,
                                const MappedFile* old_file, const Diff& diff, const Manifest& m) {
  if (diff.list_name != m.list || old.list_name() != m.list) {
    return Status::Corruption("diff, manifest and state name different lists");
  }
  if (diff.from_version != old.version()) {
    return Status::Corruption("diff from version " + std::to_string(diff.from_version) +
                              " does not apply to version " + std::to_string(old.version()));
  }
  if (diff.to_version != m.version) return Status::Corruption("diff leads to another version than the manifest");

  // Every layer's shape first: the writer needs each new entry count and universe before the first byte.
  struct Plan {
    LayerKind kind;
    const LayerView* old_layer;
    const LayerDiff* diff;
  };
  std::vector<Plan> plans;
  std::vector<StreamLayerSpec> specs;
  for (int li = 0; li < kLayerKindCount; ++li) {
    const LayerKind kind = static_cast<LayerKind>(li);
    const std::string name = LayerKindName(kind);
    const LayerView* old_layer = old.layer(kind);
    if (old_layer != nullptr && old_layer->filter != FilterKind::kFingerprintArray) {
      return Status::Corruption("a Bloom-filter layer cannot take a diff");
    }
    const LayerDiff* d = nullptr;
    for (const LayerDiff& x : diff.layers) {
      if (x.layer == kind) d = &x;
    }
    const uint64_t old_count = old_layer != nullptr ? old_layer->fingerprints.size() : 0;
    uint64_t universe = old_layer != nullptr ? old_layer->fingerprints.universe() : 0;
    uint64_t new_count = old_count;
    if (d != nullptr) {
      if (old_layer != nullptr && d->universe != universe) {
        return Status::Corruption(name + " layer: diff universe differs from the state's");
      }
      URLGUARD_RETURN_IF_ERROR(CheckLayerDiffShape(*d, old_count).WithContext(name));
      universe = d->universe;
      new_count = d->new_count;
    }
    if (new_count == 0) continue;  // empty layers are not written (the publisher does the same)
    if (m.universe[li] != universe) {
      return Status::Corruption(name + " layer: universe differs from the manifest's");
    }
    StreamLayerSpec spec;
    spec.kind = kind;
    spec.universe = universe;
    spec.entries = new_count;
    if (kind == LayerKind::kIp) spec.ip_prefixes.bits = m.ip_prefix_lengths;
    specs.push_back(spec);
    plans.push_back({kind, old_layer, d});
  }
  if (specs.empty()) return Status::Corruption("the diff leaves the list empty");

  // Whatever opening the old state made resident (its index) goes back now; the cursors read it again in turn.
  if (old_file != nullptr) ReleaseMappedPages(*old_file, 0, old_file->size());

  // The output and its spills: the writer is pure (core/byte_sink.h); the file is ours to create, sync and, on
  // any failure, remove. The Store verifies and renames it.
  const std::string tmp = path + ".tmp";
  auto file = CreateTempFile(env, tmp);
  if (!file.ok()) return file.status();
  WritableFileSink sink(file->get());
  TempFileSpills spills(env, tmp);
  auto merge = [&]() -> Status {
    // A diff never changes how keys are hashed: the new state keeps the old one's key hash (and format version).
    auto writer = SnapshotWriter::Create(&sink, &spills, {m.list, m.version, m.created_unix, old.key_hash()}, specs);
    if (!writer.ok()) {
      if (writer.status().code() == StatusCode::kInvalidArgument) {
        return Status::Corruption("rebuilt state is invalid: " + writer.status().message());
      }
      return writer.status();
    }
    SnapshotWriter& w = **writer;
    if (w.file_size() != m.state_bytes) {
      return Status::Corruption("state hash mismatch after applying the diff: the result would be " +
                                std::to_string(w.file_size()) + " bytes, the manifest signs " +
                                std::to_string(m.state_bytes));
    }

    for (size_t i = 0; i < plans.size(); ++i) {
      const Plan& p = plans[i];
      if (i > 0) URLGUARD_RETURN_IF_ERROR(w.NextLayer());
      std::unique_ptr<FingerprintSetCursor> cursor;
      if (p.old_layer != nullptr) cursor = std::make_unique<FingerprintSetCursor>(p.old_layer->fingerprints);
      auto release = [&] {
        if (old_file == nullptr || cursor == nullptr) return;
        for (FingerprintSetCursor::Span done : {cursor->UnaryDone(), cursor->RemaindersDone()}) {
          ReleaseMappedPages(*old_file, static_cast<size_t>(done.data - old_file->data()), done.size);
        }
      };
      auto next_old = [&](uint64_t* fp) {
        if (cursor == nullptr) return false;
        if ((cursor->position() & (kReleaseEveryEntries - 1)) == kReleaseEveryEntries - 1) release();
        return cursor->Next(fp);
      };
      auto emit = [&w](uint64_t fp) { return w.Add(fp); };
      Status s;
      if (p.diff != nullptr) {
        s = MergeLayerDiff(*p.diff, cursor != nullptr ? p.old_layer->fingerprints.size() : 0, next_old, emit);
      } else {
        uint64_t fp = 0;
        while (s.ok() && next_old(&fp)) s = emit(fp);
      }
      if (!s.ok()) {
        if (s.code() == StatusCode::kInvalidArgument) {  // the writer refusing the merged sequence
          return Status::Corruption("rebuilt state is invalid: " + s.message()).WithContext(LayerKindName(p.kind));
        }
        return s.WithContext(LayerKindName(p.kind));
      }
      release();
    }
    auto digest = w.Finish();
    if (!digest.ok()) return digest.status();
    if (*digest != m.state_sha256) return Status::Corruption("state hash mismatch after applying the diff");
    Status s = (*file)->Sync();
    if (s.ok()) s = (*file)->Close();
    return s.WithContext(tmp);
  };
  Status s = merge();
  if (!s.ok()) {
    file->reset();
    (void)env->RemoveFile(tmp);
  }
  return s;
}

Result<SnapshotView> OpenSnapshotBytes(std::string_view bytes, bool verify_checksum, std::vector<uint64_t>* aligned) {
  const uint8_t* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    aligned->assign((bytes.size() + 7) / 8, 0);
    std::memcpy(aligned->data(), bytes.data(), bytes.size());
    data = reinterpret_cast<const uint8_t*>(aligned->data());
  }
  return SnapshotView::Open(data, bytes.size(), verify_checksum);
}

Status CheckSnapshotAgainstManifest(std::string_view snapshot, const Manifest& m) {
  if (snapshot.size() != m.state_bytes) return Status::Corruption("snapshot size differs from the manifest's");
  if (snapshot.size() < kSnapshotHeaderBytes + 32) return Status::Corruption("snapshot too short");
  if (std::memcmp(snapshot.data() + snapshot.size() - 32, m.state_sha256.data(), 32) != 0) {
    return Status::Corruption("snapshot state hash differs from the manifest's");
  }
  std::vector<uint64_t> aligned;
  auto view = OpenSnapshotBytes(snapshot, /*verify_checksum=*/true, &aligned);
  if (!view.ok()) return view.status();
  if (view->list_name() != m.list || view->version() != m.version) {
    return Status::Corruption("snapshot is not the list version the manifest names");
  }
  return Status::Ok();
}

// ---- Manifest format 2 ------------------------------------------------------------------------------------

Result<Sha256Digest> SnapshotSetDigest(const SnapshotView& snapshot) {
  // A Bloom-filter layer (a list too large for a fingerprint array) counts as absent, {0, 0} with universe 0, as
  // the manifest's universe 0 for it says. It never takes a range diff.
  return SetDigest(SetDigestInputOf(snapshot));
}

namespace {

// A hop's layer checks that need no old fingerprint: the decoded form's shape in full; the streamed form was
// checked whole by ParseRangeDiff, with the caps the manifest gives its file, so only the counts are looked at.
Status CheckHopLayer(const RangeLayerDiff& d, const Manifest& m) {
  return CheckRangeLayerDiffShape(d, LargeRangeDiffValueCap(m));
}
Status CheckHopLayer(const RangeLayerStreams& d, const Manifest& m) {
  const uint64_t cap = LargeRangeDiffValueCap(m);
  if (d.absent_count > cap || d.present_count > cap) {
    return Status::Corruption(std::string("apply range diff to layer ") + LayerKindName(d.layer) +
                              ": more values than a diff of this list may hold");
  }
  return Status::Ok();
}

// WriteRangeDiffAppliedSnapshot for decoded hops (RangeDiff) and parsed ones (RangeDiffStreams): the merge is the
// same, only where the values come from differs (RangeLayerMerger).
template <typename Hop>
Status WriteRangeApplied(Env* env, const std::string& path, const SnapshotView& old, const MappedFile* old_file,
                         std::span<const Hop* const> hops, const Manifest& m, Sha256Digest* state_sha256) {
  using HopLayer = typename decltype(Hop::layers)::value_type;
  if (m.format != kManifestFormat2) return Status::InvalidArgument("range diffs come with format 2 manifests");
  if (hops.empty() || hops.size() > 2) return Status::InvalidArgument("one or two range diffs, in order");
  for (const Hop* diff : hops) {
    if (diff->list_name != m.list || old.list_name() != m.list) {
      return Status::Corruption("range diff, manifest and state name different lists");
    }
  }
  // Spec (manifest-format.md §8.3): a diff with A > F is never applied; F <= V.
  const Hop& first = *hops.front();
  if (first.from_version > old.version() || old.version() > first.to_version) {
    return Status::Corruption("range diff (" + std::to_string(first.from_version) + ", " +
                              std::to_string(first.to_version) + "] does not apply to version " +
                              std::to_string(old.version()));
  }
  if (hops.size() == 2 && hops[1]->from_version != first.to_version) {
    return Status::Corruption("the second range diff does not start where the first ends");
  }
  if (hops.back()->to_version != m.version) {
    return Status::Corruption("range diff leads to another version than the manifest");
  }

  struct Plan {
    LayerKind kind;
    const LayerView* old_layer;
    std::array<const HopLayer*, 2> diffs;  // per hop, nullptr where the hop leaves the layer untouched
  };
  std::vector<Plan> plans;
  std::vector<StreamLayerSpec> specs;
  for (int li = 0; li < kLayerKindCount; ++li) {
    const LayerKind kind = static_cast<LayerKind>(li);
    const std::string name = LayerKindName(kind);
    const LayerView* old_layer = old.layer(kind);
    if (old_layer != nullptr && old_layer->filter != FilterKind::kFingerprintArray) {
      return Status::Corruption("a Bloom-filter layer cannot take a diff");
    }
    std::array<const HopLayer*, 2> ds = {nullptr, nullptr};
    for (size_t h = 0; h < hops.size(); ++h) {
      for (const HopLayer& x : hops[h]->layers) {
        if (x.layer == kind) ds[h] = &x;
      }
    }
    uint64_t universe = old_layer != nullptr ? old_layer->fingerprints.universe() : 0;
    uint64_t new_count = old_layer != nullptr ? old_layer->fingerprints.size() : 0;
    bool known = old_layer != nullptr;  // `universe` is the layer's (else the first hop that has it sets it)
    for (const HopLayer* d : ds) {
      if (d == nullptr) continue;
      if (known && d->universe != universe) {
        return Status::Corruption(name + " layer: range diff universe differs from the state's");
      }
      URLGUARD_RETURN_IF_ERROR(CheckHopLayer(*d, m).WithContext(name));
      known = true;
      universe = d->universe;
      new_count = d->new_count;
    }
    if (new_count == 0) continue;  // empty layers are not written (the publisher does the same)
    if (m.universe[li] != universe) return Status::Corruption(name + " layer: universe differs from the manifest's");
    StreamLayerSpec spec;
    spec.kind = kind;
    spec.universe = universe;
    spec.entries = new_count;
    if (kind == LayerKind::kIp) spec.ip_prefixes.bits = m.ip_prefix_lengths;
    specs.push_back(spec);
    plans.push_back({kind, old_layer, ds});
  }
  if (specs.empty()) return Status::Corruption("the range diff leaves the list empty");
  if (old_file != nullptr) ReleaseMappedPages(*old_file, 0, old_file->size());

  const std::string tmp = path + ".tmp";
  auto file = CreateTempFile(env, tmp);
  if (!file.ok()) return file.status();
  WritableFileSink sink(file->get());
  TempFileSpills spills(env, tmp);
  auto merge = [&]() -> Status {
    auto writer = SnapshotWriter::Create(&sink, &spills, {m.list, m.version, m.created_unix, old.key_hash()}, specs);
    if (!writer.ok()) {
      if (writer.status().code() == StatusCode::kInvalidArgument) {
        return Status::Corruption("rebuilt state is invalid: " + writer.status().message());
      }
      return writer.status();
    }
    SnapshotWriter& w = **writer;
    SetDigestInput digest_in;
    for (size_t i = 0; i < plans.size(); ++i) {
      const Plan& p = plans[i];
      const size_t li = static_cast<size_t>(p.kind);
      if (i > 0) URLGUARD_RETURN_IF_ERROR(w.NextLayer());
      digest_in.universe[li] = specs[i].universe;
      std::unique_ptr<FingerprintSetCursor> cursor;
      if (p.old_layer != nullptr) cursor = std::make_unique<FingerprintSetCursor>(p.old_layer->fingerprints);
      auto release = [&] {
        if (old_file == nullptr || cursor == nullptr) return;
        for (FingerprintSetCursor::Span done : {cursor->UnaryDone(), cursor->RemaindersDone()}) {
          ReleaseMappedPages(*old_file, static_cast<size_t>(done.data - old_file->data()), done.size);
        }
      };
      auto next_old = [&](uint64_t* fp) {
        if (cursor == nullptr) return false;
        if ((cursor->position() & (kReleaseEveryEntries - 1)) == kReleaseEveryEntries - 1) release();
        return cursor->Next(fp);
      };
      // The set digest is computed on what is written, as it is written: no second pass over the new file.
      LayerSetSum& sum = digest_in.layers[li];
      auto emit = [&](uint64_t fp) {
        AddToSetSum(&sum, p.kind, fp);
        return w.Add(fp);
      };
      // Two hops stream through each other (old -> C -> V), never composed in memory: the client holds the two
      // diffs (as their files hold them, when parsed), not a third, composed one.
      Status s;
      if (p.diffs[0] != nullptr && p.diffs[1] != nullptr) {
        RangeLayerMerger<decltype(next_old)&> hop1(*p.diffs[0], next_old);
        auto from_hop1 = [&](uint64_t* fp) { return hop1.Next(fp); };
        s = MergeRangeLayerDiff(*p.diffs[1], from_hop1, emit);
        if (!hop1.status().ok()) s = hop1.status();  // the first hop's error, not what it caused in the second
      } else if (const HopLayer* d = p.diffs[0] != nullptr ? p.diffs[0] : p.diffs[1]) {
        s = MergeRangeLayerDiff(*d, next_old, emit);
      } else {
        uint64_t fp = 0;
        while (s.ok() && next_old(&fp)) s = emit(fp);
      }
      if (!s.ok()) {
        if (s.code() == StatusCode::kInvalidArgument) {  // the writer refusing the merged sequence
          return Status::Corruption("rebuilt state is invalid: " + s.message()).WithContext(LayerKindName(p.kind));
        }
        return s.WithContext(LayerKindName(p.kind));
      }
      release();
    }
    auto digest = w.Finish();
    if (!digest.ok()) return digest.status();
    if (SetDigest(digest_in) != m.state_digest) {
      return Status::Corruption("set digest mismatch after applying the range diff");
    }
    *state_sha256 = *digest;
    Status s = (*file)->Sync();
    if (s.ok()) s = (*file)->Close();
    return s.WithContext(tmp);
  };
  Status s = merge();
  if (!s.ok()) {
    file->reset();
    (void)env->RemoveFile(tmp);
  }
  return s;
}

}  // namespace

Status WriteRangeDiffAppliedSnapshot(Env* env, const std::string& path, const SnapshotView& old,
                                     const MappedFile* old_file, const RangeDiff& diff, const Manifest& m,
                                     Sha256Digest* state_sha256) {
  const RangeDiff* hops[] = {&diff};
  return WriteRangeApplied<RangeDiff>(env, path, old, old_file, hops, m, state_sha256);
}

Status WriteRangeDiffAppliedSnapshot(Env* env, const std::string& path, const SnapshotView& old,
                                     const MappedFile* old_file, std::span<const RangeDiff* const> hops,
                                     const Manifest& m, Sha256Digest* state_sha256) {
  return WriteRangeApplied(env, path, old, old_file, hops, m, state_sha256);
}

Status WriteRangeDiffAppliedSnapshot(Env* env, const std::string& path, const SnapshotView& old,
                                     const MappedFile* old_file, std::span<const RangeDiffStreams* const> hops,
                                     const Manifest& m, Sha256Digest* state_sha256) {
  return WriteRangeApplied(env, path, old, old_file, hops, m, state_sha256);
}

Status CheckSnapshotAgainstCheckpoint(std::string_view snapshot, const Manifest& m) {
  const ManifestCheckpoint& c = m.checkpoint;
  if (snapshot.size() != c.state_bytes) return Status::Corruption("snapshot size differs from the checkpoint's");
  if (snapshot.size() < kSnapshotHeaderBytes + 32) return Status::Corruption("snapshot too short");
  if (std::memcmp(snapshot.data() + snapshot.size() - 32, c.state_sha256.data(), 32) != 0) {
    return Status::Corruption("snapshot state hash differs from the checkpoint's");
  }
  std::vector<uint64_t> aligned;
  auto view = OpenSnapshotBytes(snapshot, /*verify_checksum=*/true, &aligned);
  if (!view.ok()) return view.status();
  if (view->list_name() != m.list || view->version() != c.version) {
    return Status::Corruption("snapshot is not the list version the checkpoint names");
  }
  return Status::Ok();
}

}  // namespace urlguard
