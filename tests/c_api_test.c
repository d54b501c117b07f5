/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright urlguard authors.
 *
 * The C API, used from C. argv[1] and argv[2] are the phishing and malware snapshots built from
 * fixtures/lists by the `build_fixture_snapshots` test fixture. Prints "N passed, M failed". */
#include <stdio.h>
#include <string.h>

#include "urlguard/urlguard.h"

static int passed = 0, failed = 0;

#define CHECK(cond)                                                  \
  do {                                                               \
    if (cond) {                                                      \
      ++passed;                                                      \
    } else {                                                         \
      ++failed;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: c_api_test PHISHING.ugs MALWARE.ugs\n");
    return 2;
  }
  const char* files[2] = {argv[1], argv[2]};
  ug_checker* c = NULL;
  char err[256];
  CHECK(ug_checker_open(files, 2, &c, err, sizeof err) == UG_OK);
  CHECK(c != NULL);
  CHECK(ug_checker_list_count(c) == 2);

  ug_verdict v;
  CHECK(ug_check(c, "http://login.evil.example/x", (size_t)-1, &v) == UG_OK);
  CHECK(v.kind == UG_VERDICT_HIT);
  CHECK(strcmp(v.list, "phishing") == 0);
  CHECK(v.layer == UG_LAYER_DOMAIN);
  CHECK(strcmp(v.expression, "evil.example/") == 0);
  CHECK(strlen(v.sha256_hex) == 64);
  CHECK(strcmp(ug_layer_name(v.layer), "domain") == 0);

  CHECK(ug_check(c, "http://www.example.com/", (size_t)-1, &v) == UG_OK);
  CHECK(v.kind == UG_VERDICT_SAFE);
  CHECK(strcmp(ug_verdict_kind_name(v.kind), "safe") == 0);

  /* Length-delimited input: only the first 19 bytes ("http://evil.example") are looked at. */
  CHECK(ug_check(c, "http://evil.exampleZZZZ", 19, &v) == UG_OK);
  CHECK(v.kind == UG_VERDICT_HIT);

  CHECK(ug_check(c, "javascript:alert(1)", (size_t)-1, &v) == UG_OK);
  CHECK(v.kind == UG_VERDICT_INVALID);
  CHECK(v.error[0] != '\0');

  CHECK(ug_check_ip(c, "198.51.100.42", &v) == UG_OK);
  CHECK(v.kind == UG_VERDICT_HIT && v.layer == UG_LAYER_IP && strcmp(v.list, "malware") == 0);
  CHECK(ug_check_host(c, "cdn.malware-cdn.example", &v) == UG_OK);
  CHECK(v.kind == UG_VERDICT_HIT);

  /* Bad arguments are errors, never crashes. */
  CHECK(ug_check(NULL, "x", 1, &v) == UG_INVALID_ARGUMENT);
  CHECK(ug_check(c, NULL, 1, &v) == UG_INVALID_ARGUMENT);
  CHECK(ug_check(c, "x", 1, NULL) == UG_INVALID_ARGUMENT);

  /* A missing file: a status code and a message naming it. */
  ug_checker* bad = NULL;
  const char* missing[1] = {"/nonexistent/urlguard.ugs"};
  CHECK(ug_checker_open(missing, 1, &bad, err, sizeof err) == UG_NOT_FOUND);
  CHECK(bad == NULL);
  CHECK(strstr(err, "/nonexistent/urlguard.ugs") != NULL);
  CHECK(strcmp(ug_status_name(UG_CORRUPTION), "corruption") == 0);
  CHECK(strlen(ug_version()) >= 5);

  ug_checker_close(c);
  ug_checker_close(NULL);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
