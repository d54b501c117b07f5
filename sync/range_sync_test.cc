// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The client path of manifest format 2 (docs/manifest-format.md §8.3) end to end: repositories built in the
// test itself (snapshots by BuildSnapshot, range diffs by EncodeRangeDiff, manifests by SerializeManifest
// signed with the test key), served by a real HTTP server on 127.0.0.1 (cpp-httplib), fetched with the real
// libcurl Fetcher into a real data directory (Store). Each version's snapshot is also built from scratch, so
// a state rebuilt from range diffs is compared byte for byte with it.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/diff_codec.h"
#include "core/set_digest.h"
#include "core/snapshot.h"
#include "format/deflate.h"
#include "format/manifest.h"
#include "signing/signer.h"
#include "sync/apply.h"
#include "sync/syncer.h"
#include "sync/updater.h"
#include "tests/random_set.h"
#include "tests/http_date.h"
#include "tests/largest_alloc.h"
#include "tests/test_util.h"
#include "urlguard/render.h"

namespace urlguard {
namespace {

using ::urlguard::testing::HttpDate;
using ::urlguard::testing::ReadFileOrDie;
using ::urlguard::testing::ScratchDir;
using ::urlguard::testing::SourcePath;

constexpr char kList[] = "phishing";
constexpr int64_t kT0 = 1700000000;  // version v is created at kT0 + 60 v
constexpr uint64_t kDomainUniverse = uint64_t{1} << 30;
constexpr uint64_t kUrlUniverse = uint64_t{1} << 28;

// Serves an in-memory file map under /v1/lists/phishing/; records the requested names.
class MapServer {
 public:
  MapServer() {
    server_.Get(R"(/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      const std::string prefix = std::string("/v1/lists/") + kList + "/";
      const std::string name = req.path.rfind(prefix, 0) == 0 ? req.path.substr(prefix.size()) : req.path;
      requests_.push_back(name);
      auto it = files_.find(name);
      if (it == files_.end()) {
        res.status = 404;
        return;
      }
      // Streamed from the stored bytes, a piece at a time: the server copies no whole file (a test measures the
      // client's largest allocation in this process).
      std::shared_ptr<const std::string> body = it->second;
      res.set_content_provider(body->size(), "application/octet-stream",
                               [body](size_t offset, size_t length, httplib::DataSink& sink) {
                                 return sink.write(body->data() + offset, std::min<size_t>(length, 16384));
                               });
      if (date_ != 0) res.set_header("Date", HttpDate(date_));
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~MapServer() {
    server_.stop();
    thread_.join();
  }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Put(const std::string& name, std::string body) {
    std::lock_guard<std::mutex> lock(mu_);
    files_[name] = std::make_shared<const std::string>(std::move(body));
  }
  // Sends `t` as the Date of every answer (the server's clock); 0: no Date.
  void SetDate(int64_t t) {
    std::lock_guard<std::mutex> lock(mu_);
    date_ = t;
  }
  std::vector<std::string> TakeRequests() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    out.swap(requests_);
    return out;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;  // guards files_ and requests_
  std::map<std::string, std::shared_ptr<const std::string>> files_;
  std::vector<std::string> requests_;
  int64_t date_ = 0;
};

// One list's history: per version the domain and url fingerprint sets and the fingerprints touched.
struct Chain {
  struct Version {
    std::vector<uint64_t> domain, url;
    std::set<uint64_t> touched_domain, touched_url;
    uint64_t domain_universe = kDomainUniverse;
  };
  std::vector<Version> v;  // v[0] unused; v[1] the first version

  explicit Chain(uint64_t last, uint64_t seed = 7, size_t domains = 2000) {
    std::mt19937_64 rng(seed);
    v.resize(last + 1);
    v[1].domain = testing::RandomSet(rng, domains, kDomainUniverse);
    v[1].url = testing::RandomSet(rng, 300, kUrlUniverse);
    for (uint64_t x = 2; x <= last; ++x) {
      v[x] = v[x - 1];
      v[x].touched_domain.clear();
      v[x].touched_url.clear();
      Mutate(rng, &v[x].domain, &v[x].touched_domain, kDomainUniverse, 30);
      Mutate(rng, &v[x].url, &v[x].touched_url, kUrlUniverse, 5);
    }
  }

  // Removes `n` random members and adds `n` random values (some touched twice over the chain).
  static void Mutate(std::mt19937_64& rng, std::vector<uint64_t>* set, std::set<uint64_t>* touched,
                     uint64_t universe, int n) {
    std::set<uint64_t> s(set->begin(), set->end());
    for (int i = 0; i < n && !s.empty(); ++i) {
      auto it = s.begin();
      std::advance(it, static_cast<long>(rng() % s.size()));
      touched->insert(*it);
      s.erase(it);
    }
    for (int i = 0; i < n; ++i) {
      const uint64_t f = rng() % universe;
      touched->insert(f);
      s.insert(f);
    }
    set->assign(s.begin(), s.end());
  }

  std::string Snapshot(uint64_t x) const {
    SnapshotContent c;
    c.list_name = kList;
    c.version = x;
    c.created_unix = kT0 + 60 * static_cast<int64_t>(x);
    LayerContent d;
    d.kind = LayerKind::kDomain;
    d.universe = v[x].domain_universe;
    d.fingerprints = v[x].domain;
    d.entries = d.fingerprints.size();
    LayerContent u;
    u.kind = LayerKind::kUrl;
    u.universe = kUrlUniverse;
    u.fingerprints = v[x].url;
    u.entries = u.fingerprints.size();
    c.layers = {d, u};
    auto bytes = BuildSnapshot(c);
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    return *bytes;
  }

  Sha256Digest Digest(uint64_t x) const {
    SetDigestInput in;
    in.universe = {v[x].domain_universe, kUrlUniverse, 0};
    for (uint64_t f : v[x].domain) AddToSetSum(&in.layers[0], LayerKind::kDomain, f);
    for (uint64_t f : v[x].url) AddToSetSum(&in.layers[1], LayerKind::kUrl, f);
    return SetDigest(in);
  }

  RangeDiff Range(uint64_t a, uint64_t t) const {
    std::set<uint64_t> td, tu;
    for (uint64_t x = a + 1; x <= t; ++x) {
      td.insert(v[x].touched_domain.begin(), v[x].touched_domain.end());
      tu.insert(v[x].touched_url.begin(), v[x].touched_url.end());
    }
    RangeDiff d;
    d.list_name = kList;
    d.from_version = a;
    d.to_version = t;
    d.layers = {MakeRangeLayerDiff(LayerKind::kDomain, v[t].domain_universe, {td.begin(), td.end()}, v[t].domain),
                MakeRangeLayerDiff(LayerKind::kUrl, kUrlUniverse, {tu.begin(), tu.end()}, v[t].url)};
    return d;
  }
};

ManifestFile Served(MapServer& server, const std::string& name, const std::string& bytes) {
  const std::string z = DeflateBytes(bytes, 6);
  server.Put(name, z);
  return ManifestFile{name, z.size(), Sha256(z), bytes.size()};
}

std::string DiffName(uint64_t a, uint64_t t) { return "r-" + std::to_string(a) + "-" + std::to_string(t) + ".z"; }

// The publisher side, as the test needs it: serves version `ver` with checkpoint `c`; to-current diffs from
// every A in [c, ver) and to-checkpoint diffs from every A in [1, c) (or from the `from` lists given).
struct Repo {
  const Chain& chain;
  MapServer& server;
  SigningKey key;

  Manifest Build(uint64_t ver, uint64_t c, std::vector<uint64_t> to_current = {},
                 std::vector<uint64_t> to_checkpoint = {}, bool all = true) {
    if (all) {
      for (uint64_t a = c; a < ver; ++a) to_current.push_back(a);
      for (uint64_t a = 1; a < c && c < ver + 1; ++a) to_checkpoint.push_back(a);
    }
    Manifest m;
    m.format = kManifestFormat2;
    m.list = kList;
    m.version = ver;
    m.created_unix = kT0 + 60 * static_cast<int64_t>(ver);
    m.expires_unix = m.created_unix + 86400;
    m.min_wait_seconds = 60;
    m.entries = {chain.v[ver].domain.size(), chain.v[ver].url.size(), 0};
    m.universe = {chain.v[ver].domain_universe, kUrlUniverse, 0};
    m.state_digest = chain.Digest(ver);
    const std::string snap = chain.Snapshot(c);
    m.checkpoint.version = c;
    m.checkpoint.snapshot = Served(server, "snap-" + std::to_string(c) + ".z", snap);
    std::memcpy(m.checkpoint.state_sha256.data(), snap.data() + snap.size() - 32, 32);
    m.checkpoint.state_bytes = snap.size();
    std::sort(to_checkpoint.begin(), to_checkpoint.end());
    std::sort(to_current.begin(), to_current.end());
    if (c < ver) {
      for (uint64_t a : to_checkpoint) {
        m.diffs.push_back({a, Served(server, DiffName(a, c), EncodeRangeDiff(chain.Range(a, c))), c});
      }
    }
    for (uint64_t a : to_current) {
      m.diffs.push_back({a, Served(server, DiffName(a, ver), EncodeRangeDiff(chain.Range(a, ver))), ver});
    }
    return m;
  }
  void Publish(const Manifest& m) {
    const std::string json = SerializeManifest(m);
    server.Put("manifest.json", json);
    server.Put("manifest.sig", MakeManifestSignatureFile(key, json));
  }
};

SigningKey TestKey() {
  auto key = SigningKey::FromPem(ReadFileOrDie(SourcePath("fixtures/keys/test-ed25519.pem")));
  EXPECT_TRUE(key.ok());
  return std::move(key).value();
}

struct Client {
  std::string dir;
  std::unique_ptr<Fetcher> fetcher;
  std::unique_ptr<Store> store;
  UpdaterOptions options;

  Client(const std::string& d, const std::string& base_url, const PublicKey& key) : dir(d) {
    auto f = NewCurlFetcher(FetcherOptions());
    EXPECT_TRUE(f.ok());
    fetcher = std::move(f).value();
    auto s = Store::Open(Env::Default(), dir);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    store = std::move(s).value();
    options.server_base_url = base_url;
    options.trusted_keys = {key};
  }
  SyncOutcome Sync(uint64_t now_version) {
    return SyncList(*fetcher, *store, options, kList, "", kT0 + 60 * static_cast<int64_t>(now_version) + 10);
  }
  uint64_t Installed() const {
    const InstalledList* in = store->state().FindInstalled(kList);
    return in != nullptr ? in->version : 0;
  }
  std::string InstalledBytes() const { return ReadFileOrDie(store->PathOf(*store->state().FindInstalled(kList))); }
};

std::string Describe(const SyncOutcome& o) {
  return std::string(SyncOutcomeKindName(o.kind)) + " " + std::to_string(o.from_version) + "->" +
         std::to_string(o.to_version) + " diffs=" + std::to_string(o.range_diffs) +
         " checkpoint=" + std::to_string(o.used_checkpoint_snapshot) + " error=" + o.error.ToString() +
         " diff_error=" + o.diff_error.ToString();
}

size_t CountDiffRequests(const std::vector<std::string>& requests) {
  return static_cast<size_t>(
      std::count_if(requests.begin(), requests.end(), [](const std::string& r) { return r.rfind("r-", 0) == 0; }));
}

// A client at version f (installed from a checkpoint manifest of f itself).
void InstallVersion(Repo& repo, Client& client, uint64_t f) {
  repo.Publish(repo.Build(f, f));
  SyncOutcome o = client.Sync(f);
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  ASSERT_TRUE(o.used_checkpoint_snapshot);
  ASSERT_EQ(client.Installed(), f);
  ASSERT_EQ(client.InstalledBytes(), repo.chain.Snapshot(f));
}

TEST(RangeSync, CatchUpFromEveryVersionEqualsTheSnapshotByteForByte) {
  constexpr uint64_t kV = 12;
  constexpr uint64_t kC = 8;
  const Chain chain(kV);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  const std::string root = ScratchDir("range_sync_every");
  const std::string want = chain.Snapshot(kV);
  for (uint64_t f = 1; f < kV; ++f) {
    SCOPED_TRACE("from version " + std::to_string(f));
    Client client(root + "/D" + std::to_string(f), server.base_url(), repo.key.public_key());
    InstallVersion(repo, client, f);
    const Manifest m = repo.Build(kV, kC);
    repo.Publish(m);
    server.TakeRequests();
    SyncOutcome o = client.Sync(kV);
    ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
    EXPECT_EQ(client.Installed(), kV);
    EXPECT_EQ(client.InstalledBytes(), want);
    EXPECT_FALSE(o.fell_back_to_snapshot) << Describe(o);
    const std::vector<std::string> requests = server.TakeRequests();
    if (f >= kC) {
      // One download after the manifest: the to-current diff from f itself (the largest A <= f).
      EXPECT_EQ(o.range_diffs, 1u);
      EXPECT_FALSE(o.used_checkpoint_snapshot);
      EXPECT_EQ(requests, (std::vector<std::string>{"manifest.json", "manifest.sig", DiffName(f, kV)}));
    } else {
      // Two: the to-checkpoint diff from f and the diff from the checkpoint, unless the snapshot is cheaper.
      const ManifestDiff* first = FindRangeDiff(m, kC, f);
      const ManifestDiff* second = FindRangeDiff(m, kV, kC);
      ASSERT_NE(first, nullptr);
      const bool snapshot_cheaper = m.checkpoint.snapshot.size < first->file.size;
      EXPECT_EQ(o.used_checkpoint_snapshot, snapshot_cheaper);
      EXPECT_EQ(o.range_diffs, snapshot_cheaper ? 1u : 2u);
      EXPECT_EQ(CountDiffRequests(requests), snapshot_cheaper ? 1u : 2u);
      EXPECT_LE(requests.size(), 4u) << "at most two downloads after the manifest";
      if (!snapshot_cheaper) {
        EXPECT_EQ(o.diff_bytes, first->file.size + second->file.size);
      }
    }
    // The set digest of the installed state is the signed one.
    auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(want.data()), want.size(), true);
    ASSERT_TRUE(view.ok());
    EXPECT_EQ(*SnapshotSetDigest(*view), m.state_digest);
  }
}

// A to-checkpoint diff over the caps every reader takes is published in `large_diffs` (docs/manifest-format.md
// §8.5). A client behind the checkpoint takes it as its first hop, through the real download path with the caps
// the manifest gives it, instead of the checkpoint snapshot; when it is damaged the client falls back to the
// snapshot, and a manifest without the member (what a reader before it sees) sends the client to the snapshot.
TEST(RangeSync, AClientBehindTheCheckpointTakesALargeDiff) {
  constexpr uint64_t kV = 12;
  constexpr uint64_t kC = 8;
  const Chain chain(kV);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  const std::string root = ScratchDir("range_sync_large");
  auto with_large = [&](const std::string& served_name, const std::string& bytes) {
    Manifest m = repo.Build(kV, kC, {kC}, {}, /*all=*/false);
    m.large_diffs.push_back({2, Served(server, served_name, bytes), kC});
    return m;
  };
  {
    Client client(root + "/D", server.base_url(), repo.key.public_key());
    InstallVersion(repo, client, 3);
    const Manifest m = with_large(DiffName(2, kC), EncodeRangeDiff(chain.Range(2, kC)));
    ASSERT_LT(m.large_diffs[0].file.size + m.diffs[0].file.size, m.checkpoint.snapshot.size);
    repo.Publish(m);
    server.TakeRequests();
    SyncOutcome o = client.Sync(kV);
    ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
    EXPECT_FALSE(o.used_checkpoint_snapshot) << Describe(o);
    EXPECT_EQ(o.range_diffs, 2u);
    EXPECT_EQ(server.TakeRequests(),
              (std::vector<std::string>{"manifest.json", "manifest.sig", DiffName(2, kC), DiffName(kC, kV)}));
    EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(kV));
  }
  {
    // The large diff damaged (a range it does not claim): the checkpoint snapshot and the diff from it.
    Client client(root + "/E", server.base_url(), repo.key.public_key());
    InstallVersion(repo, client, 3);
    repo.Publish(with_large("bad-2-8.z", EncodeRangeDiff(chain.Range(3, kC))));
    server.TakeRequests();
    SyncOutcome o = client.Sync(kV);
    ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
    EXPECT_TRUE(o.fell_back_to_snapshot);
    EXPECT_TRUE(o.used_checkpoint_snapshot);
    EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(kV));
  }
  {
    // A reader before large diffs: the same manifest without the member; the snapshot.
    Client client(root + "/F", server.base_url(), repo.key.public_key());
    InstallVersion(repo, client, 3);
    Manifest m = with_large(DiffName(2, kC), EncodeRangeDiff(chain.Range(2, kC)));
    m.large_diffs.clear();
    repo.Publish(m);
    server.TakeRequests();
    SyncOutcome o = client.Sync(kV);
    ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
    EXPECT_FALSE(o.fell_back_to_snapshot);
    EXPECT_TRUE(o.used_checkpoint_snapshot);
    EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(kV));
  }
}

