// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// One sync pass (docs/architecture.md §5). The "Spec:" comments quote docs/manifest-format.md §6, "Client order of
// checks", whose numbering they follow.
#include "sync/updater.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diff_codec.h"
#include "core/list_name.h"
#include "core/sha256.h"
#include "core/snapshot.h"
#include "format/bounded_inflate.h"
#include "format/manifest.h"
#include "format/repository_files.h"
#include "platform/env.h"
#include "sync/apply.h"
#include "sync/freshness.h"
#include "sync/time_floor.h"

namespace urlguard {
namespace {

// A snapshot smaller than its header plus its trailing SHA-256 cannot be valid; refusing it early also keeps
// CheckSnapshotAgainstManifest (which reads the last 32 bytes) on safe ground.
constexpr size_t kMinSnapshotBytes = kSnapshotHeaderBytes + 32;

// The running pass: what every step may add to the outcome.
struct Pass {
  Fetcher& fetcher;
  std::string dir_url;  // B/v1/lists/LIST/
  SyncOutcome* out;

  // GET `name` below dir_url with a body cap (and the body to `body_sink` as it arrives, when set). Counts the
  // bytes and keeps the largest Retry-After.
  Result<FetchResponse> Get(const std::string& name, size_t max_bytes, const std::string& if_none_match = "",
                            std::function<void(std::string_view)> body_sink = nullptr) {
    FetchRequest req;
    req.url = dir_url + name;
    req.max_bytes = max_bytes;
    req.if_none_match = if_none_match;
    req.body_sink = std::move(body_sink);
    auto resp = fetcher.Fetch(req);
    if (!resp.ok()) return resp.status().WithContext("GET " + name);
    out->bytes_downloaded += resp->body_bytes;
    out->retry_after_seconds = std::max(out->retry_after_seconds, resp->retry_after_seconds);
    if (out->server_date_unix < 0) out->server_date_unix = resp->server_date_unix;
    return resp;
  }
};

Status HttpError(const std::string& name, int status) {
  std::string m = "GET " + name + ": HTTP " + std::to_string(status);
  if (status == 404 || status == 410) return Status::NotFound(std::move(m));
  return Status::Unavailable(std::move(m));
}

// Spec 7-9: download with the signed size as the hard cap, check the SHA-256, inflate with the signed
// inflated_size as the cap; the result must be exactly that long. The body is hashed and fed to `inflater` as it
// arrives, so the compressed file is never held whole (a 100 M-entry list's snapshot is 200 MB, and a Rice-coded
// diff barely compresses); the checks are made, and their errors reported, in the spec's order once it is
// complete (this, then CheckInflated on what the inflater made of it), and nothing inflated is used unless every
// one of them holds.
Status DownloadThrough(Pass& pass, const ManifestFile& file, BoundedInflater& inflater) {
  Sha256Hasher hasher;
  auto sink = [&](std::string_view piece) {
    hasher.Update(piece);
    inflater.Feed(piece);
  };
  // Spec 7: "Download with the signed `size` as the hard cap (more bytes: abort)."
  auto resp = pass.Get(file.path, static_cast<size_t>(file.size), "", sink);
  if (!resp.ok()) {
    if (resp.status().code() == StatusCode::kResourceExhausted) {
      return resp.status().WithContext("more bytes than the signed size " + std::to_string(file.size));
    }
    return resp.status();
  }
  if (resp->status != 200) return HttpError(file.path, resp->status);
  if (resp->body_bytes != file.size) {
    return Status::Corruption(file.path + ": truncated download: " + std::to_string(resp->body_bytes) +
                              " of " + std::to_string(file.size) + " signed bytes");
  }
  // Spec 8: "SHA-256 of the downloaded bytes equals the signed `sha256`."
  if (hasher.Finish() != file.sha256) {
    return Status::Corruption(file.path + ": SHA-256 differs from the signed one");
  }
  return Status::Ok();
}

// Spec 9: "Bounded inflate with the signed `inflated_size` as the cap, and the result must be exactly that
// long." (Inflated on the way; its verdict is taken only now.) `inflated`: the inflater's result, its length.
Status CheckInflated(const ManifestFile& file, const Result<size_t>& inflated) {
  if (!inflated.ok()) return inflated.status().WithContext(file.path);
  if (*inflated != file.inflated_size) {
    return Status::Corruption(file.path + ": inflates to " + std::to_string(*inflated) +
                              " bytes, the manifest signs " + std::to_string(file.inflated_size));
  }
  return Status::Ok();
}

// Spec 7-9, the inflated file in memory (diffs: the apply reads them at random places).
Result<std::string> DownloadSignedFile(Pass& pass, const ManifestFile& file) {
  BoundedInflater inflater(static_cast<size_t>(file.inflated_size), static_cast<size_t>(file.inflated_size));
  URLGUARD_RETURN_IF_ERROR(DownloadThrough(pass, file, inflater));
  auto inflated = inflater.Finish();
  URLGUARD_RETURN_IF_ERROR(CheckInflated(
      file, inflated.ok() ? Result<size_t>(inflated->size()) : Result<size_t>(inflated.status())));
  return inflated;
}

// The checksum a snapshot ends with (SnapshotView::VerifyChecksum: the SHA-256 of every byte before its last 32),
// computed as the bytes stream past: the newest 32 bytes are held back from the hash until more come.
class StreamedSnapshotChecksum {
 public:
  void Update(std::string_view piece) {
    if (piece.size() >= kTail) {
      hasher_.Update(tail_, held_);
      hasher_.Update(piece.data(), piece.size() - kTail);
      std::memcpy(tail_, piece.data() + piece.size() - kTail, kTail);
      held_ = kTail;
      return;
    }
    const size_t keep = kTail - piece.size();  // of the held bytes, the newest `keep` stay held
    if (held_ > keep) {
      hasher_.Update(tail_, held_ - keep);
      std::memmove(tail_, tail_ + (held_ - keep), keep);
      held_ = keep;
    }
    std::memcpy(tail_ + held_, piece.data(), piece.size());
    held_ += piece.size();
  }
  // The last 32 bytes (the checksum the snapshot carries); all zero before 32 bytes came.
  Sha256Digest tail() const {
    Sha256Digest d{};
    if (held_ == kTail) std::memcpy(d.data(), tail_, kTail);
    return d;
  }
  // True when at least 32 bytes came and the SHA-256 of the bytes before the last 32 is those 32. Call once.
  bool Matches() { return held_ == kTail && hasher_.Finish() == tail(); }

