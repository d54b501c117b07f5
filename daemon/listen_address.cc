// Copyright urlguard authors.
//
// ParseLoopbackListenAddress (include/urlguard/daemon.h).
#include <charconv>

#include "urlguard/daemon.h"

namespace urlguard {

Status ParseLoopbackListenAddress(std::string_view s, std::string* host, int* port) {
  const Status bad = Status::InvalidArgument("--listen must be a loopback address with a port, e.g. 127.0.0.1:8089");
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) return bad;
  std::string h(s.substr(0, colon));
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  std::string_view digits = s.substr(colon + 1);
  int p = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), p);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) return bad;
  // The lookup API is for local programs only.
  const bool loopback = h == "::1" || h == "localhost" || h.rfind("127.", 0) == 0;
  if (!loopback || p <= 0 || p >= 65536) return bad;
  *host = h;
  *port = p;
  return Status::Ok();
}

}  // namespace urlguard
