// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The updater end to end: a repository written by the real publisher (publish/publisher.h) from feeds written
// at test time, served by a real HTTP server on 127.0.0.1 (cpp-httplib), fetched with the real libcurl
// Fetcher into a real data directory. Faults come from the server: it replaces any file with other bytes or
// an error status, and serves doctored manifests re-signed with the test key where a test needs them to
// verify.
#include "sync/updater.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/diff_codec.h"
#include "core/snapshot.h"
#include "format/bounded_inflate.h"
#include "format/deflate.h"
#include "format/key_rotation.h"
#include "format/manifest.h"
#include "platform/fault_injection_env.h"
#include "publish/publisher.h"
#include "signing/signer.h"
#include "publish/list_index_writer.h"
#include "sync/freshness.h"
#include "sync/subscriptions.h"
#include "sync/syncer.h"
#include "urlguard/client.h"
#include "urlguard/render.h"
#include "sync/time_floor.h"
#include "tests/test_util.h"

namespace urlguard {
namespace {

namespace fs = std::filesystem;
using ::urlguard::testing::FilesBelow;
using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::ScratchDir;
using ::urlguard::testing::WriteFileOrDie;

constexpr int64_t kT0 =
    1700000000;  // publish time of version 1; version v is published at kT0 + 3600 (v - 1)
constexpr char kList[] = "phishing";

// ---- the server
// ---------------------------------------------------------------------------------------------

// Serves REPO/public/ at "/" like any static server (ETag = quoted SHA-256, If-None-Match -> 304), except for
// paths a test overrides with its own status, body and headers. Records every request path.
class TestServer {
 public:
  explicit TestServer(std::string public_dir) : public_dir_(std::move(public_dir)) {
    server_.Get(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~TestServer() { Stop(); }

  void Stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  static std::string ListPath(const std::string& name) {
    return std::string("/v1/lists/") + kList + "/" + name;
  }

  // Serves `body` with `status` at the list file `name` from now on.
  void Override(const std::string& name, std::string body, int status = 200,
                std::multimap<std::string, std::string> headers = {}) {
    std::lock_guard<std::mutex> lock(mu_);
    overrides_[ListPath(name)] = Canned{status, std::move(body), std::move(headers)};
  }
  void ClearOverrides() {
    std::lock_guard<std::mutex> lock(mu_);
    overrides_.clear();
  }
  // The list file names requested since the last call.
  std::vector<std::string> TakeRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    out.swap(requests_);
    return out;
  }

 private:
  struct Canned {
    int status;
    std::string body;
    std::multimap<std::string, std::string> headers;
  };

  void Handle(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string prefix = ListPath("");
    requests_.push_back(req.path.rfind(prefix, 0) == 0 ? req.path.substr(prefix.size()) : req.path);
    auto it = overrides_.find(req.path);
    if (it != overrides_.end()) {
      res.status = it->second.status;
      for (const auto& [k, v] : it->second.headers) res.set_header(k, v);
      res.set_content(it->second.body, "application/octet-stream");
      return;
    }
    const std::string path = public_dir_ + req.path;
    if (req.path.find("..") != std::string::npos || !fs::is_regular_file(path)) {
      res.status = 404;
      return;
    }
    std::string body = ReadFileOrDie(path);
    const std::string etag = "\"" + ToHex(Sha256(body)) + "\"";
    res.set_header("ETag", etag);
    if (req.get_header_value("If-None-Match") == etag) {
      res.status = 304;
      return;
    }
    res.set_content(body, "application/octet-stream");
  }

  const std::string public_dir_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;  // guards overrides_ and requests_ (handlers run on the server's worker threads)
  std::map<std::string, Canned> overrides_;
  std::vector<std::string> requests_;
};

// ---- the publisher side
// ------------------------------------------------------------------------------------

// The feed of version v: 300 domains, 40 URLs and 5 ranges, sliding by 12 entries per version (so each
// version removes some and adds some).
std::string FeedOfVersion(uint64_t v, const std::string& tag = "") {
  std::string feed = "# test feed, version " + std::to_string(v) + "\n";
  const uint64_t first = 12 * (v - 1);
  for (uint64_t i = first; i < first + 300; ++i) feed += "evil-" + tag + std::to_string(i) + ".example\n";
  for (uint64_t i = first; i < first + 40; ++i) {
    feed += "http://phish" + tag + std::to_string(i % 9) + ".example/login/" + std::to_string(i) + "\n";
  }
  for (uint64_t i = v; i < v + 5; ++i) feed += "198.51." + std::to_string(i % 256) + ".0/24\n";
  return feed;
}

struct Repo {
  std::string dir;
  SigningKey key = std::move(SigningKey::Generate()).value();

  explicit Repo(const std::string& d) : dir(d) { fs::create_directories(dir); }

  // Publishes version `v` of `list` (the feed of version v) at kT0 + 3600 (v - 1).
  PublishReport Publish(uint64_t v, const std::string& list = kList, uint32_t keep = 5,
                        int64_t expires_in = 86400) {
    const std::string feed = dir + "/feed-" + list + "-" + std::to_string(v) + ".txt";
    WriteFileOrDie(feed, FeedOfVersion(v, list == kList ? "" : list));
    PublishOptions o;
    o.repo_dir = dir;
    o.list = list;
    o.inputs = {FeedSpec{FeedFormat::kPlain, "", feed}};
    o.now_unix = kT0 + 3600 * static_cast<int64_t>(v - 1);
    o.keep = keep;
    o.expires_in_seconds = expires_in;
    auto r = urlguard::Publish(Env::Default(), key, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->version, v);
    return *r;
  }
  std::string PublicDir(const std::string& list = kList) const { return PublicListDir(dir, list); }
  std::string File(const std::string& name, const std::string& list = kList) const {
    return ReadFileOrDie(JoinPath(PublicDir(list), name));
  }
  Manifest LoadManifest() const {
    auto m = ParseManifest(File("manifest.json"));
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return *m;
  }
  // The publisher's own copy of version v's snapshot: what a client must end up with.
  std::string Snapshot(uint64_t v) const {
    return ReadFileOrDie(JoinPath(PrivateListDir(dir, kList), std::to_string(v) + ".ugs"));
  }
};

// Canonical bytes of `m` and their signature file by `key`.
struct SignedManifest {
  std::string json, sig;
};
SignedManifest Sign(const Manifest& m, const SigningKey& key) {
  SignedManifest s;
  s.json = SerializeManifest(m);
  s.sig = MakeManifestSignatureFile(key, s.json);
  return s;
}

// ---- the client side
// ----------------------------------------------------------------------------------------

struct Client {
  std::string dir;
  std::unique_ptr<Fetcher> fetcher;
  std::unique_ptr<Store> store;
  UpdaterOptions options;
  std::string etag;

  Client(const std::string& d, const std::string& base_url, const std::vector<PublicKey>& keys,
         Env* env = nullptr)
      : dir(d) {
    FetcherOptions fo;
    fo.total_timeout_ms = 20000;
    auto f = NewCurlFetcher(fo);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    fetcher = std::move(f).value();
    auto s = Store::Open(env != nullptr ? env : Env::Default(), dir);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    store = std::move(s).value();
    options.server_base_url = base_url;
    options.trusted_keys = keys;
  }

