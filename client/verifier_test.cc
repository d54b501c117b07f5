// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The verification client against a real HTTP server on loopback (cpp-httplib on 127.0.0.1, port picked by
// the system) through the real libcurl fetcher, and a real SQLite cache file.
#include "client/verifier.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "platform/env.h"
#include "tests/sqlite_test_util.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using Json = nlohmann::json;
using testing::WithPrefix;

std::string MatchJson(const Sha256Digest& sha, const std::string& list, const std::string& layer,
                      const std::string& threat, int64_t cache_seconds) {
  return "{\"sha256\":\"" + ToHex(sha) + "\",\"list\":\"" + list + "\",\"layer\":\"" + layer +
         "\",\"threat\":\"" + threat + "\",\"cache_seconds\":" + std::to_string(cache_seconds) + "}";
}

// ---- pure parts
// -----------------------------------------------------------------------------------------------

TEST(MakeVerifyRequestTest, LowerCaseEightDigitPrefixesInOrder) {
  EXPECT_EQ(MakeVerifyRequest({0xa1b2c3d4, 0, 0xffffffff, 0x00000abc}),
            "{\"prefixes\":[\"a1b2c3d4\",\"00000000\",\"ffffffff\",\"00000abc\"]}");
  EXPECT_EQ(MakeVerifyRequest({7}), "{\"prefixes\":[\"00000007\"]}");
  std::vector<uint32_t> thirty(kMaxVerifyRequestPrefixes, 0x01020304);
  const Json parsed = Json::parse(MakeVerifyRequest(thirty));
  EXPECT_EQ(parsed["prefixes"].size(), 30u);
}

TEST(ParseVerifyResponseTest, ReadsEveryField) {
  const Sha256Digest a = Sha256("evil.example/login.php");
  const Sha256Digest b = Sha256("evil.example/");
  std::string upper = ToHex(b);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string body = "{\"matches\":[" + MatchJson(a, "phishing", "url", "social_engineering", 300) +
                           ",{\"sha256\":\"" + upper +
                           "\",\"list\":\"malware\",\"layer\":\"domain\",\"threat\":\"malware\","
                           "\"cache_seconds\":0,\"future_member\":[1,2,{}]}],"
                           "\"negative_cache_seconds\":1800,\"server\":\"ignored\"}";
  Result<VerifyAnswer> answer = ParseVerifyResponse(body);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer->matches.size(), 2u);
  EXPECT_EQ(answer->matches[0], (VerifyMatch{a, "phishing", "url", "social_engineering", 300}));
  EXPECT_EQ(answer->matches[1], (VerifyMatch{b, "malware", "domain", "malware", 0}));
  EXPECT_EQ(answer->negative_cache_seconds, 1800);
  EXPECT_TRUE(answer->list_versions.empty());  // a server before "lists" named none

  Result<VerifyAnswer> versioned =
      ParseVerifyResponse("{\"matches\":[],\"negative_cache_seconds\":60,\"lists\":{\"phishing\":12,\"malware\":0}}");
  ASSERT_TRUE(versioned.ok()) << versioned.status().ToString();
  EXPECT_EQ(versioned->list_versions, (std::map<std::string, uint64_t>{{"phishing", 12}, {"malware", 0}}));

  Result<VerifyAnswer> empty = ParseVerifyResponse(" {\"negative_cache_seconds\":0,\"matches\":[]} \n");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->matches.empty());
  EXPECT_EQ(empty->negative_cache_seconds, 0);

  const std::string at_cap = "{\"matches\":[" + MatchJson(a, "p", "ip", "t", kMaxVerifyCacheSeconds) +
                             "],\"negative_cache_seconds\":" + std::to_string(kMaxVerifyCacheSeconds) + "}";
  EXPECT_TRUE(ParseVerifyResponse(at_cap).ok());
}

