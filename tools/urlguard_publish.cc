// Copyright urlguard authors.
//
// `urlguard-publish`: builds signed threat lists from feeds (server side).
//
//   urlguard-publish build   --list NAME --input [FORMAT:]FILE... --out SNAPSHOT [--fp-rate P] [--filter KIND]
//   urlguard-publish keygen  --out DIR
//   urlguard-publish publish --repo DIR --key PRIVATE.pem --list NAME --input [FORMAT:]FILE...
//                            [--expires-in 24h] [--keep K] [--emergency on|off] [--fp-rate P] [--threat T]
//   urlguard-publish seen    --repo DIR ENTRY...
//   urlguard-publish rotate  --key OLD.pem --new-key NEW.pub.pem --out STATEMENT [--not-before UNIX]
//
// Input formats (docs/feeds.md): plain, hosts, abp, phishtank-csv, phishtank-json, urlhaus-csv, openphish,
// drop-json, drop-txt, csv:COLUMN; auto-detected without a prefix; gzip is read as such.
// Exit status: 0 done (bad lines are reported and skipped), 1 failed, 4 bad usage.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "core/entry.h"
#include "core/snapshot.h"
#include "format/key_rotation.h"
#include "platform/env.h"
#include "publish/feeds.h"
#include "publish/keygen.h"
#include "publish/list_builder.h"
#include "publish/publisher.h"
#include "publish/signer.h"
#include "tools/progress.h"

