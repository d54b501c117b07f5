// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The public Canonicalize (include/urlguard/text.h, client/text.cc) copies url/'s CanonicalUrl and lookup
// expressions into the public CanonicalForm: url/ is a lower layer with its own fields (host_kind, ip), so the
// twin stays. These tests fail when a CanonicalForm field is added and not carried, or a carried one drifts.
#include "urlguard/text.h"

#include <gtest/gtest.h>

#include "core/sha256.h"
#include "tests/field_count.h"
#include "url/url_canon.h"

namespace urlguard {
namespace {

using testing::FieldCount;

// Where each field comes from. Adding a field stops the build here: fill it in client/text.cc, then list it.
//   CanonicalForm: url (CanonicalUrl::Spec()), scheme, host, path, query, has_query, expressions
//     (MakeExpressions). CanonicalUrl's host_kind and ip are not public: the host's spelling says it.
//   UrlExpression: expression, layer (kDomain for a host root, else kUrl), sha256_hex
static_assert(FieldCount<CanonicalForm>() == 7,
              "CanonicalForm changed: fill the new field in client/text.cc and check it in client/text_test.cc");
static_assert(FieldCount<UrlExpression>() == 3,
              "UrlExpression changed: fill the new field in client/text.cc and check it in client/text_test.cc");

TEST(CanonicalizePublic, CarriesEveryFieldOfTheInternalForm) {
  for (const char* input : {"HTTP://Evil.Example/a/../b/c.html?Q=1#frag", "evil.example", "http://a.b.c.d.e.f.g/1/2/3/4?",
                            "https://[2001:DB8::1]:8443/x", "http://3279880203/p", "ftp://b\xC3\xBC" "cher.example/"}) {
    SCOPED_TRACE(input);
    CanonicalUrl c;
    ASSERT_TRUE(Canonicalize(input, &c).ok());
    auto f = Canonicalize(std::string_view(input));
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->url, c.Spec());
    EXPECT_EQ(f->scheme, c.scheme);
    EXPECT_EQ(f->host, c.host);
    EXPECT_EQ(f->path, c.path);
    EXPECT_EQ(f->query, c.query);
    EXPECT_EQ(f->has_query, c.has_query);
    ExpressionList exprs;
    MakeExpressions(c, &exprs);
    ASSERT_EQ(f->expressions.size(), exprs.size());
    ASSERT_GT(exprs.size(), 0u);
    for (size_t i = 0; i < exprs.size(); ++i) {
      EXPECT_EQ(f->expressions[i].expression, exprs[i]);
      EXPECT_EQ(f->expressions[i].layer, exprs.is_host_root(i) ? Layer::kDomain : Layer::kUrl);
      EXPECT_EQ(f->expressions[i].sha256_hex, ToHex(Sha256(exprs[i])));
    }
  }
  // The cases above give each field a non-default value somewhere.
  auto q = Canonicalize(std::string_view("http://x.example/p?k=v"));
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->has_query);
  EXPECT_EQ(q->query, "k=v");
  EXPECT_EQ(q->scheme, "http");
}

}  // namespace
}  // namespace urlguard
