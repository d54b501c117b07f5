// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `urlguard-publish`: builds signed threat lists from feeds (server side).
//
//   urlguard-publish build   --list NAME --input [FORMAT:]FILE... --out SNAPSHOT [--fp-rate P] [--filter KIND]
//   urlguard-publish keygen  --out DIR
//   urlguard-publish publish --repo DIR --key PRIVATE.pem --list NAME (--input [FORMAT:]FILE... |
//                            --add [FORMAT:]FILE... --remove [FORMAT:]FILE...)
//                            [--expires-in 24h] [--min-wait 30m] [--keep K] [--emergency on|off] [--fp-rate P]
//                            [--threat T] [--accept [FORMAT:]FILE ...] [--max-removal FRACTION] [--allow-large-removal]
//   urlguard-publish publish --state postgresql://... --repo DIR --key PRIVATE.pem --list NAME [options as above]
//   urlguard-publish ingest  --state postgresql://... --list NAME --input [FORMAT:]FILE... [--threat T] [--add-only]
//                            [--memory-budget BYTES|NM|NG] [--threads N] [--accept [FORMAT:]FILE ...]
//   urlguard-publish seen    --repo DIR ENTRY...   |   seen --state postgresql://... ENTRY...
//   urlguard-publish rotate  --key OLD.pem --new-key NEW.pub.pem --out STATEMENT [--not-before UNIX]
//                            [--grace SECONDS] [--reset LIST=VERSION ...]
//   urlguard-publish index   --repo DIR --key PRIVATE.pem
//   urlguard-publish compact --repo DIR --list NAME [--keep-deltas N]
//   urlguard-publish export  --format rpz --repo DIR --list NAME [--out FILE]
//                            [--action nxdomain|nodata|null|cname:HOST] [--origin ZONE] [--allowlist FILE...]
//   urlguard-publish update  --feeds FEEDS.conf --repo DIR --key PRIVATE.pem [--state postgresql://...]
//                            [--accept FEED ...] [--allow-large-removal] [--proxy URL] [--metrics-textfile FILE]
//   urlguard-publish loop    --repo DIR --key PRIVATE.pem --list NAME --spool DIR --every SECONDS [--expires-in 24h]
//                            [--keep K] [--emergency on|off] [--fp-rate P] [--threat T] [--threads N]
//                            [--accept NAME ...] [--refresh-after DURATION]
//
// Input formats (docs/feeds.md): plain, hosts, abp, phishtank-csv, phishtank-json, urlhaus-csv, openphish,
// drop-json, drop-txt, csv:COLUMN; auto-detected without a prefix; gzip is read as such.
// Exit status: 0 done (bad lines are reported and skipped), 1 failed, 4 bad usage. For `publish`: 0 exactly when
// the version was committed (a step after the commit that failed is a "warning:" on stderr, not a failure: clients
// may already hold the version), 1 exactly when nothing was committed (the urlguard-publish(1) man page, EXIT
// STATUS), except that the guard's refusals (docs/feeds.md, "The publication guard"; nothing committed either) exit 3
// (an input refused, also for `ingest`) and 5 (too large a removal).
// `update` also: 3 a feed was quarantined (its last good copy still counts), 5 removals were held back
// (docs/feeds-file.md §8).
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "tools/progress.h"
#include "urlguard/checker.h"
#include "urlguard/env.h"
#include "urlguard/publish.h"
#include "urlguard/version.h"

