// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The shared abuse guard against a real redis-server on 127.0.0.1 (a random free port, no persistence):
// two guards sharing one Redis see one client across both; decisions equal RollingWindowGuard's on the same
// requests; keys expire by themselves; Redis stopped -> the local fallback, logged once and in the metrics;
// Redis back -> the shared guard again. Skipped when redis-server is not installed.
#include "server/redis_guard.h"

#include <hiredis/hiredis.h>

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>

#include "tests/fleet_test_util.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using testing::RedisProcess;
using testing::WaitFor;

// Collects the guard's log lines.
struct LogSink {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(std::string_view)> fn() {
    return [this](std::string_view line) {
      std::lock_guard<std::mutex> l(mu);
      lines.emplace_back(line);
    };
  }
  int Count(std::string_view what) {
    std::lock_guard<std::mutex> l(mu);
    int n = 0;
    for (const std::string& s : lines) n += s.find(what) != std::string::npos ? 1 : 0;
    return n;
  }
};

class RedisGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisProcess::Available()) GTEST_SKIP() << "redis-server is not installed (scripts/install-deps.sh)";
    dir_ = testing::ScratchDir("redis-guard");
    ASSERT_TRUE(redis_.Start(dir_)) << "redis-server did not start";
  }

  RedisGuardOptions Options(const std::string& prefix, int threshold, uint32_t max_rps) {
    RedisGuardOptions o;
    EXPECT_TRUE(ParseRedisUrl(redis_.url(), &o).ok());
    o.key_prefix = "test:" + prefix + ":";
    o.use_redis_clock = false;
    o.connect_timeout_ms = 200;  // a loaded test machine; production defaults are a few ms
    o.io_timeout_ms = 200;
    o.retry_interval_ms = 50;
    o.window.threshold = threshold;
    o.window.max_requests_per_second = max_rps;
    o.window.signatures_per_second = 1000;
    o.log = log_.fn();
    return o;
  }

  std::unique_ptr<RedisAbuseGuard> Make(RedisGuardOptions o) {
    auto g = RedisAbuseGuard::Create(std::move(o));
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    return g.ok() ? std::move(g).value() : nullptr;
  }

  // A direct Redis command's integer reply (-1000 on failure).
  long long RedisInteger(const std::string& cmd, const std::string& key) {
    redisContext* c = redisConnect("127.0.0.1", redis_.port());
    if (c == nullptr || c->err) return -1000;
    auto* r = static_cast<redisReply*>(redisCommand(c, "%s %s", cmd.c_str(), key.c_str()));
    const long long v = r != nullptr && r->type == REDIS_REPLY_INTEGER ? r->integer : -1000;
    freeReplyObject(r);
    redisFree(c);
    return v;
  }

  std::string dir_;
  RedisProcess redis_;
  LogSink log_;
};

