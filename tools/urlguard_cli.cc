// Copyright urlguard authors.
//
// `urlguard`: offline lookups and text scanning from the command line.
//
//   urlguard canon [--json] [--] URL... | -
//   urlguard check [--json] --snapshot FILE [--snapshot FILE...] URL... | -
//   urlguard scan  [--json] --snapshot FILE ... FILE | -
//   urlguard plan  --entries N --fp-rate P
//
// Exit status is a bitmask: 0 all clean, 1 at least one hit, 2 at least one invalid input or error, 4 bad usage.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/blocked_bloom.h"
#include "core/fingerprint_set.h"
#include "core/sha256.h"
#include "core/url_canon.h"
#include "core/url_extract.h"
#include "publish/list_builder.h"
#include "urlguard/checker.h"

namespace {

using urlguard::Verdict;
using urlguard::VerdictKind;
using Json = nlohmann::json;

constexpr int kExitHit = 1;
constexpr int kExitInvalid = 2;
constexpr int kExitUsage = 4;
// A line read from stdin or a file longer than this is treated as invalid input (and not kept in memory).
constexpr size_t kMaxInputLineBytes = 1 << 20;

// Prints JSON with invalid UTF-8 replaced by U+FFFD, so the output is always valid JSON.
void PrintJson(const Json& j) {
  std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
}

// Calls fn(line) for each input: the positional arguments, or lines of stdin when the only one is "-".
template <typename Fn>
void ForEachInput(const std::vector<std::string>& args, Fn&& fn) {
  if (args.size() == 1 && args[0] == "-") {
    std::string line;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.size() > kMaxInputLineBytes) line.resize(kMaxInputLineBytes);
      fn(line);
    }
    return;
  }
  for (const std::string& a : args) fn(a);
}

int RunCanon(bool json, const std::vector<std::string>& inputs) {
  int exit_code = 0;
  urlguard::CanonicalUrl url;
  urlguard::ExpressionList exprs;
  ForEachInput(inputs, [&](const std::string& input) {
    urlguard::Status s = urlguard::Canonicalize(input, &url);
    if (!s.ok()) exit_code |= kExitInvalid;
    if (s.ok()) urlguard::MakeExpressions(url, &exprs);
    if (json) {
      Json j;
      j["input"] = input;
      j["canonical"] = s.ok() ? Json(url.Spec()) : Json(nullptr);
      j["expressions"] = Json::array();
      if (s.ok()) {
        for (size_t i = 0; i < exprs.size(); ++i) {
          j["expressions"].push_back(
              {{"expression", std::string(exprs[i])}, {"sha256", urlguard::ToHex(urlguard::Sha256(exprs[i]))}});
        }
      }
      j["error"] = s.ok() ? Json(nullptr) : Json(s.message());
      PrintJson(j);
      return;
    }
    if (!s.ok()) {
      std::cout << "invalid  " << input << "  (" << s.message() << ")\n";
      return;
    }
    std::cout << url.Spec() << '\n';
    for (size_t i = 0; i < exprs.size(); ++i) {
      std::cout << "  " << urlguard::ToHex(urlguard::Sha256(exprs[i])) << "  " << exprs[i] << '\n';
    }
  });
  return exit_code;
}

Json VerdictJson(const std::string& input, const Verdict& v) {
  Json j;
  j["input"] = input;
  j["verdict"] = urlguard::VerdictKindName(v.kind);
  if (v.kind == VerdictKind::kHit) {
    const urlguard::Match& m = v.matches.front();
    j["list"] = m.list;
    j["layer"] = urlguard::LayerName(m.layer);
    j["expression"] = m.expression;
    j["sha256"] = m.sha256_hex;
    j["list_version"] = m.list_version;
    Json all = Json::array();
    for (const urlguard::Match& x : v.matches) {
      all.push_back({{"list", x.list}, {"layer", urlguard::LayerName(x.layer)}, {"expression", x.expression},
                     {"sha256", x.sha256_hex}});
    }
    j["matches"] = all;
  } else {
    j["list"] = nullptr;
    j["layer"] = nullptr;
    j["expression"] = nullptr;
  }
  if (!v.canonical.empty()) j["canonical"] = v.canonical;
  j["error"] = v.kind == VerdictKind::kInvalid ? Json(v.error) : Json(nullptr);
  return j;
}

void PrintVerdictText(const std::string& input, const Verdict& v) {
  switch (v.kind) {
    case VerdictKind::kSafe:
      std::cout << "safe     " << input << '\n';
      break;
    case VerdictKind::kInvalid:
      std::cout << "invalid  " << input << "  (" << v.error << ")\n";
      break;
    case VerdictKind::kHit: {
      const urlguard::Match& m = v.matches.front();
      std::cout << "HIT      " << input << "  list=" << m.list << " layer=" << urlguard::LayerName(m.layer)
                << " expression=" << m.expression;
      if (v.matches.size() > 1) std::cout << " (+" << v.matches.size() - 1 << " more)";
      std::cout << '\n';
      break;
    }
  }
}