TEST(RangeSync, TwoHopsThroughAToCheckpointDiff) {
  const Chain chain(10);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  Client client(ScratchDir("range_sync_two_hops") + "/D", server.base_url(), repo.key.public_key());
  InstallVersion(repo, client, 3);
  // Only one to-checkpoint diff, from 2: the client at 3 takes (2, 7] then (7, 10].
  repo.Publish(repo.Build(10, 7, {7, 9}, {2}, /*all=*/false));
  server.TakeRequests();
  SyncOutcome o = client.Sync(10);
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_EQ(o.range_diffs, 2u);
  EXPECT_TRUE(o.used_diff);
  EXPECT_FALSE(o.used_checkpoint_snapshot);
  EXPECT_EQ(server.TakeRequests(),
            (std::vector<std::string>{"manifest.json", "manifest.sig", DiffName(2, 7), DiffName(7, 10)}));
  EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(10));
  // What `urlguard sync` and the daemon log print for the pass.
  const SyncReport report = ToSyncReport(kList, o);
  EXPECT_EQ(report.diffs, 2u);
  EXPECT_GT(report.diff_bytes, 0u);
  EXPECT_EQ(RenderSyncReportText(report), "phishing: updated version 3 -> 10 (diffs 2 (" +
                                              std::to_string(o.diff_bytes) + " bytes), " +
                                              std::to_string(o.bytes_downloaded) + " bytes downloaded)");
}

