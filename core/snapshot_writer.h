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
// in the file and go straight into it; the unary and remainder words go to two spill files next to the target
// (buffered in `buffer_bytes`, flushed by Env appends) and are copied into the file when the layer ends. So the
// file is written strictly sequentially, through the same Env seam and fault-injection tests as every other
// file, and the SHA-256 is computed on the way (no second read of the result). The price is writing the unary
// and remainder regions twice (to a spill, then to the file; both land in the page cache) and reading them
// once: for a 10 M-entry list about 20 MB more page-cache traffic, a few milliseconds (bench/update_bench
// measures the whole update). The spills are read back through a mapping whose pages are handed back to the
// kernel as they are copied (ReleaseMappedPages), so resident memory stays at the buffers.
//
// Files: `path`.tmp (the snapshot being written; created with CreateTempFile, so a stale or planted file there
// is removed first), `path`.tmp.unary and `path`.tmp.rem (spills, removed when each layer ends). Finish()
// fsyncs and closes `path`.tmp and, with options.install, renames it to `path` and fsyncs the directory; a
// writer destroyed before a successful Finish() removes every file it created (best effort: a crash leaves
// them, and the next start of their owner removes *.tmp* files, as sync/store.cc does).
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

#include "core/fingerprint_set.h"
#include "core/layer_kind.h"
#include "core/sha256.h"
#include "core/snapshot.h"
#include "urlguard/env.h"
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
  // Finish() renames `path`.tmp to `path`. False: it leaves the finished, fsynced `path`.tmp for the caller
  // to verify and rename (sync/store.cc does, so that nothing unverified ever carries a live name).
  bool install = true;
  // Bytes each output stream buffers before an Env append (the writer's memory is about 3x this).
  size_t buffer_bytes = size_t{64} << 10;
};

class SnapshotWriter {
 public:
  // Lays out the snapshot (header fields + specs, which must be in ascending kind order), creates `path`.tmp
  // and writes the head and the first layer's start. kInvalidArgument for what BuildSnapshot refuses (bad
  // name, 0 or more than 3 layers, kinds not ascending or repeated, IP prefix lengths on a non-ip layer, a zero
  // universe, over kMaxLayerEntries entries, a Bloom body that does not open); kResourceExhausted over
  // kMaxSnapshotBytes; the Env's errors for the file. `env` must outlive the writer.
  static Result<std::unique_ptr<SnapshotWriter>> Create(Env* env, const std::string& path,
                                                        const SnapshotHeaderFields& header,
                                                        const std::vector<StreamLayerSpec>& layers,
                                                        const SnapshotWriterOptions& options = {});

  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;
  // Removes the temporary and spill files unless Finish() succeeded.
  ~SnapshotWriter();

  // The file's final size (known at Create) and the path written until Finish() renames it.
  uint64_t file_size() const { return file_size_; }
  const std::string& temp_path() const { return tmp_path_; }

  // Adds the next fingerprint of the current layer (a fingerprint array). kInvalidArgument when it is not above
  // the previous one, not below the universe, one more than the layer's `entries`, or the layer is a Bloom
  // filter; the Env's errors (disk full: kResourceExhausted) when a buffer is flushed. After any failure the
  // writer is dead: every later call returns the first error.
  Status Add(uint64_t fingerprint);

  // Ends the current layer (all its `entries` fingerprints added, else kInvalidArgument) and starts the next;
  // kInvalidArgument when the current layer is the last.
  Status NextLayer();

  // Ends the last layer (NextLayer() must have been called for every earlier one), appends the SHA-256,
  // fsyncs and closes `path`.tmp, and with options.install renames it to `path` and fsyncs the directory.
  // Returns the state hash (the trailing SHA-256). Errors as for Add() and NextLayer().
  Result<Sha256Digest> Finish();

 private:
  struct Layer {
    StreamLayerSpec spec;
    FingerprintSetGeometry geometry;
    uint64_t body_offset = 0;
  };
  class Stream;

  SnapshotWriter(Env* env, std::string path, const SnapshotWriterOptions& options);
  Status StartLayer();
  Status EndLayer();
  Status Emit(std::string_view bytes);  // to the file, through the hash
  Status FlushFile();
  Status Fail(Status s);

  Env* const env_;
  const std::string path_;
  const std::string tmp_path_;
  const SnapshotWriterOptions options_;
  std::vector<Layer> layers_;
  size_t current_ = 0;
  uint64_t file_size_ = 0;
  uint64_t written_ = 0;  // bytes emitted to the file so far
  std::unique_ptr<WritableFile> file_;
  std::string file_buffer_;
  Sha256Hasher hasher_;
  std::unique_ptr<FingerprintSetEncoder> encoder_;  // the current layer's, for fingerprint arrays
  std::unique_ptr<Stream> unary_;
  std::unique_ptr<Stream> remainders_;
  Status error_;
  bool finished_ = false;
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_SNAPSHOT_WRITER_H_
