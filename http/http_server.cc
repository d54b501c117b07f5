// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Implementation notes.
// - Per request, MHD calls UriLog (raw target; its return value becomes the request's context), then Access
//   once with the head complete, once per body piece, and once more when the body is complete; Completed when
//   the request ends (answered or not). Per connection, NotifyConnection at start and close.
// - Per connection, MHD's socket context holds a ConnectionState (created at NotifyConnection(STARTED), deleted
//   at CLOSED): the request state its requests reuse (no allocation per request in steady state), the peer
//   address text, and its deadline (ConnectionTimes, atomics the connection's own callbacks set without a lock).
// - Deadlines: conns_ maps each open connection to its socket and its ConnectionTimes; the sweeper thread
//   shutdown(2)s the socket of a connection past its deadline (MHD then sees end of stream and closes the
//   connection). MHD closes the socket only after NotifyConnection(CLOSED), which erases the entry under the
//   same mutex before the ConnectionTimes are freed, so the sweeper never touches a closed (or reused)
//   descriptor or freed times.
// - Per-peer caps: the same map counts each peer's connections (per_peer_); NotifyConnection(STARTED) refuses
//   or evicts there, with shutdown(2) as the sweeper does.
// - Lingering close: Queue(early) dup()s the connection's socket into its entry; NotifyConnection(CLOSED)
//   hands that duplicate to the lingerer thread (its own epoll set), which shuts the sending side and reads
//   until the client closes or a bound is hit. MHD's close(2) of its descriptor then releases nothing: the
//   socket lives on in the duplicate, so no reset is sent while the client still sends. The lingerer keys its
//   epoll entries by a serial number, never by descriptor, so a stale event can never reach a reused one.
#include "http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <chrono>
#include <cstring>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/thread_annotations.h"
#include "http/framing.h"

namespace urlguard {

namespace {

using Clock = std::chrono::steady_clock;

// One request's state. Normally a member of its connection's ConnectionState and reused by the connection's
// next request (Reset), so the strings and vectors keep their capacity and a request allocates nothing here.
struct RequestState {
  std::string raw_target;
  const char* uri = nullptr;  // MHD's target string in its read buffer, as the URI log callback saw it
  bool head_done = false;
  bool too_large = false;
  bool owned_by_connection = false;  // false: a stand-alone state that Completed deletes
  size_t discarded = 0;
  size_t header_count = 0;  // request.headers[0, header_count) are this request's (CollectHeader)
  HttpRequest request;
  std::vector<std::pair<std::string_view, std::string_view>> framing_views;  // CheckFraming's input
  ParsedHead parsed_head;                                                     // the NUL check's input

  // Ready for a new request whose raw target is `target`. Keeps every buffer's capacity.
  void Reset(const char* target) {
    raw_target.assign(target == nullptr ? "" : target);
    uri = target;
    head_done = too_large = false;
    discarded = 0;
    header_count = 0;
    request.method.clear();
    request.target.clear();
    request.path.clear();
    request.query.clear();
    request.body.clear();
    request.tls = false;
  }
};

// A connection's deadline and phase. Written by the connection's event thread on every request without a lock
// (atomics: the per-request path takes no shared mutex), read by the sweeper and by AdmitLocked under
// conns_mutex_, and set by them when they cut the connection.
struct ConnectionTimes {
  std::atomic<int64_t> deadline{INT64_MAX};  // Clock ticks (time_since_epoch().count()); INT64_MAX: none
  std::atomic<bool> waiting_for_head{true};  // no request head in progress to completion: evictable