  // One pass at `now`, with the ETag the previous successful pass returned.
  SyncOutcome Sync(int64_t now) {
    SyncOutcome o = SyncList(*fetcher, *store, options, kList, etag, now);
    if (o.kind != SyncOutcome::kFailed) etag = o.etag;
    return o;
  }
  uint64_t Installed() const {
    const InstalledList* in = store->state().FindInstalled(kList);
    return in != nullptr ? in->version : 0;
  }
  std::string InstalledBytes() const {
    return ReadFileOrDie(store->PathOf(*store->state().FindInstalled(kList)));
  }
  uint64_t HighWater() const {
    const ListState* s = store->state().Find(kList);
    return s != nullptr ? s->high_water_version : 0;
  }
};

// When a pass at version v runs: an hour after its publication.
int64_t NowFor(uint64_t v) { return kT0 + 3600 * static_cast<int64_t>(v - 1) + 60; }

std::string Describe(const SyncOutcome& o) {
  return std::string(SyncOutcomeKindName(o.kind)) + " " + std::to_string(o.from_version) + "->" +
         std::to_string(o.to_version) + " error=" + o.error.ToString() +
         " diff_error=" + o.diff_error.ToString();
}

// Publishes version 1 of the list and returns the directory to serve.
std::string PublishFirstVersion(Repo& repo) {
  repo.Publish(1);
  return repo.dir + "/public";
}

// A repository at version 1, a server, and a client that installed version 1.
struct World {
  std::string root;
  Repo repo;
  TestServer server;
  Client client;

  explicit World(const std::string& name)
      : root(ScratchDir(name)),
        repo(root + "/repo"),
        server(PublishFirstVersion(repo)),
        client(root + "/D", server.base_url(), {repo.key.public_key()}) {
    SyncOutcome o = client.Sync(NowFor(1));
    EXPECT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
    server.TakeRequests();
  }
};

void ExpectFailedKeepingOld(const SyncOutcome& o, StatusCode code, const std::string& message,
                            const Client& c, uint64_t old_version) {
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_EQ(o.error.code(), code) << Describe(o);
  EXPECT_NE(o.error.message().find(message), std::string::npos) << o.error.message();
  EXPECT_EQ(o.to_version, old_version);
  EXPECT_EQ(c.Installed(), old_version);
  EXPECT_EQ(c.HighWater(), old_version);
  EXPECT_TRUE(o.etag.empty());
  // What serves is still intact and is what D/current says.
  auto disk = ReadStoreState(Env::Default(), c.dir);
  ASSERT_TRUE(disk.ok());
  EXPECT_EQ(*disk, c.store->state());
}

// ---- the normal path
// ----------------------------------------------------------------------------------------

TEST(Updater, SnapshotThenDiffThenNotModifiedAndUpToDate) {
  const std::string root = ScratchDir("updater-basic");
  Repo repo(root + "/repo");
  repo.Publish(1);
  TestServer server(repo.dir + "/public");
  Client client(root + "/D", server.base_url(), {repo.key.public_key()});

  // First pass: the snapshot.
  SyncOutcome o = client.Sync(NowFor(1));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.error.ok());
  EXPECT_EQ(o.from_version, 0u);
  EXPECT_EQ(o.to_version, 1u);
  EXPECT_FALSE(o.used_diff);
  EXPECT_FALSE(o.fell_back_to_snapshot);
  EXPECT_FALSE(o.stale);
  EXPECT_FALSE(o.etag.empty());
  EXPECT_EQ(o.min_wait_seconds, 1800u);
  const Manifest m1 = repo.LoadManifest();
  EXPECT_EQ(o.bytes_downloaded,
            repo.File("manifest.json").size() + repo.File("manifest.sig").size() + m1.snapshot.size);
  EXPECT_EQ(server.TakeRequests(),
            (std::vector<std::string>{"manifest.json", "manifest.sig", m1.snapshot.path}));
  EXPECT_EQ(client.InstalledBytes(), repo.Snapshot(1));
  EXPECT_EQ(client.HighWater(), 1u);
  EXPECT_EQ(client.store->state().Find(kList)->high_water_manifest_sha256,
            Sha256(repo.File("manifest.json")));

  // Nothing new: 304 with the ETag, "up to date" without it.
  o = client.Sync(NowFor(1) + 1800);
  EXPECT_EQ(o.kind, SyncOutcome::kNotModified) << Describe(o);
  EXPECT_EQ(o.bytes_downloaded, 0u);
  EXPECT_EQ(o.to_version, 1u);
  EXPECT_FALSE(o.stale);
  EXPECT_EQ(server.TakeRequests(), std::vector<std::string>{"manifest.json"});
  const std::string etag = client.etag;
  client.etag.clear();
  o = client.Sync(NowFor(1) + 1800);
  EXPECT_EQ(o.kind, SyncOutcome::kUpToDate) << Describe(o);
  EXPECT_EQ(o.etag, etag);
  EXPECT_EQ(server.TakeRequests(), (std::vector<std::string>{"manifest.json", "manifest.sig"}));

  // Version 2: the diff.
  PublishReport r2 = repo.Publish(2);
  ASSERT_EQ(r2.diffs.size(), 1u);
  const Manifest m2 = repo.LoadManifest();
  o = client.Sync(NowFor(2));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_EQ(o.from_version, 1u);
  EXPECT_EQ(o.to_version, 2u);
  EXPECT_TRUE(o.used_diff);
  EXPECT_FALSE(o.fell_back_to_snapshot);
  EXPECT_NE(o.etag, etag);
  EXPECT_EQ(server.TakeRequests(),
            (std::vector<std::string>{"manifest.json", "manifest.sig", m2.diffs[0].file.path}));
  EXPECT_EQ(o.bytes_downloaded,
            repo.File("manifest.json").size() + repo.File("manifest.sig").size() + m2.diffs[0].file.size);
  EXPECT_LT(m2.diffs[0].file.size, m2.snapshot.size);
  EXPECT_EQ(client.InstalledBytes(), repo.Snapshot(2));
  EXPECT_EQ(client.HighWater(), 2u);
  EXPECT_FALSE(fs::exists(client.dir + "/lists/phishing/1.ugs"));

  // Version 3 from 2: again a diff; readers see each generation.
  const uint64_t generation = ReadStoreState(Env::Default(), client.dir)->generation;
  repo.Publish(3);
  o = client.Sync(NowFor(3));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.used_diff);
  EXPECT_EQ(client.InstalledBytes(), repo.Snapshot(3));
  EXPECT_NE(ReadStoreState(Env::Default(), client.dir)->generation, generation);
}

TEST(Updater, DiffForAnotherBaseIsIgnoredAndTheSnapshotUsed) {
  World s("updater-otherbase");
  // The server moves to 3 keeping only the diff 2->3; the client is at 1.
  s.repo.Publish(2);
  s.repo.Publish(3, kList, /*keep=*/1);
  const Manifest m3 = s.repo.LoadManifest();
  ASSERT_EQ(m3.diffs.size(), 1u);
  ASSERT_EQ(m3.diffs[0].from_version, 2u);
  SyncOutcome o = s.client.Sync(NowFor(3));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_FALSE(o.used_diff);
  EXPECT_FALSE(o.fell_back_to_snapshot);
  EXPECT_EQ(s.server.TakeRequests(),
            (std::vector<std::string>{"manifest.json", "manifest.sig", m3.snapshot.path}));
  EXPECT_EQ(s.client.InstalledBytes(), s.repo.Snapshot(3));
}

// ---- signatures and keys
// -----------------------------------------------------------------------------------

TEST(Updater, ForgedManifestIsRefusedBeforeParsing) {
  World s("updater-forged");
  s.repo.Publish(2);
  std::string forged = s.repo.File("manifest.json");
  forged[forged.find("\"version\": 2") + 11] = '3';  // one changed byte: a "newer" version
  s.server.Override("manifest.json", forged);
  SyncOutcome o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kPermissionDenied, "bad signature", s.client, 1);
  // Signature checked first: bytes that are not even JSON give the same answer, never a parse error.
  s.server.Override("manifest.json", "\x01\x02 not json");
  o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kPermissionDenied, "bad signature", s.client, 1);
  // A flipped bit in the signature file.
  s.server.ClearOverrides();
  std::string sig = s.repo.File("manifest.sig");
  sig[40] = sig[40] == 'A' ? 'B' : 'A';
  s.server.Override("manifest.sig", sig);
  o = s.client.Sync(NowFor(2));
  EXPECT_EQ(o.error.code(), StatusCode::kPermissionDenied) << Describe(o);
  EXPECT_EQ(s.server.TakeRequests().size(), 6u);  // manifest and signature, three times: nothing else
  // Without faults the update goes through.
  s.server.ClearOverrides();
  o = s.client.Sync(NowFor(2));
  EXPECT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
}

