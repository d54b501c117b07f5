// Copyright urlguard authors.
#include "publish/verify_request.h"

#include <nlohmann/json.hpp>
#include <string>

#include "core/sha256.h"

namespace urlguard {

namespace {

// Parses exactly 8 hex digits.
bool ParsePrefixHex(std::string_view hex, uint32_t* out) {
  if (hex.size() != kVerifyPrefixHexDigits) return false;
  uint8_t bytes[4];
  if (!FromHex(hex, bytes, sizeof(bytes))) return false;
  *out = (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) | bytes[3];
  return true;
}

Status TooManyPrefixes() {
  return Status::ResourceExhausted("more than " + std::to_string(kMaxVerifyPrefixes) + " prefixes");
}

}  // namespace

Result<std::vector<uint32_t>> ParseVerifyRequest(std::string_view body) {
  if (body.size() > kMaxVerifyBodyBytes) return Status::ResourceExhausted("request body too large");
  // allow_exceptions = false: a parse error yields a "discarded" value instead of throwing.
  const nlohmann::json doc =
      nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument("body is not JSON");
  if (!doc.is_object()) return Status::InvalidArgument("body must be a JSON object");
  const auto it = doc.find("prefixes");
  if (it == doc.end()) return Status::InvalidArgument("missing \"prefixes\"");
  if (!it->is_array()) return Status::InvalidArgument("\"prefixes\" must be an array");
  if (it->empty()) return Status::InvalidArgument("\"prefixes\" is empty");
  if (it->size() > kMaxVerifyPrefixes) return TooManyPrefixes();
  std::vector<uint32_t> prefixes;
  prefixes.reserve(it->size());
  for (const nlohmann::json& element : *it) {
    if (!element.is_string()) return Status::InvalidArgument("a prefix is not a string");
    uint32_t prefix;
    if (!ParsePrefixHex(element.get_ref<const std::string&>(), &prefix)) {
      return Status::InvalidArgument("a prefix is not 8 hex digits");
    }
    prefixes.push_back(prefix);
  }
  return prefixes;
}

Result<std::vector<uint32_t>> ParseVerifyPrefixList(std::string_view list) {
  if (list.size() > kMaxVerifyBodyBytes) return Status::ResourceExhausted("prefix list too long");
  if (list.empty()) return Status::InvalidArgument("\"prefixes\" is empty");
  std::vector<uint32_t> prefixes;
  size_t start = 0;
  while (true) {
    if (prefixes.size() == kMaxVerifyPrefixes) return TooManyPrefixes();
    const size_t comma = list.find(',', start);
    const std::string_view item =
        list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    uint32_t prefix;
    if (!ParsePrefixHex(item, &prefix)) return Status::InvalidArgument("a prefix is not 8 hex digits");
    prefixes.push_back(prefix);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return prefixes;
}

}  // namespace urlguard
