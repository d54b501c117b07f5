// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `urlguard`: offline lookups and text scanning from the command line.
//
//   urlguard canon [--json] [--] URL... | -
//   urlguard check [--json] --snapshot FILE [--snapshot FILE...] URL... | -
//   urlguard scan  [--json] --snapshot FILE ... FILE | -
//   urlguard plan  --entries N --fp-rate P
//
// Exit status is a bitmask: 0 all clean, 1 at least one hit, 2 at least one invalid input or error, 4 bad usage,
// 8 at least one stale verdict (a list not installed, damaged or expired).
#include <CLI/CLI.hpp>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "urlguard/checker.h"
#include "urlguard/client.h"
#include "urlguard/keys.h"
#include "urlguard/plan.h"
#include "urlguard/render.h"
#include "urlguard/sync.h"
#include "urlguard/text.h"
#include "urlguard/version.h"

namespace {

using urlguard::Verdict;
using urlguard::VerdictKind;

constexpr int kExitHit = 1;
constexpr int kExitInvalid = 2;
constexpr int kExitUsage = 4;
constexpr int kExitStale = 8;
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
  ForEachInput(inputs, [&](const std::string& input) {
    urlguard::Result<urlguard::CanonicalForm> form = urlguard::Canonicalize(input);
    if (!form.ok()) exit_code |= kExitInvalid;
    std::cout << (json ? urlguard::RenderCanonicalJson(input, form) : urlguard::RenderCanonicalText(input, form))
              << '\n';
  });
  return exit_code;
}

int ExitBits(const Verdict& v) {
  const int stale = v.stale ? kExitStale : 0;
  if (urlguard::IsThreat(v.kind)) return kExitHit | stale;
  if (v.kind == VerdictKind::kInvalid) return kExitInvalid;
  return stale;
}

// Where lookups come from: snapshot files (offline Checker), or a data directory kept by `urlguard sync` /
// urlguardd (Client: local verdicts, or with --verify the cache and the verification API decide local hits).
struct LookupSource {
  std::unique_ptr<urlguard::Checker> checker;
  std::unique_ptr<urlguard::Client> client;
  bool verify = false;
  Verdict Check(std::string_view url, const urlguard::CheckOptions& o = {}) const {
    if (checker) return checker->Check(url, o);
    return verify ? client->Check(url, o) : client->CheckLocal(url, o);
  }
};

struct SourceOptions {
  std::vector<std::string> snapshots;
  std::string dir;
  bool verify = false;
  std::string server;
  std::string ca_bundle;
  std::string proxy;
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
  co.proxy = so.proxy;
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

// ---- `urlguard check -`: block reads, batched lookups on both cores, one output buffer --------------------------
//
// Per line, `check` costs the lookup plus whatever the plumbing adds; the plumbing here is kept to a few tens of
// nanoseconds: stdin is read in blocks of up to kReadBlockBytes and split in place (lines are views into the
// block, nothing is copied or allocated per line), a block's lines are looked up in batches (Checker::CheckBatch
// overlaps the memory accesses of several URLs), verdicts are appended to one output buffer per worker
// (AppendVerdictText / AppendVerdictJson: no JSON tree) and each block is written with one write(2). A block of
// at least kParallelMinLines lines is split in two halves looked up at once on two threads; the halves are
// written in input order. Interactive use still answers line by line: a block ends where stdin has no more
// bytes ready.

// stdin is read in blocks of this many bytes (the last line of a block is carried over to the next).
constexpr size_t kReadBlockBytes = 1 << 20;
// Blocks with fewer lines are looked up on the calling thread only (a thread hand-off costs tens of microseconds).
constexpr size_t kParallelMinLines = 2048;

// Splits a file descriptor into lines, each cut at kMaxInputLineBytes (the rest of an overlong line is read and
// dropped, never kept) with its '\n' and one trailing '\r' removed: the same lines ReadLineCapped gives.
class BlockLineReader {
 public:
  explicit BlockLineReader(int fd) : fd_(fd), buf_(new char[kCapacity]) {}

