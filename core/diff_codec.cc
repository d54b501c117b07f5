// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Diff encode/decode and the reference merge. The byte layout is specified in docs/diff-format.md; the
// offsets below are that document's.
//
// Changes the on-disk format: bump kDiffFormatVersion and the golden test.
#include "core/diff_codec.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <span>

#include "core/bit_stream.h"
#include "core/byte_io.h"
#include "core/sha256.h"

namespace urlguard {

namespace {

std::string U64(uint64_t v) { return std::to_string(v); }

// The header offsets of docs/diff-format.md, relative to the name length N where they follow the name.
constexpr size_t kOffVersion = 8;
constexpr size_t kOffHeaderLength = 12;
constexpr size_t kOffNameLength = 16;
constexpr size_t kOffName = 17;
// After the name (add N): from_version at 17 + N, to_version at 25 + N, layer_count at 33 + N.

// Layer record offsets (60 bytes each).
constexpr size_t kRecKind = 0;
constexpr size_t kRecRemovedK = 1;
constexpr size_t kRecAddedK = 2;
constexpr size_t kRecReserved = 3;
constexpr size_t kRecUniverse = 4;
constexpr size_t kRecOldCount = 12;
constexpr size_t kRecNewCount = 20;
constexpr size_t kRecRemovedCount = 28;
constexpr size_t kRecAddedCount = 36;
constexpr size_t kRecRemovedBytes = 44;
constexpr size_t kRecAddedBytes = 52;
static_assert(kRecAddedBytes + 8 == kDiffLayerRecordBytes);

constexpr size_t kMinDiffBytes = kDiffFixedHeaderBytes + 1 + kDiffTrailerBytes;  // 1-byte name, no layers

size_t HeaderBytes(size_t name_length, size_t layer_count) {
  return kDiffFixedHeaderBytes + name_length + kDiffLayerRecordBytes * layer_count;
}

// The count checks shared by ValidateDiff() and DecodeDiff(). Cap violations are kResourceExhausted, the
// rest kCorruption (ValidateDiff turns both into kInvalidArgument).
Status CheckLayerCounts(const char* layer_name, uint64_t universe, uint64_t old_count, uint64_t new_count,
                        uint64_t removed_count, uint64_t added_count) {
  const std::string where = std::string("layer ") + layer_name + ": ";
  if (removed_count > kMaxDiffEntries) {
    return Status::ResourceExhausted(where + U64(removed_count) + " removals exceed the cap of " +
                                     U64(kMaxDiffEntries));
  }
  if (added_count > kMaxDiffEntries) {
    return Status::ResourceExhausted(where + U64(added_count) + " additions exceed the cap of " +
                                     U64(kMaxDiffEntries));
  }
  if (old_count > universe) {
    return Status::Corruption(where + "old count " + U64(old_count) + " exceeds the universe " +
                              U64(universe));
  }
  if (removed_count > old_count) {
    return Status::Corruption(where + U64(removed_count) + " removals from only " + U64(old_count) +
                              " entries");
  }
  const uint64_t kept = old_count - removed_count;
  if (added_count > ~uint64_t{0} - kept || kept + added_count != new_count) {
    return Status::Corruption(where + "new count " + U64(new_count) + " != old count " + U64(old_count) +
                              " - removed " + U64(removed_count) + " + added " + U64(added_count));
  }
  if (new_count > universe) {
    return Status::Corruption(where + "new count " + U64(new_count) + " exceeds the universe " +
                              U64(universe));
  }
  return Status::Ok();
}

// Strictly increasing and each < bound; kInvalidArgument otherwise.
Status CheckSequence(const std::string& what, const std::vector<uint64_t>& v, uint64_t bound) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] >= bound) {
      return Status::InvalidArgument(what + "[" + U64(i) + "] = " + U64(v[i]) + " is >= " + U64(bound));
    }
    if (i > 0 && v[i] <= v[i - 1]) {
      return Status::InvalidArgument(what + " not strictly increasing at index " + U64(i));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateDiff(const Diff& diff) {
  if (!IsValidListName(diff.list_name)) {
    return Status::InvalidArgument("list name must be 1.." + U64(kMaxListNameBytes) +
                                   " bytes of [a-z0-9_-], got \"" + diff.list_name + "\"");
  }
  if (diff.from_version >= diff.to_version) {
    return Status::InvalidArgument("from_version " + U64(diff.from_version) + " must be < to_version " +
                                   U64(diff.to_version));
  }
  if (diff.layers.size() > kMaxDiffLayers) {
    return Status::InvalidArgument(U64(diff.layers.size()) + " layers, at most " + U64(kMaxDiffLayers));
  }
  for (size_t i = 0; i < diff.layers.size(); ++i) {
    const LayerDiff& d = diff.layers[i];
    const uint8_t kind = static_cast<uint8_t>(d.layer);
    if (!IsValidLayerKind(kind)) return Status::InvalidArgument("invalid layer kind " + U64(kind));
    if (i > 0 && kind <= static_cast<uint8_t>(diff.layers[i - 1].layer)) {
      return Status::InvalidArgument("layers must be in ascending kind order, each at most once");
    }
    const std::string name = LayerKindName(d.layer);
    Status s = CheckLayerCounts(name.c_str(), d.universe, d.old_count, d.new_count,
                                d.removed_positions.size(), d.added.size());
    if (!s.ok()) return Status::InvalidArgument(s.message());
    URLGUARD_RETURN_IF_ERROR(
        CheckSequence("layer " + name + ": removed_positions", d.removed_positions, d.old_count));
    URLGUARD_RETURN_IF_ERROR(CheckSequence("layer " + name + ": added", d.added, d.universe));
  }
  return Status::Ok();
}

// Changes the on-disk format: bump kDiffFormatVersion and the golden test.
std::string EncodeDiff(const Diff& diff) {
  const Status valid = ValidateDiff(diff);
  if (!valid.ok()) {
    // A bug in the caller (see the contract); shipping the bytes would make every client reject the diff.
    std::fprintf(stderr, "urlguard: EncodeDiff called with an invalid diff: %s\n", valid.ToString().c_str());
    std::abort();
  }
  struct Streams {
    int removed_k, added_k;
    std::string removed, added;
  };
  std::vector<Streams> streams;
  streams.reserve(diff.layers.size());
  for (const LayerDiff& d : diff.layers) {
    Streams s;
    s.removed_k = OptimalRiceParameter(d.removed_positions);
    s.added_k = OptimalRiceParameter(d.added);
    s.removed = RiceEncodeSorted(d.removed_positions, s.removed_k);
    s.added = RiceEncodeSorted(d.added, s.added_k);
    streams.push_back(std::move(s));
  }

  const size_t header_bytes = HeaderBytes(diff.list_name.size(), diff.layers.size());
  std::string out;
  out.append(kDiffMagic, sizeof(kDiffMagic));
  AppendLE32(&out, kDiffFormatVersion);
  AppendLE32(&out, static_cast<uint32_t>(header_bytes));
  out.push_back(static_cast<char>(diff.list_name.size()));
  out.append(diff.list_name);
  AppendLE64(&out, diff.from_version);
  AppendLE64(&out, diff.to_version);
  out.push_back(static_cast<char>(diff.layers.size()));
  for (size_t i = 0; i < diff.layers.size(); ++i) {
    const LayerDiff& d = diff.layers[i];
    const Streams& s = streams[i];
    out.push_back(static_cast<char>(d.layer));
    out.push_back(static_cast<char>(s.removed_k));
    out.push_back(static_cast<char>(s.added_k));
    out.push_back('\0');  // reserved
    AppendLE64(&out, d.universe);
    AppendLE64(&out, d.old_count);
    AppendLE64(&out, d.new_count);
    AppendLE64(&out, d.removed_positions.size());
    AppendLE64(&out, d.added.size());
    AppendLE64(&out, s.removed.size());
    AppendLE64(&out, s.added.size());
  }
  assert(out.size() == header_bytes);
  for (const Streams& s : streams) {
    out.append(s.removed);
    out.append(s.added);
  }
  const Sha256Digest digest = Sha256(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

Result<Diff> DecodeDiff(std::string_view bytes) {
  auto corrupt = [](const std::string& m) { return Status::Corruption("diff: " + m); };
  if (bytes.size() > kMaxDiffBytes) {
    return Status::ResourceExhausted("diff: " + U64(bytes.size()) + " bytes exceed the cap of " +
                                     U64(kMaxDiffBytes));
  }
  if (bytes.size() < kMinDiffBytes) {
    return corrupt(U64(bytes.size()) + " bytes, shorter than the smallest diff (" + U64(kMinDiffBytes) + ")");
  }
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (std::memcmp(p, kDiffMagic, sizeof(kDiffMagic)) != 0) return corrupt("bad magic (not a urlguard diff)");
  const uint32_t version = LoadLE32(p + kOffVersion);
  if (version != kDiffFormatVersion) {
    return corrupt("unsupported format version " + U64(version) + " (this build reads " +
                   U64(kDiffFormatVersion) + ")");
  }
  // Spec (diff-format.md): verify the trailer before interpreting any other field.
  const size_t body_size = bytes.size() - kDiffTrailerBytes;
  const Sha256Digest digest = Sha256(p, body_size);
  if (std::memcmp(digest.data(), p + body_size, kDiffTrailerBytes) != 0) {
    return corrupt("SHA-256 trailer mismatch (truncated or damaged file)");
  }

  const uint32_t header_length = LoadLE32(p + kOffHeaderLength);
  if (header_length > body_size) {
    return corrupt("header length " + U64(header_length) + " exceeds the " + U64(body_size) +
                   " bytes present");
  }
  const size_t name_length = p[kOffNameLength];
  if (name_length == 0 || name_length > kMaxListNameBytes) {
    return corrupt("list name length " + U64(name_length) + " not in 1.." + U64(kMaxListNameBytes));
  }
  // The fixed fields up to the layer count must lie inside the header.
  if (HeaderBytes(name_length, 0) > header_length) {
    return corrupt("header length " + U64(header_length) + " too small for a " + U64(name_length) +
                   "-byte name");
  }
  Diff diff;
  diff.list_name.assign(reinterpret_cast<const char*>(p + kOffName), name_length);
  if (!IsValidListName(diff.list_name)) return corrupt("list name has bytes outside [a-z0-9_-]");
  const uint8_t* after_name = p + kOffName + name_length;
  diff.from_version = LoadLE64(after_name);
  diff.to_version = LoadLE64(after_name + 8);
  if (diff.from_version >= diff.to_version) {
    return corrupt("from_version " + U64(diff.from_version) + " is not < to_version " + U64(diff.to_version));
  }
  const size_t layer_count = after_name[16];
  if (layer_count > kMaxDiffLayers) {
    return corrupt(U64(layer_count) + " layers, at most " + U64(kMaxDiffLayers));
  }
  if (header_length != HeaderBytes(name_length, layer_count)) {
    return corrupt("header length " + U64(header_length) + " != " +
                   U64(HeaderBytes(name_length, layer_count)) + " for " + U64(layer_count) + " layers");
  }

  // Pass 1: every record, every count and every stream length, before anything is allocated.
  struct Record {
    int removed_k, added_k;
    uint64_t removed_count, added_count;
    std::string_view removed_stream, added_stream;
  };
  Record records[kMaxDiffLayers];
  diff.layers.resize(layer_count);
  const uint8_t* rec = after_name + 17;
  size_t stream_offset = header_length;
  for (size_t i = 0; i < layer_count; ++i, rec += kDiffLayerRecordBytes) {
    LayerDiff& d = diff.layers[i];
    const std::string where = "layer record " + U64(i) + ": ";
    const uint8_t kind = rec[kRecKind];
    if (!IsValidLayerKind(kind)) return corrupt(where + "invalid layer kind " + U64(kind));
    if (i > 0 && kind <= static_cast<uint8_t>(diff.layers[i - 1].layer)) {
      return corrupt(where + "layer kinds not in ascending order or repeated");
    }
    d.layer = static_cast<LayerKind>(kind);
    Record& r = records[i];
    r.removed_k = rec[kRecRemovedK];
    r.added_k = rec[kRecAddedK];
    if (r.removed_k > kMaxRiceParameter || r.added_k > kMaxRiceParameter) {
      return corrupt(where + "rice parameter above " + U64(kMaxRiceParameter));
    }
    if (rec[kRecReserved] != 0) return corrupt(where + "reserved byte is not zero");
    d.universe = LoadLE64(rec + kRecUniverse);
    d.old_count = LoadLE64(rec + kRecOldCount);
    d.new_count = LoadLE64(rec + kRecNewCount);
    r.removed_count = LoadLE64(rec + kRecRemovedCount);
    r.added_count = LoadLE64(rec + kRecAddedCount);
    const Status counts = CheckLayerCounts(LayerKindName(d.layer), d.universe, d.old_count, d.new_count,
                                           r.removed_count, r.added_count);
    if (!counts.ok()) return counts.WithContext("diff");
    const uint64_t removed_bytes = LoadLE64(rec + kRecRemovedBytes);
    const uint64_t added_bytes = LoadLE64(rec + kRecAddedBytes);
    if (removed_bytes > body_size - stream_offset) {
      return corrupt(where + "removed stream of " + U64(removed_bytes) + " bytes runs past the end");
    }
    r.removed_stream = bytes.substr(stream_offset, removed_bytes);
    stream_offset += removed_bytes;
    if (added_bytes > body_size - stream_offset) {
      return corrupt(where + "added stream of " + U64(added_bytes) + " bytes runs past the end");
    }
    r.added_stream = bytes.substr(stream_offset, added_bytes);
    stream_offset += added_bytes;
    if ((r.removed_count == 0) != (removed_bytes == 0) || (r.added_count == 0) != (added_bytes == 0)) {
      return corrupt(where + "an empty sequence must have an empty stream and vice versa");
    }
  }
  if (stream_offset != body_size) {
    return corrupt(U64(body_size - stream_offset) +
                   " unexpected bytes between the last stream and the trailer");
  }

  // Pass 2: decode. RiceDecodeSorted checks each count against its stream's length before allocating.
  for (size_t i = 0; i < layer_count; ++i) {
    LayerDiff& d = diff.layers[i];
    const Record& r = records[i];
    const std::string where = std::string("diff: layer ") + LayerKindName(d.layer);
    URLGUARD_RETURN_IF_ERROR(
        RiceDecodeSorted(r.removed_stream, r.removed_k, r.removed_count, d.old_count, &d.removed_positions)
            .WithContext(where + ": removed positions"));
    URLGUARD_RETURN_IF_ERROR(RiceDecodeSorted(r.added_stream, r.added_k, r.added_count, d.universe, &d.added)
                                 .WithContext(where + ": added fingerprints"));
  }
  return diff;
}

Status ApplyLayerDiff(const std::vector<uint64_t>& old_sorted, const LayerDiff& d,
                      std::vector<uint64_t>* out) {
  assert(out != &old_sorted);
  out->clear();
  URLGUARD_RETURN_IF_ERROR(CheckLayerDiffShape(d, old_sorted.size()));
  const std::vector<uint64_t>& removed = d.removed_positions;
  const std::vector<uint64_t>& added = d.added;
  // The shape holds: positions distinct and in range, old - removed + added == d.new_count. What is left to
  // check needs the old fingerprints themselves.
  const uint64_t expected = d.new_count;
  if (!old_sorted.empty() && old_sorted.back() >= d.universe) {
    return diff_internal::MergeError(
        d, "the state holds fingerprint " + U64(old_sorted.back()) + " >= the universe " + U64(d.universe));
  }

  for (size_t i = 1; i < old_sorted.size(); ++i) {
    if (old_sorted[i] <= old_sorted[i - 1]) {
      return diff_internal::MergeError(d, "the state is not strictly increasing at index " + U64(i));
    }
  }

  // The kept entries form runs between removed positions; each run is copied in bulk, split only where
  // an added value falls inside it.
  out->reserve(expected);
  size_t a = 0;  // next added value
  auto emit_kept_run = [&](size_t from, size_t to) -> bool {
    const uint64_t* const base = old_sorted.data();
    while (from < to) {
      if (a == added.size()) {
        out->insert(out->end(), base + from, base + to);
        return true;
      }
      const uint64_t* stop = std::lower_bound(base + from, base + to, added[a]);
      out->insert(out->end(), base + from, stop);
      from = static_cast<size_t>(stop - base);
      if (from < to) {
        if (old_sorted[from] == added[a]) return false;
        out->push_back(added[a++]);
      }
    }
    return true;
  };
  size_t next = 0;  // first old index not yet handled
  for (size_t k = 0; k <= removed.size(); ++k) {
    const size_t run_end = k < removed.size() ? removed[k] : old_sorted.size();
    if (!emit_kept_run(next, run_end)) {
      const uint64_t dup = added[a];
      out->clear();
      return diff_internal::MergeError(d, "added fingerprint " + U64(dup) + " is already present");
    }
    next = run_end + 1;
  }
  while (a < added.size()) out->push_back(added[a++]);
  assert(out->size() == expected);
  return Status::Ok();
}

namespace diff_internal {
Status MergeError(const LayerDiff& d, const std::string& what) {
  return Status::Corruption(std::string("apply diff to layer ") + LayerKindName(d.layer) + ": " + what);
}
}  // namespace diff_internal

Status CheckLayerDiffShape(const LayerDiff& d, uint64_t old_count) {
  if (old_count != d.old_count) {
    return diff_internal::MergeError(
        d, "the state has " + U64(old_count) + " entries, the diff expects " + U64(d.old_count));
  }
  const std::vector<uint64_t>& removed = d.removed_positions;
  for (size_t i = 0; i < removed.size(); ++i) {
    if (removed[i] >= old_count) {
      return diff_internal::MergeError(d, "removed position " + U64(removed[i]) + " is out of range");
    }
    if (i > 0 && removed[i] <= removed[i - 1]) {
      return diff_internal::MergeError(d, "removed positions not strictly increasing at index " + U64(i));
    }
  }
  const std::vector<uint64_t>& added = d.added;
  for (size_t i = 0; i < added.size(); ++i) {
    if (added[i] >= d.universe) {
      return diff_internal::MergeError(
          d, "added fingerprint " + U64(added[i]) + " is >= the universe " + U64(d.universe));
    }
    if (i > 0 && added[i] <= added[i - 1]) {
      return diff_internal::MergeError(d, "added fingerprints not strictly increasing at index " + U64(i));
    }
  }
  const uint64_t expected = old_count - removed.size() + added.size();
  if (expected != d.new_count) {
    return diff_internal::MergeError(
        d, "the result would have " + U64(expected) + " entries, the diff says " + U64(d.new_count));
  }
  return Status::Ok();
}

LayerDiff MakeLayerDiff(LayerKind layer, uint64_t universe, const std::vector<uint64_t>& old_sorted,
                        const std::vector<uint64_t>& new_sorted) {
  assert(old_sorted.empty() || old_sorted.back() < universe);
  assert(new_sorted.empty() || new_sorted.back() < universe);
  LayerDiff d;
  d.layer = layer;
  d.universe = universe;
  d.old_count = old_sorted.size();
  d.new_count = new_sorted.size();
  size_t i = 0;
  size_t j = 0;
  while (i < old_sorted.size() || j < new_sorted.size()) {
    assert(i == 0 || i >= old_sorted.size() || old_sorted[i] > old_sorted[i - 1]);
    assert(j == 0 || j >= new_sorted.size() || new_sorted[j] > new_sorted[j - 1]);
    if (j == new_sorted.size() || (i < old_sorted.size() && old_sorted[i] < new_sorted[j])) {
      d.removed_positions.push_back(i++);
    } else if (i == old_sorted.size() || new_sorted[j] < old_sorted[i]) {
      d.added.push_back(new_sorted[j++]);
    } else {  // equal: kept
      ++i;
      ++j;
    }
  }
  return d;
}

// ---- Version 2: range diffs ------------------------------------------------------------------------------

namespace {

// Range layer record offsets (60 bytes each, docs/diff-format.md "Version 2: range diffs").
constexpr size_t kRangeRecKind = 0;
constexpr size_t kRangeRecAbsentK = 1;
constexpr size_t kRangeRecPresentK = 2;
constexpr size_t kRangeRecReserved = 3;
constexpr size_t kRangeRecUniverse = 4;
constexpr size_t kRangeRecNewCount = 12;
constexpr size_t kRangeRecAbsentCount = 20;
constexpr size_t kRangeRecPresentCount = 28;
constexpr size_t kRangeRecAbsentBytes = 36;
constexpr size_t kRangeRecPresentBytes = 44;
constexpr size_t kRangeRecReserved2 = 52;
static_assert(kRangeRecReserved2 + 8 == kDiffLayerRecordBytes);

// The count checks shared by ValidateRangeDiff() and DecodeRangeDiff(): caps are kResourceExhausted, the
// rest kCorruption.
Status CheckRangeLayerCounts(const char* layer_name, uint64_t universe, uint64_t new_count,
                             uint64_t absent_count, uint64_t present_count, uint64_t max_values) {
  const std::string where = std::string("layer ") + layer_name + ": ";
  if (absent_count > max_values) {
    return Status::ResourceExhausted(where + U64(absent_count) + " absent values exceed the cap of " +
                                     U64(max_values));
  }
  if (present_count > max_values) {
    return Status::ResourceExhausted(where + U64(present_count) + " present values exceed the cap of " +
                                     U64(max_values));
  }
  if (new_count > universe) {
    return Status::Corruption(where + "new count " + U64(new_count) + " exceeds the universe " + U64(universe));
  }
  if (present_count > new_count) {
    return Status::Corruption(where + U64(present_count) + " present values but a new count of only " +
                              U64(new_count));
  }
  if (absent_count > universe - present_count) {
    return Status::Corruption(where + U64(absent_count) + " absent + " + U64(present_count) +
                              " present values exceed the universe " + U64(universe));
  }
  return Status::Ok();
}

// True with *common = the smallest value in both strictly increasing sequences; false when they are disjoint.
bool FirstCommon(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b, uint64_t* common) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      *common = a[i];
      return true;
    }
  }
  return false;
}

}  // namespace

