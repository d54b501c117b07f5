// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The public Checker: owns the mappings (platform/) and runs the FilterChain (core/) with a per-thread scratch.
#include "urlguard/checker.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "url/entry.h"
#include "client/filter_chain.h"
#include "core/snapshot.h"
#include "format/repository_files.h"
#include "platform/env.h"

namespace urlguard {

const char* LayerName(Layer layer) { return LayerKindName(static_cast<LayerKind>(layer)); }

const char* VerdictKindName(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::kSafe: return "safe";
    case VerdictKind::kHit: return "hit";
    case VerdictKind::kInvalid: return "invalid";
    case VerdictKind::kSafeVerified: return "safe_verified";
    case VerdictKind::kMalicious: return "malicious";
    case VerdictKind::kUnverifiedHit: return "unverified_hit";
  }
  return "unknown";
}

bool IsThreat(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::kHit:
    case VerdictKind::kMalicious:
    case VerdictKind::kUnverifiedHit:
      return true;
    case VerdictKind::kSafe:
    case VerdictKind::kSafeVerified:
    case VerdictKind::kInvalid:
      return false;
  }
  return false;  // not a VerdictKind value: nothing to act on
}

struct Checker::Impl {
  std::vector<std::unique_ptr<MappedFile>> mappings;
  std::vector<std::string> paths;
  FilterChain chain;
};

namespace {

// One per thread: reused by every Checker on that thread, so lookups do not allocate.
LookupScratch& ThreadScratch() {
  thread_local LookupScratch scratch;
  return scratch;
}

void FillMatches(const FilterChain& chain, const LookupScratch& s, Verdict* v) {
  v->kind = VerdictKind::kHit;
  for (size_t i = 0; i < s.hit_count; ++i) {
    const LookupHit& h = s.hits[i];
    Match m;
    const SnapshotView& list = chain.lists()[h.list];
    m.list = std::string(list.list_name());
    m.list_version = list.version();
    m.layer = static_cast<Layer>(h.layer);
    if (h.expression == kIpExpression) {
      char buf[kMaxIpExpressionBytes];
      size_t n = IpPrefixExpression(s.url.ip, s.url.host_kind == HostKind::kIpv6, h.prefix_length, buf);
      m.expression.assign(buf, n);
    } else {
      m.expression = std::string(s.expressions[h.expression]);
    }
    m.sha256_hex = ToHex(h.key);
    v->matches.push_back(std::move(m));
  }
}

Verdict Finish(const FilterChain& chain, const Status& canon, const LookupScratch& s, const CheckOptions& o) {
  Verdict v;
  if (!canon.ok()) {
    v.kind = VerdictKind::kInvalid;
    v.error = canon.message();
    return v;
  }
  if (o.want_canonical) v.canonical = s.url.Spec();
  if (s.hit_count > 0) FillMatches(chain, s, &v);
  return v;
}

}  // namespace

Checker::Checker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Checker::~Checker() = default;

Result<std::unique_ptr<Checker>> Checker::Open(const std::vector<std::string>& paths,
                                               const OpenOptions& options) {
  if (paths.empty()) return Status::InvalidArgument("no snapshot files given");
  auto impl = std::make_unique<Impl>();
  std::vector<SnapshotView> views;
  std::set<std::string, std::less<>> names;
  Env* env = options.env != nullptr ? options.env : Env::Default();
  for (const std::string& path : paths) {
    auto mapped = env->MapReadOnly(path);
    if (!mapped.ok()) return mapped.status();
    auto view = SnapshotView::Open((*mapped)->data(), (*mapped)->size(), options.verify_checksum);
    if (!view.ok()) return view.status().WithContext(path);
    if (!names.insert(std::string(view->list_name())).second) {
      return Status::InvalidArgument(path + ": list '" + std::string(view->list_name()) +
                                     "' is already open from another file");
    }
    views.push_back(*view);
    impl->mappings.push_back(std::move(mapped).value());
    impl->paths.push_back(path);
  }
  impl->chain = FilterChain(std::move(views));
  return std::unique_ptr<Checker>(new Checker(std::move(impl)));
}

