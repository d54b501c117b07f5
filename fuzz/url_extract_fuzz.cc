// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// libFuzzer target for ExtractUrls() (url/url_extract.h): any bytes must be scanned without a crash,
// and the result must keep its contract:
//   - at most kMaxUrlsPerText URLs, spans inside the examined prefix, begin < end, in text order and
//     non-overlapping; every normalized URL inside url_text, at most kMaxExtractedUrlBytes, starting
//     with "http://", "https://", "ftp://", "ws://" or "wss://";
//   - a URL that was neither defanged nor cut is its span with the scheme lower-cased and the run of '/'
//     and '\\' after "scheme:" written as "//" ("http://" put in front of a bare one);
//   - every reported URL canonicalizes to the same host as a second time (Canonicalize() is idempotent on
//     what scan hands it);
//   - truncated and scanned_bytes agree with the caps;
//   - a second run on the same result object (capacity reuse) gives the same answer.
// Needs only url/url_extract.cc (link urlguard_static, or compile that file alongside).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "url/url_extract.h"

namespace {

void Check(bool ok) {
  if (!ok) abort();
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void CheckResult(std::string_view text, const urlguard::ExtractResult& r) {
  const size_t examined = std::min(text.size(), urlguard::kMaxExtractInputBytes);
  Check(r.urls.size() <= urlguard::kMaxUrlsPerText);
  Check(r.scanned_bytes <= examined);
  if (!r.truncated) Check(r.scanned_bytes == examined && text.size() <= urlguard::kMaxExtractInputBytes);
  if (text.size() > urlguard::kMaxExtractInputBytes) Check(r.truncated);
  size_t previous_end = 0;
  for (size_t i = 0; i < r.urls.size(); ++i) {
    const urlguard::ExtractedUrl& u = r.urls[i];
    Check(u.begin < u.end);
    Check(u.end <= examined);
    Check(u.end <= r.scanned_bytes);
    Check(u.begin >= previous_end);
    previous_end = u.end;
    Check(u.url_offset <= r.url_text.size() && u.url_size <= r.url_text.size() - u.url_offset);
    Check(u.url_size <= urlguard::kMaxExtractedUrlBytes);
    const std::string_view url = r.url(i);
    const size_t sep = url.find("://");
    Check(sep != std::string_view::npos);
    const std::string_view scheme = url.substr(0, sep);
    Check(scheme == "http" || scheme == "https" || scheme == "ftp" || scheme == "ws" || scheme == "wss");
    Check(u.had_scheme || scheme == "http");
    urlguard::CanonicalUrl canonical, again;
    if (urlguard::Canonicalize(url, &canonical).ok()) {
      Check(urlguard::Canonicalize(canonical.Spec(), &again).ok() && again.host == canonical.host);
    }
    if (u.defanged || u.cut) continue;
    const std::string_view span = text.substr(u.begin, u.end - u.begin);
    if (!u.had_scheme) {
      Check(url.substr(sep + 3) == span);
    } else {
      // "scheme:" then any run of '/' and '\\' (browsers accept none, one, or many of either).
      const size_t span_sep = span.find(':');
      Check(span_sep != std::string_view::npos);
      Check(Lower(span.substr(0, span_sep)) == scheme);
      size_t rest = span_sep + 1;
      while (rest < span.size() && (span[rest] == '/' || span[rest] == '\\')) ++rest;
      Check(url.substr(sep + 3) == span.substr(rest));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  urlguard::ExtractResult result;
  urlguard::ExtractUrls(text, &result);
  CheckResult(text, result);

  // Reusing the result object must not change the answer.
  const urlguard::ExtractResult first = result;
  urlguard::ExtractUrls(text, &result);
  Check(result.urls.size() == first.urls.size() && result.url_text == first.url_text &&
        result.truncated == first.truncated && result.scanned_bytes == first.scanned_bytes);
  for (size_t i = 0; i < result.urls.size(); ++i) {
    const urlguard::ExtractedUrl& a = result.urls[i];
    const urlguard::ExtractedUrl& b = first.urls[i];
    Check(a.begin == b.begin && a.end == b.end && a.url_offset == b.url_offset && a.url_size == b.url_size &&
          a.defanged == b.defanged && a.had_scheme == b.had_scheme && a.cut == b.cut);
  }
  return 0;
}
