// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Tests of the sync schedule (exact values: the randomness is scripted) and of D/sync-state.json (real files
// through Env::Default(), plus an Env wrapper that fails on purpose).
#include "sync/scheduler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "platform/fault_injection_env.h"
#include "sync/fetcher.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

// ---- helpers ----------------------------------------------------------------------------------------------

// A UniformSource that replays `values` and counts draws; running out is a test failure.
class Script {
 public:
  explicit Script(std::vector<double> values) : values_(std::move(values)) {}
  UniformSource source() {
    return [this] {
      EXPECT_LT(next_, values_.size()) << "the code drew more random numbers than scripted";
      return next_ < values_.size() ? values_[next_++] : 0.0;
    };
  }
  size_t draws() const { return next_; }

 private:
  std::vector<double> values_;
  size_t next_ = 0;
};

const double kJustBelowOne = std::nextafter(1.0, 0.0);

// ---- the formulas -----------------------------------------------------------------------------------------

TEST(BackoffTest, ExactSequenceWithRandZero) {
  // min(2^(N-1) * 15 min * (1 + 0), 24 h): 15, 30, 60, 120, 240, 480, 960 min, then the 24 h cap.
  const int64_t expected[] = {900, 1800, 3600, 7200, 14400, 28800, 57600, 86400};
  for (uint32_t n = 1; n <= 8; ++n) {
    EXPECT_EQ(BackoffDelaySeconds(n, 0.0), expected[n - 1]) << "N=" << n;
  }
}

TEST(BackoffTest, ExactSequenceWithRandNearOne) {
  // floor(2^(N-1) * 900 * 1.999): 1799.1, 3598.2, 7196.4, 14392.8, 28785.6, 57571.2, then 115142.4 -> 24 h.
  const int64_t expected[] = {1799, 3598, 7196, 14392, 28785, 57571, 86400, 86400};
  for (uint32_t n = 1; n <= 8; ++n) {
    EXPECT_EQ(BackoffDelaySeconds(n, 0.999), expected[n - 1]) << "N=" << n;
  }
}

TEST(BackoffTest, StaysAtTheCapAndNeverOverflows) {
  for (uint32_t n : {8u, 9u, 31u, 32u, 33u, 64u, 1000u, std::numeric_limits<uint32_t>::max()}) {
    EXPECT_EQ(BackoffDelaySeconds(n, 0.0), kMaxBackoffSeconds) << "N=" << n;
    EXPECT_EQ(BackoffDelaySeconds(n, kJustBelowOne), kMaxBackoffSeconds) << "N=" << n;
  }
  // The largest uncapped value: N=7 with rand 0 is 57600; with rand 0.5, 86400 exactly; above, capped.
  EXPECT_EQ(BackoffDelaySeconds(7, 0.5), 86400);
  EXPECT_EQ(BackoffDelaySeconds(7, 0.25), 72000);
  // The random part spans [base, 2 * base): with rand just below 1 the first backoff is 1799, never 1800.
  EXPECT_EQ(BackoffDelaySeconds(1, kJustBelowOne), 1799);
  EXPECT_EQ(BackoffDelaySeconds(1, 0.5), 1350);
}