TEST(RangeSync, ADiffStartingAfterTheClientIsNeverApplied) {
  const Chain chain(10);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  Client client(ScratchDir("range_sync_after") + "/D", server.base_url(), repo.key.public_key());
  InstallVersion(repo, client, 5);
  // To-current diffs from 4 (the checkpoint) and 8, 9; the client at 5 must take (4, 10], not (8, 10].
  repo.Publish(repo.Build(10, 4, {4, 8, 9}, {}, /*all=*/false));
  server.TakeRequests();
  SyncOutcome o = client.Sync(10);
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_EQ(server.TakeRequests(), (std::vector<std::string>{"manifest.json", "manifest.sig", DiffName(4, 10)}));
  EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(10));

  // And the apply step itself refuses a diff from a later version than the state's.
  const std::string old = chain.Snapshot(5);
  auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(old.data()), old.size(), true);
  ASSERT_TRUE(view.ok());
  Manifest m = repo.Build(10, 4, {4, 8, 9}, {}, false);
  Sha256Digest sha{};
  const std::string path = ScratchDir("range_sync_after_apply") + "/x.ugs";
  Status s = WriteRangeDiffAppliedSnapshot(Env::Default(), path, *view, nullptr, chain.Range(8, 10), m, &sha);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("does not apply to version 5"), std::string::npos) << s.ToString();
}