TEST(RedisUrl, Parses) {
  RedisGuardOptions o;
  ASSERT_TRUE(ParseRedisUrl("redis://127.0.0.1:6380", &o).ok());
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 6380);
  EXPECT_EQ(o.db, 0);
  ASSERT_TRUE(ParseRedisUrl("redis://[::1]:7000/3", &o).ok());
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 7000);
  EXPECT_EQ(o.db, 3);
  ASSERT_TRUE(ParseRedisUrl("redis://redis-1.internal:6379/0", &o).ok());
  EXPECT_EQ(o.host, "redis-1.internal");
  EXPECT_EQ(o.io_timeout_ms, RedisGuardOptions().io_timeout_ms);
  ASSERT_TRUE(ParseRedisUrl("redis://127.0.0.1:6379/2?timeout_ms=40", &o).ok());
  EXPECT_EQ(o.db, 2);
  EXPECT_EQ(o.connect_timeout_ms, 40);
  EXPECT_EQ(o.io_timeout_ms, 40);
  for (const char* bad : {"", "redis://", "redis://host", "redis://:6379", "redis://h:0", "redis://h:65536",
                          "redis://h:12x", "redis://h:6379/16", "redis://h:6379/", "http://h:6379",
                          "redis://[::1:6379", "redis://a b:1", "redis://u:p@h:6379", "redis://h:1?timeout_ms=0",
                          "redis://h:1?timeout_ms=10001", "redis://h:1?x=1", "redis://h:1?timeout_ms="}) {
    EXPECT_EQ(ParseRedisUrl(bad, &o).code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(RedisGuardScript, IsPinnedByTheGoldenFile) {
  // The script is the shared data format of every node of a fleet (docs/fleet.md): a change is deliberate
  // (update with URLGUARD_UPDATE_GOLDEN=1 and keep old and new nodes from sharing one key prefix).
  const std::string path = testing::SourcePath("fixtures/golden/redis_guard.lua");
  if (std::getenv("URLGUARD_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << kRedisGuardScript;
  EXPECT_EQ(testing::ReadFileOrDie(path), std::string(kRedisGuardScript));
}

TEST_F(RedisGuardTest, TwoGuardsShareOneWindow) {
  // threshold 3: a client active in 4 earlier seconds is throttled. It alternates between two nodes, so each
  // node alone saw it in 2 seconds only; a per-node guard would never throttle it.
  auto a = Make(Options("share", 3, 0));
  auto b = Make(Options("share", 3, 0));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->using_redis() && b->using_redis());
  const int64_t t0 = 1'000'000;
  for (int i = 0; i < 4; ++i) {
    RedisAbuseGuard* g = i % 2 == 0 ? a.get() : b.get();
    const RollingWindowDecision d = g->Check("v4:198.51.100.7", t0 + i);
    EXPECT_FALSE(d.throttled) << i;
    EXPECT_EQ(d.seen_seconds, i);
  }
  RollingWindowDecision d = a->Check("v4:198.51.100.7", t0 + 4);
  EXPECT_TRUE(d.throttled);
  EXPECT_EQ(d.seen_seconds, 4);
  // Silent from now: second t0+4+d still sees seconds t0+1.. within 59 s; with 5 active seconds in the window
  // (t0..t0+4) and threshold 3 the client may come back when at most 3 remain: after t0+1 has left, i.e. at
  // t0+61 = now + 57.
  EXPECT_EQ(d.retry_after_seconds, 57);
  EXPECT_TRUE(b->Check("v4:198.51.100.7", t0 + 5).throttled);
  // Another client is independent.
  EXPECT_FALSE(b->Check("v4:198.51.100.8", t0 + 5).throttled);
  // A local guard per node would not have throttled: each saw the client in 2 earlier seconds.
  LocalAbuseGuard alone(RollingWindowOptions{3, 1000, 0.001, 0});
  EXPECT_FALSE(alone.Check("v4:198.51.100.7", t0).throttled);
  EXPECT_FALSE(alone.Check("v4:198.51.100.7", t0 + 2).throttled);
  EXPECT_FALSE(alone.Check("v4:198.51.100.7", t0 + 4).throttled);
}

TEST_F(RedisGuardTest, RateCapCountsRequestsOnEveryNode) {
  auto a = Make(Options("rate", 30, 5));
  auto b = Make(Options("rate", 30, 5));
  ASSERT_TRUE(a && b);
  const int64_t now = 2'000'000;
  for (int i = 0; i < 5; ++i) {
    const RollingWindowDecision d = (i % 2 ? b : a)->Check("v6:2001:db8:1:2::/64", now);
    EXPECT_FALSE(d.throttled) << i;
    EXPECT_EQ(d.requests_this_second, static_cast<uint32_t>(i + 1));
  }
  RollingWindowDecision d = b->Check("v6:2001:db8:1:2::/64", now);
  EXPECT_TRUE(d.throttled);
  EXPECT_TRUE(d.rate_limited);
  EXPECT_EQ(d.retry_after_seconds, 1);
  EXPECT_FALSE(a->Check("v6:2001:db8:1:2::/64", now + 1).throttled);  // a new second
}

TEST_F(RedisGuardTest, DecidesLikeRollingWindowGuard) {
  // Random requests of a few clients over a few minutes, with gaps and bursts, through two
  // shared guards alternately, against one RollingWindowGuard (the in-process reference) seeing the same
  // requests. Far below the filters' capacity, the reference has no false positives in practice, so every
  // field must agree.
  const RollingWindowOptions w{5, 1000, 0.001, 2};
  auto o = Options("diff", w.threshold, w.max_requests_per_second);
  auto a = Make(o);
  auto b = Make(o);
  ASSERT_TRUE(a && b);
  RollingWindowGuard reference(w);
  std::mt19937_64 rng(20261124);
  int64_t now = 3'000'000;
  int throttled = 0, rate_limited = 0;
  for (int i = 0; i < 3000; ++i) {
    const int step = static_cast<int>(rng() % 100);
    if (step < 55) {
    } else if (step < 90) {
      now += 1;
    } else if (step < 97) {
      now += static_cast<int64_t>(rng() % 30);
    } else {
      now += 61;
    }
    const int64_t at = now;  // no steps back: see redis_guard.h for the one place the two differ
    const std::string sig = "v4:203.0.113." + std::to_string(rng() % 3);
    const RollingWindowDecision want = reference.Check(sig, at);
    const RollingWindowDecision got = (i % 2 ? b : a)->Check(sig, at);
    ASSERT_EQ(got.throttled, want.throttled) << "request " << i;
    ASSERT_EQ(got.seen_seconds, want.seen_seconds) << "request " << i;
    ASSERT_EQ(got.rate_limited, want.rate_limited) << "request " << i;
    ASSERT_EQ(got.requests_this_second, want.requests_this_second) << "request " << i;
    ASSERT_EQ(got.retry_after_seconds, want.retry_after_seconds) << "request " << i;
    throttled += got.throttled;
    rate_limited += got.rate_limited;
  }
  // The sequence exercised both rules (a test that never throttles would prove nothing).
  EXPECT_GT(throttled, 100);
  EXPECT_GT(rate_limited, 20);
  EXPECT_TRUE(a->using_redis());
}

TEST_F(RedisGuardTest, KeysExpireByThemselves) {
  auto g = Make(Options("ttl", 30, 0));
  ASSERT_TRUE(g);
  g->Check("v4:192.0.2.1", 4'000'000);
  const std::string key = g->KeyOf("v4:192.0.2.1");
  EXPECT_EQ(key.rfind("test:ttl:", 0), 0u);
  EXPECT_EQ(key.find("192.0.2.1"), std::string::npos);  // no client address in clear
  const long long ttl = RedisInteger("TTL", key);
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, kRedisGuardKeyTtlSeconds);
  // Seconds older than the window are dropped from the hash by the next request.
  g->Check("v4:192.0.2.1", 4'000'001);
  EXPECT_EQ(RedisInteger("HLEN", key), 2);
  g->Check("v4:192.0.2.1", 4'000'000 + 120);
  EXPECT_EQ(RedisInteger("HLEN", key), 1);
}

TEST_F(RedisGuardTest, UsesRedisTimeByDefault) {
  auto o = Options("clock", 30, 1);
  o.use_redis_clock = true;
  auto g = Make(o);
  ASSERT_TRUE(g);
  // The caller's seconds are ignored: three requests within milliseconds, passed wildly different times, share
  // a Redis second at least twice, so at least one is over the cap of 1 per second.
  int limited = 0;
  for (int i = 0; i < 3; ++i) limited += g->Check("v4:192.0.2.9", int64_t{i} * 1000).rate_limited;
  EXPECT_GE(limited, 1);
}

TEST_F(RedisGuardTest, FallsBackWhileRedisIsDownAndReturns) {
  auto g = Make(Options("down", 2, 0));
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->using_redis());
  const int64_t t0 = 5'000'000;
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(g->Check("v4:192.0.2.50", t0 + i).throttled);

  redis_.Stop();
  // The first request after the outage fails over and is decided locally: the local guard recorded the same
  // three seconds all along, so the client is still throttled (3 > 2).
  EXPECT_TRUE(g->Check("v4:192.0.2.50", t0 + 3).throttled);
  EXPECT_FALSE(g->using_redis());
  for (int i = 0; i < 20; ++i) g->Check("v4:192.0.2.51", t0 + 3);
  EXPECT_EQ(log_.Count("switched to the local guard"), 1);  // logged once per outage
  PrometheusText text;
  g->AppendMetrics(&text);
  EXPECT_NE(text.text().find("urlguard_server_guard_backend{backend=\"local\"} 1"), std::string::npos);
  EXPECT_NE(text.text().find("urlguard_server_guard_fallbacks_total 1"), std::string::npos);
  EXPECT_EQ(text.text().find("urlguard_server_guard_redis_errors_total 0"), std::string::npos);

  ASSERT_TRUE(redis_.Start(dir_));  // same port, empty (no persistence)
  ASSERT_TRUE(WaitFor([&] { return g->using_redis(); }, 5000)) << "did not return to redis";
  EXPECT_EQ(log_.Count("is back"), 1);
  // Back on Redis (which forgot everything): decisions are shared again.
  EXPECT_FALSE(g->Check("v4:192.0.2.60", t0 + 10).throttled);
  EXPECT_GT(RedisInteger("EXISTS", g->KeyOf("v4:192.0.2.60")), 0);
  PrometheusText after;
  g->AppendMetrics(&after);
  EXPECT_NE(after.text().find("urlguard_server_guard_backend{backend=\"redis\"} 1"), std::string::npos);
}

// The round-trip histogram reads the Env's clock (RedisGuardOptions::env), not one of its own: a clock that moves
// 20 ms between any two readings puts every round trip in the 0.025 s bucket, however fast Redis answers.
TEST_F(RedisGuardTest, TimesRoundTripsWithTheEnvClock) {
  class SteppingClockEnv : public EnvWrapper {
   public:
    SteppingClockEnv() : EnvWrapper(Env::Default()) {}
    uint64_t NowMonotonicNanos() override { return nanos_.fetch_add(20'000'000) + 20'000'000; }

   private:
    std::atomic<uint64_t> nanos_{0};
  } env;
  RedisGuardOptions o = Options("clock", 30, 0);
  o.env = &env;
  auto g = Make(std::move(o));
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->using_redis());
  for (int i = 0; i < 3; ++i) g->Check("v4:192.0.2.80", 7'000'000 + i);
  PrometheusText text;
  g->AppendMetrics(&text);
  EXPECT_NE(text.text().find("urlguard_server_guard_redis_seconds_bucket{le=\"0.01\"} 0\n"), std::string::npos)
      << text.text();
  EXPECT_NE(text.text().find("urlguard_server_guard_redis_seconds_bucket{le=\"0.025\"} 3\n"), std::string::npos)
      << text.text();
  EXPECT_NE(text.text().find("urlguard_server_guard_redis_seconds_count 3\n"), std::string::npos);
}