 private:
  static constexpr size_t kTail = 32;
  Sha256Hasher hasher_;
  uint8_t tail_[kTail] = {};
  size_t held_ = 0;
};

// Spec 7-11 for a snapshot, written to a new file at `path` as it arrives instead of held (a 1.2 B-entry list's is
// 2.5 GB): hashed, inflated and checksummed on the way, the verdicts of 7-9 taken in the spec's order once it is
// complete; then 10-11: its size and state hash (`state_bytes` and `state_sha256` as the `whose` -- "manifest" or
// "checkpoint" -- signs them), its own checksum, its structure, list and version. Returns the file, mapped, with
// the pages the checks read handed back to the kernel. The caller removes the file whatever the outcome.
Result<std::unique_ptr<MappedFile>> DownloadSnapshotTo(Pass& pass, Env* env, const ManifestFile& file,
                                                       const std::string& path, const std::string& list,
                                                       uint64_t version, uint64_t state_bytes,
                                                       const Sha256Digest& state_sha256, const std::string& whose) {
  {
    URLGUARD_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, CreateTempFile(env, path));
    StreamedSnapshotChecksum checksum;
    BoundedInflater inflater(static_cast<size_t>(file.inflated_size), [&](std::string_view piece) {
      checksum.Update(piece);
      return out->Append(piece);
    });
    URLGUARD_RETURN_IF_ERROR(DownloadThrough(pass, file, inflater));
    const Result<size_t> inflated = inflater.FinishOutput();
    URLGUARD_RETURN_IF_ERROR(CheckInflated(file, inflated));
    // Spec 10-11, as CheckSnapshotAgainstManifest and CheckSnapshotAgainstCheckpoint (sync/apply.h) take them.
    if (*inflated < kMinSnapshotBytes) return Status::Corruption(file.path + ": too short for a snapshot");
    if (*inflated != state_bytes) {
      return Status::Corruption("snapshot size differs from the " + whose + "'s").WithContext(file.path);
    }
    if (checksum.tail() != state_sha256) {
      return Status::Corruption("snapshot state hash differs from the " + whose + "'s").WithContext(file.path);
    }
    if (!checksum.Matches()) {
      return Status::Corruption("snapshot: content checksum mismatch (corrupt file)").WithContext(file.path);
    }
    URLGUARD_RETURN_IF_ERROR(out->Sync());
    URLGUARD_RETURN_IF_ERROR(out->Close());
  }
  URLGUARD_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> mapped, env->MapReadOnly(path));
  auto view = SnapshotView::Open(mapped->data(), mapped->size(), /*verify_checksum=*/false);  // checked above
  if (!view.ok()) return view.status().WithContext(file.path);
  if (view->list_name() != list || view->version() != version) {
    return Status::Corruption("snapshot is not the list version the " + whose + " names").WithContext(file.path);
  }
  ReleaseMappedPages(*mapped, 0, mapped->size());  // the header and index pages Open() read
  return mapped;
}

