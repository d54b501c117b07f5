// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Cache-Control of the repository's public files (docs/repository-layout.md): only the versioned files that
// are written once are immutable; whatever is rewritten in place (manifest.json, manifest.sig, LIST.rpz) or
// unknown must be revalidated, or a cache would keep serving an old RPZ zone or manifest for a year.
#include "server/static_files.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "platform/env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

constexpr char kImmutable[] = "public, max-age=31536000, immutable";

TEST(IsImmutableFileNameTest, OnlyVersionedSnapshotsAndDiffs) {
  for (const char* name :
       {"snapshot-1.ugs.z", "snapshot-18446744073709551615.ugs.z", "diff-1-2.ugd.z", "diff-41-47.ugd.z"}) {
    EXPECT_TRUE(IsImmutableFileName(name)) << name;
  }
  for (const char* name : {"manifest.json",
                           "manifest.sig",
                           "phishing.rpz",
                           "snapshot.rpz",
                           "snapshot-1.rpz",
                           "diff-1-2.rpz",
                           "snapshot-.ugs.z",
                           "snapshot-1.ugs",
                           "snapshot-1.ugs.z.tmp",
                           "snapshot-x.ugs.z",
                           "snapshot-1.ugd.z",
                           "diff-1.ugd.z",
                           "diff-1-.ugd.z",
                           "diff--2.ugd.z",
                           "diff-1-2.ugs.z",
                           "diff-1-2.ugd.zz",
                           "snapshot-123456789012345678901.ugs.z",
                           "index.json",
                           "",
                           "manifest.json.tmp",
                           "snapshot-1.ugs.z/"}) {
    EXPECT_FALSE(IsImmutableFileName(name)) << name;
  }
}

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto real = Env::Default()->RealPath(dir_.path());
    ASSERT_TRUE(real.ok()) << real.status().ToString();
    root_ = *real;
    ASSERT_TRUE(Env::Default()->CreateDirs(root_ + "/v1/lists/phishing").ok());
    for (const char* name : {"manifest.json", "manifest.sig", "phishing.rpz", "snapshot-7.ugs.z",
                             "diff-6-7.ugd.z", "notes.txt"}) {
      ASSERT_TRUE(WriteFileAtomic(Env::Default(), root_ + "/v1/lists/phishing/" + name,
                                  "bytes of " + std::string(name))
                      .ok());
    }
    files_ = std::make_unique<StaticFiles>(Env::Default(), root_);
  }

  HttpResponse Get(const std::string& path) {
    HttpRequest req;
    req.method = "GET";
    req.target = path;
    req.path = path;
    return files_->Serve(req);
  }

  static std::string CacheControl(const HttpResponse& res) {
    for (const auto& [name, value] : res.headers) {
      if (name == "Cache-Control") return value;
    }
    return "(none)";
  }

  testing::TempDir dir_{"static-files"};
  std::string root_;
  std::unique_ptr<StaticFiles> files_;
};

TEST_F(StaticFilesTest, FilesRewrittenInPlaceAreRevalidatedVersionedOnesAreImmutable) {
  const std::string base = "/v1/lists/phishing/";
  for (const char* name : {"manifest.json", "manifest.sig", "phishing.rpz", "notes.txt"}) {
    HttpResponse res = Get(base + name);
    EXPECT_EQ(res.status, 200) << name;
    EXPECT_EQ(CacheControl(res), "no-cache") << name;
  }
  for (const char* name : {"snapshot-7.ugs.z", "diff-6-7.ugd.z"}) {
    HttpResponse res = Get(base + name);
    EXPECT_EQ(res.status, 200) << name;
    EXPECT_EQ(CacheControl(res), kImmutable) << name;
  }
}

// The RPZ export is rewritten in place: after a rewrite the server answers with the new bytes and a new ETag,
// and the old response must not have been cacheable without revalidation.
TEST_F(StaticFilesTest, RewrittenRpzGetsANewEtagAndWasNeverImmutable) {
  const std::string path = "/v1/lists/phishing/phishing.rpz";
  HttpResponse first = Get(path);
  ASSERT_EQ(first.status, 200);
  ASSERT_EQ(CacheControl(first), "no-cache");
  ASSERT_TRUE(WriteFileAtomic(Env::Default(), root_ + path, "a different zone, same server").ok());
  HttpResponse second = Get(path);
  ASSERT_EQ(second.status, 200);
  EXPECT_EQ(CacheControl(second), "no-cache");
  std::string first_tag, second_tag;
  for (const auto& [name, value] : first.headers) {
    if (name == "ETag") first_tag = value;
  }
  for (const auto& [name, value] : second.headers) {
    if (name == "ETag") second_tag = value;
  }
  EXPECT_FALSE(first_tag.empty());
  EXPECT_NE(first_tag, second_tag);
}

}  // namespace
}  // namespace urlguard
