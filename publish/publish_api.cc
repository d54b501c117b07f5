// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The publisher's public API (include/urlguard/publish.h) over publish/*.h.
#include "urlguard/publish.h"


#include "url/entry.h"
#include "core/snapshot.h"
#include "platform/env.h"
#include "feeds/feed_check.h"
#include "feeds/feeds.h"
#include "signing/keygen.h"
#include "publish/list_builder.h"
#include "publish/pg_publish.h"
#include "publish/publisher.h"
#include "format/key_rotation.h"
#include "format/signature.h"
#include "publish/range_version.h"
#include "publish/rpz_export.h"
#include "publish/lsm_state.h"
#include "core/list_name.h"
#include "format/manifest.h"
#include "format/repository_files.h"

namespace urlguard {
namespace {

Env* OrDefault(Env* env) { return env != nullptr ? env : Env::Default(); }

FeedLineProblem ToPublic(const FeedProblem& p) { return FeedLineProblem{p.file, p.line, p.message}; }

Result<std::vector<FeedSpec>> ParseInputs(const std::vector<std::string>& inputs) {
  if (inputs.empty()) return Status::InvalidArgument("no input feed");
  std::vector<FeedSpec> specs;
  for (const std::string& in : inputs) {
    auto spec = ParseFeedSpec(in);
    if (!spec.ok()) return spec.status().WithContext(in);
    specs.push_back(*spec);
  }
  return specs;
}

}  // namespace

Result<std::string> ParseFeedArgument(std::string_view argument) {
  auto spec = ParseFeedSpec(argument);
  if (!spec.ok()) return spec.status();
  return spec->path;
}

const char* PublishPhaseName(PublishPhase phase) {
  switch (phase) {
    case PublishPhase::kParse:
      return "parse";
    case PublishPhase::kSortMerge:
      return "sort/merge";
    case PublishPhase::kWrite:
      return "write";
    case PublishPhase::kSign:
      return "sign";
  }
  return "?";
}

Result<KeyPairFiles> GenerateKeyPair(const std::string& dir, Env* env) {
  env = OrDefault(env);
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(dir));
  PublicKey pub;
  URLGUARD_RETURN_IF_ERROR(WriteKeyPair(env, dir, &pub));
  return KeyPairFiles{JoinPath(dir, kPrivateKeyFileName), JoinPath(dir, kPublicKeyFileName), pub.KeyId()};
}

Result<RotationStatementFile> WriteRotationStatement(const std::string& old_private_key_path,
                                                     const std::string& new_public_key_path,
                                                     const std::string& out_path, int64_t not_before_unix,
                                                     Env* env) {
  RotationOptions options;
  options.not_before_unix = not_before_unix;
  return WriteRotationStatement(old_private_key_path, new_public_key_path, out_path, options, env);
}

Result<RotationStatementFile> WriteRotationStatement(const std::string& old_private_key_path,
                                                     const std::string& new_public_key_path,
                                                     const std::string& out_path, const RotationOptions& options,
                                                     Env* env) {
  env = OrDefault(env);
  auto old_key = LoadSigningKey(env, old_private_key_path);
  if (!old_key.ok()) return old_key.status();
  auto new_pem = env->ReadFile(new_public_key_path, kMaxPemBytes);
  if (!new_pem.ok()) return new_pem.status();
  auto new_key = PublicKeyFromPem(*new_pem);
  if (!new_key.ok()) return new_key.status().WithContext(new_public_key_path);
  const int64_t t = options.not_before_unix ? options.not_before_unix : env->NowUnixSeconds();
  const bool v1 = options.grace_seconds == 0 && options.high_water_resets.empty();
  if (options.grace_seconds < 0 || options.grace_seconds > kMaxRotationGraceSeconds) {
    return Status::InvalidArgument("grace must be 0 .. " + std::to_string(kMaxRotationGraceSeconds) + " s");
  }
  RotationStatement content;
  content.new_key = *new_key;
  content.not_before_unix = t;
  content.old_key_until_unix = t + options.grace_seconds;
  for (const auto& [list, version] : options.high_water_resets) content.resets.push_back({list, version, t});
  Result<std::string> statement = v1 ? MakeRotationStatement(*old_key, *new_key, t)  // format v1
                                     : MakeRotationStatementV2(*old_key, content);
  if (!statement.ok()) return statement.status();
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, out_path, *statement));
  return RotationStatementFile{out_path, old_key->public_key().KeyId(), new_key->KeyId()};
}

