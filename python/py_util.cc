// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "py_util.h"

#include <array>
#include <string>

namespace urlguard::python {
namespace {

constexpr int kCodeCount = 10;  // StatusCode kOk..kInternal (status.h; the C API pins the numbers)

// The exception classes, created once at import and kept for the life of the process (a module is never
// unloaded). Index: StatusCode; [0] is the base class urlguard.Error.
std::array<PyObject*, kCodeCount> g_errors{};

struct ErrorClass {
  StatusCode code;
  const char* name;
  const char* doc;
};
constexpr ErrorClass kErrorClasses[] = {
    {StatusCode::kInvalidArgument, "InvalidArgumentError", "Malformed input or option (StatusCode.INVALID_ARGUMENT)."},
    {StatusCode::kNotFound, "NotFoundError", "A file or entry that should exist does not (StatusCode.NOT_FOUND)."},
    {StatusCode::kCorruption, "CorruptionError", "Malformed bytes from disk or network (StatusCode.CORRUPTION)."},
    {StatusCode::kIoError, "IoError", "The operating system refused an operation (StatusCode.IO_ERROR)."},
    {StatusCode::kResourceExhausted, "ResourceExhaustedError", "A named size cap was hit (StatusCode.RESOURCE_EXHAUSTED)."},
    {StatusCode::kUnavailable, "UnavailableError", "A remote party did not answer (StatusCode.UNAVAILABLE)."},
    {StatusCode::kFailedPrecondition, "FailedPreconditionError",
     "State forbids the operation, e.g. a lock is held (StatusCode.FAILED_PRECONDITION)."},
    {StatusCode::kPermissionDenied, "PermissionDeniedError", "A signature or key check failed (StatusCode.PERMISSION_DENIED)."},
    {StatusCode::kInternal, "InternalError", "A dependency failed unexpectedly (StatusCode.INTERNAL)."},
};

}  // namespace

void RegisterErrors(py::module_& m) {
  PyObject* base = PyErr_NewExceptionWithDoc(
      "urlguard.Error",
      "Base class of urlguard's errors. Attributes: code (urlguard.StatusCode), code_name (\"not_found\", ...), "
      "message (the Status message without the code name).",
      PyExc_Exception, nullptr);
  if (base == nullptr) throw py::error_already_set();
  g_errors[0] = base;
  m.add_object("Error", py::reinterpret_borrow<py::object>(base));
  for (const ErrorClass& e : kErrorClasses) {
    const std::string qualified = std::string("urlguard.") + e.name;
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), e.doc, base, nullptr);
    if (cls == nullptr) throw py::error_already_set();
    g_errors[static_cast<int>(e.code)] = cls;
    m.add_object(e.name, py::reinterpret_borrow<py::object>(cls));
  }
}

void ThrowStatus(const Status& status) {
  const int code = static_cast<int>(status.code());
  PyObject* cls = code > 0 && code < kCodeCount && g_errors[code] != nullptr ? g_errors[code] : g_errors[0];
  py::object error = py::reinterpret_borrow<py::object>(cls)(Str(status.ToString()));
  py::object code_value = py::int_(code);
  try {
    code_value = py::module_::import("urlguard").attr("StatusCode")(code);
  } catch (py::error_already_set&) {
    // Only the private module was imported (urlguard._urlguard on its own): keep the plain int.
  }
  error.attr("code") = code_value;
  error.attr("code_name") = py::str(StatusCodeName(status.code()));
  error.attr("message") = Str(status.message());
  PyErr_SetObject(cls, error.ptr());
  throw py::error_already_set();
}

std::string_view TextView(py::handle obj, const char* what) {
  if (PyUnicode_Check(obj.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();  // lone surrogates
    return {data, static_cast<size_t>(size)};
  }
  if (PyBytes_Check(obj.ptr())) {
    return {PyBytes_AS_STRING(obj.ptr()), static_cast<size_t>(PyBytes_GET_SIZE(obj.ptr()))};
  }
  throw py::type_error(std::string(what) + " must be str or bytes, not " +
                       std::string(py::str(obj.get_type().attr("__name__"))));
}

std::string FsPath(py::handle obj) {
  py::bytes encoded = py::module_::import("os").attr("fsencode")(obj);
  return std::string(encoded);
}

py::str Str(std::string_view utf8) {
  PyObject* s = PyUnicode_DecodeUTF8(utf8.data(), static_cast<Py_ssize_t>(utf8.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

py::object StrOrNone(std::string_view utf8) {
  if (utf8.empty()) return py::none();
  return Str(utf8);
}

py::object TypeOf(const char* name) {
  // Looked up on every call: attribute access on an imported module is a dict lookup, and a static py::object
  // would be destroyed after the interpreter at exit.
  return py::module_::import("urlguard._types").attr(name);
}

}  // namespace urlguard::python