TEST(Updater, SignatureByAnUntrustedKeyIsRefused) {
  World s("updater-untrusted");
  s.repo.Publish(2);
  SigningKey other = std::move(SigningKey::Generate()).value();
  SignedManifest sm = Sign(s.repo.LoadManifest(), other);
  s.server.Override("manifest.json", sm.json);
  s.server.Override("manifest.sig", sm.sig);
  SyncOutcome o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kPermissionDenied, "signature by an untrusted key", s.client, 1);
  EXPECT_EQ(s.server.TakeRequests(), (std::vector<std::string>{"manifest.json", "manifest.sig"}));
}

TEST(Updater, RotatedKeyIsTrustedOnlyThroughAStatementFromAConfiguredKey) {
  const std::string root = ScratchDir("updater-rotation");
  Repo repo(root + "/repo");  // publishes with key B
  SigningKey a = std::move(SigningKey::Generate()).value();
  repo.Publish(1);
  TestServer server(repo.dir + "/public");

  Client plain(root + "/D1", server.base_url(), {a.public_key()});
  SyncOutcome o = plain.Sync(NowFor(1));
  EXPECT_EQ(o.error.code(), StatusCode::kPermissionDenied) << Describe(o);

  // The daemon's startup: configured key A plus the statement A -> B from its configuration.
  auto statement = MakeRotationStatement(a, repo.key.public_key(), kT0 - 100);
  ASSERT_TRUE(statement.ok());
  auto trusted = AcceptRotationChain({a.public_key()}, {*statement}, kT0);
  ASSERT_TRUE(trusted.ok()) << trusted.status().ToString();
  Client rotated(root + "/D2", server.base_url(), *trusted);
  o = rotated.Sync(NowFor(1));
  EXPECT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);

  // A statement for B signed by a key nobody configured extends nothing.
  SigningKey mallory = std::move(SigningKey::Generate()).value();
  auto forged = MakeRotationStatement(mallory, repo.key.public_key(), kT0 - 100);
  ASSERT_TRUE(forged.ok());
  EXPECT_EQ(AcceptRotationChain({a.public_key()}, {*forged}, kT0).status().code(),
            StatusCode::kPermissionDenied);
}

// After a rotation A -> B, a manifest signed by A alone is refused (A is retired once the statement's grace,
// here none, has passed), while one signed by B is accepted.
TEST(Updater, RotationRetiresTheOldKey) {
  const std::string root = ScratchDir("updater-retire");
  Repo repo(root + "/repo");  // signs with A
  repo.Publish(1);
  TestServer server(repo.dir + "/public");
  SigningKey b = std::move(SigningKey::Generate()).value();
  auto statement = MakeRotationStatement(repo.key, b.public_key(), kT0 - 100);
  ASSERT_TRUE(statement.ok());
  auto chain = AcceptTrustChain({repo.key.public_key()}, {*statement}, NowFor(1));
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  Client client(root + "/D", server.base_url(), chain->keys);
  SyncOutcome o = client.Sync(NowFor(1));
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_EQ(o.error.code(), StatusCode::kPermissionDenied) << Describe(o);
  EXPECT_NE(o.error.message().find("untrusted key"), std::string::npos) << o.error.message();

  // Signed by both keys (the overlap of a rotation): accepted through B.
  const std::string json = repo.File("manifest.json");
  server.Override("manifest.sig", MakeManifestSignatureFile(repo.key, json) + MakeManifestSignatureFile(b, json));
  o = client.Sync(NowFor(1));
  EXPECT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
}

// A stolen key fast-forwarded the client to version 2^64-1: every genuine manifest is then a "rollback". The
// genuine publisher rotates to a new key with a signed high-water reset; the client lowers its mark and
// accepts the genuine publisher's next manifest. Re-reading the statement later changes nothing.
TEST(Updater, SignedHighWaterResetRecoversFromAFastForward) {
  World w("updater-hw-reset");
  {  // What the thief's manifest installed (a valid snapshot at version 2^64-1).
    SnapshotContent c;
    c.list_name = kList;
    c.version = UINT64_MAX;
    c.created_unix = NowFor(1);
    LayerContent domain;
    domain.kind = LayerKind::kDomain;
    domain.universe = 1 << 20;
    for (uint64_t i = 0; i < 50; ++i) domain.fingerprints.push_back(i * 997 + 1);
    domain.entries = domain.fingerprints.size();
    c.layers.push_back(domain);
    const std::string bytes = *BuildSnapshot(c);
    InstalledList meta;
    meta.list = kList;
    meta.version = UINT64_MAX;
    std::memcpy(meta.state_sha256.data(), bytes.data() + bytes.size() - 32, 32);
    meta.manifest_sha256 = Sha256("the thief's manifest");
    meta.created_unix = NowFor(1);
    meta.expires_unix = NowFor(1) + 3600;
    ASSERT_TRUE(w.client.store->Install(meta, bytes).ok());
  }
  w.repo.Publish(2);
  SyncOutcome o = w.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kFailedPrecondition, "rollback refused", w.client, UINT64_MAX);

  // The genuine publisher: A -> B with "reset phishing 1", valid from NowFor(1) + 100.
  SigningKey b = std::move(SigningKey::Generate()).value();
  RotationStatement content;
  content.new_key = b.public_key();
  content.not_before_unix = NowFor(1) + 100;
  content.old_key_until_unix = content.not_before_unix;
  content.resets = {{kList, 1, 0}};
  auto statement = MakeRotationStatementV2(w.repo.key, content);
  ASSERT_TRUE(statement.ok()) << statement.status().ToString();
  auto chain = AcceptTrustChain({w.repo.key.public_key()}, {*statement}, NowFor(3));
  ASSERT_TRUE(chain.ok()) << chain.status().ToString();
  ASSERT_EQ(chain->resets.size(), 1u);
  bool applied = false;
  ASSERT_TRUE(w.client.store->ResetHighWater(kList, 1, chain->resets[0].not_before_unix, &applied).ok());
  EXPECT_TRUE(applied);
  EXPECT_EQ(w.client.HighWater(), 1u);
  EXPECT_EQ(w.client.Installed(), 0u);  // the thief's version no longer serves

  w.repo.key = std::move(b);
  w.repo.Publish(3);
  w.client.options.trusted_keys = chain->keys;
  w.client.etag.clear();
  o = w.client.Sync(NowFor(3));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_EQ(w.client.Installed(), 3u);
  EXPECT_EQ(w.client.InstalledBytes(), w.repo.Snapshot(3));
  // At the next start the daemon reads the statement again: the genuine version 3 was created after it.
  ASSERT_TRUE(w.client.store->ResetHighWater(kList, 1, chain->resets[0].not_before_unix, &applied).ok());
  EXPECT_FALSE(applied);
  EXPECT_EQ(w.client.HighWater(), 3u);
}

// ---- the high-water mark and freshness
// -----------------------------------------------------------------------

TEST(Updater, OlderVersionIsRefused) {
  World s("updater-rollback");
  const std::string old_json = s.repo.File("manifest.json"), old_sig = s.repo.File("manifest.sig");
  s.repo.Publish(2);
  ASSERT_EQ(s.client.Sync(NowFor(2)).kind, SyncOutcome::kUpdated);
  s.server.Override("manifest.json", old_json);  // correctly signed, but version 1
  s.server.Override("manifest.sig", old_sig);
  s.client.etag.clear();
  SyncOutcome o = s.client.Sync(NowFor(2) + 60);
  ExpectFailedKeepingOld(o, StatusCode::kFailedPrecondition, "rollback refused", s.client, 2);
  s.server.TakeRequests();
  o = s.client.Sync(NowFor(2) + 120);
  EXPECT_EQ(o.error.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.server.TakeRequests(),
            (std::vector<std::string>{"manifest.json", "manifest.sig"}));  // nothing more
}