Result<SnapshotBuildReport> BuildSnapshotFile(const SnapshotBuildOptions& o) {
  Env* env = OrDefault(o.env);
  auto specs = ParseInputs(o.inputs);
  if (!specs.ok()) return specs.status();
  SnapshotBuildReport report;
  ListBuilder builder;
  std::vector<FeedProblem> problems;
  for (const FeedSpec& spec : *specs) {
    auto data = ReadFeedFile(env, spec.path);
    if (!data.ok()) return data.status().WithContext(spec.path);
    std::vector<FeedEntry> entries;
    FeedStats stats;
    size_t before = problems.size();
    URLGUARD_RETURN_IF_ERROR(ParseFeed(spec, *data, &entries, &problems, &stats).WithContext(spec.path));
    report.lines += stats.lines;
    report.rejected += problems.size() - before;
    for (const FeedEntry& e : entries) {
      Status s = builder.Add(e.value);
      if (!s.ok()) {
        ++report.rejected;
        problems.push_back(FeedProblem{spec.path, e.line, s.message()});
      }
      if (o.progress && (builder.added() & 0xffff) == 0) o.progress(builder.added());
    }
  }
  for (const FeedProblem& p : problems) report.problems.push_back(ToPublic(p));

  BuildOptions options;
  options.list_name = o.list;
  options.version = o.version;
  options.created_unix = o.created_unix ? o.created_unix : env->NowUnixSeconds();
  options.fp_rate = o.fp_rate;
  options.filter = o.blocked_bloom ? FilterKind::kBlockedBloom : FilterKind::kFingerprintArray;
  LayerBuildStats stats[3];
  auto content = builder.Finish(options, stats);
  if (!content.ok()) return content.status();
  auto bytes = BuildSnapshot(*content);
  if (!bytes.ok()) return bytes.status();
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, o.out_path, *bytes));
  for (int i = 0; i < 3; ++i) {
    report.entries[i] = stats[i].entries;
    report.duplicates[i] = stats[i].duplicates;
    report.expected_fp_per_probe[i] = stats[i].expected_fp_per_probe;
  }
  report.bytes = bytes->size();
  report.filter = FilterKindName(options.filter);
  return report;
}

void CopyListPublishOptions(const ListPublishOptions& o, PublishOptions* po) {
  po->repo_dir = o.repo_dir;
  po->list = o.list;
  po->expires_in_seconds = o.expires_in_seconds;
  po->min_wait_seconds = o.min_wait_seconds;
  po->keep = o.keep;
  po->emergency = o.emergency;
  po->fp_rate = o.fp_rate;
  po->default_threat = o.default_threat;
  po->memory_budget = o.memory_budget;
  po->threads = o.threads;
  po->phase_progress = o.phase_progress;
  // The publication guard: on, with the caller's removal cap.
  po->check_inputs = true;
  po->max_rejected_fraction = kDefaultInputMaxRejectedFraction;
  po->cap_removal = !o.allow_large_removal;
  po->max_removal = o.max_removal;
  po->manifest_format = o.manifest_format;
  po->checkpoint_changes = o.checkpoint_changes;
  po->checkpoint_inline = o.checkpoint_inline;
}

ListPublishReport ToListPublishReport(const PublishReport& r) {
  ListPublishReport out;
  out.version = r.version;
  out.first_version = r.first_version;
  for (int i = 0; i < 3; ++i) {
    out.entries[i] = r.entries[i];
    out.added[i] = r.added[i];
    out.removed[i] = r.removed[i];
  }
  out.universe_changed = r.universe_changed;
  out.checkpoint = r.checkpoint;
  out.checkpointed = r.checkpointed;
  out.checkpoint_due = r.checkpoint_due;
  out.input_lines = r.input_lines;
  out.input_entries = r.input_entries;
  out.rejected = r.rejected;
  out.new_keys = r.new_keys;
  out.seen_before = r.seen_before;
  out.seen_at_checkpoint = r.seen_at_checkpoint;
  for (const FeedProblem& p : r.problems) out.problems.push_back(ToPublic(p));
  out.snapshot_bytes = r.snapshot_bytes;
  out.snapshot_wire_bytes = r.snapshot_wire_bytes;
  for (const auto& d : r.diffs) out.diffs.push_back({d.from_version, d.wire_bytes, d.changed_entries});
  out.manifest_path = r.manifest_path;
  out.warnings = r.warnings;
  return out;
}

