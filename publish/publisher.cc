// Copyright urlguard authors.
#include "publish/publisher.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/diff_codec.h"
#include "core/entry.h"
#include "core/snapshot.h"
#include "format/deflate.h"
#include "format/manifest.h"
#include "publish/entry_list.h"
#include "format/full_hash_file.h"
#include "publish/full_hash_list.h"
#include "publish/list_index_writer.h"
#include "publish/list_builder.h"
#include "publish/seen_filter.h"
#include "format/manifest.h"

namespace urlguard {
namespace {

constexpr int kDeflateLevel = 9;
// A list keeps its universes while its size needs no more than them and they are at most this many times what
// it needs (false positives a little lower than the target are fine; far lower wastes bytes).
constexpr double kMaxUniverseSlack = 2.0;
// A new universe is sized with this headroom so that growth does not force a full snapshot every version.
constexpr double kUniverseHeadroom = 1.1;
// The seen filter's first stage holds 1 M keys at 1e-4 (it grows in stages beyond); its count-min sketch counts
// runs per key within 1e-5 of all sightings with 99% confidence: 2.4 MB + 11 MB on disk.
constexpr uint64_t kSeenInitialCapacity = 1'000'000;
constexpr double kSeenFpRate = 1e-4;
constexpr double kSeenCountEps = 1e-5;
constexpr double kSeenCountDelta = 0.01;

struct OpenSnapshot {
  uint64_t version = 0;
  std::unique_ptr<MappedFile> file;
  SnapshotView view;
};

Result<OpenSnapshot> OpenPrivateSnapshot(Env* env, const std::string& dir, uint64_t version) {
  OpenSnapshot s;
  s.version = version;
  std::string path = JoinPath(dir, std::to_string(version) + ".ugs");
  auto mapped = env->MapReadOnly(path);
  if (!mapped.ok()) return mapped.status();
  s.file = std::move(mapped).value();
  auto view = SnapshotView::Open(s.file->data(), s.file->size(), /*verify_checksum=*/true);
  if (!view.ok()) return view.status().WithContext(path);
  s.view = *view;
  return s;
}

// Versions of the private copies, ascending.
std::vector<uint64_t> PrivateVersions(Env* env, const std::string& dir) {
  std::vector<uint64_t> versions;
  auto names = env->ListDir(dir);
  if (!names.ok()) return versions;
  for (const std::string& n : *names) {
    if (n.size() < 5 || n.compare(n.size() - 4, 4, ".ugs") != 0) continue;
    std::string digits = n.substr(0, n.size() - 4);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 19) continue;
    versions.push_back(std::stoull(digits));
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

std::vector<uint64_t> LayerFingerprints(const SnapshotView& v, LayerKind kind) {
  std::vector<uint64_t> out;
  const LayerView* l = v.layer(kind);
  if (l != nullptr && l->filter == FilterKind::kFingerprintArray) l->fingerprints.Decode(&out);
  return out;
}

uint64_t LayerUniverse(const SnapshotView& v, LayerKind kind) {
  const LayerView* l = v.layer(kind);
  return l != nullptr && l->filter == FilterKind::kFingerprintArray ? l->fingerprints.universe() : 0;
}

Status WritePublic(Env* env, const std::string& path, std::string_view bytes) {
  return WriteFileAtomic(env, path, bytes);
}

std::string SnapshotName(uint64_t v) { return "snapshot-" + std::to_string(v) + ".ugs.z"; }
std::string DiffName(uint64_t from, uint64_t to) {
  return "diff-" + std::to_string(from) + "-" + std::to_string(to) + ".ugd.z";
}

}  // namespace

std::string PublicListDir(const std::string& repo, const std::string& list) {
  return JoinPath(repo, "public/v1/lists/" + list);
}
std::string PrivateListDir(const std::string& repo, const std::string& list) {
  return JoinPath(repo, "private/lists/" + list);
}

Result<PublishReport> Publish(Env* env, const SigningKey& key, const PublishOptions& o, const ProgressFn& progress) {
  if (!IsValidListName(o.list)) return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: " + o.list);
  if (o.inputs.empty()) return Status::InvalidArgument("no inputs");
  if (o.expires_in_seconds <= 0) return Status::InvalidArgument("expiry must be in the future");
  if (o.expires_in_seconds > kMaxManifestLifetimeSeconds) {  // clients refuse longer-lived manifests
    return Status::InvalidArgument("expiry more than " + std::to_string(kMaxManifestLifetimeSeconds) +
                                   " s after creation: clients refuse such manifests (format/manifest.h)");
  }
  if (o.keep > kMaxManifestDiffs) return Status::InvalidArgument("--keep is at most " + std::to_string(kMaxManifestDiffs));
  const std::string threat_default = o.default_threat.empty() ? o.list : o.default_threat;
  if (!IsValidThreatName(threat_default)) return Status::InvalidArgument("invalid threat name: " + threat_default);

  const std::string public_dir = PublicListDir(o.repo_dir, o.list);
  const std::string private_dir = PrivateListDir(o.repo_dir, o.list);
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(public_dir));
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(private_dir));
  auto lock = env->LockFile(JoinPath(o.repo_dir, "private/publish.lock"));
  if (!lock.ok()) return lock.status().WithContext("another urlguard-publish is working on " + o.repo_dir);

