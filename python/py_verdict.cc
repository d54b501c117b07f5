// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "py_verdict.h"

#include <string>
#include <utility>

#include "py_util.h"
#include "urlguard/render.h"

namespace urlguard::python {
namespace {

const Match* First(const PyVerdict& p) { return p.verdict.matches.empty() ? nullptr : &p.verdict.matches.front(); }

// The "list" key of the verdict JSON: the confirming list of a malicious verdict, else the first match's list.
py::object ListOf(const PyVerdict& p) {
  const Match* m = First(p);
  if (m == nullptr) return StrOrNone(p.verdict.list);
  if (p.verdict.kind == VerdictKind::kMalicious && !p.verdict.list.empty()) return Str(p.verdict.list);
  return Str(m->list);
}

py::dict MatchDict(const Match& m) {
  py::dict d;
  d["list"] = Str(m.list);
  d["layer"] = py::str(LayerName(m.layer));
  d["expression"] = Str(m.expression);
  d["sha256"] = py::str(m.sha256_hex);
  d["list_version"] = py::int_(m.list_version);
  return d;
}

py::list Matches(const PyVerdict& p) {
  py::list out;
  py::object match_type = TypeOf("Match");
  for (const Match& m : p.verdict.matches) {
    out.append(match_type(Str(m.list), py::str(LayerName(m.layer)), Str(m.expression), py::str(m.sha256_hex),
                          py::int_(m.list_version)));
  }
  return out;
}

py::dict ToDict(const PyVerdict& p) {
  const Verdict& v = p.verdict;
  const Match* m = First(p);
  py::dict d;
  d["input"] = p.input;
  d["verdict"] = py::str(VerdictKindName(v.kind));
  d["list"] = ListOf(p);
  d["layer"] = m ? py::object(py::str(LayerName(m->layer))) : py::none();
  d["expression"] = m ? py::object(Str(m->expression)) : py::none();
  d["sha256"] = m ? py::object(py::str(m->sha256_hex)) : py::none();
  d["list_version"] = m ? py::object(py::int_(m->list_version)) : py::none();
  py::list all;
  for (const Match& each : v.matches) all.append(MatchDict(each));
  d["matches"] = all;
  d["canonical"] = StrOrNone(v.canonical);
  d["threat"] = StrOrNone(v.threat);
  d["stale"] = py::bool_(v.stale);
  d["allowlisted"] = py::bool_(v.allowlisted);
  d["emergency"] = py::bool_(v.emergency);
  d["error"] = StrOrNone(v.error);
  return d;
}

std::string ToJson(const PyVerdict& p) { return RenderVerdictJson(TextView(p.input, "input"), p.verdict); }

std::string Repr(const PyVerdict& p) {
  std::string out = "<urlguard.Verdict " + std::string(VerdictKindName(p.verdict.kind)) + " " +
                    std::string(py::repr(p.input));
  if (const Match* m = First(p)) {
    out += " list=" + std::string(py::repr(ListOf(p))) + " layer=" + LayerName(m->layer) +
           " expression=" + std::string(py::repr(Str(m->expression)));
    if (p.verdict.matches.size() > 1) out += " (+" + std::to_string(p.verdict.matches.size() - 1) + " more)";
  }
  if (!p.verdict.error.empty()) out += " error=" + std::string(py::repr(Str(p.verdict.error)));
  if (p.verdict.stale) out += " stale";
  if (p.verdict.allowlisted) out += " allowlisted";
  return out + ">";
}

}  // namespace

void BindVerdict(py::module_& m) {
  py::class_<PyVerdict>(m, "Verdict",
                        "The answer of a lookup. Attributes are the keys of `urlguard check --json` "
                        "(None where that prints null); from_cache is extra.")
      .def_property_readonly("input", [](const PyVerdict& p) { return p.input; })
      .def_property_readonly("verdict", [](const PyVerdict& p) { return py::str(VerdictKindName(p.verdict.kind)); })
      .def_property_readonly("list", &ListOf)
      .def_property_readonly("layer",
                             [](const PyVerdict& p) -> py::object {
                               const Match* m = First(p);
                               return m ? py::object(py::str(LayerName(m->layer))) : py::none();
                             })
      .def_property_readonly("expression",
                             [](const PyVerdict& p) -> py::object {
                               const Match* m = First(p);
                               return m ? py::object(Str(m->expression)) : py::none();
                             })
      .def_property_readonly("sha256",
                             [](const PyVerdict& p) -> py::object {
                               const Match* m = First(p);
                               return m ? py::object(py::str(m->sha256_hex)) : py::none();
                             })
      .def_property_readonly("list_version",
                             [](const PyVerdict& p) -> py::object {
                               const Match* m = First(p);
                               return m ? py::object(py::int_(m->list_version)) : py::none();
                             })
      .def_property_readonly("matches", &Matches)
      .def_property_readonly("canonical", [](const PyVerdict& p) { return StrOrNone(p.verdict.canonical); })
      .def_property_readonly("threat", [](const PyVerdict& p) { return StrOrNone(p.verdict.threat); })
      .def_property_readonly("error", [](const PyVerdict& p) { return StrOrNone(p.verdict.error); })
      .def_property_readonly("stale", [](const PyVerdict& p) { return p.verdict.stale; })
      .def_property_readonly("allowlisted", [](const PyVerdict& p) { return p.verdict.allowlisted; })
      .def_property_readonly("emergency", [](const PyVerdict& p) { return p.verdict.emergency; })
      .def_property_readonly("from_cache", [](const PyVerdict& p) { return p.verdict.from_cache; })
      .def("to_dict", &ToDict, "The verdict JSON object (urlguard check --json) as a dict.")
      .def("to_json", &ToJson, "The verdict JSON object as compact text, exactly as urlguard check --json prints it.")
      .def("__repr__", &Repr)
      .def("__eq__",
           [](const PyVerdict& a, py::handle other) -> py::object {
             if (!py::isinstance<PyVerdict>(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             const PyVerdict& b = other.cast<const PyVerdict&>();
             return py::bool_(a.verdict.from_cache == b.verdict.from_cache && a.input.equal(b.input) &&
                              ToJson(a) == ToJson(b));
           })
      .attr("__hash__") = py::none();
}

py::object MakeVerdict(py::handle input, Verdict verdict) {
  return py::cast(PyVerdict{py::reinterpret_borrow<py::object>(input), std::move(verdict)});
}

}  // namespace urlguard::python
