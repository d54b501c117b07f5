// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/pg_publish.h"

#include <ctime>

#include "core/entry.h"
#include "core/list_name.h"
#include "publish/feeds.h"
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
    return s->StreamNextVersion(list, static_cast<uint64_t>(r->int64(0, 0)),
                                [&](const PgLiveEntry& e) { sink(e.key, e.threat); });
  };
  return Status::Ok();
}

Result<StateIngestReport> IngestIntoState(const StateIngestOptions& o) {
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
  Env* env = o.env != nullptr ? o.env : Env::Default();
  const int64_t now = o.now_unix != 0 ? o.now_unix : static_cast<int64_t>(std::time(nullptr));
  auto pg = PgState::Open(o.state);
  if (!pg.ok()) return pg.status();
  StateIngestReport report;
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
    auto r = (*pg)->IngestFeed(o.list, spec.path, keys, now, o.replace);
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
