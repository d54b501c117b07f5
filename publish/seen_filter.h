// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// SeenFilter: the publisher's persistent "have we seen this entry before?" filter, with approximate counts
// (docs/architecture.md §8). urlguard-publish records the key of every entry it ingests, run after run, and reports
// per run how many entries are new and how many were seen in an earlier run -- also for entries that were
// removed from the lists long ago -- without storing the history itself. `urlguard-publish seen` answers
// "never" or "seen about N times" for given entries. The byte format is docs/seen-filter-format.md.
//
// Keys. An entry's key is the first 8 bytes, big-endian, of SHA-256 of its canonical expression
// (SeenKeyFor below; url/entry.h maps entry text to the expression). 64-bit keys collide with probability
// about n^2 / 2^65: 3e-8 for a billion distinct entries, far below the filter's own rate.
//
// Membership: a scalable chain of blocked Bloom filters (Almeida, Baquero, Preguica, Hutchison, "Scalable
// Bloom Filters", Information Processing Letters 101(6), 2007). The history is not stored, so a filter that
// fills past its design capacity cannot be rebuilt larger; instead, when the active stage holds its capacity,
// a new stage is appended and new keys go there. Stage i has capacity n0 * s^i and false-positive target
// p_i = P (1 - r) r^i (s = growth factor, r = tightening ratio), each sized with SizeBlockedBloomForTarget so
// that its rate *with the blocking penalty* is at most p_i when it holds n_i keys. A key is "maybe seen" when
// any stage may contain it, so the chain's false-positive rate is
//     1 - prod_i (1 - p_i)  <=  sum_i p_i  =  P (1 - r^S)  <  P      (Almeida et al. §4, eq. 3)
// however far the filter grows. The paper recommends s = 2 and r between 0.8 and 0.9 for growth by orders of
// magnitude; the default r = 0.8 costs about 17.7 bits per entry at 1x growth and 19.2 at 16x (classic
// formulas, P = 1e-3), where r = 0.5 costs 15.8 and 20.4: a few bits up front buy flat growth.
// Only keys absent from every stage are inserted (into the newest), so stage loads count distinct keys.
// Growth stops at max_stages, at kMaxSeenFilterBytes, at kMaxSeenCapacity, or when the next target would
// fall below kMinStageFpRate (all permanent); from then on the last stage keeps absorbing keys (zero false
// negatives are never traded away) and saturated() turns true: its rate then rises above P, which
// expected_fp_rate() reports honestly.
//
// Counts: a count-min sketch (Cormode, Muthukrishnan, "An improved data stream summary: the count-min sketch
// and its applications", J. Algorithms 55(1), 2005) beside the chain, with conservative update (Estan,
// Varghese, SIGCOMM 2002): a sighting raises only the counters that equal the current minimum. See
// CountMinSketch below for dimensions and the error bound.
//
// The two are combined: a key is reported "seen before" only when the Bloom chain may contain it AND its
// sketch estimate is positive. The sketch never underestimates, so a recorded key passes both tests (zero
// false negatives), and an unseen key passes only if it is a Bloom false positive (rate < P as above) whose d
// counters all happen to be nonzero too -- the combination can only lower the false-positive rate.
//
// Insertion order. A scalable chain fills its stages in the order keys arrive, and a blocked Bloom stage picks a
// key's block from the key's high bits; so a batch recorded in ascending key order sends a contiguous key range to
// each stage, all into the same fraction of its blocks. Measured before this was fixed (publisher parameters, one
// run of N keys in ascending order, as the publisher's spool delivers them): false-positive rate 2.9e-4 at 1.5 M,
// 1.5e-2 at 3 M, 0.22 at 10 M keys where expected_fp_rate() said 1.9e-5 .. 4.7e-5 (stage 0's blocks for keys
// below 2^64 / 10 held ten times their load). So every batch path (RecordRun, RecordDeferringBloom +
// InsertDeferred) inserts a batch's new keys in ascending SeenInsertionRank order, a bijective mix of the key that
// neither the block choice nor the in-block bits use: each stage then receives a uniform sample of the key space,
// whatever order the caller had. Single Record calls insert at once: a caller of Record must not feed a large
// batch in key order (use the batch paths). The byte format is unchanged; a seen.bin filled by a large sorted run
// before this fix keeps its overloaded blocks (the history to rebuild it is not stored; see
// docs/seen-filter-format.md §1).
//
// Thread safety: const methods may run concurrently; Record/RecordRun need external synchronization.
#ifndef URLGUARD_PUBLISH_SEEN_FILTER_H_
#define URLGUARD_PUBLISH_SEEN_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/blocked_bloom.h"
#include "core/sha256.h"
#include "platform/env.h"
#include "urlguard/status.h"