namespace {

using urlguard::Status;

constexpr size_t kMaxProblemsShown = 20;

int Fail(const Status& s) {
  std::cerr << "urlguard-publish: " << s.ToString() << '\n';
  return 1;
}

void ShowProblems(const std::vector<urlguard::FeedLineProblem>& problems, uint64_t total) {
  for (size_t i = 0; i < problems.size() && i < kMaxProblemsShown; ++i) {
    std::cerr << problems[i].file << ':' << problems[i].line << ": skipped: " << problems[i].message << '\n';
  }
  if (total > kMaxProblemsShown) std::cerr << "(" << total - kMaxProblemsShown << " more bad lines not shown)\n";
}

// The report's input line; a format 2 incremental version's new/seen counts come with the next checkpoint.
void PrintInputLine(const urlguard::ListPublishReport& r) {
  std::printf("  input: %llu lines, %llu entries, %llu rejected; ", static_cast<unsigned long long>(r.input_lines),
              static_cast<unsigned long long>(r.input_entries), static_cast<unsigned long long>(r.rejected));
  if (r.seen_at_checkpoint) {
    std::printf("new and seen-before counts: the seen filter records this version at the next checkpoint\n");
  } else {
    std::printf("%llu new, %llu seen in earlier runs\n", static_cast<unsigned long long>(r.new_keys),
                static_cast<unsigned long long>(r.seen_before));
  }
}

const char* LayerLabel(int i) { return urlguard::LayerName(static_cast<urlguard::Layer>(i)); }

int RunBuild(const std::string& list, const std::vector<std::string>& inputs, const std::string& out,
             double fp_rate, const std::string& filter, uint64_t version) {
  urlguard::Progress progress;
  urlguard::SnapshotBuildOptions o;
  o.list = list;
  o.inputs = inputs;
  o.out_path = out;
  o.version = version;
  o.created_unix = static_cast<int64_t>(std::time(nullptr));
  o.fp_rate = fp_rate;
  o.blocked_bloom = filter == "blocked-bloom";
  o.progress = [&](uint64_t n) { progress.Show(n); };
  auto r = urlguard::BuildSnapshotFile(o);
  progress.Done();
  if (!r.ok()) return Fail(r.status());
  ShowProblems(r->problems, r->rejected);
  uint64_t entries = 0;
  for (uint64_t e : r->entries) entries += e;
  std::printf("built %s: list %s version %llu, %llu entries from %llu lines (%llu rejected) in %.2f s\n",
              out.c_str(), list.c_str(), static_cast<unsigned long long>(version),
              static_cast<unsigned long long>(entries), static_cast<unsigned long long>(r->lines),
              static_cast<unsigned long long>(r->rejected), progress.Elapsed());
  for (int i = 0; i < 3; ++i) {
    if (r->entries[i] == 0) continue;
    std::printf("  %-6s %10llu entries  %8llu duplicates  expected false positives per probe %.2g\n", LayerLabel(i),
                static_cast<unsigned long long>(r->entries[i]), static_cast<unsigned long long>(r->duplicates[i]),
                r->expected_fp_per_probe[i]);
  }
  std::printf("  %llu bytes, %.2f bits per entry%s, filter %s, target false-positive rate per URL %g\n",
              static_cast<unsigned long long>(r->bytes),
              entries ? static_cast<double>(r->bytes) * 8.0 / static_cast<double>(entries) : 0.0,
              r->bytes < 4096 ? " (small list: the fixed header dominates)" : "", r->filter, fp_rate);
  return 0;
}

int RunKeygen(const std::string& dir) {
  auto files = urlguard::GenerateKeyPair(dir);
  if (!files.ok()) return Fail(files.status());
  std::printf("wrote %s (private, mode 0600) and %s\nkey id %s: give the public key to clients "
              "(urlguard sync --public-key); keep the private key off the web server\n",
              files->private_key_path.c_str(), files->public_key_path.c_str(), files->key_id.c_str());
  return 0;
}

int RunPublish(const std::string& repo, const std::string& key_path, const std::string& list,
               const std::vector<std::string>& inputs, const std::string& expires_in, uint32_t keep,
               const std::string& emergency, double fp_rate, const std::string& threat,
               const std::string& memory_budget, int threads, const std::vector<std::string>& add,
               const std::vector<std::string>& remove, const std::string& state,
               const std::vector<std::string>& accept, double max_removal, bool allow_large_removal,
               uint32_t manifest_format, uint64_t checkpoint_changes, bool checkpoint_inline,
               const std::string& min_wait) {
  // --memory-budget: bytes, or a number with K, M or G (powers of 1024).
  uint64_t budget = 0;
  {
    size_t used = 0;
    unsigned long long n = 0;
    try {
      n = std::stoull(memory_budget, &used);
    } catch (...) {
      used = 0;
    }
    std::string unit = memory_budget.substr(used);
    int shift = unit.empty() ? 0 : unit == "K" || unit == "k" ? 10 : unit == "M" || unit == "m" ? 20
                                 : unit == "G" || unit == "g" ? 30 : -1;
    if (used == 0 || shift < 0 || n == 0 || n > (uint64_t{1} << (62 - shift))) {
      std::cerr << "urlguard-publish: --memory-budget takes bytes or a number with K, M or G (e.g. 512M, 2G)\n";
      return 4;
    }
    budget = n << shift;
  }
  auto expires = urlguard::ParseDurationSeconds(expires_in);
  if (!expires.ok()) {
    std::cerr << "urlguard-publish: --expires-in takes a duration such as 90m, 24h or 7d\n";
    return 4;
  }
  auto wait = urlguard::ParseDurationSeconds(min_wait);
  if (!wait.ok() || *wait < urlguard::kMinPublishMinWaitSeconds || *wait > 24 * 3600) {
    std::cerr << "urlguard-publish: --min-wait takes a duration from 60 s to 24h, such as 60, 5m or 30m\n";
    return 4;
  }
  urlguard::Progress progress;
  urlguard::ListPublishOptions o;
  o.repo_dir = repo;
  o.private_key_path = key_path;
  o.list = list;
  o.inputs = inputs;
  o.expires_in_seconds = *expires;
  o.min_wait_seconds = static_cast<uint32_t>(*wait);
  o.keep = keep;
  o.emergency = emergency == "on";
  o.fp_rate = fp_rate;
  o.default_threat = threat;
  o.state = state;
  o.add = add;
  o.remove = remove;
  o.accept = accept;
  o.max_removal = max_removal;
  o.allow_large_removal = allow_large_removal;
  o.manifest_format = manifest_format;
  o.checkpoint_changes = checkpoint_changes;
  o.checkpoint_inline = checkpoint_inline;
  o.memory_budget = static_cast<size_t>(budget);
  o.threads = threads;
  o.progress = [&](uint64_t n) { progress.Show(n); };
  // Every phase on the terminal's progress line (parse, sort/merge, write, sign); nothing when stderr is no tty.
  o.phase_progress = [&](urlguard::PublishPhase p, std::string_view step, uint64_t done) {
    progress.Phase(static_cast<int>(p) + 1, static_cast<int>(urlguard::PublishPhase::kSign) + 1,
                   urlguard::PublishPhaseName(p), step, done);
  };
  urlguard::PublishRefusal refusal = urlguard::PublishRefusal::kNone;
  auto report = urlguard::PublishList(o, &refusal);
  progress.Done();
  if (!report.ok()) {
    const int rc = Fail(report.status().WithContext("nothing committed"));
    // The guard (docs/feeds.md, "The publication guard"): `update`'s statuses for a quarantine, held removals.
    if (refusal == urlguard::PublishRefusal::kInputRefused) return 3;
    if (refusal == urlguard::PublishRefusal::kLargeRemoval) return 5;
    return rc;
  }
  const urlguard::ListPublishReport& r = *report;
  ShowProblems(r.problems, r.rejected);
  for (const std::string& w : r.warnings) {
    std::cerr << "urlguard-publish: warning: " << list << " version " << r.version << " is committed; " << w << '\n';
  }
  std::printf("published %s version %llu%s in %.2f s -> %s\n", list.c_str(),
              static_cast<unsigned long long>(r.version), o.emergency ? " (EMERGENCY policy on)" : "",
              progress.Elapsed(), r.manifest_path.c_str());
  PrintInputLine(r);
  for (int i = 0; i < 3; ++i) {
    std::printf("  %-6s %10llu entries", LayerLabel(i), static_cast<unsigned long long>(r.entries[i]));
    if (!r.first_version) {
      std::printf("  (+%llu added, -%llu removed)", static_cast<unsigned long long>(r.added[i]),
                  static_cast<unsigned long long>(r.removed[i]));
    }
    std::printf("\n");
  }
  if (r.snapshot_bytes != 0) {
    std::printf("  snapshot %llu bytes (%llu on the wire)\n", static_cast<unsigned long long>(r.snapshot_bytes),
                static_cast<unsigned long long>(r.snapshot_wire_bytes));
  }
  for (const auto& d : r.diffs) {
    std::printf("  diff from version %llu: %llu bytes for %llu changed entries (%.2f bytes each)\n",
                static_cast<unsigned long long>(d.from_version), static_cast<unsigned long long>(d.wire_bytes),
                static_cast<unsigned long long>(d.changed_entries),
                d.changed_entries ? static_cast<double>(d.wire_bytes) / static_cast<double>(d.changed_entries) : 0.0);
  }
  if (r.universe_changed) std::printf("  note: the list outgrew its filter size; clients download the full snapshot once\n");
  if (r.checkpoint != 0) {
    std::printf("  manifest format 2: checkpoint %llu (clients start from its snapshot)%s\n",
                static_cast<unsigned long long>(r.checkpoint),
                r.checkpointed && r.checkpoint == r.version
                    ? "; the version is a checkpoint itself: no range diff from the previous checkpoint could carry "
                      "its changes (clients take its snapshot)"
                : r.checkpointed   ? "; made a new checkpoint after the commit (the next version names it)"
                : r.checkpoint_due ? "; a new checkpoint is due, to be made beside publishing (the loop's "
                                     "maintenance, or compact --if-due)"
                                   : "");
  }
  return 0;
}

int RunIngest(const std::string& state, const std::string& list, const std::vector<std::string>& inputs,
              const std::string& threat, bool add_only, const std::vector<std::string>& accept) {
  urlguard::Progress progress;
  urlguard::StateIngestOptions o;
  o.state = state;
  o.list = list;
  o.inputs = inputs;
  o.default_threat = threat;
  o.replace = !add_only;
  o.accept = accept;
  urlguard::PublishRefusal refusal = urlguard::PublishRefusal::kNone;
  auto r = urlguard::IngestIntoState(o, &refusal);
  progress.Done();
  if (!r.ok()) {
    const int rc = Fail(r.status().WithContext("nothing ingested"));
    return refusal == urlguard::PublishRefusal::kInputRefused ? 3 : rc;
  }
  ShowProblems(r->problems, r->rejected);
  std::printf("ingested %s in %.2f s: %llu lines, %llu entries (%llu rejected); %llu unique, %llu new, %llu seen "
              "before, %llu no longer listed\n",
              list.c_str(), progress.Elapsed(), static_cast<unsigned long long>(r->input_lines),
              static_cast<unsigned long long>(r->input_entries), static_cast<unsigned long long>(r->rejected),
              static_cast<unsigned long long>(r->entries), static_cast<unsigned long long>(r->new_entries),
              static_cast<unsigned long long>(r->seen_before), static_cast<unsigned long long>(r->removed));
  return 0;
}

int RunRotate(const std::string& old_key_path, const std::string& new_pub_path, const std::string& out,
              int64_t not_before, int64_t grace, const std::vector<std::string>& reset_specs) {
  urlguard::RotationOptions ro;
  ro.not_before_unix = not_before;
  ro.grace_seconds = grace;
  for (const std::string& spec : reset_specs) {  // LIST=VERSION
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq + 1 == spec.size() || spec.size() - eq > 21 ||
        spec.find_first_not_of("0123456789", eq + 1) != std::string::npos) {
      return Fail(urlguard::Status::InvalidArgument("--reset must be LIST=VERSION: " + spec));
    }
    ro.high_water_resets.emplace_back(spec.substr(0, eq), std::stoull(spec.substr(eq + 1)));
  }
  auto st = urlguard::WriteRotationStatement(old_key_path, new_pub_path, out, ro);
  if (!st.ok()) return Fail(st.status());
  std::printf("wrote %s: key %s vouches for key %s; clients add it with --key-rotation and keep their configured key\n",
              st->path.c_str(), st->old_key_id.c_str(), st->new_key_id.c_str());
  return 0;
}

