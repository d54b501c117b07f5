// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The command-line tools as a user runs them: real binaries, real files, exit codes, JSON output.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/snapshot.h"
#include "platform/env.h"
#include "sync/store.h"
#include "tests/test_util.h"
#include "urlguard/checker.h"
#include "urlguard/render.h"

namespace urlguard {
namespace {

using testing::BinPath;
using testing::RunCommand;
using Json = nlohmann::json;

std::string Snapshots() {
  std::string dir = std::getenv("URLGUARD_FIXTURE_SNAPSHOTS");
  return " --snapshot " + dir + "/phishing.ugs --snapshot " + dir + "/malware.ugs ";
}

std::vector<Json> JsonLines(const std::string& out) {
  std::vector<Json> v;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    Json j = Json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    v.push_back(j);
  }
  return v;
}

TEST(Cli, CanonPrintsCanonicalUrlExpressionsAndHashes) {
  auto r = RunCommand(BinPath("urlguard") + " canon --json -- 'http://a.b.c/1/2.html?param=1'");
  ASSERT_EQ(r.exit_code, 0);
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["canonical"], "http://a.b.c/1/2.html?param=1");
  EXPECT_TRUE(lines[0]["error"].is_null());
  EXPECT_EQ(lines[0]["expressions"].size(), 8u);
  bool found = false;
  for (const Json& e : lines[0]["expressions"]) {
    if (e["expression"] == "a.b.c/1/2.html?param=1") {
      // hashes.tsv (COMPUTED row for the SBV4DOC example)
      EXPECT_EQ(e["sha256"], "1cd5cf5ed8e6df424bdbb400f7b2a3fcb215c4c3f7fa2965a11446cde3c162f3");
      found = true;
    }
  }
  EXPECT_TRUE(found);
  auto text = RunCommand(BinPath("urlguard") + " canon 'HTTP://WWW.Example.COM:80/a/../b'");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("http://www.example.com/b"), std::string::npos) << text.out;
}

TEST(Cli, CanonJsonStaysValidForInvalidUtf8AndErrors) {
  auto r = RunCommand(BinPath("urlguard") + " canon --json -", "http://ok.example/\xff\xfe\n\xc3(bad\njavascript:x\n");
  EXPECT_EQ(r.exit_code, 2);  // at least one invalid input
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["canonical"], "http://ok.example/%FF%FE");
  EXPECT_TRUE(lines[2]["canonical"].is_null());
  EXPECT_TRUE(lines[2]["error"].is_string());
}

TEST(Cli, CheckVerdictsAndExitBitmask) {
  const std::string check = BinPath("urlguard") + " check" + Snapshots();
  EXPECT_EQ(RunCommand(check + "http://www.example.com/").exit_code, 0);
  EXPECT_EQ(RunCommand(check + "http://evil.example/").exit_code, 1);
  EXPECT_EQ(RunCommand(check + "javascript:x").exit_code, 2);
  EXPECT_EQ(RunCommand(check + "http://evil.example/ javascript:x").exit_code, 3);
  EXPECT_EQ(RunCommand(BinPath("urlguard") + " check http://x.example/").exit_code, 4);      // no snapshot
  EXPECT_EQ(RunCommand(BinPath("urlguard") + " frobnicate").exit_code, 4);                  // unknown command
  EXPECT_EQ(RunCommand(BinPath("urlguard") + " check --snapshot /nonexistent x").exit_code, 4);

  auto r = RunCommand(check + "--json -", "http://secure-bank.example/login.php?x=1\nhttp://www.example.com/\n\xff\n");
  EXPECT_EQ(r.exit_code, 1);
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["verdict"], "hit");
  EXPECT_EQ(lines[0]["list"], "phishing");
  EXPECT_EQ(lines[0]["layer"], "url");
  EXPECT_EQ(lines[0]["expression"], "secure-bank.example/login.php");
  EXPECT_EQ(lines[1]["verdict"], "safe");
  EXPECT_TRUE(lines[1]["list"].is_null());
  EXPECT_EQ(lines[2]["verdict"], "safe");  // "\xff" is a host name (escaped): valid, not listed
}

