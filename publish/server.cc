// Copyright urlguard authors.
//
// Implementation notes.
// - Every connection is read through ConnectionStream (plain or TLS) by GuardedHttpServer, which replaces
//   cpp-httplib's per-connection loop (Server::process_and_close_socket, a virtual) and drives its protected
//   process_request() per request. That is where the per-request byte budget, the keep-alive policy and TLS
//   live, so cpp-httplib never reads more than the budget from a client.
// - OS access: sockets, realpath/open/fstat/pread for static files. platform/Env has no stat or realpath yet,
//   so the server keeps these calls in this file (StaticFiles, ConnectionStream).
#include "publish/server.h"

#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
// Debian's libcpp-httplib is built with OpenSSL support; the header must be compiled the same way.
#error "Build with the flags of `pkg-config --cflags cpp-httplib`"
#endif
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "core/layer_kind.h"
#include "core/list_name.h"
#include "core/rolling_window.h"
#include "core/sha256.h"
#include "platform/env.h"
#include "publish/hash_store.h"

namespace urlguard {

// ---- request parsing (pure) -------------------------------------------------------------------------------

namespace {

// Parses exactly 8 hex digits.
bool ParsePrefixHex(std::string_view hex, uint32_t* out) {
  if (hex.size() != kVerifyPrefixHexDigits) return false;
  uint8_t bytes[4];
  if (!FromHex(hex, bytes, sizeof(bytes))) return false;
  *out = (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) | bytes[3];
  return true;
}

Status TooManyPrefixes() {
  return Status::ResourceExhausted("more than " + std::to_string(kMaxVerifyPrefixes) + " prefixes");
}

}  // namespace

Result<std::vector<uint32_t>> ParseVerifyRequest(std::string_view body) {
  if (body.size() > kMaxVerifyBodyBytes) return Status::ResourceExhausted("request body too large");
  // allow_exceptions = false: a parse error yields a "discarded" value instead of throwing.
  const nlohmann::json doc =
      nlohmann::json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::InvalidArgument("body is not JSON");
  if (!doc.is_object()) return Status::InvalidArgument("body must be a JSON object");
  const auto it = doc.find("prefixes");
  if (it == doc.end()) return Status::InvalidArgument("missing \"prefixes\"");
  if (!it->is_array()) return Status::InvalidArgument("\"prefixes\" must be an array");
  if (it->empty()) return Status::InvalidArgument("\"prefixes\" is empty");
  if (it->size() > kMaxVerifyPrefixes) return TooManyPrefixes();
  std::vector<uint32_t> prefixes;
  prefixes.reserve(it->size());
  for (const nlohmann::json& element : *it) {
    if (!element.is_string()) return Status::InvalidArgument("a prefix is not a string");
    uint32_t prefix;
    if (!ParsePrefixHex(element.get_ref<const std::string&>(), &prefix)) {
      return Status::InvalidArgument("a prefix is not 8 hex digits");
    }
    prefixes.push_back(prefix);
  }
  return prefixes;
}

Result<std::vector<uint32_t>> ParseVerifyPrefixList(std::string_view list) {
  if (list.size() > kMaxVerifyBodyBytes) return Status::ResourceExhausted("prefix list too long");
  if (list.empty()) return Status::InvalidArgument("\"prefixes\" is empty");
  std::vector<uint32_t> prefixes;
  size_t start = 0;
  while (true) {
    if (prefixes.size() == kMaxVerifyPrefixes) return TooManyPrefixes();
    const size_t comma = list.find(',', start);
    const std::string_view item =
        list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    uint32_t prefix;
    if (!ParsePrefixHex(item, &prefix)) return Status::InvalidArgument("a prefix is not 8 hex digits");
    prefixes.push_back(prefix);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return prefixes;
}

bool IsLoopbackAddress(std::string_view host) {
  if (host.size() >= INET6_ADDRSTRLEN) return false;
  const std::string h(host);
  in_addr v4;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

namespace {

// ---- small helpers ----------------------------------------------------------------------------------------

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {  // messages are ASCII; anything else is escaped byte-wise
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// Messages for the error statuses cpp-httplib produces itself (its own table is not in the split header).
const char* ReasonFor(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "not found";
    case 405:
      return "method not allowed";
    case 413:
      return "request body too large";
    case 414:
      return "request target too long";
    case 416:
      return "range not satisfiable";
    case 429:
      return "too many requests";
    case 500:
      return "internal error";
    case 503:
      return "unavailable";
    default:
      return status < 500 ? "client error" : "server error";
  }
}

void SetJsonError(httplib::Response& res, int status, std::string_view message) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content("{\"error\":\"" + JsonEscape(message) + "\"}", "application/json");
}

int64_t MonotonicSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// poll() for `events` on `fd` for up to `timeout_ms`; true when ready (or the peer hung up: the next read
// sees it). Retries on EINTR.
bool PollFd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  while (true) {
    const int rc = ::poll(&p, 1, timeout_ms);
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

// ---- the connection stream --------------------------------------------------------------------------------

// What a request handler may tell the connection loop (through a thread-local: handlers run on the
// connection's thread, inside process_request).
struct ConnectionContext {
  bool close_after_response = false;
  int status = 0;  // of the response just written (set by the logger)
};
thread_local ConnectionContext* current_connection = nullptr;

// Asks the connection loop to close the connection after this response (the handler left body bytes unread).
void CloseAfterResponse(httplib::Response& res) {
  res.set_header("Connection", "close");
  if (current_connection != nullptr) current_connection->close_after_response = true;
}

// A non-blocking socket (optionally TLS) read through a small buffer, with per-operation timeouts and a
// per-request byte budget. Once the budget is exceeded or a read fails, the stream is poisoned: every later
// read fails and the connection loop closes the connection.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}

  // Starts a request that may consume `budget` bytes.
  void StartRequest(size_t budget) { budget_left_ = budget; }
  bool poisoned() const { return poisoned_; }

  // Waits up to `timeout_ms` for the next request's first byte, giving up early when `stopping` turns true.
  bool WaitForRequest(int timeout_ms, const std::function<bool()>& stopping) {
    if (poisoned_) return false;
    if (buffered() > 0 || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) return true;
    constexpr int kSliceMs = 100;
    for (int waited = 0; waited < timeout_ms; waited += kSliceMs) {
      if (stopping()) return false;
      if (PollFd(fd_, POLLIN, std::min(kSliceMs, timeout_ms - waited))) return true;
    }
    return false;
  }

  bool is_readable() const override {
    return buffered() > 0 || (ssl_ != nullptr && SSL_pending(ssl_) > 0) ||
           PollFd(fd_, POLLIN, kReadTimeoutSeconds * 1000);
  }
  // Writes block (with a timeout) in write() itself, so there is nothing to wait for here.
  bool is_writable() const override { return !write_failed_; }

  ssize_t read(char* ptr, size_t size) override {
    if (poisoned_ || size == 0) return poisoned_ ? -1 : 0;
    if (buffered() == 0) {
      const ssize_t n = Fill();
      if (n <= 0) {
        poisoned_ = true;
        return n;
      }
    }
    size_t n = std::min(size, buffered());
    if (n > budget_left_) {
      if (budget_left_ == 0) {
        poisoned_ = true;  // the request is over its byte budget: cut it
        return -1;
      }
      n = budget_left_;
    }
    std::memcpy(ptr, buffer_.data() + begin_, n);
    begin_ += n;
    budget_left_ -= n;
    return static_cast<ssize_t>(n);
  }

  // Responses are collected and sent by Flush(): cpp-httplib writes a response's header block and its body
  // separately, and two sends per response cost a system call and a TCP segment each. The buffer is flushed
  // when full, before every read (a client may wait for "100 Continue") and after each request.
  ssize_t write(const char* ptr, size_t size) override {
    if (write_failed_) return -1;
    if (out_.size() + size > kBufferBytes && !Flush()) return -1;
    if (size >= kBufferBytes) return SendAll(ptr, size) ? static_cast<ssize_t>(size) : -1;
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }

  // Sends the collected output. False when the connection failed (then every later write fails too).
  bool Flush() {
    if (out_.empty() || write_failed_) return !write_failed_;
    const bool ok = SendAll(out_.data(), out_.size());
    out_.clear();
    return ok;
  }

  // cpp-httplib asks for both addresses on every request; they do not change, so ask the kernel once.
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    if (remote_port_ < 0) {
      sockaddr_storage addr;
      socklen_t len = sizeof(addr);
      if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
        AddressToString(addr, remote_ip_, remote_port_);
      }
    }
    ip = remote_ip_;
    port = remote_port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    if (local_port_ < 0) {
      sockaddr_storage addr;
      socklen_t len = sizeof(addr);
      if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
        AddressToString(addr, local_ip_, local_port_);
      }
    }
    ip = local_ip_;
    port = local_port_;
  }
  socket_t socket() const override { return fd_; }