Result<ListPublishReport> PublishList(const ListPublishOptions& o, PublishRefusal* refusal) {
  if (refusal != nullptr) *refusal = PublishRefusal::kNone;
  Env* env = OrDefault(o.env);
  if (!(o.max_removal >= 0.0 && o.max_removal <= 1.0)) {
    return Status::InvalidArgument("--max-removal takes a fraction 0 .. 1");
  }
  if (o.min_wait_seconds < kMinPublishMinWaitSeconds || o.min_wait_seconds > kMaxManifestMinWaitSeconds) {
    return Status::InvalidArgument("the minimum wait must be 60 s .. 24 h, not " +
                                   std::to_string(o.min_wait_seconds) + " s");
  }
  std::vector<std::string> arguments = o.inputs;
  arguments.insert(arguments.end(), o.add.begin(), o.add.end());
  arguments.insert(arguments.end(), o.remove.begin(), o.remove.end());
  auto accepted = ResolveAcceptedInputs(o.accept, arguments);
  if (!accepted.ok()) return accepted.status();
  auto key = LoadSigningKey(env, o.private_key_path);
  if (!key.ok()) return key.status();
  PublishOptions po;
  std::unique_ptr<PgState> pg;  // publish/pg_publish.h
  if (!o.state.empty()) {
    if (!o.add.empty() || !o.remove.empty()) {
      return Status::InvalidArgument("--add/--remove change a file-state list; with --state, ingest the feeds and publish");
    }
    URLGUARD_RETURN_IF_ERROR(AttachPgState(o.state, o.list, !o.inputs.empty(), &pg, &po));
  } else if (o.add.empty() && o.remove.empty()) {
    auto specs = ParseInputs(o.inputs);
    if (!specs.ok()) return specs.status();
    po.inputs = *specs;
  } else {
    if (!o.inputs.empty()) return Status::InvalidArgument("give --input (a full version) or --add/--remove, not both");
    for (const auto& [from, to] : {std::pair{&o.add, &po.add_inputs}, std::pair{&o.remove, &po.remove_inputs}}) {
      if (from->empty()) continue;
      auto specs = ParseInputs(*from);
      if (!specs.ok()) return specs.status();
      *to = *specs;
    }
  }
  if (o.expires_in_seconds <= 0) return Status::InvalidArgument("the expiry must be positive");
  CopyListPublishOptions(o, &po);
  po.accepted_inputs = *accepted;
  po.refusal = refusal;
  auto r = Publish(env, *key, po, o.progress);
  if (!r.ok()) return r.status();
  return ToListPublishReport(*r);
}

Result<std::vector<int64_t>> CountSeenEntries(const std::string& repo_dir, const std::vector<std::string>& entries,
                                              Env* env) {
  return SeenCounts(OrDefault(env), repo_dir, entries);
}

Result<RpzExportReport> ExportRpz(const RpzExportOptions& o) {
  Env* env = OrDefault(o.env);
  RpzZoneOptions zone;
  URLGUARD_RETURN_IF_ERROR(ParseRpzAction(o.action, &zone.action, &zone.cname_target));
  auto origin = NormalizeRpzOrigin(o.origin.empty() ? o.list + ".rpz.urlguard." : o.origin);
  if (!origin.ok()) return origin.status();
  zone.origin = *origin;
  for (const std::string& path : o.allowlist_paths) {
    auto text = env->ReadFile(path, kMaxRpzAllowlistBytes);
    if (!text.ok()) return text.status().WithContext("allowlist " + path);
    auto allow = ParseRpzAllowlist(*text, path);
    if (!allow.ok()) return allow.status();
    RpzAllowlist& all = zone.allowlist;
    all.domains.insert(all.domains.end(), allow->domains.begin(), allow->domains.end());
    all.ip_ranges.insert(all.ip_ranges.end(), allow->ip_ranges.begin(), allow->ip_ranges.end());
    all.url_entries_left_out += allow->url_entries_left_out;
  }
  auto r = ExportRpzFile(env, o.repo_dir, o.list, zone, o.out_path);
  if (!r.ok()) return r.status();
  RpzExportReport out;
  out.path = r->path;
  out.version = r->version;
  out.bytes = r->bytes;
  out.domains = r->stats.domains;
  out.ip_ranges = r->stats.ip_ranges;
  out.url_entries_left_out = r->stats.url_entries_left_out;
  out.unexpressible_left_out = r->stats.unexpressible_left_out;
  out.passthru = r->stats.passthru;
  out.allowed_left_out = r->stats.allowed_left_out;
  out.allowlist_url_entries_left_out = r->stats.allowlist_url_entries_left_out;
  return out;
}