TEST(PollTest, JitterIsTenPercentAroundThirtyMinutes) {
  EXPECT_EQ(PollDelaySeconds(0, 0.0), 1620);  // 27 min
  EXPECT_EQ(PollDelaySeconds(0, 0.5), 1800);  // 30 min
  EXPECT_EQ(PollDelaySeconds(0, 0.75), 1890);
  EXPECT_EQ(PollDelaySeconds(0, kJustBelowOne), 1979);  // just under 33 min
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = 0;
  for (int i = 0; i < 1000; ++i) {
    const int64_t d = PollDelaySeconds(0, i / 1000.0);
    EXPECT_GE(d, 1620);
    EXPECT_LT(d, 1980);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_EQ(lo, 1620);
  EXPECT_EQ(hi, 1979);
}

TEST(PollTest, ServerMinimumWaitWinsWhenLarger) {
  EXPECT_EQ(PollDelaySeconds(7200, 0.5), 7200);
  EXPECT_EQ(PollDelaySeconds(7200, kJustBelowOne), 7200);
  EXPECT_EQ(PollDelaySeconds(1900, 0.0), 1900);            // beats 1620 ...
  EXPECT_EQ(PollDelaySeconds(1900, kJustBelowOne), 1979);  // ... but not 1979
  EXPECT_EQ(PollDelaySeconds(86400, 0.0), 86400);
}

// A minimum wait under 30 minutes is the publisher's cadence (a `urlguard-publish loop --every 60` list):
// clients poll at it, or a threat listed now would reach them half an hour later, not within two minutes.
TEST(PollTest, AShortMinimumWaitIsThePublishersCadence) {
  EXPECT_EQ(PollDelaySeconds(60, 0.0), 60);
  EXPECT_EQ(PollDelaySeconds(60, 0.5), 61);
  EXPECT_EQ(PollDelaySeconds(60, kJustBelowOne), 62);  // +5 %: [60, 63)
  EXPECT_EQ(PollDelaySeconds(100, 0.5), 102);
  EXPECT_EQ(PollDelaySeconds(600, kJustBelowOne), 629);
  EXPECT_EQ(PollDelaySeconds(1799, 0.0), 1799);
  EXPECT_EQ(PollDelaySeconds(1799, kJustBelowOne), 1887);
  // Never more often than once a minute, whatever a (signed) manifest asks.
  EXPECT_EQ(PollDelaySeconds(1, 0.0), kMinPollIntervalSeconds);
  EXPECT_EQ(PollDelaySeconds(20, kJustBelowOne), 62);
  for (int i = 0; i < 1000; ++i) {
    const int64_t d = PollDelaySeconds(60, i / 1000.0);
    EXPECT_GE(d, 60);
    EXPECT_LT(d, 63);
  }
  // Retry-After still wins over a short cadence, and a failure still backs off.
  Script script({0.0, 0.0});
  ListSyncState s;
  RecordSyncSuccess(&s, 1700000000, /*not_modified=*/true, /*min_wait=*/60, /*retry_after=*/300, script.source());
  EXPECT_EQ(s.next_attempt_unix, 1700000300);
  RecordSyncFailure(&s, 1700001000, "x", /*min_wait=*/60, -1, script.source());
  EXPECT_EQ(s.next_attempt_unix, 1700001000 + kBackoffBaseSeconds);
}

// A publishing loop stamps each version with the time it started, every c seconds: a client polls at its own
// place o in [c/6, c/2) after each version is due, so it sees a version 10..30 s after it is due at a minute
// cadence instead of 0..63 s after it appears (docs/sync-protocol.md §2).
TEST(AlignedPollTest, PollsAtItsPlaceAfterTheNextVersionIsDue) {
  const int64_t kCreated = 1700000000;  // version V started at this second (the publisher's clock)
  PublisherClock pub{kCreated, 0};
  // The first poll after start (scheduled 0): o = 10 + floor(u * 20). Polled 7 s after V started: V + 1 is
  // due at kCreated + 60; this client goes 10 + 10 = 20 s after it.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 7, 0, 60, pub, 0.5), 60 + 20 - 7);
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 7, 0, 60, pub, 0.0), 60 + 10 - 7);
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 7, 0, 60, pub, kJustBelowOne), 60 + 29 - 7);
  // Steady state: polled at its place (scheduled = created + 23), it keeps it, whatever u says: exactly c.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 23, kCreated + 23, 60, pub, 0.9), 60);
  // Its place wrapped by whole cycles is still its place (the version it polled for was not out: V - 2).
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 143, kCreated + 143, 60, pub, 0.0), 60);
  // A pass that ended late (the poll was due at +23, now is +26) does not poll sooner than c: +86, not +83.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 26, kCreated + 23, 60, pub, 0.0), 60);
  // A poll due outside the window (a restart's first poll at +45) takes a place, 10 + floor(0.25 * 20) = 15,
  // and moves there: kCreated + 75 is 30 s ahead, under c - c/6 = 50, so kCreated + 135, 90 s ahead.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 45, kCreated + 45, 60, pub, 0.25), 90);
  // ... and keeps it from then on.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 135, kCreated + 135, 60, pub, 0.99), 60);
  // A pass more than c/6 late (due at +23, now +35) waits for the cycle after: +143, 108 s ahead.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 35, kCreated + 23, 60, pub, 0.0), 108);
  // A place measured a little past the window's end (+30 .. +34: the tolerance, 5 s at 60 s, covers the noise of
  // the measured clock offset) is clamped to +29, and the poll comes c later (never sooner). One well past it
  // (+36) is drawn anew: 10 + floor(0.1 * 20) = 12, at +132, 96 s ahead.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 30, kCreated + 30, 60, pub, 0.1), 60);
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 34, kCreated + 34, 60, pub, 0.1), 60);
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 36, kCreated + 36, 60, pub, 0.1), 96);
  // A little before the window's start (+7) is clamped up to it: +70, 63 s ahead; well before (+4) is drawn
  // anew: 10 + floor(0.5 * 20) = 20, at +80.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 7, kCreated + 7, 60, pub, 0.9), 63);
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 4, kCreated + 4, 60, pub, 0.5), 76);
  // A longer cadence scales the window: c = 600, o in [100, 300).
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 130, kCreated + 130, 600, pub, 0.0), 600);
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 5, 0, 600, pub, 0.0), 600 + 100 - 5);
  // A manifest minimum wait under a minute is polled once a minute, on the minute grid of created.
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated + 20, kCreated + 20, 1, pub, 0.0), 60);
}

