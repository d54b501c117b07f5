// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.

#include "publish/catchup.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "core/byte_io.h"
#include "core/list_name.h"
#include "core/sha256.h"

namespace urlguard {

namespace {

// Fixed bytes of the file around the name and the two arrays: magic, format, name length; checkpoint,
// version, the sums, the touched-count count; the entry count; the trailer.
constexpr size_t kEpochFixedBytes = 8 + 4 + 1 + 8 + 8 + kLayerKindCount * 16 + 8 + 8 + 32;

Status Corrupt(const std::string& what) { return Status::Corruption("epoch map: " + what); }

}  // namespace

std::vector<uint64_t> PlanAnchors(uint64_t lo, std::span<const uint64_t> counts, double ratio) {
  std::vector<uint64_t> anchors;
  if (counts.empty()) return anchors;
  const uint64_t v = lo + counts.size();
  // suffix[i] = t(lo + i) = sum of counts of versions (lo + i, v].
  std::vector<double> suffix(counts.size() + 1, 0.0);
  for (size_t i = counts.size(); i-- > 0;) suffix[i] = suffix[i + 1] + static_cast<double>(counts[i]);
  auto t = [&](uint64_t a) { return suffix[a - lo]; };
  uint64_t a = v - 1;
  anchors.push_back(a);
  while (a > lo) {
    // Clients in [next, a - 1] take `next`: its waste over the worst of them (F = a - 1, the fewest changes
    // missed) stays within the ratio. t falls as A grows, so the smallest such A is found from below.
    const double limit = ratio * t(a - 1);
    uint64_t next = a - 1;
    uint64_t low = lo;
    uint64_t high = a - 1;  // t(high) <= limit holds
    while (low < high) {
      uint64_t mid = low + (high - low) / 2;
      if (t(mid) <= limit) {
        high = mid;
      } else {
        low = mid + 1;
      }
    }
    next = low;
    anchors.push_back(next);
    a = next;
  }
  std::reverse(anchors.begin(), anchors.end());
  return anchors;
}

Status EpochMap::Apply(uint64_t version, std::span<const TouchedFingerprint> touched) {
  if (version != version_ + 1) {
    return Status::InvalidArgument("epoch map at version " + std::to_string(version_) + " cannot take version " +
                                   std::to_string(version));
  }
  if (touched_counts_.size() >= kMaxEpochVersions) return Status::ResourceExhausted("epoch map: too many versions");
  for (size_t i = 1; i < touched.size(); ++i) {
    const TouchedFingerprint& p = touched[i - 1];
    const TouchedFingerprint& q = touched[i];
    if (p.layer > q.layer || (p.layer == q.layer && p.fingerprint >= q.fingerprint)) {
      return Status::InvalidArgument("epoch map: touched fingerprints not sorted and unique");
    }
  }
  // First a read-only pass: check every `before` against the map, move the sums, count the new fingerprints.
  // Only then is the map changed, so a refused version leaves it as it was.
  std::array<LayerSetSum, kLayerKindCount> sums = sums_;
  size_t fresh = 0;
  size_t i = 0;
  for (const TouchedFingerprint& f : touched) {
    i = static_cast<size_t>(std::lower_bound(entries_.begin() + static_cast<ptrdiff_t>(i), entries_.end(), f,
                                             [](const Packed& e, const TouchedFingerprint& t) {
                                               return Less(e, t.layer, t.fingerprint);
                                             }) -
                            entries_.begin());
    bool known = i < entries_.size() && Same(entries_[i], f.layer, f.fingerprint);
    if (known && entries_[i].present() != f.before) {
      return Status::InvalidArgument("epoch map: fingerprint " + std::to_string(f.fingerprint) + " of layer " +
                                     std::string(LayerKindName(f.layer)) + " disagrees with the map");
    }
    if (!known) ++fresh;
    if (f.before != f.after) {
      LayerSetSum& s = sums[static_cast<int>(f.layer)];
      uint64_t h = SetElementHash(f.layer, f.fingerprint);
      if (f.after) {
        ++s.count;
        s.sum += h;
      } else {
        if (s.count == 0) return Status::InvalidArgument("epoch map: removal from an empty layer");
        --s.count;
        s.sum -= h;
      }
    }
  }
  // Then the merge, from the back, in place: both are sorted, and the map's vector usually has the room
  // (Decode's `room`), so the version costs no second copy of the map (fresh pages to fault in were a third
  // of the epoch step's time at 1 M touched fingerprints).
  const size_t n = entries_.size();
  entries_.resize(n + fresh);
  size_t old_end = n;        // entries_[0, old_end) are the map's not yet placed
  size_t write = n + fresh;  // entries_[write, n + fresh) are placed
  for (size_t j = touched.size(); j-- > 0;) {
    const TouchedFingerprint& f = touched[j];
    while (old_end > 0 && !Less(entries_[old_end - 1], f.layer, f.fingerprint) &&
           !Same(entries_[old_end - 1], f.layer, f.fingerprint)) {
      entries_[--write] = entries_[--old_end];
    }
    if (old_end > 0 && Same(entries_[old_end - 1], f.layer, f.fingerprint)) {
      --old_end;  // replaced by the version's record
    }
    entries_[--write] = Pack(f.fingerprint, version, f.layer, f.after);
  }
  assert(write == old_end);  // the map's entries before every touched one are already in place
  sums_ = sums;
  touched_counts_.push_back(touched.size());
  version_ = version;
  return Status::Ok();
}

void EpochMap::Rebase(uint64_t checkpoint) {
  checkpoint = std::clamp(checkpoint, checkpoint_, version_);
  // Entries last touched at or before the new checkpoint go; the others' distances shrink by the step.
  const uint64_t step = checkpoint - checkpoint_;
  if (step != 0) {
    size_t kept = 0;
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].offset() < step) continue;
      Packed e = entries_[i];
      e.word -= static_cast<uint32_t>(step << 3);
      entries_[kept++] = e;
    }
    entries_.resize(kept);
  }
  touched_counts_.erase(touched_counts_.begin(), touched_counts_.begin() + static_cast<ptrdiff_t>(checkpoint - checkpoint_));
  checkpoint_ = checkpoint;
}