TEST(ParseVerifyResponseTest, RefusesEverythingElseWithoutEchoingInput) {
  const std::string h = ToHex(Sha256("x"));
  auto with_match = [&](const std::string& match) {
    return "{\"matches\":[" + match + "],\"negative_cache_seconds\":60}";
  };
  struct Case {
    std::string body;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"", "not valid JSON"},
      {"{\"matches\":[],\"negative_cache_seconds\":60", "not valid JSON"},
      {"{\"matches\":[],\"negative_cache_seconds\":60} trailing", "not valid JSON"},
      {"[]", "not a JSON object"},
      {"\"SECRET-TOKEN\"", "not a JSON object"},
      {"{\"negative_cache_seconds\":60}", "matches: missing"},
      {"{\"matches\":{},\"negative_cache_seconds\":60}", "matches: not an array"},
      {"{\"matches\":[]}", "negative_cache_seconds: missing"},
      {"{\"matches\":[],\"negative_cache_seconds\":60.0}", "negative_cache_seconds: not an integer"},
      {"{\"matches\":[],\"negative_cache_seconds\":6e1}", "negative_cache_seconds: not an integer"},
      {"{\"matches\":[],\"negative_cache_seconds\":\"60\"}", "negative_cache_seconds: not an integer"},
      {"{\"matches\":[],\"negative_cache_seconds\":-1}", "negative_cache_seconds: negative"},
      {"{\"matches\":[],\"negative_cache_seconds\":2592001}", "negative_cache_seconds: over"},
      {"{\"matches\":[],\"negative_cache_seconds\":99999999999999999999999}", "not an integer"},
      {"{\"matches\":[],\"matches\":[],\"negative_cache_seconds\":60}", "duplicate member"},
      {"{\"matches\":[],\"negative_cache_seconds\":60,\"lists\":[]}", "lists: not an object"},
      {"{\"matches\":[],\"negative_cache_seconds\":60,\"lists\":{\"SECRET-TOKEN\":1}}", "lists: a name"},
      {"{\"matches\":[],\"negative_cache_seconds\":60,\"lists\":{\"p\":-1}}", "lists.p: not a non-negative"},
      {"{\"matches\":[],\"negative_cache_seconds\":60,\"lists\":{\"p\":1.0}}", "lists.p: not a non-negative"},
      {"{\"matches\":[],\"negative_cache_seconds\":60,\"lists\":{\"p\":\"1\"}}", "lists.p: not a non-negative"},
      {"{\"matches\":[],\"negative_cache_seconds\":60,\"lists\":{\"p\":1,\"p\":2}}", "duplicate member"},
      {with_match("[]"), "matches[0]: not an object"},
      {with_match("{\"list\":\"p\",\"layer\":\"url\",\"threat\":\"t\",\"cache_seconds\":1}"),
       "matches[0].sha256: missing"},
      {with_match("{\"sha256\":7,\"list\":\"p\",\"layer\":\"url\",\"threat\":\"t\",\"cache_seconds\":1}"),
       "matches[0].sha256: missing or not a string"},
      {with_match(MatchJson(Sha256("x"), "p", "url", "t", 1).replace(12, 2, "zz")),
       "matches[0].sha256: not 64 hex digits"},
      {with_match("{\"sha256\":\"" + h.substr(0, 62) +
                  "\",\"list\":\"p\",\"layer\":\"url\",\"threat\":\"t\",\"cache_seconds\":1}"),
       "matches[0].sha256: not 64 hex digits"},
      {with_match(MatchJson(Sha256("x"), "Phishing", "url", "t", 1)), "matches[0].list"},
      {with_match(MatchJson(Sha256("x"), std::string(65, 'a'), "url", "t", 1)), "matches[0].list"},
      {with_match(MatchJson(Sha256("x"), "p", "path", "t", 1)), "matches[0].layer"},
      {with_match(MatchJson(Sha256("x"), "p", "url", "SECRET-TOKEN", 1)), "matches[0].threat"},
      {with_match(MatchJson(Sha256("x"), "p", "url", "", 1)), "matches[0].threat"},
      {with_match(MatchJson(Sha256("x"), "p", "url", "t", -5)), "matches[0].cache_seconds: negative"},
      {with_match(MatchJson(Sha256("x"), "p", "url", "t", kMaxVerifyCacheSeconds + 1)),
       "matches[0].cache_seconds: over"},
      {with_match("{\"sha256\":\"" + h + "\",\"list\":\"p\",\"layer\":\"url\",\"threat\":\"t\"}"),
       "matches[0].cache_seconds: missing"},
      {with_match("{\"sha256\":\"" + h + "\",\"sha256\":\"" + h +
                  "\",\"list\":\"p\",\"layer\":\"url\",\"threat\":\"t\",\"cache_seconds\":1}"),
       "duplicate member"},
      {with_match(MatchJson(Sha256("x"), "p", "url", "t", 1) + ",{\"sha256\":\"" + h +
                  "\",\"list\":\"p\",\"layer\":\"url\",\"threat\":\"t\",\"cache_seconds\":1.5}"),
       "matches[1].cache_seconds: not an integer"},
  };
  for (const Case& c : cases) {
    Result<VerifyAnswer> r = ParseVerifyResponse(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << c.body;
    EXPECT_NE(r.status().message().find(c.message_part), std::string::npos)
        << c.body << " -> " << r.status().message();
    EXPECT_EQ(r.status().message().rfind("verify response: ", 0), 0u) << r.status().message();
    EXPECT_EQ(r.status().message().find("SECRET"), std::string::npos) << r.status().message();
  }
}

TEST(ParseVerifyResponseTest, CapsSizeAndMatches) {
  std::string many = "{\"matches\":[";
  for (size_t i = 0; i <= kMaxVerifyMatches; ++i) {
    if (i > 0) many += ',';
    many += MatchJson(WithPrefix(static_cast<uint32_t>(i), 0), "p", "url", "t", 1);
  }
  many += "],\"negative_cache_seconds\":1}";
  ASSERT_LE(many.size(), kMaxVerifyResponseBytes);
  Result<VerifyAnswer> r = ParseVerifyResponse(many);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);

  std::string padded = "{\"matches\":[],\"negative_cache_seconds\":1,\"pad\":\"";
  padded += std::string(kMaxVerifyResponseBytes, 'x') + "\"}";
  r = ParseVerifyResponse(padded);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);

  std::string lists = "{\"matches\":[],\"negative_cache_seconds\":1,\"lists\":{";
  for (size_t i = 0; i <= kMaxVerifyListVersions; ++i) lists += (i > 0 ? ",\"l" : "\"l") + std::to_string(i) + "\":1";
  r = ParseVerifyResponse(lists + "}}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);

  // Deep nesting inside an ignored member parses without exhausting the stack.
  std::string deep = "{\"matches\":[],\"negative_cache_seconds\":1,\"x\":" + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  EXPECT_TRUE(ParseVerifyResponse(deep).ok());
}

