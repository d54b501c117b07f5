// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the verify API's request parsers (server/verify_request.h): ParseVerifyRequest (the POST
// body, JSON) and ParseVerifyPrefixList (the GET form) on arbitrary bytes must never crash, hang, leak, throw
// or trip a sanitizer, and must keep their contracts: a success holds 1 to kMaxVerifyPrefixes prefixes; a
// failure is kInvalidArgument or kResourceExhausted; a prefix list that parses re-encodes (lower-case hex,
// commas) to a list that parses to the same prefixes, and the JSON form of those prefixes parses to them too.
//
// Build (links the publish layer: urlguard_publish_lib, i.e. cpp-httplib, nlohmann-json, SQLite, OpenSSL):
//   cmake -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DURLGUARD_FUZZ=ON; run with -max_len=65536.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "server/verify_request.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void CheckResult(const urlguard::Result<std::vector<uint32_t>>& r) {
  if (r.ok()) {
    Check(!r->empty() && r->size() <= urlguard::kMaxVerifyPrefixes);
  } else {
    const urlguard::StatusCode code = r.status().code();
    Check(code == urlguard::StatusCode::kInvalidArgument || code == urlguard::StatusCode::kResourceExhausted);
    Check(!r.status().message().empty());
  }
}

std::string Hex8(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  const auto body = urlguard::ParseVerifyRequest(input);
  CheckResult(body);

  const auto list = urlguard::ParseVerifyPrefixList(input);
  CheckResult(list);
  if (list.ok()) {
    std::string reencoded, json = "{\"prefixes\": [";
    for (size_t i = 0; i < list->size(); ++i) {
      reencoded += (i ? "," : "") + Hex8((*list)[i]);
      json += std::string(i ? "," : "") + "\"" + Hex8((*list)[i]) + "\"";
    }
    json += "]}";
    const auto again = urlguard::ParseVerifyPrefixList(reencoded);
    Check(again.ok() && *again == *list);
    const auto as_json = urlguard::ParseVerifyRequest(json);
    Check(as_json.ok() && *as_json == *list);
  }
  return 0;
}
