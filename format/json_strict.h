// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Strict JSON parsing for documents whose meaning must be unique (a signed manifest, a verification answer):
// nlohmann-json without exceptions, refusing duplicate member names (RFC 8259 §4 leaves their meaning to the
// implementation). Shared by format/manifest.cc and client/verifier.cc; callers phrase their own errors.
#ifndef URLGUARD_FORMAT_JSON_STRICT_H_
#define URLGUARD_FORMAT_JSON_STRICT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace urlguard {

enum class JsonProblem { kNone, kInvalid, kDuplicateMember };

// Parses `bytes` into *out. kInvalid for anything that is not one JSON document; kDuplicateMember (with the first
// repeated name in *duplicate_name when not null) for an object that names a member twice. Never throws.
JsonProblem ParseJsonStrict(std::string_view bytes, nlohmann::json* out, std::string* duplicate_name);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_JSON_STRICT_H_
