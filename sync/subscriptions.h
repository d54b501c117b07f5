// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Subscriptions: which lists a data directory keeps (D/subscriptions, docs/data-dir.md §8). A subscription is
// state, not a side effect of the first successful download: the writer (sync/syncer.h) records the lists of
// the server's signed list index, or those given with --list / SyncOptions::lists, BEFORE it downloads any of
// them. Every reader (Client, urlguard status, urlguardd's /status and /metrics, Python) then counts a
// subscribed list that is not installed as stale (sync/freshness.h, reason not_installed) until a sync installs
// it, and every pass retries it.
//
// Each subscription says where it came from: `index` (the list index named it; a newer signed index that no
// longer names it unsubscribes it, and the pass reports that) or `list` (named by the user; only the user
// removes it). At most kMaxLists (core/list_name.h), the same number D/current and D/sync-state.json hold.
//
// The file is a few lines of text, written with WriteFileAtomic (tmp, fsync, rename, fsync of D); the reader
// treats it as untrusted bytes (fuzz/subscriptions_fuzz.cc). Golden bytes: fixtures/golden/subscriptions_v1.txt.
// Changes the file format: bump kSubscriptionsFormatVersion, docs/data-dir.md §8 and the golden test.
//
// Thread safety: pure functions, and file reads/writes through the Env.
#ifndef URLGUARD_SYNC_SUBSCRIPTIONS_H_
#define URLGUARD_SYNC_SUBSCRIPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/list_name.h"
#include "platform/env.h"
#include "urlguard/status.h"

namespace urlguard {

constexpr uint32_t kSubscriptionsFormatVersion = 1;
inline constexpr std::string_view kSubscriptionsFileName = "subscriptions";
// The first line of format 1 (without its "\n").
inline constexpr std::string_view kSubscriptionsHeader = "urlguard subscriptions 1";
// The largest valid file: the header and kMaxLists lines of "index " + 64-byte name + "\n" (18 201 bytes).
constexpr size_t kMaxSubscriptionsBytes = size_t{32} << 10;

enum class SubscriptionOrigin : uint8_t {
  kIndex,  // named by the server's signed list index; unsubscribed when a newer index drops it
  kList,   // named by the user (--list, SyncOptions::lists); kept until the user drops it
};
// "index", "list".
const char* SubscriptionOriginName(SubscriptionOrigin origin);

struct Subscription {
  std::string list;  // IsValidListName
  SubscriptionOrigin origin = SubscriptionOrigin::kList;

  bool operator==(const Subscription&) const = default;
};

// The names of `subs`, in their order.
std::vector<std::string> SubscribedNames(const std::vector<Subscription>& subs);

// The file's bytes: the header line, then one "ORIGIN NAME" line per subscription in ascending name order, each
// ending in "\n". kInvalidArgument for an invalid name, a name given twice, or more than kMaxLists.
Result<std::string> SerializeSubscriptions(std::vector<Subscription> subs);

// Parses the file's bytes (untrusted: they are on disk). Never throws. kResourceExhausted over
// kMaxSubscriptionsBytes or kMaxLists lines; kCorruption "subscriptions line N: <problem>" for anything else:
// another header or format version, a line that is not "index NAME" or "list NAME", an invalid name, names not
// strictly ascending, a missing final newline, a carriage return. Returns the subscriptions in name order.
Result<std::vector<Subscription>> ParseSubscriptions(std::string_view bytes);

// Reads data_dir/subscriptions: kNotFound when the directory has none (written before subscriptions were state,
// or nothing was ever subscribed), the Env's errors, or ParseSubscriptions' (with the path as context).
Result<std::vector<Subscription>> ReadSubscriptions(Env* env, const std::string& data_dir);

// Writes data_dir/subscriptions atomically (WriteFileAtomic). Failures as SerializeSubscriptions, or the Env's.
Status WriteSubscriptions(Env* env, const std::string& data_dir, const std::vector<Subscription>& subs);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_SUBSCRIPTIONS_H_