int RunSeen(const std::string& repo, const std::string& state, const std::vector<std::string>& entries) {
  auto counts = state.empty() ? urlguard::CountSeenEntries(repo, entries)
                              : urlguard::CountSeenEntriesInState(state, entries);
  if (!counts.ok()) return Fail(counts.status());
  for (size_t i = 0; i < entries.size(); ++i) {
    int64_t c = (*counts)[i];
    if (c < 0) {
      std::printf("%s: invalid entry\n", entries[i].c_str());
    } else if (c == 0) {
      std::printf("%s: never seen\n", entries[i].c_str());
    } else {
      std::printf("%s: seen in about %lld run%s\n", entries[i].c_str(), static_cast<long long>(c), c == 1 ? "" : "s");
    }
  }
  return 0;
}

int RunExport(const std::string& repo, const std::string& list, const std::string& out, const std::string& action,
              const std::string& origin, const std::vector<std::string>& allowlists) {
  urlguard::RpzExportOptions o;
  o.repo_dir = repo;
  o.list = list;
  o.out_path = out;
  o.action = action;
  o.origin = origin;
  o.allowlist_paths = allowlists;
  auto r = urlguard::ExportRpz(o);
  if (!r.ok()) return Fail(r.status());
  std::printf("exported %s version %llu as a response policy zone -> %s (%llu bytes): %llu domains, %llu ip ranges\n",
              list.c_str(), static_cast<unsigned long long>(r->version), r->path.c_str(),
              static_cast<unsigned long long>(r->bytes), static_cast<unsigned long long>(r->domains),
              static_cast<unsigned long long>(r->ip_ranges));
  if (!allowlists.empty()) {
    std::printf("  passthru: %llu allowlisted domains and ranges; %llu listed entries they cover left out\n",
                static_cast<unsigned long long>(r->passthru), static_cast<unsigned long long>(r->allowed_left_out));
  }
  if (r->allowlist_url_entries_left_out != 0) {
    std::fprintf(stderr, "urlguard-publish: left out %llu allowlisted URLs with a path: DNS cannot let only a path "
                         "through\n", static_cast<unsigned long long>(r->allowlist_url_entries_left_out));
  }
  if (r->url_entries_left_out != 0) {
    std::fprintf(stderr, "urlguard-publish: left out %llu url-layer entries: DNS cannot match a URL's path\n",
                 static_cast<unsigned long long>(r->url_entries_left_out));
  }
  if (r->unexpressible_left_out != 0) {
    std::fprintf(stderr, "urlguard-publish: left out %llu entries that are no DNS host name or range\n",
                 static_cast<unsigned long long>(r->unexpressible_left_out));
  }
  return 0;
}