TEST(Updater, SameVersionWithOtherBytesIsRefused) {
  World s("updater-equivocation");
  Manifest m = s.repo.LoadManifest();
  m.min_wait_seconds += 1;  // another, validly signed manifest for version 1
  SignedManifest sm = Sign(m, s.repo.key);
  s.server.Override("manifest.json", sm.json);
  s.server.Override("manifest.sig", sm.sig);
  s.client.etag.clear();
  SyncOutcome o = s.client.Sync(NowFor(1) + 60);
  ExpectFailedKeepingOld(o, StatusCode::kPermissionDenied, "equivocation refused", s.client, 1);
  EXPECT_EQ(s.server.TakeRequests(), (std::vector<std::string>{"manifest.json", "manifest.sig"}));
}

TEST(Updater, ExpiredManifestIsRefusedAndStale) {
  const std::string root = ScratchDir("updater-expired");
  Repo repo(root + "/repo");
  repo.Publish(1, kList, 5, /*expires_in=*/3600);
  TestServer server(repo.dir + "/public");
  Client client(root + "/D", server.base_url(), {repo.key.public_key()});
  const int64_t expires = kT0 + 3600;
  SyncOutcome o = client.Sync(expires);  // now >= expires
  EXPECT_EQ(o.kind, SyncOutcome::kFailed);
  EXPECT_EQ(o.error.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(o.error.message().find("expired"), std::string::npos) << o.error.message();
  EXPECT_TRUE(o.stale);
  EXPECT_EQ(client.Installed(), 0u);
  EXPECT_EQ(client.store->state().Find(kList), nullptr);  // no high-water mark from a refused manifest
  EXPECT_EQ(server.TakeRequests(), (std::vector<std::string>{"manifest.json", "manifest.sig"}));

  // A second before expiry it installs and is fresh; once its time passes, the 304 pass reports it stale.
  o = client.Sync(expires - 1);
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_FALSE(o.stale);
  // Once its time passes, the server answering 304 for it is a freeze: a failure, not "not modified".
  o = client.Sync(expires + 10);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_EQ(o.error.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(o.error.message().find("frozen"), std::string::npos) << o.error.message();
  EXPECT_TRUE(o.stale);
}

// A server (or a man in the middle) that keeps serving the same signed manifest past its expiry: with the
// ETag (304) or without (200, the installed bytes), the pass fails and the list is stale.
TEST(Updater, ExpiredButUnchangedManifestIsAFreezeFailure) {
  World w("updater-freeze");
  const int64_t expired = kT0 + 86400 + 5;  // version 1 expires a day after publication
  SyncOutcome o = w.client.Sync(expired);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_NE(o.error.message().find("frozen"), std::string::npos) << o.error.message();
  EXPECT_TRUE(o.stale);
  w.client.etag.clear();  // no conditional GET: the server answers 200 with the installed bytes
  o = w.client.Sync(expired);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_NE(o.error.message().find("frozen"), std::string::npos) << o.error.message();
  EXPECT_TRUE(o.stale);
  EXPECT_EQ(w.client.Installed(), 1u);  // still serving, flagged stale
}

// A manifest that signs a lifetime beyond kMaxManifestLifetimeSeconds (a stolen key's "never expires"), or a
// `created` far ahead of now, is refused even though correctly signed.
TEST(Updater, ManifestLifetimeIsBounded) {
  World w("updater-lifetime");
  w.repo.Publish(2);
  Manifest m = w.repo.LoadManifest();
  m.expires_unix = m.created_unix + kMaxManifestLifetimeSeconds + 1;
  SignedManifest forged = Sign(m, w.repo.key);
  w.server.Override("manifest.json", forged.json);
  w.server.Override("manifest.sig", forged.sig);
  SyncOutcome o = w.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kFailedPrecondition, "lifetime", w.client, 1);

  m.expires_unix = INT64_MAX;  // year 292 billion
  forged = Sign(m, w.repo.key);
  w.server.Override("manifest.json", forged.json);
  w.server.Override("manifest.sig", forged.sig);
  o = w.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kFailedPrecondition, "lifetime", w.client, 1);

  m = w.repo.LoadManifest();
  m.created_unix = NowFor(2) + kMaxManifestCreatedAheadSeconds + 3600;
  m.expires_unix = m.created_unix + 3600;
  forged = Sign(m, w.repo.key);
  w.server.Override("manifest.json", forged.json);
  w.server.Override("manifest.sig", forged.sig);
  o = w.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kFailedPrecondition, "after now", w.client, 1);

  // The genuine manifest (a day of lifetime) installs.
  w.server.ClearOverrides();
  o = w.client.Sync(NowFor(2));
  EXPECT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
}

// The time floor: once a manifest created at T has been verified, a clock set back before T does not make an
// expired manifest fresh again, neither for installing nor for the `stale` flag.
TEST(Updater, ClockSetBackCannotResurrectAnExpiredManifest) {
  const std::string root = ScratchDir("updater-time-floor");
  Repo repo(root + "/repo");
  repo.Publish(1, kList, 5, /*expires_in=*/3600);  // phishing: created kT0, expires kT0 + 3600
  for (uint64_t v = 1; v <= 3; ++v) repo.Publish(v, "malware");  // malware v3: created kT0 + 7200
  TestServer server(repo.dir + "/public");
  Client client(root + "/D", server.base_url(), {repo.key.public_key()});
  SyncOutcome o = SyncList(*client.fetcher, *client.store, client.options, "malware", "", NowFor(3));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_EQ(ReadTimeFloor(Env::Default(), client.dir), kT0 + 7200);

  // The clock now says kT0 + 60: phishing v1 would look fresh, but the floor says it is at least kT0 + 7200.
  o = client.Sync(kT0 + 60);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_NE(o.error.message().find("expired"), std::string::npos) << o.error.message();
  EXPECT_TRUE(o.stale);
  EXPECT_EQ(client.Installed(), 0u);

  // The floor is persisted: a new Store on the same directory (a restart) keeps it.
  client.store.reset();
  auto reopened = Store::Open(Env::Default(), client.dir);
  ASSERT_TRUE(reopened.ok());
  client.store = std::move(reopened).value();
  o = client.Sync(kT0 + 60);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_TRUE(o.stale);
}

TEST(TimeFloor, RoundTripAndDamageIsIgnored) {
  EXPECT_EQ(*ParseTimeFloor(SerializeTimeFloor(0)), 0);
  EXPECT_EQ(*ParseTimeFloor(SerializeTimeFloor(1700000000)), 1700000000);
  EXPECT_EQ(*ParseTimeFloor(SerializeTimeFloor(INT64_MAX)), INT64_MAX);
  std::string bytes = SerializeTimeFloor(1700000000);
  bytes[24] = '9';  // a flipped digit must not move the floor
  EXPECT_FALSE(ParseTimeFloor(bytes).ok());
  EXPECT_FALSE(ParseTimeFloor("urlguard time floor v1\n0017\n").ok());
  EXPECT_FALSE(ParseTimeFloor("").ok());
  const std::string dir = ScratchDir("time-floor-file");
  EXPECT_EQ(ReadTimeFloor(Env::Default(), dir), 0);
  ASSERT_TRUE(AdvanceTimeFloor(Env::Default(), dir, 500).ok());
  ASSERT_TRUE(AdvanceTimeFloor(Env::Default(), dir, 400).ok());  // never lowered
  EXPECT_EQ(ReadTimeFloor(Env::Default(), dir), 500);
  WriteFileOrDie(dir + "/time-floor", bytes);
  EXPECT_EQ(ReadTimeFloor(Env::Default(), dir), 0);
}

