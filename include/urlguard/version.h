// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Which urlguard this is, and which versions of each byte format and protocol it reads and writes. Every
// binary's `--version` prints VersionString(); an embedder can log it, or compare the constants below with what a
// server or a data directory uses.
//
//   std::puts(urlguard::VersionString("myapp").c_str());
//   // myapp 0.1.0 (snapshot format 1-2, diff format 1, manifest format 1, list index format 1,
//   //              rotation statements 1-2, verify API v1)
//
// The constants are checked at compile time against the ones the library's readers and writers use
// (format/version.cc), so they cannot drift apart. Thread safety: everything here is constant.
#ifndef URLGUARD_VERSION_H_
#define URLGUARD_VERSION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "urlguard/export.h"

namespace urlguard {

// Format and protocol versions this library reads and writes (docs/ names the document of each).
struct FormatVersions {
  static constexpr uint32_t kSnapshotMin = 1;     // list snapshots, *.ugs: oldest read (SHA-256 keys) ...
  static constexpr uint32_t kSnapshot = 2;        // ... and newest, written for new lists (XXH3 keys)
                                                  // (docs/snapshot-format.md)
  static constexpr uint32_t kDiff = 1;            // diffs between versions, *.ugd (docs/diff-format.md)
  static constexpr uint32_t kManifest = 1;        // signed manifest.json (docs/manifest-format.md)
  static constexpr uint32_t kListIndex = 1;       // the signed index of lists, index.json (docs/list-index.md)
  static constexpr uint32_t kRotationMin = 1;     // key rotation statements: oldest accepted ...
  static constexpr uint32_t kRotationMax = 2;     // ... and newest (docs/manifest-format.md §7)
  static constexpr uint32_t kVerifyApi = 1;       // the verification API, /v1/verify (docs/verify-server.md)
  static constexpr uint32_t kCurrentRecord = 1;   // the data directory's D/current record (docs/data-dir.md)
};

// The library version, from the build (CMake's PROJECT_VERSION): "MAJOR.MINOR.PATCH", e.g. "0.1.0". Never null;
// points to static storage.
URLGUARD_EXPORT const char* LibraryVersion();

// "<program> <LibraryVersion()> (snapshot format 1-2, diff format 1, manifest format 1, list index format 1,
// rotation statements 1-2, verify API v1)": one line, no trailing newline, what `--version` prints.
URLGUARD_EXPORT std::string VersionString(std::string_view program);

}  // namespace urlguard

#endif  // URLGUARD_VERSION_H_