Result<EpochMap> EpochMap::Concatenate(const EpochMap& older, const EpochMap& newer) {
  if (older.version_ != newer.checkpoint_) {
    return Status::InvalidArgument("epoch maps do not meet: " + std::to_string(older.version_) + " vs " +
                                   std::to_string(newer.checkpoint_));
  }
  if (older.touched_counts_.size() + newer.touched_counts_.size() > kMaxEpochVersions ||
      older.entries_.size() + newer.entries_.size() > kMaxEpochMapEntries) {
    return Status::ResourceExhausted("epoch map: archive too large");
  }
  EpochMap m;
  m.checkpoint_ = older.checkpoint_;
  m.version_ = newer.version_;
  m.sums_ = newer.sums_;
  m.touched_counts_ = older.touched_counts_;
  m.touched_counts_.insert(m.touched_counts_.end(), newer.touched_counts_.begin(), newer.touched_counts_.end());
  m.entries_.reserve(older.entries_.size() + newer.entries_.size());
  // newer's distances are from its checkpoint, older's version: the merged map's are from older's checkpoint.
  const uint32_t shift = static_cast<uint32_t>((newer.checkpoint_ - older.checkpoint_) << 3);
  size_t i = 0;
  for (Packed e : newer.entries_) {
    while (i < older.entries_.size() && Less(older.entries_[i], e.layer(), e.fingerprint())) {
      m.entries_.push_back(older.entries_[i++]);
    }
    if (i < older.entries_.size() && Same(older.entries_[i], e.layer(), e.fingerprint())) ++i;
    e.word += shift;
    m.entries_.push_back(e);
  }
  while (i < older.entries_.size()) m.entries_.push_back(older.entries_[i++]);
  return m;
}