Result<std::unique_ptr<Checker>> Checker::OpenDirectory(const std::string& dir, const OpenOptions& options) {
  auto names = (options.env != nullptr ? options.env : Env::Default())->ListDir(dir);
  if (!names.ok()) return names.status();
  std::vector<std::string> paths;
  for (const std::string& n : *names) {
    if (HasSnapshotFileSuffix(n)) paths.push_back(JoinPath(dir, n));
  }
  if (paths.empty()) return Status::NotFound(dir + ": no *" + kSnapshotFileSuffix + " snapshot files");
  return Open(paths, options);
}

Verdict Checker::Check(std::string_view url, const CheckOptions& options) const {
  LookupScratch& s = ThreadScratch();
  Status st = impl_->chain.LookupUrl(url, &s);
  return Finish(impl_->chain, st, s, options);
}

void Checker::CheckBatch(const std::vector<std::string_view>& urls, std::vector<Verdict>* out,
                         const CheckOptions& options) const {
  // Groups of kGroup URLs in three passes, so that no probe waits on a miss alone: canonicalize and hash all
  // (hinting each probe's sample line as its key is known), prefetch every probe's lines (the samples have
  // arrived meanwhile), then probe. The scratches live per thread.
  constexpr size_t kGroup = 8;
  thread_local LookupScratch group[kGroup];
  Status status[kGroup];
  out->resize(urls.size());
  for (size_t base = 0; base < urls.size(); base += kGroup) {
    size_t n = std::min(kGroup, urls.size() - base);
    for (size_t i = 0; i < n; ++i) {
      status[i] = Canonicalize(urls[base + i], &group[i].url);
      if (status[i].ok()) {
        impl_->chain.HashExpressions(&group[i]);
        impl_->chain.PrefetchSamples(group[i]);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (status[i].ok()) impl_->chain.PrefetchProbes(group[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      group[i].hit_count = 0;
      if (status[i].ok()) impl_->chain.Probe(&group[i]);
      (*out)[base + i] = Finish(impl_->chain, status[i], group[i], options);
    }
  }
}

Verdict Checker::CheckHost(std::string_view host) const {
  // A host is checked as the URL "http://host/": its expressions are exactly the host and its parents + "/".
  if (host.empty() || host.size() > 1024 || host.find_first_of("/?#@ ") != std::string_view::npos) {
    Verdict v;
    v.kind = VerdictKind::kInvalid;
    v.error = "not a host name";
    return v;
  }
  char buf[1040];
  std::memcpy(buf, "http://", 7);
  std::memcpy(buf + 7, host.data(), host.size());
  buf[7 + host.size()] = '/';
  return Check(std::string_view(buf, host.size() + 8));
}

Verdict Checker::CheckIp(std::string_view ip) const {
  uint8_t addr[16];
  bool v6 = false;
  int len = 0;
  if (!ParseIpOrCidr(ip, addr, &v6, &len) || len != (v6 ? 128 : 32)) {
    Verdict v;
    v.kind = VerdictKind::kInvalid;
    v.error = "not an IPv4 or IPv6 address";
    return v;
  }
  char buf[80];
  size_t n;
  if (v6) {
    std::string_view inner = ip;
    if (!inner.empty() && inner.front() == '[') inner = inner.substr(1, inner.size() - 2);
    n = static_cast<size_t>(std::snprintf(buf, sizeof buf, "http://[%.*s]/", static_cast<int>(inner.size()),
                                          inner.data()));
  } else {
    n = static_cast<size_t>(std::snprintf(buf, sizeof buf, "http://%.*s/", static_cast<int>(ip.size()), ip.data()));
  }
  return Check(std::string_view(buf, std::min(n, sizeof buf - 1)));
}

std::vector<ListInfo> Checker::Lists() const {
  std::vector<ListInfo> out;
  const auto& lists = impl_->chain.lists();
  for (size_t i = 0; i < lists.size(); ++i) {
    const SnapshotView& s = lists[i];
    ListInfo info;
    info.name = std::string(s.list_name());
    info.version = s.version();
    info.created_unix = s.created_unix();
    info.entries = s.total_entries();
    for (int k = 0; k < 3; ++k) {
      if (const LayerView* l = s.layer(static_cast<LayerKind>(k))) {
        info.layer_entries[k] = l->entries;
        info.layer_filter[k] = FilterKindName(l->filter);
      }
    }
    info.bytes = s.byte_size();
    info.path = impl_->paths[i];
    info.sha256_hex = ToHex(s.checksum());
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace urlguard