 private:
  static constexpr size_t kBufferBytes = 16 * 1024;

  size_t buffered() const { return end_ - begin_; }

  static void AddressToString(const sockaddr_storage& addr, std::string& ip, int& port) {
    char text[INET6_ADDRSTRLEN] = {0};
    if (addr.ss_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
      port = ntohs(a->sin6_port);
    }
    ip = text;
  }

  // Waits for what a failed TLS call asked for. False when the connection is finished or failed.
  bool WaitTls(int error) const {
    if (error == SSL_ERROR_WANT_READ) return PollFd(fd_, POLLIN, kReadTimeoutSeconds * 1000);
    if (error == SSL_ERROR_WANT_WRITE) return PollFd(fd_, POLLOUT, kReadTimeoutSeconds * 1000);
    return false;
  }

  // Sends all of [ptr, ptr + size) or fails (and marks the stream failed).
  bool SendAll(const char* ptr, size_t size) {
    while (size > 0) {
      const size_t chunk = std::min<size_t>(size, INT_MAX);
      ssize_t n;
      if (ssl_ != nullptr) {
        ERR_clear_error();
        const int rc = SSL_write(ssl_, ptr, static_cast<int>(chunk));
        if (rc <= 0) {
          if (WaitTls(SSL_get_error(ssl_, rc))) continue;
          write_failed_ = true;
          return false;
        }
        n = rc;
      } else {
        n = ::send(fd_, ptr, chunk, MSG_NOSIGNAL);
        if (n < 0) {
          if (errno == EINTR) continue;
          if ((errno == EAGAIN || errno == EWOULDBLOCK) && PollFd(fd_, POLLOUT, kReadTimeoutSeconds * 1000)) {
            continue;
          }
          write_failed_ = true;
          return false;
        }
      }
      ptr += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  // Refills the (empty) buffer. Returns bytes read, 0 at end of stream, -1 on error or timeout.
  ssize_t Fill() {
    if (!Flush()) return -1;
    begin_ = end_ = 0;
    while (true) {
      if (ssl_ != nullptr) {
        ERR_clear_error();
        const int n = SSL_read(ssl_, buffer_.data(), static_cast<int>(buffer_.size()));
        if (n > 0) {
          end_ = static_cast<size_t>(n);
          return n;
        }
        const int error = SSL_get_error(ssl_, n);
        if (error == SSL_ERROR_ZERO_RETURN) return 0;
        if (!WaitTls(error)) return -1;
      } else {
        const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), 0);
        if (n > 0) {
          end_ = static_cast<size_t>(n);
          return n;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        if (!PollFd(fd_, POLLIN, kReadTimeoutSeconds * 1000)) return -1;
      }
    }
  }

  const int fd_;
  SSL* const ssl_;
  std::array<char, kBufferBytes> buffer_;
  size_t begin_ = 0, end_ = 0;
  size_t budget_left_ = 0;
  bool poisoned_ = false;
  std::string out_;  // collected output, at most kBufferBytes
  bool write_failed_ = false;
  mutable std::string remote_ip_, local_ip_;  // cached addresses (a port of -1: not asked yet)
  mutable int remote_port_ = -1, local_port_ = -1;
};

// ---- the worker pool --------------------------------------------------------------------------------------

// cpp-httplib's task queue with a bound: enqueue() (the accept loop) blocks while kMaxPendingConnections
// accepted connections wait, so a flood of connections backs up into the kernel's listen backlog instead of
// into memory.
class BoundedTaskQueue final : public httplib::TaskQueue {
 public:
  BoundedTaskQueue(size_t threads, size_t max_pending) : max_pending_(max_pending) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
  }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [&] { return jobs_.size() < max_pending_; });
    jobs_.push_back(std::move(fn));
    not_empty_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shutdown_ = true;
    }
    not_empty_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void Work() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        not_empty_.wait(lock, [&] { return shutdown_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // shutting down, nothing left
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      not_full_.notify_one();
      job();
    }
  }

  const size_t max_pending_;
  std::mutex mutex_;  // guards jobs_ and shutdown_
  std::condition_variable not_empty_, not_full_;
  std::deque<std::function<void()>> jobs_;
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