// `check -` reads stdin in blocks, looks large blocks up on two threads and writes them in order: the output is
// exactly one verdict line per input line, in input order, as RenderVerdict* prints it for the line cut at 1 MiB
// with its '\r' removed; from a file and from a pipe, in text and JSON.
TEST(Cli, CheckStdinInBlocksKeepsEveryLineInOrder) {
  std::string input;
  std::vector<std::string> lines;
  for (int i = 0; i < 30000; ++i) {
    std::string line = i % 97 == 0 ? "http://secure-bank.example/login.php?x=" + std::to_string(i)
                                   : "https://www.example" + std::to_string(i) + ".com/a/b?q=" + std::to_string(i);
    if (i == 7) line = "";
    if (i == 20000) line = "http://" + std::string((1 << 20) + 100, 'a') + "/";  // over the 1 MiB line cap
    input += line + (i % 5 == 0 ? "\r\n" : "\n");
    if (line.size() > (1u << 20)) line.resize(1u << 20);
    lines.push_back(line);
  }
  input += "http://evil.example/\r";  // the last line has no '\n'
  lines.push_back("http://evil.example/");

  const std::string dir = std::getenv("URLGUARD_FIXTURE_SNAPSHOTS");
  auto checker = Checker::Open({dir + "/phishing.ugs", dir + "/malware.ugs"});
  ASSERT_TRUE(checker.ok()) << checker.status().ToString();
  CheckOptions with_canonical;
  with_canonical.want_canonical = true;
  std::string want_text, want_json;
  for (const std::string& l : lines) {
    want_text += RenderVerdictText(l, (*checker)->Check(l)) + "\n";
    want_json += RenderVerdictJson(l, (*checker)->Check(l, with_canonical)) + "\n";
  }
  const std::string file = testing::ScratchDir("cli-blocks") + "/in.txt";
  testing::WriteFileOrDie(file, input);
  const std::string check = BinPath("urlguard") + " check" + Snapshots();
  for (const std::string& json : {std::string(), std::string("--json ")}) {
    const std::string& want = json.empty() ? want_text : want_json;
    auto from_file = RunCommand(check + json + "-", input);
    EXPECT_EQ(from_file.exit_code, 3);  // hits, and the empty line is invalid
    EXPECT_TRUE(from_file.out == want) << json << "file: " << from_file.out.size() << " vs " << want.size() << " bytes";
    auto from_pipe = RunCommand("(cat '" + file + "' | " + check + json + "-)");
    EXPECT_EQ(from_pipe.exit_code, 3);
    EXPECT_TRUE(from_pipe.out == want) << json << "pipe: " << from_pipe.out.size() << " vs " << want.size() << " bytes";
  }
}

// Lines at the 1 MiB cap and around it, first in the input and after others, through a pipe (which hands the
// reader 64 KiB at a time): each is cut at 1 MiB, none ends the input early.
TEST(Cli, CheckStdinCutsLinesAtTheCapAndKeepsReading) {
  constexpr size_t kCap = 1 << 20;
  std::string input;
  std::vector<std::string> lines;
  for (size_t len : {kCap + 5, kCap, kCap - 1, kCap + 1, 2 * kCap + 3, kCap, size_t{30}}) {
    std::string line = "http://x.example/" + std::string(len - 17, 'p');
    input += line + "\n";
    lines.push_back(line.substr(0, kCap));
    input += "http://evil.example/\n";
    lines.push_back("http://evil.example/");
  }
  const std::string dir = std::getenv("URLGUARD_FIXTURE_SNAPSHOTS");
  auto checker = Checker::Open({dir + "/phishing.ugs", dir + "/malware.ugs"});
  ASSERT_TRUE(checker.ok());
  std::string want;
  for (const std::string& l : lines) want += RenderVerdictText(l, (*checker)->Check(l)) + "\n";
  const std::string file = testing::ScratchDir("cli-cap") + "/in.txt";
  testing::WriteFileOrDie(file, input);
  auto r = RunCommand("(cat '" + file + "' | " + BinPath("urlguard") + " check" + Snapshots() + "-)");
  EXPECT_EQ(r.exit_code & 1, 1);
  EXPECT_TRUE(r.out == want) << r.out.size() << " vs " << want.size() << " bytes";
  auto from_file = RunCommand(BinPath("urlguard") + " check" + Snapshots() + "-", input);
  EXPECT_TRUE(from_file.out == want) << from_file.out.size() << " vs " << want.size() << " bytes";
}

// A data directory with phishing and malware from the fixture snapshots installed, never expiring.
std::string InstalledDataDir(const std::string& dir) {
  const std::string fixtures = std::getenv("URLGUARD_FIXTURE_SNAPSHOTS");
  auto store = Store::Open(Env::Default(), dir);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return dir;
  for (const char* name : {"malware", "phishing"}) {
    const std::string bytes = testing::ReadFileOrDie(fixtures + "/" + name + ".ugs");
    auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), true);
    EXPECT_TRUE(view.ok());
    InstalledList meta;
    meta.list = name;
    meta.version = view->version();
    meta.state_sha256 = view->checksum();
    meta.manifest_sha256 = Sha256(std::string("manifest of ") + name);
    meta.created_unix = 1700000000;
    meta.expires_unix = INT64_MAX;
    EXPECT_TRUE((*store)->Install(meta, bytes).ok());
  }
  return dir;
}

