// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The module: per-environment data, the conversions of addon.h, and setup(), through which index.js hands over
// its error classes and its Verdict class once at load.
#include "addon.h"

#include <string>
#include <utility>
#include <vector>

#include "urlguard/urlguard.h"

namespace urlguard::node {

AddonData* Data(Napi::Env env) { return env.GetInstanceData<AddonData>(); }

Napi::Value StatusError(Napi::Env env, const Status& status) {
  const int code = static_cast<int>(status.code());
  AddonData* data = Data(env);
  Napi::Value args[] = {Str(env, status.ToString()), Napi::Number::New(env, code),
                        Napi::String::New(env, StatusCodeName(status.code())), Str(env, status.message())};
  Napi::FunctionReference* cls = nullptr;
  if (code > 0 && code < kStatusCodeCount && !data->errors[code].IsEmpty()) {
    cls = &data->errors[code];
  } else if (!data->errors[0].IsEmpty()) {
    cls = &data->errors[0];
  }
  if (cls != nullptr) return cls->New({args[0], args[1], args[2], args[3]});
  // Loaded without index.js (no setup()): a plain Error with the same properties.
  Napi::Error error = Napi::Error::New(env, status.ToString());
  error.Set("code", args[1]);
  error.Set("codeName", args[2]);
  error.Set("statusMessage", args[3]);
  return error.Value();
}

Napi::Value ThrowStatus(Napi::Env env, const Status& status) {
  Napi::Value error = StatusError(env, status);
  if (!env.IsExceptionPending()) Napi::Error(env, error).ThrowAsJavaScriptException();
  return env.Undefined();
}

Napi::Value ThrowTypeError(Napi::Env env, const std::string& message) {
  Napi::TypeError::New(env, message).ThrowAsJavaScriptException();
  return env.Undefined();
}

bool TextOf(Napi::Value value, const char* what, std::string* storage, std::string_view* out) {
  napi_env env = value.Env();
  if (value.IsString()) {
    // One copy when the text fits the storage's capacity (a truncated write stops short of a whole character,
    // so a result more than 4 bytes under the capacity is complete); else ask for the length first.
    if (storage->size() < 256) storage->resize(256);
    size_t len = 0;
    napi_status s = napi_get_value_string_utf8(env, value, storage->data(), storage->size(), &len);
    if (s == napi_ok && len + 4 >= storage->size()) {
      s = napi_get_value_string_utf8(env, value, nullptr, 0, &len);
      if (s == napi_ok) {
        storage->resize(len + 1);
        s = napi_get_value_string_utf8(env, value, storage->data(), len + 1, &len);
      }
    }
    if (s != napi_ok) {
      ThrowTypeError(value.Env(), std::string(what) + ": could not read the string");
      return false;
    }
    *out = std::string_view(storage->data(), len);
    return true;
  }
  if (value.IsTypedArray() && value.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    Napi::Uint8Array bytes = value.As<Napi::Uint8Array>();
    *out = std::string_view(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength());
    return true;
  }
  ThrowTypeError(value.Env(), std::string(what) + " must be a string or a Uint8Array (Buffer)");
  return false;
}

bool TextCopy(Napi::Value value, const char* what, std::string* out) {
  std::string storage;
  std::string_view view;
  if (!TextOf(value, what, &storage, &view)) return false;
  out->assign(view);
  return true;
}

Napi::String Str(Napi::Env env, std::string_view utf8) { return Napi::String::New(env, utf8.data(), utf8.size()); }

Napi::Value StrOrNull(Napi::Env env, std::string_view utf8) {
  if (utf8.empty()) return env.Null();
  return Str(env, utf8);
}

Napi::Value Num(Napi::Env env, uint64_t value) { return Napi::Number::New(env, static_cast<double>(value)); }

bool BoolOption(Napi::Value options, const char* name, bool fallback, bool* out) {
  *out = fallback;
  if (options.IsUndefined() || options.IsNull()) return true;
  if (!options.IsObject()) {
    ThrowTypeError(options.Env(), "options must be an object");
    return false;
  }
  Napi::Value v = options.As<Napi::Object>().Get(name);
  if (options.Env().IsExceptionPending()) return false;
  if (!v.IsUndefined()) *out = v.ToBoolean().Value();
  return true;
}

bool StringsOf(Napi::Value array, const std::string& message, std::vector<std::string>* out) {
  if (!array.IsArray()) {
    ThrowTypeError(array.Env(), message);
    return false;
  }
  Napi::Array a = array.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); ++i) {
    Napi::Value s = a.Get(i);
    if (!s.IsString()) {
      ThrowTypeError(array.Env(), message);
      return false;
    }
    out->push_back(s.As<Napi::String>().Utf8Value());
  }
  return true;
}

bool CheckOptionsOf(Napi::Value options, CheckOptions* out, bool* local) {
  return BoolOption(options, "canonical", false, &out->want_canonical) &&
         (local == nullptr || BoolOption(options, "local", false, local));
}

