// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/external_sort.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>

#include "publish/key_record.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

struct Rec {
  uint64_t key;
  uint64_t tie;  // larger first among equal keys: the kept duplicate
};
struct RecLess {
  bool operator()(const Rec& a, const Rec& b) const { return a.key != b.key ? a.key < b.key : a.tie > b.tie; }
};
struct RecSame {
  bool operator()(const Rec& a, const Rec& b) const { return a.key == b.key; }
};
using Sorter = ExternalSorter<Rec, RecLess, RecSame>;

// The obvious reference: sort everything in memory, keep the first of each key.
std::vector<Rec> Reference(std::vector<Rec> in) {
  std::sort(in.begin(), in.end(), RecLess());
  in.erase(std::unique(in.begin(), in.end(), RecSame()), in.end());
  return in;
}

std::vector<Rec> Drain(Sorter* s) {
  std::vector<Rec> out;
  Rec r;
  for (;;) {
    auto has = s->Next(&r);
    EXPECT_TRUE(has.ok()) << has.status().ToString();
    if (!has.ok() || !*has) break;
    out.push_back(r);
  }
  return out;
}

std::vector<Rec> Input(size_t n, uint64_t key_range, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Rec> in(n);
  for (size_t i = 0; i < n; ++i) in[i] = Rec{rng() % key_range, i};
  return in;
}

size_t FilesIn(const std::string& dir) { return Env::Default()->ListDir(dir)->size(); }

TEST(ExternalSortTest, InMemoryWhenWithinBudget) {
  testing::TempDir tmp("extsort");
  std::vector<Rec> in = Input(10000, 5000, 1);
  Sorter s(Env::Default(), {tmp.path(), "t", size_t{8} << 20, 1});
  for (const Rec& r : in) ASSERT_TRUE(s.Add(0, r).ok());
  ASSERT_TRUE(s.Finish().ok());
  EXPECT_EQ(s.spilled_runs(), 0u);
  EXPECT_EQ(FilesIn(tmp.path()), 0u);
  std::vector<Rec> out = Drain(&s);
  std::vector<Rec> want = Reference(in);
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].key, want[i].key);
    EXPECT_EQ(out[i].tie, want[i].tie);  // the later duplicate won
  }
}

TEST(ExternalSortTest, SpillsAndMergesLikeTheReference) {
  testing::TempDir tmp("extsort");
  // 1 MiB budget (the minimum) over 16-byte records: 65536 per run, so 600 k records make ~10 runs.
  std::vector<Rec> in = Input(600000, 400000, 2);
  {
    Sorter s(Env::Default(), {tmp.path(), "t", kMinSortBudget, 2});
    std::thread t2([&] {
      for (size_t i = 1; i < in.size(); i += 2) ASSERT_TRUE(s.Add(1, in[i]).ok());
    });
    for (size_t i = 0; i < in.size(); i += 2) ASSERT_TRUE(s.Add(0, in[i]).ok());
    t2.join();
    ASSERT_TRUE(s.Finish().ok());
    EXPECT_GE(s.spilled_runs(), 8u);
    EXPECT_EQ(s.added(), in.size());
    std::vector<Rec> out = Drain(&s);
    std::vector<Rec> want = Reference(in);
    ASSERT_EQ(out.size(), want.size());
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i].key, want[i].key) << i;
      ASSERT_EQ(out[i].tie, want[i].tie) << i;
    }
    EXPECT_GT(FilesIn(tmp.path()), 0u);
  }
  EXPECT_EQ(FilesIn(tmp.path()), 0u);  // the destructor removed the runs
}

TEST(ExternalSortTest, RunReaderRefusesATornRecord) {
  testing::TempDir tmp("extsort");
  std::string path = tmp.path() + "/torn.run";
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), path, std::string(20, 'x')).ok());
  EXPECT_EQ(RunFileReader::Open(path, 16, 4096).status().code(), StatusCode::kCorruption);
}

// BySha compares the digests' first 8 bytes as a number before any memcmp: the order must stay exactly memcmp's
// (then the layer), also when records share those 8 bytes or the whole digest.
TEST(KeyRecordOrder, ByShaIsMemcmpOrderThenLayer) {
  std::mt19937_64 rng(20);
  std::vector<KeyRecord> recs(2000);
  for (size_t i = 0; i < recs.size(); ++i) {
    KeyRecord& r = recs[i];
    for (auto& b : r.sha256) b = static_cast<uint8_t>(rng());
    if (i % 4 == 1) std::memcpy(r.sha256, recs[i - 1].sha256, 8);   // same prefix, later bytes differ
    if (i % 4 == 2) std::memcpy(r.sha256, recs[i - 1].sha256, 32);  // same digest: the layer decides
    if (i % 4 == 3) r.sha256[0] = static_cast<uint8_t>(0x80 | r.sha256[0]);  // high bit: the byte order matters
    r.layer = static_cast<uint8_t>(rng() % 3);
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    // Neighbours (which share a prefix or digest by construction) both ways, and a spread of others.
    for (size_t j : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, recs.size() - 1, recs.size() - 2, recs.size() - 3,
                     size_t{97}, size_t{501}, size_t{1303}}) {
      const KeyRecord& a = recs[i];
      const KeyRecord& b = recs[(i + j) % recs.size()];
      const int c = std::memcmp(a.sha256, b.sha256, 32);
      const bool want = c != 0 ? c < 0 : a.layer < b.layer;
      ASSERT_EQ(BySha()(a, b), want) << i << " " << j;
    }
  }
}

}  // namespace
}  // namespace urlguard
