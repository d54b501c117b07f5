// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// NewLoopbackApiListener and NewUnixApiListener (include/urlguard/daemon.h): the lookup API on http/'s
// event-driven server with the head-time refusals of daemon/api_http.h and the limits named in daemon.h; on
// TCP with the Host allowlist on, on a Unix socket capped per peer uid.
#include <string>
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
  MhdApiListener(std::string unix_path, std::string unix_group)
      : unix_path_(std::move(unix_path)), unix_group_(std::move(unix_group)) {}
  ~MhdApiListener() override { Stop(); }

  Status Start(ApiHandler handler) override {
    HttpServerOptions options;
    options.event_threads = kApiEventThreads;
    options.max_connections = kApiMaxConnections;
    if (unix_path_.empty()) {
      options.listen = address_;
      options.max_connections_per_address = kApiMaxConnectionsPerAddress;
      options.require_loopback_host = true;
    } else {
      options.unix_path = unix_path_;
      options.unix_group = unix_group_;
      options.max_connections_per_address = kApiMaxConnectionsPerPeer;
    }
    options.evict_waiting_connections = true;
    options.idle_timeout_seconds = kApiIdleTimeoutSeconds;
    options.head_deadline_seconds = kApiHeadDeadlineSeconds;
    options.body_deadline_seconds = kApiHeadDeadlineSeconds;  // no body is ever read; a backstop
    options.max_head_bytes = kApiMaxHeadBytes;
    options.max_body_bytes = 0;
    auto server = HttpServer::Start(
        options, [handler = std::move(handler)](const HttpRequest& r) { return ToHttpResponse(handler(ToApiRequest(r))); },
        &RefuseApiHead);
    if (!server.ok()) return server.status();
    server_ = std::move(server).value();
    return Status::Ok();
  }

  int port() const override { return server_ ? server_->port() : 0; }

  std::string url() const override {
    return unix_path_.empty() ? "http://" + address_.ToString(port()) : "unix:" + unix_path_;
  }

  void Stop() override {
    if (server_) server_->Stop();
  }

 private:
  const ListenAddress address_;
  const std::string unix_path_, unix_group_;  // unix_path_ set: a Unix socket instead of address_
  std::unique_ptr<HttpServer> server_;
};

}  // namespace

Result<std::unique_ptr<ApiListener>> NewLoopbackApiListener(std::string_view listen_address) {
  auto address = ParseLoopbackListenAddress(listen_address);
  if (!address.ok()) return address.status();
  return std::unique_ptr<ApiListener>(new MhdApiListener(std::move(address).value()));
}

Result<std::unique_ptr<ApiListener>> NewUnixApiListener(std::string_view path, std::string_view group) {
  if (path.empty() || path[0] != '/' || path.size() > kMaxUnixSocketPathBytes ||
      path.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("the Unix socket path must be absolute and at most " +
                                   std::to_string(kMaxUnixSocketPathBytes) + " bytes");
  }
  return std::unique_ptr<ApiListener>(new MhdApiListener(std::string(path), std::string(group)));
}

}  // namespace urlguard
