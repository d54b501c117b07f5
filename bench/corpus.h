// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Deterministic generators of realistic threat-list entries and browsing URLs for the benchmarks.
//
// The shapes follow public descriptions of real data: threat feeds (URLhaus, PhishTank, OpenPhish dumps) are
// mostly full URLs on a host with a path, then bare domains, then IPs/CIDRs; browsing URLs mostly https, with
// "www." or no subdomain, 0-5 path segments, a query on about a third of them, a few IP and IDN hosts. Names
// are random, so the list and the browsing set do not overlap except by (measured) chance: a browsing URL whose
// expressions contain a listed key is counted as a true hit, not as a false positive.
//
// Two generators share those shapes:
//   - CorpusGenerator: a sequential stream (lookup_bench and the other in-memory benchmarks). Entries are not
//     guaranteed unique (random names; repeats are rare and the builder drops them).
//   - ListCorpus / ChangeSet / BrowsingCorpus: index-addressed, for lists of any size up to
//     ListCorpus::kMaxEntries (1.4 billion): entry i is a pure function of (seed, i), so a list of 100 M
//     entries is written by streaming i = 0..N-1 in constant memory, distinct indices give distinct keys by
//     construction (no set of seen entries), and version 2 of a list (ChangeSet) or a browsing URL that hits
//     entry i is computed without holding the list. bench/gen_corpus.cc writes them as feed files.
#ifndef URLGUARD_BENCH_CORPUS_H_
#define URLGUARD_BENCH_CORPUS_H_

#include <cstdint>
#include <random>
#include <string>
#include <string_view>

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

// The list of the scale benchmarks: entry i of an N-entry list, for 0 <= i < N <= kMaxEntries.
//
// Mix (the same as CorpusGenerator::ListEntry): 40% domains, 55% URLs with paths (a quarter with a query),
// 3.5% IPv4 addresses, 1% IPv4 /24 ranges, 0.5% IPv6 addresses. The kind is fixed by i mod 1000 (interleaved,
// so every prefix of the stream has the mix). Uniqueness: every domain and URL entry's registrable label ends
// with a fixed-width token, the base-36 form of a bijection of i on 40 bits, and the top-level domains are
// chosen so that none is a suffix of another ("co.uk" but no "uk"), so the host names the index; the IP kinds
// are affine bijections of their per-kind counter onto the address ranges (1-223.x.x.1-254, /24 networks of
// 1-223.x.x, 2001:db8:X:Y::Z). Thread-safe (const, no state but the seed).
class ListCorpus {
 public:
  // The /24 kind has 223 * 65536 networks and takes 1% of the entries: 1.46e9 entries; kept below that.
  static constexpr uint64_t kMaxEntries = 1400000000;
  // Longest entry AppendEntry writes (host <= 60 bytes, path <= 4 segments of <= 17, query <= 72).
  static constexpr size_t kMaxEntryBytes = 256;

  explicit ListCorpus(uint64_t seed = 1) : seed_(seed) {}

  // Appends entry i (no newline) to *out. Requires i < kMaxEntries. Allocation-free when *out has room.
  void AppendEntry(uint64_t i, std::string* out) const;
  std::string Entry(uint64_t i) const {
    std::string s;
    AppendEntry(i, &s);
    return s;
  }
  // Appends "https://" + entry i's host (domain and URL entries) or address (IPv4, IPv6) + a browsing path, a
  // URL whose lookup finds entry i: the entry itself for URL entries; false (nothing appended) for /24 ranges.
  bool AppendHitUrl(uint64_t i, uint64_t salt, std::string* out) const;

 private:
  uint64_t seed_;
};

// Version 2 of an N-entry ListCorpus list: `removed` entries of [0, N) dropped (spread evenly over the
// indices, hence at random over the keys) and `added` new ones, the indices N .. N + added - 1. Version 2 is
// the indices [0, N + added) that are not Removed(). Requires removed <= N and N + added <= kMaxEntries.
class ChangeSet {
 public:
  ChangeSet(uint64_t entries, uint64_t removed, uint64_t added);

  uint64_t entries() const { return entries_; }
  uint64_t removed() const { return removed_; }
  uint64_t added() const { return added_; }
  // One past the last index of version 2.
  uint64_t end() const { return entries_ + added_; }
  // True for the indices of [0, N) that version 2 drops.
  bool Removed(uint64_t i) const { return stride_ != 0 && i < removed_ * stride_ && i % stride_ == stride_ - 1; }
  // True for the indices version 2 adds.
  bool Added(uint64_t i) const { return i >= entries_ && i < end(); }

 private:
  uint64_t entries_, removed_, added_, stride_;
};

// The shape of the clean (non-hit) URLs of a BrowsingCorpus.
enum class BrowsingMix {
  // CorpusGenerator::BrowsingUrl's shapes: mostly "www." or no subdomain, 0-7 path segments, a query on 35%.
  // About 1.9 whole-host and 4.3 other expressions per URL (the mix the sizing before issue 20 was fitted to).
  kBench,
  // Held-out traffic that probes more: 3-6 host labels under the top-level domain (so 2-5 host strings),
  // 2-8 path segments (ending in a file name on 60%), a query on 70%, no IP hosts. Near the Safe Browsing
  // maximum of 5 hosts x 6 paths on its heavy end; bench/fp_bench measures false positives on it.
  kDeep,
};

// Browsing URLs for lookups against an N-entry ListCorpus list: URL j is a pure function of (seed, j). A
// fraction `hit_rate` of them hit a listed entry (ListCorpus::AppendHitUrl of a random listed index); the rest
// have the shapes of `mix` (random names: a listed key is hit only by chance).
class BrowsingCorpus {
 public:
  BrowsingCorpus(const ListCorpus* list, uint64_t entries, double hit_rate, uint64_t seed = 2,
                 BrowsingMix mix = BrowsingMix::kBench)
      : list_(list),
        entries_(entries),
        hit_per_million_(static_cast<uint64_t>(hit_rate * 1e6)),
        seed_(seed),
        mix_(mix) {}

  // Appends URL j (no newline) to *out.
  void AppendUrl(uint64_t j, std::string* out) const;

 private:
  const ListCorpus* list_;
  uint64_t entries_;
  uint64_t hit_per_million_;
  uint64_t seed_;
  BrowsingMix mix_;
};

}  // namespace urlguard::bench

#endif  // URLGUARD_BENCH_CORPUS_H_