// ---- the HTTP server --------------------------------------------------------------------------------------

struct SslCtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxDeleter>;


Result<SslCtxPtr> MakeTlsContext(const std::string& cert_file, const std::string& key_file) {
  SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (ctx == nullptr) return Status::Internal("TLS: SSL_CTX_new failed");
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), cert_file.c_str()) != 1) {
    return Status::IoError("TLS: cannot load certificate " + cert_file);
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      return Status::InvalidArgument("TLS: the private key " + key_file + " does not match the certificate");
    }
    return Status::IoError("TLS: cannot load private key " + key_file);
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    return Status::InvalidArgument("TLS: the private key does not match the certificate");
  }
  return ctx;
}

class GuardedHttpServer final : public httplib::Server {
 public:
  GuardedHttpServer(SSL_CTX* tls, size_t request_budget, size_t threads)
      : tls_(tls), request_budget_(request_budget) {
    new_task_queue = [threads] { return new BoundedTaskQueue(threads, kMaxPendingConnections); };
    // No SO_REUSEPORT (cpp-httplib's default): no other process may bind the same port and take connections.
    set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
  }

 private:
  // Replaces cpp-httplib's connection loop (see the top of this file).
  bool process_and_close_socket(socket_t sock) override {
    const int flags = fcntl(sock, F_GETFL, 0);
    if (flags >= 0) fcntl(sock, F_SETFL, flags | O_NONBLOCK);
    int yes = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));  // small responses: no Nagle delay
    auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };

    SSL* ssl = nullptr;
    bool ok = true;
    if (tls_ != nullptr) {
      ssl = SSL_new(tls_);
      ok = ssl != nullptr && SSL_set_fd(ssl, sock) == 1 && Handshake(ssl, sock);
    }
    bool unread_input = false;  // the client may still be sending: linger before closing
    if (ok) {
      ConnectionStream stream(sock, ssl);
      for (size_t served = 0; served < kKeepAliveMaxRequests; ++served) {
        const int wait_ms = (served == 0 ? kReadTimeoutSeconds : kKeepAliveTimeoutSeconds) * 1000;
        if (!stream.WaitForRequest(wait_ms, stopping)) break;
        stream.StartRequest(request_budget_);
        ConnectionContext context;
        current_connection = &context;
        bool connection_closed = false;
        const bool last = served + 1 == kKeepAliveMaxRequests;
        const bool processed =
            process_request(stream, last, connection_closed, [ssl](httplib::Request& req) { req.ssl = ssl; });
        current_connection = nullptr;
        if (!stream.Flush()) break;
        // After a malformed request the stream's state is unknown: do not read on.
        const bool malformed =
            context.status == 400 || context.status == 413 || context.status == 414 || context.status >= 500;
        unread_input = context.close_after_response || malformed || stream.poisoned();
        if (!processed || connection_closed || unread_input) break;
      }
    }
    if (ssl != nullptr) {
      if (ok) SSL_shutdown(ssl);  // one close_notify, no wait for the peer's
      SSL_free(ssl);
    }
    if (unread_input) LingeringClose(sock);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return true;
  }

  // Closing a socket with unread input makes the kernel send a reset, which can destroy the response the
  // client has not read yet (e.g. a 413 while it is still sending the body). So, as web servers do: stop
  // sending, then read and discard for at most kLingerSeconds / kLingerMaxBytes, until the client closes.
  static void LingeringClose(int sock) {
    constexpr int kLingerSeconds = 2;
    constexpr size_t kLingerMaxBytes = size_t{16} << 20;
    ::shutdown(sock, SHUT_WR);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kLingerSeconds);
    std::array<char, 16 * 1024> sink;
    size_t drained = 0;
    while (drained < kLingerMaxBytes) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 ||
          !PollFd(sock, POLLIN, static_cast<int>(std::min<int64_t>(left.count(), 500)))) {
        return;
      }
      const ssize_t n = ::recv(sock, sink.data(), sink.size(), 0);
      if (n == 0) return;  // the client closed
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
        return;
      }
      drained += static_cast<size_t>(n);
    }
  }

  static bool Handshake(SSL* ssl, int fd) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kReadTimeoutSeconds);
    while (true) {
      ERR_clear_error();
      const int rc = SSL_accept(ssl);
      if (rc == 1) return true;
      const int error = SSL_get_error(ssl, rc);
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      const int ms = static_cast<int>(left.count());
      if (error == SSL_ERROR_WANT_READ) {
        if (!PollFd(fd, POLLIN, ms)) return false;
      } else if (error == SSL_ERROR_WANT_WRITE) {
        if (!PollFd(fd, POLLOUT, ms)) return false;
      } else {
        return false;
      }
    }
  }

  SSL_CTX* const tls_;  // not owned; null for plain HTTP
  const size_t request_budget_;
};