Status ValidateRangeDiff(const RangeDiff& diff, const RangeDiffCaps& caps) {
  if (!IsValidListName(diff.list_name)) {
    return Status::InvalidArgument("list name must be 1.." + U64(kMaxListNameBytes) +
                                   " bytes of [a-z0-9_-], got \"" + diff.list_name + "\"");
  }
  if (diff.from_version >= diff.to_version) {
    return Status::InvalidArgument("from_version " + U64(diff.from_version) + " must be < to_version " +
                                   U64(diff.to_version));
  }
  if (diff.layers.size() > kMaxDiffLayers) {
    return Status::InvalidArgument(U64(diff.layers.size()) + " layers, at most " + U64(kMaxDiffLayers));
  }
  for (size_t i = 0; i < diff.layers.size(); ++i) {
    const RangeLayerDiff& d = diff.layers[i];
    const uint8_t kind = static_cast<uint8_t>(d.layer);
    if (!IsValidLayerKind(kind)) return Status::InvalidArgument("invalid layer kind " + U64(kind));
    if (i > 0 && kind <= static_cast<uint8_t>(diff.layers[i - 1].layer)) {
      return Status::InvalidArgument("layers must be in ascending kind order, each at most once");
    }
    const Status s = CheckRangeLayerDiffShape(d, caps.max_values);
    if (!s.ok()) return Status::InvalidArgument(s.message());
  }
  return Status::Ok();
}