TEST(Updater, LostStateFileIsRepairedEvenWithAnETag) {
  World s("updater-repair");
  const std::string etag = s.client.etag;
  ASSERT_FALSE(etag.empty());
  s.client.store.reset();
  fs::remove(s.client.dir + "/lists/phishing/1.ugs");
  auto reopened = Store::Open(Env::Default(), s.client.dir);
  ASSERT_TRUE(reopened.ok());
  s.client.store = std::move(reopened).value();
  ASSERT_EQ(s.client.Installed(), 0u);
  ASSERT_EQ(s.client.HighWater(), 1u);
  SyncOutcome o = s.client.Sync(NowFor(1) + 60);  // the stale ETag must not turn this into a 304
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.repaired);
  EXPECT_EQ(o.from_version, 0u);
  EXPECT_EQ(o.to_version, 1u);
  EXPECT_EQ(s.client.InstalledBytes(), s.repo.Snapshot(1));
}

TEST(Updater, ManifestOfAnotherListIsRefused) {
  World s("updater-otherlist");
  s.repo.Publish(1, "malware");
  s.server.Override("manifest.json", s.repo.File("manifest.json", "malware"));
  s.server.Override("manifest.sig", s.repo.File("manifest.sig", "malware"));
  s.client.etag.clear();
  SyncOutcome o = s.client.Sync(NowFor(1) + 60);
  ExpectFailedKeepingOld(o, StatusCode::kCorruption, "manifest of list 'malware'", s.client, 1);
  EXPECT_EQ(s.server.TakeRequests(), (std::vector<std::string>{"manifest.json", "manifest.sig"}));
}

// ---- state hashes, downloads, decompression
// -------------------------------------------------------------------

// Version 2 published; a test doctors the diff and/or the manifest.
struct DiffWorld : World {
  Manifest m2;
  std::string diff_wire;  // the served (zlib) diff bytes

  explicit DiffWorld(const std::string& name) : World(name) {
    repo.Publish(2);
    m2 = repo.LoadManifest();
    EXPECT_EQ(m2.diffs.size(), 1u);
    diff_wire = repo.File(m2.diffs[0].file.path);
  }
  // Serves `diff_bytes` (uncompressed) as the diff and a manifest re-signed to name them.
  void ServeDiff(const std::string& diff_bytes, Manifest m) {
    const std::string wire = DeflateBytes(diff_bytes, 9);
    m.diffs[0].file.size = wire.size();
    m.diffs[0].file.sha256 = Sha256(wire);
    m.diffs[0].file.inflated_size = diff_bytes.size();
    ServeManifest(m);
    server.Override(m.diffs[0].file.path, wire);
  }
  void ServeManifest(const Manifest& m) {
    SignedManifest sm = Sign(m, repo.key);
    server.Override("manifest.json", sm.json);
    server.Override("manifest.sig", sm.sig);
  }
  // Serves `wire` (as sent) as the snapshot of a manifest based on m2 that offers no diff, re-signed to name it.
  Manifest ServeSnapshotOnly(const std::string& wire) {
    Manifest m = m2;
    m.diffs.clear();
    m.snapshot.size = wire.size();
    m.snapshot.sha256 = Sha256(wire);
    ServeManifest(m);
    server.Override(m.snapshot.path, wire);
    return m;
  }
};

TEST(Updater, WrongDiffFallsBackToTheSnapshot) {
  DiffWorld s("updater-wrongdiff");
  // A diff that decodes and applies, but to a different state: one added fingerprint fewer.
  auto diff = DecodeDiff(*InflateBounded(s.diff_wire, kMaxDiffBytes));
  ASSERT_TRUE(diff.ok());
  bool changed = false;
  for (LayerDiff& l : diff->layers) {
    if (!changed && !l.added.empty()) {
      l.added.pop_back();
      --l.new_count;
      changed = true;
    }
  }
  ASSERT_TRUE(changed);
  ASSERT_TRUE(ValidateDiff(*diff).ok());
  s.ServeDiff(EncodeDiff(*diff), s.m2);
  SyncOutcome o = s.client.Sync(NowFor(2));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_FALSE(o.used_diff);
  EXPECT_TRUE(o.fell_back_to_snapshot);
  EXPECT_NE(o.diff_error.message().find("state hash mismatch"), std::string::npos) << o.diff_error.message();
  EXPECT_EQ(s.server.TakeRequests(), (std::vector<std::string>{"manifest.json", "manifest.sig",
                                                               s.m2.diffs[0].file.path, s.m2.snapshot.path}));
  EXPECT_EQ(s.client.InstalledBytes(), s.repo.Snapshot(2));
}

TEST(Updater, DiffForAnotherBaseServedAsOursFallsBack) {
  DiffWorld s("updater-diffbase");
  // The diff bytes claim to start from version 7: DecodeDiff accepts them, ApplyDiffToSnapshot does not.
  auto diff = DecodeDiff(*InflateBounded(s.diff_wire, kMaxDiffBytes));
  ASSERT_TRUE(diff.ok());
  diff->from_version = 7;
  diff->to_version = 8;
  s.ServeDiff(EncodeDiff(*diff), s.m2);
  SyncOutcome o = s.client.Sync(NowFor(2));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.fell_back_to_snapshot);
  EXPECT_NE(o.diff_error.message().find("does not apply to version 1"), std::string::npos)
      << o.diff_error.message();
  EXPECT_EQ(s.client.InstalledBytes(), s.repo.Snapshot(2));
}

TEST(Updater, TamperedStateHashFailsBothWaysAndKeepsTheOldState) {
  DiffWorld s("updater-statehash");
  Manifest m = s.m2;
  m.state_sha256[0] ^= 0x80;  // re-signed with the trusted key: only the state check can catch it
  s.ServeManifest(m);
  SyncOutcome o = s.client.Sync(NowFor(2));
  EXPECT_TRUE(o.fell_back_to_snapshot);
  EXPECT_NE(o.diff_error.message().find("state hash mismatch"), std::string::npos) << o.diff_error.message();
  ExpectFailedKeepingOld(o, StatusCode::kCorruption, "snapshot state hash differs", s.client, 1);
  EXPECT_NE(o.error.message().find("after the diff failed"), std::string::npos) << o.error.message();
  EXPECT_EQ(s.client.InstalledBytes(), s.repo.Snapshot(1));
  EXPECT_EQ(FilesBelow(s.client.dir),
            (std::set<std::string>{"current", "lock", "lists/phishing/1.ugs", "time-floor"}));
}

TEST(Updater, ShortLongAndAlteredDownloadsAreRefused) {
  DiffWorld s("updater-download");
  const std::string snap_path = s.m2.snapshot.path;
  const std::string snap = s.repo.File(snap_path);
  // Break the diff too, so that the snapshot is what the pass depends on.
  s.server.Override(s.m2.diffs[0].file.path, "", 500);

  s.server.Override(snap_path, snap.substr(0, snap.size() - 10));
  SyncOutcome o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kCorruption, "truncated download", s.client, 1);
  EXPECT_NE(o.diff_error.message().find("HTTP 500"), std::string::npos) << o.diff_error.message();

  s.server.Override(snap_path, snap + std::string(1000, 'x'));
  o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kResourceExhausted, "signed size", s.client, 1);
  EXPECT_LE(o.bytes_downloaded, 2 * kMaxManifestBytes + s.m2.snapshot.size);

  std::string altered = snap;
  altered[altered.size() / 2] ^= 0x01;
  s.server.Override(snap_path, altered);
  o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kCorruption, "SHA-256 differs", s.client, 1);

  s.server.Override(snap_path, "", 404);
  o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kNotFound, "HTTP 404", s.client, 1);

  s.server.ClearOverrides();
  o = s.client.Sync(NowFor(2));
  EXPECT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.used_diff);
}

