// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The public ListStatus of each list (include/urlguard/client.h): what a generation has installed, joined with
// the persisted sync schedule (sync/scheduler.h).
//
// Thread safety: a pure function.
#ifndef URLGUARD_CLIENT_LIST_STATUS_H_
#define URLGUARD_CLIENT_LIST_STATUS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "sync/scheduler.h"
#include "sync/store.h"
#include "urlguard/client.h"

namespace urlguard {

// The persisted schedule's result word ("ok", "not_modified", "error", "") as a SyncResult.
SyncResult SyncResultFromSchedule(std::string_view last_result);

// One ListStatus per list of `state` and per `subscribed` list it has no record of (not installed), sorted by
// name, with freshness and its reason at `now` (sync/freshness.h) and the schedule of `schedule`.
std::vector<ListStatus> ComposeListStatus(const StoreState& state, const std::vector<ListSyncState>& schedule,
                                          int64_t now, const std::vector<std::string>& subscribed = {});

}  // namespace urlguard

#endif  // URLGUARD_CLIENT_LIST_STATUS_H_
