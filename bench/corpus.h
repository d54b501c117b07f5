// Copyright urlguard authors.
//
// Deterministic generators of realistic threat-list entries and browsing URLs for the benchmarks.
//
// The shapes follow public descriptions of real data: threat feeds (URLhaus, PhishTank, OpenPhish dumps) are
// mostly full URLs on a host with a path, then bare domains, then IPs/CIDRs; browsing URLs mostly https, with
// "www." or no subdomain, 0-5 path segments, a query on about a third of them, a few IP and IDN hosts. Names
// are random, so the list and the browsing set do not overlap except by (measured) chance: a browsing URL whose
// expressions contain a listed key is counted as a true hit, not as a false positive.
#ifndef URLGUARD_BENCH_CORPUS_H_
#define URLGUARD_BENCH_CORPUS_H_

#include <cstdint>
#include <random>
#include <string>

namespace urlguard::bench {

class CorpusGenerator {
 public:
  explicit CorpusGenerator(uint64_t seed) : rng_(seed) {}

  // One threat-list entry: ~55% URLs with paths, ~40% domains, ~5% IPv4/IPv6 addresses and CIDR ranges.
  std::string ListEntry();
  // One URL as a browser would request it.
  std::string BrowsingUrl();
  // A chat message of about 100 bytes that contains `urls` links in the forms people write them.
  std::string ChatMessage(int urls);

 private:
  uint64_t Next() { return rng_(); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::string Label(int min_len, int max_len);
  std::string Tld();
  std::string Host(bool browsing);
  std::string Path(bool browsing);
  std::string Query();
  std::string Ipv4();

  std::mt19937_64 rng_;
};

}  // namespace urlguard::bench

#endif  // URLGUARD_BENCH_CORPUS_H_
