// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync/list_discovery.h"

#include "format/repository_files.h"

namespace urlguard {
namespace {

// A 200's response (a 304 too when `etag` is set); any other status is an error.
Result<FetchResponse> Get(Fetcher& fetcher, const std::string& url, const char* name, size_t max_bytes,
                          const std::string& etag = "") {
  FetchRequest req;
  req.url = url;
  req.max_bytes = max_bytes;
  req.if_none_match = etag;
  URLGUARD_ASSIGN_OR_RETURN(FetchResponse resp, fetcher.Fetch(req));
  if (resp.status == 200 || (resp.status == 304 && !etag.empty())) return resp;
  const std::string what = std::string("GET ") + name + ": HTTP " + std::to_string(resp.status);
  if (resp.status == 404 || resp.status == 410) return Status::NotFound(what);
  return Status::Unavailable(what);
}

}  // namespace

Result<FetchedListIndex> FetchListIndexIfChanged(Fetcher& fetcher, const std::string& base_url,
                                                 const std::vector<PublicKey>& trusted_keys,
                                                 const std::string& etag) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.empty()) return Status::InvalidArgument("list index: no server base URL");
  base += '/';
  auto index = Get(fetcher, base + ListIndexPath(), kListIndexFileName, kMaxListIndexBytes, etag);
  if (!index.ok()) return index.status().WithContext("list index");
  FetchedListIndex out;
  if (index->status == 304) {
    out.not_modified = true;
    out.etag = etag;
    return out;
  }
  auto sig = Get(fetcher, base + ListIndexSignaturePath(), kListIndexSignatureFileName, kMaxSignatureFileBytes);
  if (!sig.ok()) return sig.status().WithContext("list index");
  auto parsed = VerifyAndParseListIndex(trusted_keys, index->body, sig->body);
  if (!parsed.ok()) return parsed.status().WithContext("list index");
  out.index = std::move(parsed).value();
  out.etag = index->etag;
  return out;
}

Result<ListIndex> FetchListIndex(Fetcher& fetcher, const std::string& base_url,
                                 const std::vector<PublicKey>& trusted_keys) {
  URLGUARD_ASSIGN_OR_RETURN(FetchedListIndex fetched, FetchListIndexIfChanged(fetcher, base_url, trusted_keys, ""));
  return std::move(fetched.index);
}

}  // namespace urlguard