namespace {

// Verdict flags, decoded by index.js's Verdict constructor.
constexpr uint32_t kFlagStale = 1, kFlagAllowlisted = 2, kFlagEmergency = 4, kFlagFromCache = 8;

Napi::Value Matches(Napi::Env env, const Verdict& v) {
  if (v.matches.empty()) return env.Undefined();  // the constructor makes a fresh []
  Napi::Array out = Napi::Array::New(env, v.matches.size());
  for (size_t i = 0; i < v.matches.size(); ++i) {
    const Match& m = v.matches[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("list", Str(env, m.list));
    o.Set("layer", Napi::String::New(env, LayerName(m.layer)));
    o.Set("expression", Str(env, m.expression));
    o.Set("sha256", Napi::String::New(env, m.sha256_hex));
    o.Set("listVersion", Num(env, m.list_version));
    out.Set(static_cast<uint32_t>(i), o);
  }
  return out;
}

Napi::Value OrUndefined(Napi::Env env, const std::string& s) {
  return s.empty() ? env.Undefined() : Napi::Value(Str(env, s));
}

}  // namespace

Napi::Value MakeVerdict(Napi::Env env, Napi::Value input, const Verdict& v) {
  const uint32_t flags = (v.stale ? kFlagStale : 0) | (v.allowlisted ? kFlagAllowlisted : 0) |
                         (v.emergency ? kFlagEmergency : 0) | (v.from_cache ? kFlagFromCache : 0);
  AddonData* data = Data(env);
  if (data->verdict.IsEmpty()) return ThrowTypeError(env, "urlguard: load the module through index.js");
  return data->verdict.New({input, Napi::Number::New(env, static_cast<int>(v.kind)), Napi::Number::New(env, flags),
                            Matches(env, v), OrUndefined(env, v.error), OrUndefined(env, v.canonical),
                            OrUndefined(env, v.list), OrUndefined(env, v.threat)});
}

std::vector<std::string_view> Texts::Views() const {
  std::vector<std::string_view> views;
  views.reserve(ends.size());
  size_t begin = 0;
  for (size_t end : ends) {
    views.emplace_back(bytes.data() + begin, end - begin);
    begin = end;
  }
  return views;
}

bool TextsOf(Napi::Value array, const char* what, Texts* out) {
  if (!array.IsArray()) {
    ThrowTypeError(array.Env(), std::string(what) + " must be an array");
    return false;
  }
  Napi::Array a = array.As<Napi::Array>();
  const uint32_t n = a.Length();
  out->ends.reserve(n);
  std::string storage;
  for (uint32_t i = 0; i < n; ++i) {
    Napi::Value item = a.Get(i);
    std::string_view view;
    if (array.Env().IsExceptionPending() || !TextOf(item, what, &storage, &view)) return false;
    out->bytes.append(view);
    out->ends.push_back(out->bytes.size());
  }
  return true;
}

Napi::Value MakeVerdicts(Napi::Env env, Napi::Array inputs, const std::vector<Verdict>& verdicts) {
  Napi::Array out = Napi::Array::New(env, verdicts.size());
  for (uint32_t i = 0; i < verdicts.size(); ++i) {
    Napi::Value v = MakeVerdict(env, inputs.Get(i), verdicts[i]);
    if (env.IsExceptionPending()) return env.Undefined();
    out.Set(i, v);
  }
  return out;
}

Napi::Value RejectPending(Napi::Env env) {
  // Cleared first: no napi call but a few work while an exception is pending (napi_create_promise among them).
  Napi::Value error = env.GetAndClearPendingException().Value();
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  deferred.Reject(error);
  return deferred.Promise();
}

Napi::Value PromiseWorker::Start(Napi::Env env, Napi::Value keep, Work work, Done done) {
  auto* worker = new PromiseWorker(env, std::move(work), std::move(done));  // deletes itself after OnOK
  if (keep.IsObject()) worker->keep_ = Napi::Persistent(keep.As<Napi::Object>());
  Napi::Promise promise = worker->deferred_.Promise();
  worker->Queue();
  return promise;
}

void PromiseWorker::OnOK() {
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  Napi::Value result = done_(env, keep_.IsEmpty() ? env.Undefined() : keep_.Value());
  if (env.IsExceptionPending()) {
    deferred_.Reject(env.GetAndClearPendingException().Value());
  } else {
    deferred_.Resolve(result);
  }
}

namespace {

// setup({errors: [UrlguardError, InvalidArgumentError, ...] (indexed by StatusCode), Verdict}): called once by
// index.js right after loading.
Napi::Value Setup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject()) return ThrowTypeError(env, "setup: an object");
  Napi::Object o = info[0].As<Napi::Object>();
  Napi::Value errors = o.Get("errors");
  Napi::Value verdict = o.Get("Verdict");
  if (!errors.IsArray() || errors.As<Napi::Array>().Length() != kStatusCodeCount || !verdict.IsFunction()) {
    return ThrowTypeError(env, "setup: {errors: [10 classes], Verdict}");
  }
  AddonData* data = Data(env);
  for (uint32_t i = 0; i < kStatusCodeCount; ++i) {
    Napi::Value cls = errors.As<Napi::Array>().Get(i);
    if (!cls.IsFunction()) return ThrowTypeError(env, "setup: errors must be classes");
    data->errors[i] = Napi::Persistent(cls.As<Napi::Function>());
  }
  data->verdict = Napi::Persistent(verdict.As<Napi::Function>());
  return env.Undefined();
}

Napi::Object InitModule(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new AddonData());
  exports.Set("setup", Napi::Function::New(env, Setup, "setup"));
  exports.Set("version", Napi::String::New(env, ug_version()));  // the loaded liburlguard's version
  InitChecker(env, exports);
  InitClient(env, exports);
  InitText(env, exports);
  return exports;
}

}  // namespace

}  // namespace urlguard::node

// NODE_API_MODULE pastes its second argument into a name: a plain identifier, so a function at global scope.
static Napi::Object InitUrlguard(Napi::Env env, Napi::Object exports) {
  return urlguard::node::InitModule(env, exports);
}
NODE_API_MODULE(urlguard, InitUrlguard)
