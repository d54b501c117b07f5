// Copyright urlguard authors.
#include "bench/corpus.h"

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
