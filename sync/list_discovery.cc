// Copyright urlguard authors.
#include "sync/list_discovery.h"

namespace urlguard {
namespace {

Result<std::string> Get(Fetcher& fetcher, const std::string& url, const char* name, size_t max_bytes) {
  FetchRequest req;
  req.url = url;
  req.max_bytes = max_bytes;
  URLGUARD_ASSIGN_OR_RETURN(FetchResponse resp, fetcher.Fetch(req));
  if (resp.status == 200) return std::move(resp.body);
  const std::string what = std::string("GET ") + name + ": HTTP " + std::to_string(resp.status);
  if (resp.status == 404 || resp.status == 410) return Status::NotFound(what);
  return Status::Unavailable(what);
}

}  // namespace

Result<ListIndex> FetchListIndex(Fetcher& fetcher, const std::string& base_url,
                                 const std::vector<PublicKey>& trusted_keys) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.empty()) return Status::InvalidArgument("list index: no server base URL");
  base += '/';
  auto index = Get(fetcher, base + std::string(kListIndexPath), "index.json", kMaxListIndexBytes);
  if (!index.ok()) return index.status().WithContext("list index");
  auto sig = Get(fetcher, base + std::string(kListIndexSignaturePath), "index.sig", kMaxSignatureFileBytes);
  if (!sig.ok()) return sig.status().WithContext("list index");
  auto parsed = VerifyAndParseListIndex(trusted_keys, *index, *sig);
  if (!parsed.ok()) return parsed.status().WithContext("list index");
  return parsed;
}

}  // namespace urlguard
