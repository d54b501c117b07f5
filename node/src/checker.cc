// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard.Checker: offline lookups against snapshot files (urlguard/checker.h). check() and checkMany() run on
// the JS thread (a lookup costs about a microsecond); checkAsync() and checkManyAsync() run on the libuv thread
// pool and resolve a promise. close() drops the object's reference to the Checker; a call in flight holds its
// own reference, so the mappings go away only when the last lookup has returned (the Checker must not be
// destroyed during a call: checker.h).
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "addon.h"
#include "urlguard/checker.h"

namespace urlguard::node {
namespace {

// The paths of a string or of an array of strings. False after a TypeError.
bool PathsOf(Napi::Value value, std::vector<std::string>* out) {
  if (value.IsString()) {
    out->push_back(value.As<Napi::String>().Utf8Value());
    return true;
  }
  return StringsOf(value, "paths must be a string or an array of strings", out);
}

bool OpenOptionsOf(Napi::Value options, OpenOptions* out) {
  return BoolOption(options, "verifyChecksum", true, &out->verify_checksum);
}

class NodeChecker : public Napi::ObjectWrap<NodeChecker> {
 public:
  static void Init(Napi::Env env, Napi::Object exports) {
    Napi::Function cls = DefineClass(
        env, "Checker",
        {StaticMethod<&NodeChecker::OpenDirectory>("openDirectory"),
         InstanceMethod<&NodeChecker::Check>("check"), InstanceMethod<&NodeChecker::CheckMany>("checkMany"),
         InstanceMethod<&NodeChecker::CheckAsync>("checkAsync"),
         InstanceMethod<&NodeChecker::CheckManyAsync>("checkManyAsync"),
         InstanceMethod<&NodeChecker::CheckHost>("checkHost"), InstanceMethod<&NodeChecker::CheckIp>("checkIp"),
         InstanceMethod<&NodeChecker::Lists>("lists"), InstanceMethod<&NodeChecker::Close>("close"),
         InstanceAccessor<&NodeChecker::Closed>("closed")});
    Data(env)->checker = Napi::Persistent(cls);
    exports.Set("Checker", cls);
  }

  // new Checker(paths, {verifyChecksum}); openDirectory() passes an opened Checker as an External.
  explicit NodeChecker(const Napi::CallbackInfo& info) : Napi::ObjectWrap<NodeChecker>(info) {
    Napi::Env env = info.Env();
    if (info[0].IsExternal()) {
      checker_ = std::move(*info[0].As<Napi::External<std::unique_ptr<Checker>>>().Data());
      return;
    }
    std::vector<std::string> paths;
    OpenOptions o;
    if (!PathsOf(info[0], &paths) || !OpenOptionsOf(info[1], &o)) return;
    auto opened = Checker::Open(paths, o);
    if (!opened.ok()) {
      ThrowStatus(env, opened.status());
      return;
    }
    checker_ = std::move(opened).value();
  }

 private:
  static Napi::Value OpenDirectory(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!info[0].IsString()) return ThrowTypeError(env, "directory must be a string");
    OpenOptions o;
    if (!OpenOptionsOf(info[1], &o)) return env.Undefined();
    auto opened = Checker::OpenDirectory(info[0].As<Napi::String>().Utf8Value(), o);
    if (!opened.ok()) return ThrowStatus(env, opened.status());
    std::unique_ptr<Checker> checker = std::move(opened).value();
    return Data(env)->checker.New({Napi::External<std::unique_ptr<Checker>>::New(env, &checker)});
  }

  // The Checker, or a FailedPreconditionError when closed (thrown: nullptr).
  std::shared_ptr<const Checker> Get(Napi::Env env) const {
    if (checker_ == nullptr) ThrowStatus(env, Status::FailedPrecondition("the checker is closed"));
    return checker_;
  }

  Napi::Value Check(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Checker> c = Get(info.Env());
    CheckOptions o;
    if (c == nullptr || !CheckOptionsOf(info[1], &o)) return info.Env().Undefined();
    return CheckOne(info, "url", [&](std::string_view url) { return c->Check(url, o); });
  }

  Napi::Value CheckMany(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Checker> c = Get(info.Env());
    CheckOptions o;
    if (c == nullptr || !CheckOptionsOf(info[1], &o)) return info.Env().Undefined();
    return CheckBatchOf(info, "urls", [&](const std::vector<std::string_view>& urls, std::vector<Verdict>* out) {
      c->CheckBatch(urls, out, o);
    });
  }

  // Async methods reject instead of throwing (bad arguments, a closed checker).
  Napi::Value CheckAsync(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Checker> c = Get(info.Env());
    CheckOptions o;
    if (c == nullptr || !CheckOptionsOf(info[1], &o)) return RejectPending(info.Env());
    return CheckOneAsync(info, "url", [c, o](std::string_view url) { return c->Check(url, o); });
  }

  Napi::Value CheckManyAsync(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Checker> c = Get(info.Env());
    CheckOptions o;
    if (c == nullptr || !CheckOptionsOf(info[1], &o)) return RejectPending(info.Env());
    return CheckBatchAsync(info, "urls", [c, o](const std::vector<std::string_view>& urls, std::vector<Verdict>* out) {
      c->CheckBatch(urls, out, o);
    });
  }

  Napi::Value CheckHost(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Checker> c = Get(info.Env());
    if (c == nullptr) return info.Env().Undefined();
    return CheckOne(info, "host", [&](std::string_view host) { return c->CheckHost(host); });
  }

  Napi::Value CheckIp(const Napi::CallbackInfo& info) {
    std::shared_ptr<const Checker> c = Get(info.Env());
    if (c == nullptr) return info.Env().Undefined();
    return CheckOne(info, "ip", [&](std::string_view ip) { return c->CheckIp(ip); });
  }

  // [{name, version, createdUnix, entries, layers: {domain: {entries, filter}, ...}, bytes, path, sha256}].
  Napi::Value Lists(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::shared_ptr<const Checker> c = Get(env);
    if (c == nullptr) return env.Undefined();
    std::vector<ListInfo> lists = c->Lists();
    Napi::Array out = Napi::Array::New(env, lists.size());
    for (uint32_t i = 0; i < lists.size(); ++i) {
      const ListInfo& l = lists[i];
      Napi::Object layers = Napi::Object::New(env);
      for (int k = 0; k < 3; ++k) {
        if (l.layer_filter[k].empty()) continue;
        Napi::Object layer = Napi::Object::New(env);
        layer.Set("entries", Num(env, l.layer_entries[k]));
        layer.Set("filter", Napi::String::New(env, l.layer_filter[k]));
        layers.Set(LayerName(static_cast<Layer>(k)), layer);
      }
      Napi::Object o = Napi::Object::New(env);
      o.Set("name", Str(env, l.name));
      o.Set("version", Num(env, l.version));
      o.Set("createdUnix", Napi::Number::New(env, static_cast<double>(l.created_unix)));
      o.Set("entries", Num(env, l.entries));
      o.Set("layers", layers);
      o.Set("bytes", Num(env, l.bytes));
      o.Set("path", Str(env, l.path));
      o.Set("sha256", Napi::String::New(env, l.sha256_hex));
      out.Set(i, o);
    }
    return out;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    checker_.reset();
    return info.Env().Undefined();
  }
  Napi::Value Closed(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), checker_ == nullptr); }

  // Read and replaced on the JS thread only; async calls copy it before they leave that thread.
  std::shared_ptr<const Checker> checker_;
};

}  // namespace

void InitChecker(Napi::Env env, Napi::Object exports) { NodeChecker::Init(env, exports); }

}  // namespace urlguard::node
