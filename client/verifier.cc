// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The verification client of client/verifier.h.
//
// The response parser uses nlohmann-json with exceptions disabled (parse(..., allow_exceptions = false)
// returns a "discarded" value on a syntax error) and touches values only through accessors that cannot throw
// (find(), is_*(), get_ptr()), so no exception can leave this file.
#include "client/verifier.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <utility>

#include "core/list_name.h"
#include "format/json_strict.h"

namespace urlguard {
namespace {

using Json = nlohmann::json;

Status ResponseError(const std::string& field, const std::string& problem) {
  return Status::Corruption("verify response: " + field + ": " + problem);
}

// An answer that decides "safe" or "malicious" must have exactly one meaning: no duplicate member names
// (format/json_strict.h). The message never echoes the server's bytes.
Result<Json> ParseJsonStrict(std::string_view bytes) {
  Json doc;
  switch (urlguard::ParseJsonStrict(bytes, &doc, nullptr)) {
    case JsonProblem::kInvalid: return Status::Corruption("verify response: not valid JSON");
    case JsonProblem::kDuplicateMember: return Status::Corruption("verify response: a duplicate member name");
    case JsonProblem::kNone: break;
  }
  return doc;
}

// A cache duration: a JSON integer (not a float) in 0 .. kMaxVerifyCacheSeconds.
Status ReadSeconds(const Json& object, const char* key, const std::string& field, int64_t* out) {
  const auto it = object.find(key);
  if (it == object.end()) return ResponseError(field, "missing");
  if (!it->is_number_integer()) return ResponseError(field, "not an integer");
  if (!it->is_number_unsigned()) return ResponseError(field, "negative");
  const auto* value = it->get_ptr<const Json::number_unsigned_t*>();
  if (value == nullptr || *value > static_cast<uint64_t>(kMaxVerifyCacheSeconds)) {
    return ResponseError(field, "over " + std::to_string(kMaxVerifyCacheSeconds) + " seconds");
  }
  *out = static_cast<int64_t>(*value);
  return Status::Ok();
}

// A string member; nullptr when missing or not a string.
const std::string* ReadString(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end()) return nullptr;
  return it->get_ptr<const Json::string_t*>();
}

Status ReadMatch(const Json& element, size_t index, VerifyMatch* out) {
  const std::string name = "matches[" + std::to_string(index) + "]";
  if (!element.is_object()) return ResponseError(name, "not an object");
  const std::string* sha256 = ReadString(element, "sha256");
  if (sha256 == nullptr) return ResponseError(name + ".sha256", "missing or not a string");
  if (sha256->size() != 64 || !FromHex(*sha256, out->sha256.data(), out->sha256.size())) {
    return ResponseError(name + ".sha256", "not 64 hex digits");
  }
  const std::string* list = ReadString(element, "list");
  if (list == nullptr || !IsValidListName(*list)) {
    return ResponseError(name + ".list", "missing or not 1-64 bytes of [a-z0-9_-]");
  }
  out->list = *list;
  const std::string* layer = ReadString(element, "layer");
  if (layer == nullptr || !IsValidLayerLabel(*layer)) {
    return ResponseError(name + ".layer", "missing or not \"domain\", \"url\" or \"ip\"");
  }
  out->layer = *layer;
  const std::string* threat = ReadString(element, "threat");
  if (threat == nullptr || !IsValidThreatName(*threat)) {
    return ResponseError(name + ".threat", "missing or not 1-64 bytes of [a-z0-9_-]");
  }
  out->threat = *threat;
  return ReadSeconds(element, "cache_seconds", name + ".cache_seconds", &out->cache_seconds);
}

// "lists": {"<list>": <version>, ...}, optional (servers before it sent none).
Status ReadListVersions(const Json& doc, std::map<std::string, uint64_t>* out) {
  const auto lists = doc.find("lists");
  if (lists == doc.end()) return Status::Ok();
  if (!lists->is_object()) return ResponseError("lists", "not an object");
  if (lists->size() > kMaxVerifyListVersions) {
    return Status::ResourceExhausted("verify response: more than " + std::to_string(kMaxVerifyListVersions) +
                                     " lists");
  }
  for (const auto& [name, version] : lists->items()) {
    if (!IsValidListName(name)) return ResponseError("lists", "a name is not 1-64 bytes of [a-z0-9_-]");
    if (!version.is_number_unsigned()) return ResponseError("lists." + name, "not a non-negative integer");
    (*out)[name] = *version.get_ptr<const Json::number_unsigned_t*>();
  }
  return Status::Ok();
}

// Why `answer` does not count for `hit`, or Ok when it does: the server answered the hit's list from a version
// at least the hit's (docs/verify-server.md "versions").
Status BehindHit(const VerifyAnswer& answer, const LocalHit& hit) {
  const auto it = answer.list_versions.find(hit.list);
  if (it != answer.list_versions.end() && it->second >= hit.list_version) return Status::Ok();
  return Status::Unavailable("verify: the server answers list " + hit.list + " from version " +
                             (it == answer.list_versions.end() ? std::string("none") : std::to_string(it->second)) +
                             ", older than the local version " + std::to_string(hit.list_version));
}

std::string BaseWithoutSlash(const std::string& base) {
  size_t end = base.size();
  while (end > 0 && base[end - 1] == '/') --end;
  return base.substr(0, end);
}

DecideResult Unverified(Status error, int64_t retry_after_seconds = -1) {
  DecideResult r;
  r.decision = Decision::kUnverifiedHit;
  r.error = std::move(error);
  r.retry_after_seconds = retry_after_seconds;
  return r;
}

DecideResult Malicious(const std::string& list, const std::string& threat, bool emergency, bool from_cache) {
  DecideResult r;
  r.decision = Decision::kMalicious;
  r.list = list;
  r.threat = threat;
  r.emergency = emergency;
  r.from_cache = from_cache;
  return r;
}

// Stores one verify answer for the undecided hits whose prefixes were asked in that request.
// Spec (client/result_cache.h): positive entries first, then negative entries, so a reader never sees a
// negative entry without the positive entries of the same answer.
void StoreAnswer(const VerifyAnswer& answer, const std::vector<const LocalHit*>& asked_hits, int64_t now_unix,
                 const CachePolicy& policy, ResultCache* cache) {
  // The versions of each hit list (one in practice), each with the latest time an answer about it may live:
  // its signed expiry (an expired list's answers are worthless; a new version never reads them anyway).
  std::map<std::string, std::map<uint64_t, int64_t>> versions;
  for (const LocalHit* hit : asked_hits) {
    const int64_t limit = hit->list_expires_unix > 0 ? hit->list_expires_unix : INT64_MAX;
    auto [it, fresh] = versions[hit->list].emplace(hit->list_version, limit);
    if (!fresh) it->second = std::min(it->second, limit);
  }
  auto bound = [&](int64_t expires, int64_t cap, const std::string& list, uint64_t version) {
    return std::min({expires, now_unix + cap, versions[list][version]});
  };
  for (const VerifyMatch& m : answer.matches) {
    const auto it = versions.find(m.list);
    if (it == versions.end()) continue;  // a list this URL did not hit: its version here is unknown
    for (const auto& [version, limit] : it->second) {
      cache->StorePositive(m.sha256, m.list, version, m.layer, m.threat,
                           bound(now_unix + m.cache_seconds, policy.max_positive_cache_seconds, m.list, version),
                           now_unix);
    }
  }
  // A negative entry for (prefix, list) must not outlive any positive entry of that prefix and list, or a
  // known threat would turn "safe": its expiry is capped by the matches' (a match not cached at all, with
  // cache_seconds 0, leaves no negative entry either).
  std::set<std::tuple<uint32_t, std::string, uint64_t>> stored;
  for (const LocalHit* hit : asked_hits) {
    const uint32_t prefix = DigestPrefix32(hit->full_hash);
    if (!stored.emplace(prefix, hit->list, hit->list_version).second) continue;
    int64_t expires = bound(now_unix + answer.negative_cache_seconds, policy.max_negative_cache_seconds,
                            hit->list, hit->list_version);
    for (const VerifyMatch& m : answer.matches) {
      if (m.list == hit->list && DigestPrefix32(m.sha256) == prefix) {
        expires = std::min(expires, now_unix + std::min(m.cache_seconds, policy.max_positive_cache_seconds));
      }
    }
    cache->StoreNegative(prefix, hit->list, hit->list_version, expires, now_unix);
  }
}

}  // namespace

