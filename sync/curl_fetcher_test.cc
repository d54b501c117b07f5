// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Tests of the libcurl Fetcher against real servers on 127.0.0.1 (port 0): cpp-httplib servers (plain and
// TLS, with a test CA and certificates generated here with OpenSSL), and raw sockets for servers that
// misbehave below HTTP (accept and never answer, refuse, act as a proxy). Nothing here binds or contacts any
// other address.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "platform/env.h"
#include "sync/fetcher.h"
#include "tests/http_date.h"
#include "tests/test_util.h"
#include "urlguard/urlguard.h"

namespace urlguard {
namespace {

using ::urlguard::testing::HttpDate;

// A server that writes to a connection the client already closed must not kill the test with SIGPIPE.
const bool kSigpipeIgnored = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

// ---- servers ----------------------------------------------------------------------------------------------

// An httplib server (plain or TLS) on 127.0.0.1, any port, serving from its own thread until destroyed.
class TestServer {
 public:
  explicit TestServer(std::unique_ptr<httplib::Server> server) : server_(std::move(server)) {
    server_->set_keep_alive_timeout(1);
    port_ = server_->bind_to_any_port("127.0.0.1");
    if (port_ <= 0) return;
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    // The socket already listens; wait until the accept loop runs too, so that stop() cannot come before it.
    for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~TestServer() {
    stopping_ = true;
    server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  httplib::Server& http() { return *server_; }
  int port() const { return port_; }
  bool ok() const { return port_ > 0 && server_->is_running(); }
  std::string url(const std::string& path, const char* scheme = "http") const {
    return std::string(scheme) + "://127.0.0.1:" + std::to_string(port_) + path;
  }
  // Set when the test is over: handlers that stream forever give up.
  const std::atomic<bool>& stopping() const { return stopping_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::atomic<bool> stopping_{false};
  int port_ = -1;
  std::thread thread_;
};

// A TCP socket on 127.0.0.1, any port. listen(): connections complete in the kernel's backlog, but nobody
// accept()s or answers unless a test does. Without listen(): connecting is refused.
class RawSocket {
 public:
  explicit RawSocket(bool listening) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return;
    if (listening && listen(fd_, 16) != 0) return;
    socklen_t len = sizeof(addr);
    if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
    port_ = ntohs(addr.sin_port);
  }
  ~RawSocket() {
    if (fd_ >= 0) close(fd_);
  }
  int port() const { return port_; }
  int fd() const { return fd_; }

  // True when a connection waits in the backlog (somebody connected).
  bool HasPendingConnection() const {
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
  }

  // Accepts one connection (waiting up to `timeout_ms`), reads until the end of the request head, writes
  // `response` (if any), waits up to `hold_ms` for the client to hang up, closes, and returns the head (""
  // when nobody came).
  std::string AcceptAndReadHead(int timeout_ms, const std::string& response = "", int hold_ms = 0) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) != 1) return "";
    const int conn = accept(fd_, nullptr, nullptr);
    if (conn < 0) return "";
    std::string head;
    char buf[1024];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 16384) {
      pollfd c{conn, POLLIN, 0};
      if (poll(&c, 1, timeout_ms) != 1) break;
      const ssize_t n = read(conn, buf, sizeof(buf));
      if (n <= 0) break;
      head.append(buf, static_cast<size_t>(n));
    }
    if (!response.empty() && send(conn, response.data(), response.size(), MSG_NOSIGNAL) < 0)
      head += "[send failed]";
    if (hold_ms > 0) {
      pollfd c{conn, POLLIN, 0};  // readable at EOF: the client closed
      poll(&c, 1, hold_ms);
    }
    close(conn);
    return head;
  }

 private:
  int fd_ = -1;
  int port_ = -1;
};

// ---- certificates -----------------------------------------------------------------------------------------

