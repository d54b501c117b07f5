// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The list index reader (format/list_index.h, docs/list-index.md). Like format/manifest.cc it reads nlohmann-json
// values only through accessors that cannot throw (find(), is_*(), get_ptr()), so no exception leaves this file.
#include "format/list_index.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "core/list_name.h"
#include "format/json_strict.h"

namespace urlguard {
namespace {

using Json = nlohmann::json;

Status FieldError(const std::string& field, const std::string& problem) {
  return Status::Corruption("list index field '" + field + "': " + problem);
}

// The member `name` of `obj` (`field` names it in errors), which must be a non-negative integer.
Status ReadUint(const Json& obj, const char* name, const std::string& field, uint64_t* out) {
  auto it = obj.find(name);
  if (it == obj.end()) return FieldError(field, "missing");
  const auto* u = it->get_ptr<const Json::number_unsigned_t*>();
  if (u == nullptr) {
    return FieldError(field, it->is_number() ? "not a non-negative integer (negative or fractional)"
                                             : std::string("not a number but ") + it->type_name());
  }
  *out = *u;
  return Status::Ok();
}

Status ReadUnixTime(const Json& obj, const char* name, const std::string& field, int64_t* out) {
  uint64_t v = 0;
  URLGUARD_RETURN_IF_ERROR(ReadUint(obj, name, field, &v));
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return FieldError(field, "out of range");
  *out = static_cast<int64_t>(v);
  return Status::Ok();
}

constexpr std::string_view kListLimitMarker = " lists, more than a client keeps (";

Status TooManyLists(size_t n) { return ListLimitError("list index names", n); }

}  // namespace

Status ListLimitError(std::string_view what, size_t n) {
  return Status::ResourceExhausted(std::string(what) + " " + std::to_string(n) + std::string(kListLimitMarker) +
                                   std::to_string(kMaxLists) + ")");
}

bool IsListLimitError(const Status& status) {
  return status.code() == StatusCode::kResourceExhausted &&
         status.message().find(kListLimitMarker) != std::string::npos;
}

Status ValidateListIndex(const ListIndex& index) {
  if (index.format != kListIndexFormatVersion) {
    return FieldError("format", "unsupported list index format " + std::to_string(index.format) + " (expected " +
                                    std::to_string(kListIndexFormatVersion) + ")");
  }
  if (index.created_unix <= 0) return FieldError("created_unix", "must be >= 1");
  if (index.lists.size() > kMaxListIndexLists) return TooManyLists(index.lists.size());
  for (size_t i = 0; i < index.lists.size(); ++i) {
    const ListIndexEntry& e = index.lists[i];
    const std::string name = "lists[" + std::to_string(i) + "]";
    if (!IsValidListName(e.name)) return FieldError(name + ".name", "not a valid list name");
    if (i > 0 && e.name <= index.lists[i - 1].name) {
      return FieldError(name + ".name", "lists must be sorted by strictly ascending name");
    }
    if (e.version == 0) return FieldError(name + ".version", "must be >= 1");
    if (e.created_unix <= 0) return FieldError(name + ".created_unix", "must be >= 1");
    if (e.expires_unix <= e.created_unix) {
      return FieldError(name + ".expires_unix", "must be later than created_unix");
    }
  }
  return Status::Ok();
}

Result<ListIndex> ParseListIndex(std::string_view bytes) {
  if (bytes.size() > kMaxListIndexBytes) {
    return Status::ResourceExhausted("list index of " + std::to_string(bytes.size()) + " bytes (cap " +
                                     std::to_string(kMaxListIndexBytes) + ")");
  }
  Json doc;
  std::string duplicate;
  switch (ParseJsonStrict(bytes, &doc, &duplicate)) {
    case JsonProblem::kInvalid: return Status::Corruption("list index is not valid JSON");
    case JsonProblem::kDuplicateMember:
      return Status::Corruption("list index has a duplicate member \"" + duplicate + "\"");
    case JsonProblem::kNone: break;
  }
  if (!doc.is_object()) return Status::Corruption("list index is not a JSON object");
  ListIndex index;
  // The format first: a newer format may change anything else.
  uint64_t format = 0;
  URLGUARD_RETURN_IF_ERROR(ReadUint(doc, "format", "format", &format));
  if (format != kListIndexFormatVersion) {
    return FieldError("format", "unsupported list index format " + std::to_string(format) + " (expected " +
                                    std::to_string(kListIndexFormatVersion) + ")");
  }
  URLGUARD_RETURN_IF_ERROR(ReadUnixTime(doc, "created_unix", "created_unix", &index.created_unix));
  auto lists = doc.find("lists");
  if (lists == doc.end()) return FieldError("lists", "missing");
  if (!lists->is_array()) return FieldError("lists", std::string("not an array but ") + lists->type_name());
  if (lists->size() > kMaxListIndexLists) return TooManyLists(lists->size());
  index.lists.reserve(lists->size());
  size_t i = 0;
  for (const Json& entry : *lists) {  // iterating an array never throws
    const std::string name = "lists[" + std::to_string(i++) + "]";
    if (!entry.is_object()) return FieldError(name, std::string("not an object but ") + entry.type_name());
    ListIndexEntry e;
    auto n = entry.find("name");
    if (n == entry.end()) return FieldError(name + ".name", "missing");
    const auto* s = n->get_ptr<const Json::string_t*>();
    if (s == nullptr) return FieldError(name + ".name", std::string("not a string but ") + n->type_name());
    e.name = *s;
    URLGUARD_RETURN_IF_ERROR(ReadUint(entry, "version", name + ".version", &e.version));
    URLGUARD_RETURN_IF_ERROR(ReadUnixTime(entry, "created_unix", name + ".created_unix", &e.created_unix));
    URLGUARD_RETURN_IF_ERROR(ReadUnixTime(entry, "expires_unix", name + ".expires_unix", &e.expires_unix));
    index.lists.push_back(std::move(e));
  }
  URLGUARD_RETURN_IF_ERROR(ValidateListIndex(index));
  return index;
}

Result<ListIndex> VerifyAndParseListIndex(const std::vector<PublicKey>& trusted, std::string_view index_bytes,
                                          std::string_view signature_file_bytes) {
  if (index_bytes.size() > kMaxListIndexBytes) {
    return Status::ResourceExhausted("list index of " + std::to_string(index_bytes.size()) + " bytes (cap " +
                                     std::to_string(kMaxListIndexBytes) + ")");
  }
  URLGUARD_RETURN_IF_ERROR(
      VerifyDetachedSignature(kListIndexSignatureDomain, trusted, index_bytes, signature_file_bytes));
  return ParseListIndex(index_bytes);
}

}  // namespace urlguard
