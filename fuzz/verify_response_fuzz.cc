// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseVerifyResponse (client/verifier.h): arbitrary bytes (a verify server's answer is
// untrusted network input) must never crash the parser or let an exception escape; every failure is one of
// the documented codes with a message; an accepted answer respects every documented limit, and writing it
// back as JSON parses to the same answer. Seeds: any {"matches":[{"sha256":"<64
// hex>","list":"phishing","layer":"url","threat":"t","cache_seconds":60}], "negative_cache_seconds":60}.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/list_name.h"
#include "client/verifier.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "verify_response_fuzz: %s\n", what);
  std::abort();
}

// The answer as the reference server writes it (every string is [a-z0-9_-] or hex, so nothing needs
// escaping).
std::string Write(const urlguard::VerifyAnswer& answer) {
  std::string out = "{\"matches\":[";
  for (size_t i = 0; i < answer.matches.size(); ++i) {
    const urlguard::VerifyMatch& m = answer.matches[i];
    if (i > 0) out += ',';
    out += "{\"sha256\":\"" + urlguard::ToHex(m.sha256) + "\",\"list\":\"" + m.list + "\",\"layer\":\"" +
           m.layer + "\",\"threat\":\"" + m.threat +
           "\",\"cache_seconds\":" + std::to_string(m.cache_seconds) + "}";
  }
  out += "],\"negative_cache_seconds\":" + std::to_string(answer.negative_cache_seconds);
  if (!answer.list_versions.empty()) {
    out += ",\"lists\":{";
    bool first = true;
    for (const auto& [list, version] : answer.list_versions) {
      if (!first) out += ',';
      first = false;
      out += "\"" + list + "\":" + std::to_string(version);
    }
    out += "}";
  }
  out += "}";
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  urlguard::Result<urlguard::VerifyAnswer> answer = urlguard::ParseVerifyResponse(input);
  if (!answer.ok()) {
    const urlguard::StatusCode code = answer.status().code();
    if (code != urlguard::StatusCode::kCorruption && code != urlguard::StatusCode::kResourceExhausted) {
      Fail("unexpected status code");
    }
    if (answer.status().message().empty()) Fail("failure without a message");
    return 0;
  }
  if (answer->matches.size() > urlguard::kMaxVerifyMatches) Fail("more matches than the cap");
  if (answer->negative_cache_seconds < 0 ||
      answer->negative_cache_seconds > urlguard::kMaxVerifyCacheSeconds) {
    Fail("negative_cache_seconds out of range");
  }
  if (answer->list_versions.size() > urlguard::kMaxVerifyListVersions) Fail("more lists than the cap");
  for (const auto& [list, version] : answer->list_versions) {
    if (!urlguard::IsValidListName(list)) Fail("invalid list version name accepted");
  }
  for (const urlguard::VerifyMatch& m : answer->matches) {
    if (!urlguard::IsValidListName(m.list)) Fail("invalid list accepted");
    if (!urlguard::IsValidLayerLabel(m.layer)) Fail("invalid layer accepted");
    if (!urlguard::IsValidThreatName(m.threat)) Fail("invalid threat accepted");
    if (m.cache_seconds < 0 || m.cache_seconds > urlguard::kMaxVerifyCacheSeconds)
      Fail("cache_seconds range");
  }
  const std::string written = Write(*answer);
  urlguard::Result<urlguard::VerifyAnswer> again = urlguard::ParseVerifyResponse(written);
  if (!again.ok()) Fail("a re-written answer does not parse");
  if (!(*again == *answer)) Fail("a re-written answer parses to a different answer");
  return 0;
}