std::string EncodeRangeDiff(const RangeDiff& diff, const RangeDiffCaps& caps) {
  const Status valid = ValidateRangeDiff(diff, caps);
  if (!valid.ok()) {
    std::fprintf(stderr, "EncodeRangeDiff: invalid range diff: %s\n", valid.ToString().c_str());
    std::abort();
  }
  struct Streams {
    int absent_k, present_k;
    std::string absent, present;
  };
  std::vector<Streams> streams;
  streams.reserve(diff.layers.size());
  for (const RangeLayerDiff& d : diff.layers) {
    Streams s;
    s.absent_k = OptimalRiceParameter(d.absent);
    s.present_k = OptimalRiceParameter(d.present);
    s.absent = RiceEncodeSorted(d.absent, s.absent_k);
    s.present = RiceEncodeSorted(d.present, s.present_k);
    streams.push_back(std::move(s));
  }
  const size_t header_bytes = HeaderBytes(diff.list_name.size(), diff.layers.size());
  std::string out;
  out.append(kDiffMagic, sizeof(kDiffMagic));
  AppendLE32(&out, kRangeDiffFormatVersion);
  AppendLE32(&out, static_cast<uint32_t>(header_bytes));
  out.push_back(static_cast<char>(diff.list_name.size()));
  out.append(diff.list_name);
  AppendLE64(&out, diff.from_version);
  AppendLE64(&out, diff.to_version);
  out.push_back(static_cast<char>(diff.layers.size()));
  for (size_t i = 0; i < diff.layers.size(); ++i) {
    const RangeLayerDiff& d = diff.layers[i];
    const Streams& s = streams[i];
    out.push_back(static_cast<char>(d.layer));
    out.push_back(static_cast<char>(s.absent_k));
    out.push_back(static_cast<char>(s.present_k));
    out.push_back('\0');  // reserved
    AppendLE64(&out, d.universe);
    AppendLE64(&out, d.new_count);
    AppendLE64(&out, d.absent.size());
    AppendLE64(&out, d.present.size());
    AppendLE64(&out, s.absent.size());
    AppendLE64(&out, s.present.size());
    AppendLE64(&out, 0);  // reserved
  }
  assert(out.size() == header_bytes);
  for (const Streams& s : streams) {
    out.append(s.absent);
    out.append(s.present);
  }
  const Sha256Digest digest = Sha256(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

Result<RangeDiffStreams> ParseRangeDiff(std::string_view bytes, const RangeDiffCaps& caps) {
  auto corrupt = [](const std::string& m) { return Status::Corruption("range diff: " + m); };
  if (bytes.size() > caps.max_bytes) {
    return Status::ResourceExhausted("range diff: " + U64(bytes.size()) + " bytes exceed the cap of " +
                                     U64(caps.max_bytes));
  }
  if (bytes.size() < kMinDiffBytes) {
    return corrupt(U64(bytes.size()) + " bytes, shorter than the smallest diff (" + U64(kMinDiffBytes) + ")");
  }
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (std::memcmp(p, kDiffMagic, sizeof(kDiffMagic)) != 0) return corrupt("bad magic (not a urlguard diff)");
  const uint32_t version = LoadLE32(p + kOffVersion);
  if (version != kRangeDiffFormatVersion) {
    return corrupt("unsupported format version " + U64(version) + " (range diffs are version " +
                   U64(kRangeDiffFormatVersion) + ")");
  }
  // Spec (diff-format.md): verify the trailer before interpreting any other field.
  const size_t body_size = bytes.size() - kDiffTrailerBytes;
  const Sha256Digest digest = Sha256(p, body_size);
  if (std::memcmp(digest.data(), p + body_size, kDiffTrailerBytes) != 0) {
    return corrupt("SHA-256 trailer mismatch (truncated or damaged file)");
  }
  const uint32_t header_length = LoadLE32(p + kOffHeaderLength);
  if (header_length > body_size) {
    return corrupt("header length " + U64(header_length) + " exceeds the " + U64(body_size) +
                   " bytes present");
  }
  const size_t name_length = p[kOffNameLength];
  if (name_length == 0 || name_length > kMaxListNameBytes) {
    return corrupt("list name length " + U64(name_length) + " not in 1.." + U64(kMaxListNameBytes));
  }
  if (HeaderBytes(name_length, 0) > header_length) {
    return corrupt("header length " + U64(header_length) + " too small for a " + U64(name_length) +
                   "-byte name");
  }
  RangeDiffStreams diff;
  diff.list_name.assign(reinterpret_cast<const char*>(p + kOffName), name_length);
  if (!IsValidListName(diff.list_name)) return corrupt("list name has bytes outside [a-z0-9_-]");
  const uint8_t* after_name = p + kOffName + name_length;
  diff.from_version = LoadLE64(after_name);
  diff.to_version = LoadLE64(after_name + 8);
  if (diff.from_version >= diff.to_version) {
    return corrupt("from_version " + U64(diff.from_version) + " is not < to_version " + U64(diff.to_version));
  }
  const size_t layer_count = after_name[16];
  if (layer_count > kMaxDiffLayers) return corrupt(U64(layer_count) + " layers, at most " + U64(kMaxDiffLayers));
  if (header_length != HeaderBytes(name_length, layer_count)) {
    return corrupt("header length " + U64(header_length) + " != " + U64(HeaderBytes(name_length, layer_count)) +
                   " for " + U64(layer_count) + " layers");
  }

  // Pass 1: every record, count and stream length (nothing here grows with the diff).
  diff.layers.resize(layer_count);
  const uint8_t* rec = after_name + 17;
  size_t stream_offset = header_length;
  for (size_t i = 0; i < layer_count; ++i, rec += kDiffLayerRecordBytes) {
    RangeLayerStreams& d = diff.layers[i];
    const std::string where = "layer record " + U64(i) + ": ";
    const uint8_t kind = rec[kRangeRecKind];
    if (!IsValidLayerKind(kind)) return corrupt(where + "invalid layer kind " + U64(kind));
    if (i > 0 && kind <= static_cast<uint8_t>(diff.layers[i - 1].layer)) {
      return corrupt(where + "layer kinds not in ascending order or repeated");
    }
    d.layer = static_cast<LayerKind>(kind);
    d.absent_k = rec[kRangeRecAbsentK];
    d.present_k = rec[kRangeRecPresentK];
    if (d.absent_k > kMaxRiceParameter || d.present_k > kMaxRiceParameter) {
      return corrupt(where + "rice parameter above " + U64(kMaxRiceParameter));
    }
    if (rec[kRangeRecReserved] != 0 || LoadLE64(rec + kRangeRecReserved2) != 0) {
      return corrupt(where + "reserved field is not zero");
    }
    d.universe = LoadLE64(rec + kRangeRecUniverse);
    d.new_count = LoadLE64(rec + kRangeRecNewCount);
    d.absent_count = LoadLE64(rec + kRangeRecAbsentCount);
    d.present_count = LoadLE64(rec + kRangeRecPresentCount);
    const Status counts =
        CheckRangeLayerCounts(LayerKindName(d.layer), d.universe, d.new_count, d.absent_count, d.present_count,
                              caps.max_values);
    if (!counts.ok()) return counts.WithContext("range diff");
    const uint64_t absent_bytes = LoadLE64(rec + kRangeRecAbsentBytes);
    const uint64_t present_bytes = LoadLE64(rec + kRangeRecPresentBytes);
    if (absent_bytes > body_size - stream_offset) {
      return corrupt(where + "absent stream of " + U64(absent_bytes) + " bytes runs past the end");
    }
    d.absent_stream = bytes.substr(stream_offset, absent_bytes);
    stream_offset += absent_bytes;
    if (present_bytes > body_size - stream_offset) {
      return corrupt(where + "present stream of " + U64(present_bytes) + " bytes runs past the end");
    }
    d.present_stream = bytes.substr(stream_offset, present_bytes);
    stream_offset += present_bytes;
    if ((d.absent_count == 0) != (absent_bytes == 0) || (d.present_count == 0) != (present_bytes == 0)) {
      return corrupt(where + "an empty sequence must have an empty stream and vice versa");
    }
  }
  if (stream_offset != body_size) {
    return corrupt(U64(body_size - stream_offset) + " unexpected bytes between the last stream and the trailer");
  }

  // Pass 2: each layer's streams decoded in step (RiceSortedReader: each count against its stream's length first,
  // then the values' bounds and the streams' exact ends), absent against present for their disjointness.
  for (const RangeLayerStreams& d : diff.layers) {
    const std::string where = std::string("range diff: layer ") + LayerKindName(d.layer);
    RiceSortedReader absent = d.absent();
    RiceSortedReader present = d.present();
    uint64_t a = 0;
    uint64_t b = 0;
    bool has_a = absent.Next(&a);
    bool has_b = present.Next(&b);
    while (has_a && has_b) {
      if (a < b) {
        has_a = absent.Next(&a);
      } else if (b < a) {
        has_b = present.Next(&b);
      } else {
        return Status::Corruption(where + ": fingerprint " + U64(a) + " is both absent and present");
      }
    }
    while (has_a) has_a = absent.Next(&a);
    while (has_b) has_b = present.Next(&b);
    if (!absent.status().ok()) return absent.status().WithContext(where + ": absent fingerprints");
    if (!present.status().ok()) return present.status().WithContext(where + ": present fingerprints");
  }
  return diff;
}

Result<RangeDiff> DecodeRangeDiff(std::string_view bytes, const RangeDiffCaps& caps) {
  URLGUARD_ASSIGN_OR_RETURN(RangeDiffStreams parsed, ParseRangeDiff(bytes, caps));
  RangeDiff diff;
  diff.list_name = std::move(parsed.list_name);
  diff.from_version = parsed.from_version;
  diff.to_version = parsed.to_version;
  diff.layers.resize(parsed.layers.size());
  for (size_t i = 0; i < parsed.layers.size(); ++i) {
    const RangeLayerStreams& r = parsed.layers[i];
    RangeLayerDiff& d = diff.layers[i];
    d.layer = r.layer;
    d.universe = r.universe;
    d.new_count = r.new_count;
    // Checked by the parse: these decode.
    URLGUARD_RETURN_IF_ERROR(RiceDecodeSorted(r.absent_stream, r.absent_k, r.absent_count, r.universe, &d.absent));
    URLGUARD_RETURN_IF_ERROR(
        RiceDecodeSorted(r.present_stream, r.present_k, r.present_count, r.universe, &d.present));
  }
  return diff;
}

namespace diff_internal {
Status RangeMergeError(LayerKind layer, const std::string& what) {
  return Status::Corruption(std::string("apply range diff to layer ") + LayerKindName(layer) + ": " + what);
}
}  // namespace diff_internal

Status CheckRangeLayerDiffShape(const RangeLayerDiff& d, uint64_t max_values) {
  const Status counts = CheckRangeLayerCounts(LayerKindName(d.layer), d.universe, d.new_count, d.absent.size(),
                                              d.present.size(), max_values);
  if (!counts.ok()) return diff_internal::RangeMergeError(d.layer, counts.message());
  Status s = CheckSequence("absent", d.absent, d.universe);
  if (s.ok()) s = CheckSequence("present", d.present, d.universe);
  if (!s.ok()) return diff_internal::RangeMergeError(d.layer, s.message());
  uint64_t common;
  if (FirstCommon(d.absent, d.present, &common)) {
    return diff_internal::RangeMergeError(d.layer, "fingerprint " + U64(common) + " is both absent and present");
  }
  return Status::Ok();
}

Status ApplyRangeLayerDiff(const std::vector<uint64_t>& old_sorted, const RangeLayerDiff& d,
                           std::vector<uint64_t>* out) {
  assert(out != &old_sorted);
  out->clear();
  size_t i = 0;
  Status s = MergeRangeLayerDiff(
      d,
      [&](uint64_t* v) {
        if (i == old_sorted.size()) return false;
        *v = old_sorted[i++];
        return true;
      },
      [&](uint64_t v) {
        out->push_back(v);
        return Status::Ok();
      });
  if (!s.ok()) out->clear();
  return s;
}

RangeLayerDiff MakeRangeLayerDiff(LayerKind layer, uint64_t universe, const std::vector<uint64_t>& touched,
                                  const std::vector<uint64_t>& new_sorted) {
  assert(touched.empty() || touched.back() < universe);
  assert(new_sorted.empty() || new_sorted.back() < universe);
  RangeLayerDiff d;
  d.layer = layer;
  d.universe = universe;
  d.new_count = new_sorted.size();
  size_t j = 0;
  for (size_t i = 0; i < touched.size(); ++i) {
    assert(i == 0 || touched[i] > touched[i - 1]);
    while (j < new_sorted.size() && new_sorted[j] < touched[i]) ++j;
    if (j < new_sorted.size() && new_sorted[j] == touched[i]) {
      d.present.push_back(touched[i]);
    } else {
      d.absent.push_back(touched[i]);
    }
  }
  return d;
}

Result<RangeDiff> ComposeRangeDiffs(const RangeDiff& first, const RangeDiff& second) {
  if (first.list_name != second.list_name) return Status::InvalidArgument("compose: the diffs are of different lists");
  if (first.to_version != second.from_version) {
    return Status::InvalidArgument("compose: the first diff ends at " + U64(first.to_version) +
                                   ", the second starts at " + U64(second.from_version));
  }
  RangeDiff out;
  out.list_name = first.list_name;
  out.from_version = first.from_version;
  out.to_version = second.to_version;
  // Values of `a` not in `b` (both strictly increasing).
  auto minus = [](const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
    std::vector<uint64_t> r;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(r));
    return r;
  };
  auto unite = [](const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
    std::vector<uint64_t> r;
    r.reserve(a.size() + b.size());
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(r));
    return r;
  };
  for (int k = 0; k < kLayerKindCount; ++k) {
    const LayerKind kind = static_cast<LayerKind>(k);
    const RangeLayerDiff* f = nullptr;
    const RangeLayerDiff* g = nullptr;
    for (const RangeLayerDiff& x : first.layers) {
      if (x.layer == kind) f = &x;
    }
    for (const RangeLayerDiff& x : second.layers) {
      if (x.layer == kind) g = &x;
    }
    if (f == nullptr && g == nullptr) continue;
    if (f == nullptr || g == nullptr) {
      out.layers.push_back(f != nullptr ? *f : *g);
      continue;
    }
    if (f->universe != g->universe) {
      return Status::InvalidArgument(std::string("compose: layer ") + LayerKindName(kind) +
                                     " has different universes in the two diffs");
    }
    RangeLayerDiff l;
    l.layer = kind;
    l.universe = g->universe;
    l.new_count = g->new_count;
    l.present = unite(g->present, minus(f->present, g->absent));
    l.absent = unite(g->absent, minus(f->absent, g->present));
    out.layers.push_back(std::move(l));
  }
  return out;
}

}  // namespace urlguard
