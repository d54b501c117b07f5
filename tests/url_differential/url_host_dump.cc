// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// url_host_dump: the helper of the browser differential test (tests/url_differential/differential.mjs).
// Reads one input per line on stdin, hex-encoded (inputs may hold newlines, tabs and any byte), and
// writes one answer line per input:
//   mode "canon": the input is a URL. "ok<TAB>host<TAB>lookup hosts (space-separated)" when Canonicalize()
//                 accepts it, "err<TAB>message" otherwise.
//   mode "scan":  the input is a chat message. "ok<TAB><TAB>lookup hosts" with the lookup hosts of every URL
//                 ExtractUrls() finds in it that canonicalizes (the URLs that `urlguard scan` checks).
// The lookup hosts are the host strings whose "host/" expressions the domain layer probes, so "the listed
// host is among them" is "the lookup is a hit" for a list that holds that host.
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

#include "core/sha256.h"
#include "url/url_canon.h"
#include "url/url_extract.h"

namespace {

bool DecodeHex(std::string_view hex, std::string* out) {
  out->assign(hex.size() / 2, '\0');
  return urlguard::FromHex(hex, reinterpret_cast<uint8_t*>(out->data()), out->size());
}

void AppendLookupHosts(const urlguard::CanonicalUrl& url, std::string* line) {
  for (const std::string& h : urlguard::internal::LookupHosts(url)) {
    if (!line->empty() && line->back() != '\t') line->push_back(' ');
    line->append(h);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "canon";
  if (mode != "canon" && mode != "scan") {
    std::fprintf(stderr, "usage: url_host_dump [canon|scan] < hex lines\n");
    return 2;
  }
  std::ios::sync_with_stdio(false);
  std::string hex, input, line;
  urlguard::CanonicalUrl url;
  urlguard::ExtractResult found;
  while (std::getline(std::cin, hex)) {
    if (!DecodeHex(hex, &input)) {
      std::fprintf(stderr, "url_host_dump: bad hex line\n");
      return 2;
    }
    line.clear();
    if (mode == "canon") {
      const urlguard::Status s = urlguard::Canonicalize(input, &url);
      if (s.ok()) {
        line = "ok\t" + url.host + "\t";
        AppendLookupHosts(url, &line);
      } else {
        line = "err\t" + s.message();
      }
    } else {
      line = "ok\t\t";
      urlguard::ExtractUrls(input, &found);
      for (size_t i = 0; i < found.urls.size(); ++i) {
        if (urlguard::Canonicalize(found.url(i), &url).ok()) AppendLookupHosts(url, &line);
      }
    }
    for (char& c : line) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    std::cout << line << '\n';
  }
  return 0;
}
