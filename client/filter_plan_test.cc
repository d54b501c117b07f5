// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// `urlguard plan` states the traffic its rate holds for: the Safe Browsing maximum of 5 whole-host + 25 other
// probes per URL (core/probe_model.h), and what a typical URL sees.
#include "urlguard/plan.h"

#include <gtest/gtest.h>

#include "core/probe_model.h"

namespace urlguard {
namespace {

TEST(FilterPlan, SizedForTheHeaviestUrl) {
  auto plan = PlanFilter(10000000, 0.001);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->sized_domain_probes, 5);
  EXPECT_EQ(plan->sized_url_probes, 25);
  EXPECT_EQ(plan->probes_per_url, 30);
  EXPECT_DOUBLE_EQ(plan->fp_rate_per_probe, 0.001 / 30);
  EXPECT_NEAR(static_cast<double>(plan->fingerprint_universe), 3e11, 2);  // n / (p / 30)
  // A URL that makes every one of the 30 probes stays within the target; a typical one (about 6) far below it.
  EXPECT_LE(plan->fingerprint_array.fp_rate_per_url, 0.001);
  // Every structure the plan offers holds the target (the blocked Bloom row once said 0.0041 at 0.001: it was
  // sized without the blocking penalty, unlike the list builder).
  EXPECT_LE(plan->blocked_bloom.fp_rate_per_url, 0.001);
  EXPECT_GT(plan->typical_probes_per_url, 5);
  EXPECT_LT(plan->typical_probes_per_url, 7);
  EXPECT_LT(plan->typical_fp_rate_per_url, 0.001 / 4);
  EXPECT_GT(plan->typical_fp_rate_per_url, 0.001 / 6);
}

TEST(FilterPlan, TextSaysWhatTrafficTheRateHoldsFor) {
  auto plan = PlanFilter(1000000, 0.001);
  ASSERT_TRUE(plan.ok());
  const std::string text = RenderFilterPlanText(*plan);
  EXPECT_NE(text.find("Traffic the rate holds for: every URL"), std::string::npos) << text;
  EXPECT_NE(text.find("5 whole-host + 25 other"), std::string::npos) << text;
  EXPECT_NE(text.find("(30 probes per URL"), std::string::npos) << text;
}

TEST(FilterPlan, RejectsBadArguments) {
  EXPECT_FALSE(PlanFilter(0, 0.001).ok());
  EXPECT_FALSE(PlanFilter(10, 1.5).ok());
}

}  // namespace
}  // namespace urlguard