namespace {

using urlguard::Status;

constexpr size_t kMaxProblemsShown = 20;

int Fail(const Status& s) {
  std::cerr << "urlguard-publish: " << s.ToString() << '\n';
  return 1;
}

urlguard::Result<std::vector<urlguard::FeedSpec>> ParseInputs(const std::vector<std::string>& inputs) {
  std::vector<urlguard::FeedSpec> specs;
  for (const std::string& in : inputs) {
    auto spec = urlguard::ParseFeedSpec(in);
    if (!spec.ok()) return spec.status().WithContext(in);
    specs.push_back(*spec);
  }
  return specs;
}

void ShowProblems(const std::vector<urlguard::FeedProblem>& problems, uint64_t total) {
  for (size_t i = 0; i < problems.size() && i < kMaxProblemsShown; ++i) {
    std::cerr << problems[i].file << ':' << problems[i].line << ": skipped: " << problems[i].message << '\n';
  }
  if (total > kMaxProblemsShown) std::cerr << "(" << total - kMaxProblemsShown << " more bad lines not shown)\n";
}

// Parses "90s", "30m", "24h", "7d" (or plain seconds). -1 when malformed.
int64_t ParseDuration(const std::string& s) {
  if (s.empty() || s.size() > 12) return -1;
  size_t digits = s.find_first_not_of("0123456789");
  if (digits == 0) return -1;
  int64_t n = std::stoll(s.substr(0, digits));
  std::string unit = digits == std::string::npos ? "s" : s.substr(digits);
  if (unit == "s") return n;
  if (unit == "m") return n * 60;
  if (unit == "h") return n * 3600;
  if (unit == "d") return n * 86400;
  return -1;
}

int RunBuild(const std::string& list, const std::vector<std::string>& inputs, const std::string& out,
             double fp_rate, const std::string& filter, uint64_t version) {
  urlguard::Env* env = urlguard::Env::Default();
  auto specs = ParseInputs(inputs);
  if (!specs.ok()) return Fail(specs.status());
  urlguard::ListBuilder builder;
  urlguard::Progress progress;
  uint64_t lines = 0, rejected = 0;
  std::vector<urlguard::FeedProblem> problems;
  for (const urlguard::FeedSpec& spec : *specs) {
    auto data = urlguard::ReadFeedFile(env, spec.path);
    if (!data.ok()) return Fail(data.status().WithContext(spec.path));
    std::vector<urlguard::FeedEntry> entries;
    urlguard::FeedStats stats;
    size_t before = problems.size();
    Status parsed = urlguard::ParseFeed(spec, *data, &entries, &problems, &stats);
    if (!parsed.ok()) return Fail(parsed.WithContext(spec.path));
    lines += stats.lines;
    rejected += problems.size() - before;
    for (const urlguard::FeedEntry& e : entries) {
      Status s = builder.Add(e.value);
      if (!s.ok()) {
        ++rejected;
        problems.push_back(urlguard::FeedProblem{spec.path, e.line, s.message()});
      }
      progress.Tick(builder.added());
    }
  }
  progress.Done();
  ShowProblems(problems, rejected);

  urlguard::BuildOptions options;
  options.list_name = list;
  options.version = version;
  options.created_unix = static_cast<int64_t>(std::time(nullptr));
  options.fp_rate = fp_rate;
  options.filter = filter == "blocked-bloom" ? urlguard::FilterKind::kBlockedBloom
                                             : urlguard::FilterKind::kFingerprintArray;
  urlguard::LayerBuildStats stats[3];
  auto content = builder.Finish(options, stats);
  if (!content.ok()) return Fail(content.status());
  auto bytes = urlguard::BuildSnapshot(*content);
  if (!bytes.ok()) return Fail(bytes.status());
  Status w = urlguard::WriteFileAtomic(env, out, *bytes);
  if (!w.ok()) return Fail(w);
  uint64_t entries = 0;
  for (const auto& s : stats) entries += s.entries;
  std::printf("built %s: list %s version %llu, %llu entries from %llu lines (%llu rejected) in %.2f s\n",
              out.c_str(), list.c_str(), static_cast<unsigned long long>(version),
              static_cast<unsigned long long>(entries), static_cast<unsigned long long>(lines),
              static_cast<unsigned long long>(rejected), progress.Elapsed());
  for (int i = 0; i < 3; ++i) {
    if (stats[i].entries == 0) continue;
    std::printf("  %-6s %10llu entries  %8llu duplicates  expected false positives per probe %.2g\n",
                urlguard::LayerKindName(static_cast<urlguard::LayerKind>(i)),
                static_cast<unsigned long long>(stats[i].entries),
                static_cast<unsigned long long>(stats[i].duplicates), stats[i].expected_fp_per_probe);
  }
  std::printf("  %zu bytes, %.2f bits per entry%s, filter %s, target false-positive rate per URL %g\n",
              bytes->size(), entries ? bytes->size() * 8.0 / static_cast<double>(entries) : 0.0,
              bytes->size() < 4096 ? " (small list: the fixed header dominates)" : "",
              urlguard::FilterKindName(options.filter), fp_rate);
  return 0;
}

int RunKeygen(const std::string& dir) {
  urlguard::Env* env = urlguard::Env::Default();
  Status mk = env->CreateDirs(dir);
  if (!mk.ok()) return Fail(mk);
  urlguard::PublicKey pub;
  Status s = urlguard::WriteKeyPair(env, dir, &pub);
  if (!s.ok()) return Fail(s);
  std::printf("wrote %s (private, mode 0600) and %s\nkey id %s: give the public key to clients "
              "(urlguard sync --public-key); keep the private key off the web server\n",
              urlguard::JoinPath(dir, urlguard::kPrivateKeyFileName).c_str(),
              urlguard::JoinPath(dir, urlguard::kPublicKeyFileName).c_str(), pub.KeyId().c_str());
  return 0;
}

int RunPublish(const std::string& repo, const std::string& key_path, const std::string& list,
               const std::vector<std::string>& inputs, const std::string& expires_in, uint32_t keep,
               const std::string& emergency, double fp_rate, const std::string& threat) {
  urlguard::Env* env = urlguard::Env::Default();
  auto pem = env->ReadFile(key_path, urlguard::kMaxPemBytes);
  if (!pem.ok()) return Fail(pem.status());
  auto key = urlguard::SigningKey::FromPem(*pem);
  if (!key.ok()) return Fail(key.status().WithContext(key_path));
  auto specs = ParseInputs(inputs);
  if (!specs.ok()) return Fail(specs.status());
  urlguard::PublishOptions o;
  o.repo_dir = repo;
  o.list = list;
  o.inputs = *specs;
  o.expires_in_seconds = ParseDuration(expires_in);
  if (o.expires_in_seconds <= 0) {
    std::cerr << "urlguard-publish: --expires-in takes a duration such as 90m, 24h or 7d\n";
    return 4;
  }
  o.keep = keep;
  o.emergency = emergency == "on";
  o.fp_rate = fp_rate;
  o.default_threat = threat;
  urlguard::Progress progress;
  auto report = urlguard::Publish(env, *key, o, [&](uint64_t n) { progress.Show(n); });
  progress.Done();
  if (!report.ok()) return Fail(report.status());
  const urlguard::PublishReport& r = *report;
  ShowProblems(r.problems, r.rejected);
  std::printf("published %s version %llu%s in %.2f s -> %s\n", list.c_str(),
              static_cast<unsigned long long>(r.version), o.emergency ? " (EMERGENCY policy on)" : "",
              progress.Elapsed(), r.manifest_path.c_str());
  std::printf("  input: %llu lines, %llu entries, %llu rejected; %llu new, %llu seen in earlier runs\n",
              static_cast<unsigned long long>(r.input_lines), static_cast<unsigned long long>(r.input_entries),
              static_cast<unsigned long long>(r.rejected), static_cast<unsigned long long>(r.new_keys),
              static_cast<unsigned long long>(r.seen_before));
  for (int i = 0; i < 3; ++i) {
    std::printf("  %-6s %10llu entries", urlguard::LayerKindName(static_cast<urlguard::LayerKind>(i)),
                static_cast<unsigned long long>(r.entries[i]));
    if (!r.first_version) {
      std::printf("  (+%llu added, -%llu removed)", static_cast<unsigned long long>(r.added[i]),
                  static_cast<unsigned long long>(r.removed[i]));
    }
    std::printf("\n");
  }
  std::printf("  snapshot %llu bytes (%llu on the wire)\n", static_cast<unsigned long long>(r.snapshot_bytes),
              static_cast<unsigned long long>(r.snapshot_wire_bytes));
  for (const auto& d : r.diffs) {
    std::printf("  diff from version %llu: %llu bytes for %llu changed entries (%.2f bytes each)\n",
                static_cast<unsigned long long>(d.from_version), static_cast<unsigned long long>(d.wire_bytes),
                static_cast<unsigned long long>(d.changed_entries),
                d.changed_entries ? static_cast<double>(d.wire_bytes) / static_cast<double>(d.changed_entries) : 0.0);
  }
  if (r.universe_changed) std::printf("  note: the list outgrew its filter size; clients download the full snapshot once\n");
  return 0;
}

int RunRotate(const std::string& old_key_path, const std::string& new_pub_path, const std::string& out,
              int64_t not_before) {
  urlguard::Env* env = urlguard::Env::Default();
  auto old_pem = env->ReadFile(old_key_path, urlguard::kMaxPemBytes);
  if (!old_pem.ok()) return Fail(old_pem.status());
  auto old_key = urlguard::SigningKey::FromPem(*old_pem);
  if (!old_key.ok()) return Fail(old_key.status().WithContext(old_key_path));
  auto new_pem = env->ReadFile(new_pub_path, urlguard::kMaxPemBytes);
  if (!new_pem.ok()) return Fail(new_pem.status());
  auto new_key = urlguard::PublicKeyFromPem(*new_pem);
  if (!new_key.ok()) return Fail(new_key.status().WithContext(new_pub_path));
  auto statement = urlguard::MakeRotationStatement(*old_key, *new_key, not_before ? not_before : std::time(nullptr));
  if (!statement.ok()) return Fail(statement.status());
  Status w = urlguard::WriteFileAtomic(env, out, *statement);
  if (!w.ok()) return Fail(w);
  std::printf("wrote %s: key %s vouches for key %s; clients add it with --key-rotation and keep their configured key\n",
              out.c_str(), old_key->public_key().KeyId().c_str(), new_key->KeyId().c_str());
  return 0;
}

int RunSeen(const std::string& repo, const std::vector<std::string>& entries) {
  auto counts = urlguard::SeenCounts(urlguard::Env::Default(), repo, entries);
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguard-publish: build and publish signed urlguard threat lists"};
  app.require_subcommand(1);
  std::string list, out, filter = "fingerprint-array", repo, key, expires_in = "24h", emergency = "off", threat;
  std::vector<std::string> inputs, entries;
  double fp_rate = 0.001;
  uint64_t version = 1;
  uint32_t keep = 5;
  std::string new_key;
  int64_t not_before = 0;
  auto add_inputs = [&](CLI::App* cmd) {
    cmd->add_option("--input", inputs, "[FORMAT:]FILE (repeatable): plain, hosts, abp, phishtank-csv, phishtank-json, "
                                       "urlhaus-csv, openphish, drop-json, drop-txt, csv:COLUMN; auto-detected")
        ->required()
        ->expected(1)
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  };

  auto* build = app.add_subcommand("build", "build one snapshot file from feeds (no signing, no repository)");
  build->add_option("--list", list, "list name ([a-z0-9_-], e.g. phishing)")->required();
  add_inputs(build);
  build->add_option("--out", out, "snapshot file to write")->required();
  build->add_option("--fp-rate", fp_rate, "target false-positive rate per URL (default 0.001)");
  build->add_option("--filter", filter, "fingerprint-array (default) or blocked-bloom")
      ->check(CLI::IsMember({"fingerprint-array", "blocked-bloom"}));
  build->add_option("--version", version, "list version (default 1)");

  auto* keygen = app.add_subcommand("keygen", "write a new Ed25519 key pair");
  keygen->add_option("--out", out, "directory for urlguard-ed25519.pem and urlguard-ed25519.pub.pem")->required();

  auto* publish = app.add_subcommand("publish", "publish a new signed version of a list into a repository");
  publish->add_option("--repo", repo, "repository directory (created if missing)")->required();
  publish->add_option("--key", key, "private key PEM (from keygen)")->required()->check(CLI::ExistingFile);
  publish->add_option("--list", list, "list name ([a-z0-9_-])")->required();
  add_inputs(publish);
  publish->add_option("--expires-in", expires_in, "how long clients may serve this version (default 24h)");
  publish->add_option("--keep", keep, "diffs from this many previous versions (default 5)");
  publish->add_option("--emergency", emergency, "on: clients treat local hits as malicious without verifying")
      ->check(CLI::IsMember({"on", "off"}));
  publish->add_option("--fp-rate", fp_rate, "target false-positive rate per URL (default 0.001)");
  publish->add_option("--threat", threat, "threat type for entries whose feed names none (default: the list name)");

  auto* seen = app.add_subcommand("seen", "have these entries been ingested before, and how often?");
  seen->add_option("--repo", repo, "repository directory")->required();
  seen->add_option("entries", entries, "URLs, domains or IPs")->required();

  auto* rotate = app.add_subcommand("rotate", "sign a statement that moves clients' trust from this key to a new one");
  rotate->add_option("--key", key, "the currently trusted private key PEM")->required()->check(CLI::ExistingFile);
  rotate->add_option("--new-key", new_key, "the new public key PEM (from keygen)")->required()->check(CLI::ExistingFile);
  rotate->add_option("--out", out, "statement file to write")->required();
  rotate->add_option("--not-before", not_before, "unix time from which the new key is valid (default: now)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 4;
  }
  if (*build) return RunBuild(list, inputs, out, fp_rate, filter, version);
  if (*keygen) return RunKeygen(out);
  if (*publish) return RunPublish(repo, key, list, inputs, expires_in, keep, emergency, fp_rate, threat);
  if (*seen) return RunSeen(repo, entries);
  if (*rotate) return RunRotate(key, new_key, out, not_before);
  return 4;
}
