// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Raw-socket clients for tests of HTTP servers on loopback: hostile clients need bytes a real HTTP client
// would never send. Test-only (header-only, included by *_test.cc).
#ifndef URLGUARD_HTTP_HTTP_TEST_UTIL_H_
#define URLGUARD_HTTP_HTTP_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace urlguard {
namespace testing_http {

// A TCP connection to 127.0.0.1:port from `source` (any 127/8 address: all of it is loopback). -1 on failure.
inline int ConnectFrom(int port, const char* source = "127.0.0.1", int timeout_seconds = 10) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  inet_pton(AF_INET, source, &local.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{timeout_seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A connection to the Unix-domain socket at `path`. -1 on failure.
inline int ConnectUnix(const std::string& path, int timeout_seconds = 10) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{timeout_seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    close(fd);
    return -1;
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// True when the server has closed (or reset) connection `fd`; reads and drops whatever it sent first.
inline bool ClosedByServer(int fd) {
  char buf[512];
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
  }
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

inline bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

struct Exchange {
  std::string response;  // everything received
  bool closed = false;   // the server closed (false: the receive timed out with the connection open)
};

// Reads until the server closes or the receive timeout passes.
inline Exchange ReadUntilClose(int fd) {
  Exchange out;
  char buf[4096];
  while (true) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) {
      out.closed = true;
      break;
    }
    if (n < 0) break;
    out.response.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Sends `request` verbatim on connection `fd` (closed afterwards) and returns what comes back until the server
// closes.
inline Exchange ExchangeOn(int fd, const std::string& request) {
  if (fd < 0) return {};
  SendAll(fd, request);
  Exchange out = ReadUntilClose(fd);
  close(fd);
  return out;
}

// Sends `request` verbatim on a new connection and returns what comes back until the server closes.
inline Exchange RawExchange(int port, const std::string& request, const char* source = "127.0.0.1",
                            int timeout_seconds = 10) {
  const int fd = ConnectFrom(port, source, timeout_seconds);
  if (fd < 0) return {};
  SendAll(fd, request);  // the server may cut an oversized request
  Exchange out = ReadUntilClose(fd);
  close(fd);
  return out;
}

inline int StatusOf(const std::string& raw_response) {
  if (raw_response.compare(0, 9, "HTTP/1.1 ") != 0 && raw_response.compare(0, 9, "HTTP/1.0 ") != 0) return 0;
  return std::atoi(raw_response.c_str() + 9);
}

// Number of status lines ("HTTP/1.x NNN") in a raw response stream.
inline int CountResponses(const std::string& raw) {
  int n = 0;
  for (size_t at = raw.find("HTTP/1."); at != std::string::npos; at = raw.find("HTTP/1.", at + 1)) ++n;
  return n;
}

}  // namespace testing_http
}  // namespace urlguard

#endif  // URLGUARD_HTTP_HTTP_TEST_UTIL_H_
