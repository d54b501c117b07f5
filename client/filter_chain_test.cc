// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "client/filter_chain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/byte_io.h"
#include "core/key_hash.h"
#include "core/sha256.h"

namespace urlguard {
namespace {

constexpr uint64_t kUniverse = uint64_t{1} << 60;  // false positives ~ n / 2^60: none in these tests

struct Aligned {
  std::vector<uint64_t> words;
  size_t size = 0;
};

// A snapshot whose layers hold exactly the given expressions, hashed with `kind`.
Aligned BuildList(const std::string& name, KeyHashKind kind, const std::vector<std::string>& domain,
                  const std::vector<std::string>& url) {
  SnapshotContent c;
  c.list_name = name;
  c.version = 1;
  c.key_hash = kind;
  for (auto [layer_kind, exprs] : {std::pair{LayerKind::kDomain, &domain}, std::pair{LayerKind::kUrl, &url}}) {
    if (exprs->empty()) continue;
    LayerContent l;
    l.kind = layer_kind;
    l.universe = kUniverse;
    for (const std::string& e : *exprs) l.fingerprints.push_back(MulHi64(KeyHash(kind, e), kUniverse));
    std::sort(l.fingerprints.begin(), l.fingerprints.end());
    l.entries = l.fingerprints.size();
    c.layers.push_back(std::move(l));
  }
  auto bytes = BuildSnapshot(c);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  Aligned a{std::vector<uint64_t>((bytes->size() + 7) / 8), bytes->size()};
  std::memcpy(a.words.data(), bytes->data(), bytes->size());
  return a;
}

SnapshotView Open(const Aligned& a) {
  auto v = SnapshotView::Open(reinterpret_cast<const uint8_t*>(a.words.data()), a.size, true);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return *v;
}

// A format 2 (XXH3 keys) and a format 1 (SHA-256 keys) list in one chain: each is probed with its own key hash,
// and every hit carries the SHA-256 of its expression (what the verify protocol sends a prefix of).
TEST(FilterChain, HitsCarryTheSha256OfTheExpression) {
  Aligned v2 = BuildList("new", KeyHashKind::kXxh3, {"evil.example/"}, {"evil.example/login.php?x=1"});
  Aligned v1 = BuildList("old", KeyHashKind::kSha256Prefix, {"bad.example/"}, {});
  FilterChain chain({Open(v2), Open(v1)});
  EXPECT_TRUE(chain.uses(KeyHashKind::kXxh3));
  EXPECT_TRUE(chain.uses(KeyHashKind::kSha256Prefix));
  LookupScratch s;

  ASSERT_TRUE(chain.LookupUrl("https://www.evil.example/login.php?x=1", &s).ok());
  ASSERT_EQ(s.hit_count, 2u);
  std::vector<std::string> hit_expressions;
  for (size_t i = 0; i < s.hit_count; ++i) {
    const LookupHit& h = s.hits[i];
    EXPECT_EQ(h.list, 0u);
    const std::string expr(s.expressions[h.expression]);
    EXPECT_EQ(h.key, Sha256(expr)) << expr;
    EXPECT_EQ(h.layer, expr == "evil.example/" ? LayerKind::kDomain : LayerKind::kUrl);
    hit_expressions.push_back(expr);
  }
  std::sort(hit_expressions.begin(), hit_expressions.end());
  EXPECT_EQ(hit_expressions, (std::vector<std::string>{"evil.example/", "evil.example/login.php?x=1"}));

  ASSERT_TRUE(chain.LookupUrl("http://a.bad.example/x", &s).ok());
  ASSERT_EQ(s.hit_count, 1u);
  EXPECT_EQ(s.hits[0].list, 1u);
  EXPECT_EQ(s.hits[0].key, Sha256("bad.example/"));

  ASSERT_TRUE(chain.LookupUrl("http://good.example/evil.example/", &s).ok());
  EXPECT_EQ(s.hit_count, 0u);
}

// A chain of format 2 lists only never computes SHA-256 keys; the same expressions under the other hash miss.
TEST(FilterChain, EachListIsProbedWithItsOwnKeyHash) {
  Aligned v2 = BuildList("new", KeyHashKind::kXxh3, {"evil.example/"}, {});
  FilterChain only_v2({Open(v2)});
  EXPECT_FALSE(only_v2.uses(KeyHashKind::kSha256Prefix));
  LookupScratch s;
  ASSERT_TRUE(only_v2.LookupUrl("http://evil.example/", &s).ok());
  EXPECT_EQ(s.hit_count, 1u);

  // The same fingerprints labelled as SHA-256 keys (format 1) no longer match the expression.
  SnapshotContent c;
  c.list_name = "mislabelled";
  c.key_hash = KeyHashKind::kSha256Prefix;
  LayerContent l;
  l.kind = LayerKind::kDomain;
  l.universe = kUniverse;
  l.fingerprints = {MulHi64(Xxh3Key("evil.example/"), kUniverse)};
  l.entries = 1;
  c.layers.push_back(l);
  auto bytes = BuildSnapshot(c);
  ASSERT_TRUE(bytes.ok());
  Aligned m{std::vector<uint64_t>((bytes->size() + 7) / 8), bytes->size()};
  std::memcpy(m.words.data(), bytes->data(), bytes->size());
  FilterChain mislabelled({Open(m)});
  ASSERT_TRUE(mislabelled.LookupUrl("http://evil.example/", &s).ok());
  EXPECT_EQ(s.hit_count, 0u);
}

}  // namespace
}  // namespace urlguard