TEST(AlignedPollTest, TheServersDateCorrectsOurClock) {
  const int64_t kCreated = 1700000000;
  // Our clock is 40 s behind the server's: the server says kCreated + 20 when ours says kCreated - 20. The
  // place (+20 on the publisher's clock) is kept, and the next poll is at kCreated + 80 - 40 on ours.
  PublisherClock behind{kCreated, 40};
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated - 20, kCreated - 20, 60, behind, 0.0), 60);
  // Without the Date the client takes its own clock: then (-20 mod 60) = 40 is outside the window and a place
  // is drawn: 10 on the publisher's grid, seen from our clock: kCreated + 70 is 90 s ahead.
  PublisherClock unknown{kCreated, 0};
  EXPECT_EQ(AlignedPollDelaySeconds(kCreated - 20, kCreated - 20, 60, unknown, 0.0), 90);
  // Any offset, any created (past, future, absurd) gives a delay in [c, 2 c - c/6).
  for (int64_t off : {int64_t{-5000000000}, int64_t{-3601}, int64_t{-1}, int64_t{0}, int64_t{59},
                      int64_t{86400 * 365}, std::numeric_limits<int64_t>::max(),
                      std::numeric_limits<int64_t>::min()}) {
    for (int64_t created : {int64_t{1}, kCreated - 86400 * 30, kCreated + 7, kCreated + 86400,
                            kMaxSyncUnixSeconds, std::numeric_limits<int64_t>::max()}) {
      for (int64_t scheduled : {int64_t{0}, kCreated, kCreated + 31, int64_t{-7}}) {
        for (uint32_t c : {1u, 60u, 61u, 90u, 1799u}) {
          for (double u : {0.0, 0.3, kJustBelowOne}) {
            const int64_t d = AlignedPollDelaySeconds(kCreated, scheduled, c, PublisherClock{created, off}, u);
            const int64_t cadence = std::max<int64_t>(c, 60);
            EXPECT_GE(d, cadence) << off << " " << created << " " << scheduled << " " << c;
            EXPECT_LT(d, 2 * cadence - cadence / 6) << off << " " << created << " " << scheduled << " " << c;
          }
        }
      }
    }
  }
}

// The clock offset a pass measures (the server's Date against our clock, both in whole seconds, `now` taken at
// the pass's start) varies by a second or two from pass to pass. A client placed at either edge of the window keeps
// polling once a cycle through that noise: it never waits a cycle more (a freshness bench run at 100 M saw one
// client draw a new place at +31 and see a version 139 s after its first entry arrived).
TEST(AlignedPollTest, TheOffsetsNoiseNeverCostsACycle) {
  const int64_t kCreated = 1700000000;
  std::mt19937_64 rng(3);
  for (int64_t place : {int64_t{10}, int64_t{29}, int64_t{20}}) {
    int64_t scheduled = kCreated + 60 + place;  // on our clock, which agrees with the publisher's but for noise
    int64_t max_delay = 0;
    for (int pass = 0; pass < 2000; ++pass) {
      const int64_t noise = static_cast<int64_t>(rng() % 5) - 2;  // -2 .. +2 s
      const int64_t d = AlignedPollDelaySeconds(scheduled, scheduled, 60, PublisherClock{kCreated, noise},
                                                static_cast<double>(rng() % 1000) / 1000.0);
      max_delay = std::max(max_delay, d);
      ASSERT_LE(d, 60 + 5) << "place " << place << " pass " << pass;
      scheduled += d;
      // Every poll lands within the window and its tolerance after a version was due (no cycle skipped).
      const int64_t o = (scheduled - kCreated) % 60;
      ASSERT_GE(o, 10 - 2) << "place " << place << " pass " << pass;
      ASSERT_LT(o, 30 + 5 + 2) << "place " << place << " pass " << pass;
    }
    EXPECT_GE(max_delay, 60);
  }
}

TEST(AlignedPollTest, WithoutACadenceOrACreationTimeThePlainRuleHolds) {
  for (double u : {0.0, 0.5, kJustBelowOne}) {
    EXPECT_EQ(AlignedPollDelaySeconds(1700000000, 0, 60, PublisherClock{}, u), PollDelaySeconds(60, u));
    EXPECT_EQ(AlignedPollDelaySeconds(1700000000, 0, 0, PublisherClock{1699999990, 0}, u), PollDelaySeconds(0, u));
    EXPECT_EQ(AlignedPollDelaySeconds(1700000000, 0, 1800, PublisherClock{1699999990, 0}, u),
              PollDelaySeconds(1800, u));
    EXPECT_EQ(AlignedPollDelaySeconds(1700000000, 0, 7200, PublisherClock{1699999990, 0}, u),
              PollDelaySeconds(7200, u));
  }
  // RecordSyncSuccess uses the state's previous next attempt as the time the poll was due, and Retry-After
  // still wins.
  const int64_t kCreated = 1700000000;
  Script script({0.9, 0.9});
  ListSyncState s;
  s.next_attempt_unix = kCreated + 25;
  RecordSyncSuccess(&s, kCreated + 25, false, 60, -1, script.source(), PublisherClock{kCreated, 0});
  EXPECT_EQ(s.next_attempt_unix, kCreated + 85);
  RecordSyncSuccess(&s, kCreated + 85, true, 60, /*retry_after=*/600, script.source(), PublisherClock{kCreated, 0});
  EXPECT_EQ(s.next_attempt_unix, kCreated + 685);
}

