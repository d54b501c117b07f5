// Copyright urlguard authors.
#include "http/framing.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace urlguard
