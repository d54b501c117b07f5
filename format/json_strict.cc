// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "format/json_strict.h"

#include <set>
#include <vector>

namespace urlguard {

JsonProblem ParseJsonStrict(std::string_view bytes, nlohmann::json* out, std::string* duplicate_name) {
  using Json = nlohmann::json;
  std::vector<std::set<std::string>> open_objects;  // member names seen in each object being parsed
  bool duplicate = false;
  Json::parser_callback_t cb = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) -> bool {
    switch (event) {
      case Json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (const auto* name = parsed.get_ptr<const Json::string_t*>()) {
          if (!open_objects.empty() && !open_objects.back().insert(*name).second && !duplicate) {
            duplicate = true;
            if (duplicate_name != nullptr) *duplicate_name = *name;
          }
        }
        break;
      default:
        break;
    }
    return true;
  };
  *out = Json::parse(bytes.begin(), bytes.end(), cb, /*allow_exceptions=*/false);
  if (out->is_discarded()) return JsonProblem::kInvalid;
  return duplicate ? JsonProblem::kDuplicateMember : JsonProblem::kNone;
}

}  // namespace urlguard