TEST(FirstSyncTest, WithinTheFirstMinute) {
  EXPECT_EQ(FirstSyncDelaySeconds(0.0), 0);
  EXPECT_EQ(FirstSyncDelaySeconds(0.5), 30);
  EXPECT_EQ(FirstSyncDelaySeconds(kJustBelowOne), 59);
  for (int i = 0; i < 1000; ++i) {
    const int64_t d = FirstSyncDelaySeconds(i / 1000.0);
    EXPECT_GE(d, 0);
    EXPECT_LT(d, kFirstSyncMaxDelaySeconds);
  }
}

TEST(UniformSourceTest, EnvSourceUsesFiftyThreeBitsBelowOne) {
  class FixedRandomEnv : public EnvWrapper {
   public:
    explicit FixedRandomEnv(unsigned char byte) : EnvWrapper(Env::Default()), byte_(byte) {}
    void RandomBytes(void* out, size_t size) override { std::memset(out, byte_, size); }

   private:
    unsigned char byte_;
  };
  FixedRandomEnv ones(0xff), zeros(0x00);
  EXPECT_EQ(EnvUniformSource(&ones)(), 1.0 - std::ldexp(1.0, -53));
  EXPECT_LT(EnvUniformSource(&ones)(), 1.0);
  EXPECT_EQ(EnvUniformSource(&zeros)(), 0.0);
  // The real one: in range, and not constant.
  UniformSource real = EnvUniformSource(Env::Default());
  double first = real(), min = first, max = first;
  for (int i = 0; i < 100; ++i) {
    const double u = real();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    min = std::min(min, u);
    max = std::max(max, u);
  }
  EXPECT_LT(min, max);
}

// ---- recording attempts -----------------------------------------------------------------------------------

constexpr int64_t kNow = 1700000000;

TEST(RecordTest, FailuresBackOffThenSuccessResets) {
  ListSyncState s;
  s.list = "phishing";
  s.manifest_etag = "\"v7\"";
  s.last_success_unix = kNow - 100;
  Script script({0.0, 0.0, 0.999, 0.5});
  RecordSyncFailure(&s, kNow, "unavailable: connect refused", 0, -1, script.source());
  EXPECT_EQ(s.consecutive_failures, 1u);
  EXPECT_EQ(s.last_attempt_unix, kNow);
  EXPECT_EQ(s.next_attempt_unix, kNow + 900);
  EXPECT_EQ(s.last_result, "error");
  EXPECT_EQ(s.last_error, "unavailable: connect refused");
  EXPECT_EQ(s.last_success_unix, kNow - 100);  // untouched by a failure
  EXPECT_EQ(s.manifest_etag, "\"v7\"");

  RecordSyncFailure(&s, kNow + 900, "again", 0, -1, script.source());
  EXPECT_EQ(s.consecutive_failures, 2u);
  EXPECT_EQ(s.next_attempt_unix, kNow + 900 + 1800);
  RecordSyncFailure(&s, kNow + 2700, "again", 0, -1, script.source());
  EXPECT_EQ(s.consecutive_failures, 3u);
  EXPECT_EQ(s.next_attempt_unix, kNow + 2700 + 7196);

  RecordSyncSuccess(&s, kNow + 10000, /*not_modified=*/true, 0, -1, script.source());
  EXPECT_EQ(s.consecutive_failures, 0u);
  EXPECT_EQ(s.last_result, "not_modified");
  EXPECT_EQ(s.last_error, "");
  EXPECT_EQ(s.last_attempt_unix, kNow + 10000);
  EXPECT_EQ(s.last_success_unix, kNow + 10000);
  EXPECT_EQ(s.next_attempt_unix, kNow + 10000 + 1800);
  EXPECT_EQ(s.manifest_etag, "\"v7\"");
  EXPECT_EQ(script.draws(), 4u);  // one draw per attempt
}

TEST(RecordTest, EightConsecutiveFailuresReachTheCap) {
  ListSyncState s;
  s.list = "malware";
  const int64_t expected[] = {900, 1800, 3600, 7200, 14400, 28800, 57600, 86400, 86400};
  int64_t now = kNow;
  for (int64_t delay : expected) {
    Script script({0.0});
    RecordSyncFailure(&s, now, "x", 0, -1, script.source());
    EXPECT_EQ(s.next_attempt_unix - now, delay) << "failure " << s.consecutive_failures;
    now = s.next_attempt_unix;
  }
  EXPECT_EQ(s.consecutive_failures, 9u);
}

