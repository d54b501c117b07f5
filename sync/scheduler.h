// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Sync scheduling (docs/architecture.md §5): when the updater next asks the server about a list, and the per-list
// record of how the last attempts went (D/sync-state.json) that carries that decision across restarts.
// docs/sync-protocol.md states the schedule for people.
//
//   first attempt   now + U * 60 s                                   (soon after start, spread out)
//   after success   now + max(30 min * (0.9 + 0.2 * U), min_wait, Retry-After)
//                   or, when 0 < min_wait < 30 min (the publisher's cadence), c = max(min_wait, 60 s):
//                   the client's place o in [c/6, c/2) after the publisher's next version, which is due at
//                   created_unix + k * c (AlignedPollDelaySeconds; at least c, under 2 c, Retry-After wins);
//                   without the manifest's created_unix: now + max(c + floor(U * max(1, c / 20)), Retry-After)
//   after failure   now + max(min(2^(N-1) * 15 min * (1 + U), 24 h), min_wait, Retry-After)
//                   N = consecutive failures (1 after the first)
//
// U is uniform in [0, 1). The jitter spreads clients out so that a fleet started together (or a server that
// comes back after an outage) does not see every client at the same second.
//
// Everything here is pure: no clock, no thread, no randomness of its own. The caller passes the time and a
// source of uniform doubles, so tests compute exact schedules. Load/save reach the disk only through Env.
//
// Thread safety: functions are thread-safe; a ListSyncState is a plain value (no internal locking).
#ifndef URLGUARD_SYNC_SCHEDULER_H_
#define URLGUARD_SYNC_SCHEDULER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/list_name.h"
#include "platform/env.h"
#include "urlguard/status.h"