struct PkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Deleter {
  void operator()(X509* c) const { X509_free(c); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;

PkeyPtr NewKey() { return PkeyPtr(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")); }

// A certificate for `key` named `cn`, signed by `issuer` / `issuer_key` (self-signed when issuer is null),
// with the given X.509v3 extensions (OpenSSL config syntax). Null on failure.
X509Ptr NewCert(EVP_PKEY* key, const char* cn, long serial, X509* issuer, EVP_PKEY* issuer_key,
                const std::vector<std::pair<int, const char*>>& extensions) {
  X509Ptr cert(X509_new());
  if (cert == nullptr || key == nullptr) return nullptr;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, signer, cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (ext == nullptr) return nullptr;
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) <= 0) return nullptr;
  return cert;
}

bool WritePem(X509* cert, const std::string& path) {
  BIO* bio = BIO_new_file(path.c_str(), "w");
  if (bio == nullptr) return false;
  const bool ok = PEM_write_bio_X509(bio, cert) == 1;
  BIO_free(bio);
  return ok;
}

// A test CA and server certificates it signed, generated fresh for each test.
struct TestPki {
  PkeyPtr ca_key;
  X509Ptr ca_cert;
  std::string ca_file;  // PEM
  PkeyPtr server_key;
  X509Ptr server_cert;      // for IP 127.0.0.1 and DNS localhost
  X509Ptr wrong_name_cert;  // same key, for DNS other.example only

  bool Make(const std::string& dir) {
    ca_key = NewKey();
    ca_cert = NewCert(ca_key.get(), "urlguard test CA", 1, nullptr, nullptr,
                      {{NID_basic_constraints, "critical,CA:TRUE"},
                       {NID_key_usage, "critical,keyCertSign,cRLSign"},
                       {NID_subject_key_identifier, "hash"}});
    server_key = NewKey();
    const std::vector<std::pair<int, const char*>> leaf = {
        {NID_basic_constraints, "critical,CA:FALSE"},
        {NID_key_usage, "critical,digitalSignature"},
        {NID_ext_key_usage, "serverAuth"},
        {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"}};
    server_cert = NewCert(server_key.get(), "127.0.0.1", 2, ca_cert.get(), ca_key.get(), leaf);
    wrong_name_cert = NewCert(server_key.get(), "other.example", 3, ca_cert.get(), ca_key.get(),
                              {{NID_basic_constraints, "critical,CA:FALSE"},
                               {NID_ext_key_usage, "serverAuth"},
                               {NID_subject_alt_name, "DNS:other.example"}});
    ca_file = dir + "/ca.pem";
    return ca_cert != nullptr && server_cert != nullptr && wrong_name_cert != nullptr &&
           WritePem(ca_cert.get(), ca_file);
  }
};

// ---- fixture ----------------------------------------------------------------------------------------------

FetcherOptions FastOptions() {
  FetcherOptions o;
  o.connect_timeout_ms = 5000;
  o.total_timeout_ms = 30000;
  return o;
}

std::unique_ptr<Fetcher> MakeFetcher(const FetcherOptions& options = FastOptions()) {
  auto f = NewCurlFetcher(options);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(f).value() : nullptr;
}

FetchRequest Get(const std::string& url, size_t max_bytes = 64 << 10) {
  FetchRequest r;
  r.url = url;
  r.max_bytes = max_bytes;
  return r;
}

// The handlers most tests use.
void AddRoutes(httplib::Server& http, std::atomic<int>* hits) {
  http.Get("/hello", [hits](const httplib::Request&, httplib::Response& res) {
    ++*hits;
    res.set_content("hello world", "text/plain");
  });
  http.Get("/manifest.json", [](const httplib::Request& req, httplib::Response& res) {
    res.set_header("ETag", "\"v7\"");
    if (req.get_header_value("If-None-Match") == "\"v7\"") {
      res.status = 304;
      return;
    }
    res.set_content("{\"version\": 7}", "application/json");
  });
  http.Get("/sized/(\\d+)", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(std::string(std::stoul(req.matches[1].str()), 'z'), "application/octet-stream");
  });
  http.Get("/chunked/(\\d+)", [](const httplib::Request& req, httplib::Response& res) {
    const size_t total = std::stoul(req.matches[1].str());
    res.set_chunked_content_provider("application/octet-stream",
                                     [total](size_t offset, httplib::DataSink& sink) {
                                       if (offset >= total) {
                                         sink.done();
                                         return true;
                                       }
                                       const std::string piece(std::min<size_t>(1000, total - offset), 'c');
                                       return sink.write(piece.data(), piece.size());
                                     });
  });
  http.Get("/status/(\\d+)", [](const httplib::Request& req, httplib::Response& res) {
    res.status = std::stoi(req.matches[1].str());
    res.set_content("status body", "text/plain");
  });
  http.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(req.body, "application/octet-stream");
  });
}

class CurlFetcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<TestServer>(std::make_unique<httplib::Server>());
    AddRoutes(server_->http(), &hits_);
    ASSERT_TRUE(server_->ok());
    fetcher_ = MakeFetcher();
    ASSERT_NE(fetcher_, nullptr);
  }

  std::string Url(const std::string& path) const { return server_->url(path); }

  std::atomic<int> hits_{0};
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<Fetcher> fetcher_;
};

// ---- plain responses --------------------------------------------------------------------------------------

