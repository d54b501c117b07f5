// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The C API (include/urlguard/urlguard.h) over urlguard::Checker. Nothing here may throw across the boundary:
// the only allocations are std::string/vector ones inside the Checker, and an allocation failure there would
// terminate — the same contract as the C++ API.
#include "urlguard/urlguard.h"

#include <cstring>
#include <string>
#include <vector>

#include "urlguard/checker.h"
#include "urlguard/version.h"

struct ug_checker {
  std::unique_ptr<urlguard::Checker> checker;
};

namespace {

void CopyString(const std::string& s, char* dst, size_t cap, int* truncated = nullptr) {
  size_t n = s.size() < cap ? s.size() : cap;
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
  if (truncated) *truncated = s.size() > cap;
}

void WriteError(const urlguard::Status& s, char* err, size_t err_size) {
  if (err == nullptr || err_size == 0) return;
  std::string m = s.ToString();
  size_t n = m.size() < err_size - 1 ? m.size() : err_size - 1;
  std::memcpy(err, m.data(), n);
  err[n] = '\0';
}

void ToC(const urlguard::Verdict& v, ug_verdict* out) {
  std::memset(out, 0, sizeof *out);
  out->kind = static_cast<ug_verdict_kind>(v.kind);
  if (v.kind == urlguard::VerdictKind::kInvalid) CopyString(v.error, out->error, UG_MAX_ERROR);
  if (!v.matches.empty()) {
    const urlguard::Match& m = v.matches.front();
    out->layer = static_cast<ug_layer>(m.layer);
    out->match_count = static_cast<uint32_t>(v.matches.size());
    out->list_version = m.list_version;
    CopyString(m.list, out->list, UG_MAX_LIST_NAME);
    CopyString(m.expression, out->expression, UG_MAX_EXPRESSION, &out->expression_truncated);
    CopyString(m.sha256_hex, out->sha256_hex, 64);
  }
}

ug_status Finish(urlguard::Result<std::unique_ptr<urlguard::Checker>> r, ug_checker** out, char* err,
                 size_t err_size) {
  if (!r.ok()) {
    WriteError(r.status(), err, err_size);
    return static_cast<ug_status>(r.status().code());
  }
  *out = new ug_checker{std::move(r).value()};
  return UG_OK;
}

}  // namespace

extern "C" {

ug_status ug_checker_open(const char* const* paths, size_t count, ug_checker** out, char* err, size_t err_size) {
  if (out == nullptr || (paths == nullptr && count > 0)) return UG_INVALID_ARGUMENT;
  *out = nullptr;
  std::vector<std::string> files;
  for (size_t i = 0; i < count; ++i) {
    if (paths[i] == nullptr) return UG_INVALID_ARGUMENT;
    files.emplace_back(paths[i]);
  }
  return Finish(urlguard::Checker::Open(files), out, err, err_size);
}

ug_status ug_checker_open_dir(const char* dir, ug_checker** out, char* err, size_t err_size) {
  if (out == nullptr || dir == nullptr) return UG_INVALID_ARGUMENT;
  *out = nullptr;
  return Finish(urlguard::Checker::OpenDirectory(dir), out, err, err_size);
}

void ug_checker_close(ug_checker* checker) { delete checker; }

ug_status ug_check(const ug_checker* checker, const char* url, size_t len, ug_verdict* out) {
  if (checker == nullptr || url == nullptr || out == nullptr) return UG_INVALID_ARGUMENT;
  if (len == static_cast<size_t>(-1)) len = std::strlen(url);
  ToC(checker->checker->Check(std::string_view(url, len)), out);
  return UG_OK;
}

ug_status ug_check_host(const ug_checker* checker, const char* host, ug_verdict* out) {
  if (checker == nullptr || host == nullptr || out == nullptr) return UG_INVALID_ARGUMENT;
  ToC(checker->checker->CheckHost(host), out);
  return UG_OK;
}

ug_status ug_check_ip(const ug_checker* checker, const char* ip, ug_verdict* out) {
  if (checker == nullptr || ip == nullptr || out == nullptr) return UG_INVALID_ARGUMENT;
  ToC(checker->checker->CheckIp(ip), out);
  return UG_OK;
}

size_t ug_checker_list_count(const ug_checker* checker) {
  return checker == nullptr ? 0 : checker->checker->Lists().size();
}

const char* ug_verdict_kind_name(ug_verdict_kind kind) {
  return urlguard::VerdictKindName(static_cast<urlguard::VerdictKind>(kind));
}
const char* ug_layer_name(ug_layer layer) { return urlguard::LayerName(static_cast<urlguard::Layer>(layer)); }
const char* ug_status_name(ug_status status) {
  return urlguard::StatusCodeName(static_cast<urlguard::StatusCode>(status));
}
const char* ug_version(void) { return urlguard::LibraryVersion(); }

}  // extern "C"
