// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The libcurl Fetcher (sync/fetcher.h); the rules are written down in docs/sync-protocol.md.
//
// Every request is checked before libcurl sees it: the URL is parsed once with libcurl's own URL parser
// (curl_url) and that parsed handle is what the transfer uses (CURLOPT_CURLU), so the scheme and host that
// were checked are the ones connected to — there is no second parser to disagree with the first. Only then is
// an easy handle configured, from scratch (curl_easy_reset) for every request:
//   - protocols: "https", plus "http" when the host is loopback (CURLOPT_PROTOCOLS_STR); redirects are not
//     followed (a 3xx comes back as a status);
//   - TLS: peer and host verification on, TLS 1.2 at least, the configured CA bundle;
//   - timeouts: connect, total, and low speed (a server that drips bytes);
//   - the body is counted in the write callback and the transfer aborted at the cap (returning a short count
//     makes libcurl stop with CURLE_WRITE_ERROR); a Content-Length over the cap is refused before any body
//     byte (CURLOPT_MAXFILESIZE_LARGE). No Accept-Encoding is sent, so the bytes counted are the bytes kept:
//     a compressed transfer encoding cannot inflate past the cap;
//   - the configured proxy, else libcurl's environment default (http_proxy, https_proxy, ALL_PROXY); no_proxy
//     (or NO_PROXY) decides which hosts go direct, loopback ones included: nothing here bypasses a proxy on its
//     own (docs/sync-protocol.md); no signals (CURLOPT_NOSIGNAL: the fetcher runs on any thread).
// Idle easy handles are kept (at most kMaxIdleHandles) so that libcurl's per-handle connection cache lets the
// manifest, its signature and the file it names travel over one TLS connection.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/env.h"
#include "core/ascii.h"
#include "core/thread_annotations.h"
#include "sync/fetcher.h"

#ifndef URLGUARD_VERSION_STRING
#error "URLGUARD_VERSION_STRING must be defined by the build (CMakeLists.txt)"
#endif

namespace urlguard {
namespace {

// libcurl before 8.17 opens its sockets without close-on-exec, so a child that the embedding application forks
// and execs would inherit every pooled connection (docs/threat-model.md, "fork with open handles"). Opening
// them with SOCK_CLOEXEC closes that atomically, with no window for a fork in another thread.
curl_socket_t OpenCloseOnExecSocket(void* /*clientp*/, curlsocktype /*purpose*/, struct curl_sockaddr* address) {
  const int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
  return fd < 0 ? CURL_SOCKET_BAD : fd;
}

// Idle easy handles kept for reuse; more concurrent requests than this simply create (and then free) more.
constexpr size_t kMaxIdleHandles = 4;
// Options and request strings that become header lines are refused above this size.
constexpr size_t kMaxRequestHeaderValueBytes = 1024;

constexpr char kDefaultUserAgentSuffix[] = " (+https://github.com/urlguard)";

// ---- libcurl global state ---------------------------------------------------------------------------------

// curl_global_init once per process, from whichever thread gets here first. Never cleaned up: other code in
// the process may use libcurl too, and curl_global_cleanup is not thread-safe.
CURLcode GlobalInit() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  return code;
}

// ---- small helpers ----------------------------------------------------------------------------------------

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}


