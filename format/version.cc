// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// include/urlguard/version.h: the public format-version constants, pinned to the internal ones they describe.
#include "urlguard/version.h"

#include "core/diff_codec.h"
#include "core/snapshot.h"
#include "format/current_record.h"
#include "format/list_index.h"
#include "format/manifest.h"

#ifndef URLGUARD_VERSION_STRING
#error "URLGUARD_VERSION_STRING must be defined by the build (CMakeLists.txt)"
#endif

namespace urlguard {

// A format change bumps the internal constant; these make the public one (and so --version) follow.
static_assert(FormatVersions::kSnapshot == kSnapshotFormatVersion);
static_assert(FormatVersions::kSnapshotMin == kSnapshotFormatVersionSha256Keys);
static_assert(FormatVersions::kDiff == kDiffFormatVersion);
static_assert(FormatVersions::kManifest == kManifestFormatVersion);
static_assert(FormatVersions::kListIndex == kListIndexFormatVersion);
static_assert(FormatVersions::kCurrentRecord == kCurrentFormatVersion);

const char* LibraryVersion() { return URLGUARD_VERSION_STRING; }

std::string VersionString(std::string_view program) {
  using F = FormatVersions;
  std::string out(program);
  out += ' ';
  out += LibraryVersion();
  out += " (snapshot format " + std::to_string(F::kSnapshotMin) + "-" + std::to_string(F::kSnapshot) +
         ", diff format " + std::to_string(F::kDiff) +
         ", manifest format " + std::to_string(F::kManifest) + ", list index format " +
         std::to_string(F::kListIndex) + ", rotation statements " + std::to_string(F::kRotationMin) + "-" +
         std::to_string(F::kRotationMax) + ", verify API v" + std::to_string(F::kVerifyApi) + ")";
  return out;
}

}  // namespace urlguard
