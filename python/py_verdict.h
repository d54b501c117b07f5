// Copyright urlguard authors.
//
// urlguard.Verdict: a lookup's answer as a small Python object whose attributes are the keys of the CLI's
// verdict JSON (urlguard/render.h, RenderVerdictJson), plus from_cache. to_json() is that renderer's output and
// to_dict() the same object as Python values.
#ifndef URLGUARD_PYTHON_PY_VERDICT_H_
#define URLGUARD_PYTHON_PY_VERDICT_H_

#include <pybind11/pybind11.h>

#include "urlguard/checker.h"

namespace urlguard::python {

namespace py = pybind11;

struct PyVerdict {
  py::object input;  // the str or bytes that was checked, as given
  Verdict verdict;
};

void BindVerdict(py::module_& m);

// A urlguard.Verdict for `input` (GIL held).
py::object MakeVerdict(py::handle input, Verdict verdict);

}  // namespace urlguard::python

#endif  // URLGUARD_PYTHON_PY_VERDICT_H_