  void SetDeadline(Clock::time_point t) {
    deadline.store(t == Clock::time_point::max() ? INT64_MAX : t.time_since_epoch().count(),
                   std::memory_order_relaxed);
  }
  bool Expired(Clock::time_point now) const {
    return deadline.load(std::memory_order_relaxed) <= now.time_since_epoch().count();
  }
};

// Per connection (MHD's socket context): its request state, its deadline, and its peer address text, looked up
// once. Deleted at NotifyConnection(CLOSED), after its conns_ entry (which points to `times`) is erased.
struct ConnectionState {
  ConnectionTimes times;
  RequestState request_state;
  std::string peer_address;
  bool peer_address_known = false;
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

// Fills request.headers in place: an element left by the connection's previous request is overwritten
// (its strings keep their capacity), so a kept-alive client sending the same headers allocates nothing.
MHD_Result CollectHeader(void* cls, MHD_ValueKind, const char* key, size_t key_size, const char* value,
                         size_t value_size) {
  auto* state = static_cast<RequestState*>(cls);
  HttpHeaders& headers = state->request.headers;
  if (state->header_count == headers.size()) headers.emplace_back();
  auto& [name, text] = headers[state->header_count++];
  name.assign(key, key_size);
  if (value == nullptr) {
    text.clear();
  } else {
    text.assign(value, value_size);
  }
  return MHD_YES;
}

// The per-peer cap's key: the TCP client address, or the uid of a Unix-domain peer.
std::string PeerKeyOf(MHD_Connection* connection, int fd) {
  const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const sockaddr* addr = info == nullptr ? nullptr : info->client_addr;
  if (addr != nullptr && addr->sa_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in*>(addr)->sin_addr;
    return "4:" + std::string(reinterpret_cast<const char*>(&a), sizeof(a));
  }
  if (addr != nullptr && addr->sa_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
    return "6:" + std::string(reinterpret_cast<const char*>(&a), sizeof(a));
  }
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return "u:?";
  return "u:" + std::to_string(credentials.uid);
}

// Collects the head's header strings as offsets from the head's first byte (http/framing.h).
struct HeadSpanCollector {
  const char* base;
  std::vector<std::pair<HeadSpan, HeadSpan>>* headers;
};

HeadSpan SpanOf(const char* base, const char* p, size_t length) {
  // A string before the head gets an offset past any head (pointer difference as unsigned), so it fails.
  return {static_cast<size_t>(reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(base)), length};
}

MHD_Result CollectHeaderSpan(void* cls, MHD_ValueKind, const char* key, size_t key_size, const char* value,
                             size_t value_size) {
  auto* c = static_cast<HeadSpanCollector*>(cls);
  c->headers->emplace_back(SpanOf(c->base, key, key_size),
                           value == nullptr ? HeadSpan{SIZE_MAX, 0} : SpanOf(c->base, value, value_size));
  return MHD_YES;
}

// Resolves a group name or number. nullopt when there is no such group.
std::optional<gid_t> ResolveGroup(const std::string& group) {
  if (!group.empty() && group.find_first_not_of("0123456789") == std::string::npos && group.size() < 10) {
    return static_cast<gid_t>(std::stoul(group));
  }
  std::vector<char> buffer(16384);
  struct group entry{};
  struct group* found = nullptr;
  if (::getgrnam_r(group.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  return found->gr_gid;
}

void FreeString(void* cls) { RecycleResponseBuffer(static_cast<std::string*>(cls)); }
void FreeMapping(void* cls) { delete static_cast<std::shared_ptr<const MappedFile>*>(cls); }

}  // namespace

class HttpServer::Impl {
 public:
  Impl(const HttpServerOptions& options, HttpHandler handler, HttpHeadHandler head_handler)
      : options_(options), handler_(std::move(handler)), head_handler_(std::move(head_handler)) {}

  ~Impl() { Stop(); }

  // Creates the Unix-domain listening socket (HttpServerOptions::unix_path): 0660, the configured group,
  // listening only once both are set.
  Result<int> ListenUnix() {
    const std::string& path = options_.unix_path;
    std::optional<gid_t> gid;
    if (!options_.unix_group.empty()) {
      gid = ResolveGroup(options_.unix_group);
      if (!gid) return Status::InvalidArgument("http: no such group: " + options_.unix_group);
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());  // ValidateOptions: it fits, with its NUL
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) return Status::IoError(path + " exists and is not a socket");
      // A socket file: replace it only when nobody accepts on it (left behind by a server that died).
      const int probe = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (probe < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
      const bool live = ::connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
      const int e = errno;
      ::close(probe);
      if (live) return Status::IoError("another server is listening on " + path);
      if (e != ECONNREFUSED) return Status::IoError("cannot probe " + path + ": " + std::strerror(e));
      if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        return Status::IoError("cannot remove the stale socket " + path + ": " + std::strerror(errno));
      }
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status::IoError(std::string("socket: ") + std::strerror(errno));
    // Nobody can connect before listen(2), so the mode and group are right before the first client.
    std::string failed;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      failed = "cannot bind " + path;
    } else if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) {
      failed = "cannot stat " + path;
    } else if (gid && ::lchown(path.c_str(), static_cast<uid_t>(-1), *gid) != 0) {
      failed = "cannot give " + path + " the group " + options_.unix_group;
    } else if (::chmod(path.c_str(), 0660) != 0) {
      failed = "cannot chmod 0660 " + path;
    } else if (::listen(fd, options_.listen_backlog) != 0) {
      failed = "cannot listen on " + path;
    }
    if (!failed.empty()) {
      const int e = errno;
      ::close(fd);
      ::unlink(path.c_str());
      return Status::IoError(failed + ": " + std::strerror(e));
    }
    unix_dev_ = st.st_dev;
    unix_ino_ = st.st_ino;
    return fd;
  }