// The updater applies hops as their files hold them (RangeDiffStreams: values decoded as the merge reads them).
// That form writes the same file as the decoded one for one hop and for two, and refuses what it refuses.
TEST(RangeSync, StreamedHopsWriteWhatDecodedHopsWrite) {
  const Chain chain(10);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  const Manifest m = repo.Build(10, 7, {7, 9}, {2}, /*all=*/false);
  const std::string dir = ScratchDir("range_sync_streamed");
  auto apply_both = [&](uint64_t f, std::vector<RangeDiff> hops) {
    const std::string old = chain.Snapshot(f);
    auto view = SnapshotView::Open(reinterpret_cast<const uint8_t*>(old.data()), old.size(), true);
    ASSERT_TRUE(view.ok());
    std::vector<std::string> bytes;
    bytes.reserve(hops.size());
    std::vector<RangeDiffStreams> parsed;
    std::vector<const RangeDiff*> decoded_hops;
    std::vector<const RangeDiffStreams*> parsed_hops;
    for (const RangeDiff& d : hops) bytes.push_back(EncodeRangeDiff(d));
    for (size_t i = 0; i < hops.size(); ++i) {
      Result<RangeDiffStreams> p = ParseRangeDiff(bytes[i]);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      parsed.push_back(std::move(*p));
    }
    for (size_t i = 0; i < hops.size(); ++i) {
      decoded_hops.push_back(&hops[i]);
      parsed_hops.push_back(&parsed[i]);
    }
    Sha256Digest sha_decoded{};
    Sha256Digest sha_streamed{};
    const Status sd = WriteRangeDiffAppliedSnapshot(Env::Default(), dir + "/decoded", *view, nullptr,
                                                    std::span<const RangeDiff* const>(decoded_hops), m, &sha_decoded);
    const Status ss = WriteRangeDiffAppliedSnapshot(Env::Default(), dir + "/streamed", *view, nullptr,
                                                    std::span<const RangeDiffStreams* const>(parsed_hops), m,
                                                    &sha_streamed);
    ASSERT_EQ(ss.ok(), sd.ok()) << f << ": " << ss.ToString() << " / " << sd.ToString();
    EXPECT_EQ(ss.message(), sd.message());
    if (!sd.ok()) return;
    EXPECT_EQ(sha_streamed, sha_decoded);
    EXPECT_EQ(ReadFileOrDie(dir + "/streamed.tmp"), ReadFileOrDie(dir + "/decoded.tmp"));
    EXPECT_EQ(ReadFileOrDie(dir + "/streamed.tmp"), chain.Snapshot(10)) << "from " << f;
  };
  for (uint64_t f = 7; f <= 9; ++f) apply_both(f, {chain.Range(7, 10)});
  for (uint64_t f = 2; f <= 7; ++f) apply_both(f, {chain.Range(2, 7), chain.Range(7, 10)});
  // Refusals agree too: a first hop with a wrong count at C, and a state older than the first hop.
  RangeDiff bad = chain.Range(2, 7);
  for (RangeLayerDiff& l : bad.layers) l.new_count += 1;
  apply_both(4, {bad, chain.Range(7, 10)});
  apply_both(1, {chain.Range(2, 7), chain.Range(7, 10)});
}

