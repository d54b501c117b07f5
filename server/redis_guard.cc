// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "server/redis_guard.h"

#include <hiredis/hiredis.h>
#include <openssl/evp.h>
#include <sys/time.h>

#include <charconv>
#include <chrono>
#include <cstdio>

#include "core/sha256.h"

namespace urlguard {

// Changes the data in Redis and the decisions: docs/fleet.md quotes it and fixtures/golden/redis_guard.lua
// pins it (redis_guard_test). KEYS[1]: the signature's hash. ARGV: now (decimal seconds, or "" for Redis TIME),
// threshold, max requests per second (0: off), key TTL seconds. Returns {throttled, seen_seconds,
// requests_this_second (0 when the rate limit is off), rate_limited, retry_after_seconds}.
const char kRedisGuardScript[] = R"lua(-- urlguard abuse guard v1 (docs/fleet.md)
local now = tonumber(ARGV[1])
if now == nil then now = tonumber(redis.call('TIME')[1]) end
local threshold = tonumber(ARGV[2])
local max_rps = tonumber(ARGV[3])
local window = 60
local flat = redis.call('HGETALL', KEYS[1])
local hit = {}
local seen = 0
local stale = {}
for i = 1, #flat, 2 do
  local age = now - tonumber(flat[i])
  if age >= 1 and age < window then
    hit[age] = true
    seen = seen + 1
  elseif age >= window or age <= -window then
    stale[#stale + 1] = flat[i]
  end
end
if #stale > 0 then redis.call('HDEL', KEYS[1], unpack(stale)) end
local n = redis.call('HINCRBY', KEYS[1], string.format('%d', now), 1)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
local throttled = seen > threshold
local rate_limited = max_rps > 0 and n > max_rps
local retry = 0
if rate_limited and not throttled then
  retry = 1
elseif throttled then
  local upto = {}
  local running = 1
  upto[0] = 1
  for age = 1, window - 1 do
    if hit[age] then running = running + 1 end
    upto[age] = running
  end
  retry = 1
  while retry < window and upto[window - 1 - retry] > threshold do retry = retry + 1 end
end
if max_rps == 0 then n = 0 end
return {(throttled or rate_limited) and 1 or 0, seen, n, rate_limited and 1 or 0, retry}
)lua";

namespace {

std::string Sha1Hex(std::string_view text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  const int ok = EVP_Digest(text.data(), text.size(), md, &len, EVP_sha1(), nullptr);
  if (ok != 1) return {};
  return ToHex(md, len);
}

timeval Millis(int ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

bool ParseInt(std::string_view s, int lo, int hi, int* out) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// A reply's error text, or the context's.
std::string ErrorOf(redisContext* c, const redisReply* r) {
  if (r != nullptr && r->type == REDIS_REPLY_ERROR) return std::string(r->str, r->len);
  if (c == nullptr) return "cannot allocate a redis context";
  return c->errstr[0] != '\0' ? std::string(c->errstr) : "redis error " + std::to_string(c->err);
}

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

ReplyPtr Command(redisContext* c, const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  argv.reserve(args.size());
  lens.reserve(args.size());
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  return ReplyPtr(static_cast<redisReply*>(
      redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data())));
}

}  // namespace

Status ParseRedisUrl(std::string_view url, RedisGuardOptions* options) {
  const Status bad = Status::InvalidArgument("guard: expected redis://HOST:PORT[/DB][?timeout_ms=N], got \"" +
                                             std::string(url.substr(0, 80)) + "\"");
  if (url.size() > kMaxRedisUrlBytes) return bad;
  constexpr std::string_view kScheme = "redis://";
  if (url.substr(0, kScheme.size()) != kScheme) return bad;
  std::string_view rest = url.substr(kScheme.size());
  int timeout_ms = 0;
  if (const size_t q = rest.find('?'); q != std::string_view::npos) {
    constexpr std::string_view kTimeout = "timeout_ms=";
    const std::string_view query = rest.substr(q + 1);
    if (query.substr(0, kTimeout.size()) != kTimeout ||
        !ParseInt(query.substr(kTimeout.size()), 1, kMaxRedisTimeoutMs, &timeout_ms)) {
      return bad;
    }
    rest = rest.substr(0, q);
  }
  int db = 0;
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    if (!ParseInt(rest.substr(slash + 1), 0, 15, &db)) return bad;
    rest = rest.substr(0, slash);
  }
  std::string_view host;
  std::string_view port;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') return bad;
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return bad;
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty()) return bad;
  for (char ch : host) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                    ch == '.' || ch == '-' || ch == ':';
    if (!ok) return bad;
  }
  int p = 0;
  if (!ParseInt(port, 1, 65535, &p)) return bad;
  options->host = std::string(host);
  options->port = p;
  options->db = db;
  if (timeout_ms > 0) options->connect_timeout_ms = options->io_timeout_ms = timeout_ms;
  return Status::Ok();
}