// ---- static files -----------------------------------------------------------------------------------------

// Spec (this server's contract, see server.h): a static path is 1..kMaxStaticPathSegments segments of
// [A-Za-z0-9._-], none empty or starting with '.'; the raw target carries no encoded '/', '\' or NUL.
bool IsServablePath(std::string_view raw_target, std::string_view path) {
  const std::string_view raw = raw_target.substr(0, raw_target.find('?'));
  for (size_t i = 0; i + 2 < raw.size(); ++i) {
    if (raw[i] != '%') continue;
    const char a = raw[i + 1], b = static_cast<char>(std::tolower(static_cast<unsigned char>(raw[i + 2])));
    if ((a == '2' && b == 'f') || (a == '5' && b == 'c') || (a == '0' && b == '0')) return false;
  }
  if (path.size() < 2 || path.size() > kMaxStaticPathBytes || path[0] != '/') return false;
  size_t segments = 0;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    const std::string_view seg =
        path.substr(start, slash == std::string_view::npos ? path.npos : slash - start);
    if (seg.empty() || seg[0] == '.' || ++segments > kMaxStaticPathSegments) return false;
    for (char c : seg) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

std::string_view BaseNameOf(std::string_view path) { return path.substr(path.rfind('/') + 1); }

const char* ContentTypeFor(std::string_view name) {
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".json")) return "application/json";
  if (ends_with(".txt")) return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

// RFC 9110 13.1.2: If-None-Match compares entity tags weakly; "*" matches any current representation.
bool IfNoneMatchMatches(std::string_view header, std::string_view etag) {
  size_t start = 0;
  while (start < header.size()) {
    size_t comma = header.find(',', start);
    if (comma == std::string_view::npos) comma = header.size();
    std::string_view tag = header.substr(start, comma - start);
    while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
    while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
    if (tag == "*") return true;
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == etag) return true;
    start = comma + 1;
  }
  return false;
}

struct FileHandle {
  explicit FileHandle(int f) : fd(f) {}
  ~FileHandle() { ::close(fd); }
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  const int fd;
};

class StaticFiles {
 public:
  explicit StaticFiles(std::string root_real) : root_(std::move(root_real)) {}

