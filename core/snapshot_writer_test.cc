// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "core/snapshot_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "core/blocked_bloom.h"
#include "core/snapshot.h"
#include "platform/file_sink.h"
#include "platform/env.h"
#include "platform/fault_injection_env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using testing::ReadFileOrDie;
using testing::TempDir;

std::vector<uint64_t> RandomSorted(std::mt19937_64& rng, uint64_t n, uint64_t universe) {
  std::set<uint64_t> s;
  while (s.size() < n) s.insert(rng() % universe);
  return {s.begin(), s.end()};
}

// Random content: 1-3 layers of random kinds, sizes from empty to a few thousand (small and huge universes,
// so r spans 0 to 60 bits), ip prefix bits, now and then a blocked Bloom layer.
// A snapshot of one layer (default kind) with `n` random fingerprints in a 2^40 universe.
SnapshotContent OneRandomLayer(std::mt19937_64& rng, const std::string& list_name, uint64_t version, uint64_t n) {
  SnapshotContent c;
  c.list_name = list_name;
  c.version = version;
  LayerContent l;
  l.universe = uint64_t{1} << 40;
  l.fingerprints = RandomSorted(rng, n, l.universe);
  l.entries = l.fingerprints.size();
  c.layers.push_back(l);
  return c;
}

SnapshotContent RandomContent(std::mt19937_64& rng) {
  SnapshotContent c;
  c.list_name = "list-" + std::to_string(rng() % 1000);
  c.version = rng() % 100000 + 1;
  c.created_unix = static_cast<int64_t>(rng() % 2000000000);
  c.key_hash = rng() % 2 == 0 ? KeyHashKind::kXxh3 : KeyHashKind::kSha256Prefix;  // format versions 2 and 1
  std::vector<int> kinds = {0, 1, 2};
  std::shuffle(kinds.begin(), kinds.end(), rng);
  const int count = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < count; ++i) {
    LayerContent l;
    l.kind = static_cast<LayerKind>(kinds[i]);
    if (rng() % 5 == 0) {
      BlockedBloom bloom(1 + rng() % 8, 1 + static_cast<uint32_t>(rng() % 8));
      const uint64_t keys = rng() % 200;
      for (uint64_t k = 0; k < keys; ++k) bloom.Insert(rng());
      l.filter = FilterKind::kBlockedBloom;
      l.bloom_body = bloom.Serialize();
      l.entries = keys;
    } else {
      const uint64_t sizes[] = {0, 1, 2, 63, 64, 129, 1000, 5000};
      const uint64_t n = sizes[rng() % 8];
      const uint64_t universes[] = {n + 1, n * 3 + 7, n * 16384 + 1, uint64_t{1} << 37, ~uint64_t{0} >> 3};
      l.universe = std::max<uint64_t>(1, universes[rng() % 5]);
      l.fingerprints = RandomSorted(rng, n, l.universe);
      l.entries = n;
    }
    if (l.kind == LayerKind::kIp) {
      l.ip_prefixes.AddV4(static_cast<int>(rng() % 33));
      l.ip_prefixes.AddV6(static_cast<int>(rng() % 129));
    }
    c.layers.push_back(std::move(l));
  }
  return c;
}

std::vector<StreamLayerSpec> SpecsOf(SnapshotContent* c) {
  std::sort(c->layers.begin(), c->layers.end(),
            [](const LayerContent& a, const LayerContent& b) { return a.kind < b.kind; });
  std::vector<StreamLayerSpec> specs;
  for (const LayerContent& l : c->layers) {
    StreamLayerSpec s;
    s.kind = l.kind;
    s.filter = l.filter;
    s.universe = l.universe;
    s.entries = l.entries;
    s.ip_prefixes = l.ip_prefixes;
    s.bloom_body = l.bloom_body;
    specs.push_back(s);
  }
  return specs;
}