// A value that becomes (part of) a request header line: no control characters, bounded.
bool IsSafeHeaderValue(std::string_view v) {
  if (v.size() > kMaxRequestHeaderValueBytes) return false;
  for (char c : v) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

bool IsPrintableAscii(std::string_view v) {
  for (char c : v) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// True for the hosts plain http may go to: an IPv4 address in 127.0.0.0/8, the IPv6 loopback ::1, or
// "localhost". `host` is as curl_url returns it (IPv6 in brackets, IPv4 already in dotted-quad form).
bool IsLoopbackHost(std::string_view host) {
  if (EqualsIgnoreCase(host, "localhost")) return true;
  const std::string h(host);
  in_addr v4;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    in6_addr v6;
    const std::string inner = h.substr(1, h.size() - 2);
    if (inet_pton(AF_INET6, inner.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

// ---- RAII wrappers ----------------------------------------------------------------------------------------

struct CurlUrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using CurlUrlPtr = std::unique_ptr<CURLU, CurlUrlDeleter>;

struct CurlStringDeleter {
  void operator()(char* s) const { curl_free(s); }
};
using CurlString = std::unique_ptr<char, CurlStringDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

struct EasyDeleter {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
using EasyPtr = std::unique_ptr<CURL, EasyDeleter>;

// A URL that passed the rules, parsed once.
struct CheckedUrl {
  CurlUrlPtr handle;
  bool loopback = false;
  bool plain_http = false;
};

Result<CheckedUrl> CheckUrl(const std::string& url, bool allow_plain_http_to_loopback) {
  if (url.size() > kMaxFetchUrlBytes) {
    return Status::InvalidArgument("fetch: URL longer than " + std::to_string(kMaxFetchUrlBytes) + " bytes");
  }
  CheckedUrl out;
  out.handle.reset(curl_url());
  if (out.handle == nullptr) return Status::Internal("fetch: curl_url() failed");
  // No CURLU_GUESS_SCHEME / CURLU_DEFAULT_SCHEME: a URL without a scheme is malformed. No
  // CURLU_NON_SUPPORT_SCHEME: schemes libcurl does not know are malformed too.
  const CURLUcode set = curl_url_set(out.handle.get(), CURLUPART_URL, url.c_str(), 0);
  if (set != CURLUE_OK) {
    return Status::InvalidArgument(std::string("fetch: malformed URL: ") + curl_url_strerror(set));
  }
  char* raw = nullptr;
  if (curl_url_get(out.handle.get(), CURLUPART_SCHEME, &raw, 0) != CURLUE_OK) {
    return Status::InvalidArgument("fetch: URL without a scheme");
  }
  CurlString scheme(raw);
  raw = nullptr;
  if (curl_url_get(out.handle.get(), CURLUPART_HOST, &raw, 0) != CURLUE_OK) {
    return Status::InvalidArgument("fetch: URL without a host");
  }
  CurlString host(raw);
  raw = nullptr;
  // Credentials in a URL would be sent and would appear in every error message: refused.
  if (curl_url_get(out.handle.get(), CURLUPART_USER, &raw, 0) == CURLUE_OK) {
    curl_free(raw);
    return Status::InvalidArgument("fetch: refusing a URL with credentials (user info)");
  }
  out.loopback = IsLoopbackHost(host.get());
  if (EqualsIgnoreCase(scheme.get(), "https")) return out;
  if (EqualsIgnoreCase(scheme.get(), "http")) {
    if (out.loopback && allow_plain_http_to_loopback) {
      out.plain_http = true;
      return out;
    }
    return Status::InvalidArgument(std::string("fetch: refusing plain http to '") + host.get() +
                                   "': https is required (plain http only to loopback" +
                                   (allow_plain_http_to_loopback ? ")" : ", and that is disabled)"));
  }
  return Status::InvalidArgument(std::string("fetch: refusing scheme '") + scheme.get() + "': https only");
}

// ---- per-transfer state (the callbacks' userdata) ---------------------------------------------------------

struct Transfer {
  size_t max_bytes = 0;
  std::string body;
  size_t body_bytes = 0;
  const std::function<void(std::string_view)>* sink = nullptr;  // the request's body_sink, when set
  bool body_over_cap = false;

  size_t header_bytes = 0;
  bool headers_over_cap = false;
  std::string etag;
  std::string retry_after;  // raw value; converted once the response (and its Date) is complete
  std::string date;
};

size_t WriteBody(char* data, size_t size, size_t nmemb, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  const size_t n = size * nmemb;  // size is always 1 (libcurl documents it)
  if (n > t->max_bytes - t->body_bytes) {
    t->body_over_cap = true;
    return 0;  // short count: libcurl aborts the transfer with CURLE_WRITE_ERROR
  }
  t->body_bytes += n;
  if (t->sink != nullptr) {
    (*t->sink)(std::string_view(data, n));
  } else {
    t->body.append(data, n);
  }
  return n;
}

// Called once per header line (status line included, terminating CRLF included), for every response libcurl
// reads — 1xx interim responses too, so a new status line starts the collected fields over.
size_t ReadHeader(char* data, size_t size, size_t nitems, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  const size_t n = size * nitems;
  t->header_bytes += n;
  if (t->header_bytes > kMaxResponseHeaderBytes) {
    t->headers_over_cap = true;
    return 0;  // aborts the transfer
  }
  const std::string_view line(data, n);
  if (line.substr(0, 5) == "HTTP/") {
    t->etag.clear();
    t->retry_after.clear();
    t->date.clear();
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = Trim(line.substr(colon + 1));
  if (EqualsIgnoreCase(name, "etag")) {
    // Too long or odd bytes: ignored rather than truncated (a truncated tag would never match) or fatal; the
    // cost is one unconditional GET. (RFC 9110 allows obs-text in an ETag; no server we talk to needs it.)
    if (value.size() <= kMaxEtagBytes && IsPrintableAscii(value)) {
      t->etag.assign(value);
    } else {
      t->etag.clear();
    }
  } else if (EqualsIgnoreCase(name, "retry-after")) {
    t->retry_after.assign(value);
  } else if (EqualsIgnoreCase(name, "date")) {
    t->date.assign(value);
  }
  return n;
}

// ---- error mapping ----------------------------------------------------------------------------------------

Status TransferError(CURLcode code, const char* errbuf, const std::string& what) {
  std::string message = what + ": " + curl_easy_strerror(code);
  if (errbuf[0] != '\0') {
    std::string detail(errbuf);
    while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\r')) detail.pop_back();
    message += " (" + detail + ")";
  }
  switch (code) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return Status::InvalidArgument(message);
    case CURLE_OUT_OF_MEMORY:
    case CURLE_FAILED_INIT:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
    case CURLE_NOT_BUILT_IN:
      return Status::Internal(message);
    default:
      // Cannot resolve or connect, timeouts (total and low speed), TLS handshake and verification failures,
      // resets, empty replies, malformed HTTP, truncated bodies: the remote party did not answer usefully.
      return Status::Unavailable(message);
  }
}

// ---- the fetcher ------------------------------------------------------------------------------------------

class CurlFetcher final : public Fetcher {
 public:
  explicit CurlFetcher(FetcherOptions options) : options_(std::move(options)) {
    user_agent_ = options_.user_agent.empty()
                      ? std::string("urlguard/") + URLGUARD_VERSION_STRING + kDefaultUserAgentSuffix
                      : options_.user_agent;
  }

  ~CurlFetcher() override = default;

  Result<FetchResponse> Fetch(const FetchRequest& request) override {
    const bool post = request.method == "POST";
    if (!post && request.method != "GET") {
      return Status::InvalidArgument("fetch: method '" + request.method + "' is not GET or POST");
    }
    if (!post && !request.body.empty()) return Status::InvalidArgument("fetch: a GET request has no body");
    if (!IsSafeHeaderValue(request.content_type)) {
      return Status::InvalidArgument("fetch: Content-Type has control characters or is too long");
    }
    if (!IsSafeHeaderValue(request.if_none_match)) {
      return Status::InvalidArgument("fetch: If-None-Match has control characters or is too long");
    }
    URLGUARD_ASSIGN_OR_RETURN(CheckedUrl url, CheckUrl(request.url, options_.allow_plain_http_to_loopback));
    const std::string what = request.method + " " + request.url;

    EasyPtr easy = TakeHandle();
    if (easy == nullptr) return Status::Internal("fetch: curl_easy_init() failed");

    SlistPtr headers;
    auto add_header = [&headers](const std::string& line) {
      curl_slist* next = curl_slist_append(headers.get(), line.c_str());
      if (next == nullptr) return false;
      headers.release();  // now owned by `next`
      headers.reset(next);
      return true;
    };
    bool headers_ok = true;
    if (!request.if_none_match.empty()) headers_ok &= add_header("If-None-Match: " + request.if_none_match);
    if (post) {
      if (!request.content_type.empty()) headers_ok &= add_header("Content-Type: " + request.content_type);
      headers_ok &= add_header("Expect:");  // no "100-continue" round trip
    }
    if (!headers_ok) return Status::Internal("fetch: curl_slist_append failed");

    Transfer transfer;
    transfer.max_bytes = request.max_bytes;
    if (request.body_sink) transfer.sink = &request.body_sink;
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';

    CURL* e = easy.get();
    CURLcode set = CURLE_OK;
    auto opt = [&set](CURLcode c) {
      if (set == CURLE_OK) set = c;
    };
    opt(curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf));
    opt(curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L));
    opt(curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, &OpenCloseOnExecSocket));
    opt(curl_easy_setopt(e, CURLOPT_CURLU, url.handle.get()));
    opt(curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, url.plain_http ? "https,http" : "https"));
    opt(curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "https"));
    opt(curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L));
    opt(curl_easy_setopt(e, CURLOPT_MAXREDIRS, 0L));
    opt(curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L));
    opt(curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L));
    opt(curl_easy_setopt(e, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2)));
    if (!options_.ca_bundle.empty()) opt(curl_easy_setopt(e, CURLOPT_CAINFO, options_.ca_bundle.c_str()));
    // Unset (after curl_easy_reset), libcurl reads the proxy environment variables itself; either way it honours
    // no_proxy. Setting CURLOPT_PROXY to "" would disable proxies, environment ones included: never done here.
    if (!options_.proxy.empty()) opt(curl_easy_setopt(e, CURLOPT_PROXY, options_.proxy.c_str()));
    opt(curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, options_.connect_timeout_ms));
    opt(curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, options_.total_timeout_ms));
    if (options_.low_speed_bytes_per_second > 0) {
      opt(curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, options_.low_speed_bytes_per_second));
      opt(curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, options_.low_speed_seconds));
    }
    opt(curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent_.c_str()));
    opt(curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get()));
    opt(curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &WriteBody));
    opt(curl_easy_setopt(e, CURLOPT_WRITEDATA, &transfer));
    opt(curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &ReadHeader));
    opt(curl_easy_setopt(e, CURLOPT_HEADERDATA, &transfer));
    if (request.max_bytes > 0) {
      // A declared Content-Length over the cap fails before the first body byte (0 would mean "no limit"; the
      // write callback enforces a cap of 0).
      const curl_off_t limit =
          static_cast<curl_off_t>(std::min<size_t>(request.max_bytes, static_cast<size_t>(INT64_MAX)));
      opt(curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, limit));
    }
    if (post) {
      opt(curl_easy_setopt(e, CURLOPT_POST, 1L));
      opt(curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size())));
      opt(curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.body.data()));
    } else {
      opt(curl_easy_setopt(e, CURLOPT_HTTPGET, 1L));
    }
    if (set != CURLE_OK) return TransferError(set, errbuf, what + ": setting options");

    const CURLcode code = curl_easy_perform(e);
    // The handle must not keep pointers into this frame (URL handle, headers, error buffer, callbacks' data).
    auto release = [&] {
      curl_easy_reset(e);
      ReturnHandle(std::move(easy));
    };
    if (transfer.headers_over_cap) {
      release();
      return Status::ResourceExhausted(what + ": response headers exceed " +
                                       std::to_string(kMaxResponseHeaderBytes) + " bytes");
    }
    if (transfer.body_over_cap || code == CURLE_FILESIZE_EXCEEDED) {
      release();
      return Status::ResourceExhausted(what + ": response body exceeds " + std::to_string(request.max_bytes) +
                                       " bytes");
    }
    if (code != CURLE_OK) {
      Status status = TransferError(code, errbuf, what);
      release();
      return status;
    }
    long http_status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &http_status);
    release();

    FetchResponse response;
    response.status = static_cast<int>(http_status);
    response.body = std::move(transfer.body);
    response.body_bytes = transfer.body_bytes;
    response.etag = std::move(transfer.etag);
    if (!transfer.date.empty() && transfer.date.size() <= 64 && IsSafeHeaderValue(transfer.date)) {
      const time_t date = curl_getdate(transfer.date.c_str(), nullptr);
      if (date != static_cast<time_t>(-1) && date >= 0) response.server_date_unix = static_cast<int64_t>(date);
    }
    if (!transfer.retry_after.empty()) {
      // An HTTP-date is measured from the server's own Date header when it sent one (immune to our clock's
      // skew), else from our clock.
      int64_t now = response.server_date_unix;
      if (now < 0) now = (options_.env != nullptr ? options_.env : Env::Default())->NowUnixSeconds();
      response.retry_after_seconds = ParseRetryAfter(transfer.retry_after, now);
    }
    return response;
  }

 private:
  EasyPtr TakeHandle() EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      if (!idle_.empty()) {
        EasyPtr e = std::move(idle_.back());
        idle_.pop_back();
        return e;
      }
    }
    return EasyPtr(curl_easy_init());
  }

  void ReturnHandle(EasyPtr easy) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (idle_.size() < kMaxIdleHandles) idle_.push_back(std::move(easy));
    // else: `easy` is freed here (under the lock, which only orders it with other pool operations).
  }

  const FetcherOptions options_;
  std::string user_agent_;

  Mutex mu_;
  std::vector<EasyPtr> idle_ GUARDED_BY(mu_);  // reset handles, each with its own connection cache
};

}  // namespace

