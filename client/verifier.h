// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The verification client (docs/architecture.md §3 step 5, §6): what the client does when its local filter says
// "maybe". The local filter has false positives (about 0.1% of clean URLs hit it), so a hit is decided by the
// result cache (client/result_cache.h) and, if still undecided, by the server's verify API, asked with the
// 4-byte prefixes of the hit expressions' SHA-256 only. The server answers with every full hash it knows
// under those prefixes; the client compares them with its own full hashes locally. The URL, its expressions
// and their full hashes never leave the device.
//
// Wire format (include/urlguard/server.h is the reference server):
//   request   POST <base>/v1/verify   {"prefixes":["a1b2c3d4",...]}
//             1 to kMaxVerifyRequestPrefixes prefixes, each 8 lower-case hex digits
//   response  200 {"matches":[{"sha256":"<64 hex>","list":"...","layer":"domain|url|ip","threat":"...",
//             "cache_seconds":N},...],"negative_cache_seconds":N,"lists":{"<list>":V,...}}
//             "lists": the list versions the server answered from. An answer is trusted for a local hit only
//             when it names the hit's list at a version >= the hit's (docs/verify-server.md).
//             429 or 5xx (+ Retry-After): try later
//
// Thread safety: pure functions, except Verify() and Decide(), which are as thread-safe as the Fetcher and
// ResultCache they are given (both are safe to share between threads).
#ifndef URLGUARD_CLIENT_VERIFIER_H_
#define URLGUARD_CLIENT_VERIFIER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/sha256.h"
#include "sync/fetcher.h"
#include "client/result_cache.h"
#include "urlguard/status.h"

namespace urlguard {

// Prefixes per request: the server's limit (server/verify_request.h kMaxVerifyPrefixes). Decide() splits
// more hits (IP layers can give more than 30 expressions) into several requests.
constexpr size_t kMaxVerifyRequestPrefixes = 30;
// Caps on a response: its body (the download is aborted past it) and its matches. With uniformly distributed
// keys a 4-byte prefix matches n / 2^32 full hashes (0.002 for ten million), so a real answer has a few.
constexpr size_t kMaxVerifyResponseBytes = size_t{1} << 20;
constexpr size_t kMaxVerifyMatches = 1024;
// The largest cache duration accepted from a server (30 days, the reference server's own limit).
constexpr int64_t kMaxVerifyCacheSeconds = 30 * 86400;
// Entries of a response's "lists" object.
constexpr size_t kMaxVerifyListVersions = 1024;

struct VerifyMatch {
  Sha256Digest sha256{};
  std::string list;           // IsValidListName
  std::string layer;          // "domain", "url" or "ip"
  std::string threat;         // IsValidThreatName
  int64_t cache_seconds = 0;  // 0 .. kMaxVerifyCacheSeconds; 0 = do not cache

  bool operator==(const VerifyMatch&) const = default;
};

struct VerifyAnswer {
  std::vector<VerifyMatch> matches;    // at most kMaxVerifyMatches, in the server's order
  int64_t negative_cache_seconds = 0;  // 0 .. kMaxVerifyCacheSeconds; 0 = do not cache
  // The list versions the server answered from ("lists"; empty when the server sent none, as servers before
  // it did): at most kMaxVerifyListVersions, valid list names.
  std::map<std::string, uint64_t> list_versions;

