// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/seen_filter.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numbers>
#include <utility>

#include "core/byte_io.h"

namespace urlguard {
namespace {

// ---- format constants (docs/seen-filter-format.md) --------------------------------------------------------
// Changes the on-disk format: bump kSeenFormatVersion, the doc and the golden test (seen_filter_test.cc).
constexpr char kSeenMagic[8] = {'U', 'G', 'S', 'E', 'E', 'N', '\r', '\n'};
constexpr uint32_t kSeenFormatVersion = 1;
constexpr size_t kHeaderBytes = 104;
constexpr size_t kStageRecordBytes = 16;  // capacity u64, fp_target f64; the Bloom body follows
constexpr size_t kTrailerBytes = 32;
// Header offsets.
constexpr size_t kOffVersion = 8;
constexpr size_t kOffStageCount = 12;
constexpr size_t kOffInitialCapacity = 16;
constexpr size_t kOffFpRate = 24;
constexpr size_t kOffTightening = 32;
constexpr size_t kOffGrowth = 40;
constexpr size_t kOffMaxStages = 44;
constexpr size_t kOffTotal = 48;
constexpr size_t kOffDistinct = 56;
constexpr size_t kOffCmsEps = 64;
constexpr size_t kOffCmsDelta = 72;
constexpr size_t kOffCmsWidth = 80;
constexpr size_t kOffCmsDepth = 88;
constexpr size_t kOffReserved = 92;
constexpr size_t kOffCmsSeed = 96;
// Smallest possible file: header, one stage of one block, a 1 x 1 sketch, trailer.
constexpr size_t kMinSeenFilterBytes =
    kHeaderBytes + kStageRecordBytes + kBloomHeaderBytes + kBloomBlockBytes + 8 + kTrailerBytes;

constexpr uint64_t kMersenne61 = (uint64_t{1} << 61) - 1;

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// x mod (2^61 - 1) for x < 2^123 (one folding step leaves < 2^62 + 2^61; the second < 2^61 + 1).
uint64_t ModMersenne61(unsigned __int128 x) {
  uint64_t r = static_cast<uint64_t>(x & kMersenne61) + static_cast<uint64_t>(x >> 61);
  r = (r & kMersenne61) + (r >> 61);
  return r >= kMersenne61 ? r - kMersenne61 : r;
}

double LoadF64(const uint8_t* p) {
  double v;
  std::memcpy(&v, p, 8);
  return v;
}
void AppendF64(std::string* s, double v) { s->append(reinterpret_cast<const char*>(&v), 8); }

// True when lo <= x <= hi (false for NaN).
bool InRange(double x, double lo, double hi) { return x >= lo && x <= hi; }
// True when 0 < x < 1 (false for NaN).
bool OpenUnit(double x) { return x > 0.0 && x < 1.0; }

std::string U64(uint64_t v) { return std::to_string(v); }

// Classic Bloom bits for n keys at rate p: a lower bound of what SizeBlockedBloomForTarget returns (it starts
// its search at the classic block count and only grows it).
double ClassicBits(uint64_t n, double p) {
  const double ln2 = std::numbers::ln2;
  return -static_cast<double>(n) * std::log(p) / (ln2 * ln2);
}

uint64_t CountSetBits(const uint8_t* p, size_t size) {
  uint64_t n = 0;
  for (size_t i = 0; i < size; ++i) n += static_cast<uint64_t>(__builtin_popcount(p[i]));
  return n;
}

size_t StageBytes(uint64_t blocks) {
  return kStageRecordBytes + kBloomHeaderBytes + blocks * kBloomBlockBytes;
}

}  // namespace

// ---- insertion order --------------------------------------------------------------------------------------

namespace {
constexpr uint64_t kFmixMul1 = 0xff51afd7ed558ccdull;
constexpr uint64_t kFmixMul2 = 0xc4ceb9fe1a85ec53ull;
// The inverse of an odd number modulo 2^64 (Newton's iteration doubles the correct low bits each step).
constexpr uint64_t InverseOdd(uint64_t a) {
  uint64_t x = a;  // correct to 3 bits for any odd a
  for (int i = 0; i < 5; ++i) x *= 2 - a * x;
  return x;
}
static_assert(kFmixMul1 * InverseOdd(kFmixMul1) == 1 && kFmixMul2 * InverseOdd(kFmixMul2) == 1);
}  // namespace

uint64_t SeenInsertionRank(uint64_t key) {
  // murmur3 fmix64.
  key ^= key >> 33;
  key *= kFmixMul1;
  key ^= key >> 33;
  key *= kFmixMul2;
  key ^= key >> 33;
  return key;
}

uint64_t SeenKeyFromRank(uint64_t rank) {
  // x ^= x >> 33 is its own inverse (2 * 33 >= 64); the multiplications invert with the inverse constants.
  rank ^= rank >> 33;
  rank *= InverseOdd(kFmixMul2);
  rank ^= rank >> 33;
  rank *= InverseOdd(kFmixMul1);
  rank ^= rank >> 33;
  return rank;
}

// ---- CountMinSketch ---------------------------------------------------------------------------------------

uint64_t CountMinSketch::WidthFor(double eps) {
  // Spec (Cormode & Muthukrishnan §3): w = ceil(e / eps).
  const double w = std::ceil(std::numbers::e / eps);
  if (!(w >= 1.0)) return 1;  // NaN or negative eps: Create refuses eps first
  if (w >= 0x1p62) return uint64_t{1} << 62;
  return static_cast<uint64_t>(w);
}

uint32_t CountMinSketch::DepthFor(double delta) {
  // Spec (Cormode & Muthukrishnan §3): d = ceil(ln(1 / delta)).
  const double d = std::ceil(std::log(1.0 / delta));
  if (!(d >= 1.0)) return 1;
  if (d >= 1e6) return 1000000;
  return static_cast<uint32_t>(d);
}

Result<CountMinSketch> CountMinSketch::Create(double eps, double delta, uint64_t seed) {
  if (!OpenUnit(eps)) return Status::InvalidArgument("cms_eps must be in (0, 1)");
  if (!OpenUnit(delta)) return Status::InvalidArgument("cms_delta must be in (0, 1)");
  const uint64_t width = WidthFor(eps);
  const uint32_t depth = DepthFor(delta);
  if (depth > kMaxCmsDepth) {
    return Status::InvalidArgument("cms_delta too small: depth " + U64(depth) + " > " + U64(kMaxCmsDepth));
  }
  if (width > kMaxCmsCounters / depth) {
    return Status::InvalidArgument("cms_eps too small: " + U64(width) + " x " + U64(depth) +
                                   " counters exceed " + U64(kMaxCmsCounters));
  }
  return CountMinSketch(width, depth, seed);
}

CountMinSketch::CountMinSketch(uint64_t width, uint32_t depth, uint64_t seed)
    : width_(width), depth_(depth), seed_(seed), a_(depth), b_(depth) {
  assert(width >= 1 && depth >= 1 && depth <= kMaxCmsDepth && width <= kMaxCmsCounters / depth);
  uint64_t state = seed;
  for (uint32_t j = 0; j < depth; ++j) {
    a_[j] = 1 + SplitMix64(&state) % (kMersenne61 - 1);  // a in [1, p)
    b_[j] = SplitMix64(&state) % kMersenne61;            // b in [0, p)
  }
  counters_.assign(width * depth, 0);
}

uint64_t CountMinSketch::Column(uint32_t row, uint64_t key) const {
  // h_j(x) = ((a_j x + b_j) mod p) mod w with p = 2^61 - 1 and x = key mod p.
  const uint64_t x = ModMersenne61(key);
  const uint64_t h = ModMersenne61(static_cast<unsigned __int128>(a_[row]) * x + b_[row]);
  return h % width_;
}

uint64_t CountMinSketch::Add(uint64_t key) {
  uint64_t* cell[kMaxCmsDepth];
  uint64_t min = UINT64_MAX;
  for (uint32_t j = 0; j < depth_; ++j) {
    cell[j] = &counters_[j * width_ + Column(j, key)];
    min = std::min(min, *cell[j]);
  }
  // Spec (Estan & Varghese, conservative update): raise each counter to max(counter, estimate + 1).
  const uint64_t raised = min == UINT64_MAX ? min : min + 1;  // saturate, never wrap
  for (uint32_t j = 0; j < depth_; ++j) *cell[j] = std::max(*cell[j], raised);
  return min;
}

void CountMinSketch::Prefetch(uint64_t key) const {
  for (uint32_t j = 0; j < depth_; ++j) __builtin_prefetch(&counters_[j * width_ + Column(j, key)]);
}

uint64_t CountMinSketch::Estimate(uint64_t key) const {
  uint64_t min = UINT64_MAX;
  for (uint32_t j = 0; j < depth_; ++j) min = std::min(min, counters_[j * width_ + Column(j, key)]);
  return min;
}

// ---- SeenFilter -------------------------------------------------------------------------------------------

Status SeenFilter::CheckOptions(const SeenFilterOptions& o) {
  if (o.initial_capacity < 1 || o.initial_capacity > kMaxSeenCapacity) {
    return Status::InvalidArgument("initial_capacity must be in 1.." + U64(kMaxSeenCapacity));
  }
  if (!InRange(o.fp_rate, kMinSeenFpRate, kMaxSeenFpRate)) {
    return Status::InvalidArgument("fp_rate must be in [1e-9, 0.5]");
  }
  if (o.growth_factor < kMinSeenGrowth || o.growth_factor > kMaxSeenGrowth) {
    return Status::InvalidArgument("growth_factor must be in 2..8");
  }
  if (!InRange(o.tightening_ratio, kMinSeenTightening, kMaxSeenTightening)) {
    return Status::InvalidArgument("tightening_ratio must be in [0.5, 0.95]");
  }
  if (o.max_stages < 1 || o.max_stages > kMaxSeenStages) {
    return Status::InvalidArgument("max_stages must be in 1.." + U64(kMaxSeenStages));
  }
  // The last stage's target, computed exactly as TryGrow computes targets.
  double target = o.fp_rate * (1.0 - o.tightening_ratio);
  for (uint32_t i = 1; i < o.max_stages; ++i) target *= o.tightening_ratio;
  if (target < kMinStageFpRate) {
    return Status::InvalidArgument(
        "max_stages too large for fp_rate and tightening_ratio: the last stage's "
        "target P (1 - r) r^(S - 1) falls below 1e-12");
  }
  auto cms = CountMinSketch::Create(o.cms_eps, o.cms_delta, o.cms_seed);
  if (!cms.ok()) return cms.status();
  return Status::Ok();
}

SeenFilter::SeenFilter(const SeenFilterOptions& options, CountMinSketch cms)
    : options_(options), cms_(std::move(cms)) {}

SeenFilter SeenFilter::Create(uint64_t initial_capacity, double fp_rate, double cms_eps, double cms_delta) {
  SeenFilterOptions o;
  o.initial_capacity = initial_capacity;
  o.fp_rate = fp_rate;
  o.cms_eps = cms_eps;
  o.cms_delta = cms_delta;
  Result<SeenFilter> f = Create(o);
  if (!f.ok()) {
    assert(false && "SeenFilter::Create: parameters out of range (see CheckOptions)");
    std::abort();  // a bug: never continue with an unusable filter, even with NDEBUG
  }
  return std::move(f).value();
}

Result<SeenFilter> SeenFilter::Create(const SeenFilterOptions& options) {
  URLGUARD_RETURN_IF_ERROR(CheckOptions(options));
  URLGUARD_ASSIGN_OR_RETURN(CountMinSketch cms,
                            CountMinSketch::Create(options.cms_eps, options.cms_delta, options.cms_seed));
  SeenFilter f(options, std::move(cms));
  if (!f.TryGrow()) {
    return Status::ResourceExhausted("seen filter: initial_capacity " + U64(options.initial_capacity) +
                                     " at fp_rate needs more than " + U64(kMaxSeenFilterBytes) + " bytes");
  }
  return f;
}

bool SeenFilter::TryGrow() {
  const size_t i = stages_.size();
  if (i >= options_.max_stages) return false;
  uint64_t capacity;
  double target;
  if (i == 0) {
    capacity = options_.initial_capacity;
    // Spec (Almeida et al. §4): P = p0 / (1 - r), so p0 = P (1 - r).
    target = options_.fp_rate * (1.0 - options_.tightening_ratio);
  } else {
    // Spec (Almeida et al. §4): stage i has capacity n0 s^i and rate p0 r^i.
    if (stages_.back().capacity > kMaxSeenCapacity / options_.growth_factor) return false;
    capacity = stages_.back().capacity * options_.growth_factor;
    target = stages_.back().fp_target * options_.tightening_ratio;
  }
  if (target < kMinStageFpRate) return false;
  // Cheap refusal before the sizing search: the classic size is a lower bound of the blocked one.
  const double classic_blocks = std::ceil(ClassicBits(capacity, target) / 512.0);
  const double budget = static_cast<double>(kMaxSeenFilterBytes - serialized_size());
  if (classic_blocks > static_cast<double>(kMaxBloomBlocks) ||
      static_cast<double>(StageBytes(0)) + classic_blocks * kBloomBlockBytes > budget) {
    return false;
  }
  const BloomSizing s = SizeBlockedBloomForTarget(capacity, target);
  if (s.blocks > kMaxBloomBlocks || StageBytes(s.blocks) > kMaxSeenFilterBytes - serialized_size()) {
    return false;
  }
  stages_.push_back(Stage{capacity, target, BlockedBloom(s.blocks, s.hashes)});
  return true;
}

bool SeenFilter::BloomMayContain(uint64_t key) const {
  for (auto it = stages_.rbegin(); it != stages_.rend(); ++it) {
    if (it->bloom.MayContain(key)) return true;
  }
  return false;
}

void SeenFilter::InsertBloom(uint64_t key) {
  // The active stage is full: open the next one. A stage already over capacity means growth failed before,
  // and every reason for that (max_stages, target floor, capacity cap, byte cap) is permanent.
  if (stages_.back().bloom.inserted() == stages_.back().capacity) (void)TryGrow();
  stages_.back().bloom.Insert(key);
}

Sighting SeenFilter::Query(uint64_t key) const {
  if (!BloomMayContain(key)) return {false, 0};
  const uint64_t count = cms_.Estimate(key);
  if (count == 0) return {false, 0};  // the sketch never underestimates: certainly unseen
  return {true, count};
}

void SeenFilter::Prefetch(uint64_t key, bool sketch) const {
  for (const Stage& s : stages_) s.bloom.Prefetch(key);
  if (sketch) cms_.Prefetch(key);  // a division per row: not free
}

Sighting SeenFilter::Record(uint64_t key) {
  const bool in_bloom = BloomMayContain(key);
  const uint64_t before = cms_.Add(key);
  if (total_ != UINT64_MAX) ++total_;  // saturating, like the counters: distinct_ <= total_ stays true
  const bool seen = in_bloom && before > 0;
  if (!seen && distinct_ != UINT64_MAX) ++distinct_;
  // Only keys absent from every stage go in (Almeida et al.): stage loads count distinct keys. A key whose
  // bits are all set already stays "maybe" forever, so inserting it would only load the active stage.
  if (!in_bloom) InsertBloom(key);
  return seen ? Sighting{true, before} : Sighting{false, 0};
}

Sighting SeenFilter::RecordDeferringBloom(uint64_t key, std::vector<uint64_t>* pending) {
  const bool in_bloom = BloomMayContain(key);
  const uint64_t before = cms_.Add(key);
  if (total_ != UINT64_MAX) ++total_;
  const bool seen = in_bloom && before > 0;
  if (!seen && distinct_ != UINT64_MAX) ++distinct_;
  if (!in_bloom) pending->push_back(key);
  return seen ? Sighting{true, before} : Sighting{false, 0};
}

void SeenFilter::InsertDeferred(std::vector<uint64_t>* pending) {
  // The batch's stage split must not follow the keys' order (see "Insertion order" in the header): rank order.
  for (uint64_t& k : *pending) k = SeenInsertionRank(k);
  std::sort(pending->begin(), pending->end());
  for (uint64_t rank : *pending) {
    const uint64_t key = SeenKeyFromRank(rank);
    // Like Record: a key whose bits this batch has set meanwhile stays out, so stage loads count set bits.
    if (!BloomMayContain(key)) InsertBloom(key);
  }
  pending->clear();
}

SeenRunSummary SeenFilter::RecordRun(std::span<const uint64_t> keys, std::vector<Sighting>* sightings) {
  std::vector<uint64_t> distinct(keys.begin(), keys.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  // Query everything first: "seen before" means seen in an earlier run, so no key of this run may influence
  // another's answer (not through the sketch, not through Bloom bits set a moment ago).
  std::vector<Sighting> before(distinct.size());
  SeenRunSummary summary;
  summary.keys = keys.size();
  summary.distinct = distinct.size();
  summary.duplicates = keys.size() - distinct.size();
  for (size_t i = 0; i < distinct.size(); ++i) {
    before[i] = Query(distinct[i]);
    if (before[i].seen_before) {
      ++summary.seen_before;
    } else {
      ++summary.new_keys;
    }
  }
  std::vector<uint64_t> pending;
  pending.reserve(summary.new_keys);
  for (uint64_t key : distinct) (void)RecordDeferringBloom(key, &pending);
  InsertDeferred(&pending);

  if (sightings != nullptr) {
    sightings->resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      const size_t at = std::lower_bound(distinct.begin(), distinct.end(), keys[i]) - distinct.begin();
      (*sightings)[i] = before[at];
    }
  }
  return summary;
}

double SeenFilter::expected_fp_rate() const {
  double pass = 1.0;
  for (const Stage& s : stages_) {
    pass *= 1.0 - BlockedBloomFalsePositiveRate(s.bloom.inserted(), s.bloom.blocks(), s.bloom.hashes());
  }
  return 1.0 - pass;
}

bool SeenFilter::saturated() const { return stages_.back().bloom.inserted() > stages_.back().capacity; }

std::vector<SeenStageInfo> SeenFilter::stages() const {
  std::vector<SeenStageInfo> out;
  out.reserve(stages_.size());
  for (const Stage& s : stages_) {
    SeenStageInfo info;
    info.capacity = s.capacity;
    info.fp_target = s.fp_target;
    info.blocks = s.bloom.blocks();
    info.hashes = s.bloom.hashes();
    info.inserted = s.bloom.inserted();
    info.expected_fp_rate = BlockedBloomFalsePositiveRate(info.inserted, info.blocks, info.hashes);
    out.push_back(info);
  }
  return out;
}

size_t SeenFilter::serialized_size() const {
  size_t size = kHeaderBytes + kTrailerBytes + cms_.counters().size() * 8;
  for (const Stage& s : stages_) size += StageBytes(s.bloom.blocks());
  return size;
}

std::string SeenFilter::Serialize() const {
  std::string out;
  out.reserve(serialized_size());
  out.append(kSeenMagic, sizeof(kSeenMagic));
  AppendLE32(&out, kSeenFormatVersion);
  AppendLE32(&out, static_cast<uint32_t>(stages_.size()));
  AppendLE64(&out, options_.initial_capacity);
  AppendF64(&out, options_.fp_rate);
  AppendF64(&out, options_.tightening_ratio);
  AppendLE32(&out, options_.growth_factor);
  AppendLE32(&out, options_.max_stages);
  AppendLE64(&out, total_);
  AppendLE64(&out, distinct_);
  AppendF64(&out, options_.cms_eps);
  AppendF64(&out, options_.cms_delta);
  AppendLE64(&out, cms_.width());
  AppendLE32(&out, cms_.depth());
  AppendLE32(&out, 0);  // reserved
  AppendLE64(&out, cms_.seed());
  assert(out.size() == kHeaderBytes);
  for (const Stage& s : stages_) {
    AppendLE64(&out, s.capacity);
    AppendF64(&out, s.fp_target);
    out += s.bloom.Serialize();
  }
  for (uint64_t c : cms_.counters()) AppendLE64(&out, c);
  const Sha256Digest digest = Sha256(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  assert(out.size() == serialized_size());
  return out;
}

Result<SeenFilter> SeenFilter::Deserialize(std::string_view bytes) {
  auto corrupt = [](const std::string& why) { return Status::Corruption("seen filter: " + why); };
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t size = bytes.size();

  // Spec (docs/seen-filter-format.md §6, steps 1-4): size cap, minimum size, magic, version, trailer.
  if (size > kMaxSeenFilterBytes) {
    return Status::ResourceExhausted("seen filter: " + U64(size) + " bytes exceed the cap of " +
                                     U64(kMaxSeenFilterBytes));
  }
  if (size < kMinSeenFilterBytes) return corrupt("file too short (" + U64(size) + " bytes)");
  if (std::memcmp(p, kSeenMagic, sizeof(kSeenMagic)) != 0) return corrupt("bad magic");
  const uint32_t version = LoadLE32(p + kOffVersion);
  if (version != kSeenFormatVersion) {
    return corrupt("unsupported format version " + U64(version) + " (this build reads " +
                   U64(kSeenFormatVersion) + ")");
  }
  const size_t body = size - kTrailerBytes;
  const Sha256Digest digest = Sha256(p, body);
  if (std::memcmp(digest.data(), p + body, kTrailerBytes) != 0) return corrupt("SHA-256 trailer mismatch");

  // Step 5: header fields.
  SeenFilterOptions o;
  const uint32_t stage_count = LoadLE32(p + kOffStageCount);
  o.initial_capacity = LoadLE64(p + kOffInitialCapacity);
  o.fp_rate = LoadF64(p + kOffFpRate);
  o.tightening_ratio = LoadF64(p + kOffTightening);
  o.growth_factor = LoadLE32(p + kOffGrowth);
  o.max_stages = LoadLE32(p + kOffMaxStages);
  const uint64_t total = LoadLE64(p + kOffTotal);
  const uint64_t distinct = LoadLE64(p + kOffDistinct);
  o.cms_eps = LoadF64(p + kOffCmsEps);
  o.cms_delta = LoadF64(p + kOffCmsDelta);
  const uint64_t width = LoadLE64(p + kOffCmsWidth);
  const uint32_t depth = LoadLE32(p + kOffCmsDepth);
  o.cms_seed = LoadLE64(p + kOffCmsSeed);

  if (o.max_stages < 1 || o.max_stages > kMaxSeenStages)
    return corrupt("bad max_stages " + U64(o.max_stages));
  if (stage_count < 1 || stage_count > o.max_stages) return corrupt("bad stage_count " + U64(stage_count));
  if (o.initial_capacity < 1 || o.initial_capacity > kMaxSeenCapacity) return corrupt("bad initial_capacity");
  if (!InRange(o.fp_rate, kMinSeenFpRate, kMaxSeenFpRate)) return corrupt("bad fp_rate");
  if (!InRange(o.tightening_ratio, kMinSeenTightening, kMaxSeenTightening))
    return corrupt("bad tightening_ratio");
  if (o.growth_factor < kMinSeenGrowth || o.growth_factor > kMaxSeenGrowth)
    return corrupt("bad growth_factor");
  if (distinct > total) return corrupt("distinct " + U64(distinct) + " > total_sightings " + U64(total));
  if (!OpenUnit(o.cms_eps)) return corrupt("bad cms_eps");
  if (!OpenUnit(o.cms_delta)) return corrupt("bad cms_delta");
  if (depth < 1 || depth > kMaxCmsDepth) return corrupt("bad cms_depth " + U64(depth));
  if (width < 1 || width > kMaxCmsCounters / depth) return corrupt("bad cms_width " + U64(width));
  if (LoadLE32(p + kOffReserved) != 0) return corrupt("reserved header field is not 0");
  // Allocate nothing the bytes cannot back: the sketch must fit after the header before it is created.
  const uint64_t counters = width * depth;
  if (counters > (body - kHeaderBytes) / 8) {
    return corrupt("sketch of " + U64(counters) + " counters does not fit in the file");
  }

  // Step 6: stages.
  SeenFilter f(o, CountMinSketch(width, depth, o.cms_seed));
  f.total_ = total;
  f.distinct_ = distinct;
  f.stages_.reserve(stage_count);
  size_t at = kHeaderBytes;
  uint64_t expected_capacity = o.initial_capacity;
  double expected_target = o.fp_rate * (1.0 - o.tightening_ratio);
  uint64_t inserted_sum = 0;
  for (uint32_t i = 0; i < stage_count; ++i) {
    const std::string where = "stage " + U64(i) + ": ";
    if (body - at < kStageRecordBytes + kBloomHeaderBytes) return corrupt(where + "truncated");
    const uint64_t capacity = LoadLE64(p + at);
    const double target = LoadF64(p + at + 8);
    if (i > 0) {
      if (expected_capacity > kMaxSeenCapacity / o.growth_factor)
        return corrupt(where + "capacity overflows");
      expected_capacity *= o.growth_factor;
      expected_target *= o.tightening_ratio;
    }
    if (capacity != expected_capacity) {
      return corrupt(where + "capacity " + U64(capacity) + " != initial_capacity * growth^" + U64(i));
    }
    // Bit-exact: both sides compute p0 r^i with the same IEEE-754 multiplications.
    if (std::memcmp(&target, &expected_target, 8) != 0 || target < kMinStageFpRate) {
      return corrupt(where + "fp_target does not follow fp_rate (1 - r) r^i");
    }
    const uint8_t* bloom = p + at + kStageRecordBytes;
    const uint64_t blocks = LoadLE64(bloom);
    const uint32_t hashes = LoadLE32(bloom + 8);
    const uint64_t inserted = LoadLE64(bloom + 16);
    const size_t room = body - at - kStageRecordBytes - kBloomHeaderBytes;
    if (blocks < 1 || blocks > kMaxBloomBlocks || blocks > room / kBloomBlockBytes) {
      return corrupt(where + "bad block count " + U64(blocks));
    }
    if (hashes < 1 || hashes > kMaxBloomHashes) return corrupt(where + "bad hash count " + U64(hashes));
    if (LoadLE32(bloom + 12) != 0 || LoadLE64(bloom + 24) != 0)
      return corrupt(where + "reserved field is not 0");
    if (i + 1 < stage_count && inserted != capacity) {
      return corrupt(where + "an earlier stage must hold exactly its capacity");
    }
    if (inserted > distinct - inserted_sum) {
      return corrupt(where + "more keys inserted than distinct sightings");
    }
    // Every insertion found a clear bit (a key goes in only when no stage may contain it) and set it, so a
    // stage holds at most as many keys as set bits. This also keeps loads at <= 512 keys per block, where
    // BlockedBloomFalsePositiveRate is accurate and cheap.
    const uint64_t bits = CountSetBits(bloom + kBloomHeaderBytes, blocks * kBloomBlockBytes);
    if (inserted > bits) {
      return corrupt(where + "inserted " + U64(inserted) + " keys but only " + U64(bits) + " bits are set");
    }
    inserted_sum += inserted;
    const size_t bloom_bytes = kBloomHeaderBytes + blocks * kBloomBlockBytes;
    Result<BlockedBloom> filter =
        BlockedBloom::Deserialize(std::string_view(reinterpret_cast<const char*>(bloom), bloom_bytes));
    if (!filter.ok()) return corrupt(where + filter.status().message());
    f.stages_.push_back(Stage{capacity, target, std::move(filter).value()});
    at += kStageRecordBytes + bloom_bytes;
  }

  // Step 7: the sketch fills the rest exactly.
  if ((body - at) / 8 != counters || (body - at) % 8 != 0) {
    return corrupt("sketch is " + U64(body - at) + " bytes, header implies " + U64(counters * 8));
  }
  std::vector<uint64_t>& cells = f.cms_.mutable_counters();
  for (uint64_t c = 0; c < counters; ++c) {
    cells[c] = LoadLE64(p + at + c * 8);
    if (cells[c] > total) return corrupt("sketch counter " + U64(c) + " exceeds total_sightings");
  }
  return f;
}

Result<SeenFilter> SeenFilter::Load(Env* env, const std::string& path) {
  Result<std::string> bytes = env->ReadFile(path, kMaxSeenFilterBytes);
  if (!bytes.ok()) return bytes.status().WithContext(path);
  Result<SeenFilter> f = Deserialize(*bytes);
  if (!f.ok()) return f.status().WithContext(path);
  return f;
}

Status SeenFilter::Save(Env* env, const std::string& path) const {
  Status s = WriteFileAtomic(env, path, Serialize());
  return s.ok() ? s : s.WithContext(path);
}

}  // namespace urlguard