int ExitBits(const Verdict& v) {
  if (v.kind == VerdictKind::kHit) return kExitHit;
  if (v.kind == VerdictKind::kInvalid) return kExitInvalid;
  return 0;
}

urlguard::Result<std::unique_ptr<urlguard::Checker>> OpenChecker(const std::vector<std::string>& snapshots,
                                                                 const std::string& dir) {
  if (!dir.empty()) return urlguard::Checker::OpenDirectory(dir);
  return urlguard::Checker::Open(snapshots);
}

int RunCheck(bool json, bool timing, const std::vector<std::string>& snapshots, const std::string& dir,
             const std::vector<std::string>& inputs) {
  auto checker = OpenChecker(snapshots, dir);
  if (!checker.ok()) {
    std::cerr << "urlguard check: " << checker.status().ToString() << '\n';
    return kExitInvalid;
  }
  int exit_code = 0;
  uint64_t count = 0;
  double total_ns = 0;
  urlguard::CheckOptions options;
  options.want_canonical = json;
  std::vector<std::string> timed;  // kept only with --timing (bounded by kMaxTimedInputs)
  constexpr size_t kMaxTimedInputs = 100000;
  ForEachInput(inputs, [&](const std::string& input) {
    auto t0 = std::chrono::steady_clock::now();
    Verdict v = (*checker)->Check(input, options);
    auto t1 = std::chrono::steady_clock::now();
    total_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
    ++count;
    if (timing && timed.size() < kMaxTimedInputs) timed.push_back(input);
    exit_code |= ExitBits(v);
    if (json) {
      PrintJson(VerdictJson(input, v));
    } else {
      PrintVerdictText(input, v);
    }
  });
  if (timing && count > 0) {
    // The pass above is cold (first touches of the mapping, first use of each thread's buffers). Repeat the
    // same inputs for about 0.2 s to show the steady-state cost an embedding application sees.
    uint64_t warm = 0;
    auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < 0.2) {
      for (const std::string& u : timed) {
        Verdict v = (*checker)->Check(u);
        (void)v;
        ++warm;
      }
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::cerr << "checked " << count << " inputs: first pass " << std::llround(total_ns / count)
              << " ns per lookup (cold), then " << std::llround(elapsed * 1e9 / static_cast<double>(warm))
              << " ns per lookup warm over " << warm << " repeats (canonicalize + hash + probe, one thread)\n";
  }
  return exit_code;
}

int RunScan(bool json, const std::vector<std::string>& snapshots, const std::string& dir,
            const std::vector<std::string>& files) {
  auto checker = OpenChecker(snapshots, dir);
  if (!checker.ok()) {
    std::cerr << "urlguard scan: " << checker.status().ToString() << '\n';
    return kExitInvalid;
  }
  int exit_code = 0;
  urlguard::ExtractResult found;
  uint64_t messages = 0, urls = 0, hits = 0;
  auto scan_stream = [&](std::istream& in, const std::string& name) {
    std::string line;
    uint64_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      ++messages;
      urlguard::ExtractUrls(line, &found);
      for (size_t i = 0; i < found.urls.size(); ++i) {
        const urlguard::ExtractedUrl& u = found.urls[i];
        std::string text = line.substr(u.begin, u.end - u.begin);
        std::string normalized(found.url(i));
        Verdict v = (*checker)->Check(normalized);
        ++urls;
        hits += v.kind == VerdictKind::kHit;
        exit_code |= ExitBits(v);
        if (json) {
          Json j = VerdictJson(normalized, v);
          j["file"] = name;
          j["line"] = line_no;
          j["text"] = text;
          j["defanged"] = u.defanged;
          PrintJson(j);
        } else if (v.kind == VerdictKind::kHit || v.kind == VerdictKind::kInvalid) {
          std::cout << name << ':' << line_no << ": ";
          PrintVerdictText(text + (u.defanged ? " (defanged)" : ""), v);
        } else {
          std::cout << name << ':' << line_no << ": safe     " << text << (u.defanged ? " (defanged)" : "")
                    << '\n';
        }
      }
      if (found.truncated) {
        std::cerr << name << ':' << line_no << ": message truncated: only its first " << found.scanned_bytes
                  << " bytes were scanned\n";
        exit_code |= kExitInvalid;
      }
    }
  };
  for (const std::string& f : files) {
    if (f == "-") {
      scan_stream(std::cin, "<stdin>");
      continue;
    }
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::cerr << "urlguard scan: cannot open " << f << '\n';
      exit_code |= kExitInvalid;
      continue;
    }
    scan_stream(in, f);
  }
  std::cerr << "scanned " << messages << " messages, found " << urls << " URLs, " << hits << " hit"
            << (hits == 1 ? "" : "s") << '\n';
  return exit_code;
}