// A data directory where a list's file was found damaged (dropped by recovery, only its high-water mark left)
// still answers, but no verdict is confident: exit bit 8, and `status` names the list and the reason.
TEST(Cli, CheckExitsWithTheStaleBitWhenAListIsDamaged) {
  // Never expiring: only the damage makes it stale.
  const std::string dir = InstalledDataDir(testing::ScratchDir("cli-stale") + "/D");
  {
    auto state = ReadStoreState(Env::Default(), dir);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    std::remove((dir + "/" + state->FindInstalled("malware")->file).c_str());
  }
  ASSERT_TRUE(Store::Open(Env::Default(), dir).ok());  // recovery drops malware
  const std::string check = BinPath("urlguard") + " check --data-dir " + dir + " ";
  auto r = RunCommand(check + "http://www.example.com/");
  EXPECT_EQ(r.exit_code, 8) << r.out;
  EXPECT_NE(r.out.find("STALE"), std::string::npos) << r.out;
  EXPECT_EQ(RunCommand(check + "javascript:x").exit_code, 2);  // an invalid input has no freshness
  EXPECT_NE(RunCommand(BinPath("urlguard") + " check --help").out.find("8 a stale verdict"), std::string::npos);
  auto status = RunCommand(BinPath("urlguard") + " status --data-dir " + dir);
  EXPECT_NE(status.out.find("malware: not installed, STALE (damaged)"), std::string::npos) << status.out;
}

// Issue 22, item 4: readers never checked. `check` and `status` answered from a 0777 copy of D (or a D under a
// world-writable parent) that `sync` refuses. They refuse it now, and say which chmod fixes it.
TEST(Cli, CheckAndStatusRefuseADataDirectoryOthersCanWrite) {
  const std::string root = testing::ScratchDir("cli-trust");
  const std::string good = InstalledDataDir(root + "/good");
  ASSERT_EQ(RunCommand(BinPath("urlguard") + " check --data-dir " + good + " http://evil.example/").exit_code, 1);
  const std::string copy = root + "/copy";
  ASSERT_EQ(std::system(("cp -a '" + good + "' '" + copy + "' && chmod 0777 '" + copy + "'").c_str()), 0);
  const std::string pub = root + "/pub";
  ASSERT_EQ(std::system(("mkdir -m 0777 '" + pub + "' && cp -a '" + good + "' '" + pub + "/D'").c_str()), 0);
  struct Case {
    std::string dir, fix;
  };
  for (const Case& c : {Case{copy, "chmod g-w,o-w " + copy}, Case{pub + "/D", "chmod g-w,o-w " + pub}}) {
    for (const std::string& cmd : {" check --data-dir " + c.dir + " http://evil.example/",
                                   " status --data-dir " + c.dir}) {
      const std::string err = root + "/err.txt";
      auto r = RunCommand(BinPath("urlguard") + cmd, "", err);
      EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.out;
      EXPECT_EQ(r.out, "") << cmd;
      const std::string message = testing::ReadFileOrDie(err);
      EXPECT_NE(message.find("refusing it"), std::string::npos) << cmd << ": " << message;
      EXPECT_NE(message.find(c.fix), std::string::npos) << cmd << ": " << message;
    }
  }
}

// Issue 22, items 4 and 5 for readers: a dangling D/cache.sqlite symlink made `check` create a file outside D
// (SQLite followed it), and a FIFO at D/current made `check` and `status` block in open() for ever.
TEST(Cli, ReadersNeitherFollowACacheLinkNorWaitOnAFifo) {
  const std::string root = testing::ScratchDir("cli-damage");
  const std::string dir = InstalledDataDir(root + "/D");
  const std::string outside = root + "/outside.sqlite";
  ASSERT_EQ(::symlink(outside.c_str(), (dir + "/cache.sqlite").c_str()), 0);
  EXPECT_EQ(RunCommand(BinPath("urlguard") + " check --data-dir " + dir + " http://evil.example/").exit_code, 1);
  EXPECT_FALSE(Env::Default()->FileExists(outside));

  ASSERT_EQ(std::remove((dir + "/current").c_str()), 0);
  ASSERT_EQ(::mkfifo((dir + "/current").c_str(), 0600), 0);
  for (const std::string& cmd : {" check --data-dir " + dir + " http://evil.example/", " status --data-dir " + dir}) {
    const std::string err = root + "/err.txt";
    auto r = RunCommand(BinPath("urlguard") + cmd, "", err);  // returns (the code before blocked here for ever)
    EXPECT_EQ(r.exit_code, 2) << cmd;
    const std::string message = testing::ReadFileOrDie(err);
    EXPECT_NE(message.find(dir + "/current: a FIFO, not a regular file"), std::string::npos) << cmd << ": " << message;
  }
}

