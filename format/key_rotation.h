// Copyright urlguard authors.
//
// Key rotation statements (ARCHITECTURE §5: "Key rotation is a signed statement chained from the old
// key"; the bytes are specified in docs/manifest-format.md §7).
//
// This file holds the format and its verification (the client's half); the publisher writes statements
// with publish/signer.h MakeRotationStatement().
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
// configuration. Accepting a statement never removes OLD; the caller decides when to drop it.
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

// Caps on statements from outside. A statement is at most 25 + 73 + 73 + 31 + 114 = 316 bytes.
constexpr size_t kMaxRotationStatementBytes = 512;
constexpr size_t kMaxRotationChainLength = 16;

// The content of a statement (signature not included).
struct RotationStatement {
  PublicKey old_key;            // the signer
  PublicKey new_key;            // the key it vouches for; never equal to old_key
  int64_t not_before_unix = 0;  // NEW is trusted from this time on (>= 0)

  bool operator==(const RotationStatement&) const = default;
};

// The signed body of a statement: its first four lines, exactly as docs/manifest-format.md §7 specifies.
// The publisher signs RotationSignedMessage(RotationStatementBody(s)) (publish/signer.h MakeRotationStatement).
std::string RotationStatementBody(const RotationStatement& statement);

// The message a rotation signature covers: kRotationSignatureDomain || body.
std::string RotationSignedMessage(std::string_view body);

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
Result<std::vector<PublicKey>> AcceptRotationChain(const std::vector<PublicKey>& trusted,
                                                   const std::vector<std::string>& statements,
                                                   int64_t now_unix);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_KEY_ROTATION_H_
