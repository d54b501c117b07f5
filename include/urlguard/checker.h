// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::Checker — offline URL threat lookup against memory-mapped snapshot files.
//
//   auto checker = urlguard::Checker::Open({"phishing.ugs", "malware.ugs"});
//   if (!checker.ok()) { /* checker.status().ToString() says which file and why */ }
//   urlguard::Verdict v = (*checker)->Check("http://evil.example/login.php");
//   if (v.kind == urlguard::VerdictKind::kHit) { /* v.matches[0].list, .layer, .expression */ }
//
// What a verdict means: `kSafe` is definitive for the lists as of their versions (the filters have no false
// negatives); `kHit` means at least one key matched a list's filter — a local hit, which can be a filter false
// positive at the list's configured rate (about 0.1% of clean URLs by default) until a verification step
// confirms it; `kInvalid` means the input has no canonical form (it is never a match).
//
// Thread safety: a Checker is immutable after Open; Check* may be called from any number of threads at once.
// Lookups take no lock and, once a thread has checked a URL of similar length, allocate nothing unless they
// hit (the Verdict's strings). The Checker owns its mappings; destroy it only when no call is in flight.
#ifndef URLGUARD_CHECKER_H_
#define URLGUARD_CHECKER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/export.h"
#include "urlguard/status.h"

namespace urlguard {

enum class Layer : uint8_t {
  kDomain = 0,  // a whole host and everything under it ("evil.example/")
  kUrl = 1,     // a host + path (+ query) expression ("evil.example/login.php")
  kIp = 2,      // an IPv4/IPv6 address or CIDR range ("203.0.113.0/24")
};
URLGUARD_EXPORT const char* LayerName(Layer layer);  // "domain", "url", "ip"

// kSafe, kHit and kInvalid are what a local lookup (Checker, Client::CheckLocal) can say; the other three come from
// Client::Check, which decides local hits with the result cache and the verification API (urlguard/client.h).
enum class VerdictKind : uint8_t {
  kSafe = 0,
  kHit = 1,
  kInvalid = 2,
  kSafeVerified = 3,
  kMalicious = 4,
  kUnverifiedHit = 5,
};
// "safe", "hit", "invalid", "safe_verified", "malicious", "unverified_hit".
URLGUARD_EXPORT const char* VerdictKindName(VerdictKind kind);

// True when a caller should act on the verdict as on a threat (warn, block, exit with "listed"): kHit,
// kMalicious and kUnverifiedHit. kMalicious is confirmed. kHit is a local hit nobody verified: the filters
// have no false negatives, so a hit is the only sign of a threat a local lookup gives, and a caller that does
// not verify has to trust it (at the list's false-positive rate). kUnverifiedHit is a hit that verification
// could not decide (offline, timeout, a bad answer): counting it fails closed, so whoever can block the
// verification API cannot turn listed URLs into safe ones. Not threats: kSafe and kSafeVerified (a filter
// false positive), and kInvalid, which matched nothing because the input has no canonical form; what to do
// with an unusable URL is the caller's own choice (the CLI has an exit bit for it, the demo browser blocks
// it). Thread-safe.
URLGUARD_EXPORT bool IsThreat(VerdictKind kind);

struct Match {
  std::string list;        // list name, e.g. "phishing"
  Layer layer = Layer::kDomain;
  std::string expression;  // the matched expression, e.g. "evil.example/" or "203.0.113.0/24"
  std::string sha256_hex;  // SHA-256 of the expression: its first 8 hex digits are the verification prefix
  uint64_t list_version = 0;
};

struct Verdict {
  VerdictKind kind = VerdictKind::kSafe;
  std::vector<Match> matches;  // kHit: every match (lists in open order), at most 16
  std::string error;           // kInvalid: why the input has no canonical form; else why verification failed
  std::string canonical;       // the canonical URL when CheckOptions::want_canonical (else empty)
  // Client verdicts only:
  std::string list;            // kMalicious: the list that confirmed it
  std::string threat;          // kMalicious: the threat type ("phishing", "malware", ...)
  bool stale = false;          // a list was past its signed expiry: a "safe" is not confident
  bool allowlisted = false;    // the local allowlist let this URL through (kind is kSafe)
  bool emergency = false;      // kMalicious by a list's signed emergency policy, without asking
  bool from_cache = false;     // decided by the result cache, without the network
};

struct CheckOptions {
  bool want_canonical = false;  // fill Verdict::canonical (one allocation per call)
};

class Env;

struct OpenOptions {
  // Recompute each snapshot's SHA-256 at open (about 0.6 ms per MB). Files installed by urlguard's own sync
  // were verified before they became live; leave this on for files from elsewhere.
  bool verify_checksum = true;
  // Where files are read and mapped; nullptr = the process default. Not owned: must outlive the Open call.
  Env* env = nullptr;
};

struct ListInfo {
  std::string name;
  uint64_t version = 0;
  int64_t created_unix = 0;
  uint64_t entries = 0;         // all layers
  uint64_t layer_entries[3] = {0, 0, 0};  // by Layer
  std::string layer_filter[3];  // "fingerprint-array", "blocked-bloom" or "" when the layer is absent
  uint64_t bytes = 0;           // file size
  std::string path;
  std::string sha256_hex;       // the state hash
};

class URLGUARD_EXPORT Checker {
 public:
  // Maps and validates each snapshot file. Fails with the first file's error, naming the file: kNotFound,
  // kIoError, kCorruption (foreign, truncated or corrupt file). Two files of the same list name are refused
  // (kInvalidArgument).
  static Result<std::unique_ptr<Checker>> Open(const std::vector<std::string>& snapshot_paths,
                                               const OpenOptions& options = {});

  // Opens every "*.ugs" file in `dir` (sorted by name). kNotFound when there is none.
  static Result<std::unique_ptr<Checker>> OpenDirectory(const std::string& dir,
                                                        const OpenOptions& options = {});

  ~Checker();
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  // Looks up a URL (any spelling a browser accepts; a missing scheme means http). Inputs over 8 KiB are kInvalid.
  Verdict Check(std::string_view url, const CheckOptions& options = {}) const;

  // Looks up many URLs; out[i] is the verdict of urls[i]. Faster per URL than Check (the memory accesses of
  // several URLs overlap). `out` is resized to urls.size().
  void CheckBatch(const std::vector<std::string_view>& urls, std::vector<Verdict>* out,
                  const CheckOptions& options = {}) const;

  // Looks up a host name (the domain layer and its parents: "a.b.evil.example" matches "evil.example/").
  Verdict CheckHost(std::string_view host) const;

  // Looks up an IPv4 or IPv6 address in the ip layers (every prefix length each list contains).
  // A malformed address is kInvalid.
  Verdict CheckIp(std::string_view ip) const;

  // The open lists, in open order.
  std::vector<ListInfo> Lists() const;

 private:
  struct Impl;
  explicit Checker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace urlguard

#endif  // URLGUARD_CHECKER_H_
