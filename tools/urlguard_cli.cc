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
#include <thread>
#include <vector>

#include "core/blocked_bloom.h"
#include "core/fingerprint_set.h"
#include "core/sha256.h"
#include "core/url_canon.h"
#include "core/url_extract.h"
#include "format/key_rotation.h"
#include "format/signature.h"
#include "platform/env.h"
#include "publish/list_builder.h"
#include "sync/syncer.h"
#include "urlguard/checker.h"
#include "urlguard/client.h"

namespace {

using urlguard::Verdict;
using urlguard::VerdictKind;
using Json = nlohmann::json;

constexpr int kExitHit = 1;
constexpr int kExitInvalid = 2;
constexpr int kExitUsage = 4;
// A line read from stdin or a file is cut at this many bytes; the rest of it is read and dropped, never kept.
constexpr size_t kMaxInputLineBytes = 1 << 20;

// Reads one line (the '\n' and a trailing '\r' removed) keeping at most kMaxInputLineBytes of it. False at end
// of input. *cut says whether bytes were dropped.
bool ReadLineCapped(std::istream& in, std::string* line, bool* cut) {
  line->clear();
  *cut = false;
  std::streambuf* buf = in.rdbuf();
  bool any = false;
  for (;;) {
    int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) break;
    any = true;
    if (c == '\n') break;
    if (line->size() < kMaxInputLineBytes) {
      line->push_back(static_cast<char>(c));
    } else {
      *cut = true;
    }
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return any;
}

// Prints JSON with invalid UTF-8 replaced by U+FFFD, so the output is always valid JSON.
void PrintJson(const Json& j) {
  std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << '\n';
}

// Calls fn(line) for each input: the positional arguments, or lines of stdin when the only one is "-".
template <typename Fn>
void ForEachInput(const std::vector<std::string>& args, Fn&& fn) {
  if (args.size() == 1 && args[0] == "-") {
    std::string line;
    bool cut = false;
    while (ReadLineCapped(std::cin, &line, &cut)) fn(line);
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
  if (!v.matches.empty()) {
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
  if (v.kind == VerdictKind::kMalicious) j["list"] = v.list;
  if (!v.threat.empty()) j["threat"] = v.threat;
  j["stale"] = v.stale;
  if (v.allowlisted) j["allowlisted"] = true;
  if (v.emergency) j["emergency"] = true;
  j["error"] = v.error.empty() ? Json(nullptr) : Json(v.error);
  return j;
}

void PrintVerdictText(const std::string& input, const Verdict& v) {
  const char* stale = v.stale ? "  [STALE: a list is past its signed expiry]" : "";
  switch (v.kind) {
    case VerdictKind::kSafe:
      std::cout << "safe     " << input << (v.allowlisted ? "  (allowlisted)" : "") << stale << '\n';
      break;
    case VerdictKind::kSafeVerified:
      std::cout << "safe     " << input << "  (local filter hit " << v.matches.front().expression
                << ", verified safe" << (v.from_cache ? " from cache" : " by the server") << ")" << stale << '\n';
      break;
    case VerdictKind::kMalicious:
      std::cout << "MALICIOUS " << input << "  list=" << v.list << (v.threat.empty() ? "" : " threat=" + v.threat)
                << " expression=" << v.matches.front().expression
                << (v.emergency ? " (emergency policy: not verified)" : v.from_cache ? " (cached)" : " (verified)")
                << stale << '\n';
      break;
    case VerdictKind::kUnverifiedHit:
      std::cout << "UNVERIFIED " << input << "  local hit list=" << v.matches.front().list
                << " expression=" << v.matches.front().expression << "; verification unavailable"
                << (v.error.empty() ? "" : ": " + v.error) << stale << '\n';
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
  if (v.kind == VerdictKind::kHit || v.kind == VerdictKind::kMalicious || v.kind == VerdictKind::kUnverifiedHit) {
    return kExitHit;
  }
  if (v.kind == VerdictKind::kInvalid) return kExitInvalid;
  return 0;
}

// Where lookups come from: snapshot files (offline Checker), or a data directory kept by `urlguard sync` /
// urlguardd (Client: local verdicts, or with --verify the cache and the verification API decide local hits).
struct LookupSource {
  std::unique_ptr<urlguard::Checker> checker;
  std::unique_ptr<urlguard::Client> client;
  bool verify = false;
  Verdict Check(const std::string& url, const urlguard::CheckOptions& o = {}) const {
    if (checker) return checker->Check(url, o);
    return verify ? client->Check(url) : client->CheckLocal(url);
  }
};

struct SourceOptions {
  std::vector<std::string> snapshots;
  std::string dir;
  bool verify = false;
  std::string server;
  std::string ca_bundle;
};

urlguard::Result<LookupSource> OpenSource(const SourceOptions& so) {
  LookupSource src;
  if (so.dir.empty()) {
    auto c = urlguard::Checker::Open(so.snapshots);
    if (!c.ok()) return c.status();
    src.checker = std::move(c).value();
    return src;
  }
  urlguard::ClientOptions co;
  co.data_dir = so.dir;
  co.server_url = so.server;
  co.verify = so.verify;
  co.ca_bundle = so.ca_bundle;
  co.watch = false;
  if (so.verify && so.server.empty()) return urlguard::Status::InvalidArgument("--verify needs --server URL");
  auto c = urlguard::Client::Open(co);
  if (!c.ok()) return c.status();
  if ((*c)->Lists().empty()) {
    return urlguard::Status::NotFound(so.dir + ": no lists installed yet (run `urlguard sync` or urlguardd first)");
  }
  src.client = std::move(c).value();
  src.verify = so.verify;
  return src;
}

int RunCheck(bool json, bool timing, const SourceOptions& so, const std::vector<std::string>& inputs) {
  auto checker = OpenSource(so);
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
    Verdict v = checker->Check(input, options);
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
        Verdict v = checker->Check(u);
        (void)v;
        ++warm;
      }
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::cerr << "checked " << count << " inputs: first pass " << std::llround(total_ns / count)
              << " ns per lookup (cold), then " << std::llround(elapsed * 1e9 / static_cast<double>(warm))
              << " ns per lookup warm over " << warm << " repeats, one thread ("
              << (so.verify ? "local lookup, plus the result cache or the verify API for local hits"
                            : "canonicalize + hash + probe")
              << ")\n";
  }
  return exit_code;
}

int RunScan(bool json, const SourceOptions& so, const std::vector<std::string>& files) {
  auto checker = OpenSource(so);
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
    bool cut = false;
    while (ReadLineCapped(in, &line, &cut)) {
      ++line_no;
      ++messages;
      urlguard::ExtractUrls(line, &found);
      for (size_t i = 0; i < found.urls.size(); ++i) {
        const urlguard::ExtractedUrl& u = found.urls[i];
        std::string text = line.substr(u.begin, u.end - u.begin);
        std::string normalized(found.url(i));
        Verdict v = checker->Check(normalized);
        ++urls;
        hits += ExitBits(v) == kExitHit;
        exit_code |= ExitBits(v);
        if (json) {
          Json j = VerdictJson(normalized, v);
          j["file"] = name;
          j["line"] = line_no;
          j["text"] = text;
          j["defanged"] = u.defanged;
          PrintJson(j);
        } else {
          std::cout << name << ':' << line_no << ": ";
          PrintVerdictText(text + (u.defanged ? " (defanged)" : ""), v);
        }
      }
      if (found.truncated || cut) {
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

int RunSync(const std::string& dir, const std::string& server, const std::vector<std::string>& key_files,
            const std::vector<std::string>& rotation_files, const std::vector<std::string>& lists, bool once,
            const std::string& ca_bundle) {
  urlguard::Env* env = urlguard::Env::Default();
  urlguard::SyncerOptions so;
  so.data_dir = dir;
  so.server_url = server;
  so.lists = lists;
  so.fetch.ca_bundle = ca_bundle;
  for (const std::string& f : key_files) {
    auto pem = env->ReadFile(f, urlguard::kMaxPemBytes);
    if (!pem.ok()) {
      std::cerr << "urlguard sync: " << pem.status().ToString() << '\n';
      return kExitInvalid;
    }
    auto k = urlguard::PublicKeyFromPem(*pem);
    if (!k.ok()) {
      std::cerr << "urlguard sync: " << f << ": " << k.status().ToString() << '\n';
      return kExitInvalid;
    }
    so.trusted_keys.push_back(*k);
  }
  // Key rotation: a new key is trusted only through statements signed by an already trusted key, in order.
  std::vector<std::string> statements;
  for (const std::string& f : rotation_files) {
    auto st = env->ReadFile(f, urlguard::kMaxRotationStatementBytes);
    if (!st.ok()) {
      std::cerr << "urlguard sync: " << st.status().ToString() << '\n';
      return kExitInvalid;
    }
    statements.push_back(*st);
  }
  if (!statements.empty()) {
    auto chain = urlguard::AcceptRotationChain(so.trusted_keys, statements, env->NowUnixSeconds());
    if (!chain.ok()) {
      std::cerr << "urlguard sync: key rotation refused: " << chain.status().ToString() << '\n';
      return kExitInvalid;
    }
    so.trusted_keys = *chain;
  }
  if (auto s = env->CreateDirs(dir); !s.ok()) {
    std::cerr << "urlguard sync: " << s.ToString() << '\n';
    return kExitInvalid;
  }
  auto syncer = urlguard::Syncer::Open(env, so);
  if (!syncer.ok()) {
    std::cerr << "urlguard sync: " << syncer.status().ToString() << '\n';
    return kExitInvalid;
  }
  for (const std::string& w : (*syncer)->warnings()) std::cerr << "warning: " << w << '\n';
  int exit_code = 0;
  bool first = true;
  for (;;) {
    const int64_t now = env->NowUnixSeconds();
    if (first || now >= (*syncer)->NextDue()) {
      for (const urlguard::SyncReport& r : (*syncer)->RunDue(now, /*force=*/first)) {
        std::cout << r.list << ": " << r.result;
        if (r.result == "updated") {
          if (r.from_version == 0) {
            std::cout << ": installed version " << r.to_version;
          } else {
            std::cout << " version " << r.from_version << " -> " << r.to_version;
          }
          std::cout << " (" << (r.used_diff ? "diff" : "full snapshot") << ", " << r.bytes << " bytes downloaded)";
        } else if (r.to_version) {
          std::cout << " (version " << r.to_version << ")";
        }
        if (!r.error.empty()) std::cout << ": " << r.error;
        std::cout << std::endl;
        if (r.result == "failed") exit_code |= kExitInvalid;
      }
      first = false;
      if (once) return exit_code;
      int64_t next = (*syncer)->NextDue();
      std::cout << "next sync in " << (next > now ? next - now : 0) << " s" << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

std::string Ago(int64_t seconds) {
  if (seconds < 0) return "in the future (clock skew?)";
  if (seconds < 120) return std::to_string(seconds) + " s ago";
  if (seconds < 7200) return std::to_string(seconds / 60) + " min ago";
  if (seconds < 172800) return std::to_string(seconds / 3600) + " h ago";
  return std::to_string(seconds / 86400) + " days ago";
}

int RunStatus(const std::string& dir, bool json) {
  urlguard::ClientOptions co;
  co.data_dir = dir;
  co.watch = false;
  auto client = urlguard::Client::Open(co);
  if (!client.ok()) {
    std::cerr << "urlguard status: " << client.status().ToString() << '\n';
    return kExitInvalid;
  }
  const int64_t now = std::time(nullptr);
  auto lists = (*client)->Lists();
  if (json) {
    Json out = Json::array();
    for (const auto& l : lists) {
      out.push_back({{"list", l.name}, {"version", l.version}, {"entries", l.entries},
                     {"age_seconds", l.version ? now - l.created_unix : 0}, {"expires_unix", l.expires_unix},
                     {"stale", l.stale}, {"emergency", l.emergency}, {"last_sync_unix", l.last_sync_unix},
                     {"last_sync_result", l.last_sync_result}, {"last_sync_error", l.last_sync_error},
                     {"next_sync_unix", l.next_sync_unix}, {"consecutive_failures", l.consecutive_failures}});
    }
    PrintJson(out);
    return 0;
  }
  if (lists.empty()) {
    std::cout << dir << ": no lists installed yet (run `urlguard sync` or urlguardd)\n";
    return 0;
  }
  for (const auto& l : lists) {
    std::cout << l.name << ": ";
    if (l.version == 0) {
      std::cout << "not installed";
    } else {
      std::cout << "version " << l.version << ", " << l.entries << " entries, built " << Ago(now - l.created_unix)
                << ", " << (l.stale ? "STALE (expired " + Ago(now - l.expires_unix) + ")"
                                     : "fresh until " + std::to_string((l.expires_unix - now) / 60) + " min from now");
      if (l.emergency) std::cout << ", EMERGENCY policy";
    }
    std::cout << "\n  last sync: ";
    if (l.last_sync_unix == 0) {
      std::cout << "never";
    } else {
      std::cout << l.last_sync_result << " " << Ago(now - l.last_sync_unix);
      if (!l.last_sync_error.empty()) std::cout << ": " << l.last_sync_error;
      if (l.consecutive_failures) std::cout << " (" << l.consecutive_failures << " failures in a row)";
    }
    if (l.next_sync_unix) std::cout << "; next sync " << (l.next_sync_unix > now ? "in " + std::to_string(l.next_sync_unix - now) + " s" : "due now");
    std::cout << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"urlguard: on-device URL threat lookup"};
  app.require_subcommand(1);
  bool json = false, timing = false, once = false;
  std::vector<std::string> inputs, key_files, rotation_files, lists;
  SourceOptions so;
  uint64_t entries = 0;
  double fp_rate = 0.001;
  auto repeatable = [](CLI::Option* o) {
    return o->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  };
  auto add_source = [&](CLI::App* cmd) {
    repeatable(cmd->add_option("--snapshot", so.snapshots, "a snapshot file (repeatable)"))->check(CLI::ExistingFile);
    cmd->add_option("--data-dir", so.dir, "a data directory kept current by `urlguard sync` or urlguardd")
        ->check(CLI::ExistingDirectory);
    cmd->add_flag("--verify", so.verify, "with --data-dir: decide local hits with the cache and the verification API");
    cmd->add_option("--server", so.server, "verification server base URL (with --verify)");
    cmd->add_option("--ca-bundle", so.ca_bundle, "CA bundle for https (default: the system's)");
  };

  auto* canon = app.add_subcommand("canon", "print the canonical URL, its lookup expressions and their SHA-256");
  canon->add_flag("--json", json, "one JSON object per input");
  canon->add_option("urls", inputs, "URLs, or - to read one per line from stdin")->required();

  auto* check = app.add_subcommand("check", "look URLs up (exit 1 on a hit, malicious or unverified hit)");
  check->add_flag("--json", json, "one JSON object per input");
  check->add_flag("--timing", timing, "print the lookup time to stderr");
  add_source(check);
  check->add_option("urls", inputs, "URLs, or - to read one per line from stdin")->required();

  auto* scan = app.add_subcommand("scan", "find URLs in free text (one message per line) and check each");
  scan->add_flag("--json", json, "one JSON object per URL found");
  add_source(scan);
  scan->add_option("files", inputs, "text files, or - for stdin")->required();

  auto* plan = app.add_subcommand("plan", "size a filter: classic Bloom, blocked Bloom and the default structure");
  plan->add_option("--entries", entries, "number of list entries")->required();
  plan->add_option("--fp-rate", fp_rate, "target false-positive rate per URL")->required();

  auto* sync = app.add_subcommand("sync", "keep a data directory current from a signed update server");
  sync->add_option("--data-dir", so.dir, "data directory (created if missing)")->required();
  sync->add_option("--server", so.server, "update server base URL")->required();
  repeatable(sync->add_option("--public-key", key_files, "trusted Ed25519 public key PEM (repeatable)"))
      ->required()
      ->check(CLI::ExistingFile);
  repeatable(sync->add_option("--key-rotation", rotation_files,
                              "key rotation statement signed by a trusted key (repeatable, in chain order)"))
      ->check(CLI::ExistingFile);
  repeatable(sync->add_option("--list", lists, "list to sync (repeatable; default: those installed)"));
  sync->add_flag("--once", once, "one pass, then exit (default: keep syncing on schedule)");
  sync->add_option("--ca-bundle", so.ca_bundle, "CA bundle for https (default: the system's)");

  auto* status = app.add_subcommand("status", "show installed lists, freshness and sync results");
  status->add_option("--data-dir", so.dir, "data directory")->required()->check(CLI::ExistingDirectory);
  status->add_flag("--json", json, "JSON output");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  if ((*check || *scan) && so.snapshots.empty() == so.dir.empty()) {
    std::cerr << "urlguard: give either --snapshot FILE (repeatable) or --data-dir DIR\n";
    return kExitUsage;
  }
  if ((*check || *scan) && so.verify && so.dir.empty()) {
    std::cerr << "urlguard: --verify works with --data-dir\n";
    return kExitUsage;
  }
  if (*canon) return RunCanon(json, inputs);
  if (*check) return RunCheck(json, timing, so, inputs);
  if (*scan) return RunScan(json, so, inputs);
  if (*plan) return RunPlan(entries, fp_rate);
  if (*sync) return RunSync(so.dir, so.server, key_files, rotation_files, lists, once, so.ca_bundle);
  if (*status) return RunStatus(so.dir, json);
  return kExitUsage;
}
