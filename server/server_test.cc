// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Tests of the reference server: a real server on 127.0.0.1 (port 0), real files, a real SQLite store, and
// cpp-httplib clients (plus raw sockets where a client would tidy the request up).
#include "urlguard/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/sha256.h"
#include "format/full_hash_file.h"
#include "http/http_test_util.h"
#include "http/listen_address.h"
#include "platform/env.h"
#include "publish/full_hash_list.h"
#include "server/verify_request.h"

namespace urlguard {
namespace {

// ---- fixtures ---------------------------------------------------------------------------------------------

std::string MakeTempDir() {
  const char* base = std::getenv("URLGUARD_TEST_TMPDIR");
  std::string dir = base != nullptr && *base != '\0' ? base : "/tmp";
  EXPECT_TRUE(Env::Default()->CreateDirs(dir).ok());
  std::string tmpl = dir + "/server_test.XXXXXX";
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

void WriteFile(const std::string& path, const std::string& data) {
  ASSERT_TRUE(Env::Default()->CreateDirs(DirName(path)).ok());
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), path, data).ok()) << path;
}

std::string PrefixHex(const std::string& expression) { return ToHex(Sha256(expression)).substr(0, 8); }

constexpr char kManifest[] =
    R"({"list": "phishing", "version": 7, "entries": {"domain": 2, "url": 3, "ip": 0}})";
constexpr char kSecret[] = "TOP-SECRET-OUTSIDE-PUBLIC";

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = MakeTempDir();
    WriteFile(repo_ + "/public/v1/lists/phishing/manifest.json", kManifest);
    snapshot_ = std::string("UGS1") + std::string(100000, '\x5a') + "tail";
    WriteFile(repo_ + "/public/v1/lists/phishing/snapshot-7.ugs.z", snapshot_);
    WriteFile(repo_ + "/public/v1/lists/malware/manifest.json", "{not json");
    WriteFile(repo_ + "/public/.hidden", "hidden");
    WriteFile(repo_ + "/secret.txt", kSecret);
    WriteFile(repo_ + "/public/empty.txt", "");
    ASSERT_EQ(symlink("../secret.txt", (repo_ + "/public/link-out").c_str()), 0);
    ASSERT_EQ(symlink("v1/lists/phishing/manifest.json", (repo_ + "/public/link-in").c_str()), 0);

    ASSERT_TRUE(Env::Default()->CreateDirs(repo_ + "/private").ok());
    ASSERT_TRUE(Env::Default()->CreateDirs(repo_ + "/private/lists/phishing").ok());
    ASSERT_TRUE(Env::Default()->CreateDirs(repo_ + "/private/lists/malware").ok());
    std::vector<FullHashRecord> phishing = {
        {Sha256("evil.example/"), "phishing", LayerKind::kDomain, "social_engineering"},
        {Sha256("evil.example/login.php"), "phishing", LayerKind::kUrl, "social_engineering"}};
    ASSERT_TRUE(WriteFullHashList(Env::Default(), repo_ + "/private/lists/phishing/7.ugh", "phishing", 7, &phishing).ok());
    std::vector<FullHashRecord> malware = {{Sha256("dropper.example/x.exe"), "malware", LayerKind::kUrl, "malware"}};
    ASSERT_TRUE(WriteFullHashList(Env::Default(), repo_ + "/private/lists/malware/3.ugh", "malware", 3, &malware).ok());
  }

  std::unique_ptr<Server> StartServer(ServerOptions options = {}) {
    options.repo_dir = repo_;
    auto server = Server::Start(options);
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    return server.ok() ? std::move(server).value() : nullptr;
  }

  std::string repo_;
  std::string snapshot_;
};

// Sends `request` verbatim on a new connection and returns everything the server sends until it closes.
std::string RawExchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may cut an oversized request
    sent += static_cast<size_t>(n);
  }
  std::string response;
  char buf[4096];
  while (true) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return response;
}

// Peak resident memory of this process (VmHWM), or -1.
int64_t PeakRssBytes() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  int64_t kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmHWM: %lld kB", reinterpret_cast<long long*>(&kib)) == 1) break;
  }
  std::fclose(f);
  return kib < 0 ? -1 : kib * 1024;
}

// Resets the peak to the current resident size (Linux: "5" > /proc/self/clear_refs). False when unsupported.
bool ResetPeakRss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

int StatusOf(const std::string& raw_response) {
  if (raw_response.compare(0, 9, "HTTP/1.1 ") != 0) return 0;
  return std::atoi(raw_response.c_str() + 9);
}

// ---- pure functions ---------------------------------------------------------------------------------------

