// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard.Client: the living client over a data directory (urlguard/client.h). check() may wait for the
// verification API (up to verifyDeadlineMs) on the JS thread; checkAsync(), checkManyAsync() and syncNowAsync()
// do their work on the libuv thread pool and resolve a promise, which is what an Electron main process or a
// server wants. close() works as for urlguard.Checker: calls in flight keep the Client alive.
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "addon.h"
#include "urlguard/client.h"
#include "urlguard/keys.h"
#include "urlguard/sync.h"

namespace urlguard::node {
namespace {

// options[name]: an array of strings (or absent). False after a TypeError.
bool StringsOption(Napi::Object options, const char* name, std::vector<std::string>* out) {
  Napi::Value v = options.Get(name);
  if (options.Env().IsExceptionPending()) return false;
  if (v.IsUndefined()) return true;
  return StringsOf(v, std::string("options.") + name + " must be an array of strings", out);
}

bool StringOption(Napi::Object options, const char* name, std::string* out) {
  Napi::Value v = options.Get(name);
  if (options.Env().IsExceptionPending()) return false;
  if (v.IsUndefined()) return true;
  if (!v.IsString()) {
    ThrowTypeError(options.Env(), std::string("options.") + name + " must be a string");
    return false;
  }
  *out = v.As<Napi::String>().Utf8Value();
  return true;
}

// A non-negative integer option (a Number without a fraction).
template <typename T>
bool IntOption(Napi::Object options, const char* name, T* out) {
  Napi::Value v = options.Get(name);
  if (options.Env().IsExceptionPending()) return false;
  if (v.IsUndefined()) return true;
  const double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
  if (!(d >= 0 && d <= 9007199254740991.0) || std::floor(d) != d) {
    ThrowTypeError(options.Env(), std::string("options.") + name + " must be a non-negative integer");
    return false;
  }
  *out = static_cast<T>(d);
  return true;
}

Napi::Value SyncReports(Napi::Env env, const std::vector<SyncReport>& reports) {
  Napi::Array out = Napi::Array::New(env, reports.size());
  for (uint32_t i = 0; i < reports.size(); ++i) {
    const SyncReport& r = reports[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("list", Str(env, r.list));
    o.Set("result", Napi::String::New(env, SyncResultName(r.result)));
    o.Set("fromVersion", Num(env, r.from_version));
    o.Set("toVersion", Num(env, r.to_version));
    o.Set("usedDiff", Napi::Boolean::New(env, r.used_diff));
    o.Set("bytes", Num(env, r.bytes));
    o.Set("error", StrOrNull(env, r.error));
    out.Set(i, o);
  }
  return out;
}

class NodeClient : public Napi::ObjectWrap<NodeClient> {
 public:
  static void Init(Napi::Env env, Napi::Object exports) {
    Napi::Function cls = DefineClass(
        env, "Client",
        {InstanceMethod<&NodeClient::Check>("check"), InstanceMethod<&NodeClient::CheckLocal>("checkLocal"),
         InstanceMethod<&NodeClient::CheckMany>("checkMany"), InstanceMethod<&NodeClient::CheckAsync>("checkAsync"),
         InstanceMethod<&NodeClient::CheckManyAsync>("checkManyAsync"),
         InstanceMethod<&NodeClient::Refresh>("refresh"), InstanceMethod<&NodeClient::SyncNow>("syncNow"),
         InstanceMethod<&NodeClient::SyncNowAsync>("syncNowAsync"), InstanceMethod<&NodeClient::Lists>("lists"),
         InstanceMethod<&NodeClient::Stats>("stats"), InstanceMethod<&NodeClient::Close>("close"),
         InstanceAccessor<&NodeClient::Closed>("closed")});
    Data(env)->client = Napi::Persistent(cls);
    exports.Set("Client", cls);
  }

  // new Client(dataDir, {serverUrl, publicKeyFiles, keyRotationFiles, publicKeyPems, lists, verify,
  // verifyDeadlineMs, allowlist, caBundle, proxy, asyncQueueCapacity, watch, maxNegativeCacheSeconds}).
  explicit NodeClient(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NodeClient>(info) {
    Napi::Env env = info.Env();
    ClientOptions o;
    if (!info[0].IsString()) {
      ThrowTypeError(env, "dataDir must be a string");
      return;
    }
    o.data_dir = info[0].As<Napi::String>().Utf8Value();
    std::vector<std::string> key_files, rotation_files;
    if (!info[1].IsUndefined()) {
      if (!info[1].IsObject()) {
        ThrowTypeError(env, "options must be an object");
        return;
      }
      Napi::Object opts = info[1].As<Napi::Object>();
      int64_t deadline = o.verify_deadline_ms;
      if (!StringOption(opts, "serverUrl", &o.server_url) || !StringsOption(opts, "publicKeyFiles", &key_files) ||
          !StringsOption(opts, "keyRotationFiles", &rotation_files) ||
          !StringsOption(opts, "publicKeyPems", &o.public_key_pems) || !StringsOption(opts, "lists", &o.lists) ||
          !BoolOption(opts, "verify", true, &o.verify) || !IntOption(opts, "verifyDeadlineMs", &deadline) ||
          !StringsOption(opts, "allowlist", &o.allowlist) || !StringOption(opts, "caBundle", &o.ca_bundle) ||
          !StringOption(opts, "proxy", &o.proxy) ||
          !IntOption(opts, "asyncQueueCapacity", &o.async_queue_capacity) ||
          !BoolOption(opts, "watch", true, &o.watch) ||
          !IntOption(opts, "maxNegativeCacheSeconds", &o.max_negative_cache_seconds)) {
        return;
      }
      if (deadline > 24 * 3600 * 1000) {
        ThrowStatus(env, Status::InvalidArgument("verifyDeadlineMs must be at most a day"));
        return;
      }
      o.verify_deadline_ms = static_cast<int>(deadline);
    }
    if (key_files.empty() && !rotation_files.empty()) {
      ThrowStatus(env, Status::InvalidArgument("keyRotationFiles need publicKeyFiles to start the chain"));
      return;
    }
    if (!key_files.empty()) {
      auto keys = TrustedKeys::LoadFiles(key_files, rotation_files);
      if (!keys.ok()) {
        ThrowStatus(env, keys.status());
        return;
      }
      o.trusted_keys = *keys;
    }
    auto opened = Client::Open(o);
    if (!opened.ok()) {
      ThrowStatus(env, opened.status());
      return;
    }
    client_ = std::move(opened).value();
  }

 private:
  std::shared_ptr<Client> Get(Napi::Env env) const {
    if (client_ == nullptr) ThrowStatus(env, Status::FailedPrecondition("the client is closed"));
    return client_;
  }

  static Verdict Lookup(const Client& c, std::string_view url, const CheckOptions& o, bool local) {
    return local ? c.CheckLocal(url, o) : c.Check(url, o);
  }

  // All the lookups of a batch, in order.
  static void LookupAll(const Client& c, const std::vector<std::string_view>& urls, const CheckOptions& o, bool local,
                        std::vector<Verdict>* out) {
    for (std::string_view url : urls) out->push_back(Lookup(c, url, o, local));
  }

  // check(url, {canonical}) / checkLocal(url, {canonical}).
  Napi::Value CheckWith(const Napi::CallbackInfo& info, bool local) {
    std::shared_ptr<const Client> c = Get(info.Env());
    CheckOptions o;
    if (c == nullptr || !CheckOptionsOf(info[1], &o)) return info.Env().Undefined();
    return CheckOne(info, "url", [&](std::string_view url) { return Lookup(*c, url, o, local); });
  }
  Napi::Value Check(const Napi::CallbackInfo& info) { return CheckWith(info, false); }
  Napi::Value CheckLocal(const Napi::CallbackInfo& info) { return CheckWith(info, true); }

  // checkMany(urls, {canonical, local}).
  Napi::Value CheckMany(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Client> c = Get(info.Env());
    CheckOptions o;
    bool local = false;
    if (c == nullptr || !CheckOptionsOf(info[1], &o, &local)) return info.Env().Undefined();
    return CheckBatchOf(info, "urls", [&](const std::vector<std::string_view>& urls, std::vector<Verdict>* out) {
      LookupAll(*c, urls, o, local, out);
    });
  }

  // checkAsync(url, {canonical, local}): a promise of the Verdict.
  Napi::Value CheckAsync(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Client> c = Get(info.Env());
    CheckOptions o;
    bool local = false;
    if (c == nullptr || !CheckOptionsOf(info[1], &o, &local)) return RejectPending(info.Env());
    return CheckOneAsync(info, "url", [c, o, local](std::string_view url) { return Lookup(*c, url, o, local); });
  }

  // checkManyAsync(urls, {canonical, local}): a promise of the Verdicts, in order.
  Napi::Value CheckManyAsync(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Client> c = Get(info.Env());
    CheckOptions o;
    bool local = false;
    if (c == nullptr || !CheckOptionsOf(info[1], &o, &local)) return RejectPending(info.Env());
    return CheckBatchAsync(info, "urls",
                           [c, o, local](const std::vector<std::string_view>& urls, std::vector<Verdict>* out) {
                             LookupAll(*c, urls, o, local, out);
                           });
  }

  Napi::Value Refresh(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::shared_ptr<Client> c = Get(env);
    if (c == nullptr) return env.Undefined();
    Status s = c->Refresh();
    if (!s.ok()) return ThrowStatus(env, s);
    return env.Undefined();
  }

  Napi::Value SyncNow(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::shared_ptr<Client> c = Get(env);
    if (c == nullptr) return env.Undefined();
    auto reports = c->SyncNow();
    if (!reports.ok()) return ThrowStatus(env, reports.status());
    return SyncReports(env, *reports);
  }

  Napi::Value SyncNowAsync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::shared_ptr<Client> c = Get(env);
    if (c == nullptr) return RejectPending(env);
    auto reports = std::make_shared<Result<std::vector<SyncReport>>>(Status::Internal("sync did not run"));
    return PromiseWorker::Start(
        env, env.Undefined(), [c, reports] { *reports = c->SyncNow(); },
        [reports](Napi::Env e, Napi::Value) {
          if (!reports->ok()) return ThrowStatus(e, reports->status());
          return SyncReports(e, **reports);
        });
  }

  // [{list, version, entries, createdUnix, expiresUnix, stale, staleReason, emergency, lastSyncUnix,
  // lastSyncResult, lastSyncError, nextSyncUnix, consecutiveFailures}].
  Napi::Value Lists(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::shared_ptr<const Client> c = Get(env);
    if (c == nullptr) return env.Undefined();
    std::vector<ListStatus> lists = c->Lists();
    Napi::Array out = Napi::Array::New(env, lists.size());
    auto time = [&](int64_t t) { return Napi::Number::New(env, static_cast<double>(t)); };
    for (uint32_t i = 0; i < lists.size(); ++i) {
      const ListStatus& l = lists[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("list", Str(env, l.name));
      o.Set("version", Num(env, l.version));
      o.Set("entries", Num(env, l.entries));
      o.Set("createdUnix", time(l.created_unix));
      o.Set("expiresUnix", time(l.expires_unix));
      o.Set("stale", Napi::Boolean::New(env, l.stale));
      o.Set("staleReason", Napi::String::New(env, StaleReasonName(l.stale_reason)));
      o.Set("emergency", Napi::Boolean::New(env, l.emergency));
      o.Set("lastSyncUnix", time(l.last_sync_unix));
      o.Set("lastSyncResult", Napi::String::New(env, SyncResultName(l.last_sync_result)));
      o.Set("lastSyncError", Str(env, l.last_sync_error));
      o.Set("nextSyncUnix", time(l.next_sync_unix));
      o.Set("consecutiveFailures", Num(env, l.consecutive_failures));
      out.Set(i, o);
    }
    return out;
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::shared_ptr<const Client> c = Get(env);
    if (c == nullptr) return env.Undefined();
    ClientStats s = c->Stats();
    Napi::Object by_verdict = Napi::Object::New(env);
    for (int i = 0; i < 6; ++i) by_verdict.Set(VerdictKindName(static_cast<VerdictKind>(i)), Num(env, s.by_verdict[i]));
    Napi::Object o = Napi::Object::New(env);
    o.Set("lookups", Num(env, s.lookups));
    o.Set("byVerdict", by_verdict);
    o.Set("verifications", Num(env, s.verifications));
    o.Set("verificationFailures", Num(env, s.verification_failures));
    o.Set("verificationSeconds", Napi::Number::New(env, s.verification_seconds));
    o.Set("cacheHits", Num(env, s.cache_hits));
    o.Set("cacheMisses", Num(env, s.cache_misses));
    o.Set("generation", Num(env, s.generation));
    o.Set("swaps", Num(env, s.swaps));
    return o;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    client_.reset();
    return info.Env().Undefined();
  }
  Napi::Value Closed(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), client_ == nullptr); }

  // Read and replaced on the JS thread only; async calls copy it before they leave that thread.
  std::shared_ptr<Client> client_;
};

}  // namespace

void InitClient(Napi::Env env, Napi::Object exports) { NodeClient::Init(env, exports); }

}  // namespace urlguard::node