TEST(DecisionNameTest, Names) {
  EXPECT_STREQ(DecisionName(Decision::kSafe), "safe");
  EXPECT_STREQ(DecisionName(Decision::kSafeVerified), "safe_verified");
  EXPECT_STREQ(DecisionName(Decision::kMalicious), "malicious");
  EXPECT_STREQ(DecisionName(Decision::kUnverifiedHit), "unverified_hit");
}

// ---- a verify server on loopback
// ------------------------------------------------------------------------------

// Answers POST /v1/verify like the reference server from a set of full hashes, records every request body,
// and can be told to misbehave.
class VerifyServer {
 public:
  struct Record {
    Sha256Digest sha256;
    std::string list, layer, threat;
  };
  // Returns true when it produced the response itself.
  using Override = std::function<bool(const httplib::Request&, httplib::Response&)>;

  VerifyServer() {
    server_.Post("/v1/verify",
                 [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    EXPECT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() only stops a server that is already running (cpp-httplib 0.11 has no wait_until_ready()).
    while (port_ > 0 && !server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~VerifyServer() {
    Unblock();
    server_.stop();
    thread_.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  void Add(const Sha256Digest& sha256, const std::string& list, const std::string& layer,
           const std::string& threat) {
    std::lock_guard<std::mutex> lock(mu_);
    records_.push_back({sha256, list, layer, threat});
  }
  void SetCacheSeconds(int64_t positive, int64_t negative) {
    std::lock_guard<std::mutex> lock(mu_);
    positive_cache_seconds_ = positive;
    negative_cache_seconds_ = negative;
  }
  // The "lists" member of the answers: the list versions the server says it answers from. Default: every list
  // the tests use, at a version newer than any test hit's.
  void SetListVersions(std::map<std::string, uint64_t> versions) {
    std::lock_guard<std::mutex> lock(mu_);
    list_versions_ = std::move(versions);
  }
  void SetOverride(Override o) {
    std::lock_guard<std::mutex> lock(mu_);
    override_ = std::move(o);
  }
  // Makes every request wait until Unblock() (or the server's destruction).
  void Block() {
    std::lock_guard<std::mutex> lock(mu_);
    blocked_ = true;
  }
  void Unblock() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocked_ = false;
    }
    cv_.notify_all();
  }

  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(bodies_.size());
  }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mu_);
    return bodies_;
  }
  std::vector<std::string> content_types() {
    std::lock_guard<std::mutex> lock(mu_);
    return content_types_;
  }

  // The prefixes of a request body, checking on the way that the body is exactly {"prefixes":[<8 hex>...]}:
  // nothing else can have left the device.
  static std::vector<uint32_t> PrefixesOf(const std::string& body) {
    std::vector<uint32_t> out;
    const Json doc = Json::parse(body, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << body;
    if (!doc.is_object()) return out;
    EXPECT_EQ(doc.size(), 1u) << "the request carries more than the prefixes: " << body;
    const auto it = doc.find("prefixes");
    EXPECT_TRUE(it != doc.end() && it->is_array()) << body;
    if (it == doc.end() || !it->is_array()) return out;
    EXPECT_GE(it->size(), 1u);
    EXPECT_LE(it->size(), kMaxVerifyRequestPrefixes);
    for (const Json& p : *it) {
      EXPECT_TRUE(p.is_string()) << body;
      if (!p.is_string()) continue;
      const std::string& s = p.get_ref<const std::string&>();
      EXPECT_EQ(s.size(), 8u) << "not a 4-byte prefix: " << s;
      uint8_t bytes[4];
      EXPECT_TRUE(s.size() == 8 && FromHex(s, bytes, 4)) << s;
      out.push_back(static_cast<uint32_t>(std::stoul(s, nullptr, 16)));
    }
    return out;
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    Override o;
    {
      std::unique_lock<std::mutex> lock(mu_);
      bodies_.push_back(req.body);
      content_types_.push_back(req.get_header_value("Content-Type"));
      // Bounded: the destructor unblocks; the bound only keeps a broken test from hanging forever.
      cv_.wait_for(lock, std::chrono::seconds(30), [this] { return !blocked_; });
      o = override_;
    }
    if (o && o(req, res)) return;
    std::lock_guard<std::mutex> lock(mu_);
    const std::vector<uint32_t> prefixes = PrefixesOf(req.body);
    const std::set<uint32_t> asked(prefixes.begin(), prefixes.end());
    std::string out = "{\"matches\":[";
    bool first = true;
    for (const Record& r : records_) {
      if (asked.count(DigestPrefix32(r.sha256)) == 0) continue;
      if (!first) out += ',';
      first = false;
      out += MatchJson(r.sha256, r.list, r.layer, r.threat, positive_cache_seconds_);
    }
    out += "],\"negative_cache_seconds\":" + std::to_string(negative_cache_seconds_) + ",\"lists\":{";
    first = true;
    for (const auto& [list, version] : list_versions_) {
      if (!first) out += ',';
      first = false;
      out += "\"" + list + "\":" + std::to_string(version);
    }
    out += "}}";
    res.set_content(out, "application/json");
  }

  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;

  std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::vector<Record> records_;
  int64_t positive_cache_seconds_ = 3600;
  int64_t negative_cache_seconds_ = 1800;
  std::map<std::string, uint64_t> list_versions_ = {{"ip-threats", 1000}, {"malware", 1000}, {"phishing", 1000}};
  Override override_;
  bool blocked_ = false;
  std::vector<std::string> bodies_;
  std::vector<std::string> content_types_;
};

constexpr int64_t kNow = 1700000000;

class VerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("verifier_test");
    cache_ = ResultCache::Open(dir_ + "/cache.sqlite");
    ASSERT_TRUE(cache_->enabled()) << cache_->status().ToString();
    fetcher_ = MakeFetcher(5000);
  }
  static std::unique_ptr<Fetcher> MakeFetcher(long total_timeout_ms) {
    FetcherOptions options;
    options.connect_timeout_ms = 2000;
    options.total_timeout_ms = total_timeout_ms;
    Result<std::unique_ptr<Fetcher>> f = NewCurlFetcher(options);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }
  DecideResult DecideAt(const std::vector<LocalHit>& hits, int64_t now, ResultCache* cache) {
    return Decide(hits, now, cache, fetcher_.get(), server_.base_url());
  }
  DecideResult DecideAt(const std::vector<LocalHit>& hits, int64_t now) {
    return DecideAt(hits, now, cache_.get());
  }

  // The server first: destroyed last, after the fetcher has closed its kept-alive connections (a server
  // stopping with an idle connection open waits out its keep-alive timeout).
  VerifyServer server_;
  std::string dir_;
  std::unique_ptr<ResultCache> cache_;
  std::unique_ptr<Fetcher> fetcher_;
};