TEST_F(RedisGuardTest, StartsOnTheLocalGuardWhenRedisIsDown) {
  redis_.Stop();
  auto g = Make(Options("late", 30, 0));
  ASSERT_TRUE(g);
  EXPECT_FALSE(g->using_redis());
  EXPECT_EQ(log_.Count("starting on the local guard"), 1);
  EXPECT_FALSE(g->Check("v4:192.0.2.70", 6'000'000).throttled);
  ASSERT_TRUE(redis_.Start(dir_));
  ASSERT_TRUE(WaitFor([&] { return g->using_redis(); }, 5000));
  g->Check("v4:192.0.2.70", 6'000'001);
  EXPECT_GT(RedisInteger("EXISTS", g->KeyOf("v4:192.0.2.70")), 0);
}

TEST(RedisGuardOptionsTest, RejectsBadOptions) {
  RedisGuardOptions o;
  o.connect_timeout_ms = 0;
  EXPECT_EQ(RedisAbuseGuard::Create(o).status().code(), StatusCode::kInvalidArgument);
  o = RedisGuardOptions();
  o.window.threshold = 60;
  EXPECT_EQ(RedisAbuseGuard::Create(o).status().code(), StatusCode::kInvalidArgument);
  o = RedisGuardOptions();
  o.key_prefix.assign(kMaxRedisKeyPrefixBytes + 1, 'k');
  EXPECT_EQ(RedisAbuseGuard::Create(o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace urlguard
