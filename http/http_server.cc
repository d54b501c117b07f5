// Copyright urlguard authors.
//
// Implementation notes.
// - Per request, MHD calls UriLog (raw target; its return value becomes the request's context), then Access
//   once with the head complete, once per body piece, and once more when the body is complete; Completed when
//   the request ends (answered or not). Per connection, NotifyConnection at start and close.
// - Deadlines: conns_ maps each open connection to its socket and current deadline; the sweeper thread
//   shutdown(2)s the socket of a connection past it (MHD then sees end of stream and closes the connection).
//   MHD closes the socket only after NotifyConnection(CLOSED), which erases the entry under the same mutex,
//   so the sweeper never touches a closed (or reused) descriptor.
#include "http/http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "http/framing.h"

namespace urlguard {

namespace {

using Clock = std::chrono::steady_clock;

struct RequestState {
  std::string raw_target;
  bool head_done = false;
  bool too_large = false;
  size_t discarded = 0;
  HttpRequest request;
};

std::string PeerAddressOf(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (info == nullptr || info->client_addr == nullptr) return "";
  char text[INET6_ADDRSTRLEN] = {0};
  const sockaddr* addr = info->client_addr;
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, text, sizeof(text));
  } else if (addr->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, text, sizeof(text));
  }
  return text;
}

MHD_Result CollectHeader(void* cls, MHD_ValueKind, const char* key, size_t key_size, const char* value,
                         size_t value_size) {
  auto* headers = static_cast<HttpHeaders*>(cls);
  headers->emplace_back(std::string(key, key_size), value == nullptr ? std::string() : std::string(value, value_size));
  return MHD_YES;
}

void FreeString(void* cls) { delete static_cast<std::string*>(cls); }
void FreeMapping(void* cls) { delete static_cast<std::shared_ptr<const MappedFile>*>(cls); }

}  // namespace

class HttpServer::Impl {
 public:
  Impl(const HttpServerOptions& options, HttpHandler handler, HttpHeadHandler head_handler)
      : options_(options), handler_(std::move(handler)), head_handler_(std::move(head_handler)) {}

  ~Impl() { Stop(); }

