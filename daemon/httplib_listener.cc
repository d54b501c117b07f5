// Copyright urlguard authors.
//
// The lookup API's current HTTP transport: cpp-httplib behind the ApiListener seam (include/urlguard/daemon.h).
#include <httplib.h>

#include <thread>

#include "urlguard/daemon.h"

namespace urlguard {
namespace {

// Request bodies are never needed (GET only); anything larger than this is refused by the server.
constexpr size_t kMaxApiRequestBodyBytes = 64 << 10;

class HttplibListener : public ApiListener {
 public:
  ~HttplibListener() override { Stop(); }

  Status Start(const std::string& host, int port, ApiHandler handler) override {
    auto route = [handler](const httplib::Request& req, httplib::Response& res) {
      ApiRequest r;
      r.method = req.method;
      r.path = req.path;
      for (const auto& [k, v] : req.params) r.query.emplace(k, v);  // emplace keeps the first of repeated names
      ApiResponse a = handler(r);
      res.status = a.status;
      res.set_content(a.body, a.content_type);
    };
    server_.Get(R"(/.*)", route);
    server_.set_payload_max_length(kMaxApiRequestBodyBytes);
    if (!server_.bind_to_port(host, port)) {
      return Status::Unavailable("cannot listen on " + host + ":" + std::to_string(port));
    }
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    return Status::Ok();
  }

  void Stop() override {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

 private:
  httplib::Server server_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<ApiListener> NewLoopbackApiListener() { return std::make_unique<HttplibListener>(); }

}  // namespace urlguard
