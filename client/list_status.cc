// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "client/list_status.h"

#include <algorithm>

#include "sync/freshness.h"

namespace urlguard {

SyncResult SyncResultFromSchedule(std::string_view r) {
  if (r == "ok") return SyncResult::kOk;
  if (r == "not_modified") return SyncResult::kNotModified;
  if (r == "error") return SyncResult::kFailed;
  return SyncResult::kNone;  // "" (ValidateListSyncState admits nothing else)
}

std::vector<ListStatus> ComposeListStatus(const StoreState& state_in, const std::vector<ListSyncState>& schedule,
                                          int64_t now, const std::vector<std::string>& subscribed) {
  const std::vector<StaleList> stale = StaleLists(state_in, subscribed, now);
  // A subscribed list with no record is listed too: it makes every verdict stale.
  StoreState state = state_in;
  for (const std::string& name : subscribed) {
    if (state.Find(name) != nullptr) continue;
    ListState missing;
    missing.list = name;
    state.lists.insert(std::lower_bound(state.lists.begin(), state.lists.end(), name,
                                        [](const ListState& x, const std::string& n) { return x.list < n; }),
                       std::move(missing));
  }
  std::vector<ListStatus> out;
  for (const ListState& l : state.lists) {
    ListStatus st;
    st.name = l.list;
    for (const StaleList& s : stale) {
      if (s.list == l.list) st.stale_reason = s.reason;
    }
    if (l.installed) {
      const InstalledList& i = *l.installed;
      st.version = i.version;
      for (uint64_t e : i.entries) st.entries += e;
      st.created_unix = i.created_unix;
      st.expires_unix = i.expires_unix;
      st.stale = now >= i.expires_unix;
      st.emergency = i.emergency;
    } else {
      st.stale = true;
    }
    for (const ListSyncState& s : schedule) {
      if (s.list != l.list) continue;
      st.last_sync_unix = s.last_attempt_unix;
      st.last_sync_result = SyncResultFromSchedule(s.last_result);
      st.last_sync_error = s.last_error;
      st.next_sync_unix = s.next_attempt_unix;
      st.consecutive_failures = s.consecutive_failures;
    }
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace urlguard
