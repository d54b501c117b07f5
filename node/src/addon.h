// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// What the parts of the Node.js binding share (docs/node.md): the per-environment data (the JS classes that
// index.js hands over at load: UrlguardError and its subclasses, Verdict), Status -> JS error, JS string or
// Uint8Array -> bytes, library strings -> JS, and Verdict -> JS Verdict object.
//
// Built with NAPI_DISABLE_CPP_EXCEPTIONS (house style: no exceptions). A failure is a pending JS exception: every
// function here that can fail returns false (or an empty value) after throwing, and its caller returns at once.
// Every function here runs on the JS thread (it touches napi values); the lookups themselves run wherever the
// caller puts them (on the JS thread for check(), on the libuv pool for checkAsync()).
#ifndef URLGUARD_NODE_ADDON_H_
#define URLGUARD_NODE_ADDON_H_

#include <napi.h>

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "urlguard/checker.h"
#include "urlguard/status.h"

namespace urlguard::node {

constexpr int kStatusCodeCount = 10;  // StatusCode kOk..kInternal (status.h; the C API pins the numbers)

// Per Node environment (a main thread, a worker_thread, an Electron renderer): set at load, freed by Node when
// the environment goes away.
struct AddonData {
  // [0] UrlguardError (the base class), [code] the subclass of each StatusCode (index.js).
  std::array<Napi::FunctionReference, kStatusCodeCount> errors;
  Napi::FunctionReference verdict;  // index.js's Verdict class
  Napi::FunctionReference checker;  // the Checker and Client classes (for instanceof checks and new)
  Napi::FunctionReference client;
};

AddonData* Data(Napi::Env env);

// A JS error of the class for status.code(): message status.ToString(), .code (the number), .codeName, and
// .statusMessage (the message without the code name). `status` must not be ok.
Napi::Value StatusError(Napi::Env env, const Status& status);
// Throws StatusError(status); returns undefined for `return ThrowStatus(...)`.
Napi::Value ThrowStatus(Napi::Env env, const Status& status);
// Throws a TypeError with `message`; returns undefined.
Napi::Value ThrowTypeError(Napi::Env env, const std::string& message);

// The bytes of a string (as UTF-8; lone surrogates become U+FFFD) or of a Uint8Array / Buffer. A string's bytes
// are copied into *storage; an array's bytes are viewed where they are (valid while the value is alive and the
// JS thread does not run). Anything else: TypeError naming `what`, false.
bool TextOf(Napi::Value value, const char* what, std::string* storage, std::string_view* out);
// TextOf into an owned string.
bool TextCopy(Napi::Value value, const char* what, std::string* out);

// A JS string from UTF-8 bytes (invalid sequences become U+FFFD, as the JSON renderer does).
Napi::String Str(Napi::Env env, std::string_view utf8);
// null for an empty string, else Str().
Napi::Value StrOrNull(Napi::Env env, std::string_view utf8);
// A Number (exact below 2^53: list versions, counters and byte counts stay far below).
Napi::Value Num(Napi::Env env, uint64_t value);

// options[name] as a bool; `fallback` when options is undefined or the property is undefined. False after a
// TypeError when options is neither undefined nor an object.
bool BoolOption(Napi::Value options, const char* name, bool fallback, bool* out);

// The strings of a JS array of strings, appended to *out. Anything else (or an element that is not a string):
// TypeError with `message`, false.
bool StringsOf(Napi::Value array, const std::string& message, std::vector<std::string>* out);

// The options of a lookup: {canonical} into *out and, when `local` is not null, {local} into *local. False after
// a TypeError (see BoolOption).
bool CheckOptionsOf(Napi::Value options, CheckOptions* out, bool* local = nullptr);

// A JS Verdict (index.js) for `verdict` of `input` (the value that was checked, as given).
Napi::Value MakeVerdict(Napi::Env env, Napi::Value input, const Verdict& verdict);

// The inputs of a batch (checkMany, checkManyAsync): every element of a JS array as bytes, owned, so a worker
// thread can read them. False after a TypeError.
struct Texts {
  std::string bytes;              // all inputs, back to back
  std::vector<size_t> ends;       // ends[i]: one past input i in `bytes`
  std::vector<std::string_view> Views() const;
};
bool TextsOf(Napi::Value array, const char* what, Texts* out);

// An array of Verdicts for `inputs` (a JS array) and `verdicts`, in order.
Napi::Value MakeVerdicts(Napi::Env env, Napi::Array inputs, const std::vector<Verdict>& verdicts);

// A promise rejected with the exception pending in env (the argument checks of an ...Async method failed): async
// methods never throw, they reject.
Napi::Value RejectPending(Napi::Env env);

// Runs `work` on the libuv thread pool (off the JS thread: it must not touch napi values), then `done` on the JS
// thread; a promise resolves with what `done` returns, or rejects with the exception `done` left pending. `keep`
// (an object, or undefined) stays referenced until then and is handed to `done`: the inputs whose values the
// verdicts hand back.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  using Work = std::function<void()>;
  using Done = std::function<Napi::Value(Napi::Env, Napi::Value kept)>;
  // Queues the work; returns the promise.
  static Napi::Value Start(Napi::Env env, Napi::Value keep, Work work, Done done);

