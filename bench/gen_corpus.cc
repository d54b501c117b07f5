// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// gen_corpus: writes the scale benchmark's inputs (bench/corpus.h: ListCorpus, ChangeSet, BrowsingCorpus) as
// plain feed files (docs/feeds.md, `plain`: one entry per line), streaming: memory stays at one output buffer
// whatever N is (1 MiB; 100 M entries are about 4.4 GB of text).
//
//   gen_corpus --entries N --out FILE                        version 1: entries 0 .. N-1
//   gen_corpus --entries N --version 2 --out FILE            version 2: without the removed, with the added
//              [--removed R] [--added A]                      (default 25000 each: a 50 k-change version)
//   gen_corpus --entries N --added-out FILE --removed-out FILE   the changes alone (version 2 minus version 1)
//   gen_corpus --entries N --browsing M --out FILE [--hit-rate H]  M browsing URLs (default 1% hit the list)
//   gen_corpus --entries N --verify-lua FILE                 a wrk script: 1000 verify bodies of 1-5 SHA-256
//                                                            prefixes, one in five of a listed entry's key
// Every output is a pure function of the flags (and --seed, default 1). Prints lines, bytes and lines per
// second to stderr. Exit status: 0 written, 1 I/O error, 4 bad usage.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "bench/corpus.h"
#include "url/entry.h"
#include "core/sha256.h"

namespace urlguard::bench {
namespace {

constexpr size_t kFlushBytes = size_t{1} << 20;
constexpr int kWrkBodies = 1000;

// Streams lines into a file through one buffer of kFlushBytes.
class LineWriter {
 public:
  explicit LineWriter(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb")) {
    buffer_.reserve(kFlushBytes + ListCorpus::kMaxEntryBytes + 2048);
  }
  ~LineWriter() {
    if (file_ != nullptr) std::fclose(file_);
  }
  bool ok() const { return file_ != nullptr && !failed_; }
  std::string* buffer() { return &buffer_; }
  // Call after appending one line (without its newline) to buffer().
  void EndLine() {
    buffer_.push_back('\n');
    ++lines_;
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  bool Close() {
    Flush();
    if (file_ != nullptr && std::fclose(file_) != 0) failed_ = true;
    file_ = nullptr;
    return !failed_;
  }
  uint64_t lines() const { return lines_; }
  uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  void Flush() {
    if (file_ == nullptr || buffer_.empty()) return;
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) failed_ = true;
    bytes_ += buffer_.size();
    buffer_.clear();
  }

  std::string path_;
  FILE* file_;
  std::string buffer_;
  bool failed_ = false;
  uint64_t lines_ = 0, bytes_ = 0;
};

int Finish(LineWriter& w, std::chrono::steady_clock::time_point start) {
  if (!w.Close()) {
    std::fprintf(stderr, "gen_corpus: cannot write %s\n", w.path().c_str());
    return 1;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "gen_corpus: wrote %s: %llu lines, %llu bytes in %.2f s (%.2f M lines/s)\n", w.path().c_str(),
               static_cast<unsigned long long>(w.lines()), static_cast<unsigned long long>(w.bytes()), s,
               s > 0 ? static_cast<double>(w.lines()) / s / 1e6 : 0.0);
  return 0;
}

int Open(LineWriter& w) {
  if (w.ok()) return 0;
  std::fprintf(stderr, "gen_corpus: cannot create %s\n", w.path().c_str());
  return 1;
}

// Version `version` of the list (1: [0, N); 2: ChangeSet's version 2) into `path`.
int WriteList(const ListCorpus& list, const ChangeSet& changes, int version, const std::string& path) {
  auto start = std::chrono::steady_clock::now();
  LineWriter w(path);
  if (int rc = Open(w)) return rc;
  const uint64_t end = version == 1 ? changes.entries() : changes.end();
  for (uint64_t i = 0; i < end; ++i) {
    if (version == 2 && changes.Removed(i)) continue;
    list.AppendEntry(i, w.buffer());
    w.EndLine();
  }
  return Finish(w, start);
}

int WriteChanges(const ListCorpus& list, const ChangeSet& changes, const std::string& added_path,
                 const std::string& removed_path) {
  if (!removed_path.empty()) {
    auto start = std::chrono::steady_clock::now();
    LineWriter w(removed_path);
    if (int rc = Open(w)) return rc;
    for (uint64_t i = 0; i < changes.entries(); ++i) {
      if (!changes.Removed(i)) continue;
      list.AppendEntry(i, w.buffer());
      w.EndLine();
    }
    if (int rc = Finish(w, start)) return rc;
  }
  if (!added_path.empty()) {
    auto start = std::chrono::steady_clock::now();
    LineWriter w(added_path);
    if (int rc = Open(w)) return rc;
    for (uint64_t i = changes.entries(); i < changes.end(); ++i) {
      list.AppendEntry(i, w.buffer());
      w.EndLine();
    }
    if (int rc = Finish(w, start)) return rc;
  }
  return 0;
}

int WriteBrowsing(const ListCorpus& list, uint64_t entries, uint64_t urls, double hit_rate, const std::string& path) {
  auto start = std::chrono::steady_clock::now();
  BrowsingCorpus browsing(&list, entries, hit_rate);
  LineWriter w(path);
  if (int rc = Open(w)) return rc;
  for (uint64_t j = 0; j < urls; ++j) {
    browsing.AppendUrl(j, w.buffer());
    w.EndLine();
  }
  return Finish(w, start);
}

// A wrk script POSTing kWrkBodies different verify bodies (docs/verify-server.md) of 1-5 prefixes; one prefix
// in five is the SHA-256 prefix of a listed entry's key (url/entry.h), the rest random — the mix of
// bench/verify_load_bench.cc, but against the list the benchmark published.
int WriteVerifyLua(const ListCorpus& list, uint64_t entries, const std::string& path) {
  std::mt19937_64 rng(7);
  std::string lua = "-- wrk script written by bench/gen_corpus.cc: POSTs " + std::to_string(kWrkBodies) +
                    " different verify bodies (1-5 prefixes, 20% of listed keys).\nlocal bodies = {\n";
  uint64_t listed = 0, total = 0;
  for (int b = 0; b < kWrkBodies; ++b) {
    const int n = 1 + static_cast<int>(rng() % 5);
    lua += "  \"{\\\"prefixes\\\": [";
    for (int k = 0; k < n; ++k) {
      uint32_t prefix = static_cast<uint32_t>(rng());
      if (rng() % 5 == 0 && entries != 0) {
        auto key = EntryKeyFor(list.Entry(rng() % entries));
        if (key.ok()) {
          prefix = DigestPrefix32(Sha256(key->expression));
          ++listed;
        }
      }
      ++total;
      char hex[16];
      std::snprintf(hex, sizeof(hex), "%s\\\"%08x\\\"", k ? ", " : "", prefix);
      lua += hex;
    }
    lua += "]}\",\n";
  }
  lua += "}\nlocal counter = 0\nrequest = function()\n  counter = counter + 1\n"
         "  return wrk.format(\"POST\", \"/v1/verify\", {[\"Content-Type\"] = \"application/json\"}, "
         "bodies[(counter % #bodies) + 1])\nend\n"
         "response = function(status, headers, body)\n  if status ~= 200 then\n"
         "    io.stderr:write(\"unexpected status \" .. status .. \"\\n\")\n  end\nend\n";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(lua.data(), 1, lua.size(), f) != lua.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "gen_corpus: cannot write %s\n", path.c_str());
    return 1;
  }
  std::fprintf(stderr, "gen_corpus: wrote %s: %d bodies, %llu prefixes, %llu of listed keys\n", path.c_str(),
               kWrkBodies, static_cast<unsigned long long>(total), static_cast<unsigned long long>(listed));
  return 0;
}