namespace urlguard {

// ---- caps and limits (docs/seen-filter-format.md §5) ------------------------------------------------------
// Largest serialized filter: Load reads no more, Deserialize refuses more, and the chain stops growing before
// Serialize would produce more (so Save never writes a file Load refuses).
constexpr size_t kMaxSeenFilterBytes = size_t{1} << 30;
constexpr uint32_t kMaxSeenStages = 32;
constexpr uint64_t kMaxSeenCapacity = uint64_t{1} << 40;  // any stage's design capacity
constexpr double kMinSeenFpRate = 1e-9;                   // the design bound P
constexpr double kMaxSeenFpRate = 0.5;
// The smallest per-stage target: SizeBlockedBloomForTarget meets targets down to here (below 1e-6 the
// blocking penalty makes stages expensive: about 200 bits per key at 1e-12).
constexpr double kMinStageFpRate = 1e-12;
constexpr uint32_t kMinSeenGrowth = 2;
constexpr uint32_t kMaxSeenGrowth = 8;
constexpr double kMinSeenTightening = 0.5;
constexpr double kMaxSeenTightening = 0.95;
constexpr uint32_t kMaxCmsDepth = 32;                        // delta >= e^-32
constexpr uint64_t kMaxCmsCounters = uint64_t{1} << 26;      // width * depth: 512 MiB of counters
constexpr uint64_t kDefaultCmsSeed = 0x7365656e2d636d73ull;  // "seen-cms"

// The key of an entry: the first 8 bytes, big-endian, of SHA-256(expression). Thread-safe, pure.
inline uint64_t SeenKeyFor(std::string_view expression) { return DigestPrefix64(Sha256(expression)); }

// The order in which a batch's new keys enter the Bloom chain (see "Insertion order" above): murmur3's 64-bit
// finalizer (fmix64), a bijection unrelated to the block choice (the key's high bits) and to the in-block bits
// (splitmix64's finalizer of the key plus multiples of the golden ratio). Thread-safe, pure.
uint64_t SeenInsertionRank(uint64_t key);
// Its inverse: SeenKeyFromRank(SeenInsertionRank(k)) == k, so a batch sorts ranks, not (rank, key) pairs.
uint64_t SeenKeyFromRank(uint64_t rank);

// ---- CountMinSketch ---------------------------------------------------------------------------------------
// A count-min sketch of 64-bit keys with conservative update.
//
// Dimensions (Cormode & Muthukrishnan §3, the classic formulas):
//     width  w = ceil(e / eps),   depth  d = ceil(ln(1 / delta)).
// Bound: for any key with true count c, after N sightings in total,
//     c  <=  Estimate(key)  <=  c + eps * N    with probability at least 1 - delta
// (over the choice of the d hash functions; per row the expected excess is at most N / w = eps N / e, so by
// Markov a row exceeds eps N with probability at most 1/e, and all d rows with at most e^-d <= delta).
// Conservative update keeps the lower bound and never makes an estimate larger than the plain update would,
// so the bound holds unchanged; on skewed streams it is several times tighter in practice.
// Row j hashes with h_j(x) = ((a_j x + b_j) mod (2^61 - 1)) mod w, the pairwise-independent family the
// analysis assumes (Carter & Wegman), with (a_j, b_j) derived from `seed` by splitmix64. Counters are u64
// and never exceed N; they saturate at 2^64 - 1 instead of wrapping (600 years at 1e9 sightings a second).
//
// Thread safety: const methods may run concurrently; Add needs external synchronization.
class CountMinSketch {
 public:
  // w = ceil(e / eps) and d = ceil(ln(1 / delta)) (d at least 1). kInvalidArgument unless 0 < eps < 1 and
  // 0 < delta < 1, and the dimensions are within kMaxCmsDepth and kMaxCmsCounters.
  static Result<CountMinSketch> Create(double eps, double delta, uint64_t seed = kDefaultCmsSeed);
  // Dimension helpers (no range checks beyond avoiding overflow: out-of-range inputs give values Create
  // refuses).
  static uint64_t WidthFor(double eps);
  static uint32_t DepthFor(double delta);

  // Explicit dimensions. Preconditions (asserted): width >= 1, 1 <= depth <= kMaxCmsDepth,
  // width * depth <= kMaxCmsCounters.
  CountMinSketch(uint64_t width, uint32_t depth, uint64_t seed);

