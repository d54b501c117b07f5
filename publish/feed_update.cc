// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/feed_update.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "core/ascii.h"
#include "url/entry.h"
#include "core/list_name.h"
#include "format/repository_files.h"
#include "format/signature.h"
#include "platform/env.h"
#include "feeds/feed_fetch.h"
#include "publish/pg_publish.h"
#include "pg/pg_state.h"
#include "publish/publisher.h"
#include "publish/repo_lock.h"
#include "signing/signer.h"
#include "urlguard/publish.h"

namespace urlguard {
namespace {

// The synthetic feed name under which `update --state postgresql://` ingests a list's whole computed content
// (PgState keeps provenance per feed; the feeds file's own feeds are merged here first).
constexpr char kPgFeedName[] = "urlguard-publish-update";

// Deletes all but the newest kMaxQuarantinedDownloads files of `dir` (names are "T.body", T a unix time).
void PruneQuarantine(Env* env, const std::string& dir) {
  auto names = env->ListDir(dir);
  if (!names.ok()) return;
  std::vector<std::pair<uint64_t, std::string>> files;
  for (const std::string& n : *names) {
    if (auto t = ParseQuarantineFileName(n)) files.emplace_back(*t, n);
  }
  std::sort(files.begin(), files.end());
  for (size_t i = 0; i + kMaxQuarantinedDownloads < files.size(); ++i) (void)env->RemoveFile(JoinPath(dir, files[i].second));
}

// One feed's download (or local read), before any check.
struct Download {
  Status status;
  bool not_modified = false;
  std::string body, etag, last_modified;
};

Download FetchOne(Env* env, const FeedConfig& f, const FeedMeta& meta, bool has_good, const std::string& proxy) {
  Download d;
  if (!f.path.empty()) {
    auto data = env->ReadFile(f.path, f.max_bytes);
    if (data.ok()) {
      d.body = std::move(data).value();
    } else {
      d.status = data.status().WithContext(f.path);
    }
    return d;
  }
  FeedFetchRequest req;
  req.url = f.url;
  if (has_good) {  // without a good copy a 304 would leave nothing to count
    req.etag = meta.etag;
    req.last_modified = meta.last_modified;
  }
  req.proxy = proxy;
  req.connect_timeout_ms = f.connect_timeout_seconds * 1000;
  req.total_timeout_ms = f.timeout_seconds * 1000;
  req.max_bytes = f.max_bytes;
  FeedFetchResponse resp;
  d.status = FetchFeed(req, &resp);
  d.not_modified = resp.not_modified;
  d.body = std::move(resp.body);
  d.etag = std::move(resp.etag);
  d.last_modified = std::move(resp.last_modified);
  return d;
}

}  // namespace

const char* FeedOutcomeName(FeedOutcome outcome) {
  switch (outcome) {
    case FeedOutcome::kUpdated: return "updated";
    case FeedOutcome::kNotModified: return "not-modified";
    case FeedOutcome::kAccepted: return "accepted";
    case FeedOutcome::kQuarantined: return "quarantined";
  }
  return "?";
}

Result<CheckedFeed> ReadFeedBody(const FeedSpec& spec, const std::string& name, std::string_view body,
                                 size_t max_bytes) {
  CheckedFeed out;
  if (IsGzip(body)) {
    auto inflated = InflateBounded(body, max_bytes, kFeedInflateOptions);
    if (!inflated.ok()) return inflated.status().WithContext("gzip");
    out.text = std::move(inflated).value();
  } else {
    out.text = std::string(body);
  }
  FeedSpec s = spec;
  s.path = name;
  std::vector<FeedEntry> entries;
  std::vector<FeedProblem> problems;
  FeedStats stats;
  URLGUARD_RETURN_IF_ERROR(ParseFeed(s, out.text, &entries, &problems, &stats));
  out.lines = stats.lines;
  out.rejected = stats.errors;
  out.entries.reserve(entries.size());
  for (FeedEntry& e : entries) {
    if (!EntryKeyFor(e.value).ok()) {
      ++out.rejected;
      continue;
    }
    out.entries.emplace_back(std::move(e.value), IsValidThreatName(e.threat) ? std::move(e.threat) : std::string());
  }
  return out;
}

std::string CheckFeedDownload(const CheckedFeed& feed, const FeedConfig& config, uint64_t previous_entries) {
  if (feed.text.empty()) return "empty download";
  FeedContentStats stats;
  stats.bytes = feed.text.size();
  stats.entries = feed.entries.size();
  stats.rejected = feed.rejected;
  stats.looks_like_html = LooksLikeHtml(feed.text);
  if (std::string why = CheckFeedContent(stats, config.max_rejected_fraction); !why.empty()) return why;
  const uint64_t n = feed.entries.size();
  if (previous_entries > 0 && n < previous_entries) {
    const double shrink = 1.0 - static_cast<double>(n) / static_cast<double>(previous_entries);  // previous > n
    if (shrink > config.max_shrink) {
      return "shrank from " + std::to_string(previous_entries) + " to " + std::to_string(n) + " entries (" +
             Percent(shrink) + ", more than max_shrink " + Percent(config.max_shrink) + ")";
    }
  }
  return {};
}

ListRecord ApplyGrace(const ListRecord& record, const std::map<std::string, std::string>& present, int64_t now,
                      int64_t grace_seconds, double max_removal, bool allow_large_removal, uint64_t* removed,
                      uint64_t* held, uint64_t* in_grace) {
  ListRecord next;
  next.list = record.list;
  *removed = *held = *in_grace = 0;
  for (const auto& [value, threat] : present) next.entries[value] = ListRecordEntry{0, threat};
  std::vector<std::pair<std::string, ListRecordEntry>> expired;
  for (const auto& [value, e] : record.entries) {
    if (present.count(value) != 0) continue;
    const int64_t since = e.absent_since_unix != 0 ? e.absent_since_unix : now;
    if (now - since < grace_seconds) {
      next.entries[value] = ListRecordEntry{since, e.threat};
      ++*in_grace;
    } else {
      expired.emplace_back(value, ListRecordEntry{since, e.threat});
    }
  }
  const bool too_many = !record.entries.empty() &&
                        static_cast<double>(expired.size()) > max_removal * static_cast<double>(record.entries.size());
  if (too_many && !allow_large_removal) {
    for (auto& [value, e] : expired) next.entries[value] = std::move(e);
    *held = expired.size();
  } else {
    *removed = expired.size();
  }
  return next;
}

Result<FeedUpdateReport> UpdateFeeds(const FeedUpdateOptions& o) {
  Env* env = o.env != nullptr ? o.env : Env::Default();
  if (o.feeds_file.empty() || o.repo_dir.empty() || o.private_key_path.empty()) {
    return Status::InvalidArgument("the feeds file, the repository and the key are required");
  }
  if (!o.state.empty() && !IsPostgresStateUri(o.state)) {
    return Status::InvalidArgument("--state takes a postgresql:// connection URI (files are the default)");
  }
  auto text = env->ReadFile(o.feeds_file, kMaxFeedsFileBytes);
  if (!text.ok()) return text.status().WithContext(o.feeds_file);
  auto parsed = ParseFeedsFile(*text);
  if (!parsed.ok()) return parsed.status().WithContext(o.feeds_file);
  const FeedsFile& file = *parsed;
  for (const std::string& a : o.accept) {
    if (file.FindFeed(a) == nullptr) return Status::InvalidArgument("--accept " + a + ": no such feed in " + o.feeds_file);
  }
  auto key = LoadSigningKey(env, o.private_key_path);
  if (!key.ok()) return key.status();
  const int64_t now = o.now_unix != 0 ? o.now_unix : env->NowUnixSeconds();

  const std::string feeds_dir = FeedsDir(o.repo_dir);
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(feeds_dir, /*private_dir=*/true));
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(FeedListsDir(o.repo_dir), /*private_dir=*/true));
  auto lock = env->LockFile(FeedUpdateLockPath(o.repo_dir));
  if (!lock.ok()) return lock.status().WithContext("another urlguard-publish update is working on " + o.repo_dir);

  FeedUpdateReport report;
  // The entries of each download that became (or equals) its feed's good copy this run, by feed index: step 2 takes
  // them from here instead of reading and parsing the file it just wrote. Empty for feeds whose good copy is older.
  std::vector<std::optional<std::vector<std::pair<std::string, std::string>>>> fresh(file.feeds.size());
  // 1. Every feed: fetch, check, keep or quarantine.
  for (size_t fi = 0; fi < file.feeds.size(); ++fi) {
    const FeedConfig& f = file.feeds[fi];
    const std::string dir = FeedDir(o.repo_dir, f.name);
    const std::string meta_path = JoinPath(dir, kFeedMetaFileName);
    const std::string good_path = JoinPath(dir, kFeedGoodFileName);
    URLGUARD_RETURN_IF_ERROR(env->CreateDirs(dir, /*private_dir=*/true));
    FeedMeta meta;
    if (env->FileExists(meta_path)) {
      auto m = env->ReadFile(meta_path, kMaxFeedMetaBytes);
      if (!m.ok()) return m.status().WithContext(meta_path);
      auto pm = ParseFeedMeta(*m);
      if (!pm.ok()) return pm.status().WithContext(meta_path);
      meta = *pm;
    }
    const bool has_good = env->FileExists(good_path);
    FeedHealthReport h;
    h.feed = f.name;
    h.list = f.list;
    h.previous_entries = has_good ? meta.entries : 0;
    const bool accepted = std::find(o.accept.begin(), o.accept.end(), f.name) != o.accept.end();

    Download d = FetchOne(env, f, meta, has_good, o.proxy);
    meta.last_attempt_unix = now;
    meta.bytes = d.body.size();
    std::string reason;
    std::optional<CheckedFeed> checked;  // set once the download parsed
    if (!d.status.ok()) {
      reason = d.status.ToString();
    } else if (d.not_modified && !has_good) {
      reason = "304 Not Modified to a request without validators: nothing to count";
    } else if (d.not_modified) {
      h.outcome = FeedOutcome::kNotModified;
    } else {
      auto read = ReadFeedBody(f.spec, f.path.empty() ? f.url : f.path, d.body, f.max_bytes);
      if (!read.ok()) {
        reason = "unreadable: " + read.status().ToString();
      } else {
        checked = std::move(read).value();
        meta.rejected = checked->rejected;
        reason = CheckFeedDownload(*checked, f, h.previous_entries);
        if (!reason.empty() && accepted) {
          h.outcome = FeedOutcome::kAccepted;
          h.reason = reason;
          reason.clear();
        }
      }
    }
    if (!reason.empty()) {
      h.outcome = FeedOutcome::kQuarantined;
      meta.quarantined = true;
      meta.reason = reason;
      meta.quarantine_path.clear();
      ++meta.consecutive_failures;
      if (!d.body.empty()) {
        const std::string qdir = JoinPath(dir, kFeedQuarantineDirName);
        URLGUARD_RETURN_IF_ERROR(env->CreateDirs(qdir, /*private_dir=*/true));
        const std::string qpath = JoinPath(qdir, QuarantineFileName(now));
        URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, qpath, d.body, /*private_file=*/true));
        PruneQuarantine(env, qdir);
        meta.quarantine_path = qpath;
      }
      report.any_quarantined = true;
    } else {
      if (h.outcome != FeedOutcome::kNotModified) {
        // Same bytes (a server without validators, a local file)? The old copy is read only when the sizes match.
        bool same = false;
        if (has_good) {
          auto info = env->Stat(good_path);
          if (info.ok() && info->size == checked->text.size()) {
            auto old = env->ReadFile(good_path, kMaxFeedBytes);
            same = old.ok() && *old == checked->text;
          }
        }
        if (same) {
          h.outcome = FeedOutcome::kNotModified;
        } else {
          URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, good_path, checked->text, /*private_file=*/true));
          if (h.outcome != FeedOutcome::kAccepted) h.outcome = FeedOutcome::kUpdated;
        }
        meta.entries = checked->entries.size();
        meta.etag = d.etag;
        meta.last_modified = d.last_modified;
        fresh[fi] = std::move(checked->entries);
      }
      meta.quarantined = false;
      meta.reason.clear();
      meta.quarantine_path.clear();
      meta.consecutive_failures = 0;
      meta.last_success_unix = now;
    }
    URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, meta_path, SerializeFeedMeta(meta), /*private_file=*/true));
    if (h.reason.empty()) h.reason = meta.reason;
    h.quarantine_path = meta.quarantine_path;
    h.last_success_unix = meta.last_success_unix;
    h.entries = has_good || fresh[fi] ? meta.entries : 0;
    h.rejected = meta.rejected;
    h.bytes = meta.bytes;
    h.consecutive_failures = meta.consecutive_failures;
    h.quarantined = meta.quarantined;
    report.feeds.push_back(std::move(h));
  }

  // 2. Every list: the union of its feeds' good copies, the grace step, a new version.
  std::unique_ptr<PgState> pg_ingest;
  for (const FeedListConfig& l : file.lists) {
    ListUpdateReport lr;
    lr.list = l.name;
    std::map<std::string, std::string> present;
    bool any_good = false;
    for (size_t fi = 0; fi < file.feeds.size(); ++fi) {
      const FeedConfig& f = file.feeds[fi];
      if (f.list != l.name) continue;
      std::vector<std::pair<std::string, std::string>> entries;
      if (fresh[fi]) {
        entries = std::move(*fresh[fi]);
        fresh[fi].reset();
      } else {
        const std::string good_path = JoinPath(FeedDir(o.repo_dir, f.name), kFeedGoodFileName);
        if (!env->FileExists(good_path)) continue;
        auto good = env->ReadFile(good_path, kMaxFeedBytes);
        if (!good.ok()) return good.status().WithContext(good_path);
        auto feed = ReadFeedBody(f.spec, f.path.empty() ? f.url : f.path, *good, kMaxFeedBytes);
        if (!feed.ok()) return feed.status().WithContext(good_path);
        entries = std::move(feed->entries);
      }
      any_good = true;
      for (auto& [value, threat] : entries) {
        const std::string& t = !threat.empty() ? threat : f.threat;
        present.emplace(std::move(value), t);  // the first feed naming an entry decides its threat
      }
    }
    if (!any_good) {
      report.lists.push_back(lr);
      continue;
    }
    const std::string record_path = ListRecordPath(o.repo_dir, l.name);
    ListRecord record;
    record.list = l.name;
    if (env->FileExists(record_path)) {
      auto rt = env->ReadFile(record_path, kMaxListRecordBytes);
      if (!rt.ok()) return rt.status().WithContext(record_path);
      auto rec = ParseListRecord(*rt);
      if (!rec.ok()) return rec.status().WithContext(record_path);
      if (rec->list != l.name) return Status::Corruption(record_path + ": names list " + rec->list);
      record = std::move(rec).value();
    }
    lr.previous_entries = record.entries.size();
    ListRecord next = ApplyGrace(record, present, now, l.grace_seconds, l.max_removal, o.allow_large_removal,
                                 &lr.removed, &lr.removals_held, &lr.in_grace);
    if (lr.removals_held != 0) report.removals_held = true;
    lr.entries = next.entries.size();

    PublishOptions po;
    std::unique_ptr<PgState> pg;
    const std::string list_threat = l.threat.empty() ? l.name : l.threat;
    if (!o.state.empty()) {
      if (pg_ingest == nullptr) {
        auto opened = PgState::Open(o.state);
        if (!opened.ok()) return opened.status();
        pg_ingest = std::move(opened).value();
      }
      std::vector<PgIngestEntry> keys;
      keys.reserve(next.entries.size());
      for (const auto& [value, e] : next.entries) {
        auto k = EntryKeyFor(value);
        if (!k.ok()) continue;  // ReadFeedBody kept only valid values; a hand-edited record may not
        keys.push_back({std::move(k).value(), e.threat.empty() ? list_threat : e.threat});
      }
      auto ingested = pg_ingest->IngestFeed(l.name, kPgFeedName, keys, now, /*replace_feed=*/true);
      if (!ingested.ok()) return ingested.status().WithContext(l.name);
      URLGUARD_RETURN_IF_ERROR(AttachPgState(o.state, l.name, /*has_inputs=*/false, &pg, &po));
    } else {
      po.entry_source = [&next](const std::function<void(const EntryKey&, const std::string&)>& sink) -> Status {
        for (const auto& [value, e] : next.entries) {
          auto k = EntryKeyFor(value);
          if (k.ok()) sink(*k, e.threat);
        }
        return Status::Ok();
      };
    }
    po.repo_dir = o.repo_dir;
    po.list = l.name;
    po.expires_in_seconds = l.expires_in_seconds;
    po.keep = l.keep;
    po.default_threat = list_threat;
    po.now_unix = now;
    auto published = Publish(env, *key, po);
    if (!published.ok()) return published.status().WithContext("publishing " + l.name);
    lr.published = true;
    lr.version = published->version;
    // After the version exists: a crash before this line republishes the same content next time.
    URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, record_path, SerializeListRecord(next), /*private_file=*/true));
    report.lists.push_back(lr);
  }
  if (!o.metrics_textfile.empty()) {
    URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, o.metrics_textfile, FeedHealthMetrics(report, now)));
  }
  return report;
}

}  // namespace urlguard