// Streams `c` (sorted first) through a SnapshotWriter into `out` with `spills`; the digest, or the first error.
Result<Sha256Digest> StreamTo(ByteSink* out, SpillFactory* spills, SnapshotContent c,
                              const SnapshotWriterOptions& options) {
  const std::vector<StreamLayerSpec> specs = SpecsOf(&c);
  URLGUARD_ASSIGN_OR_RETURN(auto w, SnapshotWriter::Create(out, spills, {c.list_name, c.version, c.created_unix,
                                                                         c.key_hash},
                                                           specs, options));
  for (size_t i = 0; i < c.layers.size(); ++i) {
    if (i > 0) URLGUARD_RETURN_IF_ERROR(w->NextLayer());
    for (uint64_t fp : c.layers[i].fingerprints) URLGUARD_RETURN_IF_ERROR(w->Add(fp));
  }
  return w->Finish();
}

// What the writer's callers (publish/publisher.cc, sync/apply.cc) do: `path`.tmp and its spills through the
// Env (platform/file_sink.h), then sync, close and rename; the temporary file removed on any failure. So the Env's
// errors reach the writer as they reach the product.
Result<Sha256Digest> StreamContent(Env* env, const std::string& path, SnapshotContent c,
                                   const SnapshotWriterOptions& options) {
  const std::string tmp = path + ".tmp";
  URLGUARD_ASSIGN_OR_RETURN(auto file, CreateTempFile(env, tmp));
  WritableFileSink sink(file.get());
  TempFileSpills spills(env, tmp);
  Result<Sha256Digest> digest = StreamTo(&sink, &spills, std::move(c), options);
  Status s = digest.status();
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  file.reset();
  if (s.ok()) s = env->RenameFile(tmp, path);
  if (!s.ok()) {
    (void)env->RemoveFile(tmp);
    return s;
  }
  return digest;
}

// In memory: a string as the output, strings as the spills.
class StringSink final : public ByteSink {
 public:
  Status Append(std::string_view bytes) override {
    bytes_.append(bytes);
    return Status::Ok();
  }
  std::string bytes_;
};

class StringSpills final : public SpillFactory {
 public:
  class StringSpill final : public Spill {
   public:
    explicit StringSpill(StringSpills* owner) : owner_(owner) { ++owner_->live; }
    ~StringSpill() override { --owner_->live; }
    Status Append(std::string_view bytes) override {
      bytes_.append(bytes);
      owner_->bytes += bytes.size();
      return Status::Ok();
    }
    Status CopyTo(ByteSink* out) override {
      // Odd pieces: the writer must not depend on how a spill comes back.
      for (size_t off = 0; off < bytes_.size(); off += 7) {
        URLGUARD_RETURN_IF_ERROR(out->Append(std::string_view(bytes_).substr(off, 7)));
      }
      return Status::Ok();
    }

   private:
    StringSpills* const owner_;
    std::string bytes_;
  };
  Result<std::unique_ptr<Spill>> NewSpill(std::string_view name) override {
    names.emplace_back(name);
    return std::unique_ptr<Spill>(new StringSpill(this));
  }
  std::vector<std::string> names;  // of every spill made, in order
  int live = 0;                    // spills not yet destroyed
  uint64_t bytes = 0;              // appended to all spills
};

TEST(SnapshotWriter, ByteIdenticalToBuildSnapshotOnRandomContents) {
  TempDir dir("snapshot-writer");
  std::mt19937_64 rng(20261124);
  for (int trial = 0; trial < 300; ++trial) {
    SnapshotContent c = RandomContent(rng);
    auto built = BuildSnapshot(c);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    SnapshotWriterOptions options;
    // Tiny buffers force every region through its spill file; large ones keep everything in memory.
    options.buffer_bytes = trial % 2 == 0 ? 8 + rng() % 200 : size_t{1} << 20;
    const std::string path = dir.Join("t" + std::to_string(trial) + ".ugs");
    auto digest = StreamContent(Env::Default(), path, c, options);
    ASSERT_TRUE(digest.ok()) << digest.status().ToString();
    const std::string streamed = ReadFileOrDie(path);
    ASSERT_EQ(streamed.size(), built->size()) << "trial " << trial;
    ASSERT_TRUE(streamed == *built) << "trial " << trial;
    EXPECT_EQ(0, std::memcmp(digest->data(), built->data() + built->size() - 32, 32));
  }
  // Nothing but the finished files is left behind.
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().extension(), ".ugs") << e.path();
  }
}