std::string MakeVerifyRequest(const std::vector<uint32_t>& prefixes) {
  assert(!prefixes.empty() && prefixes.size() <= kMaxVerifyRequestPrefixes);
  std::string out = "{\"prefixes\":[";
  for (size_t i = 0; i < prefixes.size(); ++i) {
    char hex[9];
    std::snprintf(hex, sizeof(hex), "%08x", static_cast<unsigned>(prefixes[i]));
    if (i > 0) out += ',';
    out += '"';
    out += hex;
    out += '"';
  }
  out += "]}";
  return out;
}

Result<VerifyAnswer> ParseVerifyResponse(std::string_view body) {
  if (body.size() > kMaxVerifyResponseBytes) {
    return Status::ResourceExhausted("verify response: over " + std::to_string(kMaxVerifyResponseBytes) +
                                     " bytes");
  }
  URLGUARD_ASSIGN_OR_RETURN(Json doc, ParseJsonStrict(body));
  if (!doc.is_object()) return Status::Corruption("verify response: not a JSON object");
  VerifyAnswer answer;
  const auto matches = doc.find("matches");
  if (matches == doc.end()) return ResponseError("matches", "missing");
  if (!matches->is_array()) return ResponseError("matches", "not an array");
  if (matches->size() > kMaxVerifyMatches) {
    return Status::ResourceExhausted("verify response: more than " + std::to_string(kMaxVerifyMatches) +
                                     " matches");
  }
  answer.matches.resize(matches->size());
  for (size_t i = 0; i < matches->size(); ++i) {
    URLGUARD_RETURN_IF_ERROR(ReadMatch((*matches)[i], i, &answer.matches[i]));
  }
  URLGUARD_RETURN_IF_ERROR(
      ReadSeconds(doc, "negative_cache_seconds", "negative_cache_seconds", &answer.negative_cache_seconds));
  URLGUARD_RETURN_IF_ERROR(ReadListVersions(doc, &answer.list_versions));
  return answer;
}