TEST(RecordTest, RetryAfterWinsWhenLater) {
  ListSyncState s;
  s.list = "phishing";
  Script script({0.0, 0.0, 0.0, 0.5, 0.5, 0.5});
  RecordSyncFailure(&s, kNow, "503", 0, /*retry_after=*/3600, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + 3600);  // beats the 900 s backoff
  RecordSyncFailure(&s, kNow, "503", 0, /*retry_after=*/60, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + 1800);  // the backoff is later
  RecordSyncFailure(&s, kNow, "503", 0, /*retry_after=*/30 * 86400, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + kMaxBackoffSeconds);  // an unsigned header never silences us > 24 h
  RecordSyncSuccess(&s, kNow, false, 0, /*retry_after=*/5000, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + 5000);
  EXPECT_EQ(s.last_result, "ok");
  RecordSyncSuccess(&s, kNow, false, 0, /*retry_after=*/0, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + 1800);
  RecordSyncSuccess(&s, kNow, false, 0, /*retry_after=*/1000000, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + kMaxBackoffSeconds);
}

TEST(RecordTest, MinimumWaitWinsAfterSuccessAndFailure) {
  ListSyncState s;
  s.list = "phishing";
  Script script({0.5, 0.0, 0.5});
  RecordSyncSuccess(&s, kNow, false, /*min_wait=*/7200, -1, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + 7200);
  RecordSyncFailure(&s, kNow, "x", /*min_wait=*/7200, -1, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + 7200);  // beats the 900 s backoff
  RecordSyncFailure(&s, kNow, "x", /*min_wait=*/7200, /*retry_after=*/9000, script.source());
  EXPECT_EQ(s.next_attempt_unix, kNow + 9000);  // Retry-After later still
}