int Main(int argc, char** argv) {
  CLI::App app{"gen_corpus: deterministic, streaming feed files for the scale benchmark (bench/corpus.h)"};
  uint64_t entries = 0, removed = 25000, added = 25000, seed = 1, browsing = 0;
  int version = 1;
  double hit_rate = 0.01;
  std::string out, added_out, removed_out, verify_lua;
  app.add_option("--entries", entries, "list size N of version 1")
      ->required()
      ->check(CLI::Range(uint64_t{1}, ListCorpus::kMaxEntries));
  app.add_option("--out", out, "the list (--version 1 or 2) or, with --browsing, the browsing URLs");
  app.add_option("--version", version, "1: entries 0..N-1; 2: version 1 minus --removed plus --added")
      ->check(CLI::Range(1, 2));
  app.add_option("--removed", removed, "entries of version 1 that version 2 drops (default 25000)");
  app.add_option("--added", added, "new entries in version 2 (default 25000)");
  app.add_option("--added-out", added_out, "write the added entries here");
  app.add_option("--removed-out", removed_out, "write the removed entries here");
  app.add_option("--browsing", browsing, "write this many browsing URLs to --out instead of the list");
  app.add_option("--hit-rate", hit_rate, "share of browsing URLs that hit a listed entry (default 0.01)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--verify-lua", verify_lua, "write a wrk script of verify requests here");
  app.add_option("--seed", seed, "corpus seed (default 1)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 4;
  }
  if (removed > entries || entries + added > ListCorpus::kMaxEntries) {
    std::fprintf(stderr, "gen_corpus: need --removed <= --entries and --entries + --added <= %llu\n",
                 static_cast<unsigned long long>(ListCorpus::kMaxEntries));
    return 4;
  }
  if (out.empty() && added_out.empty() && removed_out.empty() && verify_lua.empty()) {
    std::fprintf(stderr, "gen_corpus: nothing to write (give --out, --added-out, --removed-out or --verify-lua)\n");
    return 4;
  }
  const ListCorpus list(seed);
  const ChangeSet changes(entries, removed, added);
  if (!out.empty()) {
    const int rc = browsing != 0 ? WriteBrowsing(list, entries, browsing, hit_rate, out)
                                 : WriteList(list, changes, version, out);
    if (rc != 0) return rc;
  }
  if (int rc = WriteChanges(list, changes, added_out, removed_out)) return rc;
  if (!verify_lua.empty()) return WriteVerifyLua(list, entries, verify_lua);
  return 0;
}

}  // namespace
}  // namespace urlguard::bench

int main(int argc, char** argv) { return urlguard::bench::Main(argc, argv); }
