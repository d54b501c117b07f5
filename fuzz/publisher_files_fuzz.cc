// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for the publisher's private streaming files, read back by every incremental version: the
// state file (publish/state_file.h, docs/repository-layout.md) and the entry list read as a stream
// (EntryListReader, publish/entry_list.h). The first byte picks the reader; the rest is the file. Arbitrary bytes
// must give records or a clean error, never a crash, an endless loop or a read past what the file holds; a state
// file's reader must stop after the count its header announces.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "publish/entry_list.h"
#include "publish/key_record.h"
#include "publish/state_file.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "publisher_files_fuzz: %s\n", what);
  std::abort();
}

// The input as a real file (the readers take paths: they stream with read(2)).
std::string WriteInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/publisher_files_fuzz." + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) Fail("cannot write the input file");
  if (size > 0 && std::fwrite(data, 1, size, f) != size) Fail("short write");
  std::fclose(f);
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool state = (data[0] & 1) == 0;
  const std::string path = WriteInput(data + 1, size - 1);
  if (state) {
    auto reader = urlguard::StateFileReader::Open(path);
    if (!reader.ok()) return 0;
    urlguard::KeyRecord r;
    uint64_t n = 0;
    for (;;) {
      auto more = (*reader)->Next(&r);
      if (!more.ok() || !*more) break;
      if (++n > (*reader)->records()) Fail("more records than the header announces");
      if (r.threat >= (*reader)->threats().size()) Fail("a record names a threat the table does not hold");
    }
  } else {
    auto reader = urlguard::EntryListReader::Open(path);
    if (!reader.ok()) return 0;
    bool ip = false;
    std::string value;
    uint64_t n = 0;
    for (;;) {
      auto more = (*reader)->Next(&ip, &value);
      if (!more.ok() || !*more) break;
      if (++n > size) Fail("more entries than input bytes");
    }
  }
  return 0;
}