  // Replaces *lines with the next lines: views into this reader's buffer, valid until the next call. Blocks until
  // at least one line is complete or the input ends. False at the end of the input (and when reading fails).
  bool Next(std::vector<std::string_view>* lines) {
    lines->clear();
    // The unfinished line moves to the front of the buffer.
    std::memmove(buf_.get(), buf_.get() + start_, end_ - start_);
    end_ -= start_;
    last_line_end_ = last_line_end_ > start_ ? last_line_end_ - start_ : 0;
    start_ = 0;
    while (!eof_) {
      if (!dropping_ && last_line_end_ == 0 && end_ > kMaxInputLineBytes) {
        dropping_ = true;  // keep the first kMaxInputLineBytes, drop the rest of this line
        end_ = kMaxInputLineBytes;
      }
      // Answer once a line is complete and the block is full or stdin has nothing more ready; without a complete
      // line, keep reading (a line of kReadBlockBytes or more becomes overlong just above, never a stall).
      if (last_line_end_ > 0 && (end_ >= kReadBlockBytes || !MoreReady())) break;
      const size_t old_end = end_;
      const ssize_t n = read(fd_, buf_.get() + end_, kCapacity - end_);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof_ = true;
        break;
      }
      end_ += static_cast<size_t>(n);
      if (dropping_) {
        const void* nl = std::memchr(buf_.get() + old_end, '\n', end_ - old_end);
        if (nl == nullptr) {
          end_ = old_end;
          continue;
        }
        const size_t at = static_cast<size_t>(static_cast<const char*>(nl) - buf_.get());
        std::memmove(buf_.get() + old_end, buf_.get() + at, end_ - at);  // the '\n' follows the kept bytes
        end_ = old_end + (end_ - at);
        dropping_ = false;
      }
      const void* nl = memrchr(buf_.get() + old_end, '\n', end_ - old_end);
      if (nl != nullptr) last_line_end_ = static_cast<size_t>(static_cast<const char*>(nl) - buf_.get()) + 1;
    }
    size_t pos = 0;
    while (pos < last_line_end_) {
      const char* nl = static_cast<const char*>(std::memchr(buf_.get() + pos, '\n', last_line_end_ - pos));
      const size_t len = static_cast<size_t>(nl - buf_.get()) - pos;
      lines->push_back(Trim(std::string_view(buf_.get() + pos, len)));
      pos += len + 1;
    }
    start_ = last_line_end_;
    if (eof_ && end_ > start_) {  // the last line has no '\n'
      lines->push_back(Trim(std::string_view(buf_.get() + start_, end_ - start_)));
      start_ = end_;
    }
    last_line_end_ = start_;
    return !lines->empty();
  }

 private:
  // Room for a full block plus an unfinished line at its cap, and one byte more to see that a line is overlong.
  static constexpr size_t kCapacity = kReadBlockBytes + kMaxInputLineBytes + 1;

  static std::string_view Trim(std::string_view line) {
    if (line.size() > kMaxInputLineBytes) line = line.substr(0, kMaxInputLineBytes);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  }

  // Whether more bytes can be read without waiting (so the current block can grow instead of being answered).
  bool MoreReady() const {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  }

  const int fd_;
  std::unique_ptr<char[]> buf_;
  size_t start_ = 0;          // first byte not yet handed out
  size_t end_ = 0;            // end of the bytes read
  size_t last_line_end_ = 0;  // one past the last '\n' in [start_, end_), or start_ when there is none
  bool dropping_ = false;     // inside an overlong line: bytes up to its '\n' are dropped
  bool eof_ = false;
};

