// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The Syncer's public report of a list's pass (ToSyncReport, sync/syncer.h) is a copy of the updater's internal
// SyncOutcome (sync/updater.h), which holds more than a caller needs. These tests fail when a SyncReport field is
// added and not carried.
#include "sync/syncer.h"

#include <gtest/gtest.h>

#include "tests/field_count.h"
#include "urlguard/sync.h"

namespace urlguard {
namespace {

using testing::FieldCount;

// Where each SyncReport field comes from. Adding a field stops the build here: fill it, then list it.
//   ToSyncReport (checked below): list, result, from_version, to_version, used_diff, bytes, error, diffs,
//   diff_bytes
//   Syncer::RunDue's list discovery step only: over_list_limit (tests/updater_test.cc)
static_assert(FieldCount<SyncReport>() == 10,
              "SyncReport changed: fill the new field in ToSyncReport and list it in sync/syncer_test.cc");

TEST(ToSyncReport, CarriesEveryField) {
  SyncOutcome out;
  out.kind = SyncOutcome::kUpdated;
  out.from_version = 11;
  out.to_version = 13;
  out.used_diff = true;
  out.bytes_downloaded = 4242;
  out.range_diffs = 2;
  out.diff_bytes = 1234;
  const SyncReport r = ToSyncReport("phish", out);
  EXPECT_EQ(r.list, "phish");
  EXPECT_EQ(r.result, SyncResult::kUpdated);
  EXPECT_EQ(r.from_version, 11u);
  EXPECT_EQ(r.to_version, 13u);
  EXPECT_TRUE(r.used_diff);
  EXPECT_EQ(r.bytes, 4242u);
  EXPECT_EQ(r.diffs, 2u);
  EXPECT_EQ(r.diff_bytes, 1234u);
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.over_list_limit);
}

TEST(ToSyncReport, MapsEveryKindAndTheError) {
  const std::pair<SyncOutcome::Kind, SyncResult> kinds[] = {
      {SyncOutcome::kUpdated, SyncResult::kUpdated},
      {SyncOutcome::kNotModified, SyncResult::kNotModified},
      {SyncOutcome::kUpToDate, SyncResult::kUpToDate},
      {SyncOutcome::kFailed, SyncResult::kFailed},
  };
  for (const auto& [kind, result] : kinds) {
    SyncOutcome out;
    out.kind = kind;
    if (kind == SyncOutcome::kFailed) out.error = Status::PermissionDenied("untrusted key");
    const SyncReport r = ToSyncReport("l", out);
    EXPECT_EQ(r.result, result) << SyncOutcomeKindName(kind);
    EXPECT_EQ(r.error, kind == SyncOutcome::kFailed ? Status::PermissionDenied("untrusted key").ToString() : "");
  }
}

}  // namespace
}  // namespace urlguard