TEST(ParseVerifyRequestTest, AcceptsWellFormedBodies) {
  auto r =
      ParseVerifyRequest(R"({"prefixes": ["a1b2c3d4", "00000000", "FFFFFFFF", "a1b2c3d4"], "client": "x"})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, (std::vector<uint32_t>{0xa1b2c3d4u, 0, 0xffffffffu, 0xa1b2c3d4u}));
  std::string thirty = R"({"prefixes": [)";
  for (int i = 0; i < 30; ++i)
    thirty += std::string(i ? "," : "") + "\"0000000" + std::to_string(i % 10) + "\"";
  thirty += "]}";
  EXPECT_EQ(ParseVerifyRequest(thirty)->size(), 30u);
  EXPECT_EQ(*ParseVerifyPrefixList("a1b2c3d4,0000ffff"), (std::vector<uint32_t>{0xa1b2c3d4u, 0xffffu}));
}

TEST(ParseVerifyRequestTest, RejectsMalformedBodies) {
  std::string many = R"({"prefixes": [)";
  for (int i = 0; i < 31; ++i) many += std::string(i ? "," : "") + "\"a1b2c3d4\"";
  many += "]}";
  const std::vector<std::pair<std::string, StatusCode>> cases = {
      {"", StatusCode::kInvalidArgument},
      {"not json", StatusCode::kInvalidArgument},
      {"[\"a1b2c3d4\"]", StatusCode::kInvalidArgument},
      {"{}", StatusCode::kInvalidArgument},
      {R"({"prefixes": []})", StatusCode::kInvalidArgument},
      {R"({"prefixes": "a1b2c3d4"})", StatusCode::kInvalidArgument},
      {R"({"prefixes": [1]})", StatusCode::kInvalidArgument},
      {R"({"prefixes": ["a1b2c3"]})", StatusCode::kInvalidArgument},
      {R"({"prefixes": ["a1b2c3d4e5"]})", StatusCode::kInvalidArgument},
      {R"({"prefixes": ["zzzzzzzz"]})", StatusCode::kInvalidArgument},
      {R"({"prefixes": ["a1b2c3d4"])", StatusCode::kInvalidArgument},  // truncated
      {"{\"prefixes\": [\"a1b2c3\xff\"]}", StatusCode::kInvalidArgument},
      {many, StatusCode::kResourceExhausted},
      {std::string(kMaxVerifyBodyBytes + 1, ' '), StatusCode::kResourceExhausted},
  };
  for (const auto& [body, code] : cases) {
    EXPECT_EQ(ParseVerifyRequest(body).status().code(), code) << body.substr(0, 60);
  }
  for (const char* list :
       {"", ",", "a1b2c3d4,", ",a1b2c3d4", "a1b2c3d4,,a1b2c3d4", "a1b2c3d4 ", "a1b2c3dg"}) {
    EXPECT_EQ(ParseVerifyPrefixList(list).status().code(), StatusCode::kInvalidArgument) << list;
  }
  std::string many_list = "a1b2c3d4";
  for (int i = 0; i < 30; ++i) many_list += ",a1b2c3d4";
  EXPECT_EQ(ParseVerifyPrefixList(many_list).status().code(), StatusCode::kResourceExhausted);
}

// The obvious reference: a DOM parse (what the server did before the SAX handler). The fast parser must agree
// with it on the result and the status code for every body.
Result<std::vector<uint32_t>> ReferenceParseVerifyRequest(std::string_view body) {
  if (body.size() > kMaxVerifyBodyBytes) return Status::ResourceExhausted("too large");
  const nlohmann::json doc = nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Status::InvalidArgument("not an object");
  const auto it = doc.find("prefixes");
  if (it == doc.end() || !it->is_array() || it->empty()) return Status::InvalidArgument("bad prefixes");
  if (it->size() > kMaxVerifyPrefixes) return Status::ResourceExhausted("too many");
  std::vector<uint32_t> out;
  for (const nlohmann::json& e : *it) {
    if (!e.is_string()) return Status::InvalidArgument("not a string");
    const std::string& hex = e.get_ref<const std::string&>();
    uint8_t b[4];
    if (hex.size() != 8 || !FromHex(hex, b, 4)) return Status::InvalidArgument("not hex");
    out.push_back(uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3]);
  }
  return out;
}

TEST(ParseVerifyRequestTest, AgreesWithADomParse) {
  std::string many = R"({"prefixes": [)";
  for (int i = 0; i < 31; ++i) many += std::string(i ? "," : "") + "\"a1b2c3d4\"";
  many += "]}";
  const std::vector<std::string> bodies = {
      R"({"prefixes": ["a1b2c3d4"]})",
      R"({"prefixes": ["a1b2c3d4"], "prefixes": ["00000001", "00000002"]})",  // the last member counts
      R"({"prefixes": [1], "prefixes": ["00000001"]})",
      R"({"prefixes": ["00000001"], "prefixes": 5})",
      R"({"prefixes": ["00000001"], "prefixes": {"a": 1}})",
      R"({"prefixes": ["00000001"], "prefixes": []})",
      R"({"x": {"prefixes": ["00000001"]}, "prefixes": ["00000002"]})",  // nested members are not it
      R"({"x": {"prefixes": ["00000001"]}})",
      R"({"x": [["prefixes"], {"prefixes": 1}], "prefixes": ["0000000a"]})",
      R"({"prefixes": [["a1b2c3d4"]]})",
      R"({"prefixes": [{"a": "a1b2c3d4"}]})",
      R"({"prefixes": ["a1b2c3d4", null]})",
      R"({"prefixes": [true, "zz"]})",
      R"({"prefixes": ["zz", true]})",
      R"({"prefixes": ["\u0061\u0031b2c3d4"]})",  // JSON escapes decode to hex digits
      R"({"prefixes": ["a1b2c3d4"]} trailing)",
      R"({"prefixes": ["a1b2c3d4"], })",
      R"( {"prefixes" : [ "A1B2C3D4" ] } )",
      R"([{"prefixes": ["a1b2c3d4"]}])",
      R"("prefixes")",
      R"(null)",
      R"({"prefixes": [1, 2, 3], "prefixes": ["zzzzzzzz"]})",
      many,
      many.substr(0, many.size() - 2) + ", 5]}",
      "",
  };
  for (const std::string& body : bodies) {
    const auto fast = ParseVerifyRequest(body);
    const auto slow = ReferenceParseVerifyRequest(body);
    ASSERT_EQ(fast.ok(), slow.ok()) << body;
    if (fast.ok()) {
      EXPECT_EQ(*fast, *slow) << body;
    } else {
      EXPECT_EQ(fast.status().code(), slow.status().code()) << body;
    }
  }
}