  Status Listen() {
    linger_epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (linger_epoll_ < 0) return Status::IoError(std::string("epoll_create1: ") + std::strerror(errno));
    if (!options_.unix_path.empty()) {
      Result<int> fd = ListenUnix();
      if (!fd.ok()) return fd.status();
      return StartMhd(*fd, "unix:" + options_.unix_path);
    }
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
    return StartMhd(fd, where);
  }

  // Hands the listening socket `fd` to MHD (closing it on failure) and starts the helper threads.
  Status StartMhd(int fd, const std::string& where) {

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
        MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(options_.idle_timeout_seconds),     //
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, options_.max_head_bytes,                             //
        MHD_OPTION_URI_LOG_CALLBACK, &Impl::UriLog, this,                                        //
        MHD_OPTION_NOTIFY_COMPLETED, &Impl::Completed, this,                                     //
        MHD_OPTION_NOTIFY_CONNECTION, &Impl::NotifyConnection, this,                             //
        MHD_OPTION_ARRAY, tls() ? tls_options : no_options,                                      //
        MHD_OPTION_END);
    if (daemon_ == nullptr) {
      ::close(fd);
      RemoveUnixSocket();
      return Status::IoError("cannot start the HTTP server on " + where +
                             (tls() ? " (TLS certificate or key rejected?)" : ""));
    }
    sweeper_ = std::thread([this] { Sweep(); });
    lingerer_ = std::thread([this] { Linger(); });
    return Status::Ok();
  }

  // Removes unix_path when it is still the socket this server bound.
  void RemoveUnixSocket() {
    if (options_.unix_path.empty() || unix_ino_ == 0) return;
    struct stat st {};
    if (::lstat(options_.unix_path.c_str(), &st) == 0 && st.st_dev == unix_dev_ && st.st_ino == unix_ino_) {
      ::unlink(options_.unix_path.c_str());
    }
    unix_ino_ = 0;
  }

