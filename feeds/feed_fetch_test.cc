// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feed_fetch.h"

#include <signal.h>

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace urlguard {
namespace {

const bool kSigpipeIgnored = [] {
  signal(SIGPIPE, SIG_IGN);
  return true;
}();

// A real HTTP server on 127.0.0.1 for the fetcher's own contracts (the update's checks are in
// tests/feed_update_test.cc).
class Server {
 public:
  Server() {
    http_.set_keep_alive_timeout(1);
    http_.Get("/endless", [this](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [this](size_t, httplib::DataSink& sink) {
        const std::string line(4096, 'a');
        while (!stopping_ && sink.write(line.data(), line.size())) {
        }
        return false;
      });
    });
    http_.Get("/validators", [](const httplib::Request& req, httplib::Response& res) {
      if (req.get_header_value("If-None-Match") == "\"t1\"" &&
          req.get_header_value("If-Modified-Since") == "Tue, 24 Nov 2026 10:00:00 GMT") {
        res.status = 304;
        return;
      }
      res.set_header("ETag", "\"t1\"");
      res.set_header("Last-Modified", "Tue, 24 Nov 2026 10:00:00 GMT");
      res.set_content("a.example\n", "text/plain");
    });
    http_.Get("/to-file", [](const httplib::Request&, httplib::Response& res) {
      res.status = 302;
      res.set_header("Location", "file:///etc/passwd");
    });
    http_.Get("/loop", [](const httplib::Request&, httplib::Response& res) {
      res.status = 302;
      res.set_header("Location", "/loop");
    });
    port_ = http_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    for (int i = 0; i < 5000 && !http_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Server() {
    stopping_ = true;
    http_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

 private:
  httplib::Server http_;
  std::thread thread_;
  int port_ = -1;
  std::atomic<bool> stopping_{false};
};

TEST(FeedFetch, EndlessBodyStopsAtTheCap) {
  Server s;
  FeedFetchRequest req;
  req.url = s.url("/endless");
  req.max_bytes = 100000;
  FeedFetchResponse resp;
  Status st = FetchFeed(req, &resp);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_LE(resp.body.size(), req.max_bytes);
}

TEST(FeedFetch, ValidatorsMakeAConditionalRequest) {
  Server s;
  FeedFetchRequest req;
  req.url = s.url("/validators");
  FeedFetchResponse first;
  ASSERT_TRUE(FetchFeed(req, &first).ok());
  EXPECT_EQ(first.body, "a.example\n");
  EXPECT_EQ(first.etag, "\"t1\"");
  EXPECT_EQ(first.last_modified, "Tue, 24 Nov 2026 10:00:00 GMT");
  req.etag = first.etag;
  req.last_modified = first.last_modified;
  FeedFetchResponse second;
  ASSERT_TRUE(FetchFeed(req, &second).ok());
  EXPECT_TRUE(second.not_modified);
  EXPECT_EQ(second.http_status, 304);
  // A validator with a line break never becomes a header (it is dropped: an unconditional GET).
  req.etag = "\"t1\"\r\nX-Evil: 1";
  FeedFetchResponse third;
  ASSERT_TRUE(FetchFeed(req, &third).ok());
  EXPECT_FALSE(third.not_modified);
}

TEST(FeedFetch, OnlyHttpAndHttpsAndBoundedRedirects) {
  Server s;
  FeedFetchResponse resp;
  FeedFetchRequest req;
  req.url = "file:///etc/passwd";
  EXPECT_EQ(FetchFeed(req, &resp).code(), StatusCode::kInvalidArgument);
  req.url = s.url("/to-file");
  Status st = FetchFeed(req, &resp);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_TRUE(resp.body.empty());
  req.url = s.url("/loop");
  st = FetchFeed(req, &resp);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
}

TEST(FeedFetch, ConnectionRefusedIsUnavailable) {
  FeedFetchRequest req;
  {
    Server s;
    req.url = s.url("/validators");
  }  // stopped: nothing listens on the port now
  req.connect_timeout_ms = 2000;
  FeedFetchResponse resp;
  EXPECT_EQ(FetchFeed(req, &resp).code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace urlguard
