// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "bench/corpus.h"

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <numeric>
#include <string_view>

namespace urlguard::bench {
namespace {

struct Weighted {
  const char* value;
  int weight;
};

// Share of registrations per TLD, roughly as public zone statistics report them (com dominant).
constexpr Weighted kTlds[] = {{"com", 450}, {"org", 50},   {"net", 45},   {"de", 35},  {"co.uk", 25},
                              {"ru", 25},   {"io", 15},    {"xyz", 15},   {"info", 12}, {"top", 12},
                              {"fr", 12},   {"jp", 12},    {"com.br", 12}, {"nl", 10}, {"it", 10},
                              {"pl", 8},    {"com.au", 8}, {"in", 8},     {"online", 6}, {"shop", 6},
                              {"co", 6},    {"me", 5},     {"cn", 10},    {"ca", 8},   {"es", 6}};
constexpr const char* kWords[] = {"login", "account", "secure", "update", "verify", "signin", "bank", "pay",
                                  "wp-admin", "wp-content", "uploads", "images", "static", "js", "css",
                                  "index", "home", "blog", "news", "products", "item", "cart", "checkout",
                                  "api", "v1", "user", "profile", "search", "download", "files", "docs"};
constexpr const char* kExtensions[] = {".html", ".php", ".js", ".exe", ".zip", ".aspx", ".png", ""};

}  // namespace

std::string CorpusGenerator::Label(int min_len, int max_len) {
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789-";
  int len = min_len + static_cast<int>(Next() % static_cast<uint64_t>(max_len - min_len + 1));
  std::string s;
  for (int i = 0; i < len; ++i) {
    char c = kChars[Next() % (i == 0 || i == len - 1 ? 36 : 37)];  // no leading/trailing '-'
    s.push_back(c);
  }
  return s;
}

std::string CorpusGenerator::Tld() {
  int total = 0;
  for (const auto& t : kTlds) total += t.weight;
  int pick = static_cast<int>(Next() % static_cast<uint64_t>(total));
  for (const auto& t : kTlds) {
    if ((pick -= t.weight) < 0) return t.value;
  }
  return "com";
}

std::string CorpusGenerator::Ipv4() {
  return std::to_string(1 + Next() % 223) + "." + std::to_string(Next() % 256) + "." + std::to_string(Next() % 256) +
         "." + std::to_string(1 + Next() % 254);
}

std::string CorpusGenerator::Host(bool browsing) {
  if (browsing && Chance(0.01)) {  // IDN
    return "www.m\xC3\xBC" + Label(3, 9) + "." + Tld();
  }
  std::string registrable = Label(browsing ? 4 : 6, browsing ? 12 : 16) + "." + Tld();
  double r = static_cast<double>(Next() % 1000) / 1000;
  if (browsing) {
    if (r < 0.30) return registrable;
    if (r < 0.70) return "www." + registrable;
    if (r < 0.90) return Label(2, 8) + "." + registrable;
    if (r < 0.98) return Label(2, 8) + "." + Label(2, 8) + "." + registrable;
    return Label(2, 6) + "." + Label(2, 6) + "." + Label(2, 6) + "." + registrable;
  }
  if (r < 0.45) return registrable;
  if (r < 0.60) return "www." + registrable;
  if (r < 0.90) return Label(3, 10) + "." + registrable;
  return Label(3, 10) + "." + Label(3, 10) + "." + registrable;
}

std::string CorpusGenerator::Path(bool browsing) {
  int depth;
  double r = static_cast<double>(Next() % 1000) / 1000;
  if (browsing) {
    depth = r < 0.15 ? 0 : r < 0.40 ? 1 : r < 0.65 ? 2 : r < 0.85 ? 3 : r < 0.95 ? 4 : 5 + static_cast<int>(Next() % 3);
  } else {
    depth = r < 0.35 ? 1 : r < 0.70 ? 2 : r < 0.90 ? 3 : 4;
  }
  std::string p = "/";
  for (int i = 0; i < depth; ++i) {
    p += Chance(0.5) ? std::string(kWords[Next() % std::size(kWords)]) : Label(3, 12);
    if (i + 1 < depth) {
      p += "/";
    } else if (Chance(0.6)) {
      p += kExtensions[Next() % std::size(kExtensions)];
    } else {
      p += "/";
    }
  }
  return p;
}

std::string CorpusGenerator::Query() {
  std::string q = "?";
  int params = 1 + static_cast<int>(Next() % 3);
  for (int i = 0; i < params; ++i) {
    if (i) q += "&";
    q += Label(1, 6) + "=" + Label(1, 16);
  }
  return q;
}

std::string CorpusGenerator::ListEntry() {
  double r = static_cast<double>(Next() % 1000) / 1000;
  if (r < 0.40) return Host(false);
  if (r < 0.95) {
    std::string url = (Chance(0.5) ? "https://" : "http://") + Host(false) + Path(false);
    if (Chance(0.25)) url += Query();
    return url;
  }
  if (r < 0.985) return Ipv4();
  if (r < 0.995) {
    std::string ip = std::to_string(1 + Next() % 223) + "." + std::to_string(Next() % 256) + "." +
                     std::to_string(Next() % 256) + ".0/24";
    return ip;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "2001:db8:%x:%x::%x", static_cast<unsigned>(Next() % 65536),
                static_cast<unsigned>(Next() % 65536), static_cast<unsigned>(1 + Next() % 65535));
  return buf;
}

std::string CorpusGenerator::BrowsingUrl() {
  std::string host = Chance(0.02) ? Ipv4() : Host(true);
  std::string url = (Chance(0.8) ? "https://" : "http://") + host + Path(true);
  if (Chance(0.35)) url += Query();
  if (Chance(0.05)) url += "#" + Label(2, 8);
  return url;
}

std::string CorpusGenerator::ChatMessage(int urls) {
  static const char* kFiller[] = {"hey", "look at", "this is", "lol", "check", "did you see", "new post:",
                                  "thanks!", "meeting at 10.30", "v1.2.3 is out", "see", "ok"};
  std::string m;
  for (int i = 0; i < urls; ++i) {
    m += kFiller[Next() % std::size(kFiller)];
    m += ' ';
    double r = static_cast<double>(Next() % 100) / 100;
    if (r < 0.6) {
      m += BrowsingUrl();
    } else if (r < 0.8) {
      m += "www." + Label(4, 10) + ".com/" + Label(3, 8);
    } else if (r < 0.95) {
      m += Label(4, 10) + ".com";
    } else {
      m += "hxxp://" + Label(4, 10) + "[.]com/x";
    }
    m += Chance(0.5) ? ", " : " ";
  }
  m += kFiller[Next() % std::size(kFiller)];
  return m;
}

}  // namespace urlguard::bench