 protected:
  void Execute() override { work_(); }
  void OnOK() override;

 private:
  PromiseWorker(Napi::Env env, Work work, Done done)
      : Napi::AsyncWorker(env, "urlguard"), deferred_(Napi::Promise::Deferred::New(env)), work_(std::move(work)),
        done_(std::move(done)) {}
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference keep_;
  Work work_;
  Done done_;
};

// The methods that check one input or a batch, for Checker and Client alike. The caller has checked its object
// and read the options; these read info[0] (named `what` in a TypeError) and hand back Verdicts that carry the
// inputs as given.
//   lookup(std::string_view input) -> Verdict;
//   batch(const std::vector<std::string_view>& inputs, std::vector<Verdict>* out): out->at(i) for inputs[i].
// The async forms copy the inputs and run lookup / batch on the libuv pool (they must hold, by value, whatever
// they use: the shared_ptr of the Checker or Client, the options); bad inputs reject the promise.

// check(input, options) / checkHost / checkIp: on the JS thread.
template <typename Lookup>
Napi::Value CheckOne(const Napi::CallbackInfo& info, const char* what, Lookup lookup) {
  thread_local std::string storage;  // the JS thread's; no JS runs while a lookup reads it
  std::string_view input;
  if (!TextOf(info[0], what, &storage, &input)) return info.Env().Undefined();
  return MakeVerdict(info.Env(), info[0], lookup(input));
}

// checkMany(inputs, options): on the JS thread.
template <typename Batch>
Napi::Value CheckBatchOf(const Napi::CallbackInfo& info, const char* what, Batch batch) {
  Texts inputs;
  if (!TextsOf(info[0], what, &inputs)) return info.Env().Undefined();
  std::vector<Verdict> verdicts;
  batch(inputs.Views(), &verdicts);
  return MakeVerdicts(info.Env(), info[0].As<Napi::Array>(), verdicts);
}

// checkAsync(input, options): a promise of the Verdict.
template <typename Lookup>
Napi::Value CheckOneAsync(const Napi::CallbackInfo& info, const char* what, Lookup lookup) {
  Napi::Env env = info.Env();
  auto input = std::make_shared<std::string>();
  if (!TextCopy(info[0], what, input.get())) return RejectPending(env);
  auto verdict = std::make_shared<Verdict>();
  Napi::Array keep = Napi::Array::New(env, 1);
  keep.Set(0u, info[0]);
  return PromiseWorker::Start(
      env, keep, [lookup, input, verdict] { *verdict = lookup(std::string_view(*input)); },
      [verdict](Napi::Env e, Napi::Value kept) { return MakeVerdict(e, kept.As<Napi::Array>().Get(0u), *verdict); });
}

// checkManyAsync(inputs, options): a promise of the Verdicts, in order.
template <typename Batch>
Napi::Value CheckBatchAsync(const Napi::CallbackInfo& info, const char* what, Batch batch) {
  Napi::Env env = info.Env();
  auto inputs = std::make_shared<Texts>();
  if (!TextsOf(info[0], what, inputs.get())) return RejectPending(env);
  auto verdicts = std::make_shared<std::vector<Verdict>>();
  return PromiseWorker::Start(
      env, info[0], [batch, inputs, verdicts] { batch(inputs->Views(), verdicts.get()); },
      [verdicts](Napi::Env e, Napi::Value kept) { return MakeVerdicts(e, kept.As<Napi::Array>(), *verdicts); });
}

void InitChecker(Napi::Env env, Napi::Object exports);
void InitClient(Napi::Env env, Napi::Object exports);
void InitText(Napi::Env env, Napi::Object exports);

}  // namespace urlguard::node

#endif  // URLGUARD_NODE_ADDON_H_