// ---- Verify
// ---------------------------------------------------------------------------------------------------

TEST_F(VerifierTest, VerifyPostsThePrefixesAndReadsTheAnswer) {
  const Sha256Digest bad = WithPrefix(0xa1b2c3d4, 9);
  server_.Add(bad, "phishing", "url", "social_engineering");
  server_.Add(WithPrefix(0x99999999, 1), "phishing", "url", "social_engineering");  // not asked
  server_.SetCacheSeconds(300, 600);
  int64_t retry_after = 77;
  Result<VerifyAnswer> answer =
      Verify(*fetcher_, server_.base_url() + "/", {0xa1b2c3d4, 0x00000001}, &retry_after);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(retry_after, -1);
  ASSERT_EQ(answer->matches.size(), 1u);
  EXPECT_EQ(answer->matches[0], (VerifyMatch{bad, "phishing", "url", "social_engineering", 300}));
  EXPECT_EQ(answer->negative_cache_seconds, 600);
  ASSERT_EQ(server_.requests(), 1);
  EXPECT_EQ(server_.bodies()[0], "{\"prefixes\":[\"a1b2c3d4\",\"00000001\"]}");
  EXPECT_EQ(server_.content_types()[0], "application/json");
}

TEST_F(VerifierTest, VerifyRefusesBadPrefixCountsWithoutAsking) {
  Result<VerifyAnswer> none = Verify(*fetcher_, server_.base_url(), {});
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  Result<VerifyAnswer> many = Verify(*fetcher_, server_.base_url(), std::vector<uint32_t>(31, 1));
  EXPECT_EQ(many.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(server_.requests(), 0);
}

TEST_F(VerifierTest, VerifyMapsHttpFailures) {
  struct Case {
    int status;
    const char* retry_after;
    StatusCode code;
    int64_t retry_after_seconds;
  };
  for (const Case& c :
       {Case{429, "120", StatusCode::kUnavailable, 120}, Case{503, "7", StatusCode::kUnavailable, 7},
        Case{500, nullptr, StatusCode::kUnavailable, -1},
        Case{404, nullptr, StatusCode::kFailedPrecondition, -1},
        Case{400, nullptr, StatusCode::kFailedPrecondition, -1},
        Case{302, nullptr, StatusCode::kFailedPrecondition, -1}}) {
    server_.SetOverride([&c](const httplib::Request&, httplib::Response& res) {
      res.status = c.status;
      if (c.retry_after != nullptr) res.set_header("Retry-After", c.retry_after);
      if (c.status == 302) res.set_header("Location", "http://127.0.0.1:1/elsewhere");
      res.set_content("{\"error\":\"no\"}", "application/json");
      return true;
    });
    int64_t retry_after = 0;
    Result<VerifyAnswer> r = Verify(*fetcher_, server_.base_url(), {1}, &retry_after);
    ASSERT_FALSE(r.ok()) << c.status;
    EXPECT_EQ(r.status().code(), c.code) << c.status << ": " << r.status().ToString();
    EXPECT_EQ(retry_after, c.retry_after_seconds) << c.status;
    EXPECT_NE(r.status().message().find("HTTP " + std::to_string(c.status)), std::string::npos);
  }
}

TEST_F(VerifierTest, VerifyRefusesMalformedOversizedAndUnaskedAnswers) {
  server_.SetOverride([](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"matches\": [", "application/json");
    return true;
  });
  Result<VerifyAnswer> r = Verify(*fetcher_, server_.base_url(), {1});
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(r.status().message(), "verify: verify response: not valid JSON");

  server_.SetOverride([](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(kMaxVerifyResponseBytes + 1000, ' '), "application/json");
    return true;
  });
  r = Verify(*fetcher_, server_.base_url(), {1});
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();

  // A server that answers with a full hash of a prefix nobody asked about is not trusted.
  server_.SetOverride([](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"matches\":[" + MatchJson(WithPrefix(2, 0), "p", "url", "t", 60) +
                        "],\"negative_cache_seconds\":60}",
                    "application/json");
    return true;
  });
  r = Verify(*fetcher_, server_.base_url(), {1});
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("not asked"), std::string::npos);
}

