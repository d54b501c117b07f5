// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Key rotation statements (docs/architecture.md §5: "Key rotation is a signed statement chained from the old
// key"; the bytes are specified in docs/manifest-format.md §7).
//
// This file holds the format and its verification (the client's half); the publisher writes statements
// with signing/signer.h MakeRotationStatement().
//
// A statement says "key OLD says: trust key NEW from time T". It is signed by OLD over the domain-separated
// message "urlguard key rotation v1\0" || statement body, so it can never pass for a manifest signature
// (whose domain is "urlguard manifest v1\0") or the other way round. A client that trusts OLD (from its
// configuration) and is handed the statement may add NEW to its trusted keys; statements chain: with A
// trusted, A->B then B->C makes B and C trusted, in that order only.
//
// What rotation does and does not do: it lets a publisher move to a new key without reconfiguring every
// client (sign manifests with both keys during the overlap, see signature.h). It is not revocation: whoever
// holds OLD can also issue statements, so a compromised key must be removed from the clients'
// configuration.
//
// Retirement and recovery (format v2, docs/manifest-format.md §7.1). Once a statement OLD->NEW is accepted, OLD
// may no longer sign manifests alone: from `old_key_until` on (v1 statements: from not-before; v2 may grant a
// signed grace period) AcceptTrustChain() leaves OLD out of the manifest keys, so a manifest signed by OLD
// alone is "signed by an untrusted key", and OLD may not sign further statements. A v2 statement can also carry
// per-list high-water resets: "the genuine versions of LIST are at most V". A client that accepted the
// statement lowers its high-water mark for LIST to V (sync/store.h Store::ResetHighWater), so a stolen key's
// fast-forward to version 2^64-1 stops blocking the genuine publisher's next manifest.
#ifndef URLGUARD_FORMAT_KEY_ROTATION_H_
#define URLGUARD_FORMAT_KEY_ROTATION_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/signature.h"
#include "urlguard/status.h"

namespace urlguard {

// The domain-separation prefix of a rotation signature, including its NUL byte (25 bytes).
inline constexpr std::string_view kRotationSignatureDomain{"urlguard key rotation v1\0", 25};
// The first line of a statement (its file type, for people and `file`).
inline constexpr std::string_view kRotationHeaderLine = "urlguard key rotation v1\n";
// Format v2: a grace period for the old key and high-water resets (docs/manifest-format.md §7.1).
inline constexpr std::string_view kRotationSignatureDomainV2{"urlguard key rotation v2\0", 25};
inline constexpr std::string_view kRotationHeaderLineV2 = "urlguard key rotation v2\n";
// The longest signed grace period during which the old key may still sign manifests alone (30 days).
constexpr int64_t kMaxRotationGraceSeconds = 30 * 86400;
// The most high-water resets one statement carries.
constexpr size_t kMaxRotationResets = 16;

// Caps on statements from outside. A statement is at most 25 + 73 + 73 + 31 + 114 = 316 bytes.
// A v2 statement adds 31 bytes of old-key-until and at most 16 resets of up to 91 bytes: under 2 KiB.
constexpr size_t kMaxRotationStatementBytes = 2048;
constexpr size_t kMaxRotationChainLength = 16;

// "The genuine versions of `list` are at most `max_version`" (v2 statements).
struct HighWaterReset {
  std::string list;          // IsValidListName
  uint64_t max_version = 0;  // >= 1
  // The statement's not-before: the reset applies only to a high-water manifest created before it, so a
  // client that re-reads the statement at every start does not lower the mark again once the genuine
  // publisher's newer manifests (created after the statement) are installed.
  int64_t not_before_unix = 0;

  bool operator==(const HighWaterReset&) const = default;
};

// The content of a statement (signature not included).
struct RotationStatement {
  int version = 1;              // 1 or 2: the header line and signature domain
  PublicKey old_key;            // the signer
  PublicKey new_key;            // the key it vouches for; never equal to old_key
  int64_t not_before_unix = 0;  // NEW is trusted from this time on (>= 0)
  // OLD may sign manifests alone until this time (exclusive). v1: equals not_before_unix. v2: not_before_unix
  // .. not_before_unix + kMaxRotationGraceSeconds.
  int64_t old_key_until_unix = 0;
  // v2 only: sorted by list, names unique, at most kMaxRotationResets. `not_before_unix` of each is the
  // statement's.
  std::vector<HighWaterReset> resets;

  bool operator==(const RotationStatement&) const = default;
};

// The signed body of a statement, exactly as docs/manifest-format.md §7 specifies: the header line of its
// version (1 or 2), the key and time lines, and for v2 the old-key-until and reset lines in their stored order.
// The publisher signs RotationSignedMessage(RotationStatementBody(s), s.version) (signing/signer.h).
std::string RotationStatementBody(const RotationStatement& statement);

// The message a rotation signature covers: the signature domain of `version` (v1 or v2) || body.
std::string RotationSignedMessage(std::string_view body, int version);

// Parses the statement syntax only (exact lines, lower-case hex keys, canonical decimal time, signature line
// by old-key's id) and does NOT check the signature: use AcceptRotation(). kResourceExhausted over
// kMaxRotationStatementBytes, kCorruption naming the problem for anything else.
Result<RotationStatement> ParseRotationStatement(std::string_view bytes);

// Accepts a statement when it is well formed, its old key is one of `trusted` and its signature verifies,
// and now_unix >= not_before. Returns the new key. Fails with:
//   kResourceExhausted / kCorruption  as ParseRotationStatement();
//   kPermissionDenied "rotation signed by an untrusted key ..."  old key not in `trusted`;
//   kPermissionDenied "bad signature ..."                          the signature does not verify;
//   kFailedPrecondition "rotation not valid before ..."            now_unix < not_before (try again later).
// Thread-safe.
Result<PublicKey> AcceptRotation(const std::vector<PublicKey>& trusted, std::string_view statement_bytes,
                                 int64_t now_unix);

// Applies statements in the given order, each against the keys trusted so far (so A->B, B->C works, and
// B->C, A->B fails at the first one). Returns `trusted` followed by each newly trusted key (a key already
// trusted is not repeated). Fails with the first statement's error (prefixed with "rotation statement <i>")
// and kResourceExhausted for more than kMaxRotationChainLength statements.
// Manifest keys exclude retired ones (see AcceptTrustChain): the result is AcceptTrustChain(...)->keys.
Result<std::vector<PublicKey>> AcceptRotationChain(const std::vector<PublicKey>& trusted,
                                                   const std::vector<std::string>& statements,
                                                   int64_t now_unix);

// What a chain of accepted statements means at a time.
struct TrustChain {
  std::vector<PublicKey> keys;         // may sign manifests now: configured and vouched-for keys, not retired
  std::vector<PublicKey> retired;      // replaced by a statement whose grace has ended
  std::vector<HighWaterReset> resets;  // of every accepted statement, in order
};

// Like AcceptRotationChain, and: a statement's old key is retired from `keys` once now_unix >=
// old_key_until_unix; a statement signed by a key retired by an earlier statement is refused
// (kPermissionDenied "rotation signed by a retired key"). Thread-safe.
Result<TrustChain> AcceptTrustChain(const std::vector<PublicKey>& trusted, const std::vector<std::string>& statements,
                                    int64_t now_unix);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_KEY_ROTATION_H_