  Status Listen() {
    const int family = options_.listen.ipv6 ? AF_INET6 : AF_INET;
    const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));  // no SO_REUSEPORT: nobody shares the port
    sockaddr_storage addr{};
    socklen_t addr_len;
    if (options_.listen.ipv6) {
      ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof(yes));
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(static_cast<uint16_t>(options_.listen.port));
      inet_pton(AF_INET6, options_.listen.host.c_str(), &a->sin6_addr);
      addr_len = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      a->sin_family = AF_INET;
      a->sin_port = htons(static_cast<uint16_t>(options_.listen.port));
      inet_pton(AF_INET, options_.listen.host.c_str(), &a->sin_addr);
      addr_len = sizeof(*a);
    }
    const std::string where = options_.listen.ToString(options_.listen.port);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), addr_len) != 0 ||
        ::listen(fd, options_.listen_backlog) != 0) {
      const int e = errno;
      ::close(fd);
      return Status::IoError("cannot bind " + where + ": " + std::strerror(e));
    }
    sockaddr_storage bound{};
    socklen_t bound_len = sizeof(bound);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
    port_ = ntohs(options_.listen.ipv6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                       : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);

    // Turbo: no shutdown(2) before close and optimistic reads without waiting for epoll first (the deadline
    // sweeper calls shutdown(2) itself). Measured: bench/verify_load_bench, docs/verify-server.md.
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_TURBO;
    if (tls()) flags |= MHD_USE_TLS;
    // Options that only apply with TLS go last, behind MHD_OPTION_ARRAY, so the call stays one expression.
    MHD_OptionItem tls_options[] = {
        {MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(options_.tls_key_pem.c_str())},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(options_.tls_cert_pem.c_str())},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>("NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2")},
        {MHD_OPTION_END, 0, nullptr},
    };
    MHD_OptionItem no_options[] = {{MHD_OPTION_END, 0, nullptr}};
    daemon_ = MHD_start_daemon(
        flags, 0, nullptr, nullptr, &Impl::Access, this,                                         //
        MHD_OPTION_LISTEN_SOCKET, fd,                                                            //
        MHD_OPTION_THREAD_POOL_SIZE, static_cast<unsigned>(options_.event_threads),              //
        MHD_OPTION_CONNECTION_LIMIT, options_.max_connections,                                   //
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, options_.max_connections_per_address,                //
        MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(options_.idle_timeout_seconds),     //
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, options_.max_head_bytes,                             //
        MHD_OPTION_URI_LOG_CALLBACK, &Impl::UriLog, this,                                        //
        MHD_OPTION_NOTIFY_COMPLETED, &Impl::Completed, this,                                     //
        MHD_OPTION_NOTIFY_CONNECTION, &Impl::NotifyConnection, this,                             //
        MHD_OPTION_ARRAY, tls() ? tls_options : no_options,                                      //
        MHD_OPTION_END);
    if (daemon_ == nullptr) {
      ::close(fd);
      return Status::IoError("cannot start the HTTP server on " + where +
                             (tls() ? " (TLS certificate or key rejected?)" : ""));
    }
    sweeper_ = std::thread([this] { Sweep(); });
    return Status::Ok();
  }

  void Stop() {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
    daemon_ = nullptr;
    {
      std::lock_guard<std::mutex> l(conns_mutex_);
      stopping_ = true;
    }
    sweep_wake_.notify_all();
    if (sweeper_.joinable()) sweeper_.join();
  }

  int port() const { return port_; }
  bool tls() const { return !options_.tls_cert_pem.empty(); }
  uint64_t deadline_cuts() const { return deadline_cuts_.load(std::memory_order_relaxed); }

 private:
  struct ConnectionEntry {
    int fd = -1;
    Clock::time_point deadline;
  };

  void SetDeadline(MHD_Connection* connection, Clock::time_point deadline) {
    std::lock_guard<std::mutex> lock(conns_mutex_);
    auto it = conns_.find(connection);
    if (it != conns_.end()) it->second.deadline = deadline;
  }

  void Sweep() {
    std::unique_lock<std::mutex> lock(conns_mutex_);
    while (!stopping_) {
      sweep_wake_.wait_for(lock, std::chrono::milliseconds(kDeadlineSweepMillis));
      const auto now = Clock::now();
      for (auto& [connection, entry] : conns_) {
        if (entry.deadline > now) continue;
        ::shutdown(entry.fd, SHUT_RDWR);  // MHD sees the end of the stream and closes the connection
        entry.deadline = Clock::time_point::max();
        deadline_cuts_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }

  static void NotifyConnection(void* cls, MHD_Connection* connection, void**, MHD_ConnectionNotificationCode code) {
    auto* self = static_cast<Impl*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
      if (info == nullptr) return;
      std::lock_guard<std::mutex> lock(self->conns_mutex_);
      self->conns_[connection] = {info->connect_fd,
                                  Clock::now() + std::chrono::seconds(self->options_.head_deadline_seconds)};
    } else {
      std::lock_guard<std::mutex> lock(self->conns_mutex_);
      self->conns_.erase(connection);
    }
  }

  static void* UriLog(void*, const char* uri, MHD_Connection*) {
    auto* state = new RequestState;
    state->raw_target = uri == nullptr ? "" : uri;
    return state;
  }

  static void Completed(void* cls, MHD_Connection* connection, void** con_cls, MHD_RequestTerminationCode) {
    auto* self = static_cast<Impl*>(cls);
    delete static_cast<RequestState*>(*con_cls);
    *con_cls = nullptr;
    // The next request on a kept-alive connection gets a fresh head deadline.
    self->SetDeadline(connection, Clock::now() + std::chrono::seconds(self->options_.head_deadline_seconds));
  }

  // Queues `response`. After it, the connection has no deadline (sending is bounded by the idle timeout),
  // except after an answer sent before the body was read (`early`): MHD stops reading such a connection,
  // and it is cut kEarlyAnswerLingerSeconds later whatever the client does.
  MHD_Result Queue(MHD_Connection* connection, HttpResponse response, bool early = false) {
    SetDeadline(connection, early ? Clock::now() + std::chrono::seconds(kEarlyAnswerLingerSeconds)
                                  : Clock::time_point::max());
    MHD_Response* r;
    if (response.file != nullptr) {
      const uint8_t* data = response.file->data() + response.file_offset;
      auto* holder = new std::shared_ptr<const MappedFile>(std::move(response.file));
      r = MHD_create_response_from_buffer_with_free_callback_cls(
          response.file_length, const_cast<uint8_t*>(data), &FreeMapping, holder);
      if (r == nullptr) delete holder;
    } else {
      auto* body = new std::string(std::move(response.body));
      r = MHD_create_response_from_buffer_with_free_callback_cls(body->size(), body->data(), &FreeString, body);
      if (r == nullptr) delete body;
    }
    if (r == nullptr) return MHD_NO;
    for (const auto& [name, value] : response.headers) MHD_add_response_header(r, name.c_str(), value.c_str());
    if (response.close) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    const MHD_Result result = MHD_queue_response(connection, static_cast<unsigned>(response.status), r);
    MHD_destroy_response(r);
    return result;
  }

  MHD_Result Refuse(MHD_Connection* connection, int status, std::string_view message) {
    HttpResponse response;
    response.status = status;
    response.close = true;
    response.SetHeader("Content-Type", "application/json");
    response.SetHeader("Cache-Control", "no-store");
    response.body = "{\"error\":\"" + std::string(message) + "\"}";  // messages are constants, no escaping
    return Queue(connection, std::move(response), /*early=*/true);
  }

  // The head is complete: check it, fill in the request. Returns false after queueing a refusal.
  bool AcceptHead(MHD_Connection* connection, const char* method, RequestState* state, MHD_Result* result) {
    SetDeadline(connection, Clock::now() + std::chrono::seconds(options_.body_deadline_seconds));
    HttpRequest& req = state->request;
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, &CollectHeader, &req.headers);
    std::vector<std::pair<std::string_view, std::string_view>> views;
    views.reserve(req.headers.size());
    for (const auto& [k, v] : req.headers) views.emplace_back(k, v);
    const FramingVerdict framing = CheckFraming(views);
    if (framing != FramingVerdict::kOk) {
      *result = Refuse(connection, 400, FramingVerdictText(framing));
      return false;
    }
    if (options_.require_loopback_host) {
      const auto host = req.Header("Host");
      if (!host || req.Headers("Host").size() != 1 || !IsAllowedLoopbackHost(*host, port_)) {
        *result = Refuse(connection, 421, "misdirected request");
        return false;
      }
    }
    if (const auto length = req.Header("Content-Length")) {
      // CheckFraming made it all digits; anything longer than 20 digits is over any cap anyway.
      const std::string_view digits = *length;
      const uint64_t declared = digits.size() > 19 ? UINT64_MAX : std::stoull(std::string(digits));
      if (declared > options_.max_body_bytes + kMaxDiscardedBodyBytes) {
        *result = Refuse(connection, 413, "request body too large");
        return false;
      }
      // Over the cap but small enough to drain: read and discard it, then answer 413, so that a client that
      // sends its whole body before reading (most do) gets the answer instead of a reset.
      if (declared > options_.max_body_bytes) state->too_large = true;
    }
    req.method = method;
    req.target = state->raw_target;
    const size_t question = req.target.find('?');
    req.path = PercentDecode(std::string_view(req.target).substr(0, question), /*plus_is_space=*/false);
    if (question != std::string::npos) req.query = req.target.substr(question + 1);
    req.peer_address = PeerAddressOf(connection);
    req.tls = tls();
    if (head_handler_) {
      if (std::optional<HttpResponse> early = head_handler_(req)) {
        early->close = true;
        *result = Queue(connection, std::move(*early), /*early=*/true);
        return false;
      }
    }
    return true;
  }

  static MHD_Result Access(void* cls, MHD_Connection* connection, const char*, const char* method, const char*,
                           const char* upload_data, size_t* upload_data_size, void** con_cls) {
    auto* self = static_cast<Impl*>(cls);
    auto* state = static_cast<RequestState*>(*con_cls);
    if (state == nullptr) return MHD_NO;  // UriLog always runs first
    if (!state->head_done) {
      state->head_done = true;
      MHD_Result result = MHD_YES;
      if (!self->AcceptHead(connection, method, state, &result)) return result;
      return MHD_YES;  // MHD reads the body (sending "100 Continue" when asked)
    }
    if (*upload_data_size > 0) {
      const size_t n = *upload_data_size;
      *upload_data_size = 0;
      std::string& body = state->request.body;
      if (!state->too_large && n <= self->options_.max_body_bytes - body.size()) {
        body.append(upload_data, n);
        return MHD_YES;
      }
      state->too_large = true;
      body.clear();
      state->discarded += n;
      return state->discarded > kMaxDiscardedBodyBytes ? MHD_NO : MHD_YES;  // MHD_NO: cut, no answer
    }
    if (state->too_large) {
      HttpResponse response;
      response.status = 413;
      response.close = true;
      response.SetHeader("Content-Type", "application/json");
      response.SetHeader("Cache-Control", "no-store");
      response.body = "{\"error\":\"request body too large\"}";
      return self->Queue(connection, std::move(response));
    }
    return self->Queue(connection, self->handler_(state->request));
  }

  const HttpServerOptions options_;
  const HttpHandler handler_;
  const HttpHeadHandler head_handler_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
  std::thread sweeper_;
  std::atomic<uint64_t> deadline_cuts_{0};

  std::mutex conns_mutex_;  // guards conns_ and stopping_
  std::condition_variable sweep_wake_;
  std::unordered_map<MHD_Connection*, ConnectionEntry> conns_;
  bool stopping_ = false;

  std::mutex stop_mutex_;  // guards stopped_ and the teardown
  bool stopped_ = false;
};

