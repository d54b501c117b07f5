// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Where pure code puts the bytes it produces. core/ computes on byte spans and never opens a file
// (docs/architecture.md §1): a writer that streams its output (core/snapshot_writer.h) is handed a ByteSink and,
// when it must park bytes until it may write them in file order, a SpillFactory. The caller decides what they
// are: files it created through the Env (platform/file_sink.h; it then syncs, closes and renames them), or memory in
// a test. Whatever fails below a sink (a full disk: kResourceExhausted) comes back unchanged through Append, so
// the writer reports the Env's own Status.
//
// Thread safety: none of these interfaces promises any; one thread drives a sink.
#ifndef URLGUARD_CORE_BYTE_SINK_H_
#define URLGUARD_CORE_BYTE_SINK_H_

#include <memory>
#include <string_view>

#include "urlguard/status.h"

namespace urlguard {

// A sequential output: bytes are appended in order and never read back through it.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends `bytes` (not retained after the call). Returns the implementation's error unchanged (a file's
  // kResourceExhausted on a full disk, kIoError...); after an error the caller stops using the sink.
  [[nodiscard]] virtual Status Append(std::string_view bytes) = 0;
};

// Bytes set aside now and read back once, in the order they came, later: a region of a file that cannot be
// written yet. Destroying a spill releases what it holds (a spill file is removed).
class Spill : public ByteSink {
 public:
  // Ends appending, then appends every byte appended so far, in order, to `out` in pieces of any size, stopping
  // at the first error (from reading back, or from `out`, returned unchanged). Called at most once; Append()
  // after it is a bug.
  [[nodiscard]] virtual Status CopyTo(ByteSink* out) = 0;
};

// Makes spills when a writer first needs one (so a small output never makes any).
class SpillFactory {
 public:
  virtual ~SpillFactory() = default;
  // A new, empty spill. `name` ("unary", "rem": lower-case letters) tells a writer's spills apart; an
  // implementation that makes files puts it in their names. The implementation's errors unchanged.
  [[nodiscard]] virtual Result<std::unique_ptr<Spill>> NewSpill(std::string_view name) = 0;
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_BYTE_SINK_H_