TEST_F(CurlFetcherTest, GetsABody) {
  auto r = fetcher_->Fetch(Get(Url("/hello")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello world");
  EXPECT_EQ(r->etag, "");
  EXPECT_EQ(r->retry_after_seconds, -1);
  EXPECT_EQ(hits_, 1);
}

TEST_F(CurlFetcherTest, SendsTheUserAgentAndNoConditionalHeaderByDefault) {
  // The User-Agent names urlguard, its version and where to read about it.
  std::string seen_ua, seen_inm = "unset";
  server_->http().Get("/whoami", [&](const httplib::Request& req, httplib::Response& res) {
    seen_ua = req.get_header_value("User-Agent");
    seen_inm = req.has_header("If-None-Match") ? req.get_header_value("If-None-Match") : "";
    res.set_content("ok", "text/plain");
  });
  auto r = fetcher_->Fetch(Get(Url("/whoami")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(seen_ua, std::string("urlguard/") + ug_version() + " (+https://github.com/urlguard)");
  EXPECT_EQ(seen_inm, "");

  FetcherOptions custom = FastOptions();
  custom.user_agent = "embedder-app/2.1 urlguard";
  auto other = MakeFetcher(custom);
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Fetch(Get(Url("/whoami"))).ok());
  EXPECT_EQ(seen_ua, "embedder-app/2.1 urlguard");
}

TEST_F(CurlFetcherTest, ConditionalGetReturns304AndTheEtag) {
  auto first = fetcher_->Fetch(Get(Url("/manifest.json")));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->body, "{\"version\": 7}");
  EXPECT_EQ(first->etag, "\"v7\"");

  FetchRequest conditional = Get(Url("/manifest.json"));
  conditional.if_none_match = first->etag;
  auto second = fetcher_->Fetch(conditional);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->status, 304);
  EXPECT_EQ(second->body, "");
  EXPECT_EQ(second->etag, "\"v7\"");

  conditional.if_none_match = "\"v6\"";
  auto stale = fetcher_->Fetch(conditional);
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ(stale->status, 200);
}

TEST_F(CurlFetcherTest, HttpErrorsAreResponses) {
  for (int status : {404, 429, 500, 503}) {
    auto r = fetcher_->Fetch(Get(Url("/status/" + std::to_string(status))));
    ASSERT_TRUE(r.ok()) << status << ": " << r.status().ToString();
    EXPECT_EQ(r->status, status);
    EXPECT_EQ(r->body, "status body");
  }
}

TEST_F(CurlFetcherTest, EtagHeaderForms) {
  server_->http().Get("/etag/(\\d)", [](const httplib::Request& req, httplib::Response& res) {
    switch (req.matches[1].str()[0]) {
      case '0':
        res.set_header("ETag", "W/\"weak-1\"");
        break;
      case '1':
        res.set_header("etag", "   \"padded\"   ");
        break;
      case '2':
        res.set_header("ETag", "\"" + std::string(kMaxEtagBytes, 'x') + "\"");
        break;  // too long
      case '3':
        res.set_header("ETag", "\"caf\xc3\xa9\"");
        break;  // not printable ASCII
      case '4':
        res.set_header("ETag", "\"" + std::string(kMaxEtagBytes - 2, 'y') + "\"");
        break;  // at the cap
    }
    res.set_content("x", "text/plain");
  });
  const std::vector<std::string> expected = {"W/\"weak-1\"", "\"padded\"", "", "",
                                             "\"" + std::string(kMaxEtagBytes - 2, 'y') + "\""};
  for (size_t i = 0; i < expected.size(); ++i) {
    auto r = fetcher_->Fetch(Get(Url("/etag/" + std::to_string(i))));
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    EXPECT_EQ(r->etag, expected[i]) << i;
  }
}

TEST_F(CurlFetcherTest, RetryAfterBothForms) {
  const time_t server_now = 1700000000;
  server_->http().Get("/retry/(\\w+)", [server_now](const httplib::Request& req, httplib::Response& res) {
    const std::string form = req.matches[1].str();
    res.status = 503;
    if (form == "delta") res.set_header("Retry-After", "120");
    if (form == "date") {
      // Measured from the server's own Date header: exact whatever our clock says.
      res.set_header("Date", HttpDate(server_now));
      res.set_header("Retry-After", HttpDate(server_now + 300));
    }
    if (form == "dateonly") res.set_header("Retry-After", HttpDate(std::time(nullptr) + 600));
    if (form == "past") {
      res.set_header("Date", HttpDate(server_now));
      res.set_header("Retry-After", HttpDate(server_now - 300));
    }
    if (form == "huge") res.set_header("Retry-After", "99999999999999999999999");
    if (form == "garbage") res.set_header("Retry-After", "soon");
    res.set_content("busy", "text/plain");
  });
  auto fetch = [&](const std::string& form) {
    auto r = fetcher_->Fetch(Get(Url("/retry/" + form)));
    EXPECT_TRUE(r.ok()) << form << ": " << r.status().ToString();
    if (r.ok()) {
      EXPECT_EQ(r->status, 503);
    }
    return r.ok() ? r->retry_after_seconds : -999;
  };
  EXPECT_EQ(fetch("delta"), 120);
  EXPECT_EQ(fetch("date"), 300);
  // Without a Date header, from our clock: 600 s minus however long the round trip took.
  const int64_t from_our_clock = fetch("dateonly");
  EXPECT_LE(from_our_clock, 600);
  EXPECT_GE(from_our_clock, 540);
  EXPECT_EQ(fetch("past"), 0);
  EXPECT_EQ(fetch("huge"), kMaxRetryAfterSeconds);
  EXPECT_EQ(fetch("garbage"), -1);
  EXPECT_EQ(fetch("none"), -1);
}

// The Date header places a client's next poll on the publisher's clock (sync/scheduler.h PublisherClock).
TEST_F(CurlFetcherTest, TheServersDateIsReported) {
  server_->http().Get("/date/(\\w+)", [](const httplib::Request& req, httplib::Response& res) {
    const std::string form = req.matches[1].str();
    if (form == "fixdate") res.set_header("Date", HttpDate(1700000000));
    if (form == "rfc850") res.set_header("Date", "Tuesday, 14-Nov-23 22:13:20 GMT");
    if (form == "garbage") res.set_header("Date", "yesterday-ish");
    if (form == "long") res.set_header("Date", std::string(100, '1'));
    res.status = form == "notmodified" ? 304 : 200;
    if (form == "notmodified") res.set_header("Date", HttpDate(1700000060));
    res.set_content(form == "notmodified" ? "" : "x", "text/plain");
  });
  auto date = [&](const std::string& form) {
    auto r = fetcher_->Fetch(Get(Url("/date/" + form)));
    EXPECT_TRUE(r.ok()) << form << ": " << r.status().ToString();
    return r.ok() ? r->server_date_unix : -999;
  };
  EXPECT_EQ(date("fixdate"), 1700000000);
  EXPECT_EQ(date("rfc850"), 1700000000);
  EXPECT_EQ(date("notmodified"), 1700000060);
  EXPECT_EQ(date("garbage"), -1);
  EXPECT_EQ(date("long"), -1);
}

TEST(ParseRetryAfterTest, DeltaSecondsAndTheThreeDateForms) {
  // 784111777 = Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example).
  const int64_t now = 784111777 - 100;
  EXPECT_EQ(ParseRetryAfter("120", now), 120);
  EXPECT_EQ(ParseRetryAfter(" 120\t", now), 120);
  EXPECT_EQ(ParseRetryAfter("0", now), 0);
  EXPECT_EQ(ParseRetryAfter("86400", now), 86400);
  EXPECT_EQ(ParseRetryAfter("86401", now), kMaxRetryAfterSeconds);
  EXPECT_EQ(ParseRetryAfter(std::string(5000, '9'), now), kMaxRetryAfterSeconds);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now), 100);
  EXPECT_EQ(ParseRetryAfter("Sunday, 06-Nov-94 08:49:37 GMT", now), 100);
  EXPECT_EQ(ParseRetryAfter("Sun Nov  6 08:49:37 1994", now), 100);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now + 1000), 0);  // past
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", now - 1000000), kMaxRetryAfterSeconds);
  for (const char* bad :
       {"", "   ", "-5", "+5", "1.5", "12a", "soon", "0x10", "Sun, 06 Nov 1994\r\n08:49:37 GMT"}) {
    EXPECT_EQ(ParseRetryAfter(bad, now), -1) << bad;
  }
  EXPECT_EQ(ParseRetryAfter(std::string(200, 'a'), now), -1);
}

