// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Key rotation statements: the bytes of docs/manifest-format.md §7.
#include "format/key_rotation.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/list_name.h"
#include "core/sha256.h"

namespace urlguard {
namespace {

constexpr std::string_view kOldKeyTag = "old-key ";
constexpr std::string_view kNewKeyTag = "new-key ";
constexpr std::string_view kNotBeforeTag = "not-before ";
constexpr std::string_view kOldKeyUntilTag = "old-key-until ";  // v2
constexpr std::string_view kResetTag = "reset ";                // v2: "reset LIST MAX_VERSION"
constexpr size_t kMaxU64Digits = 20;                            // 18446744073709551615
constexpr size_t kMaxDecimalDigits = 19;  // INT64_MAX = 9223372036854775807

Status Bad(const std::string& what) { return Status::Corruption("rotation statement: " + what); }

// Splits off one line ending in '\n' (returned without it). False when there is no '\n'.
bool NextLine(std::string_view* rest, std::string_view* line) {
  const size_t nl = rest->find('\n');
  if (nl == std::string_view::npos) return false;
  *line = rest->substr(0, nl);
  rest->remove_prefix(nl + 1);
  return true;
}

bool ParseHexKey(std::string_view line, std::string_view tag, PublicKey* key) {
  if (line.size() != tag.size() + 2 * kEd25519PublicKeyBytes || line.substr(0, tag.size()) != tag) {
    return false;
  }
  const std::string_view hex = line.substr(tag.size());
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;  // canonical: lower case
  }
  return FromHex(hex, key->raw.data(), key->raw.size());
}

// A canonical non-negative decimal int64: digits only, no sign, no leading zero (except "0" itself).
bool ParseCanonicalInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > kMaxDecimalDigits) return false;
  if (s.size() > 1 && s[0] == '0') return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');  // 19 digits cannot overflow uint64
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

// A canonical decimal u64 >= 1: digits only, no leading zero.
bool ParseCanonicalU64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > kMaxU64Digits || s[0] == '0') return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// Parses `bytes`; sets *body to the signed part and *signature to the signature.
Result<RotationStatement> ParseInternal(std::string_view bytes, std::string_view* body,
                                        Ed25519Signature* signature) {
  if (bytes.size() > kMaxRotationStatementBytes) {
    return Status::ResourceExhausted("rotation statement larger than " +
                                     std::to_string(kMaxRotationStatementBytes) + " bytes");
  }
  RotationStatement s;
  std::string_view rest = bytes;
  std::string_view line;
  if (rest.substr(0, kRotationHeaderLine.size()) == kRotationHeaderLine) {
    s.version = 1;
  } else if (rest.substr(0, kRotationHeaderLineV2.size()) == kRotationHeaderLineV2) {
    s.version = 2;
  } else {
    return Bad("first line is not \"urlguard key rotation v1\" or \"urlguard key rotation v2\"");
  }
  rest.remove_prefix(kRotationHeaderLine.size());
  if (!NextLine(&rest, &line) || !ParseHexKey(line, kOldKeyTag, &s.old_key)) {
    return Bad("line 2 is not \"old-key <64 lower-case hex digits>\"");
  }
  if (!NextLine(&rest, &line) || !ParseHexKey(line, kNewKeyTag, &s.new_key)) {
    return Bad("line 3 is not \"new-key <64 lower-case hex digits>\"");
  }
  if (!NextLine(&rest, &line) || line.substr(0, kNotBeforeTag.size()) != kNotBeforeTag ||
      !ParseCanonicalInt64(line.substr(kNotBeforeTag.size()), &s.not_before_unix)) {
    return Bad("line 4 is not \"not-before <non-negative decimal without leading zeros>\"");
  }
  s.old_key_until_unix = s.not_before_unix;  // v1: the old key retires when the new one is valid
  if (s.version == 2) {
    if (!NextLine(&rest, &line) || line.substr(0, kOldKeyUntilTag.size()) != kOldKeyUntilTag ||
        !ParseCanonicalInt64(line.substr(kOldKeyUntilTag.size()), &s.old_key_until_unix)) {
      return Bad("line 5 is not \"old-key-until <non-negative decimal without leading zeros>\"");
    }
    if (s.old_key_until_unix < s.not_before_unix ||
        s.old_key_until_unix - s.not_before_unix > kMaxRotationGraceSeconds) {
      return Bad("old-key-until must lie 0 .. " + std::to_string(kMaxRotationGraceSeconds) +
                 " s after not-before");
    }
    while (rest.substr(0, kResetTag.size()) == kResetTag) {
      if (s.resets.size() == kMaxRotationResets) {
        return Bad("more than " + std::to_string(kMaxRotationResets) + " reset lines");
      }
      HighWaterReset r;
      r.not_before_unix = s.not_before_unix;
      const size_t line_no = 6 + s.resets.size();
      if (!NextLine(&rest, &line)) return Bad("line " + std::to_string(line_no) + " has no end");
      const std::string_view args = line.substr(kResetTag.size());
      const size_t sp = args.find(' ');
      if (sp == std::string_view::npos || !IsValidListName(args.substr(0, sp)) ||
          !ParseCanonicalU64(args.substr(sp + 1), &r.max_version)) {
        return Bad("line " + std::to_string(line_no) + " is not \"reset <list> <version >= 1>\"");
      }
      r.list = std::string(args.substr(0, sp));
      if (!s.resets.empty() && !(s.resets.back().list < r.list)) {
        return Bad("reset lines must be sorted by list name and unique");
      }
      s.resets.push_back(std::move(r));
    }
  }
  if (s.new_key == s.old_key) return Bad("new key equals old key");
  *body = bytes.substr(0, bytes.size() - rest.size());
  // The rest is exactly one signature line by the old key.
  Result<std::vector<SignatureEntry>> sig = ParseSignatureFile(rest);
  if (!sig.ok()) return Bad("line 5: " + sig.status().message());
  if (sig->size() != 1) return Bad("more than one signature line");
  if ((*sig)[0].key_id != s.old_key.KeyId()) {
    return Bad("signature key id " + (*sig)[0].key_id + " is not the old key's id " + s.old_key.KeyId());
  }
  *signature = (*sig)[0].signature;
  return s;
}

}  // namespace

