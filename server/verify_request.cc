// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/verify_request.h"

#include <algorithm>
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

// The request body through nlohmann's SAX interface: no DOM, no allocation for bodies of the documented shape
// (keys and 8-digit strings fit std::string's inline buffer). Semantics are those of a DOM parse: the whole
// body must be JSON before any other problem is reported, and a repeated "prefixes" member counts last.
class VerifyBodySax {
 public:
  using json = nlohmann::json;
  explicit VerifyBodySax(VerifyPrefixes* out) : out_(out) {}

  bool null() { return Value(false); }
  bool boolean(bool) { return Value(false); }
  bool number_integer(json::number_integer_t) { return Value(false); }
  bool number_unsigned(json::number_unsigned_t) { return Value(false); }
  bool number_float(json::number_float_t, const json::string_t&) { return Value(false); }
  bool binary(json::binary_t&) { return Value(false); }
  bool string(json::string_t& s) {
    if (depth_ == 2 && in_prefixes_) {
      uint32_t prefix;
      if (!ParsePrefixHex(s, &prefix)) Bad(kNotHex);
      if (elements_ < kMaxVerifyPrefixes) out_->values[elements_] = prefix;
      ++elements_;
      return true;
    }
    return Value(false);
  }
  bool start_object(std::size_t) {
    if (depth_ == 0) top_object_ = true;
    Nested();
    ++depth_;
    return true;
  }
  bool key(json::string_t& k) {
    if (depth_ == 1) {
      next_is_prefixes_ = k == "prefixes";
    }
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 1 && next_is_prefixes_) {
      // A later "prefixes" member replaces an earlier one, as in a DOM.
      seen_prefixes_ = true;
      prefixes_is_array_ = true;
      in_prefixes_ = true;
      elements_ = 0;
      bad_ = nullptr;
      out_->count = 0;
    } else {
      Nested();
    }
    ++depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    if (depth_ == 1 && in_prefixes_) {
      in_prefixes_ = false;
      out_->count = std::min(elements_, kMaxVerifyPrefixes);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

  Status Finish() const {
    if (!top_object_) return Status::InvalidArgument("body must be a JSON object");
    if (!seen_prefixes_) return Status::InvalidArgument("missing \"prefixes\"");
    if (!prefixes_is_array_) return Status::InvalidArgument("\"prefixes\" must be an array");
    if (elements_ == 0) return Status::InvalidArgument("\"prefixes\" is empty");
    if (elements_ > kMaxVerifyPrefixes) return TooManyPrefixes();
    if (bad_ != nullptr) return Status::InvalidArgument(bad_);
    return Status::Ok();
  }

 private:
  static constexpr const char* kNotString = "a prefix is not a string";
  static constexpr const char* kNotHex = "a prefix is not 8 hex digits";

  // A scalar that is not a prefix string.
  bool Value(bool) {
    if (depth_ == 2 && in_prefixes_) {
      Bad(kNotString);
      ++elements_;
    } else if (depth_ == 1 && next_is_prefixes_) {
      Replaced(/*is_array=*/false);
    }
    return true;
  }
  // An object or array opening where a prefix or the "prefixes" value should be.
  void Nested() {
    if (depth_ == 2 && in_prefixes_) {
      Bad(kNotString);
      ++elements_;
    } else if (depth_ == 1 && next_is_prefixes_) {
      Replaced(/*is_array=*/false);
    }
  }
  void Replaced(bool is_array) {
    seen_prefixes_ = true;
    prefixes_is_array_ = is_array;
    next_is_prefixes_ = false;
  }
  void Bad(const char* why) {
    if (bad_ == nullptr) bad_ = why;
  }

  VerifyPrefixes* out_;
  int depth_ = 0;
  bool top_object_ = false;
  bool next_is_prefixes_ = false;  // the last key at depth 1 was "prefixes"
  bool seen_prefixes_ = false;
  bool prefixes_is_array_ = false;
  bool in_prefixes_ = false;  // inside the "prefixes" array (its elements are at depth 2)
  size_t elements_ = 0;
  const char* bad_ = nullptr;  // the first bad element of the current "prefixes" array
};

}  // namespace

Status ParseVerifyRequestInto(std::string_view body, VerifyPrefixes* out) {
  out->count = 0;
  if (body.size() > kMaxVerifyBodyBytes) return Status::ResourceExhausted("request body too large");
  VerifyBodySax sax(out);
  if (!nlohmann::json::sax_parse(body.begin(), body.end(), &sax)) {
    out->count = 0;
    return Status::InvalidArgument("body is not JSON");
  }
  Status s = sax.Finish();
  if (!s.ok()) out->count = 0;
  return s;
}

Result<std::vector<uint32_t>> ParseVerifyRequest(std::string_view body) {
  VerifyPrefixes p;
  URLGUARD_RETURN_IF_ERROR(ParseVerifyRequestInto(body, &p));
  return std::vector<uint32_t>(p.values, p.values + p.count);
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