Status EpochMap::Append(const EpochMap& newer, uint64_t max_touched) {
  if (version_ != newer.checkpoint_) {
    return Status::InvalidArgument("epoch maps do not meet: " + std::to_string(version_) + " vs " +
                                   std::to_string(newer.checkpoint_));
  }
  if (touched_counts_.size() + newer.touched_counts_.size() > kMaxEpochVersions ||
      entries_.size() + newer.entries_.size() > kMaxEpochMapEntries) {
    return Status::ResourceExhausted("epoch map: archive too large");
  }
  // The window's start over both maps, as TrimToTouched computes it.
  uint64_t from = newer.version_;
  uint64_t touched = 0;
  while (from > checkpoint_) {
    const uint64_t c = from > version_ ? newer.touched_counts_[from - version_ - 1]
                                       : touched_counts_[from - checkpoint_ - 1];
    if (touched + c > max_touched) break;
    touched += c;
    --from;
  }
  Rebase(std::min(from, version_));  // drop what falls outside before growing
  // newer's distances are from its checkpoint, this map's version: here they are from this map's checkpoint.
  const uint32_t shift = static_cast<uint32_t>((newer.checkpoint_ - checkpoint_) << 3);
  // Merge from the back: newer's entries replace older ones of the same fingerprint; the gap duplicates leave
  // ends up at the front and is closed once.
  const size_t n_old = entries_.size();
  const size_t n_new = newer.entries_.size();
  entries_.resize(n_old + n_new);
  size_t i = n_old;
  size_t j = n_new;
  size_t k = n_old + n_new;
  while (j > 0) {
    Packed e = newer.entries_[j - 1];
    if (i > 0 && !Less(entries_[i - 1], e.layer(), e.fingerprint())) {
      if (Same(entries_[i - 1], e.layer(), e.fingerprint())) {
        --i;  // replaced by newer's entry
      } else {
        entries_[--k] = entries_[--i];
        continue;
      }
    }
    e.word += shift;
    entries_[--k] = e;
    --j;
  }
  // entries_[0, i) are in place; entries_[k, end) are merged; close the gap [i, k).
  if (k > i) entries_.erase(entries_.begin() + static_cast<ptrdiff_t>(i), entries_.begin() + static_cast<ptrdiff_t>(k));
  touched_counts_.insert(touched_counts_.end(), newer.touched_counts_.begin(), newer.touched_counts_.end());
  version_ = newer.version_;
  sums_ = newer.sums_;
  Rebase(from);  // when the window starts inside newer
  return Status::Ok();
}

void EpochMap::TrimToTouched(uint64_t max_touched) {
  uint64_t from = version_;
  uint64_t touched = 0;
  while (from > checkpoint_) {
    const uint64_t c = touched_counts_[from - checkpoint_ - 1];
    if (touched + c > max_touched) break;
    touched += c;
    --from;
  }
  Rebase(from);
}

RangeDiff EpochMap::Diff(const RangeDiffTarget& target, uint64_t from) const {
  RangeDiff d;
  d.list_name = target.list;
  d.from_version = from;
  d.to_version = target.version;
  for (const Packed& e : entries_) {
    if (LastVersion(e) <= from) continue;
    const LayerKind layer = e.layer();
    if (d.layers.empty() || d.layers.back().layer != layer) {
      RangeLayerDiff l;
      l.layer = layer;
      l.universe = target.universe[static_cast<int>(layer)];
      l.new_count = target.count[static_cast<int>(layer)];
      d.layers.push_back(std::move(l));
    }
    (e.present() ? d.layers.back().present : d.layers.back().absent).push_back(e.fingerprint());
  }
  return d;
}