int64_t ParseRetryAfter(std::string_view value, int64_t now_unix) {
  value = Trim(value);
  if (value.empty()) return -1;
  // Spec (RFC 9110 §10.2.3): Retry-After = HTTP-date / delay-seconds; delay-seconds = 1*DIGIT.
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int64_t seconds = 0;
    for (char c : value) {
      seconds = seconds * 10 + (c - '0');
      if (seconds > kMaxRetryAfterSeconds) return kMaxRetryAfterSeconds;
    }
    return seconds;
  }
  // An HTTP-date ("Sun, 06 Nov 1994 08:49:37 GMT" and the two obsolete forms) - curl_getdate reads all three.
  // It is lenient beyond that; a string it cannot read is -1. Reject what no date needs first.
  if (value.size() > 64 || !IsSafeHeaderValue(value)) return -1;
  const std::string text(value);
  const time_t when = curl_getdate(text.c_str(), nullptr);
  if (when == static_cast<time_t>(-1)) return -1;
  // when - now_unix, saturated into [0, kMaxRetryAfterSeconds] without overflow for any now_unix.
  const int64_t w = static_cast<int64_t>(when);
  if (now_unix >= w) return 0;
  if (now_unix < 0 && w > std::numeric_limits<int64_t>::max() + now_unix) return kMaxRetryAfterSeconds;
  return std::min(w - now_unix, kMaxRetryAfterSeconds);
}

Result<std::unique_ptr<Fetcher>> NewCurlFetcher(const FetcherOptions& options) {
  if (options.connect_timeout_ms <= 0 || options.total_timeout_ms <= 0) {
    return Status::InvalidArgument("fetcher: timeouts must be > 0 ms");
  }
  if (options.low_speed_bytes_per_second < 0 ||
      (options.low_speed_bytes_per_second > 0 && options.low_speed_seconds < 1)) {
    return Status::InvalidArgument("fetcher: low-speed limit must be >= 0 bytes/s over >= 1 s");
  }
  if (!IsSafeHeaderValue(options.user_agent)) {
    return Status::InvalidArgument("fetcher: User-Agent has control characters or is too long");
  }
  if (options.proxy.find('\0') != std::string::npos || options.ca_bundle.find('\0') != std::string::npos) {
    return Status::InvalidArgument("fetcher: proxy or CA bundle path contains NUL");
  }
  const CURLcode init = GlobalInit();
  if (init != CURLE_OK) {
    return Status::Internal(std::string("fetcher: curl_global_init failed: ") + curl_easy_strerror(init));
  }
  return std::unique_ptr<Fetcher>(new CurlFetcher(options));
}

}  // namespace urlguard
