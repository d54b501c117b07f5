/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright urlguard authors. The same through the installed C API. */
#include <stdio.h>
#include <urlguard/urlguard.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  ug_checker* c = NULL;
  char err[256];
  const char* files[1] = {argv[1]};
  if (ug_checker_open(files, 1, &c, err, sizeof err) != UG_OK) {
    fprintf(stderr, "%s\n", err);
    return 2;
  }
  ug_verdict v;
  ug_check(c, argv[2], (size_t)-1, &v);
  printf("%s (urlguard %s)\n", ug_verdict_kind_name(v.kind), ug_version());
  ug_checker_close(c);
  return v.kind == UG_VERDICT_HIT ? 1 : 0;
}