std::vector<RangeDiff> EpochMap::Diffs(const RangeDiffTarget& target, std::span<const uint64_t> froms) const {
  const size_t n = froms.size();
  for (size_t i = 0; i < n; ++i) {
    assert(froms[i] >= checkpoint_ && froms[i] < version_);
    assert(i == 0 || froms[i - 1] < froms[i]);
  }
  // Histogram of the entries by (layer, presence, last version), then per range the suffix over the versions
  // after its start: the exact length of every output vector before anything is pushed.
  const size_t versions = version_ - checkpoint_;
  std::vector<uint64_t> hist(size_t{kLayerKindCount} * 2 * versions, 0);
  auto slot = [versions](int layer, bool present) {
    return (static_cast<size_t>(layer) * 2 + (present ? 1 : 0)) * versions;
  };
  for (const Packed& e : entries_) ++hist[slot(static_cast<int>(e.layer()), e.present()) + e.offset()];
  std::vector<RangeDiff> out(n);
  // layer_index[i][k]: position of layer k in out[i].layers, or -1.
  std::vector<std::array<int, kLayerKindCount>> layer_index(n);
  for (size_t i = 0; i < n; ++i) {
    RangeDiff& d = out[i];
    d.list_name = target.list;
    d.from_version = froms[i];
    d.to_version = target.version;
    layer_index[i].fill(-1);
    for (int k = 0; k < kLayerKindCount; ++k) {
      uint64_t count[2] = {0, 0};
      for (int p = 0; p < 2; ++p) {
        const uint64_t* h = hist.data() + slot(k, p == 1);
        for (size_t v = froms[i] - checkpoint_; v < versions; ++v) count[p] += h[v];
      }
      if (count[0] + count[1] == 0) continue;
      RangeLayerDiff l;
      l.layer = static_cast<LayerKind>(k);
      l.universe = target.universe[k];
      l.new_count = target.count[k];
      l.absent.reserve(count[0]);
      l.present.reserve(count[1]);
      layer_index[i][k] = static_cast<int>(d.layers.size());
      d.layers.push_back(std::move(l));
    }
  }
  // Entries ascend by (layer, fingerprint), so every output vector receives its values in ascending order.
  // The ranges an entry belongs to are those starting before its last version: a prefix of `froms`.
  for (const Packed& e : entries_) {
    const int k = static_cast<int>(e.layer());
    const uint64_t last = LastVersion(e);
    for (size_t i = 0; i < n && froms[i] < last; ++i) {
      RangeLayerDiff& l = out[i].layers[static_cast<size_t>(layer_index[i][k])];
      (e.present() ? l.present : l.absent).push_back(e.fingerprint());
    }
  }
  return out;
}

std::vector<EpochEntry> EpochMap::entries() const {
  std::vector<EpochEntry> out;
  out.reserve(entries_.size());
  for (const Packed& e : entries_) out.push_back({e.fingerprint(), LastVersion(e), e.layer(), e.present()});
  return out;
}

std::vector<uint64_t> EpochMap::Anchors(double ratio) const { return PlanAnchors(checkpoint_, touched_counts_, ratio); }

uint64_t EpochMap::TouchedSince(uint64_t from) const {
  uint64_t n = 0;
  for (uint64_t v = std::max(from, checkpoint_) + 1; v <= version_; ++v) n += touched_counts_[v - checkpoint_ - 1];
  return n;
}

std::string EpochMap::Encode(std::string_view list) const {
  std::string out;
  out.reserve(kEpochFixedBytes + list.size() + 8 * touched_counts_.size() + kEpochMapRecordBytes * entries_.size());
  Status s = EncodeTo(list, [&out](std::string_view piece) {
    out.append(piece);
    return Status::Ok();
  });
  assert(s.ok());
  (void)s;
  return out;
}

Status EpochMap::EncodeTo(std::string_view list, const std::function<Status(std::string_view)>& out) const {
  Sha256Hasher hasher;
  std::string buf;
  buf.reserve(kEpochEncodePieceBytes + kEpochMapRecordBytes);
  auto flush = [&]() -> Status {
    hasher.Update(buf);
    Status s = out(buf);
    buf.clear();
    return s;
  };
  buf.append(kEpochMapMagic, sizeof(kEpochMapMagic));
  AppendLE32(&buf, kEpochMapFormatVersion);
  buf.push_back(static_cast<char>(list.size()));
  buf.append(list);
  AppendLE64(&buf, checkpoint_);
  AppendLE64(&buf, version_);
  for (const LayerSetSum& s : sums_) {
    AppendLE64(&buf, s.count);
    AppendLE64(&buf, s.sum);
  }
  AppendLE64(&buf, touched_counts_.size());
  for (uint64_t c : touched_counts_) {
    AppendLE64(&buf, c);
    if (buf.size() >= kEpochEncodePieceBytes) URLGUARD_RETURN_IF_ERROR(flush());
  }
  AppendLE64(&buf, entries_.size());
  for (const Packed& e : entries_) {
    AppendLE64(&buf, e.fingerprint());
    AppendLE64(&buf, LastVersion(e));
    buf.push_back(static_cast<char>(e.layer()));
    buf.push_back(static_cast<char>(e.present() ? 1 : 0));
    buf.append(6, '\0');
    if (buf.size() >= kEpochEncodePieceBytes) URLGUARD_RETURN_IF_ERROR(flush());
  }
  if (!buf.empty()) URLGUARD_RETURN_IF_ERROR(flush());
  const Sha256Digest sum = hasher.Finish();
  return out(std::string_view(reinterpret_cast<const char*>(sum.data()), sum.size()));
}