TEST(RecordTest, FailureCountSaturates) {
  ListSyncState s;
  s.list = "phishing";
  s.consecutive_failures = std::numeric_limits<uint32_t>::max();
  Script script({0.0});
  RecordSyncFailure(&s, kNow, "x", 0, -1, script.source());
  EXPECT_EQ(s.consecutive_failures, std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(s.next_attempt_unix, kNow + kMaxBackoffSeconds);
}

TEST(RecordTest, ErrorTextIsCleanedAndCapped) {
  ListSyncState s;
  s.list = "phishing";
  Script script(std::vector<double>(4, 0.0));
  RecordSyncFailure(&s, kNow, std::string("bad\r\nline\0x\x7f", 12), 0, -1, script.source());
  EXPECT_EQ(s.last_error, "bad??line?x?");
  RecordSyncFailure(&s, kNow, "caf\xc3\xa9 \xff\xc3 ok", 0, -1,
                    script.source());  // é kept; 0xff, lone 0xc3 not
  EXPECT_EQ(s.last_error, "caf\xc3\xa9 ?? ok");
  RecordSyncFailure(&s, kNow, std::string(5000, 'e'), 0, -1, script.source());
  EXPECT_EQ(s.last_error, std::string(kMaxSyncErrorBytes, 'e'));
  // Cut at a character boundary: 1023 ASCII bytes, then a two-byte character that would end at 1025.
  RecordSyncFailure(&s, kNow, std::string(1023, 'a') + "\xc3\xa9tail", 0, -1, script.source());
  EXPECT_EQ(s.last_error, std::string(1023, 'a'));
  EXPECT_TRUE(ValidateListSyncState(s).ok());
}

TEST(RecordTest, TimesAreClampedIntoTheFileRange) {
  ListSyncState s;
  s.list = "phishing";
  Script script({0.0, 0.0});
  RecordSyncFailure(&s, kMaxSyncUnixSeconds - 10, "x", 0, -1, script.source());
  EXPECT_EQ(s.next_attempt_unix, kMaxSyncUnixSeconds);
  RecordSyncSuccess(&s, -5, false, 0, -1, script.source());
  EXPECT_EQ(s.last_attempt_unix, 0);
  EXPECT_EQ(s.next_attempt_unix, 1620);
  EXPECT_TRUE(ValidateListSyncState(s).ok());
}

TEST(StartupTest, HonoursAPersistedWaitAndOtherwiseSyncsSoon) {
  ListSyncState fresh;
  fresh.list = "phishing";
  {
    Script script({0.5});
    EXPECT_EQ(StartupAttemptTime(fresh, kNow, script.source()), kNow + 30);
    EXPECT_EQ(script.draws(), 1u);
  }
  ListSyncState backing_off = fresh;
  backing_off.last_attempt_unix = kNow - 100;
  backing_off.next_attempt_unix = kNow + 20000;  // a backoff or Retry-After still running
  {
    Script script({});
    EXPECT_EQ(StartupAttemptTime(backing_off, kNow, script.source()), kNow + 20000);
    EXPECT_EQ(script.draws(), 0u);
  }
  ListSyncState overdue = backing_off;
  overdue.next_attempt_unix = kNow - 1;
  {
    Script script({0.0});
    EXPECT_EQ(StartupAttemptTime(overdue, kNow, script.source()), kNow);
  }
  ListSyncState due_now = backing_off;
  due_now.next_attempt_unix = kNow;
  {
    Script script({kJustBelowOne});
    EXPECT_EQ(StartupAttemptTime(due_now, kNow, script.source()), kNow + 59);
  }
  ListSyncState implausible = backing_off;  // more than 24 h ahead: the clock went back
  implausible.next_attempt_unix = kNow + kMaxBackoffSeconds + 1;
  {
    Script script({0.5});
    EXPECT_EQ(StartupAttemptTime(implausible, kNow, script.source()), kNow + 30);
  }
  ListSyncState at_limit = backing_off;
  at_limit.next_attempt_unix = kNow + kMaxBackoffSeconds;
  {
    Script script({});
    EXPECT_EQ(StartupAttemptTime(at_limit, kNow, script.source()), kNow + kMaxBackoffSeconds);
  }
}

TEST(FindOrAddTest, FindsOrAppends) {
  std::vector<ListSyncState> states;
  ListSyncState* a = FindOrAddListSyncState(&states, "phishing");
  a->consecutive_failures = 3;
  FindOrAddListSyncState(&states, "malware");
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(FindOrAddListSyncState(&states, "phishing")->consecutive_failures, 3u);
  EXPECT_EQ(states.size(), 2u);
  EXPECT_EQ(states[1].list, "malware");
  ListSyncState expected;
  expected.list = "malware";
  EXPECT_EQ(states[1], expected);
}

// ---- the file ---------------------------------------------------------------------------------------------

std::vector<ListSyncState> SampleStates() {
  ListSyncState phishing;
  phishing.list = "phishing";
  phishing.last_attempt_unix = 1700000000;
  phishing.last_success_unix = 1699990000;
  phishing.next_attempt_unix = 1700001800;
  phishing.consecutive_failures = 2;
  phishing.last_result = "error";
  phishing.last_error =
      "unavailable: GET https://u.example/v1/lists/phishing/manifest.json: caf\xc3\xa9 \"quoted\"";
  phishing.manifest_etag = "W/\"abc\\def\"";
  ListSyncState malware;
  malware.list = "malware";
  malware.last_attempt_unix = kMaxSyncUnixSeconds;
  malware.last_success_unix = kMaxSyncUnixSeconds;
  malware.next_attempt_unix = kMaxSyncUnixSeconds;
  malware.consecutive_failures = std::numeric_limits<uint32_t>::max();
  malware.last_result = "not_modified";
  ListSyncState fresh;
  fresh.list = "a-new_list9";
  return {phishing, malware, fresh};
}

TEST(SyncStateFileTest, GoldenBytes) {
  // Changes the file format: bump kSyncStateFormatVersion and update docs/sync-protocol.md.
  ListSyncState s;
  s.list = "phishing";
  s.last_attempt_unix = 1700000000;
  s.last_success_unix = 1700000000;
  s.next_attempt_unix = 1700001800;
  s.last_result = "ok";
  s.manifest_etag = "\"v7\"";
  auto bytes = SerializeSyncState({s});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, R"({
  "format": 1,
  "lists": [
    {
      "consecutive_failures": 0,
      "last_attempt_unix": 1700000000,
      "last_error": "",
      "last_result": "ok",
      "last_success_unix": 1700000000,
      "list": "phishing",
      "manifest_etag": "\"v7\"",
      "next_attempt_unix": 1700001800
    }
  ]
}
)");
  auto back = ParseSyncState(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0], s);
}

TEST(SyncStateFileTest, SaveLoadRoundTrip) {
  const std::string dir = testing::ScratchDir("scheduler_test");
  const std::vector<ListSyncState> states = SampleStates();
  ASSERT_TRUE(SaveSyncState(Env::Default(), dir, states).ok());
  EXPECT_TRUE(Env::Default()->FileExists(dir + "/sync-state.json"));
  EXPECT_FALSE(Env::Default()->FileExists(dir + "/sync-state.json.tmp"));
  LoadedSyncState loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_TRUE(loaded.warning.ok()) << loaded.warning.ToString();
  // Sorted by name on the way back.
  ASSERT_EQ(loaded.lists.size(), 3u);
  EXPECT_EQ(loaded.lists[0], states[2]);
  EXPECT_EQ(loaded.lists[1], states[1]);
  EXPECT_EQ(loaded.lists[2], states[0]);

  // Saving again replaces the file; an empty set is a valid file too.
  ASSERT_TRUE(SaveSyncState(Env::Default(), dir, {}).ok());
  loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_TRUE(loaded.warning.ok());
  EXPECT_TRUE(loaded.lists.empty());
}