  // Answers GET/HEAD for `req.path`. Always sets a complete response (404 for anything not servable).
  void Serve(const httplib::Request& req, httplib::Response& res) {
    if (!IsServablePath(req.target, req.path)) return NotFound(res);
    const std::string candidate = root_ + req.path;
    char resolved[PATH_MAX];
    if (::realpath(candidate.c_str(), resolved) == nullptr) return NotFound(res);
    const std::string real(resolved);
    // Symlinks may point anywhere; the resolved file must still be below the root.
    if (real.size() <= root_.size() + 1 || real.compare(0, root_.size(), root_) != 0 ||
        real[root_.size()] != '/') {
      return NotFound(res);
    }
    // O_NONBLOCK: opening a FIFO someone left in public/ must not block the worker (fstat then rejects it).
    const int fd = ::open(real.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return NotFound(res);
    auto file = std::make_shared<FileHandle>(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return NotFound(res);

    auto etag = EtagFor(real, *file, st);
    if (!etag.ok()) {
      SetJsonError(res, 500, "cannot read file");
      return;
    }
    const std::string_view name = BaseNameOf(req.path);
    res.set_header("ETag", *etag);
    res.set_header("Cache-Control",
                   name.substr(0, 8) == "manifest" ? "no-cache" : "public, max-age=31536000, immutable");
    if (IfNoneMatchMatches(req.get_header_value("If-None-Match"), *etag)) {
      res.status = 304;
      return;
    }
    // The status stays unset: cpp-httplib makes it 200, or 206 when it applies the (single) byte range.
    const size_t size = static_cast<size_t>(st.st_size);
    if (size == 0) {
      res.set_content("", ContentTypeFor(name));
      return;
    }
    res.set_content_provider(
        size, ContentTypeFor(name), [file, size](size_t offset, size_t length, httplib::DataSink& sink) {
          thread_local std::array<char, 64 * 1024> buffer;
          if (offset >= size) return false;
          const size_t want = std::min({length, buffer.size(), size - offset});
          const ssize_t n = ::pread(file->fd, buffer.data(), want, static_cast<off_t>(offset));
          if (n <= 0) return false;  // the file shrank or failed: abort the response
          return sink.write(buffer.data(), static_cast<size_t>(n));
        });
  }

 private:
  struct Identity {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
    bool operator==(const Identity&) const = default;
  };

  static void NotFound(httplib::Response& res) { SetJsonError(res, 404, "not found"); }

  // The strong ETag of the open file: the quoted hex SHA-256 of its content, cached by identity.
  Result<std::string> EtagFor(const std::string& real, const FileHandle& file, const struct stat& st) {
    const Identity id{st.st_dev, st.st_ino, st.st_size,
                      int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = cache_.find(real);
      if (it != cache_.end() && it->second.first == id) return it->second.second;
    }
    Sha256Hasher hasher;
    std::string buffer(64 * 1024, '\0');
    off_t offset = 0;
    while (offset < st.st_size) {
      const ssize_t n = ::pread(file.fd, buffer.data(), buffer.size(), offset);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::IoError("read failed");
      hasher.Update(buffer.data(), static_cast<size_t>(n));
      offset += n;
    }
    std::string etag = "\"" + ToHex(hasher.Finish()) + "\"";
    std::lock_guard<std::mutex> lock(mutex_);
    if (cache_.size() >= kMaxEtagCacheEntries) cache_.clear();
    cache_[real] = {id, etag};
    return etag;
  }

  const std::string root_;  // real path of REPO/public, no trailing '/'
  std::mutex mutex_;        // guards cache_
  std::map<std::string, std::pair<Identity, std::string>> cache_;
};

// ---- metrics ----------------------------------------------------------------------------------------------

enum Endpoint : int {
  kEndpointVerify = 0,
  kEndpointStatic,
  kEndpointMetrics,
  kEndpointHealthz,
  kEndpointOther,
  kEndpointCount
};
constexpr const char* kEndpointNames[kEndpointCount] = {"verify", "static", "metrics", "healthz", "other"};

Endpoint EndpointOf(const httplib::Request& req) {
  if (req.path == "/v1/verify") return kEndpointVerify;
  if (req.path == "/metrics") return kEndpointMetrics;
  if (req.path == "/healthz") return kEndpointHealthz;
  if ((req.method == "GET" || req.method == "HEAD") && !req.path.empty()) return kEndpointStatic;
  return kEndpointOther;
}

// Upper bounds (seconds) of the verify latency histogram.
constexpr std::array<double, 12> kLatencyBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                   0.01,   0.025,   0.05,   0.1,   0.25,   1.0};
constexpr std::array<const char*, 12> kLatencyLabels = {
    "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "1"};
constexpr int kMinStatus = 100, kMaxStatus = 599;

// Lock-free counters (relaxed atomics: each is an independent monotonic count).
struct Metrics {
  std::array<std::array<std::atomic<uint64_t>, kMaxStatus - kMinStatus + 1>, kEndpointCount> requests{};
  std::array<std::atomic<uint64_t>, kLatencyBounds.size()> verify_buckets{};  // non-cumulative
  std::atomic<uint64_t> verify_count{0};
  std::atomic<uint64_t> verify_nanos{0};
  std::atomic<uint64_t> prefixes{0};
  std::atomic<uint64_t> matches{0};
  std::atomic<uint64_t> throttled{0};

  void CountRequest(Endpoint endpoint, int status) {
    if (status < kMinStatus || status > kMaxStatus) return;
    requests[endpoint][status - kMinStatus].fetch_add(1, std::memory_order_relaxed);
  }
  void ObserveVerify(std::chrono::steady_clock::duration elapsed) {
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count();
    const double seconds = static_cast<double>(nanos) / 1e9;
    for (size_t i = 0; i < kLatencyBounds.size(); ++i) {
      if (seconds <= kLatencyBounds[i]) {
        verify_buckets[i].fetch_add(1, std::memory_order_relaxed);
        break;
      }
    }
    verify_nanos.fetch_add(static_cast<uint64_t>(nanos), std::memory_order_relaxed);
    verify_count.fetch_add(1, std::memory_order_relaxed);
  }
};

// Per-list gauges from REPO/public/v1/lists/<list>/manifest.json, re-parsed when a manifest's bytes change.
class ListGauges {
 public:
  explicit ListGauges(std::string lists_dir) : dir_(std::move(lists_dir)) {}

  void Append(std::string* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    Refresh();
    *out += "# HELP urlguard_list_version Version of each list's current manifest.\n";
    *out += "# TYPE urlguard_list_version gauge\n";
    for (const auto& [list, info] : lists_) {
      if (info.valid)
        *out += "urlguard_list_version{list=\"" + list + "\"} " + std::to_string(info.version) + "\n";
    }
    *out += "# HELP urlguard_list_entries Entries of each list layer in its current manifest.\n";
    *out += "# TYPE urlguard_list_entries gauge\n";
    for (const auto& [list, info] : lists_) {
      for (const auto& [layer, count] : info.entries) {
        *out += "urlguard_list_entries{list=\"" + list + "\",layer=\"" + layer + "\"} " +
                std::to_string(count) + "\n";
      }
    }
  }

 private:
  struct ListInfo {
    std::string raw;     // the manifest bytes last parsed
    bool valid = false;  // "version" was readable
    uint64_t version = 0;
    std::vector<std::pair<std::string, uint64_t>> entries;  // layer -> count
  };

  static bool IsLabelValue(std::string_view s) { return IsValidListName(s); }  // [a-z0-9_-]{1,64}

  static ListInfo Parse(std::string raw) {
    ListInfo info;
    const nlohmann::json doc = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
    info.raw = std::move(raw);
    if (!doc.is_object()) return info;  // garbage: no gauges for this list
    const auto version = doc.find("version");
    if (version == doc.end() || !version->is_number_unsigned()) return info;
    info.valid = true;
    info.version = version->get<uint64_t>();
    const auto entries = doc.find("entries");
    if (entries == doc.end()) return info;
    if (entries->is_number_unsigned()) {
      info.entries.emplace_back("all", entries->get<uint64_t>());
    } else if (entries->is_object()) {
      for (const auto& [layer, count] : entries->items()) {
        if (IsLabelValue(layer) && count.is_number_unsigned())
          info.entries.emplace_back(layer, count.get<uint64_t>());
      }
    }
    return info;
  }

  void Refresh() {
    Env* env = Env::Default();
    auto names = env->ListDir(dir_);
    if (!names.ok()) {
      lists_.clear();
      return;
    }
    std::map<std::string, ListInfo> fresh;
    for (const std::string& name : *names) {
      if (fresh.size() >= kMaxMetricsLists) break;
      if (!IsValidListName(name)) continue;
      auto raw = env->ReadFile(JoinPath(JoinPath(dir_, name), "manifest.json"), kMaxManifestBytes);
      if (!raw.ok()) continue;  // missing or too large: no gauges
      auto it = lists_.find(name);
      if (it != lists_.end() && it->second.raw == *raw) {
        fresh.emplace(name, std::move(it->second));
      } else {
        fresh.emplace(name, Parse(std::move(raw).value()));
      }
    }
    lists_ = std::move(fresh);
  }

  const std::string dir_;
  std::mutex mutex_;  // guards lists_ (and serializes scrapes)
  std::map<std::string, ListInfo> lists_;
};

}  // namespace

// ---- Server -----------------------------------------------------------------------------------------------

class Server::Impl {
 public:
  Impl(const ServerOptions& options, std::string public_root, std::unique_ptr<FullHashStore> store,
       SslCtxPtr tls)
      : options_(options),
        clock_(options.clock ? options.clock : MonotonicSeconds),
        store_(std::move(store)),
        tls_(std::move(tls)),
        guard_(GuardOptions(options)),
        files_(public_root),
        gauges_(JoinPath(public_root, "v1/lists")),
        http_(tls_.get(), kMaxRequestHeadBytes + 2 * options.max_body_bytes,
              static_cast<size_t>(options.worker_threads)) {}

