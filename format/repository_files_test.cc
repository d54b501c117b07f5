// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Golden test of the repository's names (format/repository_files.h): every path and file name, byte for byte,
// each next to the line of docs/repository-layout.md that documents it; the paths the code spelled before the
// names had one home (the same bytes for every form of REPO); and the parse direction, with the names it must
// refuse.
#include "format/repository_files.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "platform/env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

struct Golden {
  const char* documented;  // as docs/repository-layout.md's layout block spells it (REPO/ left out)
  std::string made;  // what the functions make for REPO "R", LIST "phishing", FEED "openphish", V 17, F 16
  const char* expected;
};

std::vector<Golden> Goldens() {
  const std::string r = "R";
  const std::string list = "phishing";
  const std::string pub = PublicListDir(r, list);
  const std::string priv = PrivateListDir(r, list);
  const std::string feed = FeedDir(r, "openphish");
  return {
      {"public/v1/lists/index.json", JoinPath(RepoPublicDir(r), ListIndexPath()),
       "R/public/v1/lists/index.json"},
      {"public/v1/lists/index.sig", JoinPath(RepoPublicDir(r), ListIndexSignaturePath()),
       "R/public/v1/lists/index.sig"},
      {"public/v1/lists/index.json", JoinPath(PublicListsDir(r), kListIndexFileName),
       "R/public/v1/lists/index.json"},
      {"public/v1/lists/index.sig", JoinPath(PublicListsDir(r), kListIndexSignatureFileName),
       "R/public/v1/lists/index.sig"},
      {"public/v1/lists/LIST/manifest.json", JoinPath(pub, kManifestFileName),
       "R/public/v1/lists/phishing/manifest.json"},
      {"public/v1/lists/LIST/manifest.sig", JoinPath(pub, kManifestSignatureFileName),
       "R/public/v1/lists/phishing/manifest.sig"},
      {"public/v1/lists/LIST/snapshot-V.ugs.z", JoinPath(pub, SnapshotFileName(17)),
       "R/public/v1/lists/phishing/snapshot-17.ugs.z"},
      {"public/v1/lists/LIST/diff-F-V.ugd.z", JoinPath(pub, DiffFileName(16, 17)),
       "R/public/v1/lists/phishing/diff-16-17.ugd.z"},
      {"public/v1/lists/LIST/LIST.rpz", JoinPath(pub, RpzFileName(list)),
       "R/public/v1/lists/phishing/phishing.rpz"},
      {"private/lists/LIST/V.ugs", JoinPath(priv, PrivateSnapshotFileName(17)),
       "R/private/lists/phishing/17.ugs"},
      {"private/lists/LIST/V.entries", JoinPath(priv, EntryListFileName(17)),
       "R/private/lists/phishing/17.entries"},
      {"private/lists/LIST/V.entries-delta", JoinPath(priv, EntryListDeltaFileName(17)),
       "R/private/lists/phishing/17.entries-delta"},
      {"private/lists/LIST/V.state", JoinPath(priv, StateFileName(17)), "R/private/lists/phishing/17.state"},
      {"private/lists/LIST/V.delta", JoinPath(priv, StateDeltaFileName(17)), "R/private/lists/phishing/17.delta"},
      {"private/lists/LIST/V.ugh", JoinPath(priv, FullHashFileName(17)), "R/private/lists/phishing/17.ugh"},
      {"private/lists/LIST/V.ughd", JoinPath(priv, FullHashDeltaFileName(17)), "R/private/lists/phishing/17.ughd"},
      {"private/lists/LIST/V.epoch", JoinPath(priv, EpochMapFileName(17)), "R/private/lists/phishing/17.epoch"},
      {"private/lists/LIST/X.archive", JoinPath(priv, ArchiveFileName(17)), "R/private/lists/phishing/17.archive"},
      {"private/lists/LIST/X.checkpoint", JoinPath(priv, CheckpointRecordFileName(17)),
       "R/private/lists/phishing/17.checkpoint"},
      {"public/v1/lists/LIST/range-F-V.ugd.z", JoinPath(pub, RangeDiffFileName(16, 17)),
       "R/public/v1/lists/phishing/range-16-17.ugd.z"},
      {"private/lists/LIST/publish.lock", ListPublishLockPath(r, list),
       "R/private/lists/phishing/publish.lock"},
      {"private/tmp/LIST/", PrivateTmpDir(r, list) + "/", "R/private/tmp/phishing/"},
      {"private/trash/LIST/", PrivateTrashDir(r, list) + "/", "R/private/trash/phishing/"},
      {"private/tmp/LIST/PREFIX-N.run", JoinPath(PrivateTmpDir(r, list), SortRunFileName("keys", 3)),
       "R/private/tmp/phishing/keys-3.run"},
      {"private/tmp/LIST/merged.run", JoinPath(PrivateTmpDir(r, list), kMergedRunFileName),
       "R/private/tmp/phishing/merged.run"},
      {"private/tmp/LIST/seen.run", JoinPath(PrivateTmpDir(r, list), kSeenRunFileName),
       "R/private/tmp/phishing/seen.run"},
      {"private/seen.bin", SeenFilterPath(r), "R/private/seen.bin"},
      {"private/seen.lock", SeenLockPath(r), "R/private/seen.lock"},
      {"private/index.lock", IndexLockPath(r), "R/private/index.lock"},
      {"private/feeds/update.lock", FeedUpdateLockPath(r), "R/private/feeds/update.lock"},
      {"private/feeds/FEED/meta", JoinPath(feed, kFeedMetaFileName), "R/private/feeds/openphish/meta"},
      {"private/feeds/FEED/good", JoinPath(feed, kFeedGoodFileName), "R/private/feeds/openphish/good"},
      {"private/feeds/FEED/quarantine/T.body",
       JoinPath(JoinPath(feed, kFeedQuarantineDirName), QuarantineFileName(1700000000)),
       "R/private/feeds/openphish/quarantine/1700000000.body"},
      {"private/feed-lists/LIST.record", ListRecordPath(r, list), "R/private/feed-lists/phishing.record"},
  };
}

