// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/verify_handler.h"

#include <charconv>
#include <chrono>
#include <string>

#include "core/layer_kind.h"
#include "core/sha256.h"
#include "server/server_response.h"
#include "server/verify_request.h"

namespace urlguard {

namespace {

// Decimal digits of `value`, appended without a temporary string.
void AppendDecimal(uint64_t value, std::string* out) {
  char digits[20];
  const auto r = std::to_chars(digits, digits + sizeof digits, value);
  out->append(digits, r.ptr);
}

}  // namespace

VerifyHandler::VerifyHandler(VerifyHandlerOptions options, const VerifyHashSource* source, ServerMetrics* metrics)
    : options_(std::move(options)), source_(source), metrics_(metrics),
      guard_(options_.shared_guard ? options_.shared_guard : std::make_shared<LocalAbuseGuard>(options_.guard)) {}

bool VerifyHandler::Throttled(const HttpRequest& req, HttpResponse* refusal) {
  const IpAddress client =
      ResolveClientAddress(req.peer_address, req.Headers("X-Forwarded-For"), options_.trusted_proxies);
  const RollingWindowDecision d = guard_->Check(GuardKeyOf(client), options_.clock());
  if (!d.throttled) return false;
  metrics_->throttled.fetch_add(1, std::memory_order_relaxed);
  *refusal = JsonError(429, "too many requests");
  refusal->SetHeader("Retry-After", std::to_string(d.retry_after_seconds));
  return true;
}

HttpResponse VerifyHandler::Handle(const HttpRequest& req) {
  const bool post = req.method == "POST";
  if (!post && req.method != "GET" && req.method != "HEAD") {
    HttpResponse res = JsonError(405, "method not allowed");
    res.SetHeader("Allow", "GET, POST");
    return res;
  }
  Env* env = options_.env != nullptr ? options_.env : Env::Default();
  const uint64_t start = env->NowMonotonicNanos();
  HttpResponse res;
  if (!Throttled(req, &res)) {
    if (post) {
      VerifyPrefixes prefixes;  // parsed without allocation
      const Status parsed = ParseVerifyRequestInto(req.body, &prefixes);
      res = parsed.ok() ? Answer(prefixes.span()) : Refuse(parsed);
    } else {
      const std::vector<std::string> lists = req.QueryValues("prefixes");
      if (lists.size() != 1) {
        res = JsonError(400, "expected one \"prefixes\" parameter");
      } else {
        const auto prefixes = ParseVerifyPrefixList(lists[0]);
        res = prefixes.ok() ? Answer(*prefixes) : Refuse(prefixes.status());
      }
    }
  }
  metrics_->ObserveVerify(std::chrono::nanoseconds(env->NowMonotonicNanos() - start));
  return res;
}

HttpResponse VerifyHandler::Refuse(const Status& parse_error) {
  const bool too_many = parse_error.code() == StatusCode::kResourceExhausted;
  return JsonError(too_many ? 413 : 400, parse_error.message());
}

HttpResponse VerifyHandler::Answer(std::span<const uint32_t> prefixes) {
  thread_local VerifyLookup lookup;  // reused: its vector keeps its capacity
  const Status looked_up = source_->Lookup(prefixes, &lookup);
  const std::vector<VerifyRecord>* records = &lookup.records;
  if (!looked_up.ok()) {
    const bool busy = looked_up.code() == StatusCode::kUnavailable;
    HttpResponse res = JsonError(busy ? 503 : 500, busy ? "store busy" : "store error");
    if (busy) res.SetHeader("Retry-After", "1");
    return res;
  }
  metrics_->prefixes.fetch_add(prefixes.size(), std::memory_order_relaxed);
  metrics_->matches.fetch_add(records->size(), std::memory_order_relaxed);
  // Written straight into a recycled buffer (http/request.h TakeResponseBuffer) with no temporaries: the
  // answer allocates nothing in steady state.
  HttpResponse res;
  std::string& out = res.body;
  out = TakeResponseBuffer();
  out.reserve(64 + records->size() * 160 + lookup.versions.size() * 48);
  out += "{\"matches\":[";
  for (size_t i = 0; i < records->size(); ++i) {
    const VerifyRecord& r = (*records)[i];
    if (i > 0) out += ',';
    // list and threat are [a-z0-9_-] (checked by the source), so they need no escaping.
    out += "{\"sha256\":\"";
    AppendHex(r.sha256.data(), r.sha256.size(), &out);
    out += "\",\"list\":\"";
    out += r.list;
    out += "\",\"layer\":\"";
    out += LayerKindName(r.layer);
    out += "\",\"threat\":\"";
    out += r.threat;
    out += "\",\"cache_seconds\":";
    AppendDecimal(static_cast<uint64_t>(options_.positive_cache_seconds), &out);
    out += '}';
  }
  out += "],\"negative_cache_seconds\":";
  AppendDecimal(static_cast<uint64_t>(options_.negative_cache_seconds), &out);
  // The list versions this answer comes from: a client at a newer version of a list does not trust it for
  // that list (docs/verify-server.md). List names are [a-z0-9_-], no escaping needed.
  out += ",\"lists\":{";
  for (size_t i = 0; i < lookup.versions.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    out += lookup.versions[i].list;
    out += "\":";
    AppendDecimal(lookup.versions[i].version, &out);
  }
  out += "}}";
  lookup.pin.reset();  // the records point into the pinned versions: drop them only now
  res.SetStaticHeader("Content-Type", "application/json");
  res.SetStaticHeader("Cache-Control", "no-store");
  return res;
}

}  // namespace urlguard