namespace urlguard {

// ---- the schedule -----------------------------------------------------------------------------------------

constexpr int64_t kFirstSyncMaxDelaySeconds = 60;  // first attempt after start: uniform in [0, 60) s
constexpr int64_t kPollIntervalSeconds = 30 * 60;  // nominal interval between successful polls
constexpr int64_t kPollJitterSeconds = kPollIntervalSeconds / 10;  // +-10 %: [27 min, 33 min)
constexpr int64_t kMinPollIntervalSeconds = 60;  // a manifest's shorter minimum wait polls no faster than this
constexpr int64_t kBackoffBaseSeconds = 15 * 60;                   // the first failure waits 15..30 min
constexpr int64_t kMaxBackoffSeconds = 24 * 60 * 60;  // the ceiling of every wait (backoff, Retry-After)

// A source of doubles uniform in [0, 1). Values outside (a bug in the source) assert; in release builds they
// are clamped into the range.
using UniformSource = std::function<double()>;

// A UniformSource drawing 53 bits from env->RandomBytes. `env` must outlive the source.
UniformSource EnvUniformSource(Env* env);

// floor(u * 60): the delay of the first attempt after start, in [0, 60).
int64_t FirstSyncDelaySeconds(double u);

// The delay after a successful poll: max(30 min * (1 + 0.1 * (2u - 1)), min_wait_seconds), computed as
// 1620 + floor(u * 360), so in [1620, 1980) s unless the manifest's minimum wait is larger. A minimum wait
// under 30 min is the publisher's cadence (`urlguard-publish loop --every`): then the delay is that cadence c
// (at least kMinPollIntervalSeconds) plus up to 5 %: c + floor(u * max(1, c / 20)), e.g. [60, 63) at 60 s.
// 0 (no manifest installed yet) means the 30-minute default.
int64_t PollDelaySeconds(uint32_t min_wait_seconds, double u);

// When the publisher's versions come: the installed manifest's created_unix (the publisher's clock) and the
// distance between the server's clock and ours, from the Date header of the pass's first response.
struct PublisherClock {
  int64_t created_unix = 0;         // 0: unknown (nothing installed): the plain cadence rule applies
  int64_t clock_offset_seconds = 0;  // server clock minus ours; 0 when the server sent no Date
};

// The delay after a successful poll at `now` of a list whose minimum wait c' = min_wait_seconds is a cadence
// (0 < c' < 30 min; other values, or created_unix 0: PollDelaySeconds(min_wait_seconds, u)). With
// c = max(c', kMinPollIntervalSeconds) and every time put on the publisher's clock (ours + clock_offset):
//   the client's offset o: (scheduled - created_unix) mod c when that lies in [c/6, c/2) (a client keeps its
//   place), clamped into the window when it lies up to t = max(kPlaceToleranceSeconds, c/12) outside it (the
//   measured clock offset varies by a second or more from pass to pass: a place at the window's edge must not be
//   drawn anew, at the cost of a cycle, for that), else c/6 + floor(u * c/3);
//   `scheduled` is the time this poll was due (0: none yet).
//   the next poll: the first created_unix + k * c + o (k any integer) at least c - c/6 after now, and never
//   sooner than c after now. So the delay lies in [c, 2 c - c/6): c while the client keeps its place (a pass
//   up to c/6 late included), longer once when it takes a new one.
// A publishing loop starts a version every c seconds and stamps it with the time it started: created_unix +
// k * c is when a version is due, and o leaves it c/6 (10 s at a minute) to be built and reach the server. A
// fleet polls inside a third of each cycle instead of across all of it; in exchange a client sees a version
// c/6..c/2 after it is due instead of 0..c after it appears (docs/sync-protocol.md §2).
int64_t AlignedPollDelaySeconds(int64_t now, int64_t scheduled, uint32_t min_wait_seconds,
                                const PublisherClock& publisher, double u);
// The least tolerance around the window within which a client keeps its place (c/12 when larger: 5 s at 60 s).
constexpr int64_t kPlaceToleranceSeconds = 2;

// The delay after the N-th consecutive failure (N >= 1): min(floor(2^(N-1) * 15 min * (1 + u)), 24 h), the
// floor kept below 2^N * 15 min (u just below 1 must not round up to the doubled value).
// N = 0 is a caller bug (asserts; treated as 1).
int64_t BackoffDelaySeconds(uint32_t consecutive_failures, double u);

// ---- per-list state ---------------------------------------------------------------------------------------

constexpr size_t kMaxSyncStateBytes = size_t{1} << 20;  // D/sync-state.json larger than this is not read
constexpr size_t kMaxSyncStateLists = kMaxLists;        // lists in one file (core/list_name.h)
constexpr size_t kMaxSyncErrorBytes = 1024;             // last_error is truncated to this
constexpr int64_t kMaxSyncUnixSeconds = 253402300799;   // 9999-12-31T23:59:59Z: the largest time accepted
constexpr uint32_t kSyncStateFormatVersion = 1;         // changes the file format: bump and update the docs
constexpr char kSyncStateFileName[] = "sync-state.json";

// What the updater remembers about one list between attempts (and across restarts). Times are Unix seconds,
// 0 = never.
struct ListSyncState {
  std::string list;  // IsValidListName (core/list_name.h)
  int64_t last_attempt_unix = 0;
  int64_t last_success_unix = 0;  // the last attempt that ended "ok" or "not_modified"
  int64_t next_attempt_unix = 0;
  uint32_t consecutive_failures = 0;  // 0 after a success; saturates at UINT32_MAX
  std::string last_result;            // "ok", "not_modified", "error", or "" before the first attempt
  // The failure's message when last_result is "error": UTF-8 without control characters, at most
  // kMaxSyncErrorBytes (RecordSyncFailure cleans it).
  std::string last_error;
  // The ETag of the last verified manifest ("" = none): printable ASCII, at most kMaxEtagBytes
  // (sync/fetcher.h; the fetcher only reports such ETags).
  std::string manifest_etag;