TEST_F(CurlFetcherTest, RedirectIsReturnedNotFollowed) {
  std::atomic<int> target_hits{0};
  TestServer target(std::make_unique<httplib::Server>());
  target.http().Get("/target", [&](const httplib::Request&, httplib::Response& res) {
    ++target_hits;
    res.set_content("you followed", "text/plain");
  });
  ASSERT_TRUE(target.ok());
  server_->http().Get("/redirect/(\\d+)", [&](const httplib::Request& req, httplib::Response& res) {
    res.status = std::stoi(req.matches[1].str());
    res.set_header("Location", target.url("/target"));
    res.set_content("moved", "text/plain");
  });
  for (int status : {301, 302, 303, 307, 308}) {
    auto r = fetcher_->Fetch(Get(Url("/redirect/" + std::to_string(status))));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, status);
    EXPECT_EQ(r->body, "moved");
  }
  EXPECT_EQ(target_hits, 0);
  // The target itself works: the count above would have seen a followed redirect.
  ASSERT_TRUE(fetcher_->Fetch(Get(target.url("/target"))).ok());
  EXPECT_EQ(target_hits, 1);
}

TEST_F(CurlFetcherTest, PostSendsBodyAndContentType) {
  FetchRequest r;
  r.url = Url("/echo");
  r.method = "POST";
  r.body = "{\"prefixes\":[\"a1b2c3d4\"]}";
  r.content_type = "application/json";
  auto res = fetcher_->Fetch(r);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, r.body);

  // Binary bytes (NULs included) arrive intact; what the server saw is checked server-side.
  std::string method, content_type, expect;
  server_->http().Post("/seen", [&](const httplib::Request& req, httplib::Response& res2) {
    method = req.method;
    content_type = req.get_header_value("Content-Type");
    expect = req.has_header("Expect") ? req.get_header_value("Expect") : "";
    res2.set_content(req.body, "application/octet-stream");
  });
  r.url = Url("/seen");
  // Over 1 MiB: libcurl would ask "Expect: 100-continue" for a body this large.
  r.body = std::string("\0\x01\xff binary\0", 10) + std::string(1536 << 10, 'p');
  r.content_type = "application/octet-stream";
  r.max_bytes = 2 << 20;
  res = fetcher_->Fetch(r);
  ASSERT_TRUE(res.ok()) << res.status().ToString();
  EXPECT_EQ(res->body, r.body);
  EXPECT_EQ(method, "POST");
  EXPECT_EQ(content_type, "application/octet-stream");
  EXPECT_EQ(expect, "");  // no 100-continue round trip
}

// ---- caps -------------------------------------------------------------------------------------------------