Result<VerifyAnswer> Verify(Fetcher& fetcher, const std::string& server_base_url,
                            const std::vector<uint32_t>& prefixes, int64_t* retry_after_seconds) {
  if (retry_after_seconds != nullptr) *retry_after_seconds = -1;
  if (prefixes.empty() || prefixes.size() > kMaxVerifyRequestPrefixes) {
    return Status::InvalidArgument("verify: " + std::to_string(prefixes.size()) + " prefixes (1 to " +
                                   std::to_string(kMaxVerifyRequestPrefixes) + " per request)");
  }
  FetchRequest request;
  request.url = BaseWithoutSlash(server_base_url) + "/v1/verify";
  request.method = "POST";
  request.body = MakeVerifyRequest(prefixes);
  request.content_type = "application/json";
  request.max_bytes = kMaxVerifyResponseBytes;
  Result<FetchResponse> response = fetcher.Fetch(request);
  if (!response.ok()) return response.status().WithContext("verify");

  const int http = response->status;
  if (http == 429 || (http >= 500 && http <= 599)) {
    if (retry_after_seconds != nullptr) *retry_after_seconds = response->retry_after_seconds;
    std::string message = "verify: server answered HTTP " + std::to_string(http);
    if (response->retry_after_seconds >= 0) {
      message += ", retry after " + std::to_string(response->retry_after_seconds) + " s";
    }
    return Status::Unavailable(std::move(message));
  }
  if (http != 200) {
    return Status::FailedPrecondition("verify: server answered HTTP " + std::to_string(http));
  }
  Result<VerifyAnswer> answer = ParseVerifyResponse(response->body);
  if (!answer.ok()) return answer.status().WithContext("verify");
  const std::set<uint32_t> asked(prefixes.begin(), prefixes.end());
  for (size_t i = 0; i < answer->matches.size(); ++i) {
    if (asked.count(DigestPrefix32(answer->matches[i].sha256)) == 0) {
      return Status::Corruption("verify: matches[" + std::to_string(i) + "] has a prefix that was not asked");
    }
  }
  return answer;
}

const char* DecisionName(Decision decision) {
  switch (decision) {
    case Decision::kSafe:
      return "safe";
    case Decision::kSafeVerified:
      return "safe_verified";
    case Decision::kMalicious:
      return "malicious";
    case Decision::kUnverifiedHit:
      return "unverified_hit";
  }
  return "invalid";
}