TEST(Cli, CheckRefusesACorruptSnapshot) {
  std::string dir = testing::ScratchDir("cli-corrupt");
  testing::WriteFileOrDie(dir + "/bad.ugs", std::string(500, 'z'));
  std::string err = dir + "/err.txt";
  auto r = RunCommand(BinPath("urlguard") + " check --snapshot " + dir + "/bad.ugs http://x.example/", "", err);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(testing::ReadFileOrDie(err).find("bad magic"), std::string::npos);
}

TEST(Cli, ScanFindsUrlsInChatMessagesIncludingDefangedOnes) {
  std::string dir = testing::ScratchDir("cli-scan");
  testing::WriteFileOrDie(dir + "/chat.txt",
                          "hey check this out: hxxp://evil[.]example/login (lol)\n"
                          "meeting notes at https://docs.example.com/x, see you at 10.30\n"
                          "grab it from www.phish.test/wp-admin/ now! or http://downloads.example/setup.exe\n"
                          "nothing here, version 1.2.3 of readme.txt\n");
  auto r = RunCommand(BinPath("urlguard") + " scan --json" + Snapshots() + dir + "/chat.txt");
  EXPECT_EQ(r.exit_code, 1);
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0]["verdict"], "hit");
  EXPECT_EQ(lines[0]["defanged"], true);
  EXPECT_EQ(lines[0]["line"], 1);
  EXPECT_EQ(lines[1]["verdict"], "safe");
  EXPECT_EQ(lines[2]["verdict"], "hit");
  EXPECT_EQ(lines[2]["list"], "phishing");
  EXPECT_EQ(lines[2]["line"], 3);
  EXPECT_EQ(lines[3]["list"], "malware");
}

TEST(Cli, ScanCutsOverlongMessagesAndSaysSo) {
  std::string dir = testing::ScratchDir("cli-scan-long");
  // 3 MiB on one line: a listed URL at the start is found, the tail is never held in memory or scanned.
  testing::WriteFileOrDie(dir + "/long.txt", "see http://evil.example/x " + std::string(3 << 20, 'a') +
                                                 " http://secure-bank.example/login.php\nnext http://evil.example/\n");
  std::string err = dir + "/err.txt";
  auto r = RunCommand(BinPath("urlguard") + " scan --json" + Snapshots() + dir + "/long.txt", "", err);
  EXPECT_EQ(r.exit_code, 3);  // hits, and a message that could not be scanned whole
  auto lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["line"], 1);
  EXPECT_EQ(lines[1]["line"], 2);  // the next message is still read
  EXPECT_NE(testing::ReadFileOrDie(err).find("long.txt:1: message truncated"), std::string::npos);
}

TEST(Cli, PlanShowsBloomAndDefaultSideBySide) {
  auto r = RunCommand(BinPath("urlguard") + " plan --entries 10000000 --fp-rate 0.001");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Bloom (classic formulas)"), std::string::npos);
  EXPECT_NE(r.out.find("fingerprint array (default)"), std::string::npos);
  EXPECT_EQ(RunCommand(BinPath("urlguard") + " plan --entries 0 --fp-rate 0.001").exit_code, 4);
  EXPECT_EQ(RunCommand(BinPath("urlguard") + " plan --entries 10 --fp-rate 2").exit_code, 4);
}

TEST(Cli, PublishBuildReportsBadLinesAndStillBuilds) {
  std::string dir = testing::ScratchDir("cli-build");
  testing::WriteFileOrDie(dir + "/in.txt",
                          "# comment\n\nevil.example\nnot a url\n10.0.0.1/8\nhttp://x.example/a.php  # inline\n");
  std::string err = dir + "/err.txt";
  auto r = RunCommand(BinPath("urlguard-publish") + " build --list t --input " + dir + "/in.txt --out " + dir + "/t.ugs",
               "", err);
  EXPECT_EQ(r.exit_code, 0);
  std::string errors = testing::ReadFileOrDie(err);
  EXPECT_NE(errors.find("in.txt:4:"), std::string::npos) << errors;
  EXPECT_NE(errors.find("in.txt:5:"), std::string::npos) << errors;
  EXPECT_NE(r.out.find("2 entries"), std::string::npos) << r.out;
  auto check = RunCommand(BinPath("urlguard") + " check --snapshot " + dir + "/t.ugs http://x.example/a.php");
  EXPECT_EQ(check.exit_code, 1);

  testing::WriteFileOrDie(dir + "/bad.txt", "not a url\n");
  EXPECT_EQ(RunCommand(BinPath("urlguard-publish") + " build --list t --input " + dir + "/bad.txt --out " + dir +
                    "/u.ugs", "", err).exit_code, 1);
  EXPECT_EQ(RunCommand(BinPath("urlguard-publish") + " build --list 'Bad Name' --input " + dir + "/in.txt --out " +
                    dir + "/v.ugs", "", err).exit_code, 1);
}

}  // namespace
}  // namespace urlguard