TEST_F(CurlFetcherTest, BodyCapWithContentLength) {
  auto exact = fetcher_->Fetch(Get(Url("/sized/5000"), 5000));
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_EQ(exact->body.size(), 5000u);
  auto over = fetcher_->Fetch(Get(Url("/sized/5001"), 5000));
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted) << over.status().ToString();
  auto big = fetcher_->Fetch(Get(Url("/sized/10000000"), 1000));
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted) << big.status().ToString();
  // max_bytes = 0: an empty body is fine, any byte is over.
  auto empty = fetcher_->Fetch(Get(Url("/sized/0"), 0));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->body, "");
  EXPECT_EQ(fetcher_->Fetch(Get(Url("/sized/1"), 0)).status().code(), StatusCode::kResourceExhausted);
}

TEST_F(CurlFetcherTest, BodyCapWithoutContentLength) {
  auto exact = fetcher_->Fetch(Get(Url("/chunked/5000"), 5000));
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_EQ(exact->body, std::string(5000, 'c'));
  auto over = fetcher_->Fetch(Get(Url("/chunked/5001"), 5000));
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted) << over.status().ToString();
  // The fetcher is still usable after an aborted transfer.
  EXPECT_TRUE(fetcher_->Fetch(Get(Url("/hello"))).ok());
}

// A request with a body_sink gets the body in order as it arrives, not in FetchResponse::body; the cap holds the
// same way, and error statuses' bodies go to the sink too.
TEST_F(CurlFetcherTest, ABodySinkGetsTheBodyAsItArrives) {
  for (const std::string& path : {std::string("/sized/300000"), std::string("/chunked/300000")}) {
    std::string got;
    size_t pieces = 0;
    FetchRequest req = Get(Url(path), 300000);
    req.body_sink = [&](std::string_view piece) {
      got.append(piece);
      ++pieces;
    };
    auto r = fetcher_->Fetch(req);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "");
    EXPECT_EQ(r->body_bytes, 300000u);
    EXPECT_EQ(got.size(), 300000u) << path;
    EXPECT_GT(pieces, 1u) << "libcurl hands a 300 kB body over in pieces";
    auto whole = fetcher_->Fetch(Get(Url(path), 300000));
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(got, whole->body);
    EXPECT_EQ(whole->body_bytes, whole->body.size());

    FetchRequest over = Get(Url(path), 299999);
    size_t sunk = 0;
    over.body_sink = [&](std::string_view piece) { sunk += piece.size(); };
    EXPECT_EQ(fetcher_->Fetch(over).status().code(), StatusCode::kResourceExhausted) << path;
    EXPECT_LE(sunk, 299999u);
  }
  FetchRequest missing = Get(Url("/no-such-path"), 1000);
  std::string sunk;
  missing.body_sink = [&](std::string_view piece) { sunk.append(piece); };
  auto r = fetcher_->Fetch(missing);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body_bytes, sunk.size());
}

TEST_F(CurlFetcherTest, EndlessBodyStopsAtTheCap) {
  std::atomic<uint64_t> sent{0};
  const auto& stopping = server_->stopping();
  server_->http().Get("/endless", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("application/octet-stream", [&](size_t, httplib::DataSink& sink) {
      if (stopping || sent > (uint64_t{1} << 30)) return false;  // a safety net for a broken fetcher
      const std::string piece(16384, 'e');
      sent += piece.size();
      return sink.write(piece.data(), piece.size());  // false once the client has gone
    });
  });
  // A total timeout far longer than the transfer needs: a fetcher that did not stop at the cap would end in
  // kUnavailable (timeout) or with a gigabyte, not kResourceExhausted.
  auto r = fetcher_->Fetch(Get(Url("/endless"), 200000));
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
  EXPECT_NE(r.status().message().find("200000"), std::string::npos) << r.status().ToString();
}

TEST(CurlFetcherCapTest, DeclaredLengthOverTheCapFailsBeforeTheBody) {
  // The server announces ten megabytes and then sends nothing: the fetcher must refuse on the announcement
  // (kResourceExhausted) rather than wait for a body (which would end in the total timeout, kUnavailable).
  RawSocket server(/*listening=*/true);
  ASSERT_GT(server.port(), 0);
  std::string head;
  std::thread serve([&] {
    head = server.AcceptAndReadHead(10000, "HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n", 20000);
  });
  FetcherOptions o = FastOptions();
  o.total_timeout_ms = 15000;
  auto fetcher = MakeFetcher(o);
  ASSERT_NE(fetcher, nullptr);
  auto r = fetcher->Fetch(Get("http://127.0.0.1:" + std::to_string(server.port()) + "/snapshot", 1000));
  serve.join();
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
  EXPECT_EQ(head.rfind("GET /snapshot HTTP/1.1\r\n", 0), 0u) << head;
}

TEST_F(CurlFetcherTest, OversizedHeadersAreRefused) {
  server_->http().Get("/headers", [](const httplib::Request&, httplib::Response& res) {
    for (int i = 0; i < 100; ++i) res.set_header("X-Filler-" + std::to_string(i), std::string(1000, 'h'));
    res.set_content("x", "text/plain");
  });
  auto r = fetcher_->Fetch(Get(Url("/headers")));
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << r.status().ToString();
}