TEST(IsNumericLoopbackAddressTest, OnlyNumericLoopback) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "127.255.255.255", "::1"}) {
    EXPECT_TRUE(IsNumericLoopbackAddress(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "localhost", "", "::ffff:127.0.0.1",
                           "127.0.0.1 ", "2001:db8::1", "0:0:0:0:0:0:0:2"}) {
    EXPECT_FALSE(IsNumericLoopbackAddress(host)) << host;
  }
}

// ---- static files -----------------------------------------------------------------------------------------

TEST_F(ServerTest, ServesStaticFilesWithEtagAnd304) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());

  auto res = client.Get("/v1/lists/phishing/manifest.json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, kManifest);
  const std::string etag = "\"" + ToHex(Sha256(kManifest)) + "\"";
  EXPECT_EQ(res->get_header_value("ETag"), etag);
  EXPECT_EQ(res->get_header_value("Cache-Control"), "no-cache");
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");

  res = client.Get("/v1/lists/phishing/snapshot-7.ugs.z");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, snapshot_);
  EXPECT_EQ(res->get_header_value("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(res->get_header_value("ETag"), "\"" + ToHex(Sha256(snapshot_)) + "\"");

  for (const std::string& inm : {etag, "W/" + etag, "\"other\", " + etag, std::string("*")}) {
    res = client.Get("/v1/lists/phishing/manifest.json", {{"If-None-Match", inm}});
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 304) << inm;
    EXPECT_TRUE(res->body.empty());
    EXPECT_EQ(res->get_header_value("ETag"), etag);
  }
  res = client.Get("/v1/lists/phishing/manifest.json", {{"If-None-Match", "\"0123\""}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);

  // HEAD: headers only.
  res = client.Head("/v1/lists/phishing/snapshot-7.ugs.z");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(res->body.empty());
  EXPECT_EQ(res->get_header_value("Content-Length"), std::to_string(snapshot_.size()));

  // One range is honoured; several are answered with the whole file.
  res = client.Get("/v1/lists/phishing/snapshot-7.ugs.z", {{"Range", "bytes=0-3"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 206);
  EXPECT_EQ(res->body, "UGS1");
  res = client.Get("/v1/lists/phishing/snapshot-7.ugs.z", {{"Range", "bytes=0-0,2-2,4-4"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, snapshot_);

  // Empty files and symlinks that stay inside public/.
  res = client.Get("/empty.txt");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "");
  res = client.Get("/link-in");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, kManifest);

  // A new manifest (atomic replace) gets a new ETag, and the old one no longer matches.
  const std::string manifest2 = R"({"list": "phishing", "version": 8})";
  WriteFile(repo_ + "/public/v1/lists/phishing/manifest.json", manifest2);
  res = client.Get("/v1/lists/phishing/manifest.json", {{"If-None-Match", etag}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, manifest2);
  EXPECT_EQ(res->get_header_value("ETag"), "\"" + ToHex(Sha256(manifest2)) + "\"");
}

TEST_F(ServerTest, PathTraversalAttemptsAre404) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::vector<std::string> targets = {
      "/../secret.txt",
      "/v1/../../secret.txt",
      "/v1/lists/../../../secret.txt",
      "/%2e%2e/secret.txt",
      "/%2E%2E/%2e%2E/secret.txt",
      "/v1/%2e%2e/%2e%2e/secret.txt",
      "/..%2fsecret.txt",
      "/..%2Fsecret.txt",
      "/..%5csecret.txt",
      "/..\\secret.txt",
      "/v1%2flists%2fphishing%2fmanifest.json",  // a real file, but through encoded slashes
      "/v1/lists/phishing/manifest.json%00.txt",
      "/link-out",
      "//secret.txt",
      "/./secret.txt",
      "/v1/lists/./phishing/manifest.json",
      "/.hidden",
      "/%2ehidden",
      "/etc/passwd",
      "//etc/passwd",
      "/" + repo_ + "/secret.txt",
      "/v1/lists/phishing/",
      "/v1/lists",
      "/",
      "/" + std::string(2000, 'a'),
  };
  for (const std::string& target : targets) {
    const std::string response =
        RawExchange(server->port(), "GET " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(StatusOf(response), 404) << target << "\n" << response.substr(0, 200);
    EXPECT_EQ(response.find(kSecret), std::string::npos) << target;
  }
  // The same request without tricks works: the 404s above are not a broken server.
  const std::string ok =
      RawExchange(server->port(),
                  "GET /v1/lists/phishing/manifest.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(ok), 200);
  // Absolute-form target.
  const std::string absolute = RawExchange(
      server->port(), "GET http://127.0.0.1/secret.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(StatusOf(absolute), 200);
  EXPECT_EQ(absolute.find(kSecret), std::string::npos);
}

// ---- verify API -------------------------------------------------------------------------------------------

TEST_F(ServerTest, VerifyReturnsTheFullHashesOfStoredPrefixes) {
  ServerOptions options;
  options.positive_cache_seconds = 300;
  options.negative_cache_seconds = 600;
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());

  const nlohmann::json request = {{"prefixes",
                                   {PrefixHex("evil.example/login.php"), PrefixHex("good.example/"),
                                    PrefixHex("evil.example/"), "00000000"}}};
  auto res = client.Post("/v1/verify", request.dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  const nlohmann::json body = nlohmann::json::parse(res->body);
  EXPECT_EQ(body["negative_cache_seconds"], 600);
  // The list versions the answer comes from (docs/verify-server.md "The answer's list versions").
  EXPECT_EQ(body["lists"], nlohmann::json({{"malware", 3}, {"phishing", 7}}));
  std::set<std::string> got;
  for (const auto& m : body["matches"]) {
    EXPECT_EQ(m["cache_seconds"], 300);
    got.insert(m["sha256"].get<std::string>() + " " + m["list"].get<std::string>() + " " +
               m["layer"].get<std::string>() + " " + m["threat"].get<std::string>());
  }
  EXPECT_EQ(got, (std::set<std::string>{
                     ToHex(Sha256("evil.example/login.php")) + " phishing url social_engineering",
                     ToHex(Sha256("evil.example/")) + " phishing domain social_engineering",
                 }));

  // Nothing stored under these prefixes: no matches, still a negative cache duration.
  res = client.Post("/v1/verify", R"({"prefixes": ["00000000", "ffffffff"]})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, R"({"matches":[],"negative_cache_seconds":600,"lists":{"malware":3,"phishing":7}})");

  // The GET form, upper-case hex.
  std::string upper = PrefixHex("dropper.example/x.exe");
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  res = client.Get("/v1/verify?prefixes=" + upper + ",12345678");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const nlohmann::json get_body = nlohmann::json::parse(res->body);
  ASSERT_EQ(get_body["matches"].size(), 1u);
  EXPECT_EQ(get_body["matches"][0]["sha256"], ToHex(Sha256("dropper.example/x.exe")));
  EXPECT_EQ(get_body["matches"][0]["list"], "malware");
}

TEST_F(ServerTest, VerifyRejectsMalformedAndOversizedRequests) {
  ServerOptions options;
  options.throttle_threshold = 59;  // no throttling in this test
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  std::string many = R"({"prefixes": [)";
  for (int i = 0; i < 31; ++i) many += std::string(i ? "," : "") + "\"a1b2c3d4\"";
  many += "]}";
  const std::vector<std::pair<std::string, int>> cases = {
      {R"({"prefixes": []})", 400},
      {many, 413},
      {R"({"prefixes": ["zzzzzzzz"]})", 400},
      {R"({"prefixes": ["a1b2c3"]})", 400},
      {"this is not json", 400},
      {R"(["a1b2c3d4"])", 400},
      {R"({"prefixes": "a1b2c3d4"})", 400},
      {R"({"prefixes": ["a1b2c3d4"], "pad": ")" + std::string(20000, 'x') + "\"}", 413},
      {std::string(1 << 20, '{'), 413},
  };
  for (const auto& [body, status] : cases) {
    auto res = client.Post("/v1/verify", body, "application/json");
    ASSERT_TRUE(res) << body.substr(0, 40);
    EXPECT_EQ(res->status, status) << body.substr(0, 40);
    const nlohmann::json error = nlohmann::json::parse(res->body, nullptr, false);
    EXPECT_TRUE(error.is_object() && error.contains("error")) << res->body;
  }
  // Just under the limit is fine.
  const std::string head = R"({"prefixes": ["a1b2c3d4"], "pad": ")";
  const std::string fits = head + std::string(options.max_body_bytes - head.size() - 2, 'x') + "\"}";
  ASSERT_EQ(fits.size(), options.max_body_bytes);
  auto res = client.Post("/v1/verify", fits, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);

  // A chunked body is held to the same limit (cpp-httplib 0.11 does not limit chunked bodies itself).
  std::string chunked = "POST /v1/verify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 100; ++i) chunked += "400\r\n" + std::string(0x400, ' ') + "\r\n";
  chunked += "0\r\n\r\n";
  std::string raw = RawExchange(server->port(), chunked);
  EXPECT_EQ(StatusOf(raw), 413) << raw.substr(0, 200);
  // A small chunked body is read normally.
  raw = RawExchange(
      server->port(),
      "POST /v1/verify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
      "10\r\n{\"prefixes\": [\"a\r\n0f\r\n1b2c3d4\"]}     \r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 200) << raw;

  // GET form.
  for (const auto& [query, status] :
       std::vector<std::pair<std::string, int>>{{"", 400},
                                                {"?prefixes=", 400},
                                                {"?prefixes=xyz", 400},
                                                {"?prefixes=a1b2c3d4&prefixes=00000000", 400},
                                                {"?prefixes=" + std::string("a1b2c3d4") +
                                                     [] {
                                                       std::string s;
                                                       for (int i = 0; i < 30; ++i) s += ",a1b2c3d4";
                                                       return s;
                                                     }(),
                                                 413}}) {
    res = client.Get("/v1/verify" + query);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, status) << query;
  }
  // Other methods.
  res = client.Put("/v1/verify", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  res = client.Post("/healthz", "x", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
}

TEST_F(ServerTest, HostileRequestsAreCutAndTheServerKeepsServing) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  // A request line of 64 MiB without a newline: cpp-httplib alone would buffer all of it (its line reader has
  // no cap); the server stops reading at its byte budget and closes. The server runs in this process, so its
  // peak memory is ours.
  std::string huge = "GET /";
  huge.resize(64 << 20, 'A');
  std::fill(huge.begin() + 5, huge.end(), 'A');  // touch it all before measuring
  const bool can_reset_peak = ResetPeakRss();
  const int64_t peak_before = PeakRssBytes();
  std::string raw = RawExchange(server->port(), huge);
  EXPECT_NE(StatusOf(raw), 200) << "cut (MHD answers 414 or just closes)";
  if (can_reset_peak && peak_before > 0) {
    EXPECT_LT(PeakRssBytes() - peak_before, int64_t{16} << 20) << "the request line was buffered";
  }
  // Endless headers: cut at the head cap and answered 431 (MHD) or 400.
  std::string headers = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 20000; ++i) headers += "X-Filler-" + std::to_string(i) + ": yes\r\n";
  headers += "\r\n";
  raw = RawExchange(server->port(), headers);
  EXPECT_TRUE(StatusOf(raw) == 431 || StatusOf(raw) == 400) << raw.substr(0, 100);
  // The same with a few headers is fine.
  raw =
      RawExchange(server->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: 1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 200);
  // A declared body far larger than the limit (sent in full: cpp-httplib skips a declared body before
  // answering, and the server stops that skip at its byte budget).
  raw = RawExchange(server->port(), "POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" +
                                        std::string(1000000, ' '));
  EXPECT_EQ(StatusOf(raw), 413) << raw.substr(0, 200);
  // A body sent where none is read: answered, then the connection closes (no second response from the body).
  raw = RawExchange(
      server->port(),
      "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 26\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 200);
  EXPECT_EQ(raw.find("HTTP/1.1", 8), std::string::npos) << raw;
  // Garbage.
  raw = RawExchange(server->port(), std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) +
                                        std::string(5000, '\0') + "\r\n\r\n");
  EXPECT_NE(StatusOf(raw), 200);

  httplib::Client client("127.0.0.1", server->port());
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok");
}

TEST_F(ServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  std::string pipeline;
  for (int i = 0; i < 20; ++i) pipeline += "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  pipeline += "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const std::string raw = RawExchange(server->port(), pipeline);
  size_t responses = 0;
  for (size_t at = raw.find("HTTP/1.1 200"); at != std::string::npos; at = raw.find("HTTP/1.1 200", at + 1)) {
    ++responses;
  }
  EXPECT_EQ(responses, 21u);
}

// ---- throttling -------------------------------------------------------------------------------------------

TEST_F(ServerTest, ThrottlesAHammeringClientAndNotOthers) {
  std::atomic<int64_t> now{1000};
  ServerOptions options;
  options.throttle_threshold = 2;
  options.clock = [&now] { return now.load(); };
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  httplib::Client hammer("127.0.0.1", server->port());
  hammer.set_default_headers({{"User-Agent", "hammer/1.0"}});
  httplib::Client other("127.0.0.1", server->port());
  other.set_default_headers({{"User-Agent", "browser/2.0"}});
  const std::string body = R"({"prefixes": ["a1b2c3d4"]})";

  // Active in seconds 1000, 1001, 1002: allowed; in the fourth second it is seen in 3 > 2 earlier seconds.
  for (int64_t t = 1000; t <= 1002; ++t) {
    now = t;
    for (int i = 0; i < 3; ++i) {
      auto res = hammer.Post("/v1/verify", body, "application/json");
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, 200) << t;
    }
  }
  now = 1003;
  auto res = hammer.Post("/v1/verify", body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "58");  // seconds 1000..1003 leave the window at +57..+60
  res = hammer.Get("/v1/verify?prefixes=a1b2c3d4");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  // Another User-Agent from the same address is the same client: throttled too (the guard keys on the
  // address only).
  res = other.Post("/v1/verify", body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  // Another address is unaffected.
  const std::string raw_other = testing_http::RawExchange(
      server->port(),
      "GET /v1/verify?prefixes=a1b2c3d4 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "127.0.0.2")
                                    .response;
  EXPECT_EQ(StatusOf(raw_other), 200) << raw_other;
  // Static files are not guarded.
  res = hammer.Get("/v1/lists/phishing/manifest.json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  // After a minute of silence the client is allowed again.
  now = 1003 + 60;
  res = hammer.Post("/v1/verify", body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);

  res = other.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("urlguard_server_throttled_total 3\n"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("urlguard_server_requests_total{endpoint=\"verify\",status=\"429\"} 3\n"),
            std::string::npos);
}

// Rotating the User-Agent (or any other header) does not buy a fresh budget: the guard keys on the address.
TEST_F(ServerTest, ThrottlesAClientRotatingUserAgents) {
  std::atomic<int64_t> now{1000};
  ServerOptions options;
  options.throttle_threshold = 2;
  options.clock = [&now] { return now.load(); };
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  int last_status = 0;
  for (int64_t t = 1000; t <= 1003; ++t) {
    now = t;
    httplib::Client client("127.0.0.1", server->port());
    client.set_default_headers({{"User-Agent", "rotating/" + std::to_string(t)},
                                {"X-Forwarded-For", "198.51.100." + std::to_string(t % 200)}});
    auto res = client.Get("/v1/verify?prefixes=a1b2c3d4");
    ASSERT_TRUE(res);
    last_status = res->status;
  }
  EXPECT_EQ(last_status, 429);
}

// 200 requests within one second: the window (seconds of activity) sees one second; the per-second count
// throttles the rest of the burst with Retry-After: 1.
TEST_F(ServerTest, ThrottlesABurstWithinOneSecond) {
  std::atomic<int64_t> now{5000};
  ServerOptions options;
  options.max_requests_per_second = 100;
  options.clock = [&now] { return now.load(); };
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  int ok = 0, throttled = 0;
  std::string retry_after;
  for (int i = 0; i < 200; ++i) {
    auto res = client.Post("/v1/verify", R"({"prefixes": ["a1b2c3d4"]})", "application/json");
    ASSERT_TRUE(res);
    if (res->status == 200) ++ok;
    if (res->status == 429) {
      ++throttled;
      retry_after = res->get_header_value("Retry-After");
    }
  }
  EXPECT_EQ(ok, 100);
  EXPECT_EQ(throttled, 100);
  EXPECT_EQ(retry_after, "1");
  now = 5001;  // the next second starts a fresh count
  EXPECT_EQ(client.Post("/v1/verify", R"({"prefixes": ["a1b2c3d4"]})", "application/json")->status, 200);
}

// X-Forwarded-For is believed only from a trusted proxy, and then only its rightmost untrusted entry.
TEST_F(ServerTest, TrustedProxyForwardedFor) {
  std::atomic<int64_t> now{1000};
  ServerOptions options;
  options.throttle_threshold = 0;  // a client's second active second is throttled
  options.trusted_proxies = {"127.0.0.2", "10.0.0.9"};
  options.clock = [&now] { return now.load(); };
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  auto verify = [&](const char* source, const std::string& xff) {
    const std::string header = xff.empty() ? "" : "X-Forwarded-For: " + xff + "\r\n";
    return StatusOf(testing_http::RawExchange(server->port(),
                                              "GET /v1/verify?prefixes=a1b2c3d4 HTTP/1.1\r\nHost: x\r\n" + header +
                                                  "Connection: close\r\n\r\n",
                                              source)
                        .response);
  };
  // Second 1000: client 203.0.113.7 behind two proxies; the spoofed leftmost entry is ignored.
  EXPECT_EQ(verify("127.0.0.2", "1.2.3.4, 203.0.113.7, 10.0.0.9"), 200);
  // Second 1001: the same client with another spoofed prefix: same key, throttled.
  now = 1001;
  EXPECT_EQ(verify("127.0.0.2", "5.6.7.8, 203.0.113.7"), 429);
  // Another client behind the same proxy is not.
  EXPECT_EQ(verify("127.0.0.2", "203.0.113.8"), 200);
  // A peer that is not a trusted proxy cannot choose its key: the header is ignored and the peer counts.
  EXPECT_EQ(verify("127.0.0.3", "192.0.2.1"), 200);
  now = 1002;
  EXPECT_EQ(verify("127.0.0.3", "192.0.2.2"), 429);
}

// ---- metrics ----------------------------------------------------------------------------------------------

TEST_F(ServerTest, MetricsCountRequestsAndReadManifests) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  const std::string body = "{\"prefixes\": [\"" + PrefixHex("evil.example/") + "\", \"00000000\"]}";
  for (int i = 0; i < 3; ++i) ASSERT_EQ(client.Post("/v1/verify", body, "application/json")->status, 200);
  ASSERT_EQ(client.Post("/v1/verify", "nope", "application/json")->status, 400);
  ASSERT_EQ(client.Get("/v1/lists/phishing/manifest.json")->status, 200);
  ASSERT_EQ(client.Get("/nope")->status, 404);
  ASSERT_EQ(client.Get("/healthz")->status, 200);

  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  const std::string& text = res->body;
  for (const char* line : {
           "# TYPE urlguard_server_requests_total counter",
           "urlguard_server_requests_total{endpoint=\"verify\",status=\"200\"} 3",
           "urlguard_server_requests_total{endpoint=\"verify\",status=\"400\"} 1",
           "urlguard_server_requests_total{endpoint=\"static\",status=\"200\"} 1",
           "urlguard_server_requests_total{endpoint=\"static\",status=\"404\"} 1",
           "urlguard_server_requests_total{endpoint=\"healthz\",status=\"200\"} 1",
           "# TYPE urlguard_server_verify_seconds histogram",
           "urlguard_server_verify_seconds_bucket{le=\"+Inf\"} 4",
           "urlguard_server_verify_seconds_count 4",
           "urlguard_server_prefixes_total 6",
           "urlguard_server_matches_total 3",
           "urlguard_server_throttled_total 0",
           "urlguard_list_version{list=\"phishing\"} 7",
           "urlguard_list_entries{list=\"phishing\",layer=\"domain\"} 2",
           "urlguard_list_entries{list=\"phishing\",layer=\"url\"} 3",
           "urlguard_list_entries{list=\"phishing\",layer=\"ip\"} 0",
       }) {
    EXPECT_NE(text.find(std::string(line) + "\n"), std::string::npos) << "missing: " << line << "\n" << text;
  }
  EXPECT_NE(text.find("urlguard_server_verify_seconds_sum "), std::string::npos);
  // (The verify source's own gauges name every loaded list, malware too: only the manifest's are checked.)
  EXPECT_EQ(text.find("urlguard_list_version{list=\"malware\""), std::string::npos) << "a garbage manifest has no gauges";
  EXPECT_EQ(text.find("urlguard_list_entries{list=\"malware\""), std::string::npos);
  // Histogram buckets are cumulative and end at the count.
  uint64_t last = 0;
  for (size_t at = text.find("urlguard_server_verify_seconds_bucket{"); at != std::string::npos;
       at = text.find("urlguard_server_verify_seconds_bucket{", at + 1)) {
    const uint64_t v = std::strtoull(text.c_str() + text.find("} ", at) + 2, nullptr, 10);
    EXPECT_GE(v, last);
    last = v;
  }
  EXPECT_EQ(last, 4u);

  // Manifests are re-read when they change; a list whose manifest disappears loses its gauges.
  WriteFile(repo_ + "/public/v1/lists/phishing/manifest.json", R"({"version": 8, "entries": 12})");
  WriteFile(repo_ + "/public/v1/lists/malware/manifest.json", R"({"version": 3, "entries": {"url": 1}})");
  res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("urlguard_list_version{list=\"phishing\"} 8\n"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("urlguard_list_entries{list=\"phishing\",layer=\"all\"} 12\n"), std::string::npos);
  EXPECT_NE(res->body.find("urlguard_list_version{list=\"malware\"} 3\n"), std::string::npos);
  ASSERT_TRUE(Env::Default()->RemoveFile(repo_ + "/public/v1/lists/malware/manifest.json").ok());
  res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body.find("urlguard_list_version{list=\"malware\""), std::string::npos);
  EXPECT_EQ(res->body.find("urlguard_list_entries{list=\"malware\""), std::string::npos);
  // The verify source's gauges (docs/verify-server.md, "Base plus deltas").
  EXPECT_NE(res->body.find("urlguard_server_loaded_version{list=\"malware\"} 3\n"), std::string::npos);
  EXPECT_NE(res->body.find("urlguard_server_loaded_deltas{list=\"phishing\"} 0\n"), std::string::npos);
}

// ---- options and lifecycle --------------------------------------------------------------------------------

TEST_F(ServerTest, RefusesNonLoopbackAddressesAndBadOptions) {
  for (const char* listen : {"0.0.0.0:0", "[::]:0", "192.0.2.1:0", "localhost:0", ":0", "127.attacker.invalid:0",
                             "127.0.0.1", "127.0.0.1:70000", "::1:0"}) {
    ServerOptions options;
    options.repo_dir = repo_;
    options.listen = listen;
    EXPECT_EQ(Server::Start(options).status().code(), StatusCode::kInvalidArgument) << listen;
  }
  auto expect_invalid = [&](auto mutate) {
    ServerOptions options;
    options.repo_dir = repo_;
    mutate(options);
    return Server::Start(options).status().code();
  };
  EXPECT_EQ(expect_invalid([](ServerOptions& o) { o.throttle_threshold = -1; }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(expect_invalid([](ServerOptions& o) { o.throttle_threshold = 60; }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(expect_invalid([](ServerOptions& o) { o.max_body_bytes = 10; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(expect_invalid([](ServerOptions& o) { o.worker_threads = 0; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(expect_invalid([](ServerOptions& o) { o.trusted_proxies = {"proxy.example"}; }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(expect_invalid([](ServerOptions& o) { o.tls_cert_file = "/x.pem"; }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(expect_invalid([](ServerOptions& o) { o.repo_dir = o.repo_dir + "/missing"; }),
            StatusCode::kNotFound);
  EXPECT_EQ(expect_invalid([](ServerOptions& o) {
              o.tls_cert_file = "/nonexistent/cert.pem";
              o.tls_key_file = "/nonexistent/key.pem";
            }),
            StatusCode::kIoError);
  EXPECT_EQ(expect_invalid([](ServerOptions& o) { o.hash_refresh_millis = 99; }), StatusCode::kInvalidArgument);
}

TEST_F(ServerTest, BindsIpv6LoopbackAndFixedPorts) {
  ServerOptions options;
  options.listen = "[::1]:0";
  auto server = Server::Start([&] {
    options.repo_dir = repo_;
    return options;
  }());
  if (!server.ok() && server.status().code() == StatusCode::kIoError) {
    GTEST_SKIP() << "no IPv6 loopback here: " << server.status().ToString();
  }
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client client("::1", (*server)->port());
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);

  // A fixed port that is already taken fails cleanly.
  ServerOptions taken;
  taken.repo_dir = repo_;
  taken.listen = "[::1]:" + std::to_string((*server)->port());
  EXPECT_EQ(Server::Start(taken).status().code(), StatusCode::kIoError);
}

TEST_F(ServerTest, StopIsIdempotentAndClosesThePort) {
  auto server = StartServer();
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  EXPECT_GT(port, 0);
  EXPECT_FALSE(server->tls());
  server->Stop();
  server->Stop();
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1);
  EXPECT_FALSE(client.Get("/healthz"));
  server.reset();  // the destructor stops again: fine
}

// ---- HTTPS ------------------------------------------------------------------------------------------------

// Writes a self-signed P-256 certificate for IP 127.0.0.1 and its key as PEM files.
void MakeSelfSignedCert(const std::string& cert_path, const std::string& key_path) {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  ASSERT_NE(key, nullptr);
  X509* cert = X509_new();
  ASSERT_NE(cert, nullptr);
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24 * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"),
                             -1, -1, 0);
  X509_set_issuer_name(cert, name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  for (auto [nid, value] : std::vector<std::pair<int, const char*>>{
           {NID_subject_alt_name, "IP:127.0.0.1"},
           {NID_basic_constraints, "critical,CA:TRUE"},
           {NID_key_usage, "critical,digitalSignature,keyCertSign"},
       }) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    ASSERT_NE(ext, nullptr);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  ASSERT_GT(X509_sign(cert, key, EVP_sha256()), 0);
  FILE* f = std::fopen(cert_path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  PEM_write_X509(f, cert);
  std::fclose(f);
  f = std::fopen(key_path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  X509_free(cert);
  EVP_PKEY_free(key);
}

TEST_F(ServerTest, ServesHttpsWithATrustedSelfSignedCertificate) {
  const std::string cert = repo_ + "/cert.pem", key = repo_ + "/key.pem";
  MakeSelfSignedCert(cert, key);
  ServerOptions options;
  options.tls_cert_file = cert;
  options.tls_key_file = key;
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  EXPECT_TRUE(server->tls());

  httplib::SSLClient client("127.0.0.1", server->port());
  client.set_ca_cert_path(cert.c_str());
  client.enable_server_certificate_verification(true);
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  res = client.Get("/v1/lists/phishing/snapshot-7.ugs.z");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, snapshot_);
  res = client.Post("/v1/verify", "{\"prefixes\": [\"" + PrefixHex("evil.example/") + "\"]}",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find(ToHex(Sha256("evil.example/"))), std::string::npos);

  // A client that does not trust the certificate refuses the connection...
  httplib::SSLClient untrusting("127.0.0.1", server->port());
  untrusting.enable_server_certificate_verification(true);
  auto refused = untrusting.Get("/healthz");
  EXPECT_FALSE(refused);
  EXPECT_EQ(refused.error(), httplib::Error::SSLServerVerification);
  // ... and plain HTTP on the TLS port gets no HTTP answer.
  const std::string raw = RawExchange(server->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 0);
  // The server still serves after both.
  res = client.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);

  // A key that does not belong to the certificate.
  const std::string cert2 = repo_ + "/cert2.pem", key2 = repo_ + "/key2.pem";
  MakeSelfSignedCert(cert2, key2);
  ServerOptions mismatched;
  mismatched.repo_dir = repo_;
  mismatched.tls_cert_file = cert;
  mismatched.tls_key_file = key2;
  EXPECT_EQ(Server::Start(mismatched).status().code(), StatusCode::kInvalidArgument);
}

// A running server picks up a full-hash delta (issue 17) through its refresher: once it names version 8 it
// answers from base 7 + delta 8 (a put and a delete), never from a version it has not loaded.
TEST_F(ServerTest, VerifyPicksUpAFullHashDelta) {
  ServerOptions options;
  options.hash_refresh_millis = 100;  // the smallest allowed
  auto server = StartServer(options);
  ASSERT_NE(server, nullptr);
  httplib::Client client("127.0.0.1", server->port());
  const std::string ask = nlohmann::json({{"prefixes", {PrefixHex("evil.example/"), PrefixHex("new.example/")}}}).dump();
  auto res = client.Post("/v1/verify", ask, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(nlohmann::json::parse(res->body)["lists"]["phishing"], 7);

  auto w = FullHashFileWriter::CreateDelta(Env::Default(), repo_ + "/private/lists/phishing/8.ughd", "phishing", 8,
                                           7, {"social_engineering"}, 2);
  ASSERT_TRUE(w.ok());
  std::vector<std::pair<Sha256Digest, bool>> change = {{Sha256("evil.example/"), true},
                                                       {Sha256("new.example/"), false}};
  std::sort(change.begin(), change.end());
  for (const auto& [sha, deleted] : change) ASSERT_TRUE(w->AddDelta(sha, LayerKind::kDomain, 0, deleted).ok());
  ASSERT_TRUE(w->Finish().ok());

  nlohmann::json body;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);  // liveness, not timing
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // under the abuse guard's rate
    res = client.Post("/v1/verify", ask, "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    body = nlohmann::json::parse(res->body);
    if (body["lists"]["phishing"] == 8) break;
    // Before the delta is loaded: version 7's answer, whole.
    ASSERT_EQ(body["matches"].size(), 1u);
    EXPECT_EQ(body["matches"][0]["sha256"], ToHex(Sha256("evil.example/")));
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "the delta was never picked up";
  }
  ASSERT_EQ(body["matches"].size(), 1u) << body.dump();
  EXPECT_EQ(body["matches"][0]["sha256"], ToHex(Sha256("new.example/")));
  EXPECT_EQ(body["matches"][0]["layer"], "domain");
  EXPECT_EQ(body["matches"][0]["threat"], "social_engineering");
}

}  // namespace
}  // namespace urlguard
