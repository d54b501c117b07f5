// Copyright urlguard authors.
#include "sync/result_cache.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "platform/env.h"

namespace urlguard {
namespace {

using Answer = ResultCache::Answer;

std::string MakeTempDir() {
  const char* base = std::getenv("URLGUARD_TEST_TMPDIR");
  std::string dir = base != nullptr && *base != '\0' ? base : "/tmp";
  EXPECT_TRUE(Env::Default()->CreateDirs(dir).ok());
  std::string tmpl = dir + "/result_cache_test.XXXXXX";
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

// A digest with a chosen 4-byte prefix and a chosen tail byte.
Sha256Digest WithPrefix(uint32_t prefix, uint8_t tail) {
  Sha256Digest d{};
  d[0] = static_cast<uint8_t>(prefix >> 24);
  d[1] = static_cast<uint8_t>(prefix >> 16);
  d[2] = static_cast<uint8_t>(prefix >> 8);
  d[3] = static_cast<uint8_t>(prefix);
  d[31] = tail;
  return d;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Runs SQL on the file directly, behind the cache's back. Rows as "a|b\n".
std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string out;
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      const unsigned char* text = sqlite3_column_text(stmt, i);
      if (i > 0) out += "|";
      out += text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
    }
    out += "\n";
  }
  EXPECT_EQ(rc, SQLITE_DONE) << sqlite3_errmsg(db);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

// A second connection that holds a lock on the file until Release() (or destruction).
class LockHolder {
 public:
  // `setup_sql` runs first (outside the lock), then `BEGIN EXCLUSIVE` and `lock_sql`.
  LockHolder(const std::string& path, const std::string& setup_sql, const std::string& lock_sql) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    if (!setup_sql.empty()) Exec(setup_sql);
    Exec("BEGIN EXCLUSIVE");
    if (!lock_sql.empty()) Exec(lock_sql);
  }
  ~LockHolder() { Release(); }
  void Release() {
    if (db_ == nullptr) return;
    Exec("COMMIT");
    sqlite3_close(db_);
    db_ = nullptr;
  }

 private:
  void Exec(const std::string& sql) {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << sql << ": " << err;
    sqlite3_free(err);
  }
  sqlite3* db_ = nullptr;
};

// Env::Default() with a monotonic clock the test moves, and a RenameFile that can be made to fail.
class TestEnv : public Env {
 public:
  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return base_->ReadFile(path, max_bytes);
  }
  Result<std::unique_ptr<MappedFile>> MapReadOnly(const std::string& path) override {
    return base_->MapReadOnly(path);
  }
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool private_file) override {
    return base_->NewWritableFile(path, private_file);
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    if (fail_renames) return Status::IoError("injected rename failure");
    return base_->RenameFile(from, to);
  }
  Status RemoveFile(const std::string& path) override { return base_->RemoveFile(path); }
  Status CreateDirs(const std::string& path) override { return base_->CreateDirs(path); }
  Status SyncDir(const std::string& dir) override { return base_->SyncDir(dir); }
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override { return base_->ListDir(dir); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return base_->LockFile(path);
  }
  int64_t NowUnixSeconds() override { return base_->NowUnixSeconds(); }
  uint64_t NowMonotonicNanos() override { return monotonic_nanos; }
  void RandomBytes(void* out, size_t size) override { base_->RandomBytes(out, size); }

  std::atomic<uint64_t> monotonic_nanos{1000000000};
  std::atomic<bool> fail_renames{false};

 private:
  Env* base_ = Env::Default();
};

constexpr int64_t kNow = 1700000000;
constexpr uint64_t kReopenNanos = static_cast<uint64_t>(kCacheReopenIntervalSeconds) * 1000000000u;

class ResultCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    path_ = dir_ + "/cache.sqlite";
  }
  std::unique_ptr<ResultCache> OpenCache(size_t max_rows = kMaxCacheRows) {
    ResultCacheOptions options;
    options.max_rows = max_rows;
    options.env = &env_;
    auto cache = ResultCache::Open(path_, options);
    EXPECT_NE(cache, nullptr);
    return cache;
  }
  int64_t Rows(const std::string& table) {
    return std::stoll(RawQuery(path_, "SELECT count(*) FROM " + table));
  }

  TestEnv env_;
  std::string dir_;
  std::string path_;
};