TEST(SyncStateFileTest, RecordedStatesSurviveTheFile) {
  // Whatever RecordSyncFailure keeps (arbitrary error bytes), the file can hold.
  std::vector<ListSyncState> states;
  Script script({0.3});
  std::string nasty;
  for (int i = 0; i < 3000; ++i) nasty += static_cast<char>(i * 37);
  RecordSyncFailure(FindOrAddListSyncState(&states, "phishing"), kNow, nasty, 0, -1, script.source());
  auto bytes = SerializeSyncState(states);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto back = ParseSyncState(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, states);
}

TEST(SyncStateFileTest, MissingFileIsAFreshStartWithoutWarning) {
  const std::string dir = testing::ScratchDir("scheduler_test");
  LoadedSyncState loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_TRUE(loaded.warning.ok());
  EXPECT_TRUE(loaded.lists.empty());
  loaded = LoadSyncState(Env::Default(), dir + "/no/such/dir");
  EXPECT_TRUE(loaded.warning.ok());
}

TEST(SyncStateFileTest, CorruptFileIsAFreshStartWithAWarning) {
  const std::string dir = testing::ScratchDir("scheduler_test");
  const std::string path = dir + "/sync-state.json";
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), path, "{\"format\": 1, \"lists\": [{\"list\": \"phish").ok());
  LoadedSyncState loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_EQ(loaded.warning.code(), StatusCode::kCorruption);
  EXPECT_NE(loaded.warning.message().find("sync-state.json"), std::string::npos) << loaded.warning.ToString();
  EXPECT_TRUE(loaded.lists.empty());
  // The next save repairs it.
  ASSERT_TRUE(SaveSyncState(Env::Default(), dir, SampleStates()).ok());
  loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_TRUE(loaded.warning.ok());
  EXPECT_EQ(loaded.lists.size(), 3u);
}

TEST(SyncStateFileTest, OversizedFileIsNotReadAndIsAFreshStart) {
  const std::string dir = testing::ScratchDir("scheduler_test");
  // Valid JSON padded with whitespace to one byte over the cap: refused by size, not by content.
  std::string big = "{\"format\": 1, \"lists\": []}";
  big.append(kMaxSyncStateBytes + 1 - big.size(), ' ');
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), dir + "/sync-state.json", big).ok());
  LoadedSyncState loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_EQ(loaded.warning.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(loaded.lists.empty());
  EXPECT_EQ(ParseSyncState(big).status().code(), StatusCode::kResourceExhausted);
  big.pop_back();  // exactly at the cap: fine
  EXPECT_TRUE(ParseSyncState(big).ok());
}

TEST(SyncStateFileTest, UnreadableFileIsAFreshStartWithAWarning) {
  class FailingReadEnv : public EnvWrapper {
   public:
    FailingReadEnv() : EnvWrapper(Env::Default()) {}
    Result<std::string> ReadFile(const std::string&, size_t) override {
      return Status::IoError("EIO (injected)");
    }
  };
  FailingReadEnv env;
  LoadedSyncState loaded = LoadSyncState(&env, testing::ScratchDir("scheduler_test"));
  EXPECT_EQ(loaded.warning.code(), StatusCode::kIoError);
  EXPECT_TRUE(loaded.lists.empty());
}

TEST(SyncStateFileTest, SaveFailureIsReported) {
  FaultInjectionEnv env;
  env.FailOp(FaultOp::kRename, 0, Status::IoError("ENOSPC (injected)"));
  const std::string dir = testing::ScratchDir("scheduler_test");
  ASSERT_TRUE(SaveSyncState(Env::Default(), dir, SampleStates()).ok());
  EXPECT_EQ(SaveSyncState(&env, dir, {}).code(), StatusCode::kIoError);
  // The old file is intact and the temporary file is gone.
  LoadedSyncState loaded = LoadSyncState(Env::Default(), dir);
  EXPECT_TRUE(loaded.warning.ok());
  EXPECT_EQ(loaded.lists.size(), 3u);
  EXPECT_FALSE(Env::Default()->FileExists(dir + "/sync-state.json.tmp"));
}

std::string OneList(const std::string& members) { return "{\"format\": 1, \"lists\": [{" + members + "}]}"; }

constexpr char kGoodMembers[] =
    R"("list": "phishing", "last_attempt_unix": 1, "last_success_unix": 2, "next_attempt_unix": 3,
       "consecutive_failures": 4, "last_result": "error", "last_error": "e", "manifest_etag": "\"x\"")";