TEST(RepositoryFiles, EveryNameIsPinnedAndDocumented) {
  const std::string doc = testing::ReadFileOrDie(testing::SourcePath("docs/repository-layout.md"));
  // The layout block: from "REPO/" to the end of its code fence.
  const size_t begin = doc.find("```\nREPO/\n");
  ASSERT_NE(begin, std::string::npos) << "docs/repository-layout.md lost its layout block";
  const std::string block = doc.substr(begin, doc.find("```", begin + 3) - begin);
  for (const Golden& g : Goldens()) {
    EXPECT_EQ(g.made, g.expected) << g.documented;
    EXPECT_NE(block.find("\n  " + std::string(g.documented) + " "), std::string::npos)
        << g.documented << " is not in docs/repository-layout.md's layout block";
  }
}

TEST(RepositoryFiles, DirectoriesAndRelativePaths) {
  EXPECT_EQ(RepoPublicDir("R"), "R/public");
  EXPECT_EQ(RepoPrivateDir("R"), "R/private");
  EXPECT_EQ(PublicListsDir("R"), "R/public/v1/lists");
  EXPECT_EQ(PrivateListsDir("R"), "R/private/lists");
  EXPECT_EQ(FeedsDir("R"), "R/private/feeds");
  EXPECT_EQ(FeedListsDir("R"), "R/private/feed-lists");
  // Below public/ and below a server's base URL: the client fetches B + "/" + these.
  EXPECT_EQ(std::string(kPublicListsPath), "v1/lists");
  EXPECT_EQ(PublicListPath("phishing"), "v1/lists/phishing");
  EXPECT_EQ(ListIndexPath(), "v1/lists/index.json");
  EXPECT_EQ(ListIndexSignaturePath(), "v1/lists/index.sig");
  EXPECT_EQ(JoinPath(RepoPublicDir("R"), PublicListPath("phishing")), PublicListDir("R", "phishing"));
  EXPECT_EQ(std::string(kSnapshotFileSuffix), ".ugs");
  // Versions are plain decimal, any uint64_t.
  EXPECT_EQ(SnapshotFileName(0), "snapshot-0.ugs.z");
  EXPECT_EQ(SnapshotFileName(kMax), "snapshot-18446744073709551615.ugs.z");
  EXPECT_EQ(DiffFileName(kMax - 1, kMax), "diff-18446744073709551614-18446744073709551615.ugd.z");
  EXPECT_EQ(PrivateSnapshotFileName(kMax), "18446744073709551615.ugs");
  EXPECT_EQ(QuarantineFileName(0), "0.body");
}