// ---- index-addressed generators (ListCorpus, ChangeSet, BrowsingCorpus) ---------------------------------

namespace urlguard::bench {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a fresh, well-mixed stream per (seed, index) at the cost of one add
// per draw; mt19937_64 would need 312 words of seeding per entry.
class FastRng {
 public:
  FastRng(uint64_t seed, uint64_t index) : state_(Mix(seed * 0x9E3779B97F4A7C15ull ^ Mix(index + 0x632BE59BD9B4E019ull))) {}

  uint64_t Next() { return Mix(state_ += 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-40 for the small n used here).
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }
  uint64_t PerMille() { return Below(1000); }
  bool Chance(uint64_t per_mille) { return PerMille() < per_mille; }

  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

constexpr char kLabelChars[] = "abcdefghijklmnopqrstuvwxyz0123456789-";

// kTlds as a cumulative table; no entry is a suffix of another ("co.uk" but not "uk"), which ListCorpus's
// uniqueness argument needs (checked once in the constructor of the table).
struct TldTable {
  int cumulative[std::size(kTlds)];
  int total = 0;
  TldTable() {
    for (size_t i = 0; i < std::size(kTlds); ++i) cumulative[i] = total += kTlds[i].weight;
    for (const auto& a : kTlds) {
      for (const auto& b : kTlds) {
        std::string_view x(a.value), y(b.value);
        if (x != y && x.size() > y.size() && x.substr(x.size() - y.size()) == y && x[x.size() - y.size() - 1] == '.') {
          std::abort();  // a suffix TLD would make two hosts of different indices equal
        }
      }
    }
  }
};

const TldTable& Tlds() {
  static const TldTable table;
  return table;
}

void AppendLabel(FastRng& rng, int min_len, int max_len, std::string* out) {
  const int len = min_len + static_cast<int>(rng.Below(static_cast<uint64_t>(max_len - min_len + 1)));
  for (int i = 0; i < len; ++i) out->push_back(kLabelChars[rng.Below(i == 0 || i == len - 1 ? 36 : 37)]);
}

void AppendTld(FastRng& rng, std::string* out) {
  const TldTable& t = Tlds();
  const int pick = static_cast<int>(rng.Below(static_cast<uint64_t>(t.total)));
  size_t k = 0;
  while (t.cumulative[k] <= pick) ++k;
  out->append(kTlds[k].value);
}

void AppendDecimal(uint64_t v, std::string* out) {
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) out->push_back(buf[--n]);
}

void AppendHex(uint64_t v, std::string* out) {
  char buf[24];
  int n = 0;
  do {
    buf[n++] = "0123456789abcdef"[v % 16];
    v /= 16;
  } while (v != 0);
  while (n > 0) out->push_back(buf[--n]);
}

// A bijection of [0, 2^40): add, multiply by an odd constant, xor-shift right — each step invertible modulo
// 2^40. Its value in base 36, 8 digits (36^8 > 2^40), is the token that makes a registrable label unique.
constexpr uint64_t kTokenMask = (uint64_t{1} << 40) - 1;
void AppendToken(uint64_t i, uint64_t seed, std::string* out) {
  uint64_t x = (i + seed * 0x5851F42D4C957F2Dull) & kTokenMask;
  x = (x * 0x9E3779B97F4A7C15ull) & kTokenMask;
  x ^= x >> 21;
  x = (x * 0xBF58476D1CE4E5B9ull) & kTokenMask;
  x ^= x >> 19;
  char digits[8];
  for (int d = 7; d >= 0; --d) {
    digits[d] = kLabelChars[x % 36];
    x /= 36;
  }
  out->append(digits, 8);
}

// Host of list entry i: [sub.]* + 0-8 random characters + token(i) + "." + TLD. Shares of subdomain depth as
// CorpusGenerator::Host(false).
void AppendListHost(uint64_t i, uint64_t seed, FastRng& rng, std::string* out) {
  const uint64_t r = rng.PerMille();
  if (r < 450) {
  } else if (r < 600) {
    out->append("www.");
  } else {
    AppendLabel(rng, 3, 10, out);
    out->push_back('.');
    if (r >= 900) {
      AppendLabel(rng, 3, 10, out);
      out->push_back('.');
    }
  }
  const uint64_t extra = rng.Below(9);
  for (uint64_t k = 0; k < extra; ++k) out->push_back(kLabelChars[rng.Below(36)]);
  AppendToken(i, seed, out);
  out->push_back('.');
  AppendTld(rng, out);
}

void AppendBrowsingHost(FastRng& rng, std::string* out) {
  if (rng.Chance(10)) {  // IDN
    out->append("www.m\xC3\xBC");
    AppendLabel(rng, 3, 9, out);
    out->push_back('.');
    AppendTld(rng, out);
    return;
  }
  const uint64_t r = rng.PerMille();
  const int subs = r < 300 ? 0 : r < 700 ? -1 : r < 900 ? 1 : r < 980 ? 2 : 3;  // -1: "www."
  if (subs < 0) out->append("www.");
  for (int k = 0; k < subs; ++k) {
    AppendLabel(rng, 2, subs == 3 ? 6 : 8, out);
    out->push_back('.');
  }
  AppendLabel(rng, 4, 12, out);
  out->push_back('.');
  AppendTld(rng, out);
}

void AppendPath(FastRng& rng, bool browsing, std::string* out) {
  const uint64_t r = rng.PerMille();
  int depth;
  if (browsing) {
    depth = r < 150 ? 0 : r < 400 ? 1 : r < 650 ? 2 : r < 850 ? 3 : r < 950 ? 4 : 5 + static_cast<int>(rng.Below(3));
  } else {
    depth = r < 350 ? 1 : r < 700 ? 2 : r < 900 ? 3 : 4;
  }
  out->push_back('/');
  for (int i = 0; i < depth; ++i) {
    if (rng.Chance(500)) {
      out->append(kWords[rng.Below(std::size(kWords))]);
    } else {
      AppendLabel(rng, 3, 12, out);
    }
    if (i + 1 < depth) {
      out->push_back('/');
    } else if (rng.Chance(600)) {
      out->append(kExtensions[rng.Below(std::size(kExtensions))]);
    } else {
      out->push_back('/');
    }
  }
}

// BrowsingMix::kDeep's host: 1-4 subdomain labels over a registrable label and a top-level domain ("co.uk"
// counts as one suffix here, as it would for a reader; the expressions see its labels).
void AppendDeepHost(FastRng& rng, std::string* out) {
  const uint64_t subs = 1 + rng.Below(4);
  for (uint64_t k = 0; k < subs; ++k) {
    if (k == 0 && rng.Chance(300)) {
      out->append("www");
    } else {
      AppendLabel(rng, 2, 10, out);
    }
    out->push_back('.');
  }
  AppendLabel(rng, 4, 12, out);
  out->push_back('.');
  AppendTld(rng, out);
}

// BrowsingMix::kDeep's path: 2-8 segments, the last a file name on 60%.
void AppendDeepPath(FastRng& rng, std::string* out) {
  const uint64_t depth = 2 + rng.Below(7);
  for (uint64_t i = 0; i < depth; ++i) {
    out->push_back('/');
    if (rng.Chance(400)) {
      out->append(kWords[rng.Below(std::size(kWords))]);
    } else {
      AppendLabel(rng, 2, 12, out);
    }
  }
  if (rng.Chance(600)) {
    out->append(kExtensions[rng.Below(std::size(kExtensions) - 1)]);  // the last extension is ""
  } else {
    out->push_back('/');
  }
}

void AppendQuery(FastRng& rng, std::string* out) {
  out->push_back('?');
  const uint64_t params = 1 + rng.Below(3);
  for (uint64_t i = 0; i < params; ++i) {
    if (i) out->push_back('&');
    AppendLabel(rng, 1, 6, out);
    out->push_back('=');
    AppendLabel(rng, 1, 16, out);
  }
}

// Entry kinds by slot = (i mod 1000) * 617 mod 1000 (617 is coprime to 1000: a permutation of the residues,
// so the kinds interleave). Per-kind counter of entry i: (i / 1000) * slots of the kind + rank of the slot.
enum class Kind { kDomain, kUrl, kIpv4, kIpv4Range, kIpv6 };
constexpr uint64_t kDomainEnd = 400, kUrlEnd = 950, kIpv4End = 985, kRangeEnd = 995;

Kind KindOf(uint64_t i, uint64_t* counter) {
  const uint64_t slot = (i % 1000) * 617 % 1000, block = i / 1000;
  if (slot < kDomainEnd) return Kind::kDomain;
  if (slot < kUrlEnd) return Kind::kUrl;
  if (slot < kIpv4End) {
    *counter = block * (kIpv4End - kUrlEnd) + (slot - kUrlEnd);
    return Kind::kIpv4;
  }
  if (slot < kRangeEnd) {
    *counter = block * (kRangeEnd - kIpv4End) + (slot - kIpv4End);
    return Kind::kIpv4Range;
  }
  *counter = block * (1000 - kRangeEnd) + (slot - kRangeEnd);
  return Kind::kIpv6;
}

// Affine bijections k -> (k * a + b) mod m onto the address ranges; a is coprime to m.
constexpr uint64_t kIpv4Space = uint64_t{223} * 65536 * 254;       // 1-223 . x . x . 1-254
constexpr uint64_t kRangeSpace = uint64_t{223} * 65536;            // 1-223 . x . x . 0/24
constexpr uint64_t kIpv6Space = uint64_t{65536} * 65536 * 65535;   // 2001:db8:X:Y::Z, Z in 1-65535
constexpr uint64_t kAffineA = 2654435761;  // prime, not a factor of any space above
static_assert(std::gcd(kAffineA, kIpv4Space) == 1 && std::gcd(kAffineA, kRangeSpace) == 1 &&
              std::gcd(kAffineA, kIpv6Space) == 1);
static_assert(ListCorpus::kMaxEntries / 1000 * (kRangeEnd - kIpv4End) < kRangeSpace,
              "the /24 kind would repeat networks below kMaxEntries");

uint64_t Affine(uint64_t k, uint64_t seed, uint64_t space) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(k) * kAffineA + seed * 0x2545F4914F6CDD1Dull) % space);
}