TEST_F(VerifierTest, VerifyReportsAServerThatIsNotThere) {
  std::string base;
  {
    VerifyServer gone;
    base = gone.base_url();
  }
  Result<VerifyAnswer> r = Verify(*fetcher_, base, {1});
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_EQ(r.status().message().rfind("verify: ", 0), 0u);
}

// ---- Decide
// ---------------------------------------------------------------------------------------------------

TEST_F(VerifierTest, NoHitsIsSafeWithoutAskingAnyone) {
  const DecideResult r = DecideAt({}, kNow);
  EXPECT_EQ(r.decision, Decision::kSafe);
  EXPECT_TRUE(r.error.ok());
  EXPECT_EQ(server_.requests(), 0);
  EXPECT_EQ(cache_->hits() + cache_->misses(), 0u);
}

TEST_F(VerifierTest, FalsePositiveIsVerifiedSafeAndOnlyPrefixesLeaveTheDevice) {
  const std::string url = "http://innocent.example/some/page.html?q=private";
  const std::vector<std::string> expressions = {"innocent.example/some/page.html?q=private",
                                                "innocent.example/"};
  std::vector<LocalHit> hits;
  for (const std::string& e : expressions) hits.push_back({"phishing", 12, Sha256(e), false});
  // The server knows another full hash with the first hit's prefix (the local filter's false positive).
  Sha256Digest neighbour = hits[0].full_hash;
  neighbour[31] ^= 0xff;
  server_.Add(neighbour, "phishing", "url", "social_engineering");

  const DecideResult r = DecideAt(hits, kNow);
  EXPECT_EQ(r.decision, Decision::kSafeVerified) << r.error.ToString();
  EXPECT_FALSE(r.from_cache);
  EXPECT_TRUE(r.error.ok());

  ASSERT_EQ(server_.requests(), 1);
  const std::string body = server_.bodies()[0];
  EXPECT_EQ(VerifyServer::PrefixesOf(body),
            (std::vector<uint32_t>{DigestPrefix32(hits[0].full_hash), DigestPrefix32(hits[1].full_hash)}));
  EXPECT_EQ(body.find("innocent"), std::string::npos) << body;
  EXPECT_EQ(body.find(url), std::string::npos) << body;
  for (const LocalHit& hit : hits) {
    const std::string full = ToHex(hit.full_hash);
    EXPECT_EQ(body.find(full), std::string::npos) << "a full hash left the device: " << body;
    EXPECT_EQ(body.find(full.substr(0, 10)), std::string::npos) << "more than 4 bytes of a hash: " << body;
  }

  // The negative answers are cached: the same URL again costs no request.
  const DecideResult again = DecideAt(hits, kNow + 60);
  EXPECT_EQ(again.decision, Decision::kSafeVerified);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(server_.requests(), 1);
  // The neighbour is remembered as a positive entry of the same list version.
  EXPECT_EQ(cache_->Find(neighbour, "phishing", 12, kNow).answer, ResultCache::Answer::kMalicious);
}

TEST_F(VerifierTest, ThreatIsMaliciousAndCached) {
  const Sha256Digest clean = Sha256("bad.example/index.html");
  const Sha256Digest bad = Sha256("bad.example/");
  server_.Add(bad, "malware", "domain", "malware_distribution");
  const std::vector<LocalHit> hits = {{"malware", 3, clean, false}, {"malware", 3, bad, false}};

  const DecideResult r = DecideAt(hits, kNow);
  EXPECT_EQ(r.decision, Decision::kMalicious);
  EXPECT_EQ(r.list, "malware");
  EXPECT_EQ(r.threat, "malware_distribution");
  EXPECT_FALSE(r.from_cache);
  EXPECT_FALSE(r.emergency);
  EXPECT_EQ(server_.requests(), 1);

  const DecideResult cached = DecideAt(hits, kNow + 10);
  EXPECT_EQ(cached.decision, Decision::kMalicious);
  EXPECT_EQ(cached.threat, "malware_distribution");
  EXPECT_TRUE(cached.from_cache);
  EXPECT_EQ(server_.requests(), 1);
}

