// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Sync schedule and the D/sync-state.json file (sync/scheduler.h, docs/sync-protocol.md).
//
// The parser uses nlohmann-json with exceptions disabled (parse(..., allow_exceptions = false) returns a
// "discarded" value on a syntax error) and reads values only through accessors that cannot throw (find(),
// is_*(), get_ptr()); the writer dumps with error_handler_t::replace, which cannot throw on bad UTF-8. So no
// exception can leave this file.
#include "sync/scheduler.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "core/list_name.h"
#include "sync/fetcher.h"

namespace urlguard {
namespace {

using Json = nlohmann::json;

// Brings a value from a UniformSource into [0, 1).
double ClampUniform(double u) {
  assert(u >= 0.0 && u < 1.0 && "UniformSource returned a value outside [0, 1)");
  if (!(u >= 0.0)) return 0.0;  // also NaN
  if (u >= 1.0) return std::nextafter(1.0, 0.0);
  return u;
}

// floor(x), kept below `limit`: x = base * (1 + u) with u just below 1 can round up to 2 * base exactly, and
// the documented ranges are half-open.
int64_t FloorBelow(double x, int64_t limit) {
  return std::min(static_cast<int64_t>(std::floor(x)), limit - 1);
}

int64_t CapRetryAfter(int64_t retry_after_seconds) {
  if (retry_after_seconds < 0) return 0;
  return std::min(retry_after_seconds, kMaxBackoffSeconds);
}

// now + delay without overflow, capped at kMaxSyncUnixSeconds (a valid file can always hold the result).
int64_t AddSeconds(int64_t now, int64_t delay) {
  if (now > kMaxSyncUnixSeconds - delay) return kMaxSyncUnixSeconds;
  return now + delay;
}

// Clamps a caller's time into what the file accepts (a clock before 1970 or beyond 9999 is not worth failing
// on).
int64_t ClampTime(int64_t t) { return std::clamp<int64_t>(t, 0, kMaxSyncUnixSeconds); }

bool IsKnownResult(std::string_view r) {
  return r.empty() || r == "ok" || r == "not_modified" || r == "error";
}

bool IsPrintableAscii(std::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0 when there is none.
size_t Utf8SequenceLength(std::string_view s) {
  const auto b = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (b(i) < 0x80 || b(i) > 0xbf) return 0;
  }
  return n;
}

// Well-formed UTF-8 without ASCII control characters.
bool IsCleanText(std::string_view s) {
  while (!s.empty()) {
    const size_t n = Utf8SequenceLength(s);
    if (n == 0 || (n == 1 && (s[0] < 0x20 || s[0] == 0x7f))) return false;
    s.remove_prefix(n);
  }
  return true;
}

// `error` made clean text of at most kMaxSyncErrorBytes: control characters and bytes that are not UTF-8
// become '?', and the text is cut at a character boundary.
std::string CleanErrorText(std::string_view error) {
  std::string out;
  while (!error.empty()) {
    size_t n = Utf8SequenceLength(error);
    const bool control = n == 1 && (error[0] < 0x20 || error[0] == 0x7f);
    if (out.size() + (n == 0 || control ? 1 : n) > kMaxSyncErrorBytes) break;
    if (n == 0 || control) {
      out += '?';
      n = n == 0 ? 1 : n;
    } else {
      out.append(error.substr(0, n));
    }
    error.remove_prefix(n);
  }
  return out;
}

Status Corrupt(const std::string& where, const std::string& problem) {
  return Status::Corruption("sync state: " + where + ": " + problem);
}

// ---- typed, non-throwing member access --------------------------------------------------------------------

Status GetTime(const Json& obj, const char* name, const std::string& where, int64_t* out) {
  auto it = obj.find(name);
  if (it == obj.end()) return Corrupt(where + name, "missing");
  const uint64_t* v = it->get_ptr<const Json::number_unsigned_t*>();
  if (v == nullptr) return Corrupt(where + name, "not a non-negative integer");
  if (*v > static_cast<uint64_t>(kMaxSyncUnixSeconds)) return Corrupt(where + name, "beyond year 9999");
  *out = static_cast<int64_t>(*v);
  return Status::Ok();
}

Status GetUint32(const Json& obj, const char* name, const std::string& where, uint32_t* out) {
  auto it = obj.find(name);
  if (it == obj.end()) return Corrupt(where + name, "missing");
  const uint64_t* v = it->get_ptr<const Json::number_unsigned_t*>();
  if (v == nullptr) return Corrupt(where + name, "not a non-negative integer");
  if (*v > std::numeric_limits<uint32_t>::max()) return Corrupt(where + name, "larger than 2^32 - 1");
  *out = static_cast<uint32_t>(*v);
  return Status::Ok();
}

Status GetString(const Json& obj, const char* name, const std::string& where, std::string* out) {
  auto it = obj.find(name);
  if (it == obj.end()) return Corrupt(where + name, "missing");
  const std::string* v = it->get_ptr<const Json::string_t*>();
  if (v == nullptr) return Corrupt(where + name, "not a string");
  *out = *v;
  return Status::Ok();
}

}  // namespace

// ---- the schedule -----------------------------------------------------------------------------------------

UniformSource EnvUniformSource(Env* env) {
  assert(env != nullptr);
  return [env] {
    uint64_t bits = 0;
    env->RandomBytes(&bits, sizeof(bits));
    return static_cast<double>(bits >> 11) * 0x1.0p-53;  // 53 random bits: exactly representable, < 1
  };
}

int64_t FirstSyncDelaySeconds(double u) {
  u = ClampUniform(u);
  return FloorBelow(u * static_cast<double>(kFirstSyncMaxDelaySeconds), kFirstSyncMaxDelaySeconds);
}

int64_t PollDelaySeconds(uint32_t min_wait_seconds, double u) {
  u = ClampUniform(u);
  if (min_wait_seconds > 0 && min_wait_seconds < kPollIntervalSeconds) {
    // Spec (docs/sync-protocol.md §2): a minimum wait under 30 minutes is the publisher's cadence (the publish
    // loop sets it to its --every): poll at it, +5 % jitter, never more often than once a minute.
    const int64_t cadence = std::max<int64_t>(min_wait_seconds, kMinPollIntervalSeconds);
    const int64_t spread = std::max<int64_t>(1, cadence / 20);
    return cadence + FloorBelow(u * static_cast<double>(spread), spread);
  }
  // Spec (docs/architecture.md §5): polling every 30 minutes with jitter; the server's minimum wait wins.
  // 30 min * (1 + 0.1 * (2u - 1)) = 27 min + u * 6 min.
  const int64_t spread = 2 * kPollJitterSeconds;
  const int64_t jittered =
      kPollIntervalSeconds - kPollJitterSeconds + FloorBelow(u * static_cast<double>(spread), spread);
  return std::max<int64_t>(jittered, min_wait_seconds);
}

int64_t AlignedPollDelaySeconds(int64_t now, int64_t scheduled, uint32_t min_wait_seconds,
                                const PublisherClock& publisher, double u) {
  if (publisher.created_unix <= 0 || min_wait_seconds == 0 || min_wait_seconds >= kPollIntervalSeconds) {
    return PollDelaySeconds(min_wait_seconds, u);
  }
  u = ClampUniform(u);
  // Spec (docs/sync-protocol.md §2): poll at this client's place o in [c/6, c/2) after the version due at
  // created_unix + k * c, at least c - c/6 ahead, never sooner than c. Times are clamped into the file's range
  // (years 1970..9999), so nothing below overflows.
  const int64_t c = std::max<int64_t>(min_wait_seconds, kMinPollIntervalSeconds);
  const int64_t lo = c / 6, width = c / 3;
  const int64_t offset = std::clamp<int64_t>(publisher.clock_offset_seconds, -kMaxSyncUnixSeconds,
                                              kMaxSyncUnixSeconds);
  const int64_t created = ClampTime(publisher.created_unix);
  const int64_t now_p = ClampTime(now) + offset;  // now on the publisher's clock
  const auto floor_mod = [c](int64_t x) { return ((x % c) + c) % c; };
  int64_t o = scheduled > 0 ? floor_mod(ClampTime(scheduled) + offset - created) : -1;
  // A place measured again moves with the noise of the measured clock offset (the Date header and our clock tick
  // in whole seconds, and `now` is the pass's start): within the tolerance of the window it is the same place,
  // clamped into the window (a client a little late stays where it is all the same: the poll never comes sooner
  // than c after the last). Only a place well outside is drawn anew, which costs a cycle once.
  const int64_t tolerance = std::max<int64_t>(kPlaceToleranceSeconds, c / 12);
  if (o >= lo - tolerance && o < lo + width + tolerance) {
    o = std::clamp<int64_t>(o, lo, lo + width - 1);
  } else {
    o = lo + FloorBelow(u * static_cast<double>(width), width);
  }
  // The first created + k * c + o >= now_p + c - c/6: k = ceil((now_p + c - c/6 - created - o) / c). The c/6 of
  // slack keeps a client that polled a little after its place (a slow pass) on the next cycle.
  const int64_t gap = now_p + c - lo - created - o;
  const int64_t k = gap >= 0 ? (gap + c - 1) / c : -((-gap) / c);
  const int64_t next_p = created + k * c + o;
  return std::max<int64_t>(next_p - now_p, c);
}

int64_t BackoffDelaySeconds(uint32_t consecutive_failures, double u) {
  assert(consecutive_failures >= 1 && "backoff without a failure");
  if (consecutive_failures == 0) consecutive_failures = 1;
  u = ClampUniform(u);
  // Spec (docs/architecture.md §5): on failure back off min(2^(N-1) * 15 min * (1 + rand), 24 h).
  // 2^(N-1) * 15 min >= 24 h from N = 8 on (2^7 * 900 s = 115200 s); stop doubling there (no overflow).
  if (consecutive_failures >= 8) return kMaxBackoffSeconds;
  const int64_t base = kBackoffBaseSeconds << (consecutive_failures - 1);
  const int64_t delay = FloorBelow(static_cast<double>(base) * (1.0 + u), 2 * base);
  return std::min(delay, kMaxBackoffSeconds);
}

int64_t StartupAttemptTime(const ListSyncState& state, int64_t now, const UniformSource& rand) {
  now = ClampTime(now);
  const bool ahead = state.next_attempt_unix > now;
  const bool plausible = state.next_attempt_unix - now <= kMaxBackoffSeconds;
  if (state.last_attempt_unix != 0 && ahead && plausible) return state.next_attempt_unix;
  return AddSeconds(now, FirstSyncDelaySeconds(rand()));
}

void RecordSyncSuccess(ListSyncState* state, int64_t now, bool not_modified, uint32_t min_wait_seconds,
                       int64_t retry_after_seconds, const UniformSource& rand, const PublisherClock& publisher) {
  now = ClampTime(now);
  const int64_t scheduled = state->next_attempt_unix;
  state->last_attempt_unix = now;
  state->last_success_unix = now;
  state->consecutive_failures = 0;
  state->last_result = not_modified ? "not_modified" : "ok";
  state->last_error.clear();
  const int64_t delay = std::max(AlignedPollDelaySeconds(now, scheduled, min_wait_seconds, publisher, rand()),
                                 CapRetryAfter(retry_after_seconds));
  state->next_attempt_unix = AddSeconds(now, delay);
}

void RecordSyncFailure(ListSyncState* state, int64_t now, std::string_view error, uint32_t min_wait_seconds,
                       int64_t retry_after_seconds, const UniformSource& rand) {
  now = ClampTime(now);
  state->last_attempt_unix = now;
  if (state->consecutive_failures < std::numeric_limits<uint32_t>::max()) ++state->consecutive_failures;
  state->last_result = "error";
  state->last_error = CleanErrorText(error);
  int64_t delay = BackoffDelaySeconds(state->consecutive_failures, rand());
  delay = std::max<int64_t>(delay, min_wait_seconds);
  delay = std::max(delay, CapRetryAfter(retry_after_seconds));
  state->next_attempt_unix = AddSeconds(now, delay);
}

ListSyncState* FindOrAddListSyncState(std::vector<ListSyncState>* states, std::string_view list) {
  assert(IsValidListName(list));
  for (ListSyncState& s : *states) {
    if (s.list == list) return &s;
  }
  states->push_back(ListSyncState{});
  states->back().list.assign(list);
  return &states->back();
}

// ---- D/sync-state.json ------------------------------------------------------------------------------------

Status ValidateListSyncState(const ListSyncState& s) {
  auto bad = [&s](const char* field, const std::string& problem) {
    return Status::InvalidArgument("sync state '" + s.list + "': " + field + ": " + problem);
  };
  if (!IsValidListName(s.list)) return bad("list", "not 1-64 bytes of [a-z0-9_-]");
  for (auto [name, t] : {std::pair<const char*, int64_t>{"last_attempt_unix", s.last_attempt_unix},
                         {"last_success_unix", s.last_success_unix},
                         {"next_attempt_unix", s.next_attempt_unix}}) {
    if (t < 0 || t > kMaxSyncUnixSeconds)
      return bad(name, "not in 0.." + std::to_string(kMaxSyncUnixSeconds));
  }
  if (!IsKnownResult(s.last_result))
    return bad("last_result", "not \"ok\", \"not_modified\", \"error\" or \"\"");
  if (s.last_error.size() > kMaxSyncErrorBytes || !IsCleanText(s.last_error)) {
    return bad("last_error", "longer than " + std::to_string(kMaxSyncErrorBytes) +
                                 " bytes, not UTF-8, or has control characters");
  }
  if (s.manifest_etag.size() > kMaxEtagBytes || !IsPrintableAscii(s.manifest_etag)) {
    return bad("manifest_etag",
               "longer than " + std::to_string(kMaxEtagBytes) + " bytes or not printable ASCII");
  }
  return Status::Ok();
}

Result<std::string> SerializeSyncState(const std::vector<ListSyncState>& states) {
  if (states.size() > kMaxSyncStateLists) {
    return Status::InvalidArgument("sync state: more than " + std::to_string(kMaxSyncStateLists) + " lists");
  }
  std::vector<const ListSyncState*> sorted;
  sorted.reserve(states.size());
  for (const ListSyncState& s : states) {
    URLGUARD_RETURN_IF_ERROR(ValidateListSyncState(s));
    sorted.push_back(&s);
  }
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->list < b->list; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i - 1]->list == sorted[i]->list) {
      return Status::InvalidArgument("sync state: list '" + sorted[i]->list + "' named twice");
    }
  }
  // nlohmann::json objects keep their members sorted by name (std::map): the output is canonical.
  Json lists = Json::array();
  for (const ListSyncState* s : sorted) {
    Json entry = Json::object();
    entry["list"] = s->list;
    entry["last_attempt_unix"] = static_cast<uint64_t>(s->last_attempt_unix);
    entry["last_success_unix"] = static_cast<uint64_t>(s->last_success_unix);
    entry["next_attempt_unix"] = static_cast<uint64_t>(s->next_attempt_unix);
    entry["consecutive_failures"] = s->consecutive_failures;
    entry["last_result"] = s->last_result;
    entry["last_error"] = s->last_error;
    entry["manifest_etag"] = s->manifest_etag;
    lists.push_back(std::move(entry));
  }
  Json root = Json::object();
  root["format"] = kSyncStateFormatVersion;
  root["lists"] = std::move(lists);
  std::string out = root.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  out += '\n';
  return out;
}

