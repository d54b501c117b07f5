// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `page_load_bench --dir DIR [--pages N] [--seconds-per-page S] [--json]`: how many verification requests a
// client sends per 1000 clean page loads, and how that trades against the snapshot's size (the false-positive
// rate it is built for). Issue 11 target: <= 10 per 1000 page loads.
//
// Browsing model (deterministic; every figure below is a flag-free constant in this file):
//   - kSites sites with Zipf(1) popularity (a few sites get most visits, as web traffic studies report); a page
//     load picks a site, then one of its kPagesPerSite pages (Zipf(1) again);
//   - each page pulls kSubresources = 40 subresources: 20 of the site's own kAssetsPerSite static files (Zipf:
//     the same scripts and styles on every page), 15 from a pool of kThirdPartyHosts shared CDN / analytics /
//     font / ad hosts (Zipf over hosts and over each host's kThirdPartyPaths files), and 5 unique to the page
//     (images with a per-page query);
//   - host names and paths come from bench/corpus.cc's browsing generator (so they are clean: random names
//     that collide with the list only by chance).
// Client model: exactly the decision path of urlguard::Client (client/client.cc, client/verifier.h, the result
// cache of docs/cache-schema.md): every URL is looked up locally (Checker::Check on the same snapshot bytes); a
// local miss is final; a local hit is decided from the result cache when every hit's 4-byte prefix has a live
// negative entry, else one verify request is sent for the URL and the answer ("not listed") is cached per
// prefix for the negative cache time (kNegativeCacheSeconds: the reference server's default, under the
// client's cap). The clock advances --seconds-per-page per page load (default 30 s: 1000 page loads are a
// day's browsing of about 8 hours), so cache entries do expire during the run.
//
// The list is DIR/list.txt from bench_corpus; it is built at each false-positive target (kFpRates) into
// DIR/list-fp<rate>.ugs (kept between runs).
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "bench/corpus.h"
#include "urlguard/checker.h"
#include "urlguard/publish.h"

namespace urlguard::bench {
namespace {

constexpr size_t kSites = 200000;
constexpr size_t kPagesPerSite = 200;
constexpr size_t kAssetsPerSite = 25;
constexpr size_t kThirdPartyHosts = 300;
constexpr size_t kThirdPartyPaths = 20;
constexpr int kOwnAssets = 20, kThirdParty = 15, kUnique = 5;
constexpr int kSubresources = kOwnAssets + kThirdParty + kUnique;
static_assert(kSubresources == 40);
constexpr int64_t kNegativeCacheSeconds = 1800;  // include/urlguard/server.h negative_cache_seconds default
constexpr const char* kFpRates[] = {"1e-3", "3e-4", "1e-4", "3e-5"};

// Zipf(1) over n items: CDF table, binary search.
class Zipf {
 public:
  explicit Zipf(size_t n) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) cdf_[i] = (sum += 1.0 / static_cast<double>(i + 1));
    for (double& c : cdf_) c /= sum;
  }
  size_t Pick(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::min(cdf_.size() - 1, static_cast<size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) -
                                                          cdf_.begin()));
  }

 private:
  std::vector<double> cdf_;
};

// "https://host/path?q" -> "https://host" and "/path?q".
void SplitUrl(const std::string& url, std::string* origin, std::string* path) {
  const size_t host = url.find("://") + 3;
  const size_t slash = url.find('/', host);
  *origin = url.substr(0, slash);
  *path = slash == std::string::npos ? "/" : url.substr(slash);
}

struct Site {
  std::string origin;
  std::vector<std::string> pages, assets;
};

// A site, made the same way every time from its index.
Site MakeSite(uint64_t index, size_t pages, size_t assets) {
  CorpusGenerator gen(1000003 + index * 7919);
  Site s;
  std::string path;
  SplitUrl(gen.BrowsingUrl(), &s.origin, &path);
  for (size_t i = 0; i < pages; ++i) {
    std::string o;
    SplitUrl(gen.BrowsingUrl(), &o, &path);
    s.pages.push_back(s.origin + path);
  }
  static const char* kExt[] = {".js", ".css", ".png", ".svg", ".woff2"};
  for (size_t i = 0; i < assets; ++i) {
    std::string o;
    SplitUrl(gen.BrowsingUrl(), &o, &path);
    while (!path.empty() && (path.back() == '/' || path.find('?') != std::string::npos)) path.pop_back();
    s.assets.push_back(s.origin + "/static" + path + kExt[i % std::size(kExt)]);
  }
  return s;
}

struct Outcome {
  uint64_t urls = 0, distinct_urls = 0, local_hits = 0, verify_requests = 0;
};