// Golden test: the schema is an on-disk format. A change must be deliberate: bump kResultCacheSchemaVersion,
// update docs/cache-schema.md and regenerate with URLGUARD_UPDATE_GOLDEN=1.
TEST_F(ResultCacheTest, SchemaMatchesGolden) {
  auto cache = OpenCache();
  ASSERT_TRUE(cache->enabled());
  EXPECT_TRUE(cache->status().ok()) << cache->status().ToString();
  // The fixture's first line says where it comes from; the rest is the schema as SQLite reports it.
  const std::string schema =
      "-- Provenance: generated by sync/result_cache_test.cc (SchemaMatchesGolden, URLGUARD_UPDATE_GOLDEN=1) "
      "from SELECT sql FROM sqlite_master ORDER BY name.\n" +
      RawQuery(path_, "SELECT sql || ';' FROM sqlite_master ORDER BY name");
  EXPECT_EQ(kResultCacheSchemaVersion, 1);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "1\n");
  EXPECT_EQ(RawQuery(path_, "PRAGMA journal_mode"), "wal\n");

  const std::string golden_path = std::string(URLGUARD_SOURCE_DIR) + "/fixtures/golden/cache_schema.sql";
  const char* update = std::getenv("URLGUARD_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary) << schema;
    GTEST_SKIP() << "regenerated " << golden_path;
  }
  const std::string golden = ReadAll(golden_path);
  ASSERT_FALSE(golden.empty()) << golden_path << " missing; run with URLGUARD_UPDATE_GOLDEN=1";
  EXPECT_EQ(schema, golden) << "the cache schema changed: see the comment above this test";
  EXPECT_EQ(schema.find("\nNULL\n"), std::string::npos)
      << "every schema object must have its SQL (no autoindex)";
}