// The gap between a publish and a verify server loading it: the client installed version 12 of "phishing",
// the server still answers from 11, where the new entry is not. Its "no match" must not become a cached
// safe_verified (docs/threat-model.md "verify server behind the client's version").
TEST_F(VerifierTest, AnAnswerFromAnOlderListVersionVerifiesNothingAndCachesNothing) {
  const Sha256Digest fresh = Sha256("fresh-threat.example/");
  const std::vector<LocalHit> hits = {{"phishing", 12, fresh, false}};
  server_.SetListVersions({{"phishing", 11}, {"malware", 40}});
  DecideResult r = DecideAt(hits, kNow);
  EXPECT_EQ(r.decision, Decision::kUnverifiedHit);
  EXPECT_EQ(r.error.code(), StatusCode::kUnavailable);
  EXPECT_NE(r.error.message().find("list phishing from version 11, older than the local version 12"),
            std::string::npos)
      << r.error.ToString();
  EXPECT_EQ(cache_->Find(fresh, "phishing", 12, kNow).answer, ResultCache::Answer::kUnknown);
  // Not cached: asked again (a server that does not name the list at all is behind too).
  server_.SetListVersions({{"malware", 40}});
  r = DecideAt(hits, kNow + 1);
  EXPECT_EQ(r.decision, Decision::kUnverifiedHit);
  EXPECT_NE(r.error.message().find("from version none"), std::string::npos) << r.error.ToString();
  EXPECT_EQ(server_.requests(), 2);

  // An older server's match of the hit's own full hash says malicious, but is not cached for version 12 (the
  // entry may be gone from it).
  server_.Add(fresh, "phishing", "domain", "phishing");
  server_.SetListVersions({{"phishing", 11}});
  r = DecideAt(hits, kNow + 2);
  EXPECT_EQ(r.decision, Decision::kMalicious);
  EXPECT_FALSE(r.from_cache);
  EXPECT_EQ(cache_->Find(fresh, "phishing", 12, kNow + 2).answer, ResultCache::Answer::kUnknown);

  // Once the server has loaded version 12 (or a newer one), its answer counts as before.
  server_.SetListVersions({{"phishing", 12}});
  r = DecideAt(hits, kNow + 3);
  EXPECT_EQ(r.decision, Decision::kMalicious) << r.error.ToString();
  EXPECT_EQ(server_.requests(), 4);

  // In one request, the hit in a list the server is current for is decided and cached; the other is not.
  const Sha256Digest fp = Sha256("fp.example/");
  const Sha256Digest other = Sha256("other.example/");
  server_.SetListVersions({{"phishing", 13}, {"malware", 2}});
  r = DecideAt({{"phishing", 13, fp, false}, {"malware", 3, other, false}}, kNow + 4);
  EXPECT_EQ(r.decision, Decision::kUnverifiedHit);
  EXPECT_EQ(server_.requests(), 5);
  EXPECT_EQ(cache_->Find(fp, "phishing", 13, kNow + 4).answer, ResultCache::Answer::kSafe);
  EXPECT_EQ(cache_->Find(other, "malware", 3, kNow + 4).answer, ResultCache::Answer::kUnknown);
}

TEST_F(VerifierTest, AFullHashOfAnotherListDoesNotCount) {
  const Sha256Digest h = Sha256("shared.example/");
  server_.Add(h, "malware", "domain", "malware");
  const DecideResult r = DecideAt({{"phishing", 4, h, false}}, kNow);
  EXPECT_EQ(r.decision, Decision::kSafeVerified);
  // Nothing was stored for the list this URL did not hit (its version is unknown here).
  EXPECT_EQ(cache_->Find(h, "malware", 4, kNow).answer, ResultCache::Answer::kUnknown);
}

TEST_F(VerifierTest, CachedAnswersExpireAndAreAskedAgain) {
  server_.SetCacheSeconds(3600, 100);
  const std::vector<LocalHit> hits = {{"phishing", 1, Sha256("fp.example/"), false}};
  EXPECT_EQ(DecideAt(hits, kNow).decision, Decision::kSafeVerified);
  EXPECT_EQ(server_.requests(), 1);
  EXPECT_TRUE(DecideAt(hits, kNow + 99).from_cache);
  EXPECT_EQ(server_.requests(), 1);
  const DecideResult later = DecideAt(hits, kNow + 100);
  EXPECT_EQ(later.decision, Decision::kSafeVerified);
  EXPECT_FALSE(later.from_cache);
  EXPECT_EQ(server_.requests(), 2);
}

// One lying (or mistaken) answer with a 30-day negative TTL is trusted at most the client's cap (1 h by
// default), and never past the hit list's signed expiry.
TEST_F(VerifierTest, NegativeAnswersAreCachedNoLongerThanTheClientCapOrTheListExpiry) {
  server_.SetCacheSeconds(3600, kMaxVerifyCacheSeconds);  // "safe for 30 days"
  const std::vector<LocalHit> hits = {{"phishing", 1, Sha256("fp.example/"), false}};
  EXPECT_EQ(DecideAt(hits, kNow).decision, Decision::kSafeVerified);
  EXPECT_TRUE(DecideAt(hits, kNow + kDefaultMaxNegativeCacheSeconds - 1).from_cache);
  EXPECT_EQ(server_.requests(), 1);
  EXPECT_FALSE(DecideAt(hits, kNow + kDefaultMaxNegativeCacheSeconds).from_cache);
  EXPECT_EQ(server_.requests(), 2);

  // A configured cap.
  CachePolicy policy;
  policy.max_negative_cache_seconds = 60;
  const std::vector<LocalHit> v2 = {{"phishing", 2, Sha256("fp.example/"), false}};
  EXPECT_FALSE(Decide(v2, kNow, cache_.get(), fetcher_.get(), server_.base_url(), policy).from_cache);
  EXPECT_TRUE(Decide(v2, kNow + 59, cache_.get(), fetcher_.get(), server_.base_url(), policy).from_cache);
  EXPECT_FALSE(Decide(v2, kNow + 60, cache_.get(), fetcher_.get(), server_.base_url(), policy).from_cache);

  // The list version expires in 10 s: nothing about it is cached past that, positive or negative.
  const Sha256Digest threat = Sha256("evil.example/");
  server_.Add(threat, "phishing", "domain", "malware");
  std::vector<LocalHit> v3 = {{"phishing", 3, Sha256("fp.example/"), false, kNow + 10},
                              {"phishing", 3, threat, false, kNow + 10}};
  EXPECT_EQ(DecideAt(v3, kNow).decision, Decision::kMalicious);
  EXPECT_EQ(cache_->Find(threat, "phishing", 3, kNow + 9).answer, ResultCache::Answer::kMalicious);
  EXPECT_EQ(cache_->Find(threat, "phishing", 3, kNow + 10).answer, ResultCache::Answer::kUnknown);
  EXPECT_EQ(cache_->Find(Sha256("fp.example/"), "phishing", 3, kNow + 9).answer, ResultCache::Answer::kSafe);
  EXPECT_EQ(cache_->Find(Sha256("fp.example/"), "phishing", 3, kNow + 10).answer, ResultCache::Answer::kUnknown);
}