Result<std::vector<ListSyncState>> ParseSyncState(std::string_view bytes) {
  if (bytes.size() > kMaxSyncStateBytes) {
    return Status::ResourceExhausted("sync state: larger than " + std::to_string(kMaxSyncStateBytes) +
                                     " bytes");
  }
  const Json root = Json::parse(bytes.begin(), bytes.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Corrupt("file", "not JSON");
  if (!root.is_object()) return Corrupt("file", "not a JSON object");
  uint32_t format = 0;
  URLGUARD_RETURN_IF_ERROR(GetUint32(root, "format", "", &format));
  if (format != kSyncStateFormatVersion) {
    return Corrupt("format", std::to_string(format) + " is not " + std::to_string(kSyncStateFormatVersion));
  }
  auto lists_it = root.find("lists");
  if (lists_it == root.end()) return Corrupt("lists", "missing");
  if (!lists_it->is_array()) return Corrupt("lists", "not an array");
  if (lists_it->size() > kMaxSyncStateLists) {
    return Corrupt("lists", "more than " + std::to_string(kMaxSyncStateLists) + " entries");
  }
  std::vector<ListSyncState> out;
  out.reserve(lists_it->size());
  std::set<std::string> seen;
  for (size_t i = 0; i < lists_it->size(); ++i) {
    const Json& entry = (*lists_it)[i];
    const std::string where = "lists[" + std::to_string(i) + "].";
    if (!entry.is_object()) return Corrupt(where.substr(0, where.size() - 1), "not an object");
    ListSyncState s;
    URLGUARD_RETURN_IF_ERROR(GetString(entry, "list", where, &s.list));
    URLGUARD_RETURN_IF_ERROR(GetTime(entry, "last_attempt_unix", where, &s.last_attempt_unix));
    URLGUARD_RETURN_IF_ERROR(GetTime(entry, "last_success_unix", where, &s.last_success_unix));
    URLGUARD_RETURN_IF_ERROR(GetTime(entry, "next_attempt_unix", where, &s.next_attempt_unix));
    URLGUARD_RETURN_IF_ERROR(GetUint32(entry, "consecutive_failures", where, &s.consecutive_failures));
    URLGUARD_RETURN_IF_ERROR(GetString(entry, "last_result", where, &s.last_result));
    URLGUARD_RETURN_IF_ERROR(GetString(entry, "last_error", where, &s.last_error));
    URLGUARD_RETURN_IF_ERROR(GetString(entry, "manifest_etag", where, &s.manifest_etag));
    const Status valid = ValidateListSyncState(s);
    if (!valid.ok()) return Corrupt(where.substr(0, where.size() - 1), valid.message());
    if (!seen.insert(s.list).second) return Corrupt(where + "list", "'" + s.list + "' named twice");
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.list < b.list; });
  return out;
}

LoadedSyncState LoadSyncState(Env* env, const std::string& data_dir) {
  LoadedSyncState loaded;
  const std::string path = JoinPath(data_dir, kSyncStateFileName);
  Result<std::string> bytes = env->ReadFile(path, kMaxSyncStateBytes);
  if (!bytes.ok()) {
    if (bytes.status().code() != StatusCode::kNotFound) {
      loaded.warning = bytes.status().WithContext(path + ": ignored, starting with a fresh schedule");
    }
    return loaded;
  }
  Result<std::vector<ListSyncState>> parsed = ParseSyncState(*bytes);
  if (!parsed.ok()) {
    loaded.warning = parsed.status().WithContext(path + ": ignored, starting with a fresh schedule");
    return loaded;
  }
  loaded.lists = std::move(parsed).value();
  return loaded;
}

Status SaveSyncState(Env* env, const std::string& data_dir, const std::vector<ListSyncState>& states) {
  URLGUARD_ASSIGN_OR_RETURN(std::string bytes, SerializeSyncState(states));
  return WriteFileAtomic(env, JoinPath(data_dir, kSyncStateFileName), bytes);
}

}  // namespace urlguard
