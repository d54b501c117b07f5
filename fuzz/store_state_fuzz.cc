// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ParseStoreState (format/current_record.h, the D/current file of docs/data-dir.md): arbitrary
// bytes must never crash the parser, every failure is kCorruption or kResourceExhausted with a message, and
// an accepted state is valid and re-serializes to exactly the input bytes (the format has one encoding per
// state). The trailing SHA-256 makes random inputs fail early; the fuzzer also reseals every input
// (recomputes the trailer) so that the field checks behind it are reached. Seed:
// fixtures/golden/current_v1.bin.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/sha256.h"
#include "format/current_record.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "store_state_fuzz: %s\n", what);
  std::abort();
}

void Check(const std::string& input) {
  urlguard::Result<urlguard::StoreState> st = urlguard::ParseStoreState(input);
  if (!st.ok()) {
    const urlguard::StatusCode code = st.status().code();
    if (code != urlguard::StatusCode::kCorruption && code != urlguard::StatusCode::kResourceExhausted) {
      Fail("unexpected status code");
    }
    if (st.status().message().empty()) Fail("failure without a message");
    return;
  }
  if (!urlguard::ValidateStoreState(*st).ok()) Fail("parsed a state that ValidateStoreState refuses");
  if (urlguard::SerializeStoreState(*st) != input) Fail("accepted bytes do not re-serialize identically");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  Check(input);
  if (input.size() >= urlguard::kCurrentTrailerBytes && input.size() <= urlguard::kMaxCurrentBytes) {
    const size_t body = input.size() - urlguard::kCurrentTrailerBytes;
    urlguard::Sha256Digest d = urlguard::Sha256(input.data(), body);
    std::memcpy(input.data() + body, d.data(), d.size());
    Check(input);
  }
  return 0;
}