int RunPlan(uint64_t n, double p) {
  if (n == 0 || !(p > 0 && p < 1)) {
    std::cerr << "urlguard plan: --entries must be > 0 and 0 < --fp-rate < 1\n";
    return kExitUsage;
  }
  // A URL makes about this many probes (ARCHITECTURE §2; publish/list_builder.h); each may hit falsely.
  const double probes = urlguard::kExpectedDomainProbes + urlguard::kExpectedUrlProbes;
  const double eps = p / probes;  // per-probe false-positive rate that gives p per URL
  const double ln2 = std::log(2.0);
  const double m = -static_cast<double>(n) * std::log(eps) / (ln2 * ln2);
  const double k = m / static_cast<double>(n) * ln2;
  urlguard::BloomSizing blocked = urlguard::SizeBlockedBloom(n, eps);
  const uint64_t universe = static_cast<uint64_t>(std::ceil(static_cast<double>(n) / eps));
  const double fa_bits = urlguard::FingerprintSetBitsPerEntry(n, universe);
  auto mb = [](double bits) { return bits / 8 / 1e6; };
  auto per_url = [&](double per_probe) { return 1 - std::pow(1 - per_probe, probes); };
  std::printf("plan for %llu entries at a per-URL false-positive rate of %g (%.0f probes per URL, %.3g per probe)\n\n",
              static_cast<unsigned long long>(n), p, probes, eps);
  std::printf("%-34s %12s %12s %10s %16s %14s\n", "structure", "bits/entry", "total MB", "hashes",
              "probes per URL", "FP per URL");
  std::printf("%-34s %12.2f %12.2f %10.2f %16.0f %14.3g\n", "Bloom (classic formulas)", m / n, mb(m), k, probes,
              p);
  std::printf("%-34s %12.2f %12.2f %10u %16.0f %14.3g\n", "blocked Bloom (one cache line/key)",
              blocked.bits_per_entry, mb(blocked.bits_per_entry * n), blocked.hashes, probes,
              per_url(blocked.expected_fp_rate));
  std::printf("%-34s %12.2f %12.2f %10s %16.0f %14.3g\n", "fingerprint array (default)", fa_bits,
              mb(fa_bits * n), "-", probes, per_url(static_cast<double>(n) / universe));
  std::printf("%-34s %12.2f %12.2f\n", "information-theoretic limit", std::log2(1 / eps),
              mb(std::log2(1 / eps) * n));
  std::printf("\nBloom: m = -n ln p / (ln 2)^2, k = (m/n) ln 2. Fingerprint array: universe U = n / p_probe = %llu,\n"
              "cost log2(U/n) + ~2.3 bits per entry, exact on fingerprints (diffs apply to it).\n",
              static_cast<unsigned long long>(universe));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguard: on-device URL threat lookup (offline tools)"};
  app.require_subcommand(1);
  bool json = false;
  bool timing = false;
  std::vector<std::string> inputs, snapshots;
  std::string dir;
  uint64_t entries = 0;
  double fp_rate = 0.001;

  auto* canon = app.add_subcommand("canon", "print the canonical URL, its lookup expressions and their SHA-256");
  canon->add_flag("--json", json, "one JSON object per input");
  canon->add_option("urls", inputs, "URLs, or - to read one per line from stdin")->required();

  auto* check = app.add_subcommand("check", "look URLs up in snapshot files");
  check->add_flag("--json", json, "one JSON object per input");
  check->add_flag("--timing", timing, "print the average lookup time to stderr");
  check->add_option("--snapshot", snapshots, "a snapshot file (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::ExistingFile);
  check->add_option("--data-dir", dir, "a directory of *.ugs snapshot files")->check(CLI::ExistingDirectory);
  check->add_option("urls", inputs, "URLs, or - to read one per line from stdin")->required();

  auto* scan = app.add_subcommand("scan", "find URLs in free text (one message per line) and check each");
  scan->add_flag("--json", json, "one JSON object per URL found");
  scan->add_option("--snapshot", snapshots, "a snapshot file (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::ExistingFile);
  scan->add_option("--data-dir", dir, "a directory of *.ugs snapshot files")->check(CLI::ExistingDirectory);
  scan->add_option("files", inputs, "text files, or - for stdin")->required();

  auto* plan = app.add_subcommand("plan", "size a filter: classic Bloom, blocked Bloom and the default structure");
  plan->add_option("--entries", entries, "number of list entries")->required();
  plan->add_option("--fp-rate", fp_rate, "target false-positive rate per URL")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  if ((*check || *scan) && snapshots.empty() && dir.empty()) {
    std::cerr << "urlguard: give --snapshot FILE (repeatable) or --data-dir DIR\n";
    return kExitUsage;
  }
  if (*canon) return RunCanon(json, inputs);
  if (*check) return RunCheck(json, timing, snapshots, dir, inputs);
  if (*scan) return RunScan(json, snapshots, dir, inputs);
  if (*plan) return RunPlan(entries, fp_rate);
  return kExitUsage;
}