// The manifest's set digest is forged (and re-signed: a publisher bug): both paths end in a digest mismatch,
// the pass fails and version 5 keeps serving.
TEST(RangeSync, ForgedDigestIsRefusedAndTheOldStateKeepsServing) {
  const Chain chain(10);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  Client client(ScratchDir("range_sync_forged") + "/D", server.base_url(), repo.key.public_key());
  InstallVersion(repo, client, 5);
  const std::string old_bytes = client.InstalledBytes();
  Manifest m = repo.Build(10, 8);
  m.state_digest[0] ^= 1;
  repo.Publish(m);
  SyncOutcome o = client.Sync(10);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_EQ(o.error.code(), StatusCode::kCorruption);
  EXPECT_NE(o.error.message().find("set digest mismatch"), std::string::npos) << o.error.ToString();
  EXPECT_TRUE(o.fell_back_to_snapshot);
  EXPECT_NE(o.diff_error.message().find("set digest mismatch"), std::string::npos) << o.diff_error.ToString();
  EXPECT_EQ(client.Installed(), 5u);
  EXPECT_EQ(client.InstalledBytes(), old_bytes);
  // The checkpoint itself as the version: its snapshot is checked against the digest too.
  Manifest at = repo.Build(10, 10);
  at.state_digest[5] ^= 1;
  repo.Publish(at);
  o = client.Sync(10);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_NE(o.error.message().find("set digest differs"), std::string::npos) << o.error.ToString();
  EXPECT_EQ(client.Installed(), 5u);
}

