// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `bench_corpus --entries N --urls M --out DIR`: the files the command-line benchmarks (bench/cli_bench.py,
// bench/redis_getbit_bench) share, from bench/corpus.cc's deterministic generator:
//   DIR/list.txt      N list entries as a feed would give them (seed 1: the same list as bench/lookup_bench)
//   DIR/list.ugs      that list built by the publisher's BuildSnapshotFile (fingerprint arrays, 0.1% per URL)
//   DIR/urls.txt      M clean browsing URLs (seed 2, as in bench/lookup_bench)
//   DIR/must_hit.txt  other spellings of listed entries that every client must find (see MustHitSpellings):
//                     the accuracy half of the comparison with exact-string designs
// Files already there for the same N and M (DIR/stamp) are kept: generating 10 M entries takes ~20 s.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench/corpus.h"
#include "urlguard/checker.h"
#include "urlguard/publish.h"

namespace urlguard::bench {
namespace {

// One in this many list entries gets must-hit spellings.
constexpr uint64_t kMustHitEvery = 1000;

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Spellings a browser, a mail or a chat message produces for a listed entry, each of which names a listed
// resource (the canonicalization and lookup-expression rules of docs/url-parsing.md): the entry as listed, with
// the other scheme, an upper-case host, the default port, a fragment, a percent-encoded letter, a sub-page or a
// sub-domain of a listed host. Empty for IP entries (left out: their spellings are a different topic).
std::vector<std::string> MustHitSpellings(const std::string& entry) {
  std::vector<std::string> out;
  std::string scheme = "http://", rest = entry;
  if (entry.rfind("http://", 0) == 0) {
    rest = entry.substr(7);
  } else if (entry.rfind("https://", 0) == 0) {
    scheme = "https://";
    rest = entry.substr(8);
  } else if (entry.find('/') != std::string::npos || entry.find(':') != std::string::npos ||
             std::isdigit(static_cast<unsigned char>(entry.back()))) {
    return out;  // CIDR, IPv6 or IPv4
  }
  const size_t slash = rest.find('/');
  const std::string host = rest.substr(0, slash);
  const std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  const bool whole_host = slash == std::string::npos;
  const std::string other = scheme == "http://" ? "https://" : "http://";
  if (whole_host) out.push_back(entry);  // a bare domain as listed
  out.push_back(scheme + host + path);
  out.push_back(other + host + path);
  out.push_back(scheme + Upper(host) + path);
  out.push_back(scheme + host + (scheme == "http://" ? ":80" : ":443") + path);
  out.push_back(scheme + host + path + "#top");
  const size_t letter = path.find_first_of("abcdefghijklmnopqrstuvwxyz");
  if (letter != std::string::npos) {
    char enc[4];
    std::snprintf(enc, sizeof enc, "%%%02X", static_cast<unsigned char>(path[letter]));
    out.push_back(scheme + host + path.substr(0, letter) + enc + path.substr(letter + 1));
  }
  if (whole_host) {
    out.push_back(scheme + "login." + host + "/account/verify.php?id=1");
    out.push_back(scheme + host + "/index.html");
  }
  return out;
}

int Main(int argc, char** argv) {
  uint64_t entries = 10000000, urls = 200000;
  std::string dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--entries")) entries = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--urls")) urls = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--out")) dir = argv[i + 1];
  }
  if (dir.empty() || entries == 0 || urls == 0) {
    std::fprintf(stderr, "usage: bench_corpus --entries N --urls M --out DIR\n");
    return 4;
  }
  const std::string stamp = "entries=" + std::to_string(entries) + " urls=" + std::to_string(urls) + " v1\n";
  {
    std::ifstream in(dir + "/stamp");
    std::string have((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (have == stamp) {
      std::fprintf(stderr, "bench_corpus: %s is current\n", dir.c_str());
      return 0;
    }
  }
  if (std::system(("mkdir -p '" + dir + "'").c_str()) != 0) return 1;
  std::remove((dir + "/stamp").c_str());
  std::vector<std::string> must_hit;
  {
    std::ofstream list(dir + "/list.txt", std::ios::binary | std::ios::trunc);
    CorpusGenerator gen(1);
    for (uint64_t i = 0; i < entries; ++i) {
      std::string e = gen.ListEntry();
      list << e << '\n';
      if (i % kMustHitEvery == 0) {
        for (std::string& s : MustHitSpellings(e)) must_hit.push_back(std::move(s));
      }
    }
    if (!list) return 1;
  }
  {
    std::ofstream out(dir + "/urls.txt", std::ios::binary | std::ios::trunc);
    CorpusGenerator browse(2);
    for (uint64_t i = 0; i < urls; ++i) out << browse.BrowsingUrl() << '\n';
    if (!out) return 1;
  }
  SnapshotBuildOptions o;
  o.list = "bench";
  o.inputs = {"plain:" + dir + "/list.txt"};
  o.out_path = dir + "/list.ugs";
  auto report = BuildSnapshotFile(o);
  if (!report.ok()) {
    std::fprintf(stderr, "bench_corpus: %s\n", report.status().ToString().c_str());
    return 1;
  }
  // Keep only the spellings urlguard itself finds (all of them, unless the list builder rejected the entry):
  // the file is the yardstick for the exact-string designs.
  auto checker = Checker::Open({o.out_path});
  if (!checker.ok()) return 1;
  std::ofstream out(dir + "/must_hit.txt", std::ios::binary | std::ios::trunc);
  uint64_t kept = 0;
  for (const std::string& s : must_hit) {
    if ((*checker)->Check(s).kind != VerdictKind::kHit) continue;
    out << s << '\n';
    ++kept;
  }
  std::fprintf(stderr, "bench_corpus: %llu entries (%llu rejected), %llu bytes; %llu URLs; %llu of %zu must-hit "
               "spellings found by urlguard\n",
               static_cast<unsigned long long>(entries), static_cast<unsigned long long>(report->rejected),
               static_cast<unsigned long long>(report->bytes), static_cast<unsigned long long>(urls),
               static_cast<unsigned long long>(kept), must_hit.size());
  std::ofstream(dir + "/stamp", std::ios::trunc) << stamp;
  return 0;
}

}  // namespace
}  // namespace urlguard::bench

int main(int argc, char** argv) { return urlguard::bench::Main(argc, argv); }
