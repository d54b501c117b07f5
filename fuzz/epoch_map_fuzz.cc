// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the epoch map and catch-up archive file (publish/catchup.h, docs/versions.md "Epoch map
// file"), which every version and every checkpoint decodes. With the first byte odd the rest gets a valid SHA-256
// trailer appended, so the fuzzer reaches the fields behind the checksum; the list name is taken from where the
// file keeps it. Arbitrary bytes must give a map or a clean kCorruption, never a crash; a map decoded must encode
// to exactly the bytes it came from, Decode must tell done_with of every byte in order, and the map's diffs
// must be made without a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/sha256.h"
#include "publish/catchup.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "epoch_map_fuzz: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) != 0) {
    const urlguard::Sha256Digest sum = urlguard::Sha256(bytes);
    bytes.append(reinterpret_cast<const char*>(sum.data()), sum.size());
  }
  std::string list = "bench";
  if (bytes.size() > 13 && 13 + static_cast<uint8_t>(bytes[12]) <= bytes.size()) {
    list = bytes.substr(13, static_cast<uint8_t>(bytes[12]));
  }
  size_t next = 0;
  int passes = 0;
  auto map = urlguard::EpochMap::Decode(bytes, list, /*room=*/size % 7, [&](size_t offset, size_t length) {
    if (offset == 0 && next != 0) {
      ++passes;
      next = 0;
    }
    if (offset != next || length == 0 || offset + length > bytes.size()) Fail("done_with out of order");
    next = offset + length;
  });
  if (!map.ok()) {
    if (map.status().code() != urlguard::StatusCode::kCorruption) Fail("an error other than kCorruption");
    return 0;
  }
  if (passes != 1 || next != bytes.size()) Fail("done_with did not cover the file twice");
  if (map->Encode(list) != bytes) Fail("a decoded map does not encode to its bytes");
  if (map->size() != map->entries().size()) Fail("size() disagrees with entries()");
  if (map->version() > map->checkpoint()) {
    urlguard::RangeDiffTarget target;
    target.list = list;
    target.version = map->version();
    const std::vector<uint64_t> anchors = map->Anchors(1.5);
    const std::vector<urlguard::RangeDiff> diffs = map->Diffs(target, anchors);
    if (diffs.size() != anchors.size()) Fail("a diff per anchor");
    uint64_t values = 0;
    for (const urlguard::RangeLayerDiff& l : diffs.front().layers) values += l.absent.size() + l.present.size();
    if (values != map->size()) Fail("the diff from the checkpoint holds every entry");
  }
  return 0;
}
