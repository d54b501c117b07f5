// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Env files behind core's output interfaces (core/byte_sink.h), for the callers of pure writers
// (core/snapshot_writer.h): sync/apply.cc and publish/publisher.cc create the output file through the Env,
// wrap it in a WritableFileSink, hand the writer a TempFileSpills for its spill files, and themselves sync,
// close, rename and (on failure) remove the output. Everything goes through the Env, so a fault-injecting Env
// (platform/fault_injection_env.h) reaches the writer: its errors come back unchanged.
//
// Thread safety: none; one thread uses a sink.
#ifndef URLGUARD_PLATFORM_FILE_SINK_H_
#define URLGUARD_PLATFORM_FILE_SINK_H_

#include <memory>
#include <string>
#include <string_view>

#include "core/byte_sink.h"
#include "urlguard/env.h"
#include "urlguard/status.h"

namespace urlguard {

// A WritableFile as a ByteSink: Append() forwards to the file. Does not own the file; syncing and closing it
// stay with its owner.
class WritableFileSink final : public ByteSink {
 public:
  explicit WritableFileSink(WritableFile* file) : file_(file) {}
  Status Append(std::string_view bytes) override { return file_->Append(bytes); }

 private:
  WritableFile* const file_;
};

// Spill files next to an output: NewSpill(name) creates `prefix`.`name` (a snapshot `P`.tmp's are `P`.tmp.unary
// and `P`.tmp.rem; sync/store.cc removes such leftovers of a crash at its next start) with CreateTempFile, so a
// stale or planted file there is removed first. CopyTo() closes the file and reads it back through a read-only
// mapping, kCopyChunkBytes at a time, handing each piece back to the kernel once copied (ReleaseMappedPages), so
// the copy costs no resident memory of the spill's size. A spill's file is removed when the spill is destroyed
// (best effort: a crash leaves it to its owner's next start). `env` must outlive the spills.
class TempFileSpills final : public SpillFactory {
 public:
  static constexpr size_t kCopyChunkBytes = size_t{128} << 10;

  TempFileSpills(Env* env, std::string prefix) : env_(env), prefix_(std::move(prefix)) {}
  // The Env's errors for creating the file.
  Result<std::unique_ptr<Spill>> NewSpill(std::string_view name) override;

 private:
  Env* const env_;
  const std::string prefix_;
};

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_FILE_SINK_H_