int RunIndex(const std::string& repo, const std::string& key) {
  auto n = urlguard::RewriteListIndex(repo, key);
  if (!n.ok()) {
    std::cerr << "urlguard-publish index: " << n.status().ToString() << '\n';
    return 1;
  }
  std::cout << "indexed " << *n << " list" << (*n == 1 ? "" : "s") << " in " << repo << "/public/v1/lists/index.json\n";
  return 0;
}

// What a new checkpoint offers clients behind it.
void PrintCheckpointCatchUp(const urlguard::ListCompactReport& r) {
  if (r.snapshot_bytes == 0) return;
  if (r.catchup_diffs == 0) {
    std::cout << "  clients behind it take its snapshot (" << r.snapshot_bytes << " bytes)\n";
    return;
  }
  std::cout << "  clients at version " << r.catchup_from << " or later catch up with a range diff to it ("
            << r.catchup_diffs << " offered";
  if (r.large_diffs != 0) {
    std::cout << ", " << r.large_diffs << " of them large: over the 64 MB / 16 Mi-value caps every reader takes, "
              << "still smaller than the snapshot; readers before large diffs take the snapshot instead";
  }
  std::cout << ")";
  std::cout << "; clients further behind take its snapshot (" << r.snapshot_bytes << " bytes)\n";
}

int RunCheckpointIfDue(const std::string& repo, const std::string& list, uint64_t checkpoint_changes,
                       double fp_rate) {
  auto r = urlguard::CheckpointListIfDue(repo, list, checkpoint_changes, fp_rate);
  if (!r.ok()) {
    std::cerr << "urlguard-publish compact --if-due: " << r.status().ToString() << '\n';
    return 1;
  }
  if (r->compacted) {
    std::cout << list << ": made version " << r->version << " a checkpoint (the previous one was version "
              << r->base_version << "); the next version names it\n";
    PrintCheckpointCatchUp(*r);
  } else {
    std::cout << list << ": no checkpoint due at version " << r->version << " (the newest is version "
              << r->base_version << ")\n";
  }
  return 0;
}

int RunCompact(const std::string& repo, const std::string& list, uint32_t keep_deltas) {
  auto r = urlguard::CompactList(repo, list, keep_deltas);
  if (!r.ok()) {
    std::cerr << "urlguard-publish compact: " << r.status().ToString() << '\n';
    return 1;
  }
  if (r->compacted) {
    std::cout << list << ": folded the state of version " << r->version << " (base " << r->base_version
              << " and its deltas) into a new base\n";
    PrintCheckpointCatchUp(*r);  // format 2: the new checkpoint
  } else {
    std::cout << list << ": the state of version " << r->version << " already is a base\n";
  }
  return 0;
}