// A snapshot is written to its file as it arrives, never held, and what it must prove is checked on the way: one
// whose content no longer matches the checksum it ends with (damaged before it was compressed and signed: the
// signature and the state hash hold) is refused, and the pass leaves no file behind.
TEST(Updater, ASnapshotDamagedBeforeItWasSignedIsRefusedAndLeavesNoFile) {
  DiffWorld s("updater-snapcontent");
  std::string snap = s.repo.Snapshot(2);
  snap[snap.size() / 2] = static_cast<char>(snap[snap.size() / 2] ^ 0x01);
  Manifest m = s.ServeSnapshotOnly(DeflateBytes(snap, 6));
  SyncOutcome o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kCorruption, "content checksum mismatch", s.client, 1);
  EXPECT_EQ(FilesBelow(s.client.dir),
            (std::set<std::string>{"current", "lock", "lists/phishing/1.ugs", "time-floor"}));
  // The snapshot as published installs.
  s.server.ClearOverrides();
  m.snapshot = s.m2.snapshot;
  s.ServeManifest(m);
  o = s.client.Sync(NowFor(2));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_FALSE(o.used_diff);
  EXPECT_EQ(s.client.InstalledBytes(), s.repo.Snapshot(2));
}

TEST(Updater, DecompressionBombsAreCapped) {
  DiffWorld s("updater-bomb");
  // 1. A real bomb: 64 MiB of zeros (about 64 KiB of zlib) served as the snapshot. The manifest's signed
  // inflated_size stays the real state size, so inflation stops there.
  const std::string bomb = DeflateBytes(std::string(size_t{64} << 20, '\0'), 9);
  ASSERT_LT(bomb.size(), size_t{1} << 20);
  Manifest m = s.ServeSnapshotOnly(bomb);
  SyncOutcome o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kResourceExhausted, m.snapshot.path, s.client, 1);

  // 2. The real snapshot, but the manifest claims it inflates to 100 bytes (with a matching state size).
  s.server.ClearOverrides();
  m = s.m2;
  m.diffs.clear();
  m.snapshot.inflated_size = m.state_bytes = 100;
  s.ServeManifest(m);
  o = s.client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kResourceExhausted, m.snapshot.path, s.client, 1);

  // 3. A diff that claims fewer inflated bytes than it has: capped, and the snapshot takes over.
  s.server.ClearOverrides();
  m = s.m2;
  m.diffs[0].file.inflated_size = 10;
  s.ServeManifest(m);
  o = s.client.Sync(NowFor(2));
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.fell_back_to_snapshot);
  EXPECT_EQ(o.diff_error.code(), StatusCode::kResourceExhausted) << o.diff_error.ToString();
  EXPECT_EQ(s.client.InstalledBytes(), s.repo.Snapshot(2));
}

// ---- the server misbehaving
// ------------------------------------------------------------------------------------

TEST(Updater, ServerErrorsAndOversizedManifests) {
  World s("updater-errors");
  s.client.etag.clear();
  s.server.Override("manifest.json", "down", 500);
  SyncOutcome o = s.client.Sync(NowFor(1));
  ExpectFailedKeepingOld(o, StatusCode::kUnavailable, "HTTP 500", s.client, 1);
  EXPECT_EQ(o.retry_after_seconds, -1);
  EXPECT_FALSE(o.stale);
  EXPECT_EQ(o.min_wait_seconds, 1800u);  // the installed manifest's, for the backoff

  s.server.Override("manifest.json", "slow down", 429, {{"Retry-After", "120"}});
  o = s.client.Sync(NowFor(1));
  ExpectFailedKeepingOld(o, StatusCode::kUnavailable, "HTTP 429", s.client, 1);
  EXPECT_EQ(o.retry_after_seconds, 120);

  s.server.Override("manifest.json", "", 404);
  o = s.client.Sync(NowFor(1));
  ExpectFailedKeepingOld(o, StatusCode::kNotFound, "HTTP 404", s.client, 1);

  s.server.ClearOverrides();
  s.server.Override("manifest.sig", "", 503, {{"Retry-After", "30"}});
  o = s.client.Sync(NowFor(1));
  ExpectFailedKeepingOld(o, StatusCode::kUnavailable, "manifest.sig: HTTP 503", s.client, 1);
  EXPECT_EQ(o.retry_after_seconds, 30);

  s.server.ClearOverrides();
  s.server.Override("manifest.json", std::string(kMaxManifestBytes + 1, ' '));
  o = s.client.Sync(NowFor(1));
  ExpectFailedKeepingOld(o, StatusCode::kResourceExhausted, "manifest.json", s.client, 1);

  s.server.ClearOverrides();
  s.server.Override("manifest.sig", std::string(kMaxSignatureFileBytes + 1, 'x'));
  o = s.client.Sync(NowFor(1));
  ExpectFailedKeepingOld(o, StatusCode::kResourceExhausted, "manifest.sig", s.client, 1);

  // No server at all.
  s.server.Stop();
  o = s.client.Sync(NowFor(1));
  ExpectFailedKeepingOld(o, StatusCode::kUnavailable, "manifest.json", s.client, 1);
}

TEST(Updater, BadArgumentsFailCleanly) {
  World s("updater-args");
  SyncOutcome o = SyncList(*s.client.fetcher, *s.client.store, s.client.options, "Bad/List", "", NowFor(1));
  EXPECT_EQ(o.error.code(), StatusCode::kInvalidArgument);
  UpdaterOptions no_url = s.client.options;
  no_url.server_base_url = "/";
  o = SyncList(*s.client.fetcher, *s.client.store, no_url, kList, "", NowFor(1));
  EXPECT_EQ(o.error.code(), StatusCode::kInvalidArgument);
  UpdaterOptions slash = s.client.options;
  slash.server_base_url += "/";
  o = SyncList(*s.client.fetcher, *s.client.store, slash, kList, "", NowFor(1));
  EXPECT_EQ(o.kind, SyncOutcome::kUpToDate) << Describe(o);
  EXPECT_STREQ(SyncOutcomeKindName(SyncOutcome::kNotModified), "not_modified");
}

// ---- the store failing underneath
// ------------------------------------------------------------------------------

TEST(Updater, FullDiskLeavesTheOldStateServing) {
  const std::string root = ScratchDir("updater-full");
  Repo repo(root + "/repo");
  repo.Publish(1);
  TestServer server(repo.dir + "/public");
  FaultInjectionEnv env;
  Client client(root + "/D", server.base_url(), {repo.key.public_key()}, &env);
  ASSERT_EQ(client.Sync(NowFor(1)).kind, SyncOutcome::kUpdated);
  repo.Publish(2);
  env.FailEveryAppend(Status::ResourceExhausted("write: No space left on device"));
  SyncOutcome o = client.Sync(NowFor(2));
  ExpectFailedKeepingOld(o, StatusCode::kResourceExhausted, "No space left", client, 1);
  EXPECT_EQ(client.InstalledBytes(), repo.Snapshot(1));
  env.ClearFaults();
  o = client.Sync(NowFor(2));
  EXPECT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_EQ(client.InstalledBytes(), repo.Snapshot(2));
}

// ---- the Syncer: subscriptions are state
// ---------------------------------------------------------------------------

// The process clock fixed at a test's time (the lists expire a day after kT0).
class FixedClockEnv : public EnvWrapper {
 public:
  explicit FixedClockEnv(int64_t now) : EnvWrapper(Env::Default()), now_(now) {}
  int64_t NowUnixSeconds() override { return now_; }

 private:
  const int64_t now_;
};

// Moves every file of `list`'s public directory but its manifest to `stash` (the downloads "briefly missing"),
// and back.
void HideDownloads(const Repo& repo, const std::string& list, const std::string& stash) {
  fs::create_directories(stash);
  for (const auto& e : fs::directory_iterator(repo.PublicDir(list))) {
    const std::string name = e.path().filename().string();
    if (name.rfind("manifest.", 0) != 0) fs::rename(e.path(), stash + "/" + name);
  }
}
void RestoreDownloads(const Repo& repo, const std::string& list, const std::string& stash) {
  for (const auto& e : fs::directory_iterator(stash)) fs::rename(e.path(), repo.PublicDir(list) + "/" + e.path().filename().string());
}

