// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The time floor: the newest signed `created_unix` the client has verified, kept in D/time-floor. A manifest
// cannot have been created after "now", so the floor is a lower bound on the true time that no clock setting
// can move back. The client never treats a time before it as now (TrustedNow): a clock set back (by a user, a
// dead RTC battery, or an attacker who controls NTP) cannot make an expired manifest or list fresh again.
//
// File format (docs/data-dir.md §1), ASCII, at most kMaxTimeFloorBytes:
//   "urlguard time floor v1" LF
//   <T: decimal seconds since 1970, no sign, no leading zeros> LF
//   <64 lower-case hex digits: SHA-256 of the two lines above> LF
// A missing file is a floor of 0; a damaged one is ignored (floor 0) rather than trusted: a flipped bit must
// not move the floor into the far future, where every manifest would look expired. The floor also never
// falls below the newest created_unix of D/current's installed records (FloorOfState), which carries its own
// checksum.
//
// Thread safety: pure functions and single-file reads/writes; the writer (the Store's holder) serializes
// AdvanceTimeFloor calls.
#ifndef URLGUARD_SYNC_TIME_FLOOR_H_
#define URLGUARD_SYNC_TIME_FLOOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "platform/env.h"
#include "sync/store.h"
#include "urlguard/status.h"

namespace urlguard {

inline constexpr std::string_view kTimeFloorFileName = "time-floor";
// The cap for reading D/time-floor (a valid file is at most 23 + 20 + 65 bytes).
constexpr size_t kMaxTimeFloorBytes = 256;

// The bytes of D/time-floor for `floor_unix` (>= 0).
std::string SerializeTimeFloor(int64_t floor_unix);
// kCorruption for anything SerializeTimeFloor does not write.
Result<int64_t> ParseTimeFloor(std::string_view bytes);

// The floor stored in DIR/time-floor: 0 when missing, damaged or unreadable (never an error: it is a bound
// that only ever helps).
int64_t ReadTimeFloor(Env* env, const std::string& dir);

// Raises DIR/time-floor to `created_unix` when that is newer than the stored floor (atomically: temp file,
// fsync, rename). Ok without writing when it is not newer. Env failures as WriteFileAtomic.
Status AdvanceTimeFloor(Env* env, const std::string& dir, int64_t created_unix);

// The newest created_unix of the installed lists of `state` (0 when none).
int64_t FloorOfState(const StoreState& state);

// max(clock_unix, floor_unix): the time the client acts on.
inline int64_t TrustedNow(int64_t clock_unix, int64_t floor_unix) {
  return clock_unix > floor_unix ? clock_unix : floor_unix;
}

}  // namespace urlguard

#endif  // URLGUARD_SYNC_TIME_FLOOR_H_