// ---- timeouts and transport failures ----------------------------------------------------------------------

TEST_F(CurlFetcherTest, DrippingServerHitsTheLowSpeedLimit) {
  const auto& stopping = server_->stopping();
  server_->http().Get("/drip", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [&](size_t offset, httplib::DataSink& sink) {
      if (stopping || offset >= 60) return false;
      if (!sink.write("d", 1)) return false;
      for (int i = 0; i < 20 && !stopping; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return true;
    });
  });
  FetcherOptions o = FastOptions();
  o.low_speed_bytes_per_second = 100;
  o.low_speed_seconds = 1;
  o.total_timeout_ms = 120000;  // not the one that fires
  auto fetcher = MakeFetcher(o);
  ASSERT_NE(fetcher, nullptr);
  auto r = fetcher->Fetch(Get(Url("/drip")));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  // libcurl's low-speed message, not its total-timeout one.
  EXPECT_NE(r.status().message().find("too slow"), std::string::npos) << r.status().ToString();
}

TEST(CurlFetcherTransportTest, SilentServerHitsTheTotalTimeout) {
  RawSocket silent(/*listening=*/true);  // connections complete in the backlog; nobody ever answers
  ASSERT_GT(silent.port(), 0);
  FetcherOptions o = FastOptions();
  o.total_timeout_ms = 500;
  o.low_speed_seconds = 60;  // not the one that fires
  auto fetcher = MakeFetcher(o);
  ASSERT_NE(fetcher, nullptr);
  auto r = fetcher->Fetch(Get("http://127.0.0.1:" + std::to_string(silent.port()) + "/manifest.json"));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(r.status().message().find("too slow"), std::string::npos) << r.status().ToString();
}

TEST(CurlFetcherTransportTest, ConnectionRefusedIsUnavailable) {
  RawSocket closed(/*listening=*/false);  // bound, so nobody else takes the port, but not listening
  ASSERT_GT(closed.port(), 0);
  auto fetcher = MakeFetcher();
  ASSERT_NE(fetcher, nullptr);
  auto r = fetcher->Fetch(Get("http://127.0.0.1:" + std::to_string(closed.port()) + "/"));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  // [::1] is loopback too: allowed over plain http, so it is attempted (and refused: nothing listens there).
  r = fetcher->Fetch(Get("http://[::1]:" + std::to_string(closed.port()) + "/"));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

// ---- URL rules: refused before any network activity -------------------------------------------------------

TEST(CurlFetcherRulesTest, PlainHttpToANonLoopbackHostIsNeverAttempted) {
  // Every request would go through this "proxy" if libcurl tried to connect anywhere: it must see nothing.
  // The connect timeout is short, so an attempt would end in kUnavailable, not kInvalidArgument.
  RawSocket proxy(/*listening=*/true);
  ASSERT_GT(proxy.port(), 0);
  FetcherOptions o = FastOptions();
  o.proxy = "http://127.0.0.1:" + std::to_string(proxy.port());
  o.connect_timeout_ms = 200;
  o.total_timeout_ms = 500;
  auto fetcher = MakeFetcher(o);
  ASSERT_NE(fetcher, nullptr);
  for (const char* url :
       {"http://192.0.2.1/v1/lists/phishing/manifest.json", "http://192.0.2.1:80/", "HTTP://192.0.2.1/",
        "http://example.invalid/", "http://localhost.example/", "http://127.0.0.1.example/",
        "http://[2001:db8::1]/", "http://[::ffff:192.0.2.1]/", "http://0.0.0.0/", "http://10.0.0.1/"}) {
    auto r = fetcher->Fetch(Get(url));
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << url << " -> " << r.status().ToString();
  }
  EXPECT_FALSE(proxy.HasPendingConnection());
}

TEST(CurlFetcherRulesTest, MalformedAndForeignUrlsAreInvalid) {
  auto fetcher = MakeFetcher();
  ASSERT_NE(fetcher, nullptr);
  for (const std::string& url :
       {std::string(""), std::string("not a url"), std::string("127.0.0.1/x"), std::string("//127.0.0.1/x"),
        std::string("ftp://127.0.0.1/x"), std::string("file:///etc/passwd"),
        std::string("gopher://127.0.0.1/"), std::string("ws://127.0.0.1/"), std::string("https://"),
        std::string("http://127.0.0.1:99999/"), std::string("https://bad host/"),
        std::string("https://user:secret@x.example/"), std::string("http://user@127.0.0.1/"),
        std::string("https://x.example/\r\nInjected: 1"),
        "https://x.example/" + std::string(kMaxFetchUrlBytes, 'a')}) {
    auto r = fetcher->Fetch(Get(url));
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument)
        << url.substr(0, 60) << " -> " << r.status().ToString();
  }
}