namespace {

// What a checkpoint of a format 2 list's committed version `m` is made with, and its report before it runs.
PublishOptions CheckpointOptions(const std::string& repo_dir, const std::string& list, const Manifest& m,
                                 ListCompactReport* report) {
  PublishOptions po;
  po.repo_dir = repo_dir;
  po.list = list;
  po.min_wait_seconds = m.min_wait_seconds;
  po.emergency = m.emergency;
  report->version = m.version;
  report->base_version = m.checkpoint.version;
  return po;
}

// Fills the report's catch-up figures from the checkpoint record of `version` (a record that cannot be read leaves
// them 0: the checkpoint itself was made).
void DescribeCheckpoint(Env* env, const std::string& repo_dir, const std::string& list, uint64_t version,
                        ListCompactReport* report) {
  auto rec = ReadCheckpointRecord(env, JoinPath(PrivateListDir(repo_dir, list), CheckpointRecordFileName(version)),
                                  list);
  if (!rec.ok()) return;
  report->snapshot_bytes = rec->checkpoint.snapshot.size;
  auto count = [&](const std::vector<ManifestDiff>& diffs) {
    for (const ManifestDiff& d : diffs) {
      ++report->catchup_diffs;
      if (report->catchup_from == 0 || d.from_version < report->catchup_from) report->catchup_from = d.from_version;
    }
  };
  count(rec->diffs);
  count(rec->large_diffs);
  report->large_diffs = static_cast<uint32_t>(rec->large_diffs.size());
}

}  // namespace

Result<ListCompactReport> CheckpointListIfDue(const std::string& repo_dir, const std::string& list,
                                              uint64_t checkpoint_changes, double fp_rate, Env* env) {
  env = OrDefault(env);
  if (!IsValidListName(list)) return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: " + list);
  URLGUARD_ASSIGN_OR_RETURN(Manifest m, ReadListManifest(env, repo_dir, list));
  if (m.format != kManifestFormat2) {
    return Status::FailedPrecondition("list " + list + " is in manifest format " + std::to_string(m.format) +
                                      ": it has no checkpoints (compact without --if-due folds its state)");
  }
  ListCompactReport report;
  PublishOptions po = CheckpointOptions(repo_dir, list, m, &report);
  po.fp_rate = fp_rate;
  po.checkpoint_changes = checkpoint_changes;
  uint64_t version = m.version;
  URLGUARD_ASSIGN_OR_RETURN(report.compacted, MakeCheckpointIfDue(env, po, &version));
  report.version = version;  // a newer one when versions committed beside the pass overtook m's
  if (report.compacted) DescribeCheckpoint(env, repo_dir, list, version, &report);
  return report;
}

Result<ListCompactReport> CompactList(const std::string& repo_dir, const std::string& list, uint32_t keep_deltas,
                                      Env* env) {
  env = OrDefault(env);
  if (!IsValidListName(list)) return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: " + list);
  // Manifest format 2: a checkpoint (docs/versions.md §5). It reads immutable files only, so it takes no lock:
  // versions go on being published beside it, and the next one adopts it.
  {
    URLGUARD_ASSIGN_OR_RETURN(Manifest m, ReadListManifest(env, repo_dir, list));
    if (m.format == kManifestFormat2) {
      ListCompactReport report;
      uint64_t version = m.version;
      URLGUARD_ASSIGN_OR_RETURN(report.compacted,
                                MakeCheckpointBeside(env, CheckpointOptions(repo_dir, list, m, &report), &version));
      report.version = version;  // a newer one when versions committed beside the pass overtook m's
      DescribeCheckpoint(env, repo_dir, list, version, &report);
      return report;
    }
  }
  auto lock = env->LockFile(ListPublishLockPath(repo_dir, list));
  if (!lock.ok()) return lock.status().WithContext("another urlguard-publish is publishing " + list + " in " + repo_dir);
  URLGUARD_ASSIGN_OR_RETURN(Manifest m, ReadListManifest(env, repo_dir, list));  // again, under the lock
  const std::string private_dir = PrivateListDir(repo_dir, list);
  ListCompactReport report;
  report.version = m.version;
  {
    URLGUARD_ASSIGN_OR_RETURN(auto state, LsmState::Open(env, private_dir, list, m.version));
    report.base_version = state->base_version();
  }
  if (report.base_version != m.version) {
    URLGUARD_RETURN_IF_ERROR(CompactListState(env, private_dir, list, m.version));
    report.compacted = true;
  }
  const uint64_t keep_from = m.version >= keep_deltas ? m.version - keep_deltas + 1 : 0;
  URLGUARD_RETURN_IF_ERROR(PruneListState(env, private_dir, list, m.version, keep_from));
  return report;
}

}  // namespace urlguard
