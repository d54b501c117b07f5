// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseSubscriptions (sync/subscriptions.h), the reader of D/subscriptions: arbitrary bytes
// must never crash the parser, every failure is kCorruption or kResourceExhausted with a message, and accepted
// subscriptions are valid, sorted by unique name, at most kMaxLists, and serialize back to exactly the input
// bytes (the format has one spelling per set). Seed: fixtures/golden/subscriptions_v1.txt.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "sync/subscriptions.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "subscriptions_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto subs = urlguard::ParseSubscriptions(input);
  if (!subs.ok()) {
    const urlguard::StatusCode code = subs.status().code();
    if (code != urlguard::StatusCode::kCorruption && code != urlguard::StatusCode::kResourceExhausted) {
      Fail("unexpected status code");
    }
    if (subs.status().message().empty()) Fail("failure without a message");
    return 0;
  }
  if (subs->size() > urlguard::kMaxLists) Fail("more lists than the cap");
  for (size_t i = 0; i < subs->size(); ++i) {
    if (!urlguard::IsValidListName((*subs)[i].list)) Fail("parsed an invalid list name");
    if (i > 0 && !((*subs)[i - 1].list < (*subs)[i].list)) Fail("not sorted by unique list name");
  }
  auto bytes = urlguard::SerializeSubscriptions(*subs);
  if (!bytes.ok()) Fail("parsed subscriptions do not serialize");
  if (*bytes != input) Fail("accepted bytes are not the canonical form");
  return 0;
}