TEST(CurlFetcherRulesTest, PlainHttpToLoopbackCanBeDisabled) {
  std::atomic<int> hits{0};
  TestServer server(std::make_unique<httplib::Server>());
  AddRoutes(server.http(), &hits);
  ASSERT_TRUE(server.ok());
  FetcherOptions o = FastOptions();
  o.allow_plain_http_to_loopback = false;
  auto strict = MakeFetcher(o);
  ASSERT_NE(strict, nullptr);
  EXPECT_EQ(strict->Fetch(Get(server.url("/hello"))).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(hits, 0);
  // The default allows it, for 127.0.0.0/8 and "localhost" alike.
  auto relaxed = MakeFetcher();
  ASSERT_NE(relaxed, nullptr);
  auto r = relaxed->Fetch(Get("http://localhost:" + std::to_string(server.port()) + "/hello"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "hello world");
  r = relaxed->Fetch(Get("http://LocalHost:" + std::to_string(server.port()) + "/hello"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(hits, 2);
}

TEST_F(CurlFetcherTest, BadRequestsAreRefusedBeforeSending) {
  FetchRequest put = Get(Url("/hello"));
  put.method = "PUT";
  EXPECT_EQ(fetcher_->Fetch(put).status().code(), StatusCode::kInvalidArgument);
  FetchRequest lower = Get(Url("/hello"));
  lower.method = "get";
  EXPECT_EQ(fetcher_->Fetch(lower).status().code(), StatusCode::kInvalidArgument);
  FetchRequest get_with_body = Get(Url("/hello"));
  get_with_body.body = "x";
  EXPECT_EQ(fetcher_->Fetch(get_with_body).status().code(), StatusCode::kInvalidArgument);
  FetchRequest injected = Get(Url("/hello"));
  injected.if_none_match = "\"v7\"\r\nX-Injected: 1";
  EXPECT_EQ(fetcher_->Fetch(injected).status().code(), StatusCode::kInvalidArgument);
  FetchRequest post = Get(Url("/echo"));
  post.method = "POST";
  post.content_type = "text/plain\nX-Injected: 1";
  EXPECT_EQ(fetcher_->Fetch(post).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(hits_, 0);
}

TEST(CurlFetcherRulesTest, OptionsAreValidated) {
  auto code = [](void (*mutate)(FetcherOptions&)) {
    FetcherOptions o;
    mutate(o);
    return NewCurlFetcher(o).status().code();
  };
  EXPECT_EQ(code([](FetcherOptions&) {}), StatusCode::kOk);
  EXPECT_EQ(code([](FetcherOptions& o) { o.connect_timeout_ms = 0; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FetcherOptions& o) { o.total_timeout_ms = -1; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FetcherOptions& o) { o.low_speed_bytes_per_second = -1; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FetcherOptions& o) { o.low_speed_seconds = 0; }), StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FetcherOptions& o) {
              o.low_speed_bytes_per_second = 0;
              o.low_speed_seconds = 0;
            }),
            StatusCode::kOk);  // low-speed check off
  EXPECT_EQ(code([](FetcherOptions& o) { o.user_agent = "ua\r\nX-Injected: 1"; }),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code([](FetcherOptions& o) { o.proxy = std::string("http://p\0x", 10); }),
            StatusCode::kInvalidArgument);
}

// ---- proxies ----------------------------------------------------------------------------------------------

// The proxy is whatever the configuration or the environment says, for loopback targets too: only no_proxy
// exempts a host (docs/sync-protocol.md). The "proxy" here answers every request itself, so a response that
// says "via proxy" proves the request went through it.
TEST_F(CurlFetcherTest, ProxyIsUsedForLoopbackTooUnlessNoProxyExemptsIt) {
  const std::string proxied = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nvia proxy";
  RawSocket proxy(/*listening=*/true);
  ASSERT_GT(proxy.port(), 0);
  const std::string proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
  unsetenv("no_proxy");
  unsetenv("NO_PROXY");

  // FetcherOptions::proxy: the plain-http request goes to the proxy as an absolute-form request.
  FetcherOptions o = FastOptions();
  o.proxy = proxy_url;
  auto configured = MakeFetcher(o);
  ASSERT_NE(configured, nullptr);
  std::string head;
  std::thread t1([&] { head = proxy.AcceptAndReadHead(10000, proxied); });
  auto r1 = configured->Fetch(Get(Url("/hello")));
  t1.join();
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->body, "via proxy");
  EXPECT_EQ(head.rfind("GET " + Url("/hello") + " HTTP/1.1\r\n", 0), 0u) << head;
  EXPECT_EQ(hits_, 0);

  // The environment's proxy when FetcherOptions::proxy is "" (libcurl's default, not disabled by the fetcher).
  setenv("http_proxy", proxy_url.c_str(), 1);
  auto env_default = MakeFetcher();
  ASSERT_NE(env_default, nullptr);
  std::thread t2([&] { head = proxy.AcceptAndReadHead(10000, proxied); });
  auto r2 = env_default->Fetch(Get(Url("/hello")));
  t2.join();
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r2->body, "via proxy");
  EXPECT_EQ(hits_, 0);

  // no_proxy exempts loopback: direct, with the environment's proxy and with the configured one.
  setenv("no_proxy", "127.0.0.1,localhost", 1);
  auto direct_env = env_default->Fetch(Get(Url("/hello")));
  auto direct_configured = configured->Fetch(Get(Url("/hello")));
  unsetenv("http_proxy");
  unsetenv("no_proxy");
  ASSERT_TRUE(direct_env.ok()) << direct_env.status().ToString();
  ASSERT_TRUE(direct_configured.ok()) << direct_configured.status().ToString();
  EXPECT_EQ(direct_env->body, "hello world");
  EXPECT_EQ(direct_configured->body, "hello world");
  EXPECT_EQ(hits_, 2);
  EXPECT_FALSE(proxy.HasPendingConnection());

  // An https request to a remote host asks the proxy for a tunnel. This proxy reads the request and hangs up,
  // so the fetch fails -- after the proxy saw exactly what would have gone out.
  std::thread t3([&] { head = proxy.AcceptAndReadHead(10000); });
  auto tunneled = configured->Fetch(Get("https://192.0.2.1/v1/lists/phishing/manifest.json"));
  t3.join();
  EXPECT_EQ(tunneled.status().code(), StatusCode::kUnavailable) << tunneled.status().ToString();
  EXPECT_EQ(head.rfind("CONNECT 192.0.2.1:443 HTTP/1.1\r\n", 0), 0u) << head;
}

// ---- TLS --------------------------------------------------------------------------------------------------

class CurlFetcherTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("curl_fetcher_test");
    ASSERT_TRUE(pki_.Make(dir_));
  }

  std::unique_ptr<TestServer> StartTls(X509* cert) {
    auto tls = std::make_unique<httplib::SSLServer>(cert, pki_.server_key.get());
    EXPECT_TRUE(tls->is_valid());
    tls->Get("/hello", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("hello over tls", "text/plain");
    });
    auto server = std::make_unique<TestServer>(std::move(tls));
    EXPECT_TRUE(server->ok());
    return server;
  }

  std::string dir_;
  TestPki pki_;
};

