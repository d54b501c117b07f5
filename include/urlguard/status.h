// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Status and Result<T>: the one error type of urlguard.
//
// Expected failures (offline, bad signature, corrupt file, invalid URL, a size cap hit) are values, never
// exceptions; bugs are assertions. Both types are [[nodiscard]]: ignoring a failure is a compile error
// under -Werror.
//
// Thread safety: values; share like any std::string-holding struct.
#ifndef URLGUARD_STATUS_H_
#define URLGUARD_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "urlguard/export.h"

namespace urlguard {

// Error codes. Stable: the C API exposes them as the same numbers (urlguard.h, ug_status).
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // caller passed something malformed (bad URL, bad option)
  kNotFound = 2,         // a file or entry that should exist does not
  kCorruption = 3,       // bytes from disk or network are malformed or fail a checksum
  kIoError = 4,          // the operating system refused a read, write, map, rename...
  kResourceExhausted = 5,  // a named size cap was hit
  kUnavailable = 6,      // a remote party did not answer (offline, timeout, 5xx)
  kFailedPrecondition = 7,  // state forbids the operation (expired list, lock held, older version)
  kPermissionDenied = 8,  // a signature or key check failed
  kInternal = 9,          // a dependency failed in a way that should not happen
};

// Returns a short lower-case name for `code` ("ok", "invalid_argument", ...). Never null.
URLGUARD_EXPORT const char* StatusCodeName(StatusCode code);

class [[nodiscard]] URLGUARD_EXPORT Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "corruption: snapshot.ugs: bad magic". "ok" for an ok status.
  std::string ToString() const;

  // Returns a copy with `context + ": "` put in front of the message (the code is kept).
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none. Accessing value() of a failed Result is a bug
// (asserts).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : status_(), value_(std::move(value)) {}  // NOLINT: implicit
  Result(Status status) : status_(std::move(status)) {      // NOLINT: implicit
    assert(!status_.ok() && "Result constructed from an ok Status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace urlguard

// Returns early from the enclosing function when `expr` (a Status) is not ok.
#define URLGUARD_RETURN_IF_ERROR(expr)          \
  do {                                          \
    ::urlguard::Status _ug_status = (expr);     \
    if (!_ug_status.ok()) return _ug_status;    \
  } while (0)

#define URLGUARD_CONCAT_INNER_(a, b) a##b
#define URLGUARD_CONCAT_(a, b) URLGUARD_CONCAT_INNER_(a, b)

// `URLGUARD_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from an ok Result or returns its Status.
#define URLGUARD_ASSIGN_OR_RETURN(lhs, expr) \
  URLGUARD_ASSIGN_OR_RETURN_IMPL_(URLGUARD_CONCAT_(_ug_result_, __LINE__), lhs, expr)
#define URLGUARD_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

#endif  // URLGUARD_STATUS_H_