// Before format/repository_files.h, each caller spelled its path as below; the names must be the same bytes
// for every form a repository argument takes (relative, absolute, with a trailing slash, empty: the current
// directory).
TEST(RepositoryFiles, SameBytesAsTheFormerSpellings) {
  for (const char* repo_text : {"R", "/srv/repo", "/srv/repo/", "", "/", "./r"}) {
    const std::string repo = repo_text;
    SCOPED_TRACE("repo '" + repo + "'");
    const std::string list = "phishing";
    EXPECT_EQ(PublicListDir(repo, list), JoinPath(repo, "public/v1/lists/" + list));
    EXPECT_EQ(PrivateListDir(repo, list), JoinPath(repo, "private/lists/" + list));
    EXPECT_EQ(PrivateTmpDir(repo, list), JoinPath(repo, "private/tmp/" + list));
    EXPECT_EQ(ListPublishLockPath(repo, list), JoinPath(repo, "private/lists/" + list + "/publish.lock"));
    EXPECT_EQ(IndexLockPath(repo), JoinPath(repo, "private/index.lock"));
    EXPECT_EQ(SeenLockPath(repo), JoinPath(repo, "private/seen.lock"));
    EXPECT_EQ(FeedUpdateLockPath(repo), JoinPath(repo, "private/feeds/update.lock"));
    EXPECT_EQ(SeenFilterPath(repo), JoinPath(repo, "private/seen.bin"));
    EXPECT_EQ(FeedsDir(repo), JoinPath(repo, "private/feeds"));
    EXPECT_EQ(FeedListsDir(repo), DirName(ListRecordPath(repo, "x")));
    EXPECT_EQ(ListRecordPath(repo, list), JoinPath(JoinPath(repo, "private/feed-lists"), list + ".record"));
    EXPECT_EQ(PublicListsDir(repo), JoinPath(repo, "public/v1/lists"));
    EXPECT_EQ(PrivateListsDir(repo), JoinPath(repo, "private/lists"));
    EXPECT_EQ(RepoPublicDir(repo), JoinPath(repo, "public"));
    EXPECT_EQ(RepoPrivateDir(repo), JoinPath(repo, "private"));
  }
}

TEST(RepositoryFiles, PrivateNumberedNamesParse) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{17}, uint64_t{9999999999999999999u}}) {
    EXPECT_EQ(ParsePrivateSnapshotFileName(PrivateSnapshotFileName(v)), v);
    EXPECT_EQ(ParseFullHashFileName(FullHashFileName(v)), v);
    EXPECT_EQ(ParseStateFileName(StateFileName(v)), v);
    EXPECT_EQ(ParseStateDeltaFileName(StateDeltaFileName(v)), v);
    EXPECT_EQ(ParseEntryListFileName(EntryListFileName(v)), v);
    EXPECT_EQ(ParseEntryListDeltaFileName(EntryListDeltaFileName(v)), v);
  }
  EXPECT_EQ(ParsePrivateSnapshotFileName("007.ugs"), 7u);  // leading zeros are accepted (they always were)
  EXPECT_EQ(ParseFullHashFileName("0000000000000000001.ugh"), 1u);
  EXPECT_EQ(ParseQuarantineFileName("1700000000.body"), 1700000000u);
  EXPECT_EQ(ParseQuarantineFileName(QuarantineFileName(42)), 42u);
}

TEST(RepositoryFiles, PrivateNumberedNamesRefuseEverythingElse) {
  // 20 digits are refused even where the value would fit: the grammar is 1 to 19 digits.
  for (const char* name : {"",
                           ".ugs",
                           "ugs",
                           "1ugs",
                           "a.ugs",
                           "1a.ugs",
                           "-1.ugs",
                           "+1.ugs",
                           " 1.ugs",
                           "1 .ugs",
                           "1.UGS",
                           "1.ugs.tmp",
                           "1.ugs.z",
                           "1.ugsx",
                           "1.ugh",
                           "1.state",
                           "snapshot-1.ugs.z",
                           "10000000000000000000.ugs",
                           "18446744073709551615.ugs",
                           "0x1.ugs",
                           "1.5.ugs",
                           "1/2.ugs"}) {
    EXPECT_FALSE(ParsePrivateSnapshotFileName(name).has_value()) << name;
  }
  for (const char* name : {"", ".ugh", "a.ugh", "1.ugh.tmp", "1.ugs", "1.UGH", "-1.ugh",
                           "10000000000000000000.ugh", "1.ugh ", "x1.ugh"}) {
    EXPECT_FALSE(ParseFullHashFileName(name).has_value()) << name;
  }
  for (const char* name : {"", ".state", "1.state.tmp", "1.delta", "1.ugs", "-1.state", "10000000000000000000.state",
                           "x1.state"}) {
    EXPECT_FALSE(ParseStateFileName(name).has_value()) << name;
  }
  for (const char* name : {"", ".delta", "1.delta.tmp", "1.state", "1.ugh", "-1.delta", "10000000000000000000.delta",
                           "1.DELTA"}) {
    EXPECT_FALSE(ParseStateDeltaFileName(name).has_value()) << name;
  }
  for (const char* name : {"", ".entries", "1.entries.tmp", "1.entries-delta", "1.ugs", "-1.entries", "1.ENTRIES",
                           "10000000000000000000.entries"}) {
    EXPECT_FALSE(ParseEntryListFileName(name).has_value()) << name;
  }
  for (const char* name : {"", ".entries-delta", "1.entries-delta.tmp", "1.entries", "1.delta", "x1.entries-delta",
                           "10000000000000000000.entries-delta"}) {
    EXPECT_FALSE(ParseEntryListDeltaFileName(name).has_value()) << name;
  }
  for (const char* name :
       {"", ".body", "x.body", "1.body.tmp", "1.bod", "-1.body", "10000000000000000000.body", "1.BODY"}) {
    EXPECT_FALSE(ParseQuarantineFileName(name).has_value()) << name;
  }
}

