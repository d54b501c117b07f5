/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright urlguard authors.
 *
 * urlguard C API: offline URL threat lookup against memory-mapped snapshot files.
 *
 *   ug_checker* c = NULL;
 *   char err[256];
 *   const char* files[] = {"phishing.ugs"};
 *   if (ug_checker_open(files, 1, &c, err, sizeof err) != UG_OK) { fprintf(stderr, "%s\n", err); }
 *   ug_verdict v;
 *   ug_check(c, "http://evil.example/login", (size_t)-1, &v);
 *   if (v.kind == UG_VERDICT_HIT) printf("%s (%s layer)\n", v.list, ug_layer_name(v.layer));
 *   ug_checker_close(c);
 *
 * Ownership: ug_checker_open hands out a checker that the caller frees with ug_checker_close. ug_verdict is
 * caller-owned storage, filled completely by each call; it holds no pointers.
 * Thread safety: a checker may be used by any number of threads at once; ug_checker_close must not race with
 * a lookup on the same checker. No function throws or aborts on bad input; every failure is a ug_status.
 */
#ifndef URLGUARD_URLGUARD_H_
#define URLGUARD_URLGUARD_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define UG_API
#else
#define UG_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Same numbers as urlguard::StatusCode. */
typedef enum ug_status {
  UG_OK = 0,
  UG_INVALID_ARGUMENT = 1,
  UG_NOT_FOUND = 2,
  UG_CORRUPTION = 3,
  UG_IO_ERROR = 4,
  UG_RESOURCE_EXHAUSTED = 5,
  UG_UNAVAILABLE = 6,
  UG_FAILED_PRECONDITION = 7,
  UG_PERMISSION_DENIED = 8,
  UG_INTERNAL = 9
} ug_status;

typedef enum ug_verdict_kind {
  UG_VERDICT_SAFE = 0,
  UG_VERDICT_HIT = 1,
  UG_VERDICT_INVALID = 2,
  UG_VERDICT_SAFE_VERIFIED = 3, /* the kinds below come from the verifying client (urlguard/client.h) */
  UG_VERDICT_MALICIOUS = 4,
  UG_VERDICT_UNVERIFIED_HIT = 5
} ug_verdict_kind;
typedef enum ug_layer { UG_LAYER_DOMAIN = 0, UG_LAYER_URL = 1, UG_LAYER_IP = 2 } ug_layer;

#define UG_MAX_LIST_NAME 64
#define UG_MAX_EXPRESSION 1024
#define UG_MAX_ERROR 256

typedef struct ug_verdict {
  ug_verdict_kind kind;
  /* UG_VERDICT_HIT: the first match (in list open order); match_count says how many lists/layers matched. */
  ug_layer layer;
  uint32_t match_count;
  uint64_t list_version;
  char list[UG_MAX_LIST_NAME + 1];
  char expression[UG_MAX_EXPRESSION + 1]; /* NUL-terminated; cut (and expression_truncated = 1) when longer */
  int expression_truncated;
  char sha256_hex[65]; /* SHA-256 of the full expression */
  /* UG_VERDICT_INVALID: why. */
  char error[UG_MAX_ERROR + 1];
} ug_verdict;

typedef struct ug_checker ug_checker;

/* Opens `count` snapshot files. On failure *out stays NULL and, when err is not NULL, err receives a
 * NUL-terminated message (cut to err_size). verify_checksum is on. */
UG_API ug_status ug_checker_open(const char* const* paths, size_t count, ug_checker** out, char* err,
                                 size_t err_size);
/* Opens every *.ugs file in a directory. */
UG_API ug_status ug_checker_open_dir(const char* dir, ug_checker** out, char* err, size_t err_size);
/* Frees the checker. NULL is allowed. */
UG_API void ug_checker_close(ug_checker* checker);

/* Looks up a URL of `len` bytes ((size_t)-1: NUL-terminated). Returns UG_OK and fills *out (the verdict may be
 * UG_VERDICT_INVALID for a malformed URL); UG_INVALID_ARGUMENT only for NULL arguments. */
UG_API ug_status ug_check(const ug_checker* checker, const char* url, size_t len, ug_verdict* out);
/* Looks up a host name (and its parent domains) in the domain layers. */
UG_API ug_status ug_check_host(const ug_checker* checker, const char* host, ug_verdict* out);
/* Looks up an IPv4 or IPv6 address in the ip layers. */
UG_API ug_status ug_check_ip(const ug_checker* checker, const char* ip, ug_verdict* out);

/* Number of open lists. */
UG_API size_t ug_checker_list_count(const ug_checker* checker);

UG_API const char* ug_verdict_kind_name(ug_verdict_kind kind); /* "safe", "hit", "invalid" */
UG_API const char* ug_layer_name(ug_layer layer);              /* "domain", "url", "ip" */
UG_API const char* ug_status_name(ug_status status);           /* "ok", "corruption", ... */
/* The library version, "MAJOR.MINOR.PATCH". */
UG_API const char* ug_version(void);

#ifdef __cplusplus
}
#endif

#endif /* URLGUARD_URLGUARD_H_ */