  void Stop() EXCLUDES(stop_mutex_, conns_mutex_, linger_mutex_) {
    MutexLock lock(&stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
    daemon_ = nullptr;
    {
      MutexLock l(&conns_mutex_);
      stopping_ = true;
    }
    sweep_wake_.SignalAll();
    if (sweeper_.joinable()) sweeper_.join();
    linger_stop_.store(true);
    if (lingerer_.joinable()) lingerer_.join();
    {
      MutexLock l(&linger_mutex_);
      for (const auto& [id, lingering] : lingering_) ::close(lingering.fd);
      lingering_.clear();
    }
    if (linger_epoll_ >= 0) ::close(linger_epoll_);
    linger_epoll_ = -1;
    RemoveUnixSocket();
  }

  int port() const { return port_; }
  bool tls() const { return !options_.tls_cert_pem.empty(); }
  uint64_t deadline_cuts() const { return deadline_cuts_.load(std::memory_order_seq_cst); }
  uint64_t peer_limit_cuts() const { return peer_limit_cuts_.load(std::memory_order_relaxed); }
  uint64_t lingered() const { return lingered_.load(std::memory_order_relaxed); }

 private:
  struct ConnectionEntry {
    int fd = -1;
    ConnectionTimes* times = nullptr;  // the connection's deadline and phase (in its ConnectionState)
    std::string peer;               // the per-peer cap's key (PeerKeyOf)
    uint64_t serial = 0;            // arrival order: the oldest waiting connection is evicted first
    bool counted = false;           // counts toward per_peer_[peer]
    int linger_fd = -1;             // our duplicate of fd after an early answer (lingering close)
  };

  struct Lingering {
    int fd = -1;
    Clock::time_point until;
    size_t discarded = 0;
  };

  enum class Phase { kUnchanged, kWaitingForHead, kInRequest };

  // From the connection's own callbacks only (its ConnectionState is alive): no lock (ConnectionTimes).
  static void SetDeadline(MHD_Connection* connection, Clock::time_point deadline, Phase phase = Phase::kUnchanged) {
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    if (info == nullptr || info->socket_context == nullptr) return;
    ConnectionTimes& times = static_cast<ConnectionState*>(info->socket_context)->times;
    times.SetDeadline(deadline);
    if (phase != Phase::kUnchanged) {
      times.waiting_for_head.store(phase == Phase::kWaitingForHead, std::memory_order_relaxed);
    }
  }

  // Cuts a connection's socket (MHD then sees the end of the stream and closes it). `entry` is in conns_.
  void Cut(ConnectionEntry& entry) REQUIRES(conns_mutex_) {
    ::shutdown(entry.fd, SHUT_RDWR);
    entry.times->SetDeadline(Clock::time_point::max());
    entry.times->waiting_for_head.store(false, std::memory_order_relaxed);
  }

  // A new connection `entry` from `entry.peer`: counts it, or when the peer is at its cap evicts the peer's
  // oldest connection waiting for a head (evict_waiting_connections) or else refuses the new one.
  void AdmitLocked(ConnectionEntry& entry) REQUIRES(conns_mutex_) {
    unsigned& count = per_peer_[entry.peer];
    if (count >= options_.max_connections_per_address) {
      ConnectionEntry* victim = nullptr;
      if (options_.evict_waiting_connections) {
        for (auto& [other_connection, other] : conns_) {
          if (&other == &entry || !other.counted || !other.times->waiting_for_head.load(std::memory_order_relaxed) ||
              other.peer != entry.peer) {
            continue;
          }
          if (victim == nullptr || other.serial < victim->serial) victim = &other;
        }
      }
      peer_limit_cuts_.fetch_add(1, std::memory_order_relaxed);
      if (victim == nullptr) {
        Cut(entry);  // not counted: its peer is at the cap, so per_peer_ keeps the peer's entry
        return;
      }
      Cut(*victim);
      victim->counted = false;
      --count;
    }
    ++count;
    entry.counted = true;
  }

  // Stops counting a closing connection toward its peer.
  void ReleaseLocked(ConnectionEntry& entry) REQUIRES(conns_mutex_) {
    if (!entry.counted) return;
    entry.counted = false;
    auto it = per_peer_.find(entry.peer);
    if (it != per_peer_.end() && --it->second == 0) per_peer_.erase(it);
  }

  // Takes over `fd` (a duplicate of a connection's socket whose answer MHD has sent) for a lingering close.
  void StartLingering(int fd) EXCLUDES(linger_mutex_) {
    ::shutdown(fd, SHUT_WR);  // FIN after the answer: the client sees the answer end
    linger_mutex_.Lock();     // not a MutexLock: the refusals close `fd` after unlocking
    if (linger_stop_.load() || lingering_.size() >= kMaxLingeringConnections) {
      linger_mutex_.Unlock();
      ::close(fd);
      return;
    }
    const uint64_t id = next_linger_id_++;
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP;
    event.data.u64 = id;
    if (::epoll_ctl(linger_epoll_, EPOLL_CTL_ADD, fd, &event) != 0) {
      linger_mutex_.Unlock();
      ::close(fd);
      return;
    }
    lingering_[id] = {fd, Clock::now() + std::chrono::seconds(kLingerSeconds), 0};
    linger_mutex_.Unlock();
  }

  // Ends lingering connection `id` (closes its socket).
  void EndLingeringLocked(uint64_t id) REQUIRES(linger_mutex_) {
    auto it = lingering_.find(id);
    if (it == lingering_.end()) return;
    ::epoll_ctl(linger_epoll_, EPOLL_CTL_DEL, it->second.fd, nullptr);
    ::close(it->second.fd);
    lingering_.erase(it);
    lingered_.fetch_add(1, std::memory_order_relaxed);
  }

  // The lingerer thread: reads and discards what lingering connections still send; ends each at the end of
  // its stream, an error, kLingerMaxBytes or kLingerSeconds.
  void Linger() EXCLUDES(linger_mutex_) {
    std::vector<char> scratch(64 * 1024);
    epoll_event events[64];
    while (!linger_stop_.load()) {
      const int n = ::epoll_wait(linger_epoll_, events, 64, kDeadlineSweepMillis);
      MutexLock lock(&linger_mutex_);
      for (int i = 0; i < n; ++i) {
        const uint64_t id = events[i].data.u64;
        auto it = lingering_.find(id);
        if (it == lingering_.end()) continue;  // ended since
        bool end = false;
        while (true) {
          const ssize_t got = ::recv(it->second.fd, scratch.data(), scratch.size(), MSG_DONTWAIT);
          if (got > 0) {
            it->second.discarded += static_cast<size_t>(got);
            if (it->second.discarded <= kLingerMaxBytes) continue;
          } else if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            break;
          }
          end = true;  // end of stream, error, or the byte bound
          break;
        }
        if (end) EndLingeringLocked(id);
      }
      const auto now = Clock::now();
      std::vector<uint64_t> expired;
      for (const auto& [id, lingering] : lingering_) {
        if (lingering.until <= now) expired.push_back(id);
      }
      for (uint64_t id : expired) EndLingeringLocked(id);
    }
  }