DecideResult Decide(const std::vector<LocalHit>& hits, int64_t now_unix, ResultCache* cache, Fetcher* fetcher,
                    const std::string& server_base_url, const CachePolicy& policy_in) {
  // The caps never exceed what a server may send (so now_unix + cap cannot overflow), nor fall below 0.
  CachePolicy policy = policy_in;
  policy.max_negative_cache_seconds = std::clamp<int64_t>(policy.max_negative_cache_seconds, 0, kMaxVerifyCacheSeconds);
  policy.max_positive_cache_seconds = std::clamp<int64_t>(policy.max_positive_cache_seconds, 0, kMaxVerifyCacheSeconds);
  if (hits.empty()) {
    DecideResult r;
    r.decision = Decision::kSafe;
    return r;
  }
  for (const LocalHit& hit : hits) {
    if (!IsValidListName(hit.list) || hit.list_version == 0) {
      return Unverified(
          Status::InvalidArgument("verify: a local hit with an invalid list name or version 0"));
    }
  }
  // Spec (docs/architecture.md §5, manifest policy flags): an emergency list's hits are malicious without asking.
  for (const LocalHit& hit : hits) {
    if (hit.emergency) return Malicious(hit.list, "", /*emergency=*/true, /*from_cache=*/false);
  }

  // Spec (docs/architecture.md §3 step 5): consult the result cache ...
  std::vector<const LocalHit*> undecided;
  for (const LocalHit& hit : hits) {
    if (cache == nullptr) {
      undecided.push_back(&hit);
      continue;
    }
    const ResultCache::Lookup found = cache->Find(hit.full_hash, hit.list, hit.list_version, now_unix);
    if (found.answer == ResultCache::Answer::kMalicious) {
      return Malicious(found.list, found.threat, /*emergency=*/false, /*from_cache=*/true);
    }
    if (found.answer == ResultCache::Answer::kUnknown) undecided.push_back(&hit);
  }
  if (undecided.empty()) {
    DecideResult r;
    r.decision = Decision::kSafeVerified;
    r.from_cache = true;
    return r;
  }
  if (fetcher == nullptr) return Unverified(Status::Unavailable("verify: no verification server configured"));

  // ... and if undecided, ask the verification API with the hits' 4-byte prefixes only.
  std::vector<uint32_t> prefixes;
  for (const LocalHit* hit : undecided) {
    const uint32_t prefix = DigestPrefix32(hit->full_hash);
    if (std::find(prefixes.begin(), prefixes.end(), prefix) == prefixes.end()) prefixes.push_back(prefix);
  }
  // Each hit with the answer about it. An answer behind the hit's list version (docs/verify-server.md) caches
  // nothing and cannot say "safe"; its full-hash match still says "malicious" (the server listed that very
  // hash; a version that withdrew it would rarely still hit locally), uncached.
  std::vector<VerifyAnswer> answers;
  std::vector<std::pair<const LocalHit*, size_t>> answered;  // (hit, index into answers)
  Status error;
  Status behind;  // the first answer behind a hit's list version
  int64_t retry_after = -1;
  for (size_t begin = 0; begin < prefixes.size(); begin += kMaxVerifyRequestPrefixes) {
    const size_t end = std::min(prefixes.size(), begin + kMaxVerifyRequestPrefixes);
    const std::vector<uint32_t> chunk(prefixes.begin() + static_cast<std::ptrdiff_t>(begin),
                                      prefixes.begin() + static_cast<std::ptrdiff_t>(end));
    Result<VerifyAnswer> answer = Verify(*fetcher, server_base_url, chunk, &retry_after);
    if (!answer.ok()) {
      error = answer.status();
      break;
    }
    std::vector<const LocalHit*> asked;  // the hits of this chunk the answer counts for
    for (const LocalHit* hit : undecided) {
      const uint32_t prefix = DigestPrefix32(hit->full_hash);
      if (std::find(chunk.begin(), chunk.end(), prefix) == chunk.end()) continue;
      answered.emplace_back(hit, answers.size());
      Status why = BehindHit(*answer, *hit);
      if (why.ok()) {
        asked.push_back(hit);
      } else if (behind.ok()) {
        behind = std::move(why);
      }
    }
    if (cache != nullptr && !asked.empty()) StoreAnswer(*answer, asked, now_unix, policy, cache);
    answers.push_back(std::move(answer).value());
  }

  // Compare locally: a returned full hash equal to a hit's, in the hit's list, is a threat.
  for (const LocalHit* hit : undecided) {
    for (const auto& [counted, index] : answered) {
      if (counted != hit) continue;
      for (const VerifyMatch& m : answers[index].matches) {
        if (m.sha256 == hit->full_hash && m.list == hit->list) {
          return Malicious(m.list, m.threat, /*emergency=*/false, /*from_cache=*/false);
        }
      }
    }
  }
  if (!error.ok()) return Unverified(std::move(error), retry_after);
  if (!behind.ok()) return Unverified(std::move(behind));
  DecideResult r;
  r.decision = Decision::kSafeVerified;
  return r;
}

}  // namespace urlguard