Result<EpochMap> EpochMap::Decode(std::string_view bytes, std::string_view list, size_t room,
                                  const std::function<void(size_t offset, size_t length)>& done_with) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t size = bytes.size();
  if (size < kEpochFixedBytes + 1) return Corrupt("file too short");
  if (std::memcmp(p, kEpochMapMagic, sizeof(kEpochMapMagic)) != 0) return Corrupt("bad magic");
  if (LoadLE32(p + 8) != kEpochMapFormatVersion) return Corrupt("unsupported format version");
  {
    Sha256Hasher hasher;
    for (size_t at = 0; at < size - 32;) {
      const size_t n = std::min(kEpochDecodePieceBytes, size - 32 - at);
      hasher.Update(p + at, n);
      if (done_with) done_with(at, n);
      at += n;
    }
    const Sha256Digest want = hasher.Finish();
    if (std::memcmp(want.data(), p + size - 32, 32) != 0) return Corrupt("checksum mismatch");
  }
  const size_t name_length = p[12];
  if (size < kEpochFixedBytes + name_length) return Corrupt("file too short for its name");
  std::string_view name(bytes.data() + 13, name_length);
  if (name != list || !IsValidListName(name)) return Corrupt("list name is not '" + std::string(list) + "'");
  size_t at = 13 + name_length;
  EpochMap m;
  m.checkpoint_ = LoadLE64(p + at);
  m.version_ = LoadLE64(p + at + 8);
  at += 16;
  for (LayerSetSum& s : m.sums_) {
    s.count = LoadLE64(p + at);
    s.sum = LoadLE64(p + at + 8);
    at += 16;
  }
  const uint64_t versions = LoadLE64(p + at);
  at += 8;
  if (m.version_ < m.checkpoint_ || versions != m.version_ - m.checkpoint_ || versions > kMaxEpochVersions) {
    return Corrupt("version range does not match its touched counts");
  }
  const size_t rest = size - 32 - at;  // bytes for the counts, the entry count and the records
  if (rest < 8 || (rest - 8) / 8 < versions) return Corrupt("file too short for its touched counts");
  m.touched_counts_.resize(versions);
  for (uint64_t& c : m.touched_counts_) {
    c = LoadLE64(p + at);
    at += 8;
  }
  const uint64_t count = LoadLE64(p + at);
  at += 8;
  if (count > kMaxEpochMapEntries || count * kEpochMapRecordBytes != size - 32 - at) {
    return Corrupt("entry count does not match the file size");
  }
  m.entries_.reserve(count + std::min<uint64_t>(room, kMaxEpochMapEntries));
  m.entries_.resize(count);
  size_t done = 0;  // bytes [0, done) told to done_with
  for (uint64_t i = 0; i < count; ++i, at += kEpochMapRecordBytes) {
    if (done_with && at - done >= kEpochDecodePieceBytes) {
      done_with(done, at - done);
      done = at;
    }
    const uint64_t fingerprint = LoadLE64(p + at);
    const uint64_t last_version = LoadLE64(p + at + 8);
    const uint8_t layer = p[at + 16];
    const uint8_t present = p[at + 17];
    if (layer >= kLayerKindCount || present > 1) return Corrupt("bad layer or presence in entry " + std::to_string(i));
    for (int z = 18; z < 24; ++z) {
      if (p[at + z] != 0) return Corrupt("reserved bytes not zero in entry " + std::to_string(i));
    }
    if (last_version <= m.checkpoint_ || last_version > m.version_) {
      return Corrupt("entry " + std::to_string(i) + " last touched outside the epoch");
    }
    if (i > 0 && !Less(m.entries_[i - 1], static_cast<LayerKind>(layer), fingerprint)) {
      return Corrupt("entries not sorted and unique at " + std::to_string(i));
    }
    m.entries_[i] = m.Pack(fingerprint, last_version, static_cast<LayerKind>(layer), present == 1);
  }
  if (done_with && size > done) done_with(done, size - done);
  return m;
}

}  // namespace urlguard