void AppendIpv4(uint64_t k, uint64_t seed, std::string* out) {
  uint64_t m = Affine(k, seed, kIpv4Space);
  AppendDecimal(1 + m / (65536 * 254), out);
  m %= 65536 * 254;
  out->push_back('.');
  AppendDecimal(m / (256 * 254), out);
  m %= 256 * 254;
  out->push_back('.');
  AppendDecimal(m / 254, out);
  out->push_back('.');
  AppendDecimal(1 + m % 254, out);
}

void AppendRange(uint64_t k, uint64_t seed, std::string* out) {
  const uint64_t m = Affine(k, seed, kRangeSpace);
  AppendDecimal(1 + m / 65536, out);
  out->push_back('.');
  AppendDecimal((m / 256) % 256, out);
  out->push_back('.');
  AppendDecimal(m % 256, out);
}

void AppendIpv6(uint64_t k, uint64_t seed, std::string* out) {
  const uint64_t m = Affine(k, seed, kIpv6Space);
  out->append("2001:db8:");
  AppendHex(m / (uint64_t{65536} * 65535), out);
  out->push_back(':');
  AppendHex((m / 65535) % 65536, out);
  out->append("::");
  AppendHex(1 + m % 65535, out);
}

}  // namespace

void ListCorpus::AppendEntry(uint64_t i, std::string* out) const {
  assert(i < kMaxEntries);
  FastRng rng(seed_, i);
  uint64_t k = 0;
  switch (KindOf(i, &k)) {
    case Kind::kDomain:
      AppendListHost(i, seed_, rng, out);
      return;
    case Kind::kUrl:
      out->append(rng.Chance(500) ? "https://" : "http://");
      AppendListHost(i, seed_, rng, out);
      AppendPath(rng, /*browsing=*/false, out);
      if (rng.Chance(250)) AppendQuery(rng, out);
      return;
    case Kind::kIpv4:
      AppendIpv4(k, seed_, out);
      return;
    case Kind::kIpv4Range:
      AppendRange(k, seed_, out);
      out->append(".0/24");
      return;
    case Kind::kIpv6:
      AppendIpv6(k, seed_, out);
      return;
  }
}

