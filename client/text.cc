// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The public text tools (include/urlguard/text.h) over url/url_canon.h and url/url_extract.h.
#include "urlguard/text.h"

#include "core/sha256.h"
#include "url/url_canon.h"
#include "url/url_extract.h"

namespace urlguard {

static_assert(kMaxScannedTextBytes == kMaxExtractInputBytes, "one cap for scanned text");
static_assert(kMaxFoundUrlsPerText == kMaxUrlsPerText, "one cap for URLs per text");
static_assert(kMaxFoundUrlBytes == kMaxExtractedUrlBytes, "one cap for found URLs");

Result<CanonicalForm> Canonicalize(std::string_view url) {
  CanonicalUrl c;
  URLGUARD_RETURN_IF_ERROR(Canonicalize(url, &c));
  CanonicalForm f;
  f.url = c.Spec();
  f.scheme = c.scheme;
  f.host = c.host;
  f.path = c.path;
  f.query = c.query;
  f.has_query = c.has_query;
  ExpressionList exprs;
  MakeExpressions(c, &exprs);
  for (size_t i = 0; i < exprs.size(); ++i) {
    UrlExpression e;
    e.expression = std::string(exprs[i]);
    e.layer = exprs.is_host_root(i) ? Layer::kDomain : Layer::kUrl;
    e.sha256_hex = ToHex(Sha256(exprs[i]));
    f.expressions.push_back(std::move(e));
  }
  return f;
}

std::string ExpressionSha256Hex(std::string_view expression) { return ToHex(Sha256(expression)); }

FoundUrls ExtractUrls(std::string_view text) {
  ExtractResult r;
  ExtractUrls(text, &r);
  FoundUrls out;
  out.truncated = r.truncated;
  out.scanned_bytes = r.scanned_bytes;
  out.urls.reserve(r.urls.size());
  for (size_t i = 0; i < r.urls.size(); ++i) {
    const ExtractedUrl& u = r.urls[i];
    FoundUrl f;
    f.begin = u.begin;
    f.end = u.end;
    f.url = std::string(r.url(i));
    f.defanged = u.defanged;
    f.had_scheme = u.had_scheme;
    f.cut = u.cut;
    out.urls.push_back(std::move(f));
  }
  return out;
}

}  // namespace urlguard