TEST_F(VerifierTest, AListVersionChangeAsksAgain) {
  const Sha256Digest h = Sha256("fp.example/");
  EXPECT_EQ(DecideAt({{"phishing", 5, h, false}}, kNow).decision, Decision::kSafeVerified);
  EXPECT_EQ(DecideAt({{"phishing", 5, h, false}}, kNow).decision, Decision::kSafeVerified);
  EXPECT_EQ(server_.requests(), 1);
  // Version 6 added the hash: the "safe" recorded under version 5 must not hide it.
  server_.Add(h, "phishing", "domain", "social_engineering");
  const DecideResult r = DecideAt({{"phishing", 6, h, false}}, kNow);
  EXPECT_EQ(r.decision, Decision::kMalicious);
  EXPECT_EQ(server_.requests(), 2);
}

TEST_F(VerifierTest, NegativeEntryNeverOutlivesAPositiveOfItsPrefix) {
  const Sha256Digest ours = WithPrefix(0x5555aaaa, 1);
  const Sha256Digest theirs = WithPrefix(0x5555aaaa, 2);
  server_.Add(theirs, "phishing", "url", "phish");
  server_.SetCacheSeconds(/*positive=*/10, /*negative=*/1000);
  EXPECT_EQ(DecideAt({{"phishing", 1, ours, false}}, kNow).decision, Decision::kSafeVerified);
  EXPECT_TRUE(DecideAt({{"phishing", 1, ours, false}}, kNow + 9).from_cache);
  EXPECT_EQ(server_.requests(), 1);
  // The positive entry of the same prefix expired at +10: so did the negative entry.
  EXPECT_FALSE(DecideAt({{"phishing", 1, ours, false}}, kNow + 10).from_cache);
  EXPECT_EQ(server_.requests(), 2);
  EXPECT_EQ(cache_->Find(theirs, "phishing", 1, kNow + 10).answer, ResultCache::Answer::kMalicious);

  // A match the server says not to cache at all leaves no negative entry for its prefix.
  server_.SetCacheSeconds(/*positive=*/0, /*negative=*/1000);
  EXPECT_EQ(DecideAt({{"phishing", 2, ours, false}}, kNow).decision, Decision::kSafeVerified);
  EXPECT_EQ(DecideAt({{"phishing", 2, ours, false}}, kNow).decision, Decision::kSafeVerified);
  EXPECT_EQ(server_.requests(), 4);
  EXPECT_EQ(cache_->Find(theirs, "phishing", 2, kNow).answer, ResultCache::Answer::kUnknown);
}

TEST_F(VerifierTest, EmergencyListIsMaliciousWithoutAsking) {
  const Sha256Digest h = Sha256("outbreak.example/");
  const std::vector<LocalHit> hits = {{"phishing", 8, Sha256("other.example/"), false},
                                      {"malware", 2, h, true}};
  const DecideResult r = DecideAt(hits, kNow);
  EXPECT_EQ(r.decision, Decision::kMalicious);
  EXPECT_EQ(r.list, "malware");
  EXPECT_EQ(r.threat, "");
  EXPECT_TRUE(r.emergency);
  EXPECT_EQ(server_.requests(), 0);
  EXPECT_EQ(cache_->hits() + cache_->misses(), 0u);
}

TEST_F(VerifierTest, OnlyUndecidedHitsAreAskedAndDuplicatePrefixesOnce) {
  const Sha256Digest known_safe = WithPrefix(0x10000000, 1);
  const Sha256Digest unknown = WithPrefix(0x20000000, 1);
  cache_->StoreNegative(0x10000000, "phishing", 3, kNow + 100, kNow);
  // The same expression hit in two lists: one prefix in the request.
  const DecideResult r = DecideAt(
      {{"phishing", 3, known_safe, false}, {"phishing", 3, unknown, false}, {"malware", 9, unknown, false}},
      kNow);
  EXPECT_EQ(r.decision, Decision::kSafeVerified);
  ASSERT_EQ(server_.requests(), 1);
  EXPECT_EQ(VerifyServer::PrefixesOf(server_.bodies()[0]), (std::vector<uint32_t>{0x20000000}));
  // Both lists got their negative entry.
  EXPECT_EQ(cache_->Find(unknown, "phishing", 3, kNow).answer, ResultCache::Answer::kSafe);
  EXPECT_EQ(cache_->Find(unknown, "malware", 9, kNow).answer, ResultCache::Answer::kSafe);
}

TEST_F(VerifierTest, ManyPrefixesAreSplitIntoRequestsOfAtMostThirty) {
  std::vector<LocalHit> hits;
  for (uint32_t i = 0; i < 45; ++i) hits.push_back({"ip-threats", 1, WithPrefix(0x0a000000 + i, 0), false});
  server_.Add(hits[40].full_hash, "ip-threats", "ip", "botnet");
  const DecideResult r = DecideAt(hits, kNow);
  EXPECT_EQ(r.decision, Decision::kMalicious);
  EXPECT_EQ(r.threat, "botnet");
  ASSERT_EQ(server_.requests(), 2);
  std::vector<uint32_t> all;
  for (const std::string& body : server_.bodies()) {
    const std::vector<uint32_t> prefixes = VerifyServer::PrefixesOf(body);
    EXPECT_LE(prefixes.size(), kMaxVerifyRequestPrefixes);
    all.insert(all.end(), prefixes.begin(), prefixes.end());
  }
  ASSERT_EQ(all.size(), 45u);
  for (uint32_t i = 0; i < 45; ++i) EXPECT_EQ(all[i], 0x0a000000 + i);
}

