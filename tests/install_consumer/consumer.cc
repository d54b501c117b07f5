// Copyright urlguard authors.
// Looks one URL up through the installed C++ API. argv[1]: snapshot, argv[2]: URL. Exit: 0 safe, 1 hit, 2 error.
#include <urlguard/checker.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  auto checker = urlguard::Checker::Open({argv[1]});
  if (!checker.ok()) {
    std::fprintf(stderr, "%s\n", checker.status().ToString().c_str());
    return 2;
  }
  urlguard::Verdict v = (*checker)->Check(argv[2]);
  std::printf("%s\n", urlguard::VerdictKindName(v.kind));
  return v.kind == urlguard::VerdictKind::kHit ? 1 : 0;
}
