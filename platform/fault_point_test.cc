// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Fault points (platform/fault_point.h): with URLGUARD_FAULT_POINTS an armed point kills its process with SIGKILL
// and an unarmed one does nothing; without it no point does anything, even when armed.
#include "platform/fault_point.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

namespace urlguard {
namespace {

// The variable's name spelled out: in a build without fault points the header does not declare it.
constexpr char kArmVar[] = "URLGUARD_FAULT_KILL";

int Reach(const char* armed, const char* point) {
  if (armed != nullptr) ::setenv(kArmVar, armed, 1);
  URLGUARD_FAULT_POINT(point);
  URLGUARD_FAULT_POINT("test.fault-point.always-there");
  return 0;
}

#if defined(URLGUARD_FAULT_POINTS)

TEST(FaultPointTest, HeaderNamesTheVariableTheTestsSet) { EXPECT_STREQ(kFaultKillEnvVar, kArmVar); }

TEST(FaultPointTest, ArmedPointKillsTheProcess) {
  // Death tests run the statement in a child: the parent's environment stays unarmed.
  EXPECT_EXIT(Reach("test.fault-point.here", "test.fault-point.here"), ::testing::KilledBySignal(SIGKILL), "");
  EXPECT_EXIT(Reach("test.fault-point.always-there", "test.fault-point.here"), ::testing::KilledBySignal(SIGKILL),
              "");
}

#endif  // URLGUARD_FAULT_POINTS

// Without fault points this is the whole contract: an armed point is compiled out and the process lives on.
TEST(FaultPointTest, UnarmedOrCompiledOutPointReturns) {
  EXPECT_EXIT(
      {
        Reach(nullptr, "test.fault-point.here");
        Reach("test.fault-point.elsewhere", "test.fault-point.here");
        Reach("", "test.fault-point.here");
        Reach("test.fault-point.her", "test.fault-point.here");  // a prefix is another name
#if !defined(URLGUARD_FAULT_POINTS)
        Reach("test.fault-point.here", "test.fault-point.here");
#endif
        ::exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

}  // namespace
}  // namespace urlguard
