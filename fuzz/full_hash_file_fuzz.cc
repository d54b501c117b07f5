// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// FullHashFileView::Open on arbitrary bytes (with and without the full content check), then prefix lookups and
// record reads: whatever passes Open must answer without reading out of bounds (ASan watches), and a view that
// passed the full check must find every record it holds under that record's own prefix. Base (V.ugh) and delta
// (V.ughd) files share the parser; a seed of each is in fixtures/golden/ (full_hash_v1.ugh,
// full_hash_delta_v1.ughd), and a delta's base version is always below its version.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "format/full_hash_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Mapped files are page-aligned; give the parser an 8-byte aligned copy of exactly `size` bytes.
  std::vector<uint64_t> aligned((size + 7) / 8 + 1);
  std::memcpy(aligned.data(), data, size);
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(aligned.data());
  std::vector<urlguard::FullHashMatch> out;
  for (bool verify : {false, true}) {
    auto view = urlguard::FullHashFileView::Open(bytes, size, verify);
    if (!view.ok()) continue;
    if (view->is_delta() ? view->base_version() >= view->version() : view->base_version() != 0) __builtin_trap();
    for (uint32_t p : {0u, 0xffffffffu, 0x80000000u, 0x12345678u}) {
      out.clear();
      view->LookupPrefix(p, &out);
    }
    const uint64_t n = view->records() < 64 ? view->records() : 64;
    for (uint64_t i = 0; i < n; ++i) {
      const urlguard::FullHashMatch m = view->RecordAt(i);
      if (m.deleted && !view->is_delta()) __builtin_trap();  // only delta files hold deletes
      out.clear();
      view->LookupPrefix(urlguard::DigestPrefix32(m.sha256), &out);
      if (verify && out.empty()) __builtin_trap();
    }
  }
  return 0;
}