Result<std::unique_ptr<RedisAbuseGuard>> RedisAbuseGuard::Create(RedisGuardOptions options) {
  const auto in_range = [](int v, int hi) { return v >= 1 && v <= hi; };
  if (options.host.empty()) return Status::InvalidArgument("guard: redis host is empty");
  if (options.port < 1 || options.port > 65535) return Status::InvalidArgument("guard: redis port out of range");
  if (options.db < 0 || options.db > 15) return Status::InvalidArgument("guard: redis db must be 0..15");
  if (options.key_prefix.size() > kMaxRedisKeyPrefixBytes) {
    return Status::InvalidArgument("guard: redis key prefix too long");
  }
  if (!in_range(options.connect_timeout_ms, kMaxRedisTimeoutMs) ||
      !in_range(options.io_timeout_ms, kMaxRedisTimeoutMs) || !in_range(options.retry_interval_ms, 600000)) {
    return Status::InvalidArgument("guard: redis timeouts out of range");
  }
  const RollingWindowOptions& w = options.window;
  if (w.threshold < 0 || w.threshold >= kRollingWindowSeconds || w.signatures_per_second < 1 ||
      w.signatures_per_second > kMaxRollingWindowSignaturesPerSecond || !(w.fp_rate > 0 && w.fp_rate < 1)) {
    return Status::InvalidArgument("guard: window options out of range");
  }
  if (options.env == nullptr) options.env = Env::Default();
  std::unique_ptr<RedisAbuseGuard> guard(new RedisAbuseGuard(std::move(options)));
  if (guard->script_sha_.empty()) return Status::Internal("guard: SHA-1 unavailable");
  std::string error;
  if (redisContext* c = guard->Connect(&error)) {
    guard->Return(c);
    guard->on_redis_.store(true, std::memory_order_release);
  } else {
    guard->Log("redis " + guard->options_.host + ":" + std::to_string(guard->options_.port) + " unreachable (" +
               error + "): starting on the local guard; retrying every " +
               std::to_string(guard->options_.retry_interval_ms) + " ms");
  }
  guard->retry_thread_ = std::thread([g = guard.get()] { g->RetryLoop(); });
  return guard;
}

RedisAbuseGuard::RedisAbuseGuard(RedisGuardOptions options)
    : options_(std::move(options)), local_(options_.window), script_sha_(Sha1Hex(kRedisGuardScript)) {}

RedisAbuseGuard::~RedisAbuseGuard() {
  {
    MutexLock lock(&retry_mutex_);
    stop_ = true;
  }
  retry_cv_.SignalAll();
  if (retry_thread_.joinable()) retry_thread_.join();
  CloseAll();
}

std::string RedisAbuseGuard::KeyOf(std::string_view signature) const {
  const Sha256Digest d = Sha256(signature);
  return options_.key_prefix + ToHex(d.data(), 16);
}

void RedisAbuseGuard::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "urlguard-server: guard: %s\n", line.c_str());
  }
}

