// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Conversions shared by the Python binding: Status -> Python exception (urlguard.Error and one subclass per
// StatusCode), Python str/bytes/PathLike -> bytes, library strings -> str, and the small value types of
// urlguard/_types.py. Every function here needs the GIL.
#ifndef URLGUARD_PYTHON_PY_UTIL_H_
#define URLGUARD_PYTHON_PY_UTIL_H_

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "urlguard/status.h"

namespace urlguard::python {

namespace py = pybind11;

// Creates urlguard.Error and its subclasses (InvalidArgumentError, NotFoundError, CorruptionError, IoError,
// ResourceExhaustedError, UnavailableError, FailedPreconditionError, PermissionDeniedError, InternalError) in `m`.
void RegisterErrors(py::module_& m);

// Raises the exception class of status.code() with .code (urlguard.StatusCode), .code_name ("not_found") and
// .message set; str(e) is status.ToString(). `status` must not be ok.
[[noreturn]] void ThrowStatus(const Status& status);

// The UTF-8 bytes of a str, or the bytes of a bytes object; TypeError for anything else. The view lives as long
// as `obj` does (str objects cache their UTF-8 form).
std::string_view TextView(py::handle obj, const char* what);

// os.fsencode(obj): a str, bytes or os.PathLike as the bytes the OS sees.
std::string FsPath(py::handle obj);

// A str from UTF-8 bytes, invalid sequences replaced by U+FFFD (as the JSON renderer does).
py::str Str(std::string_view utf8);
// None for an empty string, else Str().
py::object StrOrNone(std::string_view utf8);

// A class of urlguard._types (the pure-Python value types), looked up once.
py::object TypeOf(const char* name);

}  // namespace urlguard::python

#endif  // URLGUARD_PYTHON_PY_UTIL_H_