TEST_F(ResultCacheTest, PositiveRoundTrip) {
  auto cache = OpenCache();
  const Sha256Digest h = Sha256("evil.example/login.php");
  cache->StorePositive(h, "phishing", 7, "url", "social_engineering", kNow + 3600, kNow);

  ResultCache::Lookup found = cache->Find(h, "phishing", 7, kNow);
  EXPECT_EQ(found.answer, Answer::kMalicious);
  EXPECT_EQ(found.list, "phishing");
  EXPECT_EQ(found.threat, "social_engineering");
  // Another list, another hash, another hash with the same prefix: nothing known.
  EXPECT_EQ(cache->Find(h, "malware", 7, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(cache->Find(Sha256("good.example/"), "phishing", 7, kNow).answer, Answer::kUnknown);
  Sha256Digest sibling = h;
  sibling[31] ^= 1;
  EXPECT_EQ(cache->Find(sibling, "phishing", 7, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(cache->hits(), 1u);
  EXPECT_EQ(cache->misses(), 3u);
  EXPECT_EQ(RawQuery(path_,
                     "SELECT lower(hex(sha256)), list, list_version, layer, printf('%08x', prefix), "
                     "threat, expires_unix FROM positive"),
            ToHex(h) + "|phishing|7|url|" + ToHex(h).substr(0, 8) + "|social_engineering|" +
                std::to_string(kNow + 3600) + "\n");
}

TEST_F(ResultCacheTest, NegativeRoundTripAnswersEveryHashOfThePrefix) {
  auto cache = OpenCache();
  const Sha256Digest h = WithPrefix(0xa1b2c3d4, 1);
  cache->StoreNegative(0xa1b2c3d4, "phishing", 7, kNow + 1800, kNow);

  EXPECT_EQ(cache->Find(h, "phishing", 7, kNow).answer, Answer::kSafe);
  EXPECT_EQ(cache->Find(WithPrefix(0xa1b2c3d4, 2), "phishing", 7, kNow).answer, Answer::kSafe);
  EXPECT_EQ(cache->Find(WithPrefix(0xa1b2c3d5, 1), "phishing", 7, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(cache->Find(h, "malware", 7, kNow).answer, Answer::kUnknown);
  const ResultCache::Lookup safe = cache->Find(h, "phishing", 7, kNow);
  EXPECT_TRUE(safe.list.empty());
  EXPECT_TRUE(safe.threat.empty());
  EXPECT_EQ(cache->hits(), 3u);
  EXPECT_EQ(cache->misses(), 2u);
}

TEST_F(ResultCacheTest, PositiveEntryWinsOverTheNegativeEntryOfItsPrefix) {
  auto cache = OpenCache();
  const Sha256Digest bad = WithPrefix(0x01020304, 1);
  const Sha256Digest other = WithPrefix(0x01020304, 2);
  // One verify answer: the prefix has exactly one full hash in the list.
  cache->StorePositive(bad, "malware", 3, "domain", "malware", kNow + 3600, kNow);
  cache->StoreNegative(0x01020304, "malware", 3, kNow + 1800, kNow);
  EXPECT_EQ(cache->Find(bad, "malware", 3, kNow).answer, Answer::kMalicious);
  EXPECT_EQ(cache->Find(other, "malware", 3, kNow).answer, Answer::kSafe);
}

TEST_F(ResultCacheTest, SeveralLayersOfOneHashAnswerWithTheFirstLayer) {
  auto cache = OpenCache();
  const Sha256Digest h = Sha256("evil.example/");
  cache->StorePositive(h, "phishing", 1, "url", "url_threat", kNow + 100, kNow);
  cache->StorePositive(h, "phishing", 1, "domain", "domain_threat", kNow + 100, kNow);
  EXPECT_EQ(Rows("positive"), 2);
  EXPECT_EQ(cache->Find(h, "phishing", 1, kNow).threat, "domain_threat");  // "domain" sorts before "url"
  // The same key again replaces the entry.
  cache->StorePositive(h, "phishing", 1, "domain", "renamed", kNow + 100, kNow);
  EXPECT_EQ(Rows("positive"), 2);
  EXPECT_EQ(cache->Find(h, "phishing", 1, kNow).threat, "renamed");
}

TEST_F(ResultCacheTest, EntriesExpire) {
  auto cache = OpenCache();
  const Sha256Digest bad = WithPrefix(0x11111111, 1);
  const Sha256Digest clean = WithPrefix(0x22222222, 1);
  cache->StorePositive(bad, "phishing", 1, "url", "phish", kNow + 60, kNow);
  cache->StoreNegative(0x22222222, "phishing", 1, kNow + 30, kNow);

  EXPECT_EQ(cache->Find(bad, "phishing", 1, kNow + 59).answer, Answer::kMalicious);
  EXPECT_EQ(cache->Find(bad, "phishing", 1, kNow + 60).answer, Answer::kUnknown);
  EXPECT_EQ(cache->Find(clean, "phishing", 1, kNow + 29).answer, Answer::kSafe);
  EXPECT_EQ(cache->Find(clean, "phishing", 1, kNow + 30).answer, Answer::kUnknown);

  // A store purges what has expired by its time.
  cache->StoreNegative(0x33333333, "phishing", 1, kNow + 1000, kNow + 61);
  EXPECT_EQ(Rows("positive"), 0);
  EXPECT_EQ(Rows("negative"), 1);
}

TEST_F(ResultCacheTest, ZeroCacheDurationStoresNothing) {
  auto cache = OpenCache();
  cache->StorePositive(WithPrefix(1, 1), "phishing", 1, "url", "phish", kNow, kNow);
  cache->StoreNegative(2, "phishing", 1, kNow - 5, kNow);
  EXPECT_EQ(Rows("positive"), 0);
  EXPECT_EQ(Rows("negative"), 0);
  EXPECT_TRUE(cache->status().ok());
}

TEST_F(ResultCacheTest, ExpiredPositiveKeepsTheNegativeEntryOfItsPrefixFromAnswering) {
  auto cache = OpenCache();
  const Sha256Digest bad = WithPrefix(0x0a0b0c0d, 1);
  cache->StorePositive(bad, "phishing", 2, "url", "phish", kNow + 100, kNow);
  cache->StoreNegative(0x0a0b0c0d, "phishing", 2, kNow + 500, kNow);
  // After the positive expires, its hash must not fall through to "safe".
  EXPECT_EQ(cache->Find(bad, "phishing", 2, kNow + 200).answer, Answer::kUnknown);
  EXPECT_EQ(cache->Find(WithPrefix(0x0a0b0c0d, 2), "phishing", 2, kNow + 200).answer, Answer::kSafe);
  // Purging the expired positive (any store after its expiry) removes the negative entry with it.
  cache->StoreNegative(0x77777777, "phishing", 2, kNow + 500, kNow + 200);
  EXPECT_EQ(RawQuery(path_, "SELECT printf('%08x', prefix) FROM negative ORDER BY prefix"), "77777777\n");
  EXPECT_EQ(cache->Find(bad, "phishing", 2, kNow + 200).answer, Answer::kUnknown);
}

TEST_F(ResultCacheTest, AnswersAreKeyedToTheListVersion) {
  auto cache = OpenCache();
  const Sha256Digest clean = WithPrefix(0xcafe0001, 1);
  const Sha256Digest bad = WithPrefix(0xcafe0002, 1);
  cache->StoreNegative(0xcafe0001, "phishing", 5, kNow + 1800, kNow);
  cache->StorePositive(bad, "phishing", 5, "url", "phish", kNow + 1800, kNow);
  EXPECT_EQ(cache->Find(clean, "phishing", 5, kNow).answer, Answer::kSafe);
  EXPECT_EQ(cache->Find(bad, "phishing", 5, kNow).answer, Answer::kMalicious);
  // Version 6 of the list may have added the hash: the old "safe" must not answer for it (nor the old
  // "malicious": version 6 may have removed it).
  EXPECT_EQ(cache->Find(clean, "phishing", 6, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(cache->Find(bad, "phishing", 6, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(cache->Find(clean, "phishing", 4, kNow).answer, Answer::kUnknown);
  // Versions beyond 2^63 are stored as their 64-bit pattern and still keyed exactly.
  const uint64_t huge = (uint64_t{1} << 63) + 5;
  cache->StoreNegative(0xcafe0001, "phishing", huge, kNow + 1800, kNow);
  EXPECT_EQ(cache->Find(clean, "phishing", huge, kNow).answer, Answer::kSafe);
  EXPECT_EQ(cache->Find(clean, "phishing", huge + 1, kNow).answer, Answer::kUnknown);
}

TEST_F(ResultCacheTest, EvictsTheOldestStoredRowsAtTheCap) {
  constexpr size_t kCap = 5;
  auto cache = OpenCache(kCap);
  for (uint32_t p = 1; p <= kCap; ++p) cache->StoreNegative(p, "spam", 1, kNow + 1000, kNow);
  EXPECT_EQ(Rows("negative"), 5);
  // Refresh prefix 1: it becomes the most recently stored.
  cache->StoreNegative(1, "spam", 1, kNow + 1000, kNow);
  cache->StoreNegative(6, "spam", 1, kNow + 1000, kNow);
  EXPECT_EQ(Rows("negative"), 5);
  EXPECT_EQ(cache->Find(WithPrefix(2, 0), "spam", 1, kNow).answer, Answer::kUnknown);  // the oldest went
  for (uint32_t p : {1u, 3u, 4u, 5u, 6u}) {
    EXPECT_EQ(cache->Find(WithPrefix(p, 0), "spam", 1, kNow).answer, Answer::kSafe) << p;
  }
  for (uint32_t p = 7; p < 20; ++p) cache->StoreNegative(p, "spam", 1, kNow + 1000, kNow);
  EXPECT_EQ(Rows("negative"), 5);
  EXPECT_EQ(RawQuery(path_, "SELECT prefix FROM negative ORDER BY prefix"), "15\n16\n17\n18\n19\n");

  // The positive table has its own cap; evicting a positive drops the negative entry of its prefix.
  for (uint8_t i = 1; i <= kCap; ++i) {
    cache->StorePositive(WithPrefix(100 + i, i), "spam", 1, "url", "spam", kNow + 1000, kNow);
  }
  cache->StoreNegative(101, "spam", 1, kNow + 1000, kNow);
  EXPECT_EQ(cache->Find(WithPrefix(101, 9), "spam", 1, kNow).answer, Answer::kSafe);
  cache->StorePositive(WithPrefix(200, 1), "spam", 1, "url", "spam", kNow + 1000, kNow);
  EXPECT_EQ(Rows("positive"), 5);
  EXPECT_EQ(cache->Find(WithPrefix(101, 1), "spam", 1, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(cache->Find(WithPrefix(101, 9), "spam", 1, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(cache->Find(WithPrefix(102, 2), "spam", 1, kNow).answer, Answer::kMalicious);
}

TEST_F(ResultCacheTest, ExpiredRowsGoBeforeLiveOnes) {
  auto cache = OpenCache(3);
  cache->StoreNegative(1, "spam", 1, kNow + 10, kNow);  // oldest, expires first
  cache->StoreNegative(2, "spam", 1, kNow + 1000, kNow);
  cache->StoreNegative(3, "spam", 1, kNow + 20, kNow);
  // At kNow + 30 rows 1 and 3 have expired: they go, and nothing live is evicted.
  cache->StoreNegative(4, "spam", 1, kNow + 1000, kNow + 30);
  cache->StoreNegative(5, "spam", 1, kNow + 1000, kNow + 30);
  EXPECT_EQ(RawQuery(path_, "SELECT prefix FROM negative ORDER BY prefix"), "2\n4\n5\n");
}

TEST_F(ResultCacheTest, PersistsAndIsSharedBetweenConnections) {
  auto writer = OpenCache();
  auto reader = OpenCache();
  const Sha256Digest h = WithPrefix(0xdeadbeef, 3);
  writer->StorePositive(h, "malware", 9, "ip", "botnet", kNow + 100, kNow);
  EXPECT_EQ(reader->Find(h, "malware", 9, kNow).answer, Answer::kMalicious);
  writer.reset();
  reader.reset();
  auto again = OpenCache();
  EXPECT_EQ(again->Find(h, "malware", 9, kNow).threat, "botnet");
  EXPECT_TRUE(again->status().ok());
}

TEST_F(ResultCacheTest, ConcurrentCallsFromManyThreads) {
  auto cache = OpenCache(50);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; i < 100; ++i) {
        const uint32_t prefix = static_cast<uint32_t>(t) << 16 | i;
        cache->StoreNegative(prefix, "spam", 1, kNow + 100, kNow);
        if (cache->Find(WithPrefix(prefix, 0), "spam", 1, kNow).answer == Answer::kMalicious) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache->hits() + cache->misses(), 400u);
  EXPECT_EQ(Rows("negative"), 50);
  EXPECT_TRUE(cache->status().ok()) << cache->status().ToString();
}

TEST_F(ResultCacheTest, GarbageFileIsMovedAsideAndRebuilt) {
  const std::string garbage(10000, '\x5a');
  WriteAll(path_, garbage);
  WriteAll(path_ + "-shm", "stale shared memory");
  auto cache = OpenCache();
  EXPECT_TRUE(cache->enabled());
  EXPECT_EQ(cache->status().code(), StatusCode::kCorruption);
  EXPECT_NE(cache->status().message().find(path_ + ".bad"), std::string::npos) << cache->status().message();
  EXPECT_EQ(ReadAll(path_ + ".bad"), garbage);
  EXPECT_FALSE(Env::Default()->FileExists(path_ + "-shm") &&
               ReadAll(path_ + "-shm") == "stale shared memory");
  const Sha256Digest h = WithPrefix(0x12345678, 1);
  cache->StoreNegative(0x12345678, "phishing", 1, kNow + 100, kNow);
  EXPECT_EQ(cache->Find(h, "phishing", 1, kNow).answer, Answer::kSafe);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "1\n");
}

TEST_F(ResultCacheTest, ForeignDatabasesAreRebuilt) {
  {  // another application's database
    RawQuery(path_, "CREATE TABLE notes (body TEXT)");
    auto cache = OpenCache();
    EXPECT_TRUE(cache->enabled());
    EXPECT_EQ(cache->status().code(), StatusCode::kCorruption);
    EXPECT_NE(cache->status().message().find("some other SQLite database"), std::string::npos);
    EXPECT_EQ(RawQuery(path_ + ".bad", "SELECT name FROM sqlite_master"), "notes\n");
  }
  {  // a later schema version
    RawQuery(path_, "PRAGMA user_version=2");
    auto cache = OpenCache();
    EXPECT_TRUE(cache->enabled());
    EXPECT_NE(cache->status().message().find("schema version 2"), std::string::npos);
    EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "1\n");
  }
  {  // our version number over a damaged schema (a table dropped)
    RawQuery(path_, "DROP TABLE negative");
    auto cache = OpenCache();
    EXPECT_TRUE(cache->enabled());
    EXPECT_EQ(cache->status().code(), StatusCode::kCorruption);
    EXPECT_NE(cache->status().message().find("prepare"), std::string::npos) << cache->status().message();
    cache->StoreNegative(9, "spam", 1, kNow + 10, kNow);
    EXPECT_EQ(cache->Find(WithPrefix(9, 9), "spam", 1, kNow).answer, Answer::kSafe);
  }
}

TEST_F(ResultCacheTest, BadFileThatCannotBeMovedAsideDisablesTheCache) {
  WriteAll(path_, std::string(4096, 'x'));
  env_.fail_renames = true;
  auto cache = OpenCache();
  EXPECT_FALSE(cache->enabled());
  EXPECT_EQ(cache->status().code(), StatusCode::kIoError);
  EXPECT_NE(cache->status().message().find("injected rename failure"), std::string::npos);
  cache->StoreNegative(1, "spam", 1, kNow + 10, kNow);
  EXPECT_EQ(cache->Find(WithPrefix(1, 0), "spam", 1, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(ReadAll(path_), std::string(4096, 'x'));  // untouched

  // Once renames work again and the interval has passed, the next call rebuilds it.
  env_.fail_renames = false;
  env_.monotonic_nanos += kReopenNanos;
  cache->StoreNegative(1, "spam", 1, kNow + 10, kNow);
  EXPECT_TRUE(cache->enabled());
  EXPECT_EQ(cache->Find(WithPrefix(1, 0), "spam", 1, kNow).answer, Answer::kSafe);
  EXPECT_EQ(ReadAll(path_ + ".bad"), std::string(4096, 'x'));
}

// A file another connection holds with BEGIN EXCLUSIVE (in rollback-journal mode nobody else may even read
// it): Open() waits at most the busy timeout, then serves as a disabled cache, and retries after the
// interval. The lock is held until every call below has returned, so returning at all shows nothing waited
// for it.
TEST_F(ResultCacheTest, ExclusivelyLockedFileIsBypassedAndRetriedLater) {
  LockHolder holder(path_, "CREATE TABLE placeholder (x)", "INSERT INTO placeholder VALUES (1)");
  auto cache = OpenCache();
  EXPECT_FALSE(cache->enabled());
  EXPECT_EQ(cache->status().code(), StatusCode::kUnavailable) << cache->status().ToString();
  EXPECT_EQ(cache->Find(WithPrefix(5, 5), "spam", 1, kNow).answer, Answer::kUnknown);
  cache->StoreNegative(5, "spam", 1, kNow + 100, kNow);
  env_.monotonic_nanos += kReopenNanos;  // a retry while still locked: bypassed again
  EXPECT_EQ(cache->Find(WithPrefix(5, 5), "spam", 1, kNow).answer, Answer::kUnknown);
  EXPECT_FALSE(cache->enabled());
  EXPECT_EQ(cache->misses(), 2u);

  holder.Release();
  // Before the interval has passed, no new attempt.
  cache->StoreNegative(5, "spam", 1, kNow + 100, kNow);
  EXPECT_FALSE(cache->enabled());
  env_.monotonic_nanos += kReopenNanos;
  // The file is now some other database (the placeholder table): it is moved aside and rebuilt.
  cache->StoreNegative(5, "spam", 1, kNow + 100, kNow);
  EXPECT_TRUE(cache->enabled());
  EXPECT_EQ(cache->Find(WithPrefix(5, 5), "spam", 1, kNow).answer, Answer::kSafe);
}

// In WAL mode an exclusive transaction blocks writers only: lookups still answer, stores are dropped after
// the busy timeout, and the cache keeps working once the lock is gone.
TEST_F(ResultCacheTest, WriterLockOnTheCacheDropsStoresButNotLookups) {
  const Sha256Digest clean = WithPrefix(0x0badf00d, 1);
  {
    auto cache = OpenCache();
    cache->StoreNegative(0x0badf00d, "phishing", 4, kNow + 100, kNow);
  }
  LockHolder holder(path_, "", "DELETE FROM negative WHERE prefix = 1");
  auto cache = OpenCache();
  EXPECT_TRUE(cache->enabled());
  EXPECT_TRUE(cache->status().ok()) << cache->status().ToString();
  EXPECT_EQ(cache->Find(clean, "phishing", 4, kNow).answer, Answer::kSafe);
  cache->StoreNegative(0x0badf00e, "phishing", 4, kNow + 100, kNow);
  EXPECT_EQ(cache->status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(cache->enabled());
  EXPECT_EQ(cache->Find(WithPrefix(0x0badf00e, 1), "phishing", 4, kNow).answer, Answer::kUnknown);

  holder.Release();
  cache->StoreNegative(0x0badf00e, "phishing", 4, kNow + 100, kNow);
  EXPECT_EQ(cache->Find(WithPrefix(0x0badf00e, 1), "phishing", 4, kNow).answer, Answer::kSafe);
}

TEST_F(ResultCacheTest, MissingDirectoryIsCreated) {
  path_ = dir_ + "/not/yet/there/cache.sqlite";
  auto cache = OpenCache();
  EXPECT_TRUE(cache->enabled());
  EXPECT_TRUE(cache->status().ok()) << cache->status().ToString();
  cache->StoreNegative(42, "spam", 1, kNow + 100, kNow);
  EXPECT_EQ(cache->Find(WithPrefix(42, 0), "spam", 1, kNow).answer, Answer::kSafe);
  EXPECT_TRUE(Env::Default()->FileExists(path_));
}

TEST_F(ResultCacheTest, DirectoryThatCannotExistDisablesTheCache) {
  WriteAll(dir_ + "/plain-file", "not a directory");
  path_ = dir_ + "/plain-file/sub/cache.sqlite";
  auto cache = OpenCache();
  EXPECT_FALSE(cache->enabled());
  EXPECT_EQ(cache->status().code(), StatusCode::kIoError);
  cache->StoreNegative(42, "spam", 1, kNow + 100, kNow);
  EXPECT_EQ(cache->Find(WithPrefix(42, 0), "spam", 1, kNow).answer, Answer::kUnknown);
  EXPECT_EQ(cache->hits(), 0u);
  EXPECT_EQ(cache->misses(), 1u);
}

// Damage found while the cache is open (here: a page overwritten behind its back, found by a store) is
// repaired by an integrity check and a rebuild, not repeated on every call.
TEST_F(ResultCacheTest, DamageFoundWhileOpenTriggersARebuild) {
  auto cache = OpenCache();
  for (uint32_t p = 0; p < 2000; ++p) cache->StoreNegative(p, "spam", 1, kNow + 100, kNow);
  cache.reset();  // checkpoints the WAL into the file
  std::string bytes = ReadAll(path_);
  ASSERT_GT(bytes.size(), 8192u);
  // Keep the header page (the file still opens), wreck every page after it.
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
  WriteAll(path_, bytes);

  cache = OpenCache();
  EXPECT_TRUE(cache->enabled());
  EXPECT_TRUE(cache->status().ok()) << "the damage must be found by a later call, not by Open()";
  cache->StoreNegative(5000, "spam", 1, kNow + 100, kNow);  // meets the damage
  EXPECT_EQ(cache->status().code(), StatusCode::kCorruption) << cache->status().ToString();
  EXPECT_TRUE(Env::Default()->FileExists(path_ + ".bad"));
  cache->StoreNegative(5000, "spam", 1, kNow + 100, kNow);
  EXPECT_EQ(cache->Find(WithPrefix(5000, 0), "spam", 1, kNow).answer, Answer::kSafe);
  EXPECT_EQ(Rows("negative"), 1);
}

}  // namespace
}  // namespace urlguard