  // Records one sighting of `key` (conservative update). Returns the estimate before it.
  uint64_t Add(uint64_t key);
  // The estimated count of `key`: never below the true count; see the bound above.
  uint64_t Estimate(uint64_t key) const;
  // Starts loading `key`'s counters into the cache (a hint only; changes nothing).
  void Prefetch(uint64_t key) const;

  uint64_t width() const { return width_; }
  uint32_t depth() const { return depth_; }
  uint64_t seed() const { return seed_; }
  // Row-major: counter (row j, column i) is counters()[j * width() + i].
  const std::vector<uint64_t>& counters() const { return counters_; }
  std::vector<uint64_t>& mutable_counters() { return counters_; }

 private:
  uint64_t Column(uint32_t row, uint64_t key) const;

  uint64_t width_;
  uint32_t depth_;
  uint64_t seed_;
  std::vector<uint64_t> a_, b_;  // per-row hash parameters, derived from seed_
  std::vector<uint64_t> counters_;
};

// ---- SeenFilter -------------------------------------------------------------------------------------------
struct SeenFilterOptions {
  uint64_t initial_capacity = 1'000'000;  // n0: keys the first stage holds at its target, 1..kMaxSeenCapacity
  double fp_rate = 1e-3;                  // P: bound on the chain's false-positive rate, at any size
  double cms_eps = 1e-5;                  // count error bound, as a fraction of all sightings
  double cms_delta = 0.01;                // probability that a count exceeds its bound
  uint32_t growth_factor = 2;             // s, kMinSeenGrowth..kMaxSeenGrowth
  double tightening_ratio = 0.8;          // r, kMinSeenTightening..kMaxSeenTightening
  uint32_t max_stages = kMaxSeenStages;   // 1..kMaxSeenStages
  uint64_t cms_seed = kDefaultCmsSeed;
};

// Geometry of one Bloom stage, for reports.
struct SeenStageInfo {
  uint64_t capacity = 0;  // keys it holds at its target rate
  double fp_target = 0;   // p_i
  uint64_t blocks = 0;    // 64-byte blocks
  uint32_t hashes = 0;    // bits set per key
  uint64_t inserted = 0;  // distinct keys inserted (may exceed capacity only in the last stage, saturated)
  double expected_fp_rate = 0;  // at its current load, blocking penalty included
};

// What Query/Record/RecordRun report for one key.
struct Sighting {
  bool seen_before = false;          // false means certainly never recorded (zero false negatives)
  uint64_t approx_count_before = 0;  // 0 when !seen_before; else the sketch estimate, >= the true count
};

// What RecordRun reports for one run.
struct SeenRunSummary {
  uint64_t keys = 0;         // input keys, duplicates included
  uint64_t distinct = 0;     // distinct keys in the run
  uint64_t new_keys = 0;     // distinct keys not seen in any earlier run
  uint64_t seen_before = 0;  // distinct keys seen in an earlier run (may include false positives, rate < P)
  uint64_t duplicates = 0;   // keys - distinct: repeats inside the run, not counted as sightings
};

class SeenFilter {
 public:
  using Sighting = ::urlguard::Sighting;  // also reachable as SeenFilter::Sighting

  // The house signature: defaults for growth. Preconditions (asserted; a bug to violate): the parameters
  // pass CheckOptions. Callers taking them from users call the overload below instead.
  static SeenFilter Create(uint64_t initial_capacity, double fp_rate, double cms_eps, double cms_delta);
  // kInvalidArgument naming the first parameter out of range (see SeenFilterOptions), or when the growth
  // schedule would need a stage target below kMinStageFpRate (P (1 - r) r^(max_stages - 1));
  // kResourceExhausted when the empty filter alone would serialize to more than kMaxSeenFilterBytes.
  static Result<SeenFilter> Create(const SeenFilterOptions& options);
  static Status CheckOptions(const SeenFilterOptions& options);

  SeenFilter(SeenFilter&&) = default;
  SeenFilter& operator=(SeenFilter&&) = default;
  SeenFilter(const SeenFilter&) = delete;
  SeenFilter& operator=(const SeenFilter&) = delete;

  // Records one sighting of `key` and returns the state before it. Two Record calls for the same key are two
  // sightings: the second reports seen_before. To ingest a run in which a feed may list an entry twice, use
  // RecordRun.
  Sighting Record(uint64_t key);
  // The state for `key` now, without recording anything.
  Sighting Query(uint64_t key) const;
  // Starts loading the memory Record(key) and Query(key) read (every stage's block and, with `sketch`, the sketch's
  // counters) into the cache, a hint that changes nothing: a caller with many keys prefetches a few keys ahead, so
  // the random reads of several keys overlap instead of each waiting on its own misses. Query reads the sketch only
  // for keys some stage may contain (on a first run, almost none): a caller of Query alone passes sketch = false.
  void Prefetch(uint64_t key, bool sketch = true) const;

