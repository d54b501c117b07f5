// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard._urlguard: the Python extension module (re-exported by the urlguard package, python/urlguard/). It
// uses only the public API of liburlguard.so (include/urlguard/); see docs/python.md.
#include <pybind11/pybind11.h>

#include "py_util.h"
#include "py_verdict.h"
#include "urlguard/urlguard.h"

namespace urlguard::python {
void BindChecker(py::module_& m);
void BindClient(py::module_& m);
void BindText(py::module_& m);
}  // namespace urlguard::python

PYBIND11_MODULE(_urlguard, m) {
  namespace up = urlguard::python;
  m.doc() = "urlguard: on-device URL threat lookup (the compiled part of the urlguard package)";
  m.attr("__version__") = ug_version();  // the loaded liburlguard's version
  up::RegisterErrors(m);
  up::BindVerdict(m);
  up::BindChecker(m);
  up::BindClient(m);
  up::BindText(m);
}