  bool operator==(const VerifyAnswer&) const = default;
};

// The request body for `prefixes`, in their order: {"prefixes":["a1b2c3d4",...]}. Precondition: 1 to
// kMaxVerifyRequestPrefixes prefixes (a bug otherwise: asserts; Verify() checks it first).
std::string MakeVerifyRequest(const std::vector<uint32_t>& prefixes);

// Parses a response body from the network. Strict: a JSON object with "matches" (an array of at most
// kMaxVerifyMatches objects, each with "sha256" as 64 hex digits of either case, "list" a valid list name,
// "layer" one of "domain" / "url" / "ip", "threat" a valid threat label and "cache_seconds" an integer in
// 0 .. kMaxVerifyCacheSeconds) and "negative_cache_seconds" (an integer in the same range); "lists", when
// present, an object of at most kMaxVerifyListVersions members, each a valid list name with a non-negative
// integer version (absent: no versions, nothing trusted by Decide()). Unknown members
// are ignored (a later server may add some); duplicate member names, floats and anything else are refused.
// Failures: kResourceExhausted (over kMaxVerifyResponseBytes or kMaxVerifyMatches), kCorruption naming the
// problem ("verify response: matches[2].sha256: not 64 hex digits"), never echoing input. Never throws, never
// crashes on any input (fuzz/verify_response_fuzz.cc).
Result<VerifyAnswer> ParseVerifyResponse(std::string_view body);

// Asks the verify API at `server_base_url` (e.g. "https://verify.example", a trailing '/' is ignored) about
// `prefixes` with one POST to <base>/v1/verify. Every match must carry one of the requested prefixes.
// Failures: kInvalidArgument (0 or more than kMaxVerifyRequestPrefixes prefixes, or the fetcher refuses the
// URL), kUnavailable (transport failure or timeout; HTTP 429 or 5xx, with the server's Retry-After in
// `*retry_after_seconds` when given, -1 when absent), kFailedPrecondition (any other HTTP status than 200),
// kResourceExhausted (a body over kMaxVerifyResponseBytes), kCorruption (a malformed answer, or a match
// outside the requested prefixes). Every message starts with "verify: ".
Result<VerifyAnswer> Verify(Fetcher& fetcher, const std::string& server_base_url,
                            const std::vector<uint32_t>& prefixes, int64_t* retry_after_seconds = nullptr);

// ---- the decision for one URL's local hits -------------------------------------------------------------

enum class Decision {
  kSafe,           // no local hit: safe without asking anyone
  kSafeVerified,   // every hit was a false positive of the local filter (per the cache or the server)
  kMalicious,      // a hit's full hash is in its list (or the list's emergency policy says so)
  kUnverifiedHit,  // a local hit nobody could decide (no server, offline, timeout, bad answer)
};

// "safe", "safe_verified", "malicious", "unverified_hit". Never null.
const char* DecisionName(Decision decision);

// One local hit: a hit expression's full hash found (by fingerprint) in one list.
struct LocalHit {
  std::string list;           // IsValidListName
  uint64_t list_version = 0;  // the version of the list that hit, >= 1
  Sha256Digest full_hash{};   // SHA-256 of the hit expression (never sent anywhere)
  bool emergency = false;     // that list version's manifest policy: hits are malicious without asking
  // That list version's signed expiry: no answer about it is cached past this time. 0: no bound (tests).
  int64_t list_expires_unix = 0;
};

// The client's default cap on how long a negative ("not in the list") answer is cached, whatever the server
// says: one lying or mistaken answer with a 30-day negative_cache_seconds must not hide a threat for 30 days.
constexpr int64_t kDefaultMaxNegativeCacheSeconds = 3600;

// The client's own bounds on the cache durations a server sends (docs/cache-schema.md §4).
struct CachePolicy {
  // A negative entry lives at most this long (>= 0; 0: negative answers are not cached).
  int64_t max_negative_cache_seconds = kDefaultMaxNegativeCacheSeconds;
  // A positive entry lives at most this long (>= 0).
  int64_t max_positive_cache_seconds = kMaxVerifyCacheSeconds;
};

struct DecideResult {
  Decision decision = Decision::kUnverifiedHit;
  std::string list;    // kMalicious: the list
  std::string threat;  // kMalicious: the server's (or the cache's) threat name; "" for an emergency decision
  bool emergency = false;   // kMalicious by a list's emergency policy
  bool from_cache = false;  // decided without the network (kMalicious, kSafeVerified)
  // kUnverifiedHit: why (kUnavailable: no server configured, offline, timeout, 429/5xx; kCorruption: a
  // malformed answer; ...). Ok otherwise.
  Status error;
  int64_t retry_after_seconds = -1;  // a 429/5xx answer's Retry-After, -1 when none
};

// Decides one URL from its local hits (all hits of the URL, over all its expressions, layers and lists):
//   no hits                                              -> kSafe;
//   a hit in a list whose emergency flag is set          -> kMalicious{list, ""}, emergency, nothing asked;
//   the cache knows a hit's full hash in its list        -> kMalicious{list, threat}, from_cache;
//   the cache says "safe" for every hit                  -> kSafeVerified, from_cache;
//   otherwise, without a fetcher (nullptr)               -> kUnverifiedHit;
//   otherwise the verify API is asked with the 4-byte prefixes of the undecided hits only (distinct, in hit
//   order, at most kMaxVerifyRequestPrefixes per request); an answer counts for a hit only when its "lists"
//   names the hit's list at a version >= the hit's list_version (a server behind the client, e.g. one that has
//   not loaded a just-published version yet, would say "no match" for the new entries): for any other hit
//   nothing is cached and only a match of its own full hash counts (kMalicious, uncached); every counted
//   answer is stored in the cache (positive
//   entries for the matches of the hit lists, with each match's cache_seconds; a negative entry per asked
//   hit's prefix, list and version, with negative_cache_seconds capped by the cache_seconds of the matches of
//   that prefix and list, so it never outlives them; positives first, see client/result_cache.h), every entry
//   bounded by `policy` and by the hit list version's signed expiry (LocalHit::list_expires_unix); entries
//   are keyed by list version, so none outlives the next version either; and:
//     a returned full hash equal to a hit's, in the hit's list -> kMalicious{list, threat};
//     every request answered without one                      -> kSafeVerified;
//     a request failed (transport, timeout, 429/5xx, bad JSON) -> kUnverifiedHit with the error;
//     an answer behind a hit's list version                    -> kUnverifiedHit, kUnavailable "verify: the
//                                       server answers list L from version X, older than the local version V"
//                                       (X "none" when it does not name L); asked again next time.
// A hit the cache knows as malicious decides at once; otherwise the first malicious hit in `hits` order wins.
// `cache` may be nullptr (no caching). `now_unix` is the time cache entries are judged and stamped with. A
// hit with an invalid list name or version 0 gives kUnverifiedHit with kInvalidArgument (a caller bug;
// nothing is asked).
DecideResult Decide(const std::vector<LocalHit>& hits, int64_t now_unix, ResultCache* cache, Fetcher* fetcher,
                    const std::string& server_base_url, const CachePolicy& policy = {});

}  // namespace urlguard

#endif  // URLGUARD_CLIENT_VERIFIER_H_
