// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the list index reader (format/list_index.h): arbitrary bytes must never crash the parser
// or let an exception escape, every failure is one of the documented codes, and an accepted index is valid,
// re-serializes (publish/list_index_writer.h) to canonical bytes that parse back to the same index, and serializing
// that again gives the same bytes. The signature check runs too: no input verifies against a key that signed
// nothing (VerifyAndParseListIndex must refuse before parsing).
// Seeds: fixtures/golden/list_index_v1.json.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "format/list_index.h"
#include "publish/list_index_writer.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "list_index_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // The input as index bytes with a well-formed signature line by an arbitrary key: never accepted.
  urlguard::PublicKey key;
  key.raw.fill(0x42);
  const std::string sig = urlguard::FormatSignatureLine(key, urlguard::Ed25519Signature{});
  if (urlguard::VerifyAndParseListIndex({key}, input, sig).ok()) Fail("accepted an unsigned index");
  // ... and the input as a signature file: never crashes, never accepted for an empty index.
  if (urlguard::VerifyAndParseListIndex({key}, "{}", input).ok()) Fail("accepted a forged signature file");

  urlguard::Result<urlguard::ListIndex> index = urlguard::ParseListIndex(input);
  if (!index.ok()) {
    const urlguard::StatusCode code = index.status().code();
    if (code != urlguard::StatusCode::kCorruption && code != urlguard::StatusCode::kResourceExhausted) {
      Fail("unexpected status code");
    }
    if (index.status().message().empty()) Fail("failure without a message");
    return 0;
  }
  if (!urlguard::ValidateListIndex(*index).ok()) Fail("parsed an index that ValidateListIndex refuses");
  const std::string canonical = urlguard::SerializeListIndex(*index);  // aborts if invalid
  urlguard::Result<urlguard::ListIndex> again = urlguard::ParseListIndex(canonical);
  if (!again.ok()) Fail("canonical bytes do not parse");
  if (!(*again == *index)) Fail("canonical bytes parse to another index");
  if (urlguard::SerializeListIndex(*again) != canonical) Fail("canonical form is not a fixed point");
  return 0;
}
