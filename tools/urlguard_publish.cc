// Copyright urlguard authors.
//
// `urlguard-publish`: builds signed threat lists from feeds (server side).
//
//   urlguard-publish build --list NAME --input FILE [--input FILE...] --out SNAPSHOT [--fp-rate P]
//                          [--filter fingerprint-array|blocked-bloom] [--version N]
//
// Exit status: 0 built (bad lines are reported and skipped), 1 nothing could be built, 4 bad usage.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "platform/env.h"
#include "publish/list_builder.h"

namespace {

using urlguard::Status;

constexpr size_t kMaxInputFileBytes = size_t{4} << 30;  // one input file
constexpr size_t kMaxReportedProblems = 20;             // per file, in full; the rest are counted

// Shows entries per second on a terminal; silent when stderr is not one.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
  void Tick(uint64_t done) {
    if (!tty_ || (done & 0xffff) != 0) return;
    double s = Elapsed();
    std::fprintf(stderr, "\r  %llu entries, %.0f entries/s, %.1f s elapsed   ", static_cast<unsigned long long>(done),
                 done / (s > 0 ? s : 1), s);
  }
  void Done() {
    if (tty_) std::fprintf(stderr, "\r%70s\r", "");
  }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

int RunBuild(const std::string& list, const std::vector<std::string>& inputs, const std::string& out,
             double fp_rate, const std::string& filter, uint64_t version) {
  urlguard::Env* env = urlguard::Env::Default();
  urlguard::ListBuilder builder;
  Progress progress;
  uint64_t lines = 0, rejected = 0;
  for (const std::string& path : inputs) {
    auto data = env->ReadFile(path, kMaxInputFileBytes);
    if (!data.ok()) {
      std::cerr << "urlguard-publish: " << data.status().ToString() << '\n';
      return 1;
    }
    std::string_view rest = *data;
    uint64_t line_no = 0;
    size_t reported = 0;
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      ++line_no;
      ++lines;
      size_t hash = line.find('#');
      if (hash != std::string_view::npos) line = line.substr(0, hash);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      if (line.empty()) continue;
      Status s = builder.Add(line);
      if (!s.ok()) {
        ++rejected;
        if (reported++ < kMaxReportedProblems) {
          std::cerr << path << ':' << line_no << ": skipped: " << s.message() << '\n';
        }
      }
      progress.Tick(builder.added());
    }
    if (reported > kMaxReportedProblems) {
      std::cerr << path << ": " << reported - kMaxReportedProblems << " more bad lines not shown\n";
    }
  }
  progress.Done();

  urlguard::BuildOptions options;
  options.list_name = list;
  options.version = version;
  options.created_unix = static_cast<int64_t>(std::time(nullptr));
  options.fp_rate = fp_rate;
  options.filter = filter == "blocked-bloom" ? urlguard::FilterKind::kBlockedBloom
                                             : urlguard::FilterKind::kFingerprintArray;
  urlguard::LayerBuildStats stats[3];
  auto content = builder.Finish(options, stats);
  if (!content.ok()) {
    std::cerr << "urlguard-publish: " << content.status().ToString() << '\n';
    return 1;
  }
  auto bytes = urlguard::BuildSnapshot(*content);
  if (!bytes.ok()) {
    std::cerr << "urlguard-publish: " << bytes.status().ToString() << '\n';
    return 1;
  }
  Status w = urlguard::WriteFileAtomic(env, out, *bytes);
  if (!w.ok()) {
    std::cerr << "urlguard-publish: " << w.ToString() << '\n';
    return 1;
  }
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguard-publish: build urlguard threat lists"};
  app.require_subcommand(1);
  std::string list, out, filter = "fingerprint-array";
  std::vector<std::string> inputs;
  double fp_rate = 0.001;
  uint64_t version = 1;

  auto* build = app.add_subcommand("build", "build one snapshot from entry files (URL, domain, IP or CIDR per line)");
  build->add_option("--list", list, "list name ([a-z0-9_-], e.g. phishing)")->required();
  build->add_option("--input", inputs, "entry file (repeatable); '#' starts a comment")
      ->required()
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::ExistingFile);
  build->add_option("--out", out, "snapshot file to write")->required();
  build->add_option("--fp-rate", fp_rate, "target false-positive rate per URL (default 0.001)");
  build->add_option("--filter", filter, "fingerprint-array (default) or blocked-bloom")
      ->check(CLI::IsMember({"fingerprint-array", "blocked-bloom"}));
  build->add_option("--version", version, "list version (default 1)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 4;
  }
  if (*build) return RunBuild(list, inputs, out, fp_rate, filter, version);
  return 4;
}
