// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// zlib compression of update files for the publisher (snapshots and diffs are served deflated; clients
// undo it with format/bounded_inflate.h).
#ifndef URLGUARD_FORMAT_DEFLATE_H_
#define URLGUARD_FORMAT_DEFLATE_H_

#include <string>
#include <string_view>

namespace urlguard {

// Compresses `data` into one zlib stream (RFC 1950: 2-byte header, deflate data, Adler-32 trailer) at
// `level`: Z_DEFAULT_COMPRESSION (-1) or 0 (stored) .. 9 (smallest). Deterministic for a given zlib version
// and level. Precondition (asserted): a valid level. zlib cannot fail on valid arguments except by running
// out of memory, which aborts the process like any failed allocation. Thread-safe: no shared state.
std::string DeflateBytes(std::string_view data, int level);

}  // namespace urlguard

#endif  // URLGUARD_FORMAT_DEFLATE_H_