// Writes all of `bytes` to stdout. False when stdout is gone (EPIPE with SIGPIPE ignored, a full disk).
bool WriteAll(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// One thread's share of a block: looks its lines up and renders them into `out`.
struct CheckWorker {
  std::vector<std::string_view> lines;
  std::vector<Verdict> verdicts;
  std::string out;
  int exit_bits = 0;
  double lookup_ns = 0;

  void Run(const LookupSource& source, const urlguard::CheckOptions& options, bool json) {
    out.clear();
    auto t0 = std::chrono::steady_clock::now();
    if (source.checker) {
      source.checker->CheckBatch(lines, &verdicts, options);
    } else {
      verdicts.resize(lines.size());
      for (size_t i = 0; i < lines.size(); ++i) verdicts[i] = source.Check(lines[i], options);
    }
    lookup_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    for (size_t i = 0; i < lines.size(); ++i) {
      exit_bits |= ExitBits(verdicts[i]);
      if (json) {
        urlguard::AppendVerdictJson(&out, lines[i], verdicts[i]);
      } else {
        urlguard::AppendVerdictText(&out, lines[i], verdicts[i]);
      }
      out.push_back('\n');
    }
  }
};

int RunCheck(bool json, bool timing, const SourceOptions& so, const std::vector<std::string>& inputs) {
  auto checker = OpenSource(so);
  if (!checker.ok()) {
    std::cerr << "urlguard check: " << checker.status().ToString() << '\n';
    return kExitInvalid;
  }
  const LookupSource& source = *checker;
  urlguard::CheckOptions options;
  options.want_canonical = json;
  CheckWorker workers[2];
  uint64_t count = 0;
  bool output_ok = true;
  std::vector<std::string> timed;  // kept only with --timing (bounded by kMaxTimedInputs)
  constexpr size_t kMaxTimedInputs = 100000;
  // Looks up one block of lines: in two halves on two threads when it is large, written in input order.
  auto check_block = [&](const std::vector<std::string_view>& lines) {
    count += lines.size();
    for (size_t i = 0; timing && i < lines.size() && timed.size() < kMaxTimedInputs; ++i) {
      timed.emplace_back(lines[i]);
    }
    const size_t half = lines.size() >= kParallelMinLines ? lines.size() / 2 : 0;
    workers[0].lines.assign(lines.begin(), lines.begin() + static_cast<ptrdiff_t>(half));
    workers[1].lines.assign(lines.begin() + static_cast<ptrdiff_t>(half), lines.end());
    if (half > 0) {
      std::thread first([&] { workers[0].Run(source, options, json); });
      workers[1].Run(source, options, json);
      first.join();
      output_ok = output_ok && WriteAll(workers[0].out);
    } else {
      workers[1].Run(source, options, json);
    }
    output_ok = output_ok && WriteAll(workers[1].out);
  };
  if (inputs.size() == 1 && inputs[0] == "-") {
    BlockLineReader reader(STDIN_FILENO);
    std::vector<std::string_view> lines;
    while (output_ok && reader.Next(&lines)) check_block(lines);
  } else {
    check_block(std::vector<std::string_view>(inputs.begin(), inputs.end()));
  }
  int exit_code = workers[0].exit_bits | workers[1].exit_bits;
  if (!output_ok) {
    std::cerr << "urlguard check: cannot write the output: " << std::strerror(errno) << '\n';
    exit_code |= kExitInvalid;
  }
  const double total_ns = workers[0].lookup_ns + workers[1].lookup_ns;
  if (timing && count > 0) {
    // The pass above is cold (first touches of the mapping, first use of each thread's buffers). Repeat the
    // same inputs for about 0.2 s to show the steady-state cost an embedding application sees.
    uint64_t warm = 0;
    auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    while (elapsed < 0.2) {
      for (const std::string& u : timed) {
        Verdict v = source.Check(u);
        (void)v;
        ++warm;
      }
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::cerr << "checked " << count << " inputs: first pass " << std::llround(total_ns / static_cast<double>(count))
              << " ns per lookup (cold, batched; thread time), then "
              << std::llround(elapsed * 1e9 / static_cast<double>(warm)) << " ns per lookup warm over " << warm
              << " repeats, one thread ("
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
  uint64_t messages = 0, urls = 0, hits = 0;
  auto scan_stream = [&](std::istream& in, const std::string& name) {
    std::string line;
    uint64_t line_no = 0;
    bool cut = false;
    while (ReadLineCapped(in, &line, &cut)) {
      ++line_no;
      ++messages;
      urlguard::FoundUrls found = urlguard::ExtractUrls(line);
      for (const urlguard::FoundUrl& u : found.urls) {
        Verdict v = checker->Check(u.url);
        ++urls;
        hits += (ExitBits(v) & kExitHit) != 0;
        exit_code |= ExitBits(v);
        urlguard::ScanFinding f{name, line_no, line, &u, &v};
        std::cout << (json ? urlguard::RenderScanFindingJson(f) : urlguard::RenderScanFindingText(f)) << '\n';
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
  auto plan = urlguard::PlanFilter(n, p);
  if (!plan.ok()) {
    std::cerr << "urlguard plan: " << plan.status().message() << '\n';
    return kExitUsage;
  }
  std::cout << urlguard::RenderFilterPlanText(*plan);
  return 0;
}

int RunSync(const std::string& dir, const std::string& server, const std::vector<std::string>& key_files,
            const std::vector<std::string>& rotation_files, const std::vector<std::string>& lists, bool once,
            const std::string& ca_bundle, const std::string& proxy) {
  auto keys = urlguard::TrustedKeys::LoadFiles(key_files, rotation_files);
  if (!keys.ok()) {
    std::cerr << "urlguard sync: " << keys.status().ToString() << '\n';
    return kExitInvalid;
  }
  urlguard::SyncOptions so;
  so.data_dir = dir;
  so.server_url = server;
  so.trusted_keys = *keys;
  so.lists = lists;
  so.ca_bundle = ca_bundle;
  so.proxy = proxy;
  so.create_data_dir = true;
  auto engine = urlguard::SyncEngine::Open(so);
  if (!engine.ok()) {
    std::cerr << "urlguard sync: " << engine.status().ToString() << '\n';
    return kExitInvalid;
  }
  size_t warned = 0;  // warnings printed so far: Open's, then any a pass adds (a schedule that was not saved)
  auto print_warnings = [&] {
    const std::vector<std::string>& w = (*engine)->warnings();
    for (; warned < w.size(); ++warned) std::cerr << "warning: " << w[warned] << '\n';
  };
  print_warnings();
  int exit_code = 0;
  bool first = true;
  for (;;) {
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    if (first || now >= (*engine)->NextDueUnix()) {
      for (const urlguard::SyncReport& r : (*engine)->RunDue(/*force=*/first)) {
        std::cout << urlguard::RenderSyncReportText(r) << std::endl;
        if (r.result == urlguard::SyncResult::kFailed) exit_code |= kExitInvalid;
      }
      print_warnings();
      first = false;
      if (once) return exit_code;
      int64_t next = (*engine)->NextDueUnix();
      std::cout << "next sync in " << (next > now ? next - now : 0) << " s" << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
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
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto lists = (*client)->Lists();
  std::cout << (json ? urlguard::RenderListStatusJson(lists, (*client)->Stats().generation, now)
                     : urlguard::RenderListStatusText(lists, dir, now))
            << '\n';
  return 0;
}

}  // namespace
int main(int argc, char** argv) {
  CLI::App app{"urlguard: on-device URL threat lookup"};
  app.set_version_flag("--version", urlguard::VersionString("urlguard"), "print the version and the format versions");
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
    cmd->add_option("--proxy", so.proxy,
                    "proxy URL for the verification API, e.g. http://proxy.example:3128 (default: the http_proxy, "
                    "https_proxy, ALL_PROXY and no_proxy environment variables)");
  };

  auto* canon = app.add_subcommand("canon", "print the canonical URL, its lookup expressions and their SHA-256");
  canon->add_flag("--json", json, "one JSON object per input");
  canon->add_option("urls", inputs, "URLs, or - to read one per line from stdin")->required();

  auto* check = app.add_subcommand(
      "check", "look URLs up (exit status bits: 1 a hit, malicious or unverified hit; 2 an invalid input; "
               "8 a stale verdict: a list is not installed, damaged or expired)");
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
  repeatable(sync->add_option("--list", lists,
                              "list to sync (repeatable; default: those installed, or on a fresh data directory "
                              "every list the server's signed list index names)"));
  sync->add_flag("--once", once, "one pass, then exit (default: keep syncing on schedule)");
  sync->add_option("--ca-bundle", so.ca_bundle, "CA bundle for https (default: the system's)");
  sync->add_option("--proxy", so.proxy,
                   "proxy URL, e.g. http://proxy.example:3128 (default: the http_proxy, https_proxy, ALL_PROXY and "
                   "no_proxy environment variables)");

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
  if (*sync) return RunSync(so.dir, so.server, key_files, rotation_files, lists, once, so.ca_bundle, so.proxy);
  if (*status) return RunStatus(so.dir, json);
  return kExitUsage;
}