  void Sweep() EXCLUDES(conns_mutex_) {
    MutexLock lock(&conns_mutex_);
    while (!stopping_) {
      sweep_wake_.WaitFor(&conns_mutex_, std::chrono::milliseconds(kDeadlineSweepMillis));
      const auto now = Clock::now();
      for (auto& [connection, entry] : conns_) {
        if (!entry.times->Expired(now)) continue;
        // Counted before the cut, so that whoever sees the connection end also sees it counted.
        deadline_cuts_.fetch_add(1, std::memory_order_seq_cst);
        ::shutdown(entry.fd, SHUT_RDWR);  // MHD sees the end of the stream and closes the connection
        entry.times->SetDeadline(Clock::time_point::max());
      }
    }
  }

  static void NotifyConnection(void* cls, MHD_Connection* connection, void** socket_context,
                               MHD_ConnectionNotificationCode code) {
    auto* self = static_cast<Impl*>(cls);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      auto* conn = new ConnectionState;
      conn->request_state.owned_by_connection = true;
      *socket_context = conn;
      const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
      if (info == nullptr) return;
      ConnectionEntry entry;
      entry.fd = info->connect_fd;
      entry.times = &conn->times;
      conn->times.SetDeadline(Clock::now() + std::chrono::seconds(self->options_.head_deadline_seconds));
      entry.peer = PeerKeyOf(connection, entry.fd);
      MutexLock lock(&self->conns_mutex_);
      entry.serial = self->next_serial_++;
      ConnectionEntry& stored = self->conns_[connection] = std::move(entry);
      self->AdmitLocked(stored);
    } else {
      int linger_fd = -1;
      {
        MutexLock lock(&self->conns_mutex_);
        auto it = self->conns_.find(connection);
        if (it != self->conns_.end()) {
          self->ReleaseLocked(it->second);
          linger_fd = it->second.linger_fd;
          self->conns_.erase(it);
        }
      }
      // Only now that no entry points to its `times`; its last request has completed (MHD calls the completion
      // callback before this notification).
      delete static_cast<ConnectionState*>(*socket_context);
      *socket_context = nullptr;
      if (linger_fd >= 0) self->StartLingering(linger_fd);
    }
  }

  static void* UriLog(void*, const char* uri, MHD_Connection* connection) {
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    RequestState* state = nullptr;
    if (info != nullptr && info->socket_context != nullptr) {
      state = &static_cast<ConnectionState*>(info->socket_context)->request_state;
    } else {
      state = new RequestState;  // no connection state (not expected): a stand-alone one
    }
    state->Reset(uri);
    return state;
  }

  static void Completed(void* cls, MHD_Connection* connection, void** con_cls, MHD_RequestTerminationCode) {
    auto* self = static_cast<Impl*>(cls);
    auto* state = static_cast<RequestState*>(*con_cls);
    if (state != nullptr && !state->owned_by_connection) delete state;  // else the connection's, reused
    *con_cls = nullptr;
    // The next request on a kept-alive connection gets a fresh head deadline.
    self->SetDeadline(connection, Clock::now() + std::chrono::seconds(self->options_.head_deadline_seconds),
                      Phase::kWaitingForHead);
  }

  // Queues `response`. After it, the connection has no deadline (sending is bounded by the idle timeout),
  // except after an answer sent before the body was read (`early`): MHD stops reading such a connection,
  // and it is cut kEarlyAnswerLingerSeconds later whatever the client does.
  MHD_Result Queue(MHD_Connection* connection, HttpResponse response, bool early = false) {
    SetDeadline(connection, early ? Clock::now() + std::chrono::seconds(kEarlyAnswerLingerSeconds)
                                  : Clock::time_point::max());
    if (early) KeepForLingering(connection);
    MHD_Response* r;
    if (response.file != nullptr) {
      const uint8_t* data = response.file->data() + response.file_offset;
      auto* holder = new std::shared_ptr<const MappedFile>(std::move(response.file));
      r = MHD_create_response_from_buffer_with_free_callback_cls(
          response.file_length, const_cast<uint8_t*>(data), &FreeMapping, holder);
      if (r == nullptr) delete holder;
    } else {
      // A pooled string object takes the body's buffer (http/request.h TakeResponseBuffer): no allocation in
      // steady state; FreeString hands it back to the pool of the thread that sent it.
      std::string* body = AcquireResponseBuffer();
      body->swap(response.body);
      r = MHD_create_response_from_buffer_with_free_callback_cls(body->size(), body->data(), &FreeString, body);
      if (r == nullptr) RecycleResponseBuffer(body);
    }
    if (r == nullptr) return MHD_NO;
    for (size_t i = 0; i < response.static_header_count; ++i) {
      MHD_add_response_header(r, response.static_headers[i].first, response.static_headers[i].second);
    }
    for (const auto& [name, value] : response.headers) MHD_add_response_header(r, name.c_str(), value.c_str());
    if (response.close) MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    const MHD_Result result = MHD_queue_response(connection, static_cast<unsigned>(response.status), r);
    MHD_destroy_response(r);
    return result;
  }

  // Keeps a duplicate of the connection's socket for a lingering close (see the notes at the top).
  void KeepForLingering(MHD_Connection* connection) EXCLUDES(conns_mutex_) {
    MutexLock lock(&conns_mutex_);
    auto it = conns_.find(connection);
    if (it == conns_.end() || it->second.linger_fd >= 0) return;
    it->second.linger_fd = ::fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);  // -1: no lingering, as before
  }

  // True when no byte of the head hides behind a NUL (http/framing.h HeadBytesAreAccountedFor). `method` and
  // `version` are MHD's strings for this request; the head starts at `method`.
  bool HeadIsFreeOfNuls(MHD_Connection* connection, const char* method, const char* version,
                        RequestState& state) const {
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (info == nullptr || method == nullptr || version == nullptr || state.uri == nullptr) return false;
    const size_t head_size = info->header_size;
    if (head_size > options_.max_head_bytes) return false;  // not MHD's read buffer as we know it
    ParsedHead& parsed = state.parsed_head;  // reused: its vector keeps its capacity
    parsed.headers.clear();
    parsed.method = SpanOf(method, method, std::strlen(method));
    parsed.target = SpanOf(method, state.uri, state.raw_target.size());
    parsed.version = SpanOf(method, version, std::strlen(version));
    HeadSpanCollector collector{method, &parsed.headers};
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, &CollectHeaderSpan, &collector);
    return HeadBytesAreAccountedFor(std::string_view(method, head_size), parsed);
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
  bool AcceptHead(MHD_Connection* connection, const char* method, const char* version, RequestState* state,
                  MHD_Result* result) {
    SetDeadline(connection, Clock::now() + std::chrono::seconds(options_.body_deadline_seconds), Phase::kInRequest);
    if (!HeadIsFreeOfNuls(connection, method, version, *state)) {
      *result = Refuse(connection, 400, "NUL byte or folded line in the request head");
      return false;
    }
    HttpRequest& req = state->request;
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, &CollectHeader, state);
    req.headers.resize(state->header_count);  // drops the previous request's extra headers
    std::vector<std::pair<std::string_view, std::string_view>>& views = state->framing_views;
    views.clear();
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
    req.method.assign(method);
    req.target.assign(state->raw_target);
    const size_t question = req.target.find('?');
    req.path = PercentDecode(std::string_view(req.target).substr(0, question), /*plus_is_space=*/false);
    if (question != std::string::npos) req.query.assign(req.target, question + 1);
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    auto* conn = info == nullptr ? nullptr : static_cast<ConnectionState*>(info->socket_context);
    if (conn == nullptr) {
      req.peer_address = PeerAddressOf(connection);
    } else {
      if (!conn->peer_address_known) {  // the peer of a connection never changes
        conn->peer_address = PeerAddressOf(connection);
        conn->peer_address_known = true;
      }
      req.peer_address.assign(conn->peer_address);
    }
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

  static MHD_Result Access(void* cls, MHD_Connection* connection, const char*, const char* method,
                           const char* version, const char* upload_data, size_t* upload_data_size, void** con_cls) {
    auto* self = static_cast<Impl*>(cls);
    auto* state = static_cast<RequestState*>(*con_cls);
    if (state == nullptr) return MHD_NO;  // UriLog always runs first
    if (!state->head_done) {
      state->head_done = true;
      MHD_Result result = MHD_YES;
      if (!self->AcceptHead(connection, method, version, state, &result)) return result;
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
  dev_t unix_dev_ = 0;  // the bound Unix socket's file (removed by Stop() only while it is still ours)
  ino_t unix_ino_ = 0;
  std::thread sweeper_;
  std::atomic<uint64_t> deadline_cuts_{0};
  std::atomic<uint64_t> peer_limit_cuts_{0};
  std::atomic<uint64_t> lingered_{0};

  Mutex conns_mutex_;
  CondVar sweep_wake_;  // wakes the sweeper to stop
  std::unordered_map<MHD_Connection*, ConnectionEntry> conns_ GUARDED_BY(conns_mutex_);
  // Counted connections per peer key.
  std::unordered_map<std::string, unsigned> per_peer_ GUARDED_BY(conns_mutex_);
  uint64_t next_serial_ GUARDED_BY(conns_mutex_) = 0;
  bool stopping_ GUARDED_BY(conns_mutex_) = false;

  std::thread lingerer_;
  int linger_epoll_ = -1;
  std::atomic<bool> linger_stop_{false};
  Mutex linger_mutex_;
  std::unordered_map<uint64_t, Lingering> lingering_ GUARDED_BY(linger_mutex_);
  uint64_t next_linger_id_ GUARDED_BY(linger_mutex_) = 0;

  Mutex stop_mutex_;  // also serializes the teardown (Stop)
  bool stopped_ GUARDED_BY(stop_mutex_) = false;
};

namespace {

Status ValidateOptions(const HttpServerOptions& o) {
  if (!o.unix_path.empty()) {
    if (o.unix_path[0] != '/' || o.unix_path.size() > kMaxUnixSocketPathBytes ||
        o.unix_path.find('\0') != std::string::npos) {
      return Status::InvalidArgument("http: the Unix socket path must be absolute and at most " +
                                     std::to_string(kMaxUnixSocketPathBytes) + " bytes");
    }
    if (o.require_loopback_host) {
      return Status::InvalidArgument("http: the Host allowlist needs a TCP port, not a Unix socket");
    }
    if (!o.tls_cert_pem.empty()) return Status::InvalidArgument("http: no TLS on a Unix socket");
  }
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
uint64_t HttpServer::peer_limit_cuts() const { return impl_->peer_limit_cuts(); }
uint64_t HttpServer::lingered() const { return impl_->lingered(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options, HttpHandler handler,
                                                     HttpHeadHandler head_handler) {
  URLGUARD_RETURN_IF_ERROR(ValidateOptions(options));
  auto impl = std::make_unique<Impl>(options, std::move(handler), std::move(head_handler));
  URLGUARD_RETURN_IF_ERROR(impl->Listen());
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace urlguard
