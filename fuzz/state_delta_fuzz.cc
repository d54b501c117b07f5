// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the publisher's state delta reader (publish/state_delta.h, docs/repository-layout.md "State
// delta"), read back by every incremental version and every compaction. Arbitrary bytes must give records or a
// clean error, never a crash, an endless loop or a read past what the file holds; the reader must stop after the
// count its header announces and hand out only strictly ascending records with a valid op and threat id.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "publish/key_record.h"
#include "publish/state_delta.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "state_delta_fuzz: %s\n", what);
  std::abort();
}

// The input as a real file (the reader takes a path: it streams with read(2)).
std::string WriteInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/state_delta_fuzz." + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) Fail("cannot write the input file");
  if (size > 0 && std::fwrite(data, 1, size, f) != size) Fail("short write");
  std::fclose(f);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = WriteInput(data, size);
  auto reader = urlguard::StateDeltaReader::Open(path);
  if (!reader.ok()) return 0;
  urlguard::KeyRecord r, last;
  urlguard::DeltaOp op;
  uint64_t n = 0;
  for (;;) {
    auto more = (*reader)->Next(&r, &op);
    if (!more.ok() || !*more) break;
    if (++n > (*reader)->records()) Fail("more records than the header announces");
    if (op == urlguard::DeltaOp::kPut && r.threat >= (*reader)->threats().size()) Fail("a put names no threat");
    if (op != urlguard::DeltaOp::kPut && op != urlguard::DeltaOp::kDelete) Fail("an op the format does not have");
    if (n > 1 && urlguard::CompareEntry(last, r) >= 0) Fail("records out of order");
    last = r;
  }
  return 0;
}
