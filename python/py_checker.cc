// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard.Checker: offline lookups against snapshot files (urlguard/checker.h). Lookups and batches run without
// the GIL, so Python threads check in parallel. close() drops the object's reference to the Checker; a lookup in
// flight holds its own reference, so the mappings go away only when the last lookup has returned (the Checker
// must not be destroyed during a call: checker.h).
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "py_util.h"
#include "py_verdict.h"
#include "urlguard/checker.h"

namespace urlguard::python {
namespace {

// The paths of a str / bytes / os.PathLike, or of an iterable of them.
std::vector<std::string> Paths(py::handle paths) {
  std::vector<std::string> out;
  if (PyUnicode_Check(paths.ptr()) || PyBytes_Check(paths.ptr()) || py::hasattr(paths, "__fspath__")) {
    out.push_back(FsPath(paths));
    return out;
  }
  for (py::handle p : paths) out.push_back(FsPath(p));
  return out;
}

class PyChecker {
 public:
  explicit PyChecker(std::unique_ptr<Checker> checker) : checker_(std::move(checker)) {}

  static std::unique_ptr<PyChecker> Open(py::handle paths, bool verify_checksum) {
    OpenOptions o;
    o.verify_checksum = verify_checksum;
    std::vector<std::string> files = Paths(paths);
    auto opened = [&] {
      py::gil_scoped_release release;
      return Checker::Open(files, o);
    }();
    if (!opened.ok()) ThrowStatus(opened.status());
    return std::make_unique<PyChecker>(std::move(opened).value());
  }

  static std::unique_ptr<PyChecker> OpenDirectory(py::handle dir, bool verify_checksum) {
    OpenOptions o;
    o.verify_checksum = verify_checksum;
    std::string path = FsPath(dir);
    auto opened = [&] {
      py::gil_scoped_release release;
      return Checker::OpenDirectory(path, o);
    }();
    if (!opened.ok()) ThrowStatus(opened.status());
    return std::make_unique<PyChecker>(std::move(opened).value());
  }

  py::object Check(py::handle url, bool canonical) const {
    std::shared_ptr<const Checker> c = Get();
    CheckOptions o;
    o.want_canonical = canonical;
    return CheckText(url, "url", [&](std::string_view view) { return c->Check(view, o); });
  }

  py::list CheckMany(py::handle urls, bool canonical) const {
    std::shared_ptr<const Checker> c = Get();
    CheckOptions o;
    o.want_canonical = canonical;
    return CheckTexts(urls, "url",
                      [&](const std::vector<std::string_view>& views, std::vector<Verdict>* out) {
                        c->CheckBatch(views, out, o);
                      });
  }

  py::object CheckHost(py::handle host) const {
    std::shared_ptr<const Checker> c = Get();
    return CheckText(host, "host", [&](std::string_view view) { return c->CheckHost(view); });
  }

  py::object CheckIp(py::handle ip) const {
    std::shared_ptr<const Checker> c = Get();
    return CheckText(ip, "ip", [&](std::string_view view) { return c->CheckIp(view); });
  }

  py::list Lists() const {
    py::list out;
    py::object type = TypeOf("ListInfo");
    for (const ListInfo& l : Get()->Lists()) {
      py::dict layers;
      for (int i = 0; i < 3; ++i) {
        if (l.layer_filter[i].empty()) continue;
        layers[py::str(LayerName(static_cast<Layer>(i)))] =
            py::make_tuple(py::int_(l.layer_entries[i]), py::str(l.layer_filter[i]));
      }
      out.append(type(Str(l.name), py::int_(l.version), py::int_(l.created_unix), py::int_(l.entries), layers,
                      py::int_(l.bytes), Str(l.path), py::str(l.sha256_hex)));
    }
    return out;
  }

  void Close() { checker_.reset(); }
  bool closed() const { return checker_ == nullptr; }

 private:
  std::shared_ptr<const Checker> Get() const {
    if (checker_ == nullptr) ThrowStatus(Status::FailedPrecondition("the checker is closed"));
    return checker_;
  }

  // Read and replaced only with the GIL held; calls copy it before releasing the GIL.
  std::shared_ptr<const Checker> checker_;
};

}  // namespace

void BindChecker(py::module_& m) {
  py::class_<PyChecker>(m, "Checker",
                        "Offline URL lookups against memory-mapped snapshot files (urlguard/checker.h). "
                        "Thread-safe; lookups release the GIL.")
      .def(py::init(&PyChecker::Open), py::arg("paths"), py::kw_only(), py::arg("verify_checksum") = true,
           "Maps and validates one snapshot file or an iterable of them. Raises NotFoundError, IoError, "
           "CorruptionError (foreign, truncated or corrupt file) or InvalidArgumentError (two files of one list).")
      .def_static("open_directory", &PyChecker::OpenDirectory, py::arg("directory"), py::kw_only(),
                  py::arg("verify_checksum") = true,
                  "Opens every *.ugs file of a directory (sorted by name). NotFoundError when there is none.")
      .def("check", &PyChecker::Check, py::arg("url"), py::kw_only(), py::arg("canonical") = false,
           "Looks up a URL (str or bytes; any spelling a browser accepts). canonical=True fills Verdict.canonical.")
      .def("check_many", &PyChecker::CheckMany, py::arg("urls"), py::kw_only(), py::arg("canonical") = false,
           "Looks up every URL of an iterable in one batch (faster per URL than check); a list of Verdicts in "
           "input order.")
      .def("check_host", &PyChecker::CheckHost, py::arg("host"),
           "Looks up a host name and its parent domains in the domain layers.")
      .def("check_ip", &PyChecker::CheckIp, py::arg("ip"), "Looks up an IPv4 or IPv6 address in the ip layers.")
      .def("lists", &PyChecker::Lists, "The open lists (urlguard.ListInfo), in open order.")
      .def("close", &PyChecker::Close,
           "Releases the mappings once no lookup is in flight; later calls raise FailedPreconditionError.")
      .def_property_readonly("closed", &PyChecker::closed)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyChecker& c, py::args) { c.Close(); });
}

}  // namespace urlguard::python