  // Ingests one publisher run. Every distinct key of `keys` is recorded exactly once (one sighting per run:
  // a count is the number of runs that listed the entry), and every position reports the state *before the
  // run*, so a key listed twice in one run is not "seen before" unless an earlier run listed it. Queries all
  // distinct keys first, then records them, so keys of the same run never make each other look seen (not even
  // through a Bloom false positive). When `sightings` is not null it is resized to keys.size() and filled
  // in input order. Allocates O(keys.size()).
  SeenRunSummary RecordRun(std::span<const uint64_t> keys, std::vector<Sighting>* sightings = nullptr);

  // The two halves of recording a batch of distinct keys for a caller that streams them (the publisher reads its run
  // from a spool file). RecordDeferringBloom(key, pending) records the sighting in the sketch and the counts at once,
  // like Record, and appends the key to *pending when no Bloom stage may contain it, instead of inserting it;
  // InsertDeferred(pending) then inserts the pending keys in SeenInsertionRank order and clears *pending. Between the
  // two calls the filter answers "never" for pending keys: call InsertDeferred before any Query, Serialize or Save.
  // A key must appear at most once per batch (the batch is one sighting per key). Memory: 8 bytes per pending key.
  Sighting RecordDeferringBloom(uint64_t key, std::vector<uint64_t>* pending);
  void InsertDeferred(std::vector<uint64_t>* pending);

  uint64_t total_sightings() const { return total_; }  // N: Record calls (RecordRun: distinct keys per run)
  // Sightings that were reported as not seen before: the distinct keys, undercounted only by false positives
  // (a fraction below P of them).
  uint64_t distinct_estimate() const { return distinct_; }

  double fp_rate_bound() const { return options_.fp_rate; }  // P, valid while !saturated()
  // The chain's false-positive rate at its current loads: 1 - prod_i (1 - rate_i), blocking penalty included.
  // At most fp_rate_bound() unless saturated(). (The sketch test can only lower the real rate further.)
  double expected_fp_rate() const;
  // True when the last stage holds more than its capacity and no stage can be added (max_stages, byte cap or
  // target floor): the rate is then above P and keeps rising.
  bool saturated() const;
  size_t stage_count() const { return stages_.size(); }
  std::vector<SeenStageInfo> stages() const;
  const SeenFilterOptions& options() const { return options_; }
  const CountMinSketch& sketch() const { return cms_; }
  size_t serialized_size() const;

  // The bytes of docs/seen-filter-format.md. Deterministic: equal filters give equal bytes.
  std::string Serialize() const;
  // Parses Serialize() bytes. kResourceExhausted when larger than kMaxSeenFilterBytes; kCorruption naming the
  // field for anything else malformed (the trailing SHA-256 is checked before any field is interpreted, so a
  // truncation or a flipped bit is always refused). Never reads outside `bytes`; allocates only what the
  // bytes can back. Accepted bytes re-serialize to themselves.
  static Result<SeenFilter> Deserialize(std::string_view bytes);

  // Reads and parses `path` through `env`. kNotFound when it does not exist (the caller then Creates a new
  // filter), kResourceExhausted over kMaxSeenFilterBytes, kIoError, or Deserialize's kCorruption, each with
  // the path as context.
  static Result<SeenFilter> Load(Env* env, const std::string& path);
  // Writes Serialize() to `path` atomically (WriteFileAtomic: a crash leaves the old file or the new one).
  // kIoError / kResourceExhausted from the Env with the path as context.
  Status Save(Env* env, const std::string& path) const;

 private:
  struct Stage {
    uint64_t capacity;
    double fp_target;
    BlockedBloom bloom;
  };

  SeenFilter(const SeenFilterOptions& options, CountMinSketch cms);
  bool BloomMayContain(uint64_t key) const;
  // Appends stage stages_.size() when the schedule, max_stages and the byte cap allow. False otherwise.
  bool TryGrow();
  void InsertBloom(uint64_t key);

  SeenFilterOptions options_;
  std::vector<Stage> stages_;  // stages_.back() is the active one
  CountMinSketch cms_;
  uint64_t total_ = 0;
  uint64_t distinct_ = 0;
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_SEEN_FILTER_H_