  PublishReport report;
  const int64_t now = o.now_unix != 0 ? o.now_unix : env->NowUnixSeconds();

  // 1. Read and parse every input; map entries to keys.
  ListBuilder builder;
  std::vector<FullHashRecord> hashes;
  std::vector<uint64_t> seen_keys;
  EntryList clear;  // the DNS-expressible entries in clear, for DNS exports (publish/entry_list.h)
  clear.list = o.list;
  for (const FeedSpec& spec : o.inputs) {
    auto data = ReadFeedFile(env, spec.path);
    if (!data.ok()) return data.status().WithContext(spec.path);
    std::vector<FeedEntry> entries;
    std::vector<FeedProblem> problems;
    FeedStats stats;
    Status parsed = ParseFeed(spec, *data, &entries, &problems, &stats);
    if (!parsed.ok()) return parsed.WithContext(spec.path);
    report.input_lines += stats.lines;
    report.rejected += problems.size();
    for (FeedProblem& p : problems) {
      if (report.problems.size() < kMaxReportedFeedProblems) report.problems.push_back(std::move(p));
    }
    for (const FeedEntry& e : entries) {
      ++report.input_entries;
      auto k = EntryKeyFor(e.value);
      if (!k.ok()) {
        ++report.rejected;
        if (report.problems.size() < kMaxReportedFeedProblems) {
          report.problems.push_back(FeedProblem{spec.path, e.line, k.status().message()});
        }
        continue;
      }
      builder.AddKey(*k);
      if (k->layer == LayerKind::kDomain) {
        clear.domains.push_back(k->expression.substr(0, k->expression.size() - 1));  // "evil.example/"
      } else if (k->layer == LayerKind::kIp) {
        clear.ip_ranges.push_back(k->expression);
      }
      Sha256Digest digest = Sha256(k->expression);
      seen_keys.push_back(DigestPrefix64(digest));
      FullHashRecord rec;
      rec.sha256 = digest;
      rec.list = o.list;
      rec.layer = k->layer;
      rec.threat = !e.threat.empty() && IsValidThreatName(e.threat) ? e.threat : threat_default;
      hashes.push_back(std::move(rec));
      if (progress && (report.input_entries & 0xffff) == 0) progress(report.input_entries);
    }
  }
  if (builder.added() == 0) return Status::InvalidArgument("no valid entry in the inputs");

  // 2. The previous version, its universes, and the new version number.
  std::vector<uint64_t> versions = PrivateVersions(env, private_dir);
  std::vector<OpenSnapshot> previous;  // newest last
  for (size_t i = versions.size() > o.keep ? versions.size() - o.keep : 0; i < versions.size(); ++i) {
    auto s = OpenPrivateSnapshot(env, private_dir, versions[i]);
    if (!s.ok()) return s.status();
    previous.push_back(std::move(s).value());
  }
  const uint64_t version = versions.empty() ? 1 : versions.back() + 1;
  report.version = version;
  report.first_version = previous.empty();