// Spec 10-12 with a diff: decode, stream the installed state and the diff into the new file (sync/apply.h:
// the old state is walked through its mapping, never decoded into memory), check the signed state hash, and
// install. *diff_failed tells the caller whether to fall back to the snapshot: true for anything wrong with the
// diff or the base, false for a failure of the Store itself (a full disk, a refused version), which the
// snapshot would meet as well.
Status InstallFromDiff(Pass& pass, Store& store, const InstalledList& base, const Manifest& m,
                       const ManifestDiff& d, const InstalledList& meta, bool* diff_failed) {
  *diff_failed = true;
  URLGUARD_ASSIGN_OR_RETURN(std::string bytes, DownloadSignedFile(pass, d.file));
  auto diff = DecodeDiff(bytes);
  if (!diff.ok()) return diff.status().WithContext(d.file.path);
  bytes = std::string();  // the decoded diff is all that is needed now
  auto mapped = store.env()->MapReadOnly(store.PathOf(base));
  if (!mapped.ok()) return mapped.status().WithContext("diff base");
  // The base was verified with its checksum when it was installed (and at every Store::Open); files are never
  // written in place, so the structural checks suffice here. The result is checked against the signed hash.
  auto view = SnapshotView::Open((*mapped)->data(), (*mapped)->size(), /*verify_checksum=*/false);
  if (!view.ok()) return view.status().WithContext("diff base " + base.file);
  Status applied;
  Status installed = store.InstallWith(meta, [&](const std::string& path) {
    applied = WriteDiffAppliedSnapshot(store.env(), path, *view, mapped->get(), *diff, m);
    return applied;
  });
  if (installed.ok()) return installed;
  // A full disk while writing is the Store's problem, not the diff's.
  *diff_failed = !applied.ok() && applied.code() != StatusCode::kResourceExhausted;
  return *diff_failed ? applied.WithContext(d.file.path) : installed;
}

