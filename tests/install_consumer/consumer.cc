// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
// Scans a chat message for URLs and looks each up through the installed C++ API (text.h, checker.h, render.h).
// argv[1]: snapshot, argv[2]: message text. Prints one verdict JSON object per URL found.
// Exit: 0 no hit, 1 a hit, 2 error (or no URL in the text).
#include <urlguard/checker.h>
#include <urlguard/render.h>
#include <urlguard/text.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  auto checker = urlguard::Checker::Open({argv[1]});
  if (!checker.ok()) {
    std::fprintf(stderr, "%s\n", checker.status().ToString().c_str());
    return 2;
  }
  urlguard::FoundUrls found = urlguard::ExtractUrls(argv[2]);
  if (found.urls.empty()) return 2;
  int rc = 0;
  for (const urlguard::FoundUrl& u : found.urls) {
    urlguard::Verdict v = (*checker)->Check(u.url);
    std::printf("%s\n", urlguard::RenderVerdictJson(u.url, v).c_str());
    if (v.kind == urlguard::VerdictKind::kHit) rc = 1;
  }
  return rc;
}
