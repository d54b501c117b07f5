// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// PublishList (publish/publish_api.cc) copies the public ListPublishOptions into the internal PublishOptions and
// the internal PublishReport back into the public ListPublishReport. The internal types stay (Publish also serves
// UpdateFeeds and the PostgreSQL state, with fields no public caller sets), so these tests pin the copies: they
// fail when a public field is added and not carried.
#include <gtest/gtest.h>

#include "publish/publisher.h"
#include "tests/field_count.h"
#include "urlguard/publish.h"

namespace urlguard {
namespace {

using testing::FieldCount;

// Where each ListPublishOptions field goes. Adding a field stops the build here: carry it, then list it.
//   CopyListPublishOptions (checked below): repo_dir, list, expires_in_seconds, min_wait_seconds, keep, emergency,
//     fp_rate, default_threat, memory_budget, threads, phase_progress, max_removal, allow_large_removal (cap_removal),
//     manifest_format, checkpoint_changes, checkpoint_inline
//   PublishList itself: private_key_path (the key), inputs, add, remove (parsed into FeedSpecs), accept (resolved
//     into accepted_inputs), state (publish/pg_publish.h AttachPgState), env, progress (Publish's argument); the
//     publisher and CLI tests drive each
static_assert(FieldCount<ListPublishOptions>() == 24,
              "ListPublishOptions changed: carry the new field and list it in publish/publish_api_test.cc");

// Every field of ListPublishReport is filled by ToListPublishReport (checked below); an array counts one per
// element.
static_assert(FieldCount<ListPublishReport>() == 27,
              "ListPublishReport changed: fill the new field in ToListPublishReport and check it here");

TEST(CopyListPublishOptions, CarriesEveryField) {
  ListPublishOptions o;
  // Each a value no default has, and no two alike.
  o.repo_dir = "/repo/x";
  o.list = "phish-7";
  o.expires_in_seconds = 7777;
  o.min_wait_seconds = 61;
  o.keep = 9;
  o.emergency = true;
  o.fp_rate = 0.0123;
  o.default_threat = "malware-x";
  o.memory_budget = 12345678;
  o.threads = 5;
  int phases = 0;
  o.phase_progress = [&phases](PublishPhase, std::string_view, uint64_t) { ++phases; };
  o.max_removal = 0.375;
  o.allow_large_removal = false;
  o.manifest_format = 2;
  o.checkpoint_changes = 4242;
  o.checkpoint_inline = false;
  PublishOptions po;
  CopyListPublishOptions(o, &po);
  EXPECT_FALSE(po.checkpoint_inline);
  EXPECT_EQ(po.manifest_format, 2u);
  EXPECT_EQ(po.checkpoint_changes, 4242u);
  EXPECT_EQ(po.repo_dir, "/repo/x");
  EXPECT_EQ(po.list, "phish-7");
  EXPECT_EQ(po.expires_in_seconds, 7777);
  EXPECT_EQ(po.min_wait_seconds, 61u);
  EXPECT_EQ(po.keep, 9u);
  EXPECT_TRUE(po.emergency);
  EXPECT_EQ(po.fp_rate, 0.0123);
  EXPECT_EQ(po.default_threat, "malware-x");
  EXPECT_EQ(po.memory_budget, 12345678u);
  EXPECT_EQ(po.threads, 5);
  ASSERT_TRUE(po.phase_progress);
  po.phase_progress(PublishPhase::kSign, "test", 0);
  EXPECT_EQ(phases, 1);
  EXPECT_EQ(po.max_removal, 0.375);
  EXPECT_TRUE(po.cap_removal);
  // PublishList always guards its inputs.
  EXPECT_TRUE(po.check_inputs);
  EXPECT_EQ(po.max_rejected_fraction, kDefaultInputMaxRejectedFraction);

  o.allow_large_removal = true;
  CopyListPublishOptions(o, &po);
  EXPECT_FALSE(po.cap_removal);
}

TEST(ToListPublishReport, CarriesEveryField) {
  PublishReport r;
  r.version = 41;
  r.first_version = false;
  r.checkpoint = 37;
  r.checkpointed = true;
  r.checkpoint_due = true;
  for (int i = 0; i < 3; ++i) {
    r.entries[i] = 100 + i;
    r.added[i] = 200 + i;
    r.removed[i] = 300 + i;
  }
  r.universe_changed = true;
  r.input_lines = 401;
  r.input_entries = 402;
  r.rejected = 403;
  r.new_keys = 404;
  r.seen_before = 405;
  r.seen_at_checkpoint = true;
  r.problems.push_back({"feed.txt", 17, "bad line"});
  r.snapshot_bytes = 501;
  r.snapshot_wire_bytes = 502;
  r.diffs.push_back({38, 601, 602});
  r.diffs.push_back({39, 603, 604});
  r.manifest_path = "/repo/public/lists/x/manifest.json";
  r.warnings = {"index not rewritten"};
  const ListPublishReport out = ToListPublishReport(r);
  EXPECT_EQ(out.version, 41u);
  EXPECT_FALSE(out.first_version);
  EXPECT_EQ(out.checkpoint, 37u);
  EXPECT_TRUE(out.checkpointed);
  EXPECT_TRUE(out.checkpoint_due);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out.entries[i], 100u + i);
    EXPECT_EQ(out.added[i], 200u + i);
    EXPECT_EQ(out.removed[i], 300u + i);
  }
  EXPECT_TRUE(out.universe_changed);
  EXPECT_EQ(out.input_lines, 401u);
  EXPECT_EQ(out.input_entries, 402u);
  EXPECT_EQ(out.rejected, 403u);
  EXPECT_EQ(out.new_keys, 404u);
  EXPECT_EQ(out.seen_before, 405u);
  EXPECT_TRUE(out.seen_at_checkpoint);
  ASSERT_EQ(out.problems.size(), 1u);
  EXPECT_EQ(out.problems[0].file, "feed.txt");
  EXPECT_EQ(out.problems[0].line, 17u);
  EXPECT_EQ(out.problems[0].message, "bad line");
  EXPECT_EQ(out.snapshot_bytes, 501u);
  EXPECT_EQ(out.snapshot_wire_bytes, 502u);
  ASSERT_EQ(out.diffs.size(), 2u);
  EXPECT_EQ(out.diffs[1].from_version, 39u);
  EXPECT_EQ(out.diffs[1].wire_bytes, 603u);
  EXPECT_EQ(out.diffs[1].changed_entries, 604u);
  EXPECT_EQ(out.manifest_path, "/repo/public/lists/x/manifest.json");
  EXPECT_EQ(out.warnings, std::vector<std::string>{"index not rewritten"});
}

}  // namespace
}  // namespace urlguard
