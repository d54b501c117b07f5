// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for InflateBounded (format/bounded_inflate.h): arbitrary bytes must never crash it, an
// accepted stream never exceeds the cap, and the cap is exact (the same stream passes with a cap equal to
// its output size and is refused, as kResourceExhausted, one byte below). BoundedInflater fed the input in
// pieces (their sizes taken from the input's first byte) must give what InflateBounded gives for it whole: the
// same bytes, or the same code and message; so must the same pieces through an output function.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "format/bounded_inflate.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "bounded_inflate_fuzz: %s\n", what);
  std::abort();
}

constexpr size_t kFuzzCap = size_t{1} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // Multi-member gzip: counting first or growing must agree on every input, byte for byte or status code.
  const urlguard::Result<std::string> grown =
      urlguard::InflateBounded(input, kFuzzCap, urlguard::InflateOptions{.gzip_members = true});
  const urlguard::Result<std::string> counted = urlguard::InflateBounded(
      input, kFuzzCap, urlguard::InflateOptions{.gzip_members = true, .count_first = true});
  if (grown.ok() != counted.ok()) Fail("count_first changed whether the input is accepted");
  if (grown.ok() && (*grown != *counted || grown->size() > kFuzzCap)) Fail("count_first changed the output");
  if (!grown.ok() && grown.status().code() != counted.status().code()) Fail("count_first changed the error");

  urlguard::Result<std::string> out = urlguard::InflateBounded(input, kFuzzCap);
  {
    const size_t piece = size > 0 ? 1 + data[0] % 97 : 1;
    urlguard::BoundedInflater inflater(kFuzzCap, size > 1 ? data[1] * size_t{4096} : 0);
    for (size_t at = 0; at < input.size(); at += piece) inflater.Feed(input.substr(at, piece));
    const urlguard::Result<std::string> streamed = inflater.Finish();
    if (streamed.ok() != out.ok()) Fail("BoundedInflater and InflateBounded disagree");
    if (out.ok() && *streamed != *out) Fail("BoundedInflater gives other bytes");
    if (!out.ok() && (streamed.status().code() != out.status().code() ||
                      streamed.status().message() != out.status().message())) {
      Fail("BoundedInflater fails otherwise");
    }
    // The same pieces through an output function (a snapshot written to its file as it inflates).
    std::string handed;
    urlguard::BoundedInflater to_output(kFuzzCap, [&](std::string_view piece) {
      if (piece.size() > urlguard::kInflateChunkBytes) Fail("an output piece larger than a chunk");
      handed.append(piece);
      return urlguard::Status::Ok();
    });
    for (size_t at = 0; at < input.size(); at += piece) to_output.Feed(input.substr(at, piece));
    const urlguard::Result<size_t> n = to_output.FinishOutput();
    if (handed.size() > kFuzzCap) Fail("the output function got more than the cap");
    if (n.ok() != out.ok()) Fail("the output form and InflateBounded disagree");
    if (out.ok() && (*n != out->size() || handed != *out)) Fail("the output form gives other bytes");
    if (!out.ok() && (n.status().code() != out.status().code() || n.status().message() != out.status().message())) {
      Fail("the output form fails otherwise");
    }
  }
  if (!out.ok()) {
    const urlguard::StatusCode code = out.status().code();
    if (code != urlguard::StatusCode::kCorruption && code != urlguard::StatusCode::kResourceExhausted) {
      Fail("unexpected status code");
    }
    return 0;
  }
  if (out->size() > kFuzzCap) Fail("output exceeds the cap");
  urlguard::Result<std::string> exact = urlguard::InflateBounded(input, out->size());
  if (!exact.ok() || *exact != *out) Fail("an exact cap refused or changed the output");
  if (!out->empty()) {
    urlguard::Result<std::string> below = urlguard::InflateBounded(input, out->size() - 1);
    if (below.ok() || below.status().code() != urlguard::StatusCode::kResourceExhausted) {
      Fail("a cap one byte below the output was not refused");
    }
  }
  return 0;
}
