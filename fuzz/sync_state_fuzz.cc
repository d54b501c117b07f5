// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseSyncState (sync/scheduler.h), the reader of D/sync-state.json: arbitrary bytes
// must never crash the parser or let an exception escape, every failure is one of the documented codes with a
// message, and accepted states are valid, sorted, re-serialize to canonical bytes that parse back to the same
// states, and serializing those again gives the same bytes (the canonical form is a fixed point). Seed: the
// golden file of sync/scheduler_test.cc (SyncStateFileTest.GoldenBytes), e.g.
//   {"format": 1, "lists": [{"consecutive_failures": 0, "last_attempt_unix": 1, "last_error": "",
//    "last_result": "ok", "last_success_unix": 1, "list": "phishing", "manifest_etag": "",
//    "next_attempt_unix": 2}]}
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sync/scheduler.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "sync_state_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  urlguard::Result<std::vector<urlguard::ListSyncState>> states = urlguard::ParseSyncState(input);
  if (!states.ok()) {
    const urlguard::StatusCode code = states.status().code();
    if (code != urlguard::StatusCode::kCorruption && code != urlguard::StatusCode::kResourceExhausted) {
      Fail("unexpected status code");
    }
    if (states.status().message().empty()) Fail("failure without a message");
    return 0;
  }
  if (states->size() > urlguard::kMaxSyncStateLists) Fail("more lists than the cap");
  for (size_t i = 0; i < states->size(); ++i) {
    if (!urlguard::ValidateListSyncState((*states)[i]).ok())
      Fail("parsed a state that ValidateListSyncState refuses");
    if (i > 0 && !((*states)[i - 1].list < (*states)[i].list)) Fail("states not sorted by unique list name");
  }
  urlguard::Result<std::string> canonical = urlguard::SerializeSyncState(*states);
  if (!canonical.ok()) Fail("parsed states do not serialize");
  if (canonical->size() > urlguard::kMaxSyncStateBytes) Fail("canonical form exceeds the size cap");
  urlguard::Result<std::vector<urlguard::ListSyncState>> again = urlguard::ParseSyncState(*canonical);
  if (!again.ok()) Fail("canonical bytes do not parse");
  if (*again != *states) Fail("canonical bytes parse to different states");
  urlguard::Result<std::string> twice = urlguard::SerializeSyncState(*again);
  if (!twice.ok() || *twice != *canonical) Fail("canonical form is not a fixed point");
  return 0;
}
