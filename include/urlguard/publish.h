// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The publisher as a library (server side; linked by urlguard-publish and urlguard-server, never by clients):
// key generation, one-off snapshot builds, signed publication of list versions into a repository (snapshot,
// diffs from earlier versions, signed manifest), key-rotation statements, the "seen before" query, and feed
// argument parsing, the DNS Response Policy Zone export, the feed loop (UpdateFeeds: docs/feeds-file.md), and the
// publishing cadence (RunPublishLoop: docs/runbook-publishers.md, "A minute cadence"). docs/feeds.md describes the
// input formats, docs/repository-layout.md the repository.
//
//   urlguard::ListPublishOptions o;
//   o.repo_dir = "/srv/urlguard/repo";
//   o.private_key_path = "/etc/urlguard/urlguard-ed25519.pem";
//   o.list = "phishing";
//   o.inputs = {"phishtank-csv:feeds/verified_online.csv.gz", "plain:feeds/local.txt"};
//   auto report = urlguard::PublishList(o);
//
// Thread safety: the functions share no state; publications of different lists run side by side on one
// repository (docs/repository-layout.md, "Locks"); a second publication of one list while the first runs is
// refused by the list's lock (kFailedPrecondition).
#ifndef URLGUARD_PUBLISH_H_
#define URLGUARD_PUBLISH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "urlguard/checker.h"
#include "urlguard/status.h"

