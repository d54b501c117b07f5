// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "http/framing.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace urlguard {
namespace {

TEST(FramingTest, Verdicts) {
  using H = std::vector<std::pair<std::string_view, std::string_view>>;
  EXPECT_EQ(CheckFraming(H{}), FramingVerdict::kOk);
  EXPECT_EQ(CheckFraming(H{{"content-length", " 12 "}}), FramingVerdict::kOk);
  EXPECT_EQ(CheckFraming(H{{"Transfer-Encoding", "Chunked"}}), FramingVerdict::kOk);
  EXPECT_EQ(CheckFraming(H{{"Content-Length", "1"}, {"content-length", "1"}}),
            FramingVerdict::kDuplicateContentLength);
  EXPECT_EQ(CheckFraming(H{{"Content-Length", "25abc"}}), FramingVerdict::kBadContentLength);
  EXPECT_EQ(CheckFraming(H{{"Content-Length", "5, 5"}}), FramingVerdict::kBadContentLength);
  EXPECT_EQ(CheckFraming(H{{"Content-Length", ""}}), FramingVerdict::kBadContentLength);
  EXPECT_EQ(CheckFraming(H{{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}}),
            FramingVerdict::kContentLengthWithTransferEncoding);
  EXPECT_EQ(CheckFraming(H{{"Transfer-Encoding", "gzip, chunked"}}), FramingVerdict::kBadTransferEncoding);
  EXPECT_EQ(CheckFraming(H{{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}),
            FramingVerdict::kBadTransferEncoding);
}

TEST(FramingTest, LoopbackHostAllowlist) {
  EXPECT_TRUE(IsAllowedLoopbackHost("127.0.0.1:8089", 8089));
  EXPECT_TRUE(IsAllowedLoopbackHost("localhost:8089", 8089));
  EXPECT_TRUE(IsAllowedLoopbackHost("[::1]:8089", 8089));
  EXPECT_TRUE(IsAllowedLoopbackHost("localhost", 80));
  for (const char* host : {"127.0.0.1", "127.0.0.1:80", "evil.example:8089", "127.attacker.invalid:8089",
                           "localhost.:8089", "[::1]", "::1:8089", "127.0.0.1:8089x", "127.0.0.1:", "",
                           "[127.0.0.1]:8089", "10.0.0.1:8089"}) {
    EXPECT_FALSE(IsAllowedLoopbackHost(host, 8089)) << host;
  }
}

// Heads as libmicrohttpd 0.9.75 leaves them (separators overwritten by NULs), taken from a real MHD; the spans
// are the strings it hands out (the target's length as strlen saw it before the query was split off).
ParsedHead Spans(std::string_view head, std::string_view target_as_seen, size_t headers) {
  ParsedHead p;
  auto string_at = [&](size_t at) { return HeadSpan{at, std::string_view(head.data() + at).size()}; };
  p.method = string_at(0);
  p.target = {head.find('/'), target_as_seen.size()};
  size_t at = head.find("HTTP/1.");
  p.version = string_at(at);
  at += p.version.length;
  for (size_t i = 0; i < headers; ++i) {
    while (head[at] == '\0') ++at;
    const HeadSpan name = string_at(at);
    at += name.length + 1;
    while (head[at] == ' ' || head[at] == '\t') ++at;
    const HeadSpan value = string_at(at);
    at += value.length;
    p.headers.emplace_back(name, value);
  }
  return p;
}

TEST(HeadBytesTest, AcceptsHeadsWithoutClientNuls) {
  using namespace std::string_view_literals;
  const std::vector<std::tuple<std::string_view, std::string_view, size_t>> heads = {
      {"GET\0/status\0HTTP/1.1\0\0Host\0 x\0\0Connection\0 close\0\0\0\0"sv, "/status", 2},
      // Query split and decoded in place after the target's length was taken.
      {"GET\0/a\0b\0c d\0d\0HTTP/1.1\0\0Host\0 x\0\0X-B\0  v \0\0"sv "Connection\0 close\0\0\0\0"sv, "/a?b=c%20d", 3},
      // Bare LF line ends, an empty value, extra spaces after the method, no headers.
      {"GET\0  /st\0HTTP/1.1\0Host\0x\0X-Z\0 \0\0"sv, "/st", 2},
      {"GET\0/\0HTTP/1.0\0\0\0\0"sv, "/", 0},
      {"GET\0/\0HTTP/1.0\0\0"sv, "/", 0},
  };
  for (const auto& [head, target, headers] : heads) {
    EXPECT_TRUE(HeadBytesAreAccountedFor(head, Spans(head, target, headers))) << head.size();
  }
}

TEST(HeadBytesTest, RefusesEveryByteHiddenBehindAClientNul) {
  using namespace std::string_view_literals;
  struct Case {
    const char* what;
    std::string_view head, target;
    size_t headers;
  };
  const std::vector<Case> cases = {
      {"target", "GET\0/status\0junk\0HTTP/1.1\0\0Host\0 x\0\0\0\0"sv, "/status", 1},
      {"target, NUL just before the version", "GET\0/status\0\0HTTP/1.1\0\0Host\0 x\0\0\0\0"sv, "/status", 1},
      {"query", "GET\0/a\0b\0junk\0HTTP/1.1\0\0\0\0"sv, "/a?b", 0},
      {"method", "GE\0T\0/status\0HTTP/1.1\0\0\0\0"sv, "/status", 0},
      {"method, NUL before the space", "GET\0\0/status\0HTTP/1.1\0\0\0\0"sv, "/status", 0},
      {"version", "GET\0/\0HTTP/1.1\0junk\0\0\0\0"sv, "/", 0},
      {"value", "GET\0/\0HTTP/1.1\0\0X-A\0 foo\0bar\0\0Host\0 x\0\0\0\0"sv, "/", 2},
      {"last value", "GET\0/\0HTTP/1.1\0\0Host\0 x\0y\0\0\0\0"sv, "/", 1},
      {"NUL before CR LF", "GET\0/\0HTTP/1.1\0\0Host\0 x\0\0\0\0\0"sv, "/", 1},
      {"after the colon", "GET\0/\0HTTP/1.1\0\0Host\0\0x\0\0\0\0"sv, "/", 1},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(HeadBytesAreAccountedFor(c.head, Spans(c.head, c.target, c.headers))) << c.what;
  }
}

TEST(HeadBytesTest, RefusesSpansOutOfOrderOrOutside) {
  using namespace std::string_view_literals;
  const std::string_view head = "GET\0/\0HTTP/1.1\0\0Host\0 x\0\0\0\0"sv;
  ParsedHead p = Spans(head, "/", 1);
  ASSERT_TRUE(HeadBytesAreAccountedFor(head, p));
  ParsedHead outside = p;
  outside.headers[0].first.offset = 4000;  // an obs-fold name MHD copied elsewhere
  EXPECT_FALSE(HeadBytesAreAccountedFor(head, outside));
  ParsedHead swapped = p;
  std::swap(swapped.headers[0].first, swapped.headers[0].second);
  EXPECT_FALSE(HeadBytesAreAccountedFor(head, swapped));
  ParsedHead too_long = p;
  too_long.headers[0].second.length = 1000;
  EXPECT_FALSE(HeadBytesAreAccountedFor(head, too_long));
  EXPECT_FALSE(HeadBytesAreAccountedFor(head.substr(0, head.size() - 3), p));
  EXPECT_FALSE(HeadBytesAreAccountedFor(std::string(head) + "x", p));
}

}  // namespace
}  // namespace urlguard
