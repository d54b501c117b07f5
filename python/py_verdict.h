// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard.Verdict: a lookup's answer as a small Python object whose attributes are the keys of the CLI's
// verdict JSON (urlguard/render.h, RenderVerdictJson), plus from_cache. to_json() is that renderer's output and
// to_dict() the same object as Python values.
#ifndef URLGUARD_PYTHON_PY_VERDICT_H_
#define URLGUARD_PYTHON_PY_VERDICT_H_

#include <pybind11/pybind11.h>

#include <string_view>
#include <utility>
#include <vector>

#include "py_util.h"
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

// The one way the binding checks a str or bytes `input` (`what` names it in a TypeError): check(view) runs
// with the GIL released, so it must not touch Python objects. Returns the urlguard.Verdict (GIL held).
template <typename CheckFn>
py::object CheckText(py::handle input, const char* what, CheckFn&& check) {
  const std::string_view view = TextView(input, what);
  Verdict v;
  {
    py::gil_scoped_release release;
    v = std::forward<CheckFn>(check)(view);
  }
  return MakeVerdict(input, std::move(v));
}

// The same for every str or bytes of the iterable `inputs`: check_all(views, &verdicts) runs with the GIL
// released and leaves one Verdict per view in `verdicts`. Returns the list of urlguard.Verdict, in order.
template <typename CheckAllFn>
py::list CheckTexts(py::handle inputs, const char* what, CheckAllFn&& check_all) {
  std::vector<py::object> objects;  // keep the objects (and so the views) alive while the GIL is released
  std::vector<std::string_view> views;
  for (py::handle item : inputs) {
    views.push_back(TextView(item, what));
    objects.push_back(py::reinterpret_borrow<py::object>(item));
  }
  std::vector<Verdict> verdicts;
  {
    py::gil_scoped_release release;
    std::forward<CheckAllFn>(check_all)(views, &verdicts);
  }
  py::list out(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i),
                    MakeVerdict(objects[i], std::move(verdicts[i])).release().ptr());
  }
  return out;
}

}  // namespace urlguard::python

#endif  // URLGUARD_PYTHON_PY_VERDICT_H_