namespace urlguard {

class Env;

// A feed line or record that was skipped ("file:line: message" when printed).
struct FeedLineProblem {
  std::string file;
  uint64_t line = 0;     // 1-based
  std::string message;   // untrusted bytes escaped (\xNN) and shortened
};

// Checks one feed argument, "[FORMAT:]PATH" or "csv:COLUMN:PATH" (formats: plain, hosts, abp, phishtank-csv,
// phishtank-json, urlhaus-csv, openphish, drop-json, drop-txt, csv; none = auto-detect). Returns the path.
// kInvalidArgument for an empty argument or path, an unknown format, csv without a column.
Result<std::string> ParseFeedArgument(std::string_view argument);

// Parses a duration "90s", "30m", "24h", "7d" or plain seconds. kInvalidArgument when malformed or not positive.
Result<int64_t> ParseDurationSeconds(std::string_view text);

// Called with the number of entries taken so far, from the calling thread, at most every few thousand entries.
using PublishProgressFn = std::function<void(uint64_t entries)>;

// The phases of a publication, in the order a run goes through them.
enum class PublishPhase {
  kParse,      // reading, parsing and hashing the feeds (PublishProgressFn counts the entries)
  kSortMerge,  // finishing the sorted runs and merging them (with the previous version, for --add/--remove)
  kWrite,      // the state file, snapshot, entry list, compressed snapshot, diffs and full hashes
  kSign,       // signing and writing the manifest, then the list index
};
// "parse", "sort/merge", "write", "sign".
const char* PublishPhaseName(PublishPhase phase);
// Called from the calling thread when a phase or a step within it begins (done 0) and, in long steps, as it goes:
// `step` names what is being done ("merging", "snapshot", "diff from version 3"), `done` counts records so far.
using PublishPhaseFn = std::function<void(PublishPhase phase, std::string_view step, uint64_t done)>;

// ---- keys --------------------------------------------------------------------------------------------------

struct KeyPairFiles {
  std::string private_key_path;  // DIR/urlguard-ed25519.pem (PKCS#8, mode 0600)
  std::string public_key_path;   // DIR/urlguard-ed25519.pub.pem (give it to clients)
  std::string key_id;            // the public key's short id
};
// Generates an Ed25519 key pair into `dir` (created when missing). Refuses to overwrite an existing key
// (kFailedPrecondition); kIoError when the files cannot be written.
Result<KeyPairFiles> GenerateKeyPair(const std::string& dir, Env* env = nullptr);

struct RotationStatementFile {
  std::string path;
  std::string old_key_id, new_key_id;
};
// What a rotation statement says beyond "trust NEW" (docs/manifest-format.md §7.1).
struct RotationOptions {
  int64_t not_before_unix = 0;  // NEW is trusted from then on; 0: now
  // Clients stop accepting manifests signed by the old key alone this long after not_before (0 .. 30 days;
  // 0: at once).
  int64_t grace_seconds = 0;
  // (list, version): clients lower the list's high-water mark to version (recovery from a stolen key's
  // fast-forward). At most 16, lists unique.
  std::vector<std::pair<std::string, uint64_t>> high_water_resets;
};
// Signs, with the private key at `old_private_key_path`, a statement that clients trusting it may trust the
// public key at `new_public_key_path` from `not_before_unix` (0: now), and writes it atomically to `out_path`.
// Format v1 when `options` has no grace and no resets, else v2. kInvalidArgument for a key file that is not the
// right kind of Ed25519 PEM or options out of range; read/write errors.
Result<RotationStatementFile> WriteRotationStatement(const std::string& old_private_key_path,
                                                     const std::string& new_public_key_path,
                                                     const std::string& out_path, int64_t not_before_unix = 0,
                                                     Env* env = nullptr);
Result<RotationStatementFile> WriteRotationStatement(const std::string& old_private_key_path,
                                                     const std::string& new_public_key_path,
                                                     const std::string& out_path, const RotationOptions& options,
                                                     Env* env = nullptr);

// ---- one-off snapshot builds -------------------------------------------------------------------------------

struct SnapshotBuildOptions {
  std::string list;                 // required: [a-z0-9_-]
  std::vector<std::string> inputs;  // required: feed arguments (ParseFeedArgument)
  std::string out_path;             // required: the snapshot file to write (atomically)
  uint64_t version = 1;
  int64_t created_unix = 0;         // 0: now
  double fp_rate = 0.001;           // per-URL false-positive target
  bool blocked_bloom = false;       // build blocked Bloom filters instead of fingerprint arrays
  PublishProgressFn progress;       // optional
  Env* env = nullptr;
};

struct SnapshotBuildReport {
  uint64_t lines = 0;                   // feed lines read
  uint64_t rejected = 0;                // lines or entries skipped
  std::vector<FeedLineProblem> problems;  // the first ones
  uint64_t entries[3] = {0, 0, 0};      // unique keys, by Layer
  uint64_t duplicates[3] = {0, 0, 0};   // by Layer
  double expected_fp_per_probe[3] = {0, 0, 0};
  uint64_t bytes = 0;                   // snapshot file size
  const char* filter = "";              // "fingerprint-array" or "blocked-bloom"
};

// Reads the feeds, builds one unsigned snapshot file (no repository, no manifest). Bad lines are reported and
// skipped, not failures. Failures: kInvalidArgument for bad options or feed arguments, the feeds' read errors
// (naming the file), kResourceExhausted over the feed caps, write errors.
Result<SnapshotBuildReport> BuildSnapshotFile(const SnapshotBuildOptions& options);

// ---- signed publication --------------------------------------------------------------------------------------

// Why PublishList or IngestIntoState refused on purpose (docs/feeds.md, "The publication guard"): nothing was
// committed, and the Status (kFailedPrecondition) names the input or the counts.
enum class PublishRefusal {
  kNone,
  kInputRefused,  // an input is empty, looks like an HTML page, has no entry or is mostly rejected lines
  kLargeRemoval,  // the full version would remove more than max_removal of the previous version's entries
};
// The guard's defaults: the feeds file's max_rejected_fraction and max_removal defaults (docs/feeds-file.md §3).
inline constexpr double kDefaultInputMaxRejectedFraction = 0.25;
inline constexpr double kDefaultPublishMaxRemoval = 0.1;
// The smallest ListPublishOptions::min_wait_seconds: clients poll no more often than once a minute.
inline constexpr uint32_t kMinPublishMinWaitSeconds = 60;

struct ListPublishOptions {
  std::string repo_dir;              // required; created when missing
  std::string private_key_path;      // required: the signing key PEM (GenerateKeyPair)
  std::string list;                  // required: [a-z0-9_-]
  std::vector<std::string> inputs;   // feed arguments: the list's whole content (a full version)
  // Or an incremental version: the previous version minus the entries of `remove` plus those of `add`
  // (docs/feeds.md, "Incremental versions"); `inputs` must then be empty.
  std::vector<std::string> add;
  std::vector<std::string> remove;
  int64_t expires_in_seconds = 24 * 3600;  // how long clients may serve this version
  // The manifest's min_wait_seconds (60 .. 86400): how often clients poll. Under 1800 it is the cadence clients
  // poll at (docs/sync-protocol.md §2): set it to the interval versions are published at.
  uint32_t min_wait_seconds = 1800;
  uint32_t keep = 5;                 // diffs from up to this many previous versions
  bool emergency = false;            // clients treat local hits as malicious without verifying
  double fp_rate = 0.001;
  std::string default_threat;        // for entries whose feed names none; empty = the list name
  // Sort buffers the run may hold; above it sorted runs spill to REPO/private/tmp/LIST/ (docs/repository-layout.md).
  size_t memory_budget = size_t{1} << 30;
  int threads = 2;                   // parse, canonicalize and hash on this many threads
  PublishProgressFn progress;        // optional
  PublishPhaseFn phase_progress;     // optional: every phase of the run, for a progress display
  Env* env = nullptr;
  // Where the list's state lives. Empty (the default): files in repo_dir and `inputs` are the list's whole
  // content. "postgresql://...": a PostgreSQL database (docs/postgres-schema.md) holds the entries (ingested
  // with IngestIntoState), the committed versions and the seen counts; `inputs` must be empty, the version is
  // committed there before its manifest files are written, and several publishers may share the database
  // (docs/runbook-publishers.md).
  std::string state;
  // The publication guard (docs/feeds.md, "The publication guard"). Every input (--input, --add, --remove)
  // that is empty, looks like an HTML page, has no entry, or whose rejected lines are more than
  // kDefaultInputMaxRejectedFraction of its lines is refused, unless `accept` names it (its path, or the argument
  // as given).
  std::vector<std::string> accept;
  // A full version (inputs, or a PostgreSQL state) that removes more than this share of the previous version's
  // entries, and more than 100 of them, is refused unless allow_large_removal. Incremental versions are exempt:
  // their --remove names what leaves.
  double max_removal = kDefaultPublishMaxRemoval;  // 0 .. 1
  bool allow_large_removal = false;
  // Manifest format (docs/versions.md): 1, a snapshot and version 1 diffs every version (what every client
  // release reads); 2, a snapshot only at checkpoints and range diffs in between, so an incremental version costs
  // what changed (clients from issue 17 on). A full version with 2 is a checkpoint; a list published in format 2
  // keeps it for incremental versions. File state only.
  uint32_t manifest_format = 1;
  // Format 2: a checkpoint is made after the commit of the version whose touched fingerprints since the last one
  // exceed this (the publisher loop makes it on its maintenance thread instead).
  uint64_t checkpoint_changes = uint64_t{1} << 20;
  // Format 2: false leaves a due checkpoint to CheckpointListIfDue (`urlguard-publish compact --if-due`) run beside
  // publishing, as the loop's maintenance thread does: a checkpoint costs O(N) (about 2 min of CPU at 100 M
  // entries), which a timer that publishes every minute cannot wait for.
  bool checkpoint_inline = true;
};

struct ListPublishReport {
  uint64_t version = 0;
  bool first_version = true;
  uint64_t entries[3] = {0, 0, 0};   // by Layer
  uint64_t added[3] = {0, 0, 0};     // vs the previous version
  uint64_t removed[3] = {0, 0, 0};
  bool universe_changed = false;     // the list outgrew its filter size: clients download the snapshot once
  uint64_t input_lines = 0, input_entries = 0, rejected = 0;
  uint64_t new_keys = 0, seen_before = 0;
  // Manifest format 2 incremental versions: the seen filter learns the additions at the next checkpoint, so this
  // version counts neither new_keys nor seen_before (both 0).
  bool seen_at_checkpoint = false;
  std::vector<FeedLineProblem> problems;
  uint64_t snapshot_bytes = 0, snapshot_wire_bytes = 0;
  struct Diff {
    uint64_t from_version = 0, wire_bytes = 0, changed_entries = 0;
  };
  std::vector<Diff> diffs;
  std::string manifest_path;
  // Manifest format 2 (docs/versions.md): the checkpoint the manifest names, and whether this run made a new one:
  // after its commit (the next version names it), or, when `checkpoint` is the version itself, before it (no range
  // diff from the previous checkpoint could carry the version: docs/versions.md §5b). 0 / false for format 1.
  uint64_t checkpoint = 0;
  bool checkpointed = false;
  // A checkpoint is due and was left to be made beside publishing (checkpoint_inline false, or the loop).
  bool checkpoint_due = false;
  // Steps after the commit that failed: the version is committed all the same (clients may already hold it) and
  // the next publication repeats them. E.g. the list index could not be rewritten, or (with a PostgreSQL state)
  // the manifest files after the database's commit.
  std::vector<std::string> warnings;
};

// Publishes the next version of a list into the repository: snapshot, diffs, signed manifest, made visible
// atomically. Returns a report exactly when the version was committed (without `state`: manifest.json renamed
// into place; with `state`: the database's commit), with `warnings` for steps after the commit that failed, and
// a Status exactly when nothing was committed. Failures: kInvalidArgument (options, feed arguments, the key),
// kFailedPrecondition when another publication of the list holds its lock, the feeds' read errors,
// kResourceExhausted over caps, write errors. One exception, with `state`: when the connection breaks during the
// database's COMMIT itself (kUnavailable naming "committing LIST version V"), PostgreSQL alone knows; the next
// publication of the list reads the answer and writes the manifest files if V was committed.
// The guard (ListPublishOptions::accept, max_removal) refuses with kFailedPrecondition, nothing committed, and
// sets *refusal (when given) to why; *refusal is kNone after any other outcome.
Result<ListPublishReport> PublishList(const ListPublishOptions& options, PublishRefusal* refusal = nullptr);

// How often each entry (URL, domain or IP) was ingested by earlier publications into `repo_dir` (about: a
// counting filter): -1 for an invalid entry, 0 for never. kNotFound when the repository has no history.
Result<std::vector<int64_t>> CountSeenEntries(const std::string& repo_dir, const std::vector<std::string>& entries,
                                              Env* env = nullptr);

// ---- shared state (PostgreSQL) ------------------------------------------------------------------------------

struct StateIngestOptions {
  std::string state;                 // required: "postgresql://..." (libpq connection URI)
  std::string list;                  // required: [a-z0-9_-]
  std::vector<std::string> inputs;   // required: feed arguments; each file is one feed (its path names it)
  std::string default_threat;        // for entries whose feed names none; empty = the list name
  // true: each input is its feed's whole current content, so entries the feed no longer lists are removed
  // (unless another feed still lists them). false: only add.
  bool replace = true;
  int64_t now_unix = 0;              // 0: now
  Env* env = nullptr;
  // The publication guard's input check (docs/feeds.md, "The publication guard"), on every input before any
  // is ingested: as ListPublishOptions::accept.
  std::vector<std::string> accept;
};

struct StateIngestReport {
  uint64_t input_lines = 0, input_entries = 0, rejected = 0;
  std::vector<FeedLineProblem> problems;  // the first ones
  uint64_t entries = 0;      // unique keys ingested
  uint64_t new_entries = 0;  // never seen in the list before
  uint64_t seen_before = 0;
  uint64_t removed = 0;      // no longer listed by any feed
};

// Reads the feeds (bad lines reported and skipped) and ingests them into the PostgreSQL state: one transaction
// per feed, batched COPY + merge. The next PublishList with the same `state` publishes the result. Failures:
// kInvalidArgument (options, feed arguments, a state that is not postgresql://), kUnavailable (PostgreSQL down:
// nothing of the failed feed is kept), the feeds' read errors, kInternal (SQL). An input the guard refuses:
// kFailedPrecondition naming it, nothing ingested, *refusal (when given) kInputRefused.
Result<StateIngestReport> IngestIntoState(const StateIngestOptions& options, PublishRefusal* refusal = nullptr);

// How many ingest runs into the PostgreSQL state at `state` contained each entry (summed over lists; shared by
// every ingest worker): -1 for an invalid entry, 0 for never. kUnavailable when PostgreSQL is down.
Result<std::vector<int64_t>> CountSeenEntriesInState(const std::string& state, const std::vector<std::string>& entries);

// ---- DNS export -------------------------------------------------------------------------------------------

struct RpzExportOptions {
  std::string repo_dir;              // required: a repository PublishList wrote
  std::string list;                  // required
  std::string out_path;              // empty: REPO/public/v1/lists/LIST/LIST.rpz (served with the list)
  // "nxdomain", "nodata" (the name exists, no records), "null" (A 0.0.0.0 and AAAA ::), or "cname:HOST"
  // (resolvers answer with HOST's records).
  std::string action = "nxdomain";
  std::string origin;                // the zone's name; empty: "LIST.rpz.urlguard."
  // Allowlist files (one domain, URL, address or range per line, '#' comments; the syntax of
  // ClientOptions::allowlist): their names and ranges become rpz-passthru rules ahead of the blocks.
  std::vector<std::string> allowlist_paths;
  Env* env = nullptr;
};

struct RpzExportReport {
  std::string path;
  uint64_t version = 0;                 // the published version exported (the zone's SOA serial)
  uint64_t bytes = 0;
  uint64_t domains = 0;                 // each: the name and every name under it
  uint64_t ip_ranges = 0;               // rpz-ip triggers
  uint64_t url_entries_left_out = 0;    // DNS cannot match a URL's path
  uint64_t unexpressible_left_out = 0;  // names that are no DNS host name, /0 ranges
  uint64_t passthru = 0;                // allowlisted domains and ranges (rpz-passthru rules)
  uint64_t allowed_left_out = 0;        // listed entries an allowlisted name or range covers
  uint64_t allowlist_url_entries_left_out = 0;  // allowlisted URLs with a path: not expressible in DNS
};

// Writes the domain and ip layers of the list's published version as a DNS Response Policy Zone, atomically
// (docs/rpz.md). Failures: kInvalidArgument (list name, action, origin, an allowlist line that is no entry, naming
// file and line), kResourceExhausted (an allowlist over its caps), kNotFound (nothing published, or a
// version published before entry lists were kept: publish once more), kCorruption, read and write errors.
Result<RpzExportReport> ExportRpz(const RpzExportOptions& options);

// ---- the publisher's private state -------------------------------------------------------------------------

struct ListCompactReport {
  uint64_t version = 0;     // the list's committed version (its public manifest's)
  uint64_t base_version = 0;  // the base the state was folded from
  bool compacted = false;   // false: the base already was `version`
  // Manifest format 2, a checkpoint made: what it offers clients behind it (docs/versions.md §5): `catchup_diffs`
  // range diffs to it, the farthest from version `catchup_from` (0: none), `large_diffs` of them over the caps
  // every reader takes (docs/manifest-format.md §8.5); clients further behind take its snapshot (`snapshot_bytes`).
  uint64_t catchup_from = 0;
  uint32_t catchup_diffs = 0;
  uint32_t large_diffs = 0;
  uint64_t snapshot_bytes = 0;
};

// Folds list `list`'s private state (a base and the deltas of the incremental versions after it:
// docs/repository-layout.md, "State delta") into a new base at the list's committed version, then removes the
// bases it supersedes and the deltas older than `keep_deltas` versions. Publish does this by itself when the
// deltas have grown; this is `urlguard-publish compact`. Holds the list's publish lock throughout (a publisher of
// that list waits meanwhile: kFailedPrecondition "another urlguard-publish is publishing" from either side).
// Crash-safe: killed at any point, the state still opens (docs/repository-layout.md). Failures: kNotFound when the
// list has no manifest, kFailedPrecondition for a missing delta ("run a full publish") or a held lock, kCorruption
// for a damaged state file, read and write errors. Manifest format 2: makes the committed version a checkpoint
// instead (docs/versions.md §5), without the lock, beside publishing (the newest committed version when versions
// committed meanwhile overtook it: `version`); `compacted` false when it already was the newest checkpoint.
// `env`: nullptr = the process default.
Result<ListCompactReport> CompactList(const std::string& repo_dir, const std::string& list,
                                      uint32_t keep_deltas = 1440, Env* env = nullptr);

// Manifest format 2 (docs/versions.md §5): makes the list's committed version a checkpoint when one is due, by
// the rule the publisher loop's maintenance thread applies after each commit (more than `checkpoint_changes`
// fingerprints touched since the newest checkpoint, or more than an eighth of the list's), with `fp_rate` as the
// versions were published with. `urlguard-publish compact --if-due`: for versions published by
// `publish --no-checkpoint` (ListPublishOptions::checkpoint_inline false) from a timer, run beside them, one at a
// time. Takes no lock and reads immutable files only, but for the version's epoch map, read first: versions go on
// being published meanwhile, and the next one adopts the checkpoint; when versions committed since this read the
// manifest have removed that map, it considers the newest committed version instead (`version` in the report).
// `compacted` tells whether it made one. kFailedPrecondition for a format 1 list (use
// CompactList); otherwise the failures of CompactList.
Result<ListCompactReport> CheckpointListIfDue(const std::string& repo_dir, const std::string& list,
                                              uint64_t checkpoint_changes = uint64_t{1} << 20,
                                              double fp_rate = 0.001, Env* env = nullptr);

// ---- the list index --------------------------------------------------------------------------------------------

// Rewrites REPO/public/v1/lists/index.json and index.sig (docs/list-index.md): the signed index of every list the
// repository serves, from their current manifests, signed with the private key at `private_key_path` (the key
// that signs the manifests). PublishList does this after every publication; call this for a repository published
// before the index existed, or after removing a list's directory. Returns the number of lists indexed. Failures:
// kFailedPrecondition when another writer of the index holds its lock
// (REPO/private/index.lock) for more than 60 s, kInvalidArgument for a key file that is no
// Ed25519 private key, kCorruption for a manifest that does not parse, read and write errors. `env`: nullptr =
// the process default.
Result<size_t> RewriteListIndex(const std::string& repo_dir, const std::string& private_key_path,
                                Env* env = nullptr);

// ---- feeds an operator leaves running (urlguard-publish update) ----------------------------------------------

struct FeedUpdateOptions {
  std::string feeds_file;            // required: docs/feeds-file.md
  std::string repo_dir;              // required; feed state lives in REPO/private/feeds/ (docs/repository-layout.md)
  std::string private_key_path;      // required: signs the lists' new versions
  std::string state;                 // empty: files in repo_dir; "postgresql://...": as ListPublishOptions::state
  // Feeds whose download this run takes although it fails the checks (shrank, mostly rejected, looks like HTML,
  // empty). A download that did not arrive cannot be accepted. Each must name a feed of the file.
  std::vector<std::string> accept;
  bool allow_large_removal = false;  // a version may remove more than its list's max_removal share
  std::string proxy;                 // empty: the http_proxy / https_proxy / no_proxy variables
  std::string metrics_textfile;      // when set: Prometheus text written there atomically (node_exporter textfile)
  int64_t now_unix = 0;              // 0: the Env's clock (tests move it to pass a grace period)
  Env* env = nullptr;
};

enum class FeedOutcome {
  kUpdated,      // downloaded, checked, now the feed's good copy
  kNotModified,  // 304, or a local file with the same bytes: the good copy stays
  kAccepted,     // failed a check but taken on purpose (FeedUpdateOptions::accept)
  kQuarantined,  // failed or failed a check: the previous good copy keeps counting
};
// "updated", "not-modified", "accepted", "quarantined".
const char* FeedOutcomeName(FeedOutcome outcome);

// One feed after the run (also what the metrics say about it).
struct FeedHealthReport {
  std::string feed, list;
  FeedOutcome outcome = FeedOutcome::kUpdated;
  std::string reason;                // why it was quarantined (or accepted despite); empty otherwise
  std::string quarantine_path;       // where the quarantined bytes are; empty when none arrived
  int64_t last_success_unix = 0;     // 0: never
  uint64_t entries = 0;              // in the good copy that counts
  uint64_t rejected = 0;             // rejected lines of this run's download
  uint64_t bytes = 0;                // bytes of this run's download
  uint64_t previous_entries = 0;     // the good copy's entries before this run
  uint64_t consecutive_failures = 0;
  bool quarantined = false;
};

struct ListUpdateReport {
  std::string list;
  bool published = false;            // false: no feed of the list has a good copy yet
  uint64_t version = 0;
  uint64_t entries = 0;              // entries (as the feeds write them) in the new version
  uint64_t in_grace = 0;             // of which missing from every feed, kept until their grace ends
  uint64_t removed = 0;              // left the list in this version (their grace ended)
  uint64_t removals_held = 0;        // would have left, but more than max_removal of the list: kept
  uint64_t previous_entries = 0;
};

struct FeedUpdateReport {
  std::vector<FeedHealthReport> feeds;  // in feeds-file order
  std::vector<ListUpdateReport> lists;
  bool any_quarantined = false;
  bool removals_held = false;
};

// Fetches every feed of the feeds file (conditional GET, proxy, timeouts, size cap, gzip), checks each download
// before it counts (docs/feeds-file.md §4: failed, empty, mostly rejected, HTML, shrank more than max_shrink: the
// download is quarantined and the feed's previous good copy keeps counting), keeps each feed's good copy and
// metadata in REPO/private/feeds/, and publishes a new version of every list with a good copy: the union of its
// feeds' good copies plus entries still in their grace period (an entry leaves only after missing from every
// feed for the list's grace), never removing more than the list's max_removal share unless allowed. Quarantines
// and held removals are in the report, not failures. Failures: kInvalidArgument (options, the feeds file, an
// --accept naming no feed), kFailedPrecondition (another update holds REPO/private/feeds/update.lock), read and
// write errors, and PublishList's. A list that fails to publish stops the run (earlier lists stay published).
Result<FeedUpdateReport> UpdateFeeds(const FeedUpdateOptions& options);

// The per-feed health as Prometheus text (urlguard_feed_* gauges, docs/feeds-file.md §7).
std::string FeedHealthMetrics(const FeedUpdateReport& report, int64_t now_unix);


// ---- a publishing cadence (urlguard-publish loop) ---------------------------------------------------------------

// One version the loop committed (or re-published), as PublishLoopOptions::on_version is told.
struct PublishLoopVersion {
  ListPublishReport report;
  uint64_t files = 0;             // change files (*.add, *.remove) the version took
  bool recovered = false;         // a batch an earlier run had claimed and not committed (it crashed or failed)
  bool refresh = false;           // no change: re-published so that the manifest does not expire
  // From the oldest taken file's modification time (whole seconds: the file system's clock) to the commit; 0
  // for a refresh.
  double ingest_to_commit_seconds = 0;
  double publish_seconds = 0;     // the publication itself (the guard's refusals and retries included)
};

// A change file the publication guard refused (docs/feeds.md, "The publication guard"), or that cannot be read as
// a feed (a broken gzip stream, over the feed caps): moved to SPOOL/rejected/NAME with the reason in
// SPOOL/rejected/NAME.why; the rest of its batch still publishes.
struct PublishLoopRejection {
  std::string file;  // its path in SPOOL/rejected/
  std::string why;
};

struct PublishLoopOptions {
  // What every version is published with: repo_dir, private_key_path, list, expires_in_seconds, keep, emergency,
  // fp_rate, default_threat, memory_budget, threads, accept (names of change files, or their paths, to take
  // although the guard refuses them), env. `inputs`, `add`, `remove` and `state` must be empty (the loop makes
  // incremental versions of a file-state list, which must have a first version already).
  ListPublishOptions publish;
  // The spool (docs/runbook-publishers.md, "A minute cadence"): ingestors rename complete change files into
  // SPOOL/incoming/ ("NAME.add", "NAME.remove": feed text, any format docs/feeds.md auto-detects; other names,
  // such as a temporary "NAME.add.tmp" or ".NAME.add", are left alone). The loop keeps SPOOL/claimed/,
  // SPOOL/done/ (the newest kPublishLoopDoneKept files), SPOOL/rejected/ and SPOOL/loop.lock.
  std::string spool_dir;
  // A version at most this often, and only when files arrived; also the manifests' min_wait_seconds.
  int64_t every_seconds = 60;
  // The smallest every_seconds accepted (kInvalidArgument below it). Tests lower it; clients wait at least a
  // minute between polls anyway unless told less.
  int64_t min_every_seconds = 60;
  // Without files, a version with no change is published once the current one is this old, so that clients
  // never see the list expire. 0: half of publish.expires_in_seconds.
  int64_t refresh_after_seconds = 0;
  // Called after each commit on a thread of its own (maintenance such as compaction), so it never delays the
  // next version; a commit while it still runs makes it run once more afterwards. Joined before RunPublishLoop
  // returns.
  std::function<void()> after_commit;
  // Told, on the loop's thread, each committed version, each rejected file, each cycle that failed (its files
  // stay claimed and are published with the next cycle's; the loop goes on).
  std::function<void(const PublishLoopVersion&)> on_version;
  std::function<void(const PublishLoopRejection&)> on_rejected;
  std::function<void(const Status&)> on_error;
  // Told once, before the first cycle, the wall-clock second it starts at and how long the loop waits for it.
  std::function<void(int64_t first_cycle_unix, int64_t wait_seconds)> on_start;
  // Waits up to `milliseconds` between cycles; returns true when the loop should stop (the version in progress
  // is always finished first). Default: sleeps, never stops. urlguard-publish loop waits for SIGTERM or SIGINT.
  std::function<bool(int64_t milliseconds)> wait;
  uint64_t max_cycles = 0;  // stop after this many cycles (0: only when `wait` says so)
};

// SPOOL/done/ keeps this many files (the newest by modification time); older ones are deleted.
inline constexpr size_t kPublishLoopDoneKept = 1000;

struct PublishLoopSummary {
  uint64_t cycles = 0;
  uint64_t versions = 0;        // committed, refreshes included
  uint64_t files = 0;           // change files published
  uint64_t rejected_files = 0;
  uint64_t failed_cycles = 0;
  uint64_t skipped_slots = 0;   // cadence slots passed over because a cycle ran past them
};

// Publishes a version of the list every `every_seconds` when change files arrived (one incremental version with
// all of them: previous - *.remove + *.add; within one version an entry both added and removed stays, as for
// `publish --add --remove`), until `wait` or `max_cycles` says stop. Crash-safe: a batch is claimed by first
// writing its target version (committed + 1) to SPOOL/claimed/batch, then renaming its files into
// SPOOL/claimed/; at the start of every cycle a claimed batch whose target version is committed moves to
// SPOOL/done/, one that is not is published again (with any new files). So kill -9 at any point neither loses
// nor doubles a change, as long as nothing else publishes the list while the loop owns it (the list's
// publication lock refuses that while the loop runs). Failures before the first cycle: kInvalidArgument
// (options), kFailedPrecondition (another loop holds SPOOL/loop.lock; the list has no version yet: publish a
// first one with --input), the key's and the spool's errors. Later failures go to on_error and the loop goes
// on. The cadence: cycles start on the committed version's created_unix + k*every_seconds (the first one up to
// every_seconds after the loop starts) and each version is stamped with its cycle's second, so versions stay on
// one cadence across restarts; a cycle that runs past the next start skips to the one after (skipped_slots).
// Not thread-safe for one spool (the lock refuses a second loop).
Result<PublishLoopSummary> RunPublishLoop(const PublishLoopOptions& options);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_H_