std::string RotationStatementBody(const RotationStatement& s) {
  std::string body(s.version == 2 ? kRotationHeaderLineV2 : kRotationHeaderLine);
  body += kOldKeyTag;
  body += ToHex(s.old_key.raw.data(), s.old_key.raw.size());
  body += '\n';
  body += kNewKeyTag;
  body += ToHex(s.new_key.raw.data(), s.new_key.raw.size());
  body += '\n';
  body += kNotBeforeTag;
  body += std::to_string(s.not_before_unix);
  body += '\n';
  if (s.version == 2) {
    body += kOldKeyUntilTag;
    body += std::to_string(s.old_key_until_unix);
    body += '\n';
    for (const HighWaterReset& r : s.resets) {
      body += kResetTag;
      body += r.list;
      body += ' ';
      body += std::to_string(r.max_version);
      body += '\n';
    }
  }
  return body;
}

std::string RotationSignedMessage(std::string_view body, int version) {
  std::string message(version == 2 ? kRotationSignatureDomainV2 : kRotationSignatureDomain);
  message.append(body);
  return message;
}

Result<RotationStatement> ParseRotationStatement(std::string_view bytes) {
  std::string_view body;
  Ed25519Signature signature;
  return ParseInternal(bytes, &body, &signature);
}

namespace {

Result<RotationStatement> AcceptStatement(const std::vector<PublicKey>& trusted, std::string_view statement_bytes,
                                          int64_t now_unix) {
  std::string_view body;
  Ed25519Signature signature;
  URLGUARD_ASSIGN_OR_RETURN(RotationStatement s, ParseInternal(statement_bytes, &body, &signature));
  if (std::find(trusted.begin(), trusted.end(), s.old_key) == trusted.end()) {
    return Status::PermissionDenied("rotation signed by an untrusted key (key id " + s.old_key.KeyId() + ")");
  }
  if (!VerifySignature(s.old_key, RotationSignedMessage(body, s.version), signature.data())) {
    return Status::PermissionDenied("bad signature on the rotation statement (key id " + s.old_key.KeyId() +
                                    ")");
  }
  if (now_unix < s.not_before_unix) {
    return Status::FailedPrecondition("rotation not valid before " + std::to_string(s.not_before_unix) +
                                      " (now " + std::to_string(now_unix) + ")");
  }
  return s;
}

}  // namespace

Result<PublicKey> AcceptRotation(const std::vector<PublicKey>& trusted, std::string_view statement_bytes,
                                 int64_t now_unix) {
  URLGUARD_ASSIGN_OR_RETURN(RotationStatement s, AcceptStatement(trusted, statement_bytes, now_unix));
  return s.new_key;
}

Result<std::vector<PublicKey>> AcceptRotationChain(const std::vector<PublicKey>& trusted,
                                                   const std::vector<std::string>& statements,
                                                   int64_t now_unix) {
  URLGUARD_ASSIGN_OR_RETURN(TrustChain chain, AcceptTrustChain(trusted, statements, now_unix));
  return std::move(chain.keys);
}

Result<TrustChain> AcceptTrustChain(const std::vector<PublicKey>& trusted, const std::vector<std::string>& statements,
                                    int64_t now_unix) {
  if (statements.size() > kMaxRotationChainLength) {
    return Status::ResourceExhausted("more than " + std::to_string(kMaxRotationChainLength) +
                                     " rotation statements");
  }
  TrustChain chain;
  std::vector<PublicKey> keys = trusted;  // every key met so far, retired or not
  for (size_t i = 0; i < statements.size(); ++i) {
    const std::string context = "rotation statement " + std::to_string(i);
    Result<RotationStatement> s = AcceptStatement(keys, statements[i], now_unix);
    if (!s.ok()) return s.status().WithContext(context);
    if (std::find(chain.retired.begin(), chain.retired.end(), s->old_key) != chain.retired.end()) {
      return Status::PermissionDenied("rotation signed by a retired key (key id " + s->old_key.KeyId() + ")")
          .WithContext(context);
    }
    if (std::find(keys.begin(), keys.end(), s->new_key) == keys.end()) keys.push_back(s->new_key);
    // Spec (docs/manifest-format.md §7.1): OLD signs manifests alone only until old-key-until.
    if (now_unix >= s->old_key_until_unix &&
        std::find(chain.retired.begin(), chain.retired.end(), s->old_key) == chain.retired.end()) {
      chain.retired.push_back(s->old_key);
    }
    for (const HighWaterReset& r : s->resets) chain.resets.push_back(r);
  }
  for (const PublicKey& k : keys) {
    if (std::find(chain.retired.begin(), chain.retired.end(), k) == chain.retired.end()) chain.keys.push_back(k);
  }
  return chain;
}

}  // namespace urlguard