TEST(SyncStateFileTest, ParserRefusesMalformedFiles) {
  ASSERT_TRUE(ParseSyncState(OneList(kGoodMembers)).ok());
  const std::string good = kGoodMembers;
  auto with = [&good](const std::string& from, const std::string& to) {
    std::string m = good;
    const size_t at = m.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    m.replace(at, from.size(), to);
    return OneList(m);
  };
  const std::vector<std::string> corrupt = {
      "",
      "null",
      "[]",
      "{}",
      "{\"format\": 1}",
      "{\"format\": 2, \"lists\": []}",
      "{\"format\": \"1\", \"lists\": []}",
      "{\"format\": 1, \"lists\": {}}",
      "{\"format\": 1, \"lists\": [1]}",
      "{\"format\": 1, \"lists\": []} trailing",
      "\xef\xbb\xbf{\"format\": 1, \"lists\": [\"\xff\"]}",
      with("\"list\": \"phishing\"", "\"list\": \"Phishing\""),
      with("\"list\": \"phishing\"", "\"list\": \"\""),
      with("\"list\": \"phishing\", ", ""),
      with("\"last_attempt_unix\": 1", "\"last_attempt_unix\": -1"),
      with("\"last_attempt_unix\": 1", "\"last_attempt_unix\": 1.5"),
      with("\"last_attempt_unix\": 1", "\"last_attempt_unix\": \"1\""),
      with("\"last_success_unix\": 2", "\"last_success_unix\": 253402300800"),
      with("\"next_attempt_unix\": 3", "\"next_attempt_unix\": 18446744073709551616"),
      with("\"next_attempt_unix\": 3,", ""),
      with("\"consecutive_failures\": 4", "\"consecutive_failures\": 4294967296"),
      with("\"consecutive_failures\": 4", "\"consecutive_failures\": null"),
      with("\"last_result\": \"error\"", "\"last_result\": \"fine\""),
      with("\"last_error\": \"e\"", "\"last_error\": \"" + std::string(kMaxSyncErrorBytes + 1, 'e') + "\""),
      with("\"last_error\": \"e\"", "\"last_error\": \"a\\nb\""),
      with("\"last_error\": \"e\"", "\"last_error\": \"\\u0000\""),
      with("\"last_error\": \"e\"", "\"last_error\": 5"),
      with("\"manifest_etag\": \"\\\"x\\\"\"",
           "\"manifest_etag\": \"" + std::string(kMaxEtagBytes + 1, 'x') + "\""),
      with("\"manifest_etag\": \"\\\"x\\\"\"", "\"manifest_etag\": \"caf\xc3\xa9\""),
      "{\"format\": 1, \"lists\": [{" + good + "}, {" + good + "}]}",
  };
  for (const std::string& bytes : corrupt) {
    auto parsed = ParseSyncState(bytes);
    EXPECT_FALSE(parsed.ok()) << bytes;
    if (!parsed.ok()) {
      EXPECT_EQ(parsed.status().code(), StatusCode::kCorruption)
          << bytes << " -> " << parsed.status().ToString();
    }
  }
}

TEST(SyncStateFileTest, ParserIgnoresUnknownMembersAndCapsTheListCount) {
  auto parsed = ParseSyncState("{\"format\": 1, \"future\": [1, {}], \"lists\": [{" +
                               std::string(kGoodMembers) + ", \"also_new\": true}]}");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].consecutive_failures, 4u);
  EXPECT_EQ((*parsed)[0].manifest_etag, "\"x\"");

  std::vector<ListSyncState> many;
  for (size_t i = 0; i <= kMaxSyncStateLists; ++i) FindOrAddListSyncState(&many, "list" + std::to_string(i));
  EXPECT_EQ(SerializeSyncState(many).status().code(), StatusCode::kInvalidArgument);
  many.pop_back();
  auto bytes = SerializeSyncState(many);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(ParseSyncState(*bytes).ok());
  // One more entry, written by hand: refused on the way in too.
  std::string over = *bytes;
  const size_t close = over.rfind(']');
  over.insert(close, ", {" + std::string(kGoodMembers) + "}");
  EXPECT_EQ(ParseSyncState(over).status().code(), StatusCode::kCorruption);
}

TEST(SyncStateFileTest, SerializerRefusesInvalidStates) {
  std::vector<ListSyncState> dup = SampleStates();
  dup.push_back(dup[0]);
  EXPECT_EQ(SerializeSyncState(dup).status().code(), StatusCode::kInvalidArgument);
  for (auto mutate : std::vector<void (*)(ListSyncState&)>{
           [](ListSyncState& s) { s.list = "Bad Name"; },
           [](ListSyncState& s) { s.last_attempt_unix = -1; },
           [](ListSyncState& s) { s.next_attempt_unix = kMaxSyncUnixSeconds + 1; },
           [](ListSyncState& s) { s.last_result = "maybe"; },
           [](ListSyncState& s) { s.last_error = "line\nbreak"; },
           [](ListSyncState& s) { s.last_error = "\xff"; },
           [](ListSyncState& s) { s.manifest_etag = "\"a\r\nInjected: 1\""; },
       }) {
    std::vector<ListSyncState> states = SampleStates();
    mutate(states[0]);
    EXPECT_EQ(SerializeSyncState(states).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(SaveSyncState(Env::Default(), testing::ScratchDir("scheduler_test"), states).code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace urlguard