namespace {

Status ValidateOptions(const HttpServerOptions& o) {
  if (o.listen.port < 0 || o.listen.port > 65535) return Status::InvalidArgument("http: port must be 0..65535");
  if (o.event_threads < 1 || o.event_threads > kMaxEventThreads) {
    return Status::InvalidArgument("http: event_threads must be 1.." + std::to_string(kMaxEventThreads));
  }
  if (o.max_connections < 1 || o.max_connections > kMaxHttpConnections || o.max_connections_per_address < 1 ||
      o.max_connections_per_address > o.max_connections) {
    return Status::InvalidArgument("http: connection limits out of range");
  }
  if (o.idle_timeout_seconds < 1 || o.head_deadline_seconds < 1 || o.body_deadline_seconds < 1) {
    return Status::InvalidArgument("http: timeouts and deadlines must be at least 1 second");
  }
  if (o.max_head_bytes < kMinHeadBytes || o.max_head_bytes > kMaxHeadBytes) {
    return Status::InvalidArgument("http: max_head_bytes out of range");
  }
  if (o.max_body_bytes > kMaxHttpBodyBytes) return Status::InvalidArgument("http: max_body_bytes out of range");
  if (o.listen_backlog < 1) return Status::InvalidArgument("http: listen_backlog must be positive");
  if (o.tls_cert_pem.empty() != o.tls_key_pem.empty()) {
    return Status::InvalidArgument("http: HTTPS needs both a certificate and a key");
  }
  if (!o.tls_cert_pem.empty() && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
    return Status::InvalidArgument("http: this libmicrohttpd has no TLS support");
  }
  return Status::Ok();
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() { Stop(); }
int HttpServer::port() const { return impl_->port(); }
bool HttpServer::tls() const { return impl_->tls(); }
void HttpServer::Stop() { impl_->Stop(); }
uint64_t HttpServer::deadline_cuts() const { return impl_->deadline_cuts(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options, HttpHandler handler,
                                                     HttpHeadHandler head_handler) {
  URLGUARD_RETURN_IF_ERROR(ValidateOptions(options));
  auto impl = std::make_unique<Impl>(options, std::move(handler), std::move(head_handler));
  URLGUARD_RETURN_IF_ERROR(impl->Listen());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace urlguard