TEST_F(VerifierTest, MalformedAnswerIsAnUnverifiedHitAndNothingIsCached) {
  server_.SetOverride([](const httplib::Request&, httplib::Response& res) {
    res.set_content("{\"matches\":\"all of them\",\"negative_cache_seconds\":60}", "application/json");
    return true;
  });
  const std::vector<LocalHit> hits = {{"phishing", 1, Sha256("x.example/"), false}};
  const DecideResult r = DecideAt(hits, kNow);
  EXPECT_EQ(r.decision, Decision::kUnverifiedHit);
  EXPECT_EQ(r.error.code(), StatusCode::kCorruption);
  EXPECT_EQ(r.error.message(), "verify: verify response: matches: not an array");
  EXPECT_EQ(DecideAt(hits, kNow).decision, Decision::kUnverifiedHit);
  EXPECT_EQ(server_.requests(), 2);
}

TEST_F(VerifierTest, ThrottledServerIsAnUnverifiedHitWithItsRetryAfter) {
  server_.SetOverride([](const httplib::Request&, httplib::Response& res) {
    res.status = 429;
    res.set_header("Retry-After", "90");
    return true;
  });
  const DecideResult r = DecideAt({{"phishing", 1, Sha256("x.example/"), false}}, kNow);
  EXPECT_EQ(r.decision, Decision::kUnverifiedHit);
  EXPECT_EQ(r.error.code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.retry_after_seconds, 90);
}

TEST_F(VerifierTest, ServerThatTimesOutIsAnUnverifiedHit) {
  std::unique_ptr<Fetcher> impatient = MakeFetcher(/*total_timeout_ms=*/300);
  ASSERT_NE(impatient, nullptr);
  server_.Block();  // the handler answers only after the test is over
  const DecideResult r = Decide({{"phishing", 1, Sha256("slow.example/"), false}}, kNow, cache_.get(),
                                impatient.get(), server_.base_url());
  server_.Unblock();
  EXPECT_EQ(r.decision, Decision::kUnverifiedHit);
  EXPECT_EQ(r.error.code(), StatusCode::kUnavailable) << r.error.ToString();
  EXPECT_EQ(r.retry_after_seconds, -1);
}

TEST_F(VerifierTest, UnreachableServerIsAnUnverifiedHit) {
  std::string base;
  {
    VerifyServer gone;
    base = gone.base_url();
  }
  const DecideResult r =
      Decide({{"phishing", 1, Sha256("x.example/"), false}}, kNow, cache_.get(), fetcher_.get(), base);
  EXPECT_EQ(r.decision, Decision::kUnverifiedHit);
  EXPECT_EQ(r.error.code(), StatusCode::kUnavailable);
}

TEST_F(VerifierTest, WithoutAFetcherOnlyTheCacheDecides) {
  const Sha256Digest cached_bad = WithPrefix(0x30000000, 1);
  cache_->StorePositive(cached_bad, "phishing", 1, "url", "phish", kNow + 100, kNow);
  const DecideResult bad = Decide({{"phishing", 1, cached_bad, false}}, kNow, cache_.get(), nullptr, "");
  EXPECT_EQ(bad.decision, Decision::kMalicious);
  EXPECT_TRUE(bad.from_cache);
  const DecideResult unknown =
      Decide({{"phishing", 1, WithPrefix(0x40000000, 1), false}}, kNow, cache_.get(), nullptr, "");
  EXPECT_EQ(unknown.decision, Decision::kUnverifiedHit);
  EXPECT_EQ(unknown.error.code(), StatusCode::kUnavailable);
  EXPECT_NE(unknown.error.message().find("no verification server"), std::string::npos);
}

TEST_F(VerifierTest, WithoutACacheEveryHitIsAsked) {
  const std::vector<LocalHit> hits = {{"phishing", 1, Sha256("fp.example/"), false}};
  EXPECT_EQ(DecideAt(hits, kNow, nullptr).decision, Decision::kSafeVerified);
  EXPECT_EQ(DecideAt(hits, kNow, nullptr).decision, Decision::kSafeVerified);
  EXPECT_EQ(server_.requests(), 2);
}

TEST_F(VerifierTest, DisabledCacheStillDecides) {
  const std::string file = dir_ + "/not-a-dir";
  std::ofstream(file) << "x";
  auto disabled = ResultCache::Open(file + "/cache.sqlite");
  ASSERT_FALSE(disabled->enabled());
  const DecideResult r = DecideAt({{"phishing", 1, Sha256("fp.example/"), false}}, kNow, disabled.get());
  EXPECT_EQ(r.decision, Decision::kSafeVerified);
  EXPECT_EQ(server_.requests(), 1);
}

TEST_F(VerifierTest, InvalidHitsAreRefusedWithoutAsking) {
  EXPECT_EQ(DecideAt({{"Bad List", 1, Sha256("x"), false}}, kNow).error.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DecideAt({{"phishing", 0, Sha256("x"), false}}, kNow).decision, Decision::kUnverifiedHit);
  EXPECT_EQ(server_.requests(), 0);
}

}  // namespace
}  // namespace urlguard
