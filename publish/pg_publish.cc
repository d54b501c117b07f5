// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/pg_publish.h"

#include <algorithm>

#include "url/entry.h"
#include "core/list_name.h"
#include "feeds/feed_check.h"
#include "feeds/feeds.h"
#include "urlguard/publish.h"

namespace urlguard {

Status AttachPgState(const std::string& state, const std::string& list, bool has_inputs,
                     std::unique_ptr<PgState>* holder, PublishOptions* po) {
  if (!IsPostgresStateUri(state)) {
    return Status::InvalidArgument("--state takes a postgresql:// connection URI (files are the default)");
  }
  if (has_inputs) {
    return Status::InvalidArgument("with --state postgresql:// the entries come from the database: "
                                   "ingest feeds with `urlguard-publish ingest`, then publish without --input");
  }
  auto pg = PgState::Open(state);
  if (!pg.ok()) return pg.status();
  *holder = std::move(pg).value();
  PgState* s = holder->get();
  po->version_store = s;
  po->entry_source = [s, list, po](const std::function<void(const EntryKey&, const std::string&)>& sink) -> Status {
    // BeginPublish ran (the publisher calls it before reading entries): the next version is committed + 1. The
    // publisher reads the same number from its own BeginPublish answer; ask the open transaction for it.
    auto r = s->connection()->Exec("SELECT coalesce(max(version), 0) + 1 FROM list_versions WHERE list = $1",
                                   {PgParam::Text(list)});
    if (!r.ok()) return r.status();
    const uint64_t version = static_cast<uint64_t>(r->int64(0, 0));
    URLGUARD_RETURN_IF_ERROR(
        s->StreamNextVersion(list, version, [&](const PgLiveEntry& e) { sink(e.key, e.threat); }));
    if (!po->cap_removal || version == 1) return Status::Ok();
    // The removal cap (docs/feeds.md, "The publication guard"): what this version removes (StreamNextVersion
    // just marked it, in the open transaction) against the previous version's live entries. A refusal rolls the
    // run back (EndPublish): the ingested changes stay pending for a run that is allowed to publish them.
    auto counts = s->connection()->Exec(
        "SELECT (SELECT count(*) FROM entries WHERE list = $1 AND removed_version = $2),"
        " (SELECT entries FROM list_versions WHERE list = $1 AND version = $2 - 1)",
        {PgParam::Text(list), PgParam::Int(static_cast<int64_t>(version))});
    if (!counts.ok()) return counts.status();
    Status capped = CheckVersionRemoval(list, version, static_cast<uint64_t>(counts->int64(0, 0)),
                                        static_cast<uint64_t>(counts->int64(0, 1)), po->max_removal);
    if (!capped.ok() && po->refusal != nullptr) *po->refusal = PublishRefusal::kLargeRemoval;
    return capped;
  };
  return Status::Ok();
}

Result<StateIngestReport> IngestIntoState(const StateIngestOptions& o, PublishRefusal* refusal) {
  if (refusal != nullptr) *refusal = PublishRefusal::kNone;
  if (!IsPostgresStateUri(o.state)) return Status::InvalidArgument("--state takes a postgresql:// connection URI");
  if (!IsValidListName(o.list)) return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: " + o.list);
  if (o.inputs.empty()) return Status::InvalidArgument("no input feed");
  const std::string threat_default = o.default_threat.empty() ? o.list : o.default_threat;
  if (!IsValidThreatName(threat_default)) return Status::InvalidArgument("invalid threat name: " + threat_default);
  std::vector<FeedSpec> specs;
  for (const std::string& in : o.inputs) {
    auto spec = ParseFeedSpec(in);
    if (!spec.ok()) return spec.status().WithContext(in);
    specs.push_back(*spec);
  }
  auto accepted_paths = ResolveAcceptedInputs(o.accept, o.inputs);
  if (!accepted_paths.ok()) return accepted_paths.status();
  Env* env = o.env != nullptr ? o.env : Env::Default();
  const int64_t now = o.now_unix != 0 ? o.now_unix : env->NowUnixSeconds();
  auto pg = PgState::Open(o.state);
  if (!pg.ok()) return pg.status();
  StateIngestReport report;
  // Every feed is read and checked before any is ingested (docs/feeds.md, "The publication guard"): a refused
  // input leaves the state as it was.
  std::vector<std::vector<PgIngestEntry>> feeds_keys;
  for (const FeedSpec& spec : specs) {
    auto data = ReadFeedFile(env, spec.path);
    if (!data.ok()) return data.status().WithContext(spec.path);
    std::vector<FeedEntry> entries;
    std::vector<FeedProblem> problems;
    FeedStats stats;
    Status parsed = ParseFeed(spec, *data, &entries, &problems, &stats);
    if (!parsed.ok()) return parsed.WithContext(spec.path);
    report.input_lines += stats.lines;
    report.rejected += problems.size();
    auto note = [&](const FeedProblem& p) {
      if (report.problems.size() < 200) report.problems.push_back(FeedLineProblem{p.file, p.line, p.message});
    };
    for (const FeedProblem& p : problems) note(p);
    std::vector<PgIngestEntry> keys;
    keys.reserve(entries.size());
    for (const FeedEntry& e : entries) {
      ++report.input_entries;
      auto k = EntryKeyFor(e.value);
      if (!k.ok()) {
        ++report.rejected;
        note(FeedProblem{spec.path, e.line, k.status().message()});
        continue;
      }
      keys.push_back({std::move(k).value(), !e.threat.empty() && IsValidThreatName(e.threat) ? e.threat : threat_default});
    }
    FeedContentStats content;
    content.bytes = data->size();
    content.entries = keys.size();
    content.rejected = problems.size() + (entries.size() - keys.size());
    content.looks_like_html = LooksLikeHtml(*data);
    const bool accepted = std::find(accepted_paths->begin(), accepted_paths->end(), spec.path) != accepted_paths->end();
    Status checked = CheckInputFile(spec.path, content, kDefaultInputMaxRejectedFraction, accepted);
    if (!checked.ok()) {
      if (refusal != nullptr) *refusal = PublishRefusal::kInputRefused;
      return checked;
    }
    feeds_keys.push_back(std::move(keys));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const FeedSpec& spec = specs[i];
    auto r = (*pg)->IngestFeed(o.list, spec.path, feeds_keys[i], now, o.replace);
    if (!r.ok()) return r.status().WithContext(spec.path);
    report.entries += r->entries;
    report.new_entries += r->new_entries;
    report.seen_before += r->seen_before;
    report.removed += r->removed;
  }
  return report;
}

Result<std::vector<int64_t>> CountSeenEntriesInState(const std::string& state, const std::vector<std::string>& entries) {
  if (!IsPostgresStateUri(state)) return Status::InvalidArgument("--state takes a postgresql:// connection URI");
  std::vector<Sha256Digest> keys;
  std::vector<bool> valid;
  for (const std::string& e : entries) {
    auto k = EntryKeyFor(e);
    valid.push_back(k.ok());
    if (k.ok()) keys.push_back(Sha256(k->expression));
  }
  auto pg = PgState::Open(state);
  if (!pg.ok()) return pg.status();
  auto counts = (*pg)->SeenCounts(keys);
  if (!counts.ok()) return counts.status();
  std::vector<int64_t> out;
  size_t next = 0;
  for (bool v : valid) out.push_back(v ? (*counts)[next++] : -1);
  return out;
}

}  // namespace urlguard
