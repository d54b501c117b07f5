// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The verdict-kind helpers of include/urlguard/checker.h: IsThreat, the one rule the CLI's exit status, the
// demo browser and any embedder use to decide whether a verdict is acted on as a threat, and VerdictKindName.
#include "urlguard/checker.h"

#include <gtest/gtest.h>

#include <string>

namespace urlguard {
namespace {

TEST(IsThreat, LocalConfirmedAndUndecidedHitsAreThreats) {
  EXPECT_TRUE(IsThreat(VerdictKind::kHit));        // nobody verified it: the filters have no false negatives
  EXPECT_TRUE(IsThreat(VerdictKind::kMalicious));  // confirmed
  EXPECT_TRUE(IsThreat(VerdictKind::kUnverifiedHit));  // fails closed when verification is unreachable
}

TEST(IsThreat, SafeVerifiedSafeAndInvalidAreNot) {
  EXPECT_FALSE(IsThreat(VerdictKind::kSafe));
  EXPECT_FALSE(IsThreat(VerdictKind::kSafeVerified));  // a filter false positive
  EXPECT_FALSE(IsThreat(VerdictKind::kInvalid));       // matched nothing; the caller handles it on its own
}

// Every kind has a name and a decision, and the decision follows the name: the three kinds whose name says a
// list matched and nobody cleared it. A kind added later must be placed on purpose (here and in IsThreat).
TEST(IsThreat, CoversEveryKind) {
  int threats = 0;
  for (int k = 0; k <= 5; ++k) {
    const VerdictKind kind = static_cast<VerdictKind>(k);
    const std::string name = VerdictKindName(kind);
    ASSERT_NE(name, "unknown") << k;
    const bool listed = name == "hit" || name == "malicious" || name == "unverified_hit";
    EXPECT_EQ(IsThreat(kind), listed) << name;
    threats += IsThreat(kind) ? 1 : 0;
  }
  EXPECT_EQ(threats, 3);
  EXPECT_STREQ(VerdictKindName(static_cast<VerdictKind>(6)), "unknown");
  EXPECT_FALSE(IsThreat(static_cast<VerdictKind>(6)));
}

}  // namespace
}  // namespace urlguard