redisContext* RedisAbuseGuard::Connect(std::string* error) {
  redisContext* c = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                            Millis(options_.connect_timeout_ms));
  if (c == nullptr || c->err != 0) {
    *error = "connect " + options_.host + ":" + std::to_string(options_.port) + ": " + ErrorOf(c, nullptr);
    errors_.fetch_add(1, std::memory_order_relaxed);
    if (c != nullptr) redisFree(c);
    return nullptr;
  }
  auto fail = [&](const redisReply* r) -> redisContext* {
    *error = ErrorOf(c, r);
    errors_.fetch_add(1, std::memory_order_relaxed);
    redisFree(c);
    return nullptr;
  };
  if (redisSetTimeout(c, Millis(options_.io_timeout_ms)) != REDIS_OK) return fail(nullptr);
  if (options_.db != 0) {
    ReplyPtr r = Command(c, {"SELECT", std::to_string(options_.db)});
    if (!r || r->type == REDIS_REPLY_ERROR) return fail(r.get());
  }
  ReplyPtr r = Command(c, {"SCRIPT", "LOAD", kRedisGuardScript});
  if (!r || r->type != REDIS_REPLY_STRING) return fail(r.get());
  if (std::string_view(r->str, r->len) != script_sha_) {
    *error = "SCRIPT LOAD returned an unexpected SHA-1";
    errors_.fetch_add(1, std::memory_order_relaxed);
    redisFree(c);
    return nullptr;
  }
  return c;
}

redisContext* RedisAbuseGuard::Borrow(std::string* error) {
  {
    MutexLock lock(&pool_mutex_);
    if (!idle_.empty()) {
      redisContext* c = idle_.back();
      idle_.pop_back();
      return c;
    }
  }
  return Connect(error);
}

void RedisAbuseGuard::Return(redisContext* c) {
  {
    MutexLock lock(&pool_mutex_);
    if (idle_.size() < kMaxRedisGuardIdleConnections) {
      idle_.push_back(c);
      return;
    }
  }
  redisFree(c);
}

void RedisAbuseGuard::CloseAll() {
  std::vector<redisContext*> idle;
  {
    MutexLock lock(&pool_mutex_);
    idle.swap(idle_);
  }
  for (redisContext* c : idle) redisFree(c);
}

bool RedisAbuseGuard::Eval(redisContext* c, const std::string& key, int64_t now_seconds,
                           RollingWindowDecision* out, std::string* error) {
  const std::vector<std::string> tail = {
      key,
      options_.use_redis_clock ? std::string() : std::to_string(now_seconds),
      std::to_string(options_.window.threshold),
      std::to_string(options_.window.max_requests_per_second),
      std::to_string(kRedisGuardKeyTtlSeconds)};
  std::vector<std::string> args = {"EVALSHA", script_sha_, "1"};
  args.insert(args.end(), tail.begin(), tail.end());
  ReplyPtr r = Command(c, args);
  if (r && r->type == REDIS_REPLY_ERROR && std::string_view(r->str, r->len).substr(0, 8) == "NOSCRIPT") {
    // The script cache was flushed (SCRIPT FLUSH, or a restart behind a proxy): EVAL loads it again.
    args[0] = "EVAL";
    args[1] = kRedisGuardScript;
    r = Command(c, args);
  }
  if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 5) {
    *error = r && r->type != REDIS_REPLY_ERROR ? "unexpected reply from the guard script" : ErrorOf(c, r.get());
    return false;
  }
  long long v[5];
  for (size_t i = 0; i < 5; ++i) {
    if (r->element[i]->type != REDIS_REPLY_INTEGER) {
      *error = "unexpected reply from the guard script";
      return false;
    }
    v[i] = r->element[i]->integer;
  }
  out->throttled = v[0] != 0;
  out->seen_seconds = static_cast<int>(v[1]);
  out->requests_this_second = static_cast<uint32_t>(std::min<long long>(v[2], UINT32_MAX));
  out->rate_limited = v[3] != 0;
  out->retry_after_seconds = static_cast<int>(v[4]);
  return true;
}