  BuildOptions bo;
  bo.list_name = o.list;
  bo.version = version;
  bo.created_unix = now;
  bo.fp_rate = o.fp_rate;
  for (int li = 0; li < kLayerKindCount; ++li) {
    LayerKind kind = static_cast<LayerKind>(li);
    uint64_t needed = builder.UniverseFor(kind, o.fp_rate);
    uint64_t prev = previous.empty() ? 0 : LayerUniverse(previous.back().view, kind);
    if (prev != 0 && prev >= needed && static_cast<double>(prev) <= kMaxUniverseSlack * static_cast<double>(needed)) {
      bo.universe_override[li] = prev;
    } else {
      double u = std::ceil(static_cast<double>(needed) * kUniverseHeadroom);
      bo.universe_override[li] = u >= 9.2e18 ? (uint64_t{1} << 63) : static_cast<uint64_t>(u);
      if (prev != 0) report.universe_changed = true;
    }
  }
  LayerBuildStats stats[3];
  auto content = builder.Finish(bo, stats);
  if (!content.ok()) return content.status();
  for (int li = 0; li < 3; ++li) report.entries[li] = stats[li].entries;
  auto snapshot = BuildSnapshot(*content);
  if (!snapshot.ok()) return snapshot.status();
  report.snapshot_bytes = snapshot->size();
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, JoinPath(private_dir, std::to_string(version) + ".ugs"), *snapshot));
  clear.version = version;
  clear.url_entries = stats[static_cast<int>(LayerKind::kUrl)].entries;
  URLGUARD_RETURN_IF_ERROR(
      WriteFileAtomic(env, JoinPath(private_dir, EntryListFileName(version)), SerializeEntryList(std::move(clear))));

  std::vector<uint64_t> new_fps[3];
  IpPrefixLengths ip_prefixes;
  for (const LayerContent& l : content->layers) {
    new_fps[static_cast<int>(l.kind)] = l.fingerprints;
    if (l.kind == LayerKind::kIp) ip_prefixes = l.ip_prefixes;
  }

  // 3. Static files: snapshot, then diffs from each kept version whose universes match.
  Manifest m;
  m.list = o.list;
  m.version = version;
  m.created_unix = now;
  m.expires_unix = now + o.expires_in_seconds;
  m.min_wait_seconds = o.min_wait_seconds;
  m.emergency = o.emergency;
  SnapshotView new_view = *SnapshotView::Open(reinterpret_cast<const uint8_t*>(snapshot->data()), snapshot->size(), false);
  m.state_sha256 = new_view.checksum();
  m.state_bytes = snapshot->size();
  m.ip_prefix_lengths = ip_prefixes.bits;
  for (int li = 0; li < 3; ++li) {
    m.entries[li] = new_fps[li].size();
    m.universe[li] = new_fps[li].empty() ? 0 : bo.universe_override[li];
  }
  std::string wire = DeflateBytes(*snapshot, kDeflateLevel);
  report.snapshot_wire_bytes = wire.size();
  m.snapshot.path = SnapshotName(version);
  m.snapshot.size = wire.size();
  m.snapshot.sha256 = Sha256(wire);
  m.snapshot.inflated_size = snapshot->size();
  URLGUARD_RETURN_IF_ERROR(WritePublic(env, JoinPath(public_dir, m.snapshot.path), wire));

  for (const OpenSnapshot& prev : previous) {
    Diff diff;
    diff.list_name = o.list;
    diff.from_version = prev.version;
    diff.to_version = version;
    bool compatible = true;
    uint64_t changed = 0;
    for (int li = 0; li < 3 && compatible; ++li) {
      LayerKind kind = static_cast<LayerKind>(li);
      const LayerView* old_layer = prev.view.layer(kind);
      if (old_layer != nullptr && old_layer->filter != FilterKind::kFingerprintArray) compatible = false;
      uint64_t old_u = LayerUniverse(prev.view, kind);
      uint64_t new_u = new_fps[li].empty() ? 0 : bo.universe_override[li];
      if (old_u == 0 && new_u == 0) continue;
      if (old_u != 0 && new_u != 0 && old_u != new_u) {
        compatible = false;
        break;
      }
      std::vector<uint64_t> old_fps = LayerFingerprints(prev.view, kind);
      LayerDiff d = MakeLayerDiff(kind, new_u != 0 ? new_u : old_u, old_fps, new_fps[li]);
      changed += d.added.size() + d.removed_positions.size();
      if (&prev == &previous.back()) {
        report.added[li] = d.added.size();
        report.removed[li] = d.removed_positions.size();
      }
      diff.layers.push_back(std::move(d));
    }
    if (!compatible || !ValidateDiff(diff).ok()) continue;
    std::string bytes = EncodeDiff(diff);
    if (bytes.size() > kMaxDiffBytes) continue;  // clients take the snapshot instead
    std::string z = DeflateBytes(bytes, kDeflateLevel);
    ManifestDiff md;
    md.from_version = prev.version;
    md.file.path = DiffName(prev.version, version);
    md.file.size = z.size();
    md.file.sha256 = Sha256(z);
    md.file.inflated_size = bytes.size();
    URLGUARD_RETURN_IF_ERROR(WritePublic(env, JoinPath(public_dir, md.file.path), z));
    m.diffs.push_back(md);
    report.diffs.push_back({prev.version, z.size(), changed});
  }

  // 4. The manifest and its signature: written last, so every file they name exists. A client that reads the new
  // manifest with the old signature (or the reverse) sees a bad signature and retries later.
  URLGUARD_RETURN_IF_ERROR(ValidateManifest(m));
  std::string manifest = SerializeManifest(m);
  std::string signature = MakeManifestSignatureFile(key, manifest);
  URLGUARD_RETURN_IF_ERROR(WritePublic(env, JoinPath(public_dir, "manifest.sig"), signature));
  report.manifest_path = JoinPath(public_dir, "manifest.json");
  URLGUARD_RETURN_IF_ERROR(WritePublic(env, report.manifest_path, manifest));
  // The signed index of every list the repository serves (docs/list-index.md), now naming this version.
  URLGUARD_RETURN_IF_ERROR(WriteListIndex(env, key, o.repo_dir, now));

  // 5. Full hashes for the verify API (V.ugh, docs/full-hash-format.md; servers pick it up by themselves), and
  // the seen filter. Older versions' .ugh files go: a server that still maps one keeps its mapping.
  URLGUARD_RETURN_IF_ERROR(
      WriteFullHashList(env, JoinPath(private_dir, FullHashFileName(version)), o.list, version, &hashes));
  for (uint64_t v : versions) (void)env->RemoveFile(JoinPath(private_dir, FullHashFileName(v)));
  const std::string seen_path = JoinPath(o.repo_dir, "private/seen.bin");
  auto seen = SeenFilter::Load(env, seen_path);
  if (!seen.ok() && seen.status().code() != StatusCode::kNotFound) return seen.status();
  SeenFilter filter = seen.ok() ? std::move(seen).value()
                                : SeenFilter::Create(kSeenInitialCapacity, kSeenFpRate, kSeenCountEps, kSeenCountDelta);
  SeenRunSummary run = filter.RecordRun(seen_keys);
  report.new_keys = run.new_keys;
  report.seen_before = run.seen_before;
  URLGUARD_RETURN_IF_ERROR(filter.Save(env, seen_path));

  // 6. Forget what no manifest names: private copies beyond the last `keep` diff bases, public files other than
  // the current manifest's (the previous snapshot is kept one more version for clients mid-download).
  for (uint64_t v : versions) {
    if (v + o.keep < version) {
      (void)env->RemoveFile(JoinPath(private_dir, std::to_string(v) + ".ugs"));
      (void)env->RemoveFile(JoinPath(private_dir, EntryListFileName(v)));
    }
  }
  auto names = env->ListDir(public_dir);
  if (names.ok()) {
    for (const std::string& n : *names) {
      // LIST.rpz: the DNS export (urlguard-publish export), rewritten by its own command.
      bool keep = n == "manifest.json" || n == "manifest.sig" || n == m.snapshot.path || n == o.list + ".rpz" ||
                  (!versions.empty() && n == SnapshotName(versions.back()));
      for (const ManifestDiff& d : m.diffs) keep |= n == d.file.path;
      if (!keep) (void)env->RemoveFile(JoinPath(public_dir, n));
    }
  }
  return report;
}

Result<std::vector<int64_t>> SeenCounts(Env* env, const std::string& repo_dir, const std::vector<std::string>& entries) {
  auto seen = SeenFilter::Load(env, JoinPath(repo_dir, "private/seen.bin"));
  if (!seen.ok()) return seen.status();
  std::vector<int64_t> out;
  for (const std::string& e : entries) {
    auto k = EntryKeyFor(e);
    if (!k.ok()) {
      out.push_back(-1);
      continue;
    }
    Sighting s = seen->Query(SeenKeyFor(k->expression));
    out.push_back(s.seen_before ? static_cast<int64_t>(std::max<uint64_t>(1, s.approx_count_before)) : 0);
  }
  return out;
}

}  // namespace urlguard