// Spec 10-12 with the snapshot: written as the new file as it arrives (never held), checked, installed.
// *snapshot_error: the snapshot's own failure (download, inflate, checks), told apart from the Store's.
Status InstallFromSnapshot(Pass& pass, Store& store, const Manifest& m, const InstalledList& meta,
                           Status* snapshot_error) {
  return store.InstallWith(meta, [&](const std::string& path) {
    auto file = DownloadSnapshotTo(pass, store.env(), m.snapshot, path + ".tmp", m.list, m.version, m.state_bytes,
                                   m.state_sha256, "manifest");
    *snapshot_error = file.status();
    return file.status();
  });
}

// ---- Manifest format 2 (docs/manifest-format.md §8.3) --------------------------------------------------------

// The range diffs of a client's path, as their files hold them: the inflated bytes and, pointing into them, the
// parsed and checked streams, which the merge decodes as it reads them (a few bits a value, not 8 bytes).
struct FetchedRangeDiffs {
  std::vector<std::string> bytes;  // never resized once a diff points into it
  std::vector<RangeDiffStreams> diffs;
};

// Downloads and parses the range diffs of `hops` (in order; each an element of m.diffs or m.large_diffs, read
// with the caps the manifest gives it) and checks that each file is the diff the manifest names. Two hops are
// applied through each other, not composed (WriteRangeDiffAppliedSnapshot).
Result<std::unique_ptr<FetchedRangeDiffs>> FetchRangeDiffs(Pass& pass, const Manifest& m,
                                                           const std::vector<const ManifestDiff*>& hops) {
  auto fetched = std::make_unique<FetchedRangeDiffs>();
  fetched->bytes.reserve(hops.size());
  for (const ManifestDiff* hop : hops) {
    URLGUARD_ASSIGN_OR_RETURN(std::string bytes, DownloadSignedFile(pass, hop->file));
    pass.out->diff_bytes += hop->file.size;
    fetched->bytes.push_back(std::move(bytes));
    auto d = ParseRangeDiff(fetched->bytes.back(), RangeDiffCapsFor(m, *hop));
    if (!d.ok()) return d.status().WithContext(hop->file.path);
    if (d->from_version != hop->from_version || d->to_version != hop->to_version) {
      return Status::Corruption(hop->file.path + ": the file is the range diff (" + std::to_string(d->from_version) +
                                ", " + std::to_string(d->to_version) + "], the manifest names (" +
                                std::to_string(hop->from_version) + ", " + std::to_string(hop->to_version) + "]");
    }
    fetched->diffs.push_back(std::move(*d));
  }
  return fetched;
}

// Spec (§8.3) with range diffs: stream `base` (at some version F) through the diffs into the new file, check the
// set digest, install. *diff_failed as InstallFromDiff's.
Status InstallFromRangeDiff(Store& store, const SnapshotView& base, const MappedFile* base_file, const Manifest& m,
                            const FetchedRangeDiffs& fetched, const InstalledList& meta, bool* diff_failed) {
  *diff_failed = true;
  std::vector<const RangeDiffStreams*> hops;
  for (const RangeDiffStreams& d : fetched.diffs) hops.push_back(&d);
  // Format 2 signs the set digest, not the new file's SHA-256: the Store, which checks the file it installs
  // against meta.state_sha256 after `write` returns, gets the hash of the file just written and proven.
  InstalledList with_hash = meta;
  Status applied;
  Status installed = store.InstallWith(with_hash, [&](const std::string& path) {
    Sha256Digest sha{};
    applied = WriteRangeDiffAppliedSnapshot(store.env(), path, base, base_file, hops, m, &sha);
    if (applied.ok()) with_hash.state_sha256 = sha;
    return applied;
  });
  if (installed.ok()) return installed;
  *diff_failed = !applied.ok() && applied.code() != StatusCode::kResourceExhausted;
  return *diff_failed ? applied : installed;
}