  ~Impl() { Stop(); }

  Status Listen() {
    // The connection loop (GuardedHttpServer) applies its own timeouts and keep-alive policy; cpp-httplib
    // gets the same values for whatever it still reads itself.
    http_.set_payload_max_length(options_.max_body_bytes);
    http_.set_read_timeout(kReadTimeoutSeconds);
    http_.set_write_timeout(kReadTimeoutSeconds);
    http_.set_keep_alive_timeout(kKeepAliveTimeoutSeconds);
    http_.set_keep_alive_max_count(kKeepAliveMaxRequests);
    http_.set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) { return Route(req, res); });
    http_.Post("/v1/verify", [this](const httplib::Request& req, httplib::Response& res,
                                    const httplib::ContentReader& reader) { VerifyPost(req, res, reader); });
    http_.set_error_handler(
        httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
          if (!res.body.empty() || res.has_header("Content-Length")) {
            return httplib::Server::HandlerResponse::Unhandled;  // the handler wrote its own error body
          }
          SetJsonError(res, res.status, ReasonFor(res.status));
          return httplib::Server::HandlerResponse::Handled;
        }));
    http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      SetJsonError(res, 500, "internal error");
    });
    http_.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      metrics_.CountRequest(EndpointOf(req), res.status);
      if (current_connection != nullptr) current_connection->status = res.status;
    });

    if (options_.port == 0) {
      port_ = http_.bind_to_any_port(options_.host);
      if (port_ <= 0) return Status::IoError("cannot bind " + options_.host + " (any port)");
    } else {
      if (!http_.bind_to_port(options_.host, options_.port)) {
        return Status::IoError("cannot bind " + options_.host + ":" + std::to_string(options_.port));
      }
      port_ = options_.port;
    }
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    // The socket already listens (connections queue in the backlog); wait until the accept loop runs, too.
    for (int i = 0; i < 5000 && !http_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Status::Ok();
  }

  void Stop() {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    http_.stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return port_; }
  bool tls() const { return tls_ != nullptr; }

 private:
  static RollingWindowOptions GuardOptions(const ServerOptions& options) {
    RollingWindowOptions g;
    g.threshold = options.throttle_threshold;
    g.signatures_per_second = options.throttle_clients_per_second;
    return g;
  }

  // Pre-routing: everything but POST /v1/verify is answered here, before cpp-httplib reads any body.
  httplib::Server::HandlerResponse Route(const httplib::Request& req, httplib::Response& res) {
    // Byte ranges: one range of a static file is fine; anything else is answered in full. cpp-httplib parsed
    // the Range header into req.ranges before this handler and applies it to whatever response is produced
    // (as a multipart body for several ranges), so clear it. The Request object is not const (cpp-httplib
    // hands a mutable request to its handlers as const&), so this is well-defined.
    const bool is_get = req.method == "GET" || req.method == "HEAD";
    const Endpoint endpoint = EndpointOf(req);
    if (!(is_get && endpoint == kEndpointStatic && req.ranges.size() == 1)) {
      const_cast<httplib::Request&>(req).ranges.clear();
    }
    if (req.method == "POST" && req.path == "/v1/verify") return httplib::Server::HandlerResponse::Unhandled;

    // Bodies are never read here: a request carrying one ends its connection.
    if (req.has_header("Transfer-Encoding") ||
        (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0")) {
      CloseAfterResponse(res);
    }
    if (!is_get) {
      res.set_header("Allow", endpoint == kEndpointVerify ? "GET, POST" : "GET, HEAD");
      SetJsonError(res, 405, "method not allowed");
      return httplib::Server::HandlerResponse::Handled;
    }
    switch (endpoint) {
      case kEndpointHealthz:
        res.set_header("Cache-Control", "no-store");
        res.set_content("ok", "text/plain; charset=utf-8");
        break;
      case kEndpointMetrics:
        res.set_header("Cache-Control", "no-store");
        res.set_content(MetricsText(), "text/plain; version=0.0.4; charset=utf-8");
        break;
      case kEndpointVerify:
        VerifyGet(req, res);
        break;
      default:
        files_.Serve(req, res);
        break;
    }
    return httplib::Server::HandlerResponse::Handled;
  }

  // The abuse guard, for both verify forms. True (and a 429 set) when the client is throttled.
  bool Throttled(const httplib::Request& req, httplib::Response& res) {
    std::string signature = req.remote_addr;
    signature += '\n';
    const std::string user_agent = req.get_header_value("User-Agent");
    signature.append(user_agent, 0, std::min(user_agent.size(), kMaxSignatureUserAgentBytes));
    const RollingWindowDecision d = guard_.Check(signature, clock_());
    if (!d.throttled) return false;
    metrics_.throttled.fetch_add(1, std::memory_order_relaxed);
    res.set_header("Retry-After", std::to_string(d.retry_after_seconds));
    SetJsonError(res, 429, "too many requests");
    return true;
  }

  void VerifyGet(const httplib::Request& req, httplib::Response& res) {
    const auto start = std::chrono::steady_clock::now();
    if (!Throttled(req, res)) {
      if (req.get_param_value_count("prefixes") != 1) {
        SetJsonError(res, 400, "expected one \"prefixes\" parameter");
      } else {
        Answer(ParseVerifyPrefixList(req.get_param_value("prefixes")), res);
      }
    }
    metrics_.ObserveVerify(std::chrono::steady_clock::now() - start);
  }

  void VerifyPost(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
    const auto start = std::chrono::steady_clock::now();
    if (Throttled(req, res)) {
      CloseAfterResponse(res);  // the body stays unread
    } else {
      std::string body;
      bool too_large = false;
      const bool read = reader([&](const char* data, size_t size) {
        if (size > options_.max_body_bytes - body.size()) {
          too_large = true;
          return false;
        }
        body.append(data, size);
        return true;
      });
      if (too_large || res.status == 413) {
        CloseAfterResponse(res);
        SetJsonError(res, 413, "request body too large");
      } else if (!read) {
        CloseAfterResponse(res);
        SetJsonError(res, res.status >= 400 ? res.status : 400, "cannot read the request body");
      } else {
        Answer(ParseVerifyRequest(body), res);
      }
    }
    metrics_.ObserveVerify(std::chrono::steady_clock::now() - start);
  }

  void Answer(const Result<std::vector<uint32_t>>& prefixes, httplib::Response& res) {
    if (!prefixes.ok()) {
      const bool too_many = prefixes.status().code() == StatusCode::kResourceExhausted;
      SetJsonError(res, too_many ? 413 : 400, prefixes.status().message());
      return;
    }
    auto records = store_->LookupPrefixes(*prefixes);
    if (!records.ok()) {
      const bool busy = records.status().code() == StatusCode::kUnavailable;
      if (busy) res.set_header("Retry-After", "1");
      SetJsonError(res, busy ? 503 : 500, busy ? "store busy" : "store error");
      return;
    }
    metrics_.prefixes.fetch_add(prefixes->size(), std::memory_order_relaxed);
    metrics_.matches.fetch_add(records->size(), std::memory_order_relaxed);
    const std::string cache_seconds = std::to_string(options_.positive_cache_seconds);
    std::string out;
    out.reserve(64 + records->size() * 160);
    out += "{\"matches\":[";
    for (size_t i = 0; i < records->size(); ++i) {
      const FullHashRecord& r = (*records)[i];
      if (i > 0) out += ',';
      // list and threat are [a-z0-9_-] (checked by the store), so they need no escaping.
      out += "{\"sha256\":\"" + ToHex(r.sha256) + "\",\"list\":\"" + r.list + "\",\"layer\":\"" +
             LayerKindName(r.layer) + "\",\"threat\":\"" + r.threat +
             "\",\"cache_seconds\":" + cache_seconds + "}";
    }
    out += "],\"negative_cache_seconds\":" + std::to_string(options_.negative_cache_seconds) + "}";
    res.status = 200;
    res.set_header("Cache-Control", "no-store");
    res.set_content(std::move(out), "application/json");
  }

  std::string MetricsText() {
    std::string out;
    out.reserve(4096);
    out += "# HELP urlguard_server_requests_total HTTP requests answered, by endpoint and status.\n";
    out += "# TYPE urlguard_server_requests_total counter\n";
    for (int e = 0; e < kEndpointCount; ++e) {
      for (int s = kMinStatus; s <= kMaxStatus; ++s) {
        const uint64_t n = metrics_.requests[e][s - kMinStatus].load(std::memory_order_relaxed);
        if (n == 0) continue;
        out += "urlguard_server_requests_total{endpoint=\"" + std::string(kEndpointNames[e]) +
               "\",status=\"" + std::to_string(s) + "\"} " + std::to_string(n) + "\n";
      }
    }
    out +=
        "# HELP urlguard_server_verify_seconds Time to answer a verify request (guard, parse, lookup, "
        "encode).\n";
    out += "# TYPE urlguard_server_verify_seconds histogram\n";
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kLatencyBounds.size(); ++i) {
      cumulative += metrics_.verify_buckets[i].load(std::memory_order_relaxed);
      out += "urlguard_server_verify_seconds_bucket{le=\"" + std::string(kLatencyLabels[i]) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    const uint64_t count = metrics_.verify_count.load(std::memory_order_relaxed);
    out += "urlguard_server_verify_seconds_bucket{le=\"+Inf\"} " + std::to_string(count) + "\n";
    char sum[64];
    std::snprintf(sum, sizeof(sum), "%.9f",
                  static_cast<double>(metrics_.verify_nanos.load(std::memory_order_relaxed)) / 1e9);
    out += "urlguard_server_verify_seconds_sum " + std::string(sum) + "\n";
    out += "urlguard_server_verify_seconds_count " + std::to_string(count) + "\n";
    auto counter = [&](const char* name, const char* help, uint64_t value) {
      out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
             std::to_string(value) + "\n";
    };
    counter("urlguard_server_prefixes_total", "Prefixes looked up by verify requests.",
            metrics_.prefixes.load(std::memory_order_relaxed));
    counter("urlguard_server_matches_total", "Full hashes returned by verify requests.",
            metrics_.matches.load(std::memory_order_relaxed));
    counter("urlguard_server_throttled_total", "Verify requests refused with 429 by the abuse guard.",
            metrics_.throttled.load(std::memory_order_relaxed));
    counter("urlguard_server_throttle_unrecorded_total",
            "Verify requests the abuse guard could not record (its second was over capacity).",
            guard_.unrecorded());
    gauges_.Append(&out);
    return out;
  }

  const ServerOptions options_;
  const std::function<int64_t()> clock_;
  const std::unique_ptr<FullHashStore> store_;
  const SslCtxPtr tls_;
  RollingWindowGuard guard_;  // thread-safe
  StaticFiles files_;         // thread-safe
  ListGauges gauges_;         // thread-safe
  Metrics metrics_;           // atomics
  GuardedHttpServer http_;
  std::thread thread_;
  int port_ = 0;
  std::mutex stop_mutex_;  // guards stopped_ and the join
  bool stopped_ = false;
};

