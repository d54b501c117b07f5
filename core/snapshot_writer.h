// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// SnapshotWriter: writes a snapshot file (core/snapshot.h, docs/snapshot-format.md) from fingerprints that
// arrive one at a time, in ascending order per layer, with memory that does not grow with the list. The file's
// bytes are exactly BuildSnapshot's for the same content (core/snapshot_writer_test.cc compares them on random
// contents), so its trailing SHA-256 is the same state hash a manifest signs.
//
// Why it can stream. Every size in a snapshot follows from each layer's entry count and universe: the remainder
// width r, the bucket count, the sample count, the unary and remainder word counts, hence every body length
// and offset and the header itself. What cannot be written in file order is a layer body's content: its three
// regions (samples | unary | remainders) fill at the same time as fingerprints arrive. The samples come first
// in the file and go straight into it; the unary and remainder words go to two spills (buffered in
// `buffer_bytes`, then appended to a Spill the caller's SpillFactory makes on first need) and are copied into the
// output when the layer ends. So the output is written strictly sequentially, and the SHA-256 is computed on the
// way (no second read of the result). The price is writing the unary and remainder regions twice (to a spill,
// then to the output) and reading them once: with spill files (platform/file_sink.h) for a 10 M-entry list about
// 20 MB more page-cache traffic, a few milliseconds (bench/update_bench measures the whole update). Those spill
// files are read back through a mapping whose pages are handed back to the kernel as they are copied, so resident
// memory stays at the buffers.
//
// Pure: the writer opens no file (core/byte_sink.h). The caller creates the output (sync/apply.cc and
// publish/publisher.cc: `path`.tmp with CreateTempFile, its spills `path`.tmp.unary and `path`.tmp.rem next to it),
// and after Finish() syncs, closes and renames it; on a failure it removes the output, and destroying the writer
// destroys its spills (a spill file is removed then). Every error of the sink and the spills (disk full:
// kResourceExhausted) is returned unchanged.
//
// Thread safety: none; one thread drives a writer.
#ifndef URLGUARD_CORE_SNAPSHOT_WRITER_H_
#define URLGUARD_CORE_SNAPSHOT_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_sink.h"
#include "core/fingerprint_set.h"
#include "core/layer_kind.h"
#include "core/sha256.h"
#include "core/snapshot.h"
#include "urlguard/status.h"

namespace urlguard {

// One layer of a streamed snapshot, declared before its content arrives.
struct StreamLayerSpec {
  LayerKind kind = LayerKind::kDomain;
  FilterKind filter = FilterKind::kFingerprintArray;
  uint64_t universe = 1;  // fingerprint arrays: every fingerprint is below it
  uint64_t entries = 0;   // fingerprint arrays: exactly this many Add() calls; Bloom: keys inserted
  IpPrefixLengths ip_prefixes;  // ip layers only
  // Blocked Bloom layers only: BlockedBloom::Serialize(). Not copied: must stay valid until the writer has
  // moved past this layer (NextLayer() or Finish()).
  std::string_view bloom_body;
};

struct SnapshotWriterOptions {
  // Bytes each output stream (the output, each spill) buffers before an Append (the writer's memory is about 3x
  // this).
  size_t buffer_bytes = size_t{64} << 10;
};

class SnapshotWriter {
 public:
  // Lays out the snapshot (header fields + specs, which must be in ascending kind order) and starts writing
  // the head and the first layer's start to `out` (which should be empty). kInvalidArgument for what
  // BuildSnapshot refuses (bad name, 0 or more than 3 layers, kinds not ascending or repeated, IP prefix lengths
  // on a non-ip layer, a zero universe, over kMaxLayerEntries entries, a Bloom body that does not open);
  // kResourceExhausted over kMaxSnapshotBytes; `out`'s errors. `out` and `spills` are not owned and must
  // outlive the writer.
  static Result<std::unique_ptr<SnapshotWriter>> Create(ByteSink* out, SpillFactory* spills,
                                                        const SnapshotHeaderFields& header,
                                                        const std::vector<StreamLayerSpec>& layers,
                                                        const SnapshotWriterOptions& options = {});

  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;
  // Destroys the spills it made (whatever they held is dropped). Never touches `out`.
  ~SnapshotWriter();

  // The output's final size, known at Create (a caller can refuse a size before writing the bulk).
  uint64_t file_size() const { return file_size_; }

  // Adds the next fingerprint of the current layer (a fingerprint array). kInvalidArgument when it is not above
  // the previous one, not below the universe, one more than the layer's `entries`, or the layer is a Bloom
  // filter; the sink's and the spills' errors (disk full: kResourceExhausted) when a buffer is flushed or a
  // spill made. After any failure the writer is dead: every later call returns the first error.
  Status Add(uint64_t fingerprint);

  // Ends the current layer (all its `entries` fingerprints added, else kInvalidArgument) and starts the next;
  // kInvalidArgument when the current layer is the last.
  Status NextLayer();

  // Ends the last layer (NextLayer() must have been called for every earlier one) and appends the rest of the
  // output, the SHA-256 last: `out` then holds file_size() bytes. Returns the state hash (the trailing
  // SHA-256). Syncing, closing and naming the output are the caller's. Errors as for Add() and NextLayer().
  Result<Sha256Digest> Finish();

 private:
  struct Layer {
    StreamLayerSpec spec;
    FingerprintSetGeometry geometry;
    uint64_t body_offset = 0;
  };
  class EmitSink;

  SnapshotWriter(ByteSink* out, SpillFactory* spills, const SnapshotWriterOptions& options);
  Status StartLayer();
  Status EndLayer();
  Status Emit(std::string_view bytes);  // to the output, through the hash
  Status FlushOutput();
  // Appends *bytes to *spill (made by spills_ under `name` on first use) and clears *bytes.
  Status SpillBytes(std::string_view name, std::unique_ptr<Spill>* spill, std::string* bytes);
  // Copies *spill (if one was made) to the output and destroys it.
  Status CopySpill(std::unique_ptr<Spill>* spill);
  Status Fail(Status s);

  ByteSink* const out_;
  SpillFactory* const spills_;
  const SnapshotWriterOptions options_;
  std::vector<Layer> layers_;
  size_t current_ = 0;
  uint64_t file_size_ = 0;
  uint64_t written_ = 0;  // bytes emitted to the output so far
  std::string out_buffer_;
  Sha256Hasher hasher_;
  std::unique_ptr<FingerprintSetEncoder> encoder_;  // the current layer's, for fingerprint arrays
  std::unique_ptr<Spill> unary_;       // null until the layer's unary words first overflow the buffer
  std::unique_ptr<Spill> remainders_;  // likewise for its remainder words
  Status error_;
  bool finished_ = false;
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_SNAPSHOT_WRITER_H_