// `update`: exit 3 when a feed was quarantined, 5 when only removals were held back (docs/feeds-file.md §8).
int RunUpdate(const urlguard::FeedUpdateOptions& o) {
  auto r = urlguard::UpdateFeeds(o);
  if (!r.ok()) {
    std::cerr << "urlguard-publish update: " << r.status().ToString() << '\n';
    return r.status().code() == urlguard::StatusCode::kInvalidArgument ? 4 : 1;
  }
  for (const urlguard::FeedHealthReport& h : r->feeds) {
    std::printf("feed %s (%s): %s, %llu entries, %llu rejected lines, %llu bytes", h.feed.c_str(), h.list.c_str(),
                urlguard::FeedOutcomeName(h.outcome), static_cast<unsigned long long>(h.entries),
                static_cast<unsigned long long>(h.rejected), static_cast<unsigned long long>(h.bytes));
    if (h.consecutive_failures != 0) {
      std::printf(", %llu consecutive failures", static_cast<unsigned long long>(h.consecutive_failures));
    }
    std::printf("\n");
    if (h.outcome == urlguard::FeedOutcome::kQuarantined) {
      std::fprintf(stderr, "urlguard-publish: feed %s quarantined: %s; its last good copy (%llu entries) still counts%s%s\n",
                   h.feed.c_str(), h.reason.c_str(), static_cast<unsigned long long>(h.entries),
                   h.quarantine_path.empty() ? "" : "; the download is in ", h.quarantine_path.c_str());
    } else if (h.outcome == urlguard::FeedOutcome::kAccepted) {
      std::fprintf(stderr, "urlguard-publish: feed %s accepted on purpose although: %s\n", h.feed.c_str(),
                   h.reason.c_str());
    }
  }
  for (const urlguard::ListUpdateReport& l : r->lists) {
    if (!l.published) {
      std::printf("list %s: not published: none of its feeds has a good copy yet\n", l.list.c_str());
      continue;
    }
    std::printf("list %s: published version %llu, %llu entries (%llu in grace, %llu removed)\n", l.list.c_str(),
                static_cast<unsigned long long>(l.version), static_cast<unsigned long long>(l.entries),
                static_cast<unsigned long long>(l.in_grace), static_cast<unsigned long long>(l.removed));
    if (l.removals_held != 0) {
      std::fprintf(stderr,
                   "urlguard-publish: list %s: held back %llu removals (more than its max_removal share of %llu "
                   "entries); rerun with --allow-large-removal to let them go\n",
                   l.list.c_str(), static_cast<unsigned long long>(l.removals_held),
                   static_cast<unsigned long long>(l.previous_entries));
    }
  }
  if (r->any_quarantined) return 3;
  if (r->removals_held) return 5;
  return 0;
}