TEST(SnapshotWriter, CursorDecodesWhatTheEncoderWrote) {
  std::mt19937_64 rng(7);
  for (uint64_t n : {0, 1, 100, 4096, 30000}) {
    for (uint64_t universe : {n + 1, n * 20000 + 3, uint64_t{1} << 62}) {
      std::vector<uint64_t> fps = RandomSorted(rng, n, universe);
      std::string body = BuildFingerprintSet(fps, universe);
      std::vector<uint64_t> aligned((body.size() + 7) / 8);
      std::memcpy(aligned.data(), body.data(), body.size());
      auto view = FingerprintSetView::Open(reinterpret_cast<const uint8_t*>(aligned.data()), body.size());
      ASSERT_TRUE(view.ok()) << view.status().ToString();
      FingerprintSetCursor cursor(*view);
      std::vector<uint64_t> got;
      uint64_t fp = 0;
      while (cursor.Next(&fp)) got.push_back(fp);
      EXPECT_EQ(got, fps) << "n " << n << " universe " << universe;
      EXPECT_EQ(cursor.position(), n);
      EXPECT_LE(cursor.RemaindersDone().size, view->size() * 8);
    }
  }
}

TEST(SnapshotWriter, RefusesBadInputAndLeavesNoFiles) {
  TempDir dir("snapshot-writer-bad");
  // Spill files where a caller puts them; the output in memory (nothing here writes enough to spill).
  TempFileSpills spills(Env::Default(), dir.Join("x.ugs.tmp"));
  StringSink out;
  StreamLayerSpec spec;
  spec.kind = LayerKind::kUrl;
  spec.universe = 1000;
  spec.entries = 3;
  {
    auto w = SnapshotWriter::Create(&out, &spills, {"x", 1, 0}, {spec});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add(5).ok());
    EXPECT_EQ((*w)->Add(5).code(), StatusCode::kInvalidArgument);  // not ascending
    EXPECT_EQ((*w)->Add(6).code(), StatusCode::kInvalidArgument);  // dead after the first error
    EXPECT_FALSE((*w)->Finish().ok());
  }
  {
    auto w = SnapshotWriter::Create(&out, &spills, {"x", 1, 0}, {spec});
    ASSERT_TRUE(w.ok());
    EXPECT_EQ((*w)->Add(1000).code(), StatusCode::kInvalidArgument);  // not below the universe
  }
  {
    auto w = SnapshotWriter::Create(&out, &spills, {"x", 1, 0}, {spec});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add(1).ok());
    auto f = (*w)->Finish();  // 1 of 3
    EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(f.status().message().find("1 of the declared 3"), std::string::npos) << f.status().ToString();
  }
  {
    auto w = SnapshotWriter::Create(&out, &spills, {"x", 1, 0}, {spec});
    ASSERT_TRUE(w.ok());
    for (uint64_t fp : {1, 2, 3}) ASSERT_TRUE((*w)->Add(fp).ok());
    EXPECT_EQ((*w)->Add(4).code(), StatusCode::kInvalidArgument);  // one more than declared
  }
  StreamLayerSpec dup = spec;
  EXPECT_EQ(SnapshotWriter::Create(&out, &spills, {"x", 1, 0}, {spec, dup}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(SnapshotWriter::Create(&out, &spills, {"BAD", 1, 0}, {spec}).status().code(),
            StatusCode::kInvalidArgument);
  StreamLayerSpec prefixes = spec;
  prefixes.ip_prefixes.AddV4(24);
  EXPECT_EQ(SnapshotWriter::Create(&out, &spills, {"x", 1, 0}, {prefixes}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(SnapshotWriter, DiskFullAtAnyAppendLeavesNoFiles) {
  TempDir dir("snapshot-writer-full");
  std::mt19937_64 rng(99);
  SnapshotContent c = OneRandomLayer(rng, "full", 3, 20000);
  c.layers[0].kind = LayerKind::kDomain;
  const std::string expected = *BuildSnapshot(c);
  SnapshotWriterOptions options;
  options.buffer_bytes = 4096;  // many appends, to the file and to both spills
  for (uint64_t space : {uint64_t{0}, uint64_t{100}, uint64_t{5000}, uint64_t{20000}, uint64_t{40000},
                         uint64_t{expected.size() - 1}}) {
    FaultInjectionEnv env;
    env.SetDiskSpace(space);
    auto r = StreamContent(&env, dir.Join("full.ugs"), c, options);
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted) << space << " " << r.status().ToString();
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "after a full disk at " << space;
  }
  FaultInjectionEnv env;
  env.SetDiskSpace(expected.size() * 3);  // the spills need room too, then they are removed
  auto r = StreamContent(&env, dir.Join("full.ugs"), c, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadFileOrDie(dir.Join("full.ugs")), expected);
}

TEST(SnapshotWriter, WritesOnlyToTheSinkAndSpillsItIsHanded) {
  // Pure: the same bytes as BuildSnapshot with a string as the output and strings as the spills, whatever the
  // buffer size; each spill is made on first need and destroyed when its layer ends.
  std::mt19937_64 rng(5150);
  for (int trial = 0; trial < 100; ++trial) {
    SnapshotContent c = RandomContent(rng);
    auto built = BuildSnapshot(c);
    ASSERT_TRUE(built.ok()) << built.status().ToString();
    SnapshotWriterOptions options;
    options.buffer_bytes = trial % 2 == 0 ? 8 + rng() % 200 : size_t{1} << 20;
    StringSink out;
    StringSpills spills;
    auto digest = StreamTo(&out, &spills, c, options);
    ASSERT_TRUE(digest.ok()) << digest.status().ToString();
    ASSERT_TRUE(out.bytes_ == *built) << "trial " << trial;
    EXPECT_EQ(0, std::memcmp(digest->data(), built->data() + built->size() - 32, 32));
    EXPECT_EQ(spills.live, 0) << "trial " << trial;
    for (const std::string& name : spills.names) EXPECT_TRUE(name == "unary" || name == "rem") << name;
    if (options.buffer_bytes > (size_t{1} << 16)) {
      EXPECT_TRUE(spills.names.empty()) << "trial " << trial;
    }
  }
  // A layer large enough for tiny buffers to spill both regions.
  SnapshotContent c = OneRandomLayer(rng, "spill", 1, 5000);
  SnapshotWriterOptions options;
  options.buffer_bytes = 256;
  StringSink out;
  StringSpills spills;
  ASSERT_TRUE(StreamTo(&out, &spills, c, options).ok());
  EXPECT_EQ(out.bytes_, *BuildSnapshot(c));
  EXPECT_EQ(std::set<std::string>(spills.names.begin(), spills.names.end()),
            (std::set<std::string>{"unary", "rem"}));
  EXPECT_EQ(spills.names.size(), 2u);
  EXPECT_GT(spills.bytes, 5000u);
}

TEST(SnapshotWriter, ASinkErrorComesBackUnchangedAndKillsTheWriter) {
  class FailingSink final : public ByteSink {
   public:
    Status Append(std::string_view bytes) override {
      if (written_ + bytes.size() > 3000) return Status::IoError("injected: sink full");
      written_ += bytes.size();
      return Status::Ok();
    }
    uint64_t written_ = 0;
  };
  std::mt19937_64 rng(11);
  SnapshotContent c = OneRandomLayer(rng, "sink", 1, 5000);
  FailingSink out;
  StringSpills spills;
  SnapshotWriterOptions options;
  options.buffer_bytes = 512;
  auto r = StreamTo(&out, &spills, c, options);
  EXPECT_EQ(r.status().code(), StatusCode::kIoError) << r.status().ToString();
  EXPECT_EQ(r.status().message(), "injected: sink full");
  EXPECT_EQ(spills.live, 0);
}

}  // namespace
}  // namespace urlguard