// Full-hash delta names (issue 17): "V.ughd", never confused with "V.ugh" or a writer's temporary file.
TEST(RepositoryFiles, FullHashDeltaNames) {
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{17}, uint64_t{9999999999999999999u}}) {
    EXPECT_EQ(ParseFullHashDeltaFileName(FullHashDeltaFileName(v)), v);
    EXPECT_FALSE(ParseFullHashFileName(FullHashDeltaFileName(v)).has_value());
    EXPECT_FALSE(ParseFullHashDeltaFileName(FullHashFileName(v)).has_value());
  }
  EXPECT_EQ(FullHashDeltaFileName(8), "8.ughd");
  EXPECT_EQ(ParseFullHashDeltaFileName("007.ughd"), 7u);
  for (const char* name : {"", ".ughd", "a.ughd", "1.ughd.tmp", "1.ugh", "1.UGHD", "-1.ughd",
                           "10000000000000000000.ughd", "1.ughd ", "x1.ughd", "1.delta"}) {
    EXPECT_FALSE(ParseFullHashDeltaFileName(name).has_value()) << name;
  }
}

TEST(RepositoryFiles, PublicVersionedNames) {
  for (const char* name : {"snapshot-1.ugs.z", "snapshot-0.ugs.z", "snapshot-007.ugs.z",
                           "snapshot-18446744073709551615.ugs.z", "snapshot-99999999999999999999.ugs.z"}) {
    EXPECT_TRUE(IsSnapshotFileName(name)) << name;
    EXPECT_FALSE(IsDiffFileName(name)) << name;
  }
  for (const char* name :
       {"diff-1-2.ugd.z", "diff-0-0.ugd.z", "diff-99999999999999999999-99999999999999999999.ugd.z"}) {
    EXPECT_TRUE(IsDiffFileName(name)) << name;
    EXPECT_FALSE(IsSnapshotFileName(name)) << name;
  }
  EXPECT_TRUE(IsSnapshotFileName(SnapshotFileName(kMax)));
  EXPECT_TRUE(IsDiffFileName(DiffFileName(0, kMax)));
  for (const char* name : {"", "snapshot-", "snapshot-.ugs.z", "snapshot-1.ugs", "snapshot-1.ugs.z.tmp",
                           "snapshot-1.ugs.zz", "Snapshot-1.ugs.z", "snapshot-1-2.ugs.z", "snapshot--1.ugs.z",
                           "snapshot-a.ugs.z", "snapshot-123456789012345678901.ugs.z", "snapshot-1.ugd.z",
                           " snapshot-1.ugs.z", "x/snapshot-1.ugs.z", "1.ugs"}) {
    EXPECT_FALSE(IsSnapshotFileName(name)) << name;
  }
  for (const char* name :
       {"", "diff-", "diff-1.ugd.z", "diff-1-.ugd.z", "diff--2.ugd.z", "diff-1-2-3.ugd.z", "diff-1-2.ugd",
        "diff-1-2.ugs.z", "diff-1_2.ugd.z", "diff-1-2.ugd.z.tmp", "diff-123456789012345678901-2.ugd.z",
        "diff-1-123456789012345678901.ugd.z", "Diff-1-2.ugd.z"}) {
    EXPECT_FALSE(IsDiffFileName(name)) << name;
  }
  for (const char* name : {"manifest.json", "manifest.sig", "index.json", "index.sig", "phishing.rpz"}) {
    EXPECT_FALSE(IsSnapshotFileName(name) || IsDiffFileName(name)) << name;
  }
}

TEST(RepositoryFiles, SnapshotSuffixIsTheCheckersLooserRule) {
  for (const char* name : {"a.ugs", "1.ugs", "phishing.ugs", "x.y.ugs", "..ugs", "snapshot-1.ugs"}) {
    EXPECT_TRUE(HasSnapshotFileSuffix(name)) << name;
  }
  for (const char* name : {"", ".ugs", "ugs", "a.ugs.z", "a.ugs.tmp", "a.UGS", "a.ugh", "a.ugsx"}) {
    EXPECT_FALSE(HasSnapshotFileSuffix(name)) << name;
  }
}

}  // namespace
}  // namespace urlguard