// `loop`: a version every --every seconds from the spool's change files, until SIGTERM or SIGINT (the version in
// progress is finished first; exit 0). Each version is reported as `publish` reports one, plus the time from the
// oldest change file's arrival to the commit.
int RunLoop(urlguard::PublishLoopOptions o, const std::string& every, const std::string& expires_in,
            const std::string& refresh_after) {
  auto every_s = urlguard::ParseDurationSeconds(every);
  auto expires = urlguard::ParseDurationSeconds(expires_in);
  auto refresh = refresh_after.empty() ? urlguard::Result<int64_t>(int64_t{0})
                                       : urlguard::ParseDurationSeconds(refresh_after);
  if (!every_s.ok() || !expires.ok() || !refresh.ok()) {
    std::cerr << "urlguard-publish: --every, --expires-in and --refresh-after take a duration such as 60, 90s, "
                 "30m or 24h\n";
    return 4;
  }
  o.every_seconds = *every_s;
  o.publish.expires_in_seconds = *expires;
  o.refresh_after_seconds = *refresh;
  // Diverted before any thread starts (the publisher's threads inherit the mask): a signal only ends the wait.
  auto signals = urlguard::Env::Default()->WatchSignals({SIGTERM, SIGINT});
  if (!signals.ok()) return Fail(signals.status());
  o.wait = [&signals](int64_t ms) {
    auto got = (*signals)->Wait(ms);
    return !got.ok() || *got != 0;
  };
  const std::string list = o.publish.list;
  const bool emergency = o.publish.emergency;
  o.on_version = [&list, emergency](const urlguard::PublishLoopVersion& v) {
    const urlguard::ListPublishReport& r = v.report;
    for (const std::string& w : r.warnings) {
      std::cerr << "urlguard-publish: warning: " << list << " version " << r.version << " is committed; " << w
                << '\n';
    }
    ShowProblems(r.problems, r.rejected);
    std::printf("published %s version %llu%s in %.2f s -> %s\n", list.c_str(),
                static_cast<unsigned long long>(r.version), emergency ? " (EMERGENCY policy on)" : "",
                v.publish_seconds, r.manifest_path.c_str());
    if (v.refresh) {
      std::printf("  no change: re-published before the manifest expires\n");
    } else {
      std::printf("  %llu change file%s%s; ingest-to-commit %.1f s\n", static_cast<unsigned long long>(v.files),
                  v.files == 1 ? "" : "s", v.recovered ? " (claimed before a restart)" : "",
                  v.ingest_to_commit_seconds);
      PrintInputLine(r);
    }
    for (int i = 0; i < 3; ++i) {
      std::printf("  %-6s %10llu entries  (+%llu added, -%llu removed)\n", LayerLabel(i),
                  static_cast<unsigned long long>(r.entries[i]), static_cast<unsigned long long>(r.added[i]),
                  static_cast<unsigned long long>(r.removed[i]));
    }
    for (const auto& d : r.diffs) {
      std::printf("  diff from version %llu: %llu bytes for %llu changed entries\n",
                  static_cast<unsigned long long>(d.from_version), static_cast<unsigned long long>(d.wire_bytes),
                  static_cast<unsigned long long>(d.changed_entries));
    }
    if (r.universe_changed) std::printf("  note: the list outgrew its filter size; clients download the full snapshot once\n");
    std::fflush(stdout);
  };
  o.on_rejected = [](const urlguard::PublishLoopRejection& r) {
    std::cerr << "urlguard-publish: rejected " << r.file << ": " << r.why << " (the reason is in " << r.file
              << ".why)\n";
  };
  o.on_error = [](const urlguard::Status& s) {
    std::cerr << "urlguard-publish: this cycle failed, its files stay claimed for the next: " << s.ToString() << '\n';
  };
  std::printf("loop: publishing %s every %lld s from %s/incoming/ (min_wait_seconds %lld)\n", list.c_str(),
              static_cast<long long>(o.every_seconds), o.spool_dir.c_str(), static_cast<long long>(o.every_seconds));
  std::fflush(stdout);
  o.on_start = [](int64_t first_cycle_unix, int64_t wait_seconds) {
    std::printf("loop: first cycle in %lld s (created_unix %lld), on the committed version's cadence\n",
                static_cast<long long>(wait_seconds), static_cast<long long>(first_cycle_unix));
    std::fflush(stdout);
  };
  auto r = urlguard::RunPublishLoop(o);
  if (!r.ok()) {
    std::cerr << "urlguard-publish loop: " << r.status().ToString() << '\n';
    return r.status().code() == urlguard::StatusCode::kInvalidArgument ? 4 : 1;
  }
  std::printf("loop stopped after %llu cycles: %llu versions, %llu change files, %llu rejected, %llu failed cycles, "
              "%llu slots skipped (a cycle ran past the next one)\n",
              static_cast<unsigned long long>(r->cycles), static_cast<unsigned long long>(r->versions),
              static_cast<unsigned long long>(r->files), static_cast<unsigned long long>(r->rejected_files),
              static_cast<unsigned long long>(r->failed_cycles), static_cast<unsigned long long>(r->skipped_slots));
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguard-publish: build and publish signed urlguard threat lists"};
  app.set_version_flag("--version", urlguard::VersionString("urlguard-publish"),
                       "print the version and the format versions");
  app.require_subcommand(1);
  std::string memory_budget = "1G";
  std::vector<std::string> add_feeds, remove_feeds;
  int threads = 2;
  std::string list, out, filter = "fingerprint-array", repo, key, expires_in = "24h", emergency = "off", threat;
  std::string state;
  bool add_only = false;
  std::vector<std::string> inputs, entries;
  double fp_rate = 0.001;
  uint64_t version = 1;
  uint32_t keep = 5;
  std::string new_key;
  int64_t not_before = 0;
  int64_t grace = 0;
  std::vector<std::string> reset_specs;
  // An option that may be given several times, one value each ("--input a --input b").
  auto repeatable = [](CLI::Option* option) {
    option->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  };
  auto add_inputs = [&](CLI::App* cmd, bool required = true) {
    repeatable(
        cmd->add_option("--input", inputs,
                        "[FORMAT:]FILE (repeatable): plain, hosts, abp, phishtank-csv, phishtank-json, "
                        "urlhaus-csv, openphish, drop-json, drop-txt, csv:COLUMN; auto-detected")
            ->required(required));
  };

  auto* build = app.add_subcommand("build", "build one snapshot file from feeds (no signing, no repository)");
  build->add_option("--list", list, "list name ([a-z0-9_-], e.g. phishing)")->required();
  add_inputs(build);
  build->add_option("--out", out, "snapshot file to write")->required();
  build->add_option("--fp-rate", fp_rate,
                    "per-URL false-positive target, held for every URL (sized for the 5 x 6 expression maximum; "
                    "default 0.001)");
  build->add_option("--filter", filter, "fingerprint-array (default) or blocked-bloom")
      ->check(CLI::IsMember({"fingerprint-array", "blocked-bloom"}));
  build->add_option("--version", version, "list version (default 1)");

  auto* keygen = app.add_subcommand("keygen", "write a new Ed25519 key pair");
  keygen->add_option("--out", out, "directory for urlguard-ed25519.pem and urlguard-ed25519.pub.pem")->required();

  auto* publish = app.add_subcommand("publish", "publish a new signed version of a list into a repository");
  publish->add_option("--repo", repo, "repository directory (created if missing)")->required();
  publish->add_option("--key", key, "private key PEM (from keygen)")->required()->check(CLI::ExistingFile);
  publish->add_option("--list", list, "list name ([a-z0-9_-])")->required();
  add_inputs(publish, /*required=*/false);
  publish->add_option("--state", state,
                      "postgresql://... : entries, versions and seen counts in PostgreSQL (docs/postgres-schema.md); "
                      "no --input then (use ingest). Default: files in --repo");
  repeatable(publish->add_option("--add", add_feeds,
                                 "incremental version: [FORMAT:]FILE of entries to add (repeatable)"));
  repeatable(publish->add_option("--remove", remove_feeds,
                                 "incremental version: [FORMAT:]FILE of entries to remove (repeatable)"));
  publish->add_option("--expires-in", expires_in, "how long clients may serve this version (default 24h)");
  std::string min_wait = "30m";
  publish->add_option("--min-wait", min_wait,
                      "the manifest's min_wait_seconds: clients poll this often when it is under 30m, so set it to "
                      "the interval versions are published at (60 .. 24h; default 30m)");
  publish->add_option("--keep", keep, "diffs from this many previous versions (default 5)");
  publish->add_option("--emergency", emergency, "on: clients treat local hits as malicious without verifying")
      ->check(CLI::IsMember({"on", "off"}));
  publish->add_option("--fp-rate", fp_rate,
                    "per-URL false-positive target, held for every URL (sized for the 5 x 6 expression maximum; "
                    "default 0.001)");
  publish->add_option("--threat", threat, "threat type for entries whose feed names none (default: the list name)");
  publish->add_option("--memory-budget", memory_budget,
                      "sort memory; above it sorted runs spill to REPO/private/tmp/LIST (bytes, or 512M, 2G; default 1G)");
  publish->add_option("--threads", threads, "parse and hash on this many threads (default 2)")
      ->check(CLI::Range(1, 64));
  std::vector<std::string> accept_inputs;
  double max_removal = urlguard::kDefaultPublishMaxRemoval;
  bool allow_large_removal = false;
  repeatable(publish->add_option(
      "--accept", accept_inputs,
      "[FORMAT:]FILE: take this input although it looks like HTML, has no entry or is mostly "
      "rejected lines (repeatable; docs/feeds.md, the publication guard)"));
  publish->add_option("--max-removal", max_removal,
                      "largest share of the previous version's entries a full version may remove (default 0.1; "
                      "removing at most 100 entries is always allowed)")
      ->check(CLI::Range(0.0, 1.0));
  publish->add_flag("--allow-large-removal", allow_large_removal,
                    "let this version remove more than --max-removal of the previous one");
  uint32_t manifest_format = 1;
  uint64_t checkpoint_changes = uint64_t{1} << 20;
  publish->add_option("--manifest-format", manifest_format,
                      "1: a snapshot and diffs every version (every client release); 2: snapshots at checkpoints and "
                      "range diffs, so incremental versions cost what changed (docs/versions.md; a full version "
                      "with 2 is a checkpoint, and the list stays in format 2)")
      ->check(CLI::Range(1, 2));
  publish->add_option("--checkpoint-changes", checkpoint_changes,
                      "format 2: make a checkpoint after the version whose touched fingerprints since the last one "
                      "exceed this (default 1048576)");
  bool no_checkpoint = false;
  publish->add_flag("--no-checkpoint", no_checkpoint,
                    "format 2: leave a due checkpoint (O(N): about 2 min of CPU at 100 M entries) to `compact "
                    "--if-due` run beside publishing, so that a timer's versions never wait for one");

  auto* ingest = app.add_subcommand("ingest", "ingest feeds into the PostgreSQL state (then publish --state)");
  ingest->add_option("--state", state, "postgresql://... connection URI")->required();
  ingest->add_option("--list", list, "list name ([a-z0-9_-])")->required();
  add_inputs(ingest);
  ingest->add_option("--threat", threat, "threat type for entries whose feed names none (default: the list name)");
  repeatable(ingest->add_option(
      "--accept", accept_inputs,
      "[FORMAT:]FILE: ingest this input although it looks like HTML, has no entry or is mostly "
      "rejected lines (repeatable)"));
  ingest->add_flag("--add-only", add_only,
                   "only add: do not remove what a feed no longer lists (default: each file is its feed's whole content)");

  auto* seen = app.add_subcommand("seen", "have these entries been ingested before, and how often?");
  auto* seen_repo = seen->add_option("--repo", repo, "repository directory");
  auto* seen_state = seen->add_option("--state", state, "postgresql://... : the shared counts of ingest runs");
  seen_repo->excludes(seen_state);
  seen->add_option("entries", entries, "URLs, domains or IPs")->required();

  auto* rotate = app.add_subcommand("rotate", "sign a statement that moves clients' trust from this key to a new one");
  rotate->add_option("--key", key, "the currently trusted private key PEM")->required()->check(CLI::ExistingFile);
  rotate->add_option("--new-key", new_key, "the new public key PEM (from keygen)")->required()->check(CLI::ExistingFile);
  rotate->add_option("--out", out, "statement file to write")->required();
  rotate->add_option("--not-before", not_before, "unix time from which the new key is valid (default: now)");
  rotate->add_option("--grace", grace,
                     "seconds after --not-before during which the old key may still sign manifests alone "
                     "(0 .. 30 days; default 0: clients retire it at once)");
  rotate->add_option("--reset", reset_specs,
                     "LIST=VERSION: clients lower LIST's high-water mark to VERSION (recovers from a stolen key's "
                     "fast-forward; repeatable)");

  auto* index = app.add_subcommand("index", "rewrite the signed index of the repository's lists "
                                            "(publish does this after every publication)");
  index->add_option("--repo", repo, "repository directory")->required()->check(CLI::ExistingDirectory);
  index->add_option("--key", key, "private key PEM (the one that signs the manifests)")
      ->required()
      ->check(CLI::ExistingFile);

  uint32_t keep_deltas = 1440;
  auto* compact = app.add_subcommand("compact", "fold a list's private state (a base and the deltas of incremental "
                                                "versions) into a new base (publish does this by itself)");
  compact->add_option("--repo", repo, "repository directory")->required()->check(CLI::ExistingDirectory);
  compact->add_option("--list", list, "list name")->required();
  compact->add_option("--keep-deltas", keep_deltas,
                      "keep the deltas of this many recent versions (range diffs; default 1440)");
  bool if_due = false;
  compact->add_flag("--if-due", if_due,
                    "format 2: make a checkpoint only when one is due (what the loop does after each version; for "
                    "versions published with --no-checkpoint)");
  compact->add_option("--checkpoint-changes", checkpoint_changes,
                      "with --if-due: due once the fingerprints touched since the last checkpoint exceed this "
                      "(default 1048576)");
  compact->add_option("--fp-rate", fp_rate, "with --if-due: the false-positive rate the versions were published with")
      ->check(CLI::Range(1e-9, 0.5));

  std::string format, action = "nxdomain", origin;
  std::vector<std::string> allowlists;
  auto* exp = app.add_subcommand("export", "write a published list in another format (rpz: a DNS response policy zone)");
  exp->add_option("--format", format, "rpz (docs/rpz.md)")->required()->check(CLI::IsMember({"rpz"}));
  exp->add_option("--repo", repo, "repository directory")->required();
  exp->add_option("--list", list, "list name")->required();
  exp->add_option("--out", out, "file to write (default REPO/public/v1/lists/LIST/LIST.rpz)");
  exp->add_option("--action", action,
                  "nxdomain (default), nodata (the name exists, no records), null (A 0.0.0.0 and AAAA ::) or "
                  "cname:HOST (answer with a warning host)");
  exp->add_option("--origin", origin, "the zone's name (default LIST.rpz.urlguard.)");
  repeatable(
      exp->add_option("--allowlist", allowlists,
                      "FILE of domains, URLs, addresses or ranges (one a line, # comments) to let through: "
                      "rpz-passthru rules ahead of the blocks (repeatable)"));

  urlguard::FeedUpdateOptions update_options;
  auto* update = app.add_subcommand("update", "fetch every feed of a feeds file, check it, publish its lists "
                                              "(docs/feeds-file.md)");
  update->add_option("--feeds", update_options.feeds_file, "feeds file (docs/feeds-file.md)")->required();
  update->add_option("--repo", update_options.repo_dir, "repository directory (created if missing)")->required();
  update->add_option("--key", update_options.private_key_path, "private key PEM (from keygen)")->required();
  update->add_option("--state", update_options.state, "postgresql://... : publish through the PostgreSQL state");
  repeatable(
      update->add_option("--accept", update_options.accept,
                         "FEED: take this run's download of FEED although it fails the checks (repeatable)"));
  update->add_flag("--allow-large-removal", update_options.allow_large_removal,
                   "let a version remove more than its list's max_removal share");
  update->add_option("--proxy", update_options.proxy, "proxy URL (default: the http_proxy/https_proxy variables)");
  update->add_option("--metrics-textfile", update_options.metrics_textfile,
                     "write per-feed health as Prometheus text there (atomically; node_exporter textfile)");

  urlguard::PublishLoopOptions loop_options;
  std::string loop_every = "60", loop_refresh_after;
  auto* loop = app.add_subcommand("loop", "publish a version every --every seconds from the change files dropped "
                                          "into SPOOL/incoming/ (docs/runbook-publishers.md)");
  loop->add_option("--repo", loop_options.publish.repo_dir, "repository directory (the list has a first version)")
      ->required();
  loop->add_option("--key", loop_options.publish.private_key_path, "private key PEM (from keygen)")
      ->required()
      ->check(CLI::ExistingFile);
  loop->add_option("--list", loop_options.publish.list, "list name ([a-z0-9_-])")->required();
  loop->add_option("--spool", loop_options.spool_dir,
                   "spool directory: ingestors rename NAME.add / NAME.remove files into SPOOL/incoming/")
      ->required();
  loop->add_option("--every", loop_every,
                   "seconds between versions (a duration: 60, 90s, 5m; at least 60), also the manifests' "
                   "min_wait_seconds (default 60)");
  loop->add_option("--min-every", loop_options.min_every_seconds, "smallest --every accepted (tests)")->group("");
  loop->add_option("--expires-in", expires_in, "how long clients may serve each version (default 24h)");
  loop->add_option("--refresh-after", loop_refresh_after,
                   "without changes, re-publish once the current version is this old (default: half of --expires-in)");
  loop->add_option("--keep", loop_options.publish.keep, "diffs from this many previous versions (default 5)");
  loop->add_option("--emergency", emergency, "on: clients treat local hits as malicious without verifying")
      ->check(CLI::IsMember({"on", "off"}));
  loop->add_option("--fp-rate", loop_options.publish.fp_rate, "per-URL false-positive target (default 0.001)");
  loop->add_option("--checkpoint-changes", loop_options.publish.checkpoint_changes,
                   "manifest format 2 lists (docs/versions.md): make a checkpoint, on a thread of its own, once the "
                   "fingerprints touched since the last one exceed this (default 1048576)");
  loop->add_option("--threat", loop_options.publish.default_threat,
                   "threat type for entries whose feed names none (default: the list name)");
  loop->add_option("--threads", loop_options.publish.threads, "parse and hash on this many threads (default 2)")
      ->check(CLI::Range(1, 64));
  repeatable(loop->add_option("--accept", loop_options.publish.accept,
                              "NAME: take the change file NAME although the publication guard refuses it "
                              "(repeatable)"));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 4;
  }
  if (*build) return RunBuild(list, inputs, out, fp_rate, filter, version);
  if (*keygen) return RunKeygen(out);
  if (*publish) {
    if (inputs.empty() && add_feeds.empty() && remove_feeds.empty() && state.empty()) {
      std::cerr << "urlguard-publish: publish needs --input, --add/--remove, or --state postgresql://...\n";
      return 4;
    }
    return RunPublish(repo, key, list, inputs, expires_in, keep, emergency, fp_rate, threat, memory_budget, threads,
                      add_feeds, remove_feeds, state, accept_inputs, max_removal, allow_large_removal,
                      manifest_format, checkpoint_changes, !no_checkpoint, min_wait);
  }
  if (*ingest) return RunIngest(state, list, inputs, threat, add_only, accept_inputs);
  if (*seen) {
    if (repo.empty() == state.empty()) {
      std::cerr << "urlguard-publish: seen needs --repo DIR or --state postgresql://...\n";
      return 4;
    }
    return RunSeen(repo, state, entries);
  }
  if (*rotate) return RunRotate(key, new_key, out, not_before, grace, reset_specs);
  if (*index) return RunIndex(repo, key);
  if (*compact) {
    if (if_due) return RunCheckpointIfDue(repo, list, checkpoint_changes, fp_rate);
    return RunCompact(repo, list, keep_deltas);
  }
  if (*exp) return RunExport(repo, list, out, action, origin, allowlists);
  if (*update) return RunUpdate(update_options);
  if (*loop) {
    loop_options.publish.emergency = emergency == "on";
    return RunLoop(std::move(loop_options), loop_every, expires_in, loop_refresh_after);
  }
  return 4;
}