// A client at `f` syncs version 10 (checkpoint 8) whose range diff (a, t] says one entry too many in every layer
// (signed: the manifest names its bytes). The merge refuses it, and the client falls back to the checkpoint
// snapshot and the diff from it; *requests gets what it asked the server after the setup.
void SyncPastAWrongCount(const std::string& name, uint64_t f, uint64_t a, uint64_t t,
                         std::vector<std::string>* requests, SyncOutcome* o) {
  const Chain chain(10);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  Client client(ScratchDir(name) + "/D", server.base_url(), repo.key.public_key());
  InstallVersion(repo, client, f);
  Manifest m = repo.Build(10, 8);
  RangeDiff bad = chain.Range(a, t);
  for (RangeLayerDiff& l : bad.layers) l.new_count += 1;
  const std::string bad_name = "bad-" + std::to_string(a) + "-" + std::to_string(t) + ".z";
  for (ManifestDiff& d : m.diffs) {
    if (d.from_version == a && d.to_version == t) d.file = Served(server, bad_name, EncodeRangeDiff(bad));
  }
  repo.Publish(m);
  server.TakeRequests();
  *o = client.Sync(10);
  ASSERT_EQ(o->kind, SyncOutcome::kUpdated) << Describe(*o);
  EXPECT_TRUE(o->fell_back_to_snapshot);
  EXPECT_NE(o->diff_error.message().find("the diff says"), std::string::npos) << o->diff_error.ToString();
  EXPECT_TRUE(o->used_checkpoint_snapshot);
  EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(10));
  *requests = server.TakeRequests();
}

TEST(RangeSync, WrongNewCountFallsBackToTheCheckpoint) {
  std::vector<std::string> requests;
  SyncOutcome o;
  SyncPastAWrongCount("range_sync_count", 9, 9, 10, &requests, &o);
  EXPECT_EQ(o.range_diffs, 1u);
  EXPECT_EQ(requests, (std::vector<std::string>{"manifest.json", "manifest.sig", "bad-9-10.z", "snap-8.z",
                                                DiffName(8, 10)}));
}

// Two hops stream the state through each other (old -> C -> V) instead of being composed: the first hop's own
// count at C is checked where it is reached, so a to-checkpoint diff with a wrong new_count is refused (composed,
// the second hop's count had replaced it unchecked).
TEST(RangeSync, AFirstHopWithAWrongCountAtTheCheckpointIsRefused) {
  std::vector<std::string> requests;
  SyncOutcome o;
  SyncPastAWrongCount("range_sync_hop_count", 5, 5, 8, &requests, &o);
  EXPECT_EQ(requests, (std::vector<std::string>{"manifest.json", "manifest.sig", "bad-5-8.z", DiffName(8, 10),
                                                "snap-8.z", DiffName(8, 10)}));
}