std::string Describe(const std::vector<SyncReport>& reports) {
  std::string out;
  for (const SyncReport& r : reports) out += (r.list.empty() ? "(index)" : r.list) + "=" + SyncResultName(r.result) + " " + r.error + "; ";
  return out;
}

SyncerOptions SyncerFor(const std::string& dir, const TestServer& server, const Repo& repo) {
  SyncerOptions so;
  so.data_dir = dir;
  so.server_url = server.base_url();
  so.trusted_keys = {repo.key.public_key()};
  return so;
}

// Issue 22 item 2: the index names alpha and beta while beta's downloads are missing. beta is recorded as
// subscribed before any download, so every reader counts it as not installed (verdicts stale), and the next pass
// (a new process, without --list) retries it instead of keeping alpha alone.
TEST(Syncer, AListWhoseFirstSyncFailedStaysSubscribedStaleAndIsRetried) {
  const std::string root = ScratchDir("syncer-first-failure");
  Repo repo(root + "/repo");
  repo.Publish(1, "alpha");
  repo.Publish(1, "beta");
  TestServer server(repo.dir + "/public");
  HideDownloads(repo, "beta", root + "/stash");
  const std::string dir = root + "/D";
  FixedClockEnv env(NowFor(1));
  {
    auto syncer = Syncer::Open(&env, SyncerFor(dir, server, repo));
    ASSERT_TRUE(syncer.ok()) << syncer.status().ToString();
    auto reports = (*syncer)->RunDue(NowFor(1), /*force=*/true);
    ASSERT_EQ(reports.size(), 2u) << Describe(reports);
    EXPECT_EQ(reports[0].list, "alpha");
    EXPECT_EQ(reports[0].result, SyncResult::kUpdated) << Describe(reports);
    EXPECT_EQ(reports[1].list, "beta");
    EXPECT_EQ(reports[1].result, SyncResult::kFailed) << Describe(reports);
  }
  auto subs = ReadSubscriptions(&env, dir);
  ASSERT_TRUE(subs.ok()) << subs.status().ToString();
  EXPECT_EQ(*subs, (std::vector<Subscription>{{"alpha", SubscriptionOrigin::kIndex},
                                              {"beta", SubscriptionOrigin::kIndex}}));
  // A reader told nothing about lists (`urlguard status`, `check`) still sees beta.
  ::urlguard::ClientOptions co;
  co.data_dir = dir;
  co.watch = false;
  co.env = &env;
  {
    auto client = ::urlguard::Client::Open(co);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    auto lists = (*client)->Lists();
    ASSERT_EQ(lists.size(), 2u);
    EXPECT_EQ(lists[0].name, "alpha");
    EXPECT_FALSE(lists[0].stale);
    EXPECT_EQ(lists[1].name, "beta");
    EXPECT_TRUE(lists[1].stale);
    EXPECT_EQ(lists[1].stale_reason, StaleReason::kNotInstalled);
    EXPECT_EQ(lists[1].last_sync_result, SyncResult::kFailed);
    EXPECT_FALSE(ListsReady(lists, {}));
    const Verdict v = (*client)->CheckLocal("http://evil-beta0.example/");  // a beta-only URL
    EXPECT_EQ(v.kind, VerdictKind::kSafe);
    EXPECT_TRUE(v.stale);
  }
  // Beta is back: the next pass retries it.
  RestoreDownloads(repo, "beta", root + "/stash");
  {
    auto syncer = Syncer::Open(&env, SyncerFor(dir, server, repo));
    ASSERT_TRUE(syncer.ok()) << syncer.status().ToString();
    auto reports = (*syncer)->RunDue(NowFor(1) + 60, /*force=*/true);
    ASSERT_EQ(reports.size(), 2u) << Describe(reports);
    EXPECT_EQ(reports[0].result, SyncResult::kNotModified) << Describe(reports);  // alpha: its ETag was kept
    EXPECT_EQ(reports[1].list, "beta");
    EXPECT_EQ(reports[1].result, SyncResult::kUpdated) << Describe(reports);
  }
  auto client = ::urlguard::Client::Open(co);
  ASSERT_TRUE(client.ok());
  EXPECT_TRUE(ListsReady((*client)->Lists(), {}));
  EXPECT_FALSE((*client)->CheckLocal("http://example.org/").stale);
  EXPECT_EQ((*client)->CheckLocal("http://evil-beta0.example/").kind, VerdictKind::kHit);
}

// The process clock at a test's time, moved on by `step` seconds once, when a list file of `slow_list` is
// installed: that list's download "took" `step` seconds.
class SlowListClockEnv : public EnvWrapper {
 public:
  SlowListClockEnv(int64_t now, std::string slow_list, int64_t step)
      : EnvWrapper(Env::Default()), now_(now), marker_("/" + slow_list + "/"), step_(step) {}
  int64_t NowUnixSeconds() override { return now_.load(); }
  Status RenameFile(const std::string& from, const std::string& to) override {
    Status s = EnvWrapper::RenameFile(from, to);
    // The list file's path goes through the store's held D/lists (/proc/self/fd/N/LIST/V.ugs).
    const bool list_file = to.find(marker_) != std::string::npos && to.ends_with(".ugs");
    if (s.ok() && list_file && !stepped_.exchange(true)) now_ += step_;
    return s;
  }

 private:
  std::atomic<int64_t> now_;
  std::atomic<bool> stepped_{false};
  const std::string marker_;
  const int64_t step_;
};

// Each list's pass is timed when it starts: a list synced after a 10-minute download of another is recorded at
// its own time, and its next poll (placed through its manifest's Date against that time) comes a whole interval
// after it, not 10 minutes early.
TEST(Syncer, EachListOfAPassIsTimedWhenItsOwnPassStarts) {
  const std::string root = ScratchDir("syncer-list-clock");
  Repo repo(root + "/repo");
  repo.Publish(1, "alpha");
  repo.Publish(1, "beta");
  TestServer server(repo.dir + "/public");
  const int64_t t = NowFor(1);
  SlowListClockEnv env(t, "alpha", 600);
  auto syncer = Syncer::Open(&env, SyncerFor(root + "/D", server, repo));
  ASSERT_TRUE(syncer.ok()) << syncer.status().ToString();
  auto reports = (*syncer)->RunDue(t, /*force=*/true);
  ASSERT_EQ(reports.size(), 2u) << Describe(reports);
  EXPECT_EQ(reports[0].result, SyncResult::kUpdated) << Describe(reports);
  EXPECT_EQ(reports[1].result, SyncResult::kUpdated) << Describe(reports);
  const std::vector<ListSyncState>& schedule = (*syncer)->schedule();
  ASSERT_EQ(schedule.size(), 2u);
  EXPECT_EQ(schedule[0].list, "alpha");
  EXPECT_EQ(schedule[0].last_success_unix, t);
  EXPECT_EQ(schedule[1].list, "beta");
  EXPECT_EQ(schedule[1].last_success_unix, t + 600);
  EXPECT_GE(schedule[1].next_attempt_unix, t + 600 + kMinPollIntervalSeconds);
  EXPECT_LT(schedule[1].next_attempt_unix, t + 600 + kPollIntervalSeconds + kPollJitterSeconds);
  // The schedule as saved says the same.
  syncer->reset();
  LoadedSyncState saved = LoadSyncState(&env, root + "/D");
  ASSERT_TRUE(saved.warning.ok()) << saved.warning.ToString();
  const ListSyncState* beta = FindOrAddListSyncState(&saved.lists, "beta");
  EXPECT_EQ(beta->last_success_unix, t + 600);
}

