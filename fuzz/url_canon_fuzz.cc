// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for url/url_canon: any byte string must canonicalize or fail with kInvalidArgument,
// never crash; a canonical URL yields at most kMaxExpressions expressions; and canonicalization is
// idempotent (Canonicalize(Spec()) succeeds with the same Spec(), host kind and structure); and for the
// special schemes, Spec() respelled with no, back- or extra slashes after "scheme:" reads the same host. No
// input class is excluded: url_canon.h guarantees the property for every input that canonicalizes.
//
// Build (needs clang): libraries urlguard core (url/url_canon.cc, core/status.cc, core/sha256.cc),
// libidn2, libcrypto.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "url/url_canon.h"

namespace {

[[noreturn]] void Fail(const char* what, const urlguard::CanonicalUrl& url, const std::string& again) {
  std::fprintf(stderr, "url_canon_fuzz: %s\n  spec:  %s\n  again: %s\n", what, url.Spec().c_str(),
               again.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  urlguard::CanonicalUrl url;
  const urlguard::Status status = urlguard::Canonicalize(input, &url);
  // The fast path for already-canonical input must agree with the full algorithm, field by field.
  urlguard::CanonicalUrl full;
  const urlguard::Status full_status = urlguard::internal::CanonicalizeFullPath(input, &full);
  if (full_status.ok() != status.ok() || full_status.message() != status.message()) {
    Fail("fast path and full algorithm disagree on success", url, full_status.ToString());
  }
  if (status.ok() && (full.scheme != url.scheme || full.host != url.host || full.path != url.path ||
                      full.has_query != url.has_query || full.query != url.query ||
                      full.host_kind != url.host_kind || std::memcmp(full.ip, url.ip, sizeof url.ip) != 0)) {
    Fail("fast path and full algorithm disagree", url, full.Spec());
  }
  if (!status.ok()) {
    if (status.code() != urlguard::StatusCode::kInvalidArgument || status.message().empty()) {
      Fail("failure is not a described kInvalidArgument", url, status.ToString());
    }
    return 0;
  }
  if (url.host.empty() || url.path.empty() || url.path[0] != '/') Fail("empty host or bad path", url, "");

  urlguard::ExpressionList list;
  urlguard::MakeExpressions(url, &list);
  if (list.size() == 0 || list.size() > urlguard::kMaxExpressions) Fail("expression count", url, "");
  if (list.host_count() == 0 || list.host_count() > 5) Fail("host count", url, "");

  const std::string spec = url.Spec();
  urlguard::CanonicalUrl again;
  const urlguard::Status again_status = urlguard::Canonicalize(spec, &again);
  if (!again_status.ok()) Fail("Spec() does not canonicalize", url, again_status.ToString());
  if (again.Spec() != spec) Fail("not idempotent", url, again.Spec());
  if (again.host_kind != url.host_kind || again.host != url.host || again.path != url.path ||
      again.has_query != url.has_query || again.query != url.query) {
    Fail("not idempotent (structure)", url, again.Spec());
  }
  // The browser reading (WHATWG) and the Safe Browsing reading agree on a canonical form: the host of
  // Spec() written with no slashes ("http:host/path"), with backslashes ("http:\\\\host\\path") or with
  // extra slashes gives the same host, for the special schemes.
  // (Hosts a browser refuses, with an escape or a forbidden code point left in them, are read the Safe
  // Browsing way, which needs "//", so they are not respelled.)
  const bool browser_host =
      url.host_kind == urlguard::HostKind::kIpv6 || url.host.find_first_of("%<>^|[]:") == std::string::npos;
  if (browser_host && (url.scheme == "http" || url.scheme == "https" || url.scheme == "ftp" ||
                       url.scheme == "ws" || url.scheme == "wss")) {
    const std::string tail = spec.substr(url.scheme.size() + 3);
    for (const char* sep : {":", ":\\\\", ":///"}) {
      const std::string variant = url.scheme + sep + tail;
      urlguard::CanonicalUrl v;
      const urlguard::Status vs = urlguard::Canonicalize(variant, &v);
      if (!vs.ok() || v.host != url.host) Fail("slash variant reads another host", url, variant);
    }
  }
  return 0;
}