// A truncated range diff fails its signed size/SHA-256. When it is the diff from the checkpoint, both paths
// need it: the pass fails and the old state serves.
TEST(RangeSync, TruncatedRangeDiffIsRefused) {
  const Chain chain(10);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  Client client(ScratchDir("range_sync_truncated") + "/D", server.base_url(), repo.key.public_key());
  InstallVersion(repo, client, 9);
  repo.Publish(repo.Build(10, 8));
  const std::string whole = DeflateBytes(EncodeRangeDiff(chain.Range(9, 10)), 6);
  server.Put(DiffName(9, 10), whole.substr(0, whole.size() - 3));
  SyncOutcome o = client.Sync(10);
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.fell_back_to_snapshot);
  EXPECT_NE(o.diff_error.message().find("truncated"), std::string::npos) << o.diff_error.ToString();
  EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(10));

  Client other(ScratchDir("range_sync_truncated") + "/D2", server.base_url(), repo.key.public_key());
  InstallVersion(repo, other, 9);
  repo.Publish(repo.Build(10, 8));
  const std::string from_c = DeflateBytes(EncodeRangeDiff(chain.Range(8, 10)), 6);
  server.Put(DiffName(8, 10), from_c.substr(0, from_c.size() / 2));
  server.Put(DiffName(9, 10), "garbage");
  o = other.Sync(10);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_EQ(o.error.code(), StatusCode::kCorruption);
  EXPECT_EQ(other.Installed(), 9u);
  EXPECT_EQ(other.InstalledBytes(), chain.Snapshot(9));
}

// A new client's checkpoint snapshot is written to a scratch file beside the list's as it downloads (never held
// in memory), the diff from the checkpoint is applied to it, and the scratch file is gone after the pass, whether
// it installed or failed; a snapshot damaged before it was signed is refused on the way, through the scratch file
// and through the new file itself (a checkpoint at the version).
TEST(RangeSync, TheCheckpointSnapshotIsAScratchFileThatNeverOutlivesThePass) {
  Chain chain(10);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  const std::string root = ScratchDir("range_sync_scratch");
  auto expect_no_leftovers = [](const Client& c) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(c.dir)) {
      if (!e.is_regular_file()) continue;
      const std::string name = e.path().filename().string();
      EXPECT_EQ(name.find(".tmp"), std::string::npos) << name;
      EXPECT_EQ(name.find("scratch"), std::string::npos) << name;
    }
  };
  // 1. The diff from the checkpoint is damaged: the pass fails after the snapshot, and leaves nothing.
  repo.Publish(repo.Build(10, 8));
  server.Put(DiffName(8, 10), "garbage");
  Client a(root + "/A", server.base_url(), repo.key.public_key());
  SyncOutcome o = a.Sync(10);
  EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
  EXPECT_EQ(o.error.code(), StatusCode::kCorruption) << Describe(o);
  EXPECT_EQ(a.Installed(), 0u);
  expect_no_leftovers(a);
  // 2. Served as published: installed from the scratch file, which is gone.
  repo.Publish(repo.Build(10, 8));
  server.TakeRequests();
  o = a.Sync(10);
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.used_checkpoint_snapshot);
  EXPECT_EQ(o.range_diffs, 1u);
  EXPECT_EQ(server.TakeRequests(),
            (std::vector<std::string>{"manifest.json", "manifest.sig", "snap-8.z", DiffName(8, 10)}));
  EXPECT_EQ(a.InstalledBytes(), chain.Snapshot(10));
  expect_no_leftovers(a);
  // 3. The checkpoint snapshot damaged before it was signed (its checksum and the signed state hash unchanged).
  std::string damaged = chain.Snapshot(8);
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x01);
  for (uint64_t ver : {uint64_t{10}, uint64_t{8}}) {
    SCOPED_TRACE("version " + std::to_string(ver) + ", checkpoint 8");
    Manifest bad = repo.Build(ver, 8);
    bad.checkpoint.snapshot = Served(server, "snap-8-damaged.z", damaged);
    repo.Publish(bad);
    Client b(root + "/B" + std::to_string(ver), server.base_url(), repo.key.public_key());
    o = b.Sync(ver);
    EXPECT_EQ(o.kind, SyncOutcome::kFailed) << Describe(o);
    EXPECT_EQ(o.error.code(), StatusCode::kCorruption) << Describe(o);
    EXPECT_NE(o.error.message().find("content checksum mismatch"), std::string::npos) << Describe(o);
    EXPECT_EQ(b.Installed(), 0u);
    expect_no_leftovers(b);
  }
}

// The memory of a new client's first sync: the checkpoint snapshot goes to its scratch file as it downloads and
// the diff from the checkpoint is applied to its mapping, so no allocation of the pass comes near the snapshot's
// size (before session 16 the inflated snapshot was held: one allocation of its size).
TEST(RangeSync, ANewClientNeverHoldsTheCheckpointSnapshotInMemory) {
  Chain chain(3, 7, /*domains=*/1000000);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  const Manifest m = repo.Build(3, 2);
  repo.Publish(m);
  Client client(ScratchDir("range_sync_memory") + "/D", server.base_url(), repo.key.public_key());
  size_t largest = 0;
  SyncOutcome o = testing::TrackLargestAllocation(&largest, [&] { return client.Sync(3); });
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.used_checkpoint_snapshot);
  EXPECT_EQ(o.range_diffs, 1u);
  EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(3));
  ASSERT_GT(m.checkpoint.state_bytes, uint64_t{1} << 20);
  EXPECT_LT(largest, m.checkpoint.state_bytes / 4) << "the pass allocated " << largest << " bytes at once; the "
                                                   << "snapshot is " << m.checkpoint.state_bytes;
}