  bool operator==(const ListSyncState&) const = default;
};

// When to make the first attempt for `state` after the process starts at `now`: the persisted
// next_attempt_unix when it is still ahead (a restart does not skip a backoff, a Retry-After or the server's
// minimum wait), else now + FirstSyncDelaySeconds(rand()). A persisted time more than kMaxBackoffSeconds
// ahead cannot have been scheduled by these rules (the clock went back, or the file was edited) and counts as
// due. Draws one number from `rand` only when it uses it.
int64_t StartupAttemptTime(const ListSyncState& state, int64_t now, const UniformSource& rand);

// Records a successful attempt at `now` ("not_modified" when the server answered 304 or the manifest was the
// installed one, else "ok") and schedules the next poll: now + max(AlignedPollDelaySeconds(now,
// state->next_attempt_unix, min_wait_seconds, publisher, rand()), min(retry_after_seconds,
// kMaxBackoffSeconds)). retry_after_seconds < 0 means none. Resets the
// failure count and last_error; leaves list and manifest_etag alone (the updater sets the ETag of a verified
// manifest).
void RecordSyncSuccess(ListSyncState* state, int64_t now, bool not_modified, uint32_t min_wait_seconds,
                       int64_t retry_after_seconds, const UniformSource& rand,
                       const PublisherClock& publisher = PublisherClock{});

// Records a failed attempt at `now` and schedules the retry: now + max(BackoffDelaySeconds(N, rand()),
// min_wait_seconds, min(retry_after_seconds, kMaxBackoffSeconds)) with N the incremented failure count.
// `min_wait_seconds` is the installed manifest's (0 when none): the server's minimum wait holds while it is
// failing too. `error` is kept as clean text: control characters and bytes that are not UTF-8 become '?', cut
// to kMaxSyncErrorBytes at a character boundary. last_success_unix and manifest_etag stay.
void RecordSyncFailure(ListSyncState* state, int64_t now, std::string_view error, uint32_t min_wait_seconds,
                       int64_t retry_after_seconds, const UniformSource& rand);

// The entry for `list` in `states`, appended (fresh, never attempted) when missing. `list` must be valid
// (asserts). The pointer is valid until `states` changes size.
ListSyncState* FindOrAddListSyncState(std::vector<ListSyncState>* states, std::string_view list);

// ---- D/sync-state.json ------------------------------------------------------------------------------------

// Checks the field rules above: kInvalidArgument naming the field otherwise.
Status ValidateListSyncState(const ListSyncState& state);

// The file's bytes (format in docs/sync-protocol.md): JSON, lists sorted by name, members in sorted order.
// kInvalidArgument when a state is invalid, two states name the same list, or there are more than
// kMaxSyncStateLists.
Result<std::string> SerializeSyncState(const std::vector<ListSyncState>& states);

// Parses the file's bytes (untrusted: it is on disk). Never throws, never crashes. kResourceExhausted over
// kMaxSyncStateBytes; kCorruption for anything malformed (bad JSON, wrong format version, missing or mistyped
// members, a state failing ValidateListSyncState, a list named twice, too many lists). Unknown members are
// ignored (a newer writer may add some). Returns the states sorted by list name.
Result<std::vector<ListSyncState>> ParseSyncState(std::string_view bytes);

struct LoadedSyncState {
  std::vector<ListSyncState> lists;  // sorted by name; empty when the file is missing or unusable
  Status warning;                    // ok, or why the file was ignored (the caller logs it and goes on)
};

// Reads data_dir/sync-state.json. Never fails: a missing file is a fresh start (ok); an unreadable, oversized
// or corrupt one is a fresh start with `warning` saying why (kIoError, kResourceExhausted, kCorruption). The
// schedule only costs an early poll when it is lost; the security state lives in D/current.
LoadedSyncState LoadSyncState(Env* env, const std::string& data_dir);

// Writes data_dir/sync-state.json atomically (WriteFileAtomic). kInvalidArgument as SerializeSyncState, or
// the Env's error.
Status SaveSyncState(Env* env, const std::string& data_dir, const std::vector<ListSyncState>& states);

}  // namespace urlguard

#endif  // URLGUARD_SYNC_SCHEDULER_H_