bool ListCorpus::AppendHitUrl(uint64_t i, uint64_t salt, std::string* out) const {
  FastRng rng(seed_ ^ 0xA0761D6478BD642Full, salt);
  uint64_t k = 0;
  switch (KindOf(i, &k)) {
    case Kind::kUrl:
      AppendEntry(i, out);
      return true;
    case Kind::kDomain:
      out->append("https://");
      AppendEntry(i, out);
      break;
    case Kind::kIpv4:
      out->append("http://");
      AppendIpv4(k, seed_, out);
      break;
    case Kind::kIpv4Range:  // any address of the network hits the range
      out->append("http://");
      AppendRange(k, seed_, out);
      out->push_back('.');
      AppendDecimal(1 + rng.Below(254), out);
      break;
    case Kind::kIpv6:
      out->append("http://[");
      AppendIpv6(k, seed_, out);
      out->push_back(']');
      break;
  }
  AppendPath(rng, /*browsing=*/true, out);
  return true;
}

ChangeSet::ChangeSet(uint64_t entries, uint64_t removed, uint64_t added)
    : entries_(entries), removed_(removed), added_(added), stride_(removed == 0 ? 0 : entries / removed) {
  assert(removed <= entries && entries + added <= ListCorpus::kMaxEntries);
}

void BrowsingCorpus::AppendUrl(uint64_t j, std::string* out) const {
  FastRng rng(seed_, j);
  if (entries_ != 0 && rng.Below(1000000) < hit_per_million_) {
    list_->AppendHitUrl(rng.Below(entries_), j, out);
    return;
  }
  out->append(rng.Chance(800) ? "https://" : "http://");
  if (mix_ == BrowsingMix::kDeep) {
    AppendDeepHost(rng, out);
    AppendDeepPath(rng, out);
    if (rng.Chance(700)) AppendQuery(rng, out);
    return;
  }
  if (rng.Chance(20)) {
    AppendIpv4(rng.Below(kIpv4Space), seed_, out);
  } else {
    AppendBrowsingHost(rng, out);
  }
  AppendPath(rng, /*browsing=*/true, out);
  if (rng.Chance(350)) AppendQuery(rng, out);
  if (rng.Chance(50)) {
    out->push_back('#');
    AppendLabel(rng, 2, 8, out);
  }
}

}  // namespace urlguard::bench