// True when every fingerprint layer of `base` has the manifest's universe (a range diff cannot cross a
// universe change: the client takes the checkpoint snapshot).
bool SameUniverses(const SnapshotView& base, const Manifest& m) {
  for (int li = 0; li < kLayerKindCount; ++li) {
    const LayerView* layer = base.layer(static_cast<LayerKind>(li));
    if (layer == nullptr) continue;
    if (layer->filter != FilterKind::kFingerprintArray) return false;
    if (layer->fingerprints.size() != 0 && layer->fingerprints.universe() != m.universe[li]) return false;
  }
  return true;
}

// The whole format 2 pass after the manifest checks: the path of §8.3, its fallback, the install.
Status SyncFormat2(Pass& pass, Store& store, const InstalledList* before, const Manifest& m,
                   const InstalledList& meta) {
  SyncOutcome* out = pass.out;
  const uint64_t c = m.checkpoint.version;
  const uint64_t v = m.version;
  // Validation guarantees (C, V] when C < V.
  const ManifestDiff* from_checkpoint = c < v ? FindRangeDiff(m, v, c) : nullptr;
  if (c < v && (from_checkpoint == nullptr || from_checkpoint->from_version != c)) {
    return Status::Corruption("manifest offers no diff from its checkpoint");
  }

  // The path from the installed state, if any: one diff (F >= C) or two (F < C).
  std::unique_ptr<MappedFile> mapped;
  std::optional<SnapshotView> base;
  std::vector<const ManifestDiff*> hops;
  if (before != nullptr && before->version < v) {
    auto file = store.env()->MapReadOnly(store.PathOf(*before));
    if (file.ok()) {
      auto view = SnapshotView::Open((*file)->data(), (*file)->size(), /*verify_checksum=*/false);
      if (view.ok() && view->version() == before->version && SameUniverses(*view, m)) {
        mapped = std::move(*file);
        base.emplace(*view);
      }
    }
    const uint64_t f = before->version;
    if (base.has_value() && f >= c) {
      if (const ManifestDiff* d = FindRangeDiff(m, v, f)) hops = {d};
    } else if (base.has_value()) {
      const ManifestDiff* first = FindRangeDiff(m, c, f);
      if (first != nullptr) {
        hops = {first};
        if (from_checkpoint != nullptr) hops.push_back(from_checkpoint);
        // Whichever is fewer bytes: the two diffs, or the checkpoint snapshot and the diff from C.
        const uint64_t via_diffs = first->file.size + (from_checkpoint != nullptr ? from_checkpoint->file.size : 0);
        const uint64_t via_snapshot =
            m.checkpoint.snapshot.size + (from_checkpoint != nullptr ? from_checkpoint->file.size : 0);
        if (via_snapshot < via_diffs) hops.clear();
      }
    }
  }
  if (!hops.empty()) {
    bool diff_failed = false;
    Status s;
    auto diff = FetchRangeDiffs(pass, m, hops);
    if (diff.ok()) {
      s = InstallFromRangeDiff(store, *base, mapped.get(), m, **diff, meta, &diff_failed);
    } else {
      s = diff.status();
      diff_failed = true;
    }
    if (s.ok()) {
      out->used_diff = true;
      out->range_diffs = static_cast<uint32_t>(hops.size());
      return s;
    }
    if (!diff_failed) return s;
    out->diff_error = s;
    out->fell_back_to_snapshot = true;
  }
  base.reset();
  mapped.reset();

  // The checkpoint snapshot, then the diff from the checkpoint when the checkpoint is older than V. The snapshot
  // is written to a file as it arrives, never held: the new file itself when it is V's state, else a scratch file
  // beside the list's (Store::ScratchPath, removed after the install) that the diff is applied to.
  Env* env = store.env();
  auto download = [&](const std::string& path) {
    return DownloadSnapshotTo(pass, env, m.checkpoint.snapshot, path, m.list, c, m.checkpoint.state_bytes,
                              m.checkpoint.state_sha256, "checkpoint");
  };
  if (c == v) {
    InstalledList with_hash = meta;
    with_hash.state_sha256 = m.checkpoint.state_sha256;
    Status snapshot_error;
    Status installed = store.InstallWith(with_hash, [&](const std::string& path) {
      snapshot_error = [&]() -> Status {
        URLGUARD_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, download(path + ".tmp"));
        out->used_checkpoint_snapshot = true;
        auto view = SnapshotView::Open(file->data(), file->size(), /*verify_checksum=*/false);
        if (!view.ok()) return view.status().WithContext(m.checkpoint.snapshot.path);
        auto digest = SnapshotSetDigest(*view);
        ReleaseMappedPages(*file, 0, file->size());
        if (!digest.ok()) return digest.status().WithContext(m.checkpoint.snapshot.path);
        if (*digest != m.state_digest) {
          return Status::Corruption(m.checkpoint.snapshot.path + ": set digest differs from the manifest's");
        }
        return Status::Ok();
      }();
      return snapshot_error;
    });
    return snapshot_error.ok() ? installed : snapshot_error;
  }
  URLGUARD_ASSIGN_OR_RETURN(const std::string scratch, store.ScratchPath(m.list, "checkpoint-" + std::to_string(c)));
  struct RemoveWhenDone {
    Env* env;
    std::string path;
    ~RemoveWhenDone() { (void)env->RemoveFile(path); }
  } remove_scratch{env, scratch};
  URLGUARD_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, download(scratch));
  out->used_checkpoint_snapshot = true;
  auto view = SnapshotView::Open(file->data(), file->size(), /*verify_checksum=*/false);  // checked by download
  if (!view.ok()) return view.status().WithContext(m.checkpoint.snapshot.path);
  auto diff = FetchRangeDiffs(pass, m, {from_checkpoint});
  if (!diff.ok()) return diff.status();
  bool diff_failed = false;
  URLGUARD_RETURN_IF_ERROR(InstallFromRangeDiff(store, *view, file.get(), m, **diff, meta, &diff_failed)
                               .WithContext("checkpoint " + std::to_string(c) + " + " + from_checkpoint->file.path));
  out->range_diffs = 1;
  return Status::Ok();
}

