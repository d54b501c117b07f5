// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "feeds/feed_fetch.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <string_view>

#include "core/ascii.h"

namespace urlguard {
namespace {

CURLcode GlobalInit() {
  static const CURLcode code = curl_global_init(CURL_GLOBAL_DEFAULT);
  return code;
}

bool IsPrintable(std::string_view v) {
  return std::all_of(v.begin(), v.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

struct Transfer {
  FeedFetchResponse* response;
  size_t max_bytes;
  size_t header_bytes = 0;
  bool over_cap = false;
  bool headers_over_cap = false;
};

size_t WriteBody(char* data, size_t size, size_t nmemb, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  const size_t n = size * nmemb;
  if (t->response->body.size() + n > t->max_bytes) {
    t->over_cap = true;
    return 0;  // aborts the transfer
  }
  t->response->body.append(data, n);
  return n;
}

size_t ReadHeader(char* data, size_t size, size_t nitems, void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  const size_t n = size * nitems;
  t->header_bytes += n;
  if (t->header_bytes > kMaxFeedResponseHeaderBytes) {
    t->headers_over_cap = true;
    return 0;
  }
  const std::string_view line(data, n);
  if (line.substr(0, 5) == "HTTP/") {  // a new response (after a redirect): forget the previous one's headers
    t->response->etag.clear();
    t->response->last_modified.clear();
    t->response->content_type.clear();
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = TrimAsciiSpace(line.substr(colon + 1));
  const bool keep = value.size() <= kMaxFeedValidatorBytes && IsPrintable(value);
  if (EqualsIgnoreCase(name, "etag")) {
    t->response->etag = keep ? std::string(value) : std::string();
  } else if (EqualsIgnoreCase(name, "last-modified")) {
    t->response->last_modified = keep ? std::string(value) : std::string();
  } else if (EqualsIgnoreCase(name, "content-type")) {
    t->response->content_type = keep ? std::string(value) : std::string();
  }
  return n;
}

struct EasyDeleter {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

Status FetchFeed(const FeedFetchRequest& request, FeedFetchResponse* response) {
  *response = FeedFetchResponse{};
  if (request.url.rfind("http://", 0) != 0 && request.url.rfind("https://", 0) != 0) {
    return Status::InvalidArgument("feed url must be http:// or https://");
  }
  if (GlobalInit() != CURLE_OK) return Status::Internal("curl_global_init failed");
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (!easy) return Status::Internal("curl_easy_init failed");
  CURL* e = easy.get();
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  auto add_header = [&headers](const std::string& h) {
    curl_slist* l = curl_slist_append(headers.get(), h.c_str());
    if (l != nullptr) {
      (void)headers.release();
      headers.reset(l);
    }
  };
  // Validators come from our own metadata file (printable, bounded); checked again so no header can be injected.
  if (!request.etag.empty() && IsPrintable(request.etag)) add_header("If-None-Match: " + request.etag);
  if (!request.last_modified.empty() && IsPrintable(request.last_modified)) {
    add_header("If-Modified-Since: " + request.last_modified);
  }
  Transfer t{response, request.max_bytes};
  char errbuf[CURL_ERROR_SIZE] = {0};
  const std::string user_agent = "urlguard-publish (feed update)";
  CURLcode setopt = CURLE_OK;
  auto opt = [&setopt](CURLcode c) {
    if (setopt == CURLE_OK) setopt = c;
  };
  opt(curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf));
  opt(curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L));
  opt(curl_easy_setopt(e, CURLOPT_URL, request.url.c_str()));
  opt(curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https"));
  opt(curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"));
  opt(curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L));
  opt(curl_easy_setopt(e, CURLOPT_MAXREDIRS, kMaxFeedRedirects));
  opt(curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L));
  opt(curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L));
  // "": every encoding libcurl can decode (gzip, deflate, ...); the write callback sees decoded bytes.
  opt(curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""));
  // Unset: libcurl reads http_proxy / https_proxy / no_proxy itself. Never set to "" (that disables them).
  if (!request.proxy.empty()) opt(curl_easy_setopt(e, CURLOPT_PROXY, request.proxy.c_str()));
  opt(curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout_ms)));
  opt(curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout_ms)));
  opt(curl_easy_setopt(e, CURLOPT_USERAGENT, user_agent.c_str()));
  opt(curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get()));
  opt(curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &WriteBody));
  opt(curl_easy_setopt(e, CURLOPT_WRITEDATA, &t));
  opt(curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &ReadHeader));
  opt(curl_easy_setopt(e, CURLOPT_HEADERDATA, &t));
  opt(curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
                       static_cast<curl_off_t>(std::min<size_t>(request.max_bytes, size_t{INT64_MAX}))));
  if (setopt != CURLE_OK) return Status::Internal(std::string("curl_easy_setopt: ") + curl_easy_strerror(setopt));

  const CURLcode rc = curl_easy_perform(e);
  long code = 0;
  (void)curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
  response->http_status = code;
  char* effective = nullptr;
  if (curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective != nullptr) {
    response->effective_url = effective;
  }
  if (t.over_cap || rc == CURLE_FILESIZE_EXCEEDED) {
    return Status::ResourceExhausted("feed larger than its cap of " + std::to_string(request.max_bytes) + " bytes");
  }
  if (t.headers_over_cap) return Status::Unavailable("response headers over 64 KiB");
  if (rc != CURLE_OK) {
    std::string why = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    if (rc == CURLE_PARTIAL_FILE) why = "truncated: " + why;
    if (rc == CURLE_OPERATION_TIMEDOUT) why = "timed out: " + why;
    return Status::Unavailable("download failed: " + why);
  }
  if (code == 304) {
    response->not_modified = true;
    return Status::Ok();
  }
  if (code < 200 || code > 299) return Status::Unavailable("HTTP " + std::to_string(code));
  return Status::Ok();
}

}  // namespace urlguard