// Versions 1-6 at one domain universe, 7-10 at another: a client at 5 cannot take a range diff across the
// change and downloads the checkpoint snapshot (at 10, after the change).
TEST(RangeSync, AUniverseChangeForcesTheSnapshot) {
  Chain chain(10);
  for (uint64_t x = 7; x <= 10; ++x) {
    chain.v[x].domain_universe = kDomainUniverse * 2;  // the same fingerprints fit the larger universe
  }
  MapServer server;
  Repo repo{chain, server, TestKey()};
  Client client(ScratchDir("range_sync_universe") + "/D", server.base_url(), repo.key.public_key());
  InstallVersion(repo, client, 5);
  repo.Publish(repo.Build(10, 10));
  server.TakeRequests();
  SyncOutcome o = client.Sync(10);
  ASSERT_EQ(o.kind, SyncOutcome::kUpdated) << Describe(o);
  EXPECT_TRUE(o.used_checkpoint_snapshot);
  EXPECT_EQ(o.range_diffs, 0u);
  EXPECT_FALSE(o.fell_back_to_snapshot);
  EXPECT_EQ(server.TakeRequests(), (std::vector<std::string>{"manifest.json", "manifest.sig", "snap-10.z"}));
  EXPECT_EQ(client.InstalledBytes(), chain.Snapshot(10));
}

// The Syncer places each next poll after the version the publisher's cadence makes due (docs/sync-protocol.md
// §2): on the publisher's clock as the server's Date tells it, at the client's own place in [c/6, c/2) after
// created_unix + k * c, and exactly one cadence later while it keeps that place.
TEST(RangeSync, TheSyncerPollsAtItsPlaceAfterEachVersionIsDue) {
  Chain chain(6);
  MapServer server;
  Repo repo{chain, server, TestKey()};
  const Manifest m = repo.Build(5, 5);  // created kT0 + 300, min_wait 60
  repo.Publish(m);
  for (int64_t skew : {int64_t{0}, int64_t{40}, int64_t{-700}}) {
    SCOPED_TRACE("server clock ahead by " + std::to_string(skew));
    SyncerOptions so;
    so.data_dir = ScratchDir("range_sync_aligned") + "/D" + std::to_string(skew + 1000);
    so.server_url = server.base_url();
    so.trusted_keys = {repo.key.public_key()};
    so.lists = {kList};
    auto syncer = Syncer::Open(Env::Default(), so);
    ASSERT_TRUE(syncer.ok()) << syncer.status().ToString();
    int64_t now = m.created_unix + 7;  // our clock
    server.SetDate(now + skew);
    std::vector<SyncReport> r = (*syncer)->RunDue(now, /*force=*/true);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_TRUE(r[0].error.empty()) << r[0].error;
    const int64_t next = (*syncer)->schedule()[0].next_attempt_unix;
    const int64_t place = ((next + skew - m.created_unix) % 60 + 60) % 60;  // on the publisher's clock
    EXPECT_GE(place, 10);
    EXPECT_LT(place, 30);
    EXPECT_GE(next - now, 60);
    EXPECT_LT(next - now, 110);
    // Polled at its place, the client keeps it: one cadence, poll after poll (an unchanged version and a new one
    // alike), also across a restart (a process per poll, as `urlguard sync --once` from a timer).
    for (int i = 0; i < 4; ++i) {
      now = (*syncer)->schedule()[0].next_attempt_unix;
      server.SetDate(now + skew);
      if (i == 1) repo.Publish(repo.Build(6, 6));  // created kT0 + 360
      if (i == 3) {
        syncer->reset();  // releases the data directory's lock
        syncer = Syncer::Open(Env::Default(), so);
        ASSERT_TRUE(syncer.ok()) << syncer.status().ToString();
      }
      r = (*syncer)->RunDue(now, /*force=*/i == 3);
      ASSERT_EQ(r.size(), 1u);
      ASSERT_TRUE(r[0].error.empty()) << r[0].error;
      EXPECT_EQ((*syncer)->schedule()[0].next_attempt_unix, now + 60);
    }
    repo.Publish(m);
  }
}

}  // namespace
}  // namespace urlguard
