// Copyright urlguard authors.
//
// NewLoopbackApiListener (include/urlguard/daemon.h): the lookup API on http/'s event-driven server with the
// Host allowlist on, the head-time refusals of daemon/api_http.h and the limits named in daemon.h.
#include <utility>

#include "daemon/api_http.h"
#include "http/http_server.h"
#include "http/listen_address.h"
#include "urlguard/daemon.h"

namespace urlguard {
namespace {

class MhdApiListener : public ApiListener {
 public:
  explicit MhdApiListener(ListenAddress address) : address_(std::move(address)) {}
  ~MhdApiListener() override { Stop(); }

  Status Start(ApiHandler handler) override {
    HttpServerOptions options;
    options.listen = address_;
    options.event_threads = kApiEventThreads;
    options.max_connections = kApiMaxConnections;
    options.max_connections_per_address = kApiMaxConnectionsPerAddress;
    options.idle_timeout_seconds = kApiIdleTimeoutSeconds;
    options.head_deadline_seconds = kApiHeadDeadlineSeconds;
    options.body_deadline_seconds = kApiHeadDeadlineSeconds;  // no body is ever read; a backstop
    options.max_head_bytes = kApiMaxHeadBytes;
    options.max_body_bytes = 0;
    options.require_loopback_host = true;
    auto server = HttpServer::Start(
        options, [handler = std::move(handler)](const HttpRequest& r) { return ToHttpResponse(handler(ToApiRequest(r))); },
        &RefuseApiHead);
    if (!server.ok()) return server.status();
    server_ = std::move(server).value();
    return Status::Ok();
  }

  int port() const override { return server_ ? server_->port() : 0; }

  std::string url() const override { return "http://" + address_.ToString(port()); }

  void Stop() override {
    if (server_) server_->Stop();
  }

 private:
  const ListenAddress address_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace

Result<std::unique_ptr<ApiListener>> NewLoopbackApiListener(std::string_view listen_address) {
  auto address = ParseLoopbackListenAddress(listen_address);
  if (!address.ok()) return address.status();
  return std::unique_ptr<ApiListener>(new MhdApiListener(std::move(address).value()));
}

}  // namespace urlguard
