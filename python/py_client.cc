// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard.Client: the living client over a data directory (urlguard/client.h). Lookups, sync and refresh run
// without the GIL. close() works as for urlguard.Checker: calls in flight keep the Client alive.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "py_util.h"
#include "py_verdict.h"
#include "urlguard/client.h"
#include "urlguard/keys.h"
#include "urlguard/sync.h"

namespace urlguard::python {
namespace {

std::vector<std::string> Strings(py::handle items, const char* what) {
  std::vector<std::string> out;
  if (PyUnicode_Check(items.ptr()) || PyBytes_Check(items.ptr())) {
    throw py::type_error(std::string(what) + " must be an iterable of str, not a single string");
  }
  for (py::handle s : items) out.emplace_back(TextView(s, what));
  return out;
}

std::vector<std::string> FsPaths(py::handle items, const char* what) {
  std::vector<std::string> out;
  if (PyUnicode_Check(items.ptr()) || PyBytes_Check(items.ptr())) {
    throw py::type_error(std::string(what) + " must be an iterable of paths, not a single string");
  }
  for (py::handle p : items) out.push_back(FsPath(p));
  return out;
}

class PyClient {
 public:
  explicit PyClient(std::unique_ptr<Client> client) : client_(std::move(client)) {}

  static std::unique_ptr<PyClient> Open(py::handle data_dir, std::string server_url, py::handle public_key_files,
                                        py::handle key_rotation_files, py::handle public_key_pems,
                                        py::handle lists, bool verify, int verify_deadline_ms,
                                        py::handle allowlist, std::string ca_bundle, std::string proxy,
                                        size_t async_queue_capacity, bool watch) {
    ClientOptions o;
    o.data_dir = FsPath(data_dir);
    o.server_url = std::move(server_url);
    o.public_key_pems = Strings(public_key_pems, "public_key_pems");
    o.lists = Strings(lists, "lists");
    o.verify = verify;
    o.verify_deadline_ms = verify_deadline_ms;
    o.allowlist = Strings(allowlist, "allowlist");
    o.ca_bundle = std::move(ca_bundle);
    o.proxy = std::move(proxy);
    o.async_queue_capacity = async_queue_capacity;
    o.watch = watch;
    std::vector<std::string> key_files = FsPaths(public_key_files, "public_key_files");
    std::vector<std::string> rotation_files = FsPaths(key_rotation_files, "key_rotation_files");
    if (key_files.empty() && !rotation_files.empty()) {
      ThrowStatus(Status::InvalidArgument("key_rotation_files need public_key_files to start the chain"));
    }
    auto opened = [&]() -> Result<std::unique_ptr<Client>> {
      py::gil_scoped_release release;
      if (!key_files.empty()) {
        auto keys = TrustedKeys::LoadFiles(key_files, rotation_files);
        if (!keys.ok()) return keys.status();
        o.trusted_keys = *keys;
      }
      return Client::Open(o);
    }();
    if (!opened.ok()) ThrowStatus(opened.status());
    return std::make_unique<PyClient>(std::move(opened).value());
  }

  py::object Check(py::handle url, bool canonical, bool local) const {
    std::shared_ptr<const Client> c = Get();
    CheckOptions o;
    o.want_canonical = canonical;
    return CheckText(url, "url", [&](std::string_view view) {
      return local ? c->CheckLocal(view, o) : c->Check(view, o);
    });
  }

  py::list CheckMany(py::handle urls, bool canonical, bool local) const {
    std::shared_ptr<const Client> c = Get();
    CheckOptions o;
    o.want_canonical = canonical;
    return CheckTexts(urls, "url",
                      [&](const std::vector<std::string_view>& views, std::vector<Verdict>* out) {
                        out->resize(views.size());
                        for (size_t i = 0; i < views.size(); ++i)
                          (*out)[i] = local ? c->CheckLocal(views[i], o) : c->Check(views[i], o);
                      });
  }

  void Refresh() {
    std::shared_ptr<Client> c = GetMutable();
    Status s;
    {
      py::gil_scoped_release release;
      s = c->Refresh();
    }
    if (!s.ok()) ThrowStatus(s);
  }

  py::list SyncNow() {
    std::shared_ptr<Client> c = GetMutable();
    auto reports = [&] {
      py::gil_scoped_release release;
      return c->SyncNow();
    }();
    if (!reports.ok()) ThrowStatus(reports.status());
    py::list out;
    py::object type = TypeOf("SyncReport");
    for (const SyncReport& r : *reports) {
      out.append(type(Str(r.list), py::str(SyncResultName(r.result)), py::int_(r.from_version),
                      py::int_(r.to_version), py::bool_(r.used_diff), py::int_(r.bytes), StrOrNone(r.error)));
    }
    return out;
  }

  bool WaitUntilReady(double timeout_seconds) {
    if (!(timeout_seconds >= 0) || timeout_seconds > 1e9) {  // NaN too
      ThrowStatus(Status::InvalidArgument("timeout must be 0 .. 1e9 seconds"));
    }
    std::shared_ptr<Client> c = GetMutable();
    Status s;
    {
      py::gil_scoped_release release;
      s = c->WaitUntilReady(static_cast<int64_t>(timeout_seconds * 1000));
    }
    if (s.code() == StatusCode::kUnavailable) return false;  // the timeout passed
    if (!s.ok()) ThrowStatus(s);
    return true;
  }

