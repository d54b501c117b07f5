// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/lsm_state.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "core/list_name.h"
#include "core/sha256.h"
#include "format/repository_files.h"
#include "platform/fault_point.h"
#include "publish/state_file.h"

namespace urlguard {
namespace {

// PrefetchLookups asks for base pages in units of this (the kernel's page size on every platform we build for;
// a larger page only makes the requests coarser).
constexpr size_t kPrefetchPageBytes = 4096;
// PrefetchLookups reads ahead unless this share of kResidentSamples pages of the base is in memory already.
constexpr double kPrefetchBelowResident = 0.9;
constexpr size_t kResidentSamples = 256;

constexpr char kStateMagic[8] = {'U', 'G', 'S', 'T', 'A', 'T', 'E', '\n'};
constexpr size_t kFooterBytes = 8 + 32;
// A full walk hashes and hands the base's pages back this many bytes at a time (a 100 M base is 4.8 GB): small enough
// that the walk adds little to the publisher's resident set, large enough that madvise calls do not count.
constexpr size_t kReleaseBytes = size_t{8} << 20;

// (layer, key, sha) of a raw 48-byte state record against a probe; sha null compares as the smallest digest.
int CompareRaw(const uint8_t* rec, uint8_t layer, uint64_t key, const uint8_t* sha256) {
  if (rec[40] != layer) return rec[40] < layer ? -1 : 1;
  uint64_t k;
  std::memcpy(&k, rec, 8);
  if (k != key) return k < key ? -1 : 1;
  if (sha256 == nullptr) return 1;
  return std::memcmp(rec + 8, sha256, 32);
}

int CompareProbe(const KeyRecord& r, uint8_t layer, uint64_t key, const uint8_t* sha256) {
  if (r.layer != layer) return r.layer < layer ? -1 : 1;
  if (r.key != key) return r.key < key ? -1 : 1;
  if (sha256 == nullptr) return 1;
  return std::memcmp(r.sha256, sha256, 32);
}

struct Listing {
  std::set<uint64_t> bases;
  std::set<uint64_t> deltas;
  std::vector<std::string> strays;  // *.state.tmp, *.delta.tmp
};

Result<Listing> ListStateFiles(Env* env, const std::string& dir) {
  URLGUARD_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListDir(dir));
  Listing l;
  for (const std::string& n : names) {
    if (auto v = ParseStateFileName(n)) {
      l.bases.insert(*v);
    } else if (auto d = ParseStateDeltaFileName(n)) {
      l.deltas.insert(*d);
    } else if (n.size() > 4 && n.compare(n.size() - 4, 4, ".tmp") == 0) {
      std::string_view stem(n.data(), n.size() - 4);
      if (ParseStateFileName(stem) || ParseStateDeltaFileName(stem)) l.strays.push_back(n);
    }
  }
  return l;
}

// The newest base <= version with every delta in (base, version]; nullopt when none. `missing` names the first
// delta the newest base lacks (for the error message).
std::optional<uint64_t> ChooseBase(const Listing& l, uint64_t version, uint64_t* missing) {
  *missing = 0;
  for (auto it = l.bases.rbegin(); it != l.bases.rend(); ++it) {
    const uint64_t b = *it;
    if (b > version) continue;
    // Deltas are a set of distinct versions: (b, version] is complete when it holds version - b of them.
    auto lo = l.deltas.upper_bound(b), hi = l.deltas.upper_bound(version);
    if (static_cast<uint64_t>(std::distance(lo, hi)) == version - b) return b;
    if (*missing == 0) {
      for (uint64_t v = b + 1; v <= version; ++v) {
        if (l.deltas.count(v) == 0) {
          *missing = v;
          break;
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

KeyRange KeyRangeOfFingerprint(uint64_t fingerprint, uint64_t universe) {
  assert(universe >= 1 && fingerprint < universe);
  using u128 = unsigned __int128;
  const u128 u = universe;
  KeyRange r;
  r.first = static_cast<uint64_t>(((u128{fingerprint} << 64) + u - 1) / u);
  const u128 end = ((u128{fingerprint + 1} << 64) + u - 1) / u;  // exclusive; at most 2^64
  r.last = static_cast<uint64_t>(end - 1);
  return r;
}

LsmState::~LsmState() = default;

Result<std::unique_ptr<LsmState>> LsmState::Open(Env* env, const std::string& private_dir, const std::string& list,
                                                   uint64_t version) {
  URLGUARD_ASSIGN_OR_RETURN(Listing l, ListStateFiles(env, private_dir));
  uint64_t missing = 0;
  std::optional<uint64_t> base = ChooseBase(l, version, &missing);
  if (!base) {
    if (missing != 0) {
      return Status::FailedPrecondition(JoinPath(private_dir, StateDeltaFileName(missing)) +
                                        " is missing: the state of version " + std::to_string(version) +
                                        " cannot be rebuilt; run a full publish");
    }
    return Status::FailedPrecondition(private_dir + ": no base state at or before version " + std::to_string(version) +
                                      "; run a full publish");
  }
  std::unique_ptr<LsmState> s(new LsmState());
  s->version_ = version;
  s->base_version_ = *base;
  s->path_ = JoinPath(private_dir, StateFileName(*base));
  URLGUARD_ASSIGN_OR_RETURN(s->base_, env->MapReadOnly(s->path_));
  const uint8_t* p = s->base_->data();
  const size_t size = s->base_->size();
  // Header: magic, u32 format, u32 threat count, u64 version, name, threat table (docs/repository-layout.md).
  if (size < 25 || std::memcmp(p, kStateMagic, 8) != 0) return Status::Corruption(s->path_ + ": not a state file");
  uint32_t format, threats;
  uint64_t file_version;
  std::memcpy(&format, p + 8, 4);
  std::memcpy(&threats, p + 12, 4);
  std::memcpy(&file_version, p + 16, 8);
  if (format != kStateFormatVersion) return Status::Corruption(s->path_ + ": state format " + std::to_string(format));
  if (threats > 65536) return Status::Corruption(s->path_ + ": too many threat names");
  size_t at = 25;
  auto name = [&](std::string* out) -> bool {
    if (at >= size || size - at - 1 < p[at]) return false;
    out->assign(reinterpret_cast<const char*>(p + at + 1), p[at]);
    at += 1 + p[at];
    return true;
  };
  at = 24;
  std::string file_list;
  if (!name(&file_list) || file_list != list || file_version != *base) {
    return Status::Corruption(s->path_ + ": not list " + list + "'s version " + std::to_string(*base));
  }
  s->threats_.resize(threats);
  for (std::string& t : s->threats_) {
    if (!name(&t) || !IsValidThreatName(t)) return Status::Corruption(s->path_ + ": bad threat name");
  }
  s->base_threats_ = threats;
  if (size < at + kFooterBytes || (size - at - kFooterBytes) % kStateRecordBytes != 0) {
    return Status::Corruption(s->path_ + ": size is no whole number of records");
  }
  s->records_at_ = at;
  s->base_count_ = (size - at - kFooterBytes) / kStateRecordBytes;
  AdviseRandomAccess(*s->base_);
  // Where each layer starts (a layer past the last valid one starts at the end: records with a bad layer byte sort
  // there and are reported by the walks).
  for (int l = 0; l <= kLayerKindCount; ++l) {
    s->layer_begin_[l] = s->BinaryLowerBound(l == 0 ? 0 : s->layer_begin_[l - 1], s->base_count_,
                                             static_cast<uint8_t>(l), 0, nullptr);
  }

  // The overlay: every delta's records, newest first among equal entries (seq = version: ByLayerKey puts the larger
  // seq first), then one per entry. Threat ids are mapped into the union table.
  std::map<std::string, uint16_t, std::less<>> ids;
  for (size_t i = 0; i < s->threats_.size(); ++i) ids.emplace(s->threats_[i], static_cast<uint16_t>(i));
  // Each delta's records ascend (its reader checks): the overlay is a k-way merge of the delta files read
  // side by side, one sorted run per version, newest first among equal entries, keeping the first (newest)
  // record of each entry. Reading every delta whole, then sorting (or merging) them, then folding cost three
  // overlay-sized arrays of fresh pages: a tenth of a version's CPU 20 versions after a base, most of it page
  // faults (docs/scale.md §7).
  struct Run {
    std::unique_ptr<StateDeltaReader> reader;
    std::vector<uint16_t> threat_ids;  // the delta's threat ids -> threats_
    KeyRecord head;                    // its next record: seq = version, reserved = op, threat mapped
  };
  std::vector<Run> runs;
  runs.reserve(version - *base);
  // Reads the next record of run i into its head; false at its end (then its count and checksum are
  // verified).
  auto advance = [&runs](size_t i) -> Result<bool> {
    Run& run = runs[i];
    DeltaOp op;
    URLGUARD_ASSIGN_OR_RETURN(bool has, run.reader->Next(&run.head, &op));
    if (!has) return false;
    run.head.reserved = static_cast<uint8_t>(op);
    if (op == DeltaOp::kPut) run.head.threat = run.threat_ids[run.head.threat];
    run.head.seq = run.reader->version();
    return true;
  };
  // A min-heap of run indexes by their head (std heaps are max-heaps: the comparison is reversed).
  auto later = [&runs](size_t a, size_t b) { return ByLayerKey()(runs[b].head, runs[a].head); };
  std::vector<size_t> heap;
  size_t total = 0;
  for (uint64_t v = *base + 1; v <= version; ++v) {
    const std::string path = JoinPath(private_dir, StateDeltaFileName(v));
    Run run;
    URLGUARD_ASSIGN_OR_RETURN(run.reader, StateDeltaReader::Open(path));
    if (run.reader->list() != list || run.reader->version() != v) {
      return Status::Corruption(path + ": holds list " + run.reader->list() + " version " +
                                std::to_string(run.reader->version()));
    }
    const std::vector<std::string>& names = run.reader->threats();
    run.threat_ids.resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      auto [it, fresh] = ids.emplace(names[i], static_cast<uint16_t>(s->threats_.size()));
      if (fresh) {
        if (s->threats_.size() >= 65536) return Status::Corruption(private_dir + ": more than 65536 threat names");
        s->threats_.push_back(names[i]);
      }
      run.threat_ids[i] = it->second;
    }
    total += run.reader->records();
    runs.push_back(std::move(run));
    URLGUARD_ASSIGN_OR_RETURN(bool has, advance(runs.size() - 1));
    if (has) heap.push_back(runs.size() - 1);
  }
  std::make_heap(heap.begin(), heap.end(), later);
  s->overlay_.reserve(total);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const size_t i = heap.back();
    const KeyRecord& r = runs[i].head;
    if (s->overlay_.empty() ||
        CompareEntry(s->overlay_.back(), r) != 0) {  // else an older change of the entry kept
      s->overlay_.push_back(r);
      s->overlay_.back().seq = 0;
    }
    URLGUARD_ASSIGN_OR_RETURN(bool has, advance(i));
    if (has) {
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
      runs[i].reader.reset();  // verified: close it
    }
  }
  return s;
}

KeyRecord LsmState::BaseRecord(uint64_t i) const {
  const uint8_t* b = base_->data() + records_at_ + i * kStateRecordBytes;
  KeyRecord r;
  std::memcpy(&r.key, b, 8);
  std::memcpy(r.sha256, b + 8, 32);
  r.layer = b[40];
  r.ipv6 = b[41];
  r.prefix_length = b[42];
  std::memcpy(&r.threat, b + 44, 2);
  return r;
}

uint64_t LsmState::BaseKey(uint64_t i) const {
  uint64_t k;
  std::memcpy(&k, base_->data() + records_at_ + i * kStateRecordBytes, 8);
  return k;
}

uint64_t LsmState::BinaryLowerBound(uint64_t lo, uint64_t hi, uint8_t layer, uint64_t key,
                                    const uint8_t* sha256) const {
  const uint8_t* recs = base_->data() + records_at_;
  uint64_t n = hi - lo;
  while (n > 0) {
    const uint64_t half = n / 2;
    if (CompareRaw(recs + (lo + half) * kStateRecordBytes, layer, key, sha256) < 0) {
      lo += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  return lo;
}

// One interpolation search over the base (BaseLowerBound), a round at a time, so that PrefetchLookups can run a
// batch of them in lockstep and read each round's pages ahead together. Invariant: the answer is in [lo, hi];
// records before lo are below the probe, records from hi on are not; every key in [lo, hi) lies in [klo, khi] (the
// keys of the records just outside, or the ends of the key space).
struct LsmState::Bracket {
  using u128 = unsigned __int128;
  // A uniform sample of n keys in [klo, khi] puts the probe's place within sqrt(n p (1 - p)) (one standard
  // deviation of a binomial, p the probe's relative place in the key interval: at most sqrt(n)/2) of the
  // interpolated guess; probing one deviation and a bit either side brackets it about 4 times in 5. A search that
  // starts at a finger (the previous lookup's answer, Finger) has p small: its first bracket is about the square
  // root of the records between the two lookups, not of the layer's.
  // Keys that are not uniform (a base whose keys cluster) cannot make it worse than a binary search: after
  // kMaxInterpolations rounds the rest is bisected.
  static constexpr uint64_t kBinaryBelow = 32;
  static constexpr int kMaxInterpolations = 6;

  uint64_t lo = 0, hi = 0;
  u128 klo = 0, khi = u128{UINT64_MAX};
  int round = 0;

  bool Interpolating() const { return round < kMaxInterpolations && hi - lo > kBinaryBelow; }
  // This round's two probes, a <= b (b < lo when the round needs only a).
  void Probes(uint64_t key, uint64_t* a, uint64_t* b) const {
    const uint64_t n = hi - lo;
    const uint64_t guess = lo + static_cast<uint64_t>((u128{key} - klo) * n / (khi - klo + 1));
    const double p = static_cast<double>(u128{key} - klo) / static_cast<double>(khi - klo + 1);
    const uint64_t g = static_cast<uint64_t>(std::sqrt(static_cast<double>(n) * p * (1.0 - p))) + 8;
    *a = guess > lo + g ? guess - g : lo;
    *b = std::min(guess + g, hi - 1);
  }
  // Runs the round: `at_or_above(i)` says whether record i is at or above the probe; key_at(i) is its key.
  template <typename AtOrAbove, typename KeyAt>
  void Step(uint64_t key, const AtOrAbove& at_or_above, const KeyAt& key_at) {
    uint64_t a, b;
    Probes(key, &a, &b);
    ++round;
    if (at_or_above(a)) {
      hi = a;
      khi = key_at(a);
      return;
    }
    lo = a + 1;
    klo = key_at(a);
    if (b < lo) return;
    if (!at_or_above(b)) {
      lo = b + 1;
      klo = key_at(b);
    } else {
      hi = b;
      khi = key_at(b);
    }
  }
};

uint64_t LsmState::BaseLowerBound(uint8_t layer, uint64_t key, const uint8_t* sha256, Finger* finger) const {
  if (base_lookups_.fetch_add(1, std::memory_order_relaxed) % kReleaseLookups == kReleaseLookups - 1) {
    ReleaseMappedPages(*base_, records_at_, base_count_ * kStateRecordBytes);
  }
  if (layer >= kLayerKindCount) return layer_begin_[kLayerKindCount];
  const uint8_t* recs = base_->data() + records_at_;
  auto key_at = [this](uint64_t i) { return BaseKey(i); };
  auto at_or_above = [&](uint64_t i) { return CompareRaw(recs + i * kStateRecordBytes, layer, key, sha256) >= 0; };
  Bracket br;
  br.lo = layer_begin_[layer];
  br.hi = layer_begin_[layer + 1];
  // From the finger when the record before it is below the probe (lookups in ascending order). Not while
  // PrefetchLookups reads a cold base ahead: it reads the pages of searches from the layer's ends.
  if (finger != nullptr && finger->layer == layer && finger->index > br.lo && finger->index <= br.hi &&
      !prefetch_.load(std::memory_order_relaxed) && !at_or_above(finger->index - 1)) {
    br.lo = finger->index;
    br.klo = key_at(finger->index - 1);
  }
  while (br.Interpolating()) br.Step(key, at_or_above, key_at);
  const uint64_t answer = BinaryLowerBound(br.lo, br.hi, layer, key, sha256);
  if (finger != nullptr) *finger = {layer, answer};
  return answer;
}

LsmState::PrefetchStats LsmState::PrefetchLookups(std::span<const LookupKey> keys, Readahead mode) const {
  PrefetchStats stats;
  if (keys.empty() || base_count_ == 0) return stats;
  // A base already in the page cache (a publisher loop's steady state) gains nothing and would pay a system call
  // per page: look at a sample of its pages once.
  if (mode == Readahead::kIfCold && !prefetch_decided_.exchange(true)) {
    prefetch_ = SampleResidentFraction(*base_, kResidentSamples) < kPrefetchBelowResident;
  }
  if (mode == Readahead::kIfCold && !prefetch_.load()) return stats;
  const uint8_t* recs = base_->data() + records_at_;
  auto key_at = [this](uint64_t i) { return BaseKey(i); };
  std::vector<Bracket> brackets(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const uint8_t layer = std::min<uint8_t>(keys[i].layer, kLayerKindCount);
    brackets[i].lo = layer_begin_[layer];
    brackets[i].hi = layer < kLayerKindCount ? layer_begin_[layer + 1] : layer_begin_[layer];
    // A key a delta since the base changed is (almost always) answered by the overlay: no base pages.
    const size_t o = OverlayLowerBound(layer, keys[i].key, nullptr);
    if (o < overlay_.size() && overlay_[o].layer == layer && overlay_[o].key == keys[i].key) {
      brackets[i].hi = brackets[i].lo;
    }
  }
  for (const Bracket& br : brackets) stats.searched += br.hi > br.lo ? 1 : 0;
  // The pages of records [first, last] of the base, as file offsets.
  std::vector<size_t> pages;
  auto want = [&](uint64_t first, uint64_t last) {
    const size_t from = (records_at_ + first * kStateRecordBytes) / kPrefetchPageBytes;
    const size_t to = (records_at_ + (last + 1) * kStateRecordBytes - 1) / kPrefetchPageBytes;
    for (size_t pg = from; pg <= to; ++pg) pages.push_back(pg);
  };
  // Ask for every page of the round at once: the kernel reads them in parallel, where the lookups one by one would
  // wait for each (a cold 4.8 GB base at 100 M: 50 k random pages in 1.1 s instead of 8.2 s, 0.5 s of CPU instead
  // of 4.4 s; docs/performance.md).
  auto read_ahead = [&] {
    std::sort(pages.begin(), pages.end());
    pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
    stats.pages += pages.size();
    for (size_t i = 0; i < pages.size();) {
      size_t j = i + 1;
      while (j < pages.size() && pages[j] == pages[j - 1] + 1) ++j;
      PrefetchMappedPages(*base_, pages[i] * kPrefetchPageBytes, (j - i) * kPrefetchPageBytes);
      i = j;
    }
    pages.clear();
  };
  for (bool active = true; active;) {
    active = false;
    for (size_t i = 0; i < keys.size(); ++i) {
      const Bracket& br = brackets[i];
      if (br.hi <= br.lo) continue;
      if (!br.Interpolating()) {
        want(br.lo, br.hi - 1);  // the bisection's records (the bracket is closed below)
        continue;
      }
      uint64_t a, b;
      br.Probes(keys[i].key, &a, &b);
      want(a, a);
      if (b > a) want(b, b);
      active = true;
    }
    read_ahead();
    for (size_t i = 0; i < keys.size(); ++i) {
      Bracket& br = brackets[i];
      if (br.hi <= br.lo) continue;
      if (!br.Interpolating()) {
        br.hi = br.lo;  // done: its bisection's pages were asked for above
        continue;
      }
      const uint64_t key = keys[i].key;
      const uint8_t layer = keys[i].layer;
      br.Step(key, [&](uint64_t r) { return CompareRaw(recs + r * kStateRecordBytes, layer, key, nullptr) >= 0; },
              key_at);
    }
  }
  // The probes above mapped their pages: hand them back as the lookups do.
  ReleaseMappedPages(*base_, records_at_, base_count_ * kStateRecordBytes);
  return stats;
}

size_t LsmState::OverlayLowerBound(uint8_t layer, uint64_t key, const uint8_t* sha256) const {
  return static_cast<size_t>(
      std::partition_point(overlay_.begin(), overlay_.end(),
                           [&](const KeyRecord& r) { return CompareProbe(r, layer, key, sha256) < 0; }) -
      overlay_.begin());
}

std::optional<KeyRecord> LsmState::Find(uint8_t layer, uint64_t key, const uint8_t sha256[32]) const {
  const size_t o = OverlayLowerBound(layer, key, sha256);
  if (o < overlay_.size() && CompareProbe(overlay_[o], layer, key, sha256) == 0) {
    if (overlay_[o].reserved != static_cast<uint8_t>(DeltaOp::kPut)) return std::nullopt;
    KeyRecord r = overlay_[o];
    r.reserved = 0;
    return r;
  }
  const uint64_t b = BaseLowerBound(layer, key, sha256);
  if (b < base_count_ &&
      CompareRaw(base_->data() + records_at_ + b * kStateRecordBytes, layer, key, sha256) == 0) {
    return BaseRecord(b);
  }
  return std::nullopt;
}

Status LsmState::Walk(uint64_t b, uint64_t b_end, size_t o, size_t o_end,
                       const std::function<Status(const KeyRecord&)>& fn) const {
  while (b < b_end || o < o_end) {
    int c;
    KeyRecord base_rec;
    if (b < b_end) base_rec = BaseRecord(b);
    if (b == b_end) {
      c = 1;
    } else if (o == o_end) {
      c = -1;
    } else {
      c = CompareEntry(base_rec, overlay_[o]);
    }
    if (c < 0) {
      if (base_rec.layer > 2 || base_rec.threat >= base_threats_) {
        return Status::Corruption(path_ + ": bad record " + std::to_string(b + 1));
      }
      ++b;
      URLGUARD_RETURN_IF_ERROR(fn(base_rec));
    } else {
      if (c == 0) ++b;  // the overlay's change replaces (or deletes) the base's record
      const KeyRecord& r = overlay_[o++];
      if (r.reserved == static_cast<uint8_t>(DeltaOp::kPut)) {
        KeyRecord out = r;
        out.reserved = 0;
        URLGUARD_RETURN_IF_ERROR(fn(out));
      }
    }
  }
  return Status::Ok();
}

// The records of a key range are found by one search for its start and a scan to its end: a fingerprint's range
// holds an entry or two, and a second search for the end cost as much as the first (docs/performance.md
// "Freshness", session 13).
uint64_t LsmState::BaseRangeEnd(uint8_t layer, uint64_t b, uint64_t last) const {
  const uint64_t layer_end = layer_begin_[layer + 1];
  while (b < layer_end && BaseKey(b) <= last) ++b;
  return b;
}

size_t LsmState::OverlayRangeEnd(uint8_t layer, size_t o, uint64_t last) const {
  while (o < overlay_.size() && overlay_[o].layer == layer && overlay_[o].key <= last) ++o;
  return o;
}

Status LsmState::ForEachInKeyRange(uint8_t layer, uint64_t first, uint64_t last,
                                    const std::function<Status(const KeyRecord&)>& fn) const {
  return ForEachInKeyRange(layer, first, last, nullptr, fn);
}

Status LsmState::ForEachInKeyRange(uint8_t layer, uint64_t first, uint64_t last, Finger* finger,
                                    const std::function<Status(const KeyRecord&)>& fn) const {
  if (first > last || layer >= kLayerKindCount) return Status::Ok();
  const uint64_t b = BaseLowerBound(layer, first, nullptr, finger);
  const size_t o = OverlayLowerBound(layer, first, nullptr);
  return Walk(b, BaseRangeEnd(layer, b, last), o, OverlayRangeEnd(layer, o, last), fn);
}

Result<std::optional<KeyRecord>> LsmState::FindInKeyRange(uint8_t layer, uint64_t key, const uint8_t sha256[32],
                                                          uint64_t first, uint64_t last, uint64_t* in_range,
                                                          Finger* finger) const {
  assert(first <= key && key <= last);
  *in_range = 0;
  std::optional<KeyRecord> found;
  struct Scan {
    uint64_t key;
    const uint8_t* sha256;
    uint64_t* in_range;
    std::optional<KeyRecord>* found;
  } scan{key, sha256, in_range, &found};
  // Walk hands records out as Find does (`reserved` 0), and checks the base's against its threat table.
  URLGUARD_RETURN_IF_ERROR(ForEachInKeyRange(layer, first, last, finger, [&scan](const KeyRecord& r) {
    ++*scan.in_range;
    if (r.key == scan.key && std::memcmp(r.sha256, scan.sha256, 32) == 0) *scan.found = r;
    return Status::Ok();
  }));
  return found;
}

bool LsmState::AnyInKeyRange(uint8_t layer, uint64_t first, uint64_t last) const {
  if (first > last || layer >= kLayerKindCount) return false;
  const size_t o = OverlayLowerBound(layer, first, nullptr);
  const size_t o_end = OverlayRangeEnd(layer, o, last);
  for (size_t i = o; i < o_end; ++i) {
    if (overlay_[i].reserved == static_cast<uint8_t>(DeltaOp::kPut)) return true;
  }
  // Only deletes in the overlay's range: a base record in range survives unless one of them names it.
  size_t d = o;
  const uint64_t layer_end = layer_begin_[layer + 1];
  for (uint64_t b = BaseLowerBound(layer, first, nullptr); b < layer_end && BaseKey(b) <= last; ++b) {
    const KeyRecord r = BaseRecord(b);
    while (d < o_end && CompareEntry(overlay_[d], r) < 0) ++d;
    if (d == o_end || CompareEntry(overlay_[d], r) != 0) return true;
  }
  return false;
}

void LsmState::Cursor::HashUpTo(size_t offset) {
  if (offset <= hashed_) return;
  hasher_.Update(s_->base_->data() + hashed_, offset - hashed_);
  ReleaseMappedPages(*s_->base_, hashed_, offset - hashed_);
  // The mapping reads no pages ahead (AdviseRandomAccess, for the lookups): the walk asks for the next stretch.
  PrefetchMappedPages(*s_->base_, offset + kReleaseBytes, kReleaseBytes);
  hashed_ = offset;
}

Result<bool> LsmState::Cursor::Next(KeyRecord* out) {
  if (done_) return false;
  const LsmState& s = *s_;
  if (!started_) {
    PrefetchMappedPages(*s.base_, 0, 2 * kReleaseBytes);
    started_ = true;
  }
  for (;;) {
    const bool have_b = b_ < s.base_count_, have_o = o_ < s.overlay_.size();
    if (!have_b && !have_o) break;
    KeyRecord base_rec;
    if (have_b) base_rec = s.BaseRecord(b_);
    const int c = !have_b ? 1 : !have_o ? -1 : CompareEntry(base_rec, s.overlay_[o_]);
    if (c <= 0) {
      if (base_rec.layer > 2 || base_rec.threat >= s.base_threats_) {
        return Status::Corruption(s.path_ + ": bad record " + std::to_string(b_ + 1));
      }
      ++b_;
      const size_t reached = s.records_at_ + b_ * kStateRecordBytes;
      if (reached - hashed_ >= kReleaseBytes) HashUpTo(reached);
    }
    if (c < 0) {
      *out = base_rec;
      return true;
    }
    // The overlay's change replaces (c == 0) or adds to the base; a delete hides the base's record.
    const KeyRecord& r = s.overlay_[o_++];
    if (r.reserved == static_cast<uint8_t>(DeltaOp::kPut)) {
      *out = r;
      out->reserved = 0;
      return true;
    }
  }
  // The base's footer: its record count and the checksum of everything before it.
  const uint8_t* p = s.base_->data();
  const size_t size = s.base_->size();
  HashUpTo(size - 32);
  uint64_t count;
  std::memcpy(&count, p + size - kFooterBytes, 8);
  Sha256Digest want = hasher_.Finish();
  if (count != s.base_count_ || std::memcmp(p + size - 32, want.data(), 32) != 0) {
    return Status::Corruption(s.path_ + ": checksum or record count mismatch");
  }
  done_ = true;
  return false;
}

Status LsmState::ForEach(const std::function<Status(const KeyRecord&)>& fn) const {
  Cursor c(this);
  KeyRecord r;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, c.Next(&r));
    if (!has) return Status::Ok();
    URLGUARD_RETURN_IF_ERROR(fn(r));
  }
}

Status CompactListState(Env* env, const std::string& private_dir, const std::string& list, uint64_t to_version) {
  URLGUARD_ASSIGN_OR_RETURN(auto state, LsmState::Open(env, private_dir, list, to_version));
  if (state->base_version() == to_version) return Status::Ok();
  URLGUARD_FAULT_POINT("publish.compact.opened");
  // Pass 1: which names are in use (a full publish's table holds exactly those, sorted).
  std::vector<uint64_t> uses(state->threats().size(), 0);
  URLGUARD_RETURN_IF_ERROR(state->ForEach([&](const KeyRecord& r) {
    ++uses[r.threat];
    return Status::Ok();
  }));
  std::vector<std::string> final_threats;
  for (size_t i = 0; i < uses.size(); ++i) {
    if (uses[i] > 0) final_threats.push_back(state->threats()[i]);
  }
  std::sort(final_threats.begin(), final_threats.end());
  std::vector<uint16_t> final_id(uses.size(), 0);
  for (size_t i = 0; i < uses.size(); ++i) {
    final_id[i] = static_cast<uint16_t>(
        std::lower_bound(final_threats.begin(), final_threats.end(), state->threats()[i]) - final_threats.begin());
  }
  // Pass 2: the new base.
  const std::string path = JoinPath(private_dir, StateFileName(to_version));
  auto write = [&]() -> Status {
    URLGUARD_ASSIGN_OR_RETURN(auto w, StateFileWriter::Create(env, path, list, to_version, final_threats));
    // Half of the base's records: deletes may leave fewer than half of base + overlay, which was never reached.
    const uint64_t half = state->base_records() / 2;
    uint64_t n = 0;
    URLGUARD_RETURN_IF_ERROR(state->ForEach([&](const KeyRecord& r) {
      if (n++ == half) URLGUARD_FAULT_POINT("publish.compact.writing");
      KeyRecord out = r;
      out.threat = final_id[r.threat];
      return w->Add(out);
    }));
    URLGUARD_FAULT_POINT("publish.compact.before-rename");
    return w->Finish();
  };
  Status s = write();
  if (!s.ok()) {
    (void)env->RemoveFile(path + ".tmp");
    return s.WithContext("compacting " + list + " to version " + std::to_string(to_version));
  }
  URLGUARD_FAULT_POINT("publish.compact.after-rename");
  return Status::Ok();
}

Status PruneListState(Env* env, const std::string& private_dir, const std::string& list, uint64_t committed_version,
                      uint64_t keep_deltas_from) {
  (void)list;
  URLGUARD_ASSIGN_OR_RETURN(Listing l, ListStateFiles(env, private_dir));
  for (const std::string& n : l.strays) URLGUARD_RETURN_IF_ERROR(env->RemoveFile(JoinPath(private_dir, n)));
  uint64_t missing = 0;
  std::optional<uint64_t> base = ChooseBase(l, committed_version, &missing);
  if (!base) return Status::Ok();  // nothing is known to be superseded
  for (uint64_t b : l.bases) {
    if (b < *base) URLGUARD_RETURN_IF_ERROR(env->RemoveFile(JoinPath(private_dir, StateFileName(b))));
  }
  for (uint64_t d : l.deltas) {
    if (d <= *base && d < keep_deltas_from) {
      URLGUARD_RETURN_IF_ERROR(env->RemoveFile(JoinPath(private_dir, StateDeltaFileName(d))));
    }
  }
  return Status::Ok();
}

}  // namespace urlguard