namespace {

Status ValidateOptions(const ServerOptions& o) {
  if (o.repo_dir.empty()) return Status::InvalidArgument("server: repo_dir is empty");
  if (!IsLoopbackAddress(o.host)) {
    return Status::InvalidArgument("server: refusing to bind '" + o.host +
                                   "': only loopback addresses (127.0.0.0/8, ::1) are allowed");
  }
  if (o.port < 0 || o.port > 65535) return Status::InvalidArgument("server: port must be 0..65535");
  if (o.tls_cert_file.empty() != o.tls_key_file.empty()) {
    return Status::InvalidArgument("server: HTTPS needs both a certificate and a key file");
  }
  if (o.throttle_threshold < 0 || o.throttle_threshold >= kRollingWindowSeconds) {
    return Status::InvalidArgument("server: throttle threshold must be 0..59");
  }
  if (o.negative_cache_seconds < 0 || o.negative_cache_seconds > kMaxCacheSeconds ||
      o.positive_cache_seconds < 0 || o.positive_cache_seconds > kMaxCacheSeconds) {
    return Status::InvalidArgument("server: cache durations must be 0.." + std::to_string(kMaxCacheSeconds));
  }
  if (o.max_body_bytes < kMinVerifyBodyBytes || o.max_body_bytes > kMaxVerifyBodyBytes) {
    return Status::InvalidArgument("server: max_body_bytes must be " + std::to_string(kMinVerifyBodyBytes) +
                                   ".." + std::to_string(kMaxVerifyBodyBytes));
  }
  if (o.worker_threads < 1 || o.worker_threads > kMaxWorkerThreads) {
    return Status::InvalidArgument("server: worker_threads must be 1.." + std::to_string(kMaxWorkerThreads));
  }
  if (o.throttle_clients_per_second < 1 ||
      o.throttle_clients_per_second > kMaxRollingWindowSignaturesPerSecond) {
    return Status::InvalidArgument("server: throttle_clients_per_second out of range");
  }
  return Status::Ok();
}

}  // namespace

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Stop(); }
int Server::port() const { return impl_->port(); }
bool Server::tls() const { return impl_->tls(); }
void Server::Stop() { impl_->Stop(); }

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  URLGUARD_RETURN_IF_ERROR(ValidateOptions(options));
  const std::string public_dir = JoinPath(options.repo_dir, "public");
  char resolved[PATH_MAX];
  struct stat st;
  if (::realpath(public_dir.c_str(), resolved) == nullptr || ::stat(resolved, &st) != 0 ||
      !S_ISDIR(st.st_mode)) {
    return Status::NotFound("server: " + public_dir + " is not a directory");
  }
  const std::string store_path = JoinPath(JoinPath(options.repo_dir, "private"), "hashes.sqlite");
  auto store = FullHashStore::Open(store_path, /*read_only=*/true,
                                   std::min(options.worker_threads, kMaxHashStoreConnections));
  if (!store.ok()) return store.status().WithContext("server");
  SslCtxPtr tls;
  if (!options.tls_cert_file.empty()) {
    auto ctx = MakeTlsContext(options.tls_cert_file, options.tls_key_file);
    if (!ctx.ok()) return ctx.status().WithContext("server");
    tls = std::move(ctx).value();
  }
  auto impl =
      std::make_unique<Impl>(options, std::string(resolved), std::move(store).value(), std::move(tls));
  URLGUARD_RETURN_IF_ERROR(impl->Listen());
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

}  // namespace urlguard