Outcome Simulate(const Checker& checker, uint64_t pages, int64_t seconds_per_page) {
  std::mt19937_64 rng(42);
  const Zipf site_pick(kSites), page_pick(kPagesPerSite), asset_pick(kAssetsPerSite), third_pick(kThirdPartyHosts),
      third_path_pick(kThirdPartyPaths);
  std::unordered_map<uint64_t, Site> sites;
  std::vector<Site> third_party;
  for (size_t i = 0; i < kThirdPartyHosts; ++i) third_party.push_back(MakeSite(1u << 30 | i, 0, kThirdPartyPaths));
  std::unordered_map<std::string, int64_t> negative_cache;  // "list/version/prefix" -> expiry
  Outcome o;
  int64_t now = 0;
  std::vector<std::string> requests;
  std::unordered_set<std::string> distinct;
  for (uint64_t p = 0; p < pages; ++p, now += seconds_per_page) {
    const uint64_t site_index = site_pick.Pick(rng);
    auto it = sites.find(site_index);
    if (it == sites.end()) it = sites.emplace(site_index, MakeSite(site_index, kPagesPerSite, kAssetsPerSite)).first;
    const Site& site = it->second;
    requests.clear();
    requests.push_back(site.pages[page_pick.Pick(rng)]);
    for (int i = 0; i < kOwnAssets; ++i) requests.push_back(site.assets[asset_pick.Pick(rng)]);
    for (int i = 0; i < kThirdParty; ++i) {
      requests.push_back(third_party[third_pick.Pick(rng)].assets[third_path_pick.Pick(rng)]);
    }
    for (int i = 0; i < kUnique; ++i) {
      requests.push_back(site.origin + "/img/" + std::to_string(rng() % 1000000000) + ".jpg?w=" +
                         std::to_string(64 << (rng() % 5)));
    }
    for (const std::string& url : requests) {
      ++o.urls;
      distinct.insert(url);
      const Verdict v = checker.Check(url);
      if (v.kind != VerdictKind::kHit) continue;
      ++o.local_hits;
      bool cached = true;
      for (const Match& m : v.matches) {
        auto c = negative_cache.find(m.list + "/" + std::to_string(m.list_version) + "/" + m.sha256_hex.substr(0, 8));
        cached = cached && c != negative_cache.end() && c->second > now;
      }
      if (cached) continue;
      ++o.verify_requests;
      for (const Match& m : v.matches) {
        negative_cache[m.list + "/" + std::to_string(m.list_version) + "/" + m.sha256_hex.substr(0, 8)] =
            now + kNegativeCacheSeconds;
      }
    }
  }
  o.distinct_urls = distinct.size();
  return o;
}

int Main(int argc, char** argv) {
  std::string dir;
  uint64_t pages = 20000;
  int64_t seconds_per_page = 30;
  bool json = std::getenv("URLGUARD_BENCH_JSON") != nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    else if (!std::strcmp(argv[i], "--pages") && i + 1 < argc) pages = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--seconds-per-page") && i + 1 < argc) seconds_per_page = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--json")) json = true;
  }
  if (dir.empty() || pages == 0) {
    std::fprintf(stderr, "usage: page_load_bench --dir DIR (from bench_corpus) [--pages N] [--seconds-per-page S] "
                         "[--json]\n");
    return 4;
  }
  std::printf("verify requests per 1000 clean page loads (page + %d subresources, %llu page loads, %lld s per page, "
              "negative cache %lld s)\n",
              kSubresources, static_cast<unsigned long long>(pages), static_cast<long long>(seconds_per_page),
              static_cast<long long>(kNegativeCacheSeconds));
  std::printf("| fp target per URL | snapshot bytes | local hits / 1000 pages | verify requests / 1000 pages |\n"
              "|---|---|---|---|\n");
  std::string curve, rows;
  uint64_t urls = 0, distinct = 0;
  double main_value = -1, main_hits = 0, main_bytes = 0;
  for (const char* rate : kFpRates) {
    const std::string path = dir + "/list-fp" + rate + ".ugs";
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
      SnapshotBuildOptions o;
      o.list = "bench";
      o.inputs = {"plain:" + dir + "/list.txt"};
      o.out_path = path;
      o.fp_rate = std::strtod(rate, nullptr);
      auto r = BuildSnapshotFile(o);
      if (!r.ok()) {
        std::fprintf(stderr, "page_load_bench: %s (run bench_corpus --out %s first)\n", r.status().ToString().c_str(),
                     dir.c_str());
        return 1;
      }
      stat(path.c_str(), &st);
    }
    auto checker = Checker::Open({path});
    if (!checker.ok()) return 1;
    const Outcome out = Simulate(**checker, pages, seconds_per_page);
    const double per_1000 = static_cast<double>(out.verify_requests) * 1000.0 / static_cast<double>(pages);
    const double hits_1000 = static_cast<double>(out.local_hits) * 1000.0 / static_cast<double>(pages);
    std::printf("| %s | %lld | %.1f | **%.2f** |\n", rate, static_cast<long long>(st.st_size), hits_1000, per_1000);
    urls = out.urls;
    distinct = out.distinct_urls;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s\"fp_%s\": %.2f", curve.empty() ? "" : ", ", rate, per_1000);
    curve += buf;
    if (main_value < 0) {
      main_value = per_1000;
      main_hits = hits_1000;
      main_bytes = static_cast<double>(st.st_size);
    }
    char row[400];
    std::snprintf(row, sizeof row, "{\"row\": \"verify_per_1000_pages_fp_%s\", \"value\": %.2f, \"unit\": \"req\", "
                  "\"baselines\": {\"snapshot_MB\": %.2f, \"local_hits\": %.2f}, \"note\": \"fp target %s per URL\"}\n",
                  rate, per_1000, static_cast<double>(st.st_size) / 1e6, hits_1000, rate);
    rows += row;
  }
  std::printf("%llu URLs checked, %llu distinct\n", static_cast<unsigned long long>(urls),
              static_cast<unsigned long long>(distinct));
  if (json) {
    std::fputs(rows.c_str(), stdout);
    std::printf("{\"row\": \"verify_per_1000_pages\", \"value\": %.2f, \"unit\": \"req\", \"baselines\": "
                "{\"without_result_cache\": %.2f, %s}, \"note\": \"default fp 1e-3 (%.1f MB); page + 40 "
                "subresources, Zipf sites, %llu page loads, %llu distinct URLs\"}\n",
                main_value, main_hits, curve.c_str(), main_bytes / 1e6, static_cast<unsigned long long>(pages),
                static_cast<unsigned long long>(distinct));
  }
  return 0;
}

}  // namespace
}  // namespace urlguard::bench

int main(int argc, char** argv) { return urlguard::bench::Main(argc, argv); }
