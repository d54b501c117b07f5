// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Text tools (urlguard/text.h): canonicalize(), expression_sha256(), extract_urls() and scan(). For a str, the
// offsets of a found URL index the str (text[u.begin:u.end] is the URL as written); for bytes they are byte
// offsets, as in the C++ API.
#include <string>
#include <string_view>
#include <utility>

#include "py_util.h"
#include "urlguard/checker.h"
#include "urlguard/text.h"

namespace urlguard::python {
namespace {

py::object Canonical(py::handle url) {
  std::string_view view = TextView(url, "url");
  auto form = [&] {
    py::gil_scoped_release release;
    return Canonicalize(view);
  }();
  if (!form.ok()) ThrowStatus(form.status());
  py::object expression_type = TypeOf("Expression");
  py::list expressions;
  for (const UrlExpression& e : form->expressions) {
    expressions.append(expression_type(Str(e.expression), py::str(LayerName(e.layer)), py::str(e.sha256_hex)));
  }
  return TypeOf("CanonicalForm")(py::reinterpret_borrow<py::object>(url), Str(form->url), Str(form->scheme),
                                 Str(form->host), Str(form->path),
                                 form->has_query ? py::object(Str(form->query)) : py::none(), expressions);
}

// Counts UTF-8 code points: maps increasing byte offsets of `text` to str indices in one pass.
class CodePointCounter {
 public:
  explicit CodePointCounter(std::string_view text) : text_(text) {}
  size_t IndexOf(size_t byte_offset) {
    for (; byte_ < byte_offset && byte_ < text_.size(); ++byte_) {
      if ((static_cast<unsigned char>(text_[byte_]) & 0xC0) != 0x80) ++index_;
    }
    return index_;
  }

 private:
  std::string_view text_;
  size_t byte_ = 0;
  size_t index_ = 0;
};

py::object Scan(py::handle text) {
  std::string_view view = TextView(text, "text");
  const bool is_str = PyUnicode_Check(text.ptr());
  FoundUrls found = [&] {
    py::gil_scoped_release release;
    return ExtractUrls(view);
  }();
  py::object found_type = TypeOf("FoundUrl");
  py::list urls;
  CodePointCounter counter(view);
  for (const FoundUrl& u : found.urls) {
    size_t begin = u.begin, end = u.end;
    py::object written;
    if (is_str) {
      begin = counter.IndexOf(u.begin);
      end = counter.IndexOf(u.end);
      PyObject* s = PyUnicode_Substring(text.ptr(), static_cast<Py_ssize_t>(begin), static_cast<Py_ssize_t>(end));
      if (s == nullptr) throw py::error_already_set();
      written = py::reinterpret_steal<py::object>(s);
    } else {
      written = py::bytes(view.data() + u.begin, u.end - u.begin);
    }
    urls.append(found_type(py::int_(begin), py::int_(end), written, Str(u.url), py::bool_(u.defanged),
                           py::bool_(u.had_scheme), py::bool_(u.cut)));
  }
  return TypeOf("ScanResult")(urls, py::bool_(found.truncated), py::int_(found.scanned_bytes));
}

}  // namespace

void BindText(py::module_& m) {
  m.def("canonicalize", &Canonical, py::arg("url"),
        "The canonical form of a URL with its lookup expressions and their SHA-256 (urlguard.CanonicalForm). "
        "Raises InvalidArgumentError (the message says why) when the input has no canonical form.");
  m.def(
      "expression_sha256",
      [](py::handle expression) { return py::str(ExpressionSha256Hex(TextView(expression, "expression"))); },
      py::arg("expression"), "SHA-256 of a list entry expression, lower-case hex.");
  m.def("scan", &Scan, py::arg("text"),
        "Every URL a person could have meant in free text, defanged ones included (urlguard.ScanResult: urls, "
        "truncated, scanned_bytes).");
  m.def(
      "extract_urls", [](py::handle text) -> py::object { return Scan(text).attr("urls"); }, py::arg("text"),
      "scan(text).urls: the URLs found in text (urlguard.FoundUrl), in text order.");
  m.attr("MAX_SCANNED_TEXT_BYTES") = py::int_(kMaxScannedTextBytes);
  m.attr("MAX_FOUND_URLS_PER_TEXT") = py::int_(kMaxFoundUrlsPerText);
  m.attr("MAX_FOUND_URL_BYTES") = py::int_(kMaxFoundUrlBytes);
}

}  // namespace urlguard::python