// A list a newer signed index no longer names is unsubscribed on purpose: reported, removed from the store (so it
// neither serves nor turns every verdict stale when it expires unsynced); a list the index adds is subscribed and
// installed in the same pass. A list the user named (--list) stays whatever the index says.
TEST(Syncer, TheIndexAddsAndDropsListsAndEachDropIsReported) {
  const std::string root = ScratchDir("syncer-follow-index");
  Repo repo(root + "/repo");
  repo.Publish(1, "alpha");
  repo.Publish(1, "beta");
  TestServer server(repo.dir + "/public");
  const std::string dir = root + "/D";
  FixedClockEnv env(NowFor(1));
  auto syncer = Syncer::Open(&env, SyncerFor(dir, server, repo));
  ASSERT_TRUE(syncer.ok()) << syncer.status().ToString();
  auto reports = (*syncer)->RunDue(NowFor(1), /*force=*/true);
  ASSERT_EQ(reports.size(), 2u) << Describe(reports);
  // An unchanged index is a 304: nothing changes.
  server.TakeRequests();
  reports = (*syncer)->RunDue(NowFor(1) + 60, /*force=*/true);
  EXPECT_EQ(reports.size(), 2u) << Describe(reports);
  const std::vector<std::string> requests = server.TakeRequests();
  EXPECT_NE(std::find(requests.begin(), requests.end(), "/v1/lists/index.json"), requests.end());
  EXPECT_EQ(std::find(requests.begin(), requests.end(), "/v1/lists/index.sig"), requests.end())
      << "a 304 for index.json needs no signature";
  // The publisher drops beta and adds gamma.
  fs::remove_all(repo.PublicDir("beta"));
  repo.Publish(1, "gamma");
  reports = (*syncer)->RunDue(NowFor(1) + 120, /*force=*/true);
  ASSERT_EQ(reports.size(), 3u) << Describe(reports);
  EXPECT_EQ(reports[0].list, "beta");
  EXPECT_EQ(reports[0].result, SyncResult::kUnsubscribed);
  EXPECT_EQ(reports[0].from_version, 1u);
  EXPECT_EQ(RenderSyncReportText(reports[0]), "beta: unsubscribed: no longer in the server's list index, removed "
                                              "(was version 1)");
  EXPECT_EQ(reports[1].list, "alpha");
  EXPECT_EQ(reports[2].list, "gamma");
  EXPECT_EQ(reports[2].result, SyncResult::kUpdated) << Describe(reports);
  EXPECT_EQ((*syncer)->store().state().Find("beta"), nullptr);
  EXPECT_EQ(SubscribedNames((*syncer)->subscriptions()), (std::vector<std::string>{"alpha", "gamma"}));
  EXPECT_FALSE(fs::exists(dir + "/lists/beta/1.ugs"));
  syncer->reset();
  // The user's own subscription survives the index.
  SyncerOptions with_list = SyncerFor(dir, server, repo);
  with_list.lists = {"alpha"};
  ASSERT_TRUE(Syncer::Open(&env, with_list).ok());
  fs::remove_all(repo.PublicDir("alpha"));
  repo.Publish(2, "gamma");
  auto again = Syncer::Open(&env, SyncerFor(dir, server, repo));
  ASSERT_TRUE(again.ok());
  reports = (*again)->RunDue(NowFor(2), /*force=*/true);
  EXPECT_EQ(SubscribedNames((*again)->subscriptions()), (std::vector<std::string>{"alpha", "gamma"}))
      << Describe(reports);
  EXPECT_EQ((*again)->subscriptions()[0].origin, SubscriptionOrigin::kList);
}

// Issue 22 item 3: an index of 260 lists. kMaxLists is one number for the index, D/current, the sync state and
// the subscriptions: the index is refused whole (a failed report the daemon counts, over_list_limit), nothing is
// subscribed or cut, and a client that already follows the index keeps what it has.
TEST(Syncer, AnIndexOfMoreListsThanAClientKeepsIsRefusedWholeAndReported) {
  const std::string root = ScratchDir("syncer-260");
  Repo repo(root + "/repo");
  repo.Publish(1, "alpha");
  TestServer server(repo.dir + "/public");
  const std::string dir = root + "/D";
  FixedClockEnv env(NowFor(1));
  auto syncer = Syncer::Open(&env, SyncerFor(dir, server, repo));
  ASSERT_TRUE(syncer.ok());
  ASSERT_EQ((*syncer)->RunDue(NowFor(1), /*force=*/true).size(), 1u);
  syncer->reset();
  // Another directory follows the index (alpha) and has a list of the user's own.
  const std::string mixed = root + "/mixed";
  {
    auto s = Syncer::Open(&env, SyncerFor(mixed, server, repo));
    ASSERT_TRUE(s.ok());
    ASSERT_EQ((*s)->RunDue(NowFor(1), /*force=*/true).size(), 1u);
  }
  SyncerOptions mine = SyncerFor(mixed, server, repo);
  mine.lists = {"zzz-mine"};
  ASSERT_TRUE(Syncer::Open(&env, mine).ok());
  // A correctly signed index of 260 lists (written by hand: the publisher itself refuses to index more than 256).
  auto index_of = [](size_t n) {
    std::string lists;
    for (size_t i = 0; i < n; ++i) {
      lists += std::string(i ? "," : "") + R"({"name":")" + (i == 0 ? std::string("alpha") : "list" + std::to_string(1000 + i)) +
               R"(","version":1,"created_unix":)" + std::to_string(kT0) + R"(,"expires_unix":)" +
               std::to_string(kT0 + 86400) + "}";
    }
    return R"({"format":1,"created_unix":)" + std::to_string(NowFor(1)) + R"(,"lists":[)" + lists + "]}\n";
  };
  const std::string bytes = index_of(260);
  WriteFileOrDie(repo.dir + "/public/v1/lists/index.json", bytes);
  WriteFileOrDie(repo.dir + "/public/v1/lists/index.sig", MakeListIndexSignatureFile(repo.key, bytes));
  for (const std::string& d : {dir, root + "/fresh"}) {
    SCOPED_TRACE(d);
    auto s = Syncer::Open(&env, SyncerFor(d, server, repo));
    ASSERT_TRUE(s.ok());
    auto reports = (*s)->RunDue(NowFor(1) + 60, /*force=*/true);
    ASSERT_FALSE(reports.empty());
    EXPECT_EQ(reports[0].list, "");
    EXPECT_EQ(reports[0].result, SyncResult::kFailed);
    EXPECT_TRUE(reports[0].over_list_limit);
    EXPECT_EQ(RenderSyncReportText(reports[0]),
              "list discovery: failed: resource_exhausted: list index: list index names 260 lists, more than a "
              "client keeps (256)");
    EXPECT_LE((*s)->subscriptions().size(), 1u);
    EXPECT_LE((*s)->store().state().lists.size(), 1u);
    if (d == dir) {  // the list it had keeps syncing
      ASSERT_EQ(reports.size(), 2u) << Describe(reports);
      EXPECT_EQ(reports[1].list, "alpha");
      EXPECT_EQ(reports[1].result, SyncResult::kNotModified);
    } else {
      EXPECT_EQ(reports.size(), 1u);
    }
  }
  // The user's lists and the index's together may not pass the limit either: refused, nothing cut.
  const std::string full = index_of(kMaxLists);
  WriteFileOrDie(repo.dir + "/public/v1/lists/index.json", full);
  WriteFileOrDie(repo.dir + "/public/v1/lists/index.sig", MakeListIndexSignatureFile(repo.key, full));
  auto s = Syncer::Open(&env, SyncerFor(mixed, server, repo));
  ASSERT_TRUE(s.ok());
  auto reports = (*s)->RunDue(NowFor(1) + 60, /*force=*/false);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports[0].result, SyncResult::kFailed);
  EXPECT_NE(reports[0].error.find("subscribing to 257 lists, more than a client keeps (256)"), std::string::npos)
      << reports[0].error;
  EXPECT_EQ(SubscribedNames((*s)->subscriptions()), (std::vector<std::string>{"alpha", "zzz-mine"}));
}

}  // namespace
}  // namespace urlguard