// The server serves (or answers 304 for) the installed manifest after its signed expiry: a freeze attack, or a
// publisher that stopped re-signing. Either way the list is stale and the pass has failed.
Status FrozenError(const InstalledList& installed, int64_t now_unix) {
  return Status::FailedPrecondition("frozen: the server still serves version " +
                                    std::to_string(installed.version) + ", whose manifest expired at " +
                                    std::to_string(installed.expires_unix) + " (now " +
                                    std::to_string(now_unix) + "): stale");
}

}  // namespace

const char* SyncOutcomeKindName(SyncOutcome::Kind kind) {
  switch (kind) {
    case SyncOutcome::kUpdated:
      return "updated";
    case SyncOutcome::kNotModified:
      return "not_modified";
    case SyncOutcome::kUpToDate:
      return "up_to_date";
    case SyncOutcome::kFailed:
      return "failed";
  }
  return "failed";
}

SyncOutcome SyncList(Fetcher& fetcher, Store& store, const UpdaterOptions& options, const std::string& list,
                     const std::string& etag, int64_t clock_unix) {
  SyncOutcome out;
  // The client never acts on a time before the newest signed `created` it has verified (sync/time_floor.h).
  const int64_t now_unix = TrustedNow(
      clock_unix, std::max(ReadTimeFloor(store.env(), store.dir()), FloorOfState(store.state())));
  const InstalledList* before = store.state().FindInstalled(list);
  out.from_version = before != nullptr ? before->version : 0;
  bool refused_expired = false;

  // Every exit goes through here: the outcome describes what serves after the pass.
  auto finish = [&](SyncOutcome::Kind kind, Status error) {
    out.kind = kind;
    out.error =
        error.ok() || kind != SyncOutcome::kFailed ? std::move(error) : error.WithContext("sync " + list);
    if (kind == SyncOutcome::kFailed) out.etag.clear();
    const InstalledList* after = store.state().FindInstalled(list);
    out.to_version = after != nullptr ? after->version : 0;
    out.min_wait_seconds = after != nullptr ? after->min_wait_seconds : 0;
    out.created_unix = after != nullptr ? after->created_unix : 0;
    out.stale = refused_expired || after == nullptr || now_unix >= after->expires_unix;
    return out;
  };
  auto fail = [&](Status error) { return finish(SyncOutcome::kFailed, std::move(error)); };

  if (!IsValidListName(list)) {
    return fail(Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]"));
  }
  std::string base = options.server_base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.empty()) return fail(Status::InvalidArgument("no server base URL"));
  Pass pass{fetcher, base + "/" + PublicListPath(list) + "/", &out};

  const ListState* record = store.state().Find(list);
  // The list serves its high-water version: the cached ETag describes it. Otherwise (never installed, or the
  // file was dropped) a 304 would hide the manifest we need for the repair.
  const bool healthy =
      before != nullptr && record != nullptr && before->version == record->high_water_version;

  // Spec 1: "Fetch the manifest (conditional GET), at most kMaxManifestBytes, and its signature file, at most
  // kMaxSignatureFileBytes."
  auto manifest_resp = pass.Get(kManifestFileName, kMaxManifestBytes, healthy ? etag : "");
  if (!manifest_resp.ok()) return fail(manifest_resp.status());
  if (manifest_resp->status == 304) {
    if (!healthy || etag.empty()) {
      return fail(Status::Unavailable(std::string("GET ") + kManifestFileName + ": 304 to an unconditional GET"));
    }
    // A freeze: the server keeps answering "not modified" for a manifest whose signed expiry has passed.
    if (now_unix >= before->expires_unix) return fail(FrozenError(*before, now_unix));
    out.etag = etag;
    return finish(SyncOutcome::kNotModified, Status::Ok());
  }
  if (manifest_resp->status != 200) return fail(HttpError(kManifestFileName, manifest_resp->status));
  const std::string& manifest_bytes = manifest_resp->body;
  auto sig_resp = pass.Get(kManifestSignatureFileName, kMaxSignatureFileBytes);
  if (!sig_resp.ok()) return fail(sig_resp.status());
  if (sig_resp->status != 200) return fail(HttpError(kManifestSignatureFileName, sig_resp->status));

  // Spec 2: "Verify the signature over the raw bytes, before parsing anything."
  Status signed_ok = VerifyManifestSignature(options.trusted_keys, manifest_bytes, sig_resp->body);
  if (!signed_ok.ok()) return fail(signed_ok.WithContext(kManifestFileName));

  // Spec 3: "Parse. Check that `list` is the list that was asked for."
  auto parsed = ParseManifest(manifest_bytes);
  if (!parsed.ok()) return fail(parsed.status().WithContext(kManifestFileName));
  const Manifest& m = *parsed;
  if (m.list != list) {
    return fail(Status::Corruption(std::string(kManifestFileName) + " is the manifest of list '" + m.list + "'"));
  }
  // A bounded lifetime (sync/freshness.h): a stolen key cannot sign a version that stays fresh for ever.
  Status lifetime = CheckManifestLifetime(m.created_unix, m.expires_unix, now_unix);
  if (!lifetime.ok()) return fail(lifetime.WithContext(kManifestFileName));
  const Sha256Digest manifest_sha256 = Sha256(manifest_bytes);

  // Spec 4: "Version against the persisted high-water mark of this list: greater: continue; equal: nothing to
  // do; lower: refuse (a rollback or a stale mirror)."
  bool repair = false;
  if (record != nullptr) {
    if (m.version < record->high_water_version) {
      return fail(Status::FailedPrecondition("rollback refused: the server offers version " +
                                             std::to_string(m.version) + ", below the high-water mark " +
                                             std::to_string(record->high_water_version)));
    }
    if (m.version == record->high_water_version) {
      if (manifest_sha256 != record->high_water_manifest_sha256) {
        return fail(Status::PermissionDenied("equivocation refused: version " + std::to_string(m.version) +
                                             " is signed with manifest bytes other than the installed ones"));
      }
      if (healthy) {
        // A freeze: the same manifest served again after its signed expiry.
        if (now_unix >= before->expires_unix) return fail(FrozenError(*before, now_unix));
        out.etag = manifest_resp->etag;
        return finish(SyncOutcome::kUpToDate, Status::Ok());
      }
      repair = true;  // the same manifest, but its file was lost: install it again
    }
  }

  // Spec 5: "Expiry: now < expires_unix, else refuse the manifest as stale."
  if (now_unix >= m.expires_unix) {
    refused_expired = true;
    return fail(Status::FailedPrecondition("manifest of version " + std::to_string(m.version) +
                                           " expired at " + std::to_string(m.expires_unix) + " (now " +
                                           std::to_string(now_unix) + "): stale"));
  }

  // What the Store records with the new state (Spec 12).
  InstalledList meta;
  meta.list = list;
  meta.version = m.version;
  meta.state_sha256 = m.state_sha256;
  meta.manifest_sha256 = manifest_sha256;
  meta.created_unix = m.created_unix;
  meta.expires_unix = m.expires_unix;
  meta.emergency = m.emergency;
  meta.min_wait_seconds = m.min_wait_seconds;

  if (m.format == kManifestFormat2) {
    Status s = SyncFormat2(pass, store, before, m, meta);
    if (!s.ok()) {
      if (out.fell_back_to_snapshot) s = s.WithContext("after the range diffs failed (" + out.diff_error.message() + ")");
      return fail(s);
    }
    (void)AdvanceTimeFloor(store.env(), store.dir(), m.created_unix);
    out.repaired = repair;
    out.etag = manifest_resp->etag;
    return finish(SyncOutcome::kUpdated, Status::Ok());
  }

  // Spec 6: "Pick the diff whose from_version equals the client's current version, else the snapshot."
  const ManifestDiff* diff = before != nullptr ? FindManifestDiff(m, before->version) : nullptr;
  if (diff != nullptr) {
    // Spec 10-12 for the diff, streaming: the new file is written, verified and installed in one go.
    bool diff_failed = false;
    Status from_diff = InstallFromDiff(pass, store, *before, m, *diff, meta, &diff_failed);
    if (from_diff.ok()) {
      out.used_diff = true;
    } else if (!diff_failed) {
      return fail(from_diff);
    } else {
      // Spec 11: "A mismatch after a diff falls back to the snapshot" (as does any other failure of the
      // diff).
      out.diff_error = from_diff;
      out.fell_back_to_snapshot = true;
    }
  }
  if (!out.used_diff) {
    // Spec 12: "fsync the file, rename, fsync the directory; then advance the high-water mark" — both in
    // Store::InstallWith, whose last step (the rename of D/current) is the switch.
    Status snapshot_error;
    Status installed = InstallFromSnapshot(pass, store, m, meta, &snapshot_error);
    if (!snapshot_error.ok()) {
      Status s = snapshot_error;
      if (out.fell_back_to_snapshot) {
        s = s.WithContext("after the diff failed (" + out.diff_error.message() + ")");
      }
      return fail(s);
    }
    if (!installed.ok()) return fail(installed);
  }
  // Best effort: D/current's records also bound the floor (FloorOfState) until the next successful write.
  (void)AdvanceTimeFloor(store.env(), store.dir(), m.created_unix);
  out.repaired = repair;
  out.etag = manifest_resp->etag;
  return finish(SyncOutcome::kUpdated, Status::Ok());
}

}  // namespace urlguard
