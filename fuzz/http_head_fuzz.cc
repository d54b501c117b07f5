// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for HeadBytesAreAccountedFor (http/framing.h), which reads a request head as libmicrohttpd
// left it (bytes from the network) at offsets computed from MHD's string pointers: arbitrary bytes and
// arbitrary spans (out of order, overlapping, past the end) must never crash it or read outside the head, and
// when it says true, every byte outside the spans is one of the separators MHD writes or tolerates (NUL, SP,
// HTAB): no byte of the client's can hide behind a NUL.
//
// Input: 1 byte header count (mod 8), then 6 + 4 * count little-endian uint16 span values (offset, length)
// for method, target, version and each name and value, then the head's bytes.
// Seed: "\x01" + spans of "GET\0/\0HTTP/1.1\0\0Host\0 x\0\0\0\0".
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "http/framing.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t headers = data[0] % 8;
  const size_t values = 6 + 4 * headers;
  if (size < 1 + 2 * values) return 0;
  std::vector<size_t> v(values);
  for (size_t i = 0; i < values; ++i) v[i] = data[1 + 2 * i] | (size_t{data[2 + 2 * i]} << 8);
  // The head in its own allocation, so a read past it is caught by ASan.
  const size_t head_size = size - 1 - 2 * values;
  std::vector<char> head(data + 1 + 2 * values, data + size);
  urlguard::ParsedHead p;
  p.method = {v[0], v[1]};
  p.target = {v[2], v[3]};
  p.version = {v[4], v[5]};
  for (size_t i = 0; i < headers; ++i) {
    p.headers.emplace_back(urlguard::HeadSpan{v[6 + 4 * i], v[7 + 4 * i]},
                           urlguard::HeadSpan{v[8 + 4 * i], v[9 + 4 * i]});
  }
  const std::string_view view(head.data(), head_size);
  if (!urlguard::HeadBytesAreAccountedFor(view, p)) return 0;
  std::vector<bool> inside(head_size, false);
  auto mark = [&](urlguard::HeadSpan s) {
    for (size_t i = s.offset; i < s.offset + s.length; ++i) inside[i] = true;  // accepted: within the head
  };
  mark(p.method);
  mark(p.target);
  mark(p.version);
  for (const auto& [name, value] : p.headers) {
    mark(name);
    mark(value);
  }
  for (size_t i = 0; i < head_size; ++i) {
    if (!inside[i] && view[i] != '\0' && view[i] != ' ' && view[i] != '\t') {
      std::fprintf(stderr, "http_head_fuzz: byte %zu (0x%02x) outside every span was accepted\n", i,
                   static_cast<unsigned char>(view[i]));
      std::abort();
    }
  }
  return 0;
}