TEST_F(CurlFetcherTlsTest, TrustsTheConfiguredCaOnly) {
  auto server = StartTls(pki_.server_cert.get());
  ASSERT_TRUE(server->ok());
  const std::string url = server->url("/hello", "https");

  FetcherOptions with_ca = FastOptions();
  with_ca.ca_bundle = pki_.ca_file;
  auto trusting = MakeFetcher(with_ca);
  ASSERT_NE(trusting, nullptr);
  auto r = trusting->Fetch(Get(url));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello over tls");
  // The certificate names localhost too.
  r = trusting->Fetch(Get("https://localhost:" + std::to_string(server->port()) + "/hello"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "hello over tls");

  // The system store does not know the test CA: verification fails.
  auto system_store = MakeFetcher();
  ASSERT_NE(system_store, nullptr);
  auto refused = system_store->Fetch(Get(url));
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("certificate"), std::string::npos) << refused.status().ToString();

  // Another CA is no better.
  TestPki other;
  const std::string other_dir = testing::ScratchDir("curl_fetcher_test");
  ASSERT_TRUE(other.Make(other_dir));
  FetcherOptions wrong_ca = FastOptions();
  wrong_ca.ca_bundle = other.ca_file;
  auto mistrusting = MakeFetcher(wrong_ca);
  ASSERT_NE(mistrusting, nullptr);
  EXPECT_EQ(mistrusting->Fetch(Get(url)).status().code(), StatusCode::kUnavailable);

  // A CA bundle that does not exist fails the transfer, not the process.
  FetcherOptions missing_ca = FastOptions();
  missing_ca.ca_bundle = dir_ + "/no-such-ca.pem";
  auto broken = MakeFetcher(missing_ca);
  ASSERT_NE(broken, nullptr);
  EXPECT_EQ(broken->Fetch(Get(url)).status().code(), StatusCode::kUnavailable);
}

TEST_F(CurlFetcherTlsTest, CertificateForAnotherNameIsRefused) {
  auto server = StartTls(pki_.wrong_name_cert.get());
  ASSERT_TRUE(server->ok());
  FetcherOptions with_ca = FastOptions();
  with_ca.ca_bundle = pki_.ca_file;
  auto fetcher = MakeFetcher(with_ca);
  ASSERT_NE(fetcher, nullptr);
  auto r = fetcher->Fetch(Get(server->url("/hello", "https")));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
}

TEST_F(CurlFetcherTlsTest, PlainHttpToATlsPortGetsNoResponse) {
  auto server = StartTls(pki_.server_cert.get());
  ASSERT_TRUE(server->ok());
  auto fetcher = MakeFetcher();
  ASSERT_NE(fetcher, nullptr);
  EXPECT_EQ(fetcher->Fetch(Get(server->url("/hello", "http"))).status().code(), StatusCode::kUnavailable);
}

// ---- threads ----------------------------------------------------------------------------------------------

TEST_F(CurlFetcherTest, ConcurrentFetchesShareOneFetcher) {
  constexpr int kThreads = 8, kEach = 10;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const size_t size = static_cast<size_t>(1000 * t + i);
        auto r = fetcher_->Fetch(Get(Url("/sized/" + std::to_string(size))));
        if (r.ok() && r->status == 200 && r->body == std::string(size, 'z')) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, kThreads * kEach);
}

}  // namespace
}  // namespace urlguard
