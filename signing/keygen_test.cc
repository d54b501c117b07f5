// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "signing/keygen.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "platform/fault_injection_env.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::ScratchDir;

mode_t FileMode(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(Keygen, WritesAPrivateAndAPublicKey) {
  const std::string dir = ScratchDir("keygen_writes") + "/keys/nested";  // created on demand
  PublicKey written;
  Status s = WriteKeyPair(Env::Default(), dir, &written);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string priv_path = dir + "/urlguard-ed25519.pem";
  const std::string pub_path = dir + "/urlguard-ed25519.pub.pem";
  EXPECT_EQ(FileMode(priv_path), 0600u);
  EXPECT_EQ(FileMode(pub_path) & 0022, 0u);  // never group/world-writable (exact bits depend on the umask)
  EXPECT_NE(FileMode(pub_path) & 0044, 0u);  // readable by others: it is public

  auto key = SigningKey::FromPem(ReadFileOrDie(priv_path));
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  auto pub = PublicKeyFromPem(ReadFileOrDie(pub_path));
  ASSERT_TRUE(pub.ok()) << pub.status().ToString();
  EXPECT_EQ(key->public_key(), *pub);
  EXPECT_EQ(written, *pub);
  EXPECT_TRUE(VerifyManifestSignature({*pub}, "m", MakeManifestSignatureFile(*key, "m")).ok());
  // No temporary files left behind.
  auto names = Env::Default()->ListDir(dir);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"urlguard-ed25519.pem", "urlguard-ed25519.pub.pem"}));
}

TEST(Keygen, RefusesToOverwriteAPrivateKey) {
  const std::string dir = ScratchDir("keygen_refuses");
  ASSERT_TRUE(WriteKeyPair(Env::Default(), dir).ok());
  const std::string priv = ReadFileOrDie(dir + "/urlguard-ed25519.pem");
  const std::string pub = ReadFileOrDie(dir + "/urlguard-ed25519.pub.pem");
  Status s = WriteKeyPair(Env::Default(), dir);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_EQ(ReadFileOrDie(dir + "/urlguard-ed25519.pem"), priv);
  EXPECT_EQ(ReadFileOrDie(dir + "/urlguard-ed25519.pub.pem"), pub);
  // Even when only the private key is there (anything at that path counts).
  ASSERT_TRUE(Env::Default()->RemoveFile(dir + "/urlguard-ed25519.pub.pem").ok());
  EXPECT_EQ(WriteKeyPair(Env::Default(), dir).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(Env::Default()->FileExists(dir + "/urlguard-ed25519.pub.pem"));
}

TEST(Keygen, AFailedWriteNeverLeavesAPrivateKeyBehind) {
  for (int fail_at : {1, 2}) {  // 1: the public key's file, 2: the private key's file
    SCOPED_TRACE(fail_at);
    const std::string dir = ScratchDir("keygen_fails" + std::to_string(fail_at));
    FaultInjectionEnv env;
    env.FailOp(FaultOp::kCreate, fail_at, Status::IoError("injected: disk full"));
    Status s = WriteKeyPair(&env, dir);
    EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
    EXPECT_FALSE(Env::Default()->FileExists(dir + "/urlguard-ed25519.pem"));
    // Nothing blocks a second attempt.
    Status again = WriteKeyPair(Env::Default(), dir);
    EXPECT_TRUE(again.ok()) << again.ToString();
    EXPECT_EQ(FileMode(dir + "/urlguard-ed25519.pem"), 0600u);
  }
}

TEST(Keygen, UnwritableDirectoryIsAnError) {
  const std::string dir = ScratchDir("keygen_unwritable");
  const std::string file = dir + "/not-a-dir";
  testing::WriteFileOrDie(file, "x");
  Status s = WriteKeyPair(Env::Default(), file + "/keys");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
}

}  // namespace
}  // namespace urlguard