  py::list Lists() const {
    std::shared_ptr<const Client> c = Get();
    std::vector<ListStatus> lists;
    {
      py::gil_scoped_release release;
      lists = c->Lists();
    }
    py::list out;
    py::object type = TypeOf("ListStatus");
    for (const ListStatus& l : lists) {
      out.append(type(Str(l.name), py::int_(l.version), py::int_(l.entries), py::int_(l.created_unix),
                      py::int_(l.expires_unix), py::bool_(l.stale), py::str(StaleReasonName(l.stale_reason)),
                      py::bool_(l.emergency),
                      py::int_(l.last_sync_unix), py::str(SyncResultName(l.last_sync_result)),
                      Str(l.last_sync_error), py::int_(l.next_sync_unix), py::int_(l.consecutive_failures)));
    }
    return out;
  }

  py::dict Stats() const {
    ClientStats s = Get()->Stats();
    py::dict by_verdict;
    for (int i = 0; i < 6; ++i) by_verdict[VerdictKindName(static_cast<VerdictKind>(i))] = py::int_(s.by_verdict[i]);
    py::dict d;
    d["lookups"] = py::int_(s.lookups);
    d["by_verdict"] = by_verdict;
    d["verifications"] = py::int_(s.verifications);
    d["verification_failures"] = py::int_(s.verification_failures);
    d["verification_seconds"] = py::float_(s.verification_seconds);
    d["cache_hits"] = py::int_(s.cache_hits);
    d["cache_misses"] = py::int_(s.cache_misses);
    d["generation"] = py::int_(s.generation);
    d["swaps"] = py::int_(s.swaps);
    return d;
  }

  void Close() { client_.reset(); }
  bool closed() const { return client_ == nullptr; }

 private:
  std::shared_ptr<const Client> Get() const { return GetMutable(); }
  std::shared_ptr<Client> GetMutable() const {
    if (client_ == nullptr) ThrowStatus(Status::FailedPrecondition("the client is closed"));
    return client_;
  }

  // Read and replaced only with the GIL held; calls copy it before releasing the GIL.
  std::shared_ptr<Client> client_;
};

}  // namespace

void BindClient(py::module_& m) {
  py::class_<PyClient>(m, "Client",
                       "The living client over a data directory kept current by urlguardd, `urlguard sync` or "
                       "sync_now() (urlguard/client.h). Thread-safe; calls release the GIL.")
      .def(py::init(&PyClient::Open), py::arg("data_dir"), py::kw_only(), py::arg("server_url") = "",
           py::arg("public_key_files") = py::tuple(), py::arg("key_rotation_files") = py::tuple(),
           py::arg("public_key_pems") = py::tuple(), py::arg("lists") = py::tuple(), py::arg("verify") = true,
           py::arg("verify_deadline_ms") = 1500, py::arg("allowlist") = py::tuple(), py::arg("ca_bundle") = "",
           py::arg("proxy") = "", py::arg("async_queue_capacity") = 1024, py::arg("watch") = true,
           "Opens a data directory read-only (an empty one is fine). The keyword arguments are ClientOptions' "
           "fields; public_key_files / key_rotation_files are loaded as TrustedKeys::LoadFiles does. Raises "
           "InvalidArgumentError for bad options and the key files' errors.")
      .def("check", [](const PyClient& c, py::handle url, bool canonical) { return c.Check(url, canonical, false); },
           py::arg("url"), py::kw_only(), py::arg("canonical") = false,
           "Local lookup; on a hit the result cache, then the verification API (within verify_deadline_ms) decide: "
           "safe, safe_verified, malicious, unverified_hit or invalid.")
      .def("check_local",
           [](const PyClient& c, py::handle url, bool canonical) { return c.Check(url, canonical, true); },
           py::arg("url"), py::kw_only(), py::arg("canonical") = false,
           "Local lookup only (no cache, no network): safe, hit or invalid.")
      .def("check_many", &PyClient::CheckMany, py::arg("urls"), py::kw_only(), py::arg("canonical") = false,
           py::arg("local") = false, "check (or check_local with local=True) for every URL of an iterable.")
      .def("refresh", &PyClient::Refresh, "Swaps in the data directory's current generation now, if it changed.")
      .def("sync_now", &PyClient::SyncNow,
           "One sync pass (needs server_url and trusted keys): a list of urlguard.SyncReport. Per-list failures "
           "are reports; FailedPreconditionError when another process holds the directory's lock.")
      .def("wait_until_ready", &PyClient::WaitUntilReady, py::arg("timeout"),
           "Waits up to `timeout` seconds until every subscribed list (`lists`; without it, every installed list "
           "and at least one) is installed and fresh, as urlguardd or another process syncs the directory: True "
           "when ready, False when the timeout passed (lists() says which lists are stale). Releases the GIL.")
      .def("lists", &PyClient::Lists, "Every installed or subscribed list with its sync schedule (urlguard.ListStatus).")
      .def("stats", &PyClient::Stats, "Counters since open, as a dict (by_verdict is keyed by verdict name).")
      .def("close", &PyClient::Close, "Stops the client once no call is in flight.")
      .def_property_readonly("closed", &PyClient::closed)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyClient& c, py::args) { c.Close(); });
}

}  // namespace urlguard::python