RollingWindowDecision RedisAbuseGuard::Check(std::string_view signature, int64_t now_seconds) {
  // The fallback records every request, so it is warm when Redis goes away.
  const RollingWindowDecision local = local_.Check(signature, now_seconds);
  if (!on_redis_.load(std::memory_order_acquire)) return local;
  std::string error;
  redisContext* c = Borrow(&error);
  if (c == nullptr) {
    SwitchToLocal(error);
    return local;
  }
  const uint64_t start = options_.env->NowMonotonicNanos();
  RollingWindowDecision shared;
  if (!Eval(c, KeyOf(signature), now_seconds, &shared, &error)) {
    errors_.fetch_add(1, std::memory_order_relaxed);
    redisFree(c);
    SwitchToLocal(error);
    return local;
  }
  const uint64_t nanos = options_.env->NowMonotonicNanos() - start;
  Return(c);
  const double seconds = static_cast<double>(nanos) / 1e9;
  for (size_t i = 0; i < kLatencyBounds.size(); ++i) {
    if (seconds <= kLatencyBounds[i]) {
      latency_buckets_[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  latency_count_.fetch_add(1, std::memory_order_relaxed);
  latency_nanos_.fetch_add(nanos, std::memory_order_relaxed);
  return shared;
}

void RedisAbuseGuard::SwitchToLocal(const std::string& why) {
  // Only the thread that flips the flag logs: once per outage.
  bool expected = true;
  if (on_redis_.compare_exchange_strong(expected, false, std::memory_order_acq_rel)) {
    fallbacks_.fetch_add(1, std::memory_order_relaxed);
    Log("redis " + options_.host + ":" + std::to_string(options_.port) + " unreachable (" + why +
        "): switched to the local guard; retrying every " + std::to_string(options_.retry_interval_ms) + " ms");
  }
  CloseAll();  // the other idle connections are most likely dead too
  retry_cv_.SignalAll();
}

void RedisAbuseGuard::RetryLoop() {
  MutexLock lock(&retry_mutex_);
  while (!stop_) {
    retry_cv_.WaitFor(&retry_mutex_, std::chrono::milliseconds(options_.retry_interval_ms));
    if (stop_) break;
    if (on_redis_.load(std::memory_order_acquire)) continue;
    retry_mutex_.Unlock();
    std::string error;
    redisContext* c = Connect(&error);
    bool back = false;
    if (c != nullptr) {
      ReplyPtr r = Command(c, {"PING"});
      back = r && r->type == REDIS_REPLY_STATUS;
      if (back) {
        Return(c);
      } else {
        errors_.fetch_add(1, std::memory_order_relaxed);
        redisFree(c);
      }
    }
    if (back) {
      on_redis_.store(true, std::memory_order_release);
      Log("redis " + options_.host + ":" + std::to_string(options_.port) + " is back: switched to the shared guard");
    }
    retry_mutex_.Lock();
  }
}

void RedisAbuseGuard::AppendMetrics(PrometheusText* out) const {
  AppendGuardBackendMetric(out, using_redis());
  out->Counter("urlguard_server_guard_redis_errors_total",
               "Failed Redis connects and round trips of the shared abuse guard.",
               errors_.load(std::memory_order_relaxed));
  out->Counter("urlguard_server_guard_fallbacks_total",
               "Times the abuse guard switched from Redis to the local guard.",
               fallbacks_.load(std::memory_order_relaxed));
  out->Family("urlguard_server_guard_redis_seconds", "Round trip of one shared abuse-guard decision in Redis.",
              MetricType::kHistogram);
  std::array<uint64_t, kLatencyBounds.size()> counts;
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = latency_buckets_[i].load(std::memory_order_relaxed);
  out->Histogram("urlguard_server_guard_redis_seconds", {}, kLatencyBounds, counts,
                 latency_count_.load(std::memory_order_relaxed),
                 static_cast<double>(latency_nanos_.load(std::memory_order_relaxed)) / 1e9);
}

}  // namespace urlguard
