// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Text tools (urlguard/text.h): canonicalize(), expressionSha256() and scan() (index.js adds extractUrls() and
// each found URL's text). For a string, the offsets of a found URL index the string (UTF-16 code units, so
// text.slice(u.begin, u.end) is the URL as written); for a Uint8Array they are byte offsets, as in the C++ API.
#include <string>
#include <string_view>

#include "addon.h"
#include "urlguard/checker.h"
#include "urlguard/text.h"

namespace urlguard::node {
namespace {

Napi::Value Canonical(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string storage;
  std::string_view url;
  if (!TextOf(info[0], "url", &storage, &url)) return env.Undefined();
  auto form = Canonicalize(url);
  if (!form.ok()) return ThrowStatus(env, form.status());
  Napi::Array expressions = Napi::Array::New(env, form->expressions.size());
  for (uint32_t i = 0; i < form->expressions.size(); ++i) {
    const UrlExpression& e = form->expressions[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("expression", Str(env, e.expression));
    o.Set("layer", Napi::String::New(env, LayerName(e.layer)));
    o.Set("sha256", Napi::String::New(env, e.sha256_hex));
    expressions.Set(i, o);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("input", info[0]);
  out.Set("url", Str(env, form->url));
  out.Set("scheme", Str(env, form->scheme));
  out.Set("host", Str(env, form->host));
  out.Set("path", Str(env, form->path));
  out.Set("query", form->has_query ? Napi::Value(Str(env, form->query)) : env.Null());
  out.Set("expressions", expressions);
  return out;
}

Napi::Value ExpressionSha256(const Napi::CallbackInfo& info) {
  std::string storage;
  std::string_view expression;
  if (!TextOf(info[0], "expression", &storage, &expression)) return info.Env().Undefined();
  return Napi::String::New(info.Env(), ExpressionSha256Hex(expression));
}

// Maps increasing UTF-8 byte offsets of a JS string's bytes to UTF-16 indices in one pass. The bytes come from
// V8 and are valid UTF-8: a 4-byte sequence is a surrogate pair (two code units), any other sequence one.
class Utf16Counter {
 public:
  explicit Utf16Counter(std::string_view text) : text_(text) {}
  size_t IndexOf(size_t byte_offset) {
    for (; byte_ < byte_offset && byte_ < text_.size(); ++byte_) {
      const unsigned char b = static_cast<unsigned char>(text_[byte_]);
      if ((b & 0xC0) != 0x80) index_ += b >= 0xF0 ? 2 : 1;
    }
    return index_;
  }

 private:
  std::string_view text_;
  size_t byte_ = 0;
  size_t index_ = 0;
};

// scan(text): {urls: [{begin, end, url, defanged, hadScheme, cut}], truncated, scannedBytes}.
Napi::Value Scan(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string storage;
  std::string_view text;
  if (!TextOf(info[0], "text", &storage, &text)) return env.Undefined();
  const bool is_string = info[0].IsString();
  FoundUrls found = ExtractUrls(text);
  Utf16Counter counter(text);
  Napi::Array urls = Napi::Array::New(env, found.urls.size());
  for (uint32_t i = 0; i < found.urls.size(); ++i) {
    const FoundUrl& u = found.urls[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("begin", Num(env, is_string ? counter.IndexOf(u.begin) : u.begin));
    o.Set("end", Num(env, is_string ? counter.IndexOf(u.end) : u.end));
    o.Set("url", Str(env, u.url));
    o.Set("defanged", Napi::Boolean::New(env, u.defanged));
    o.Set("hadScheme", Napi::Boolean::New(env, u.had_scheme));
    o.Set("cut", Napi::Boolean::New(env, u.cut));
    urls.Set(i, o);
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("urls", urls);
  out.Set("truncated", Napi::Boolean::New(env, found.truncated));
  out.Set("scannedBytes", Num(env, found.scanned_bytes));
  return out;
}

}  // namespace

void InitText(Napi::Env env, Napi::Object exports) {
  exports.Set("canonicalize", Napi::Function::New(env, Canonical, "canonicalize"));
  exports.Set("expressionSha256", Napi::Function::New(env, ExpressionSha256, "expressionSha256"));
  exports.Set("scan", Napi::Function::New(env, Scan, "scan"));
  exports.Set("MAX_SCANNED_TEXT_BYTES", Num(env, kMaxScannedTextBytes));
  exports.Set("MAX_FOUND_URLS_PER_TEXT", Num(env, kMaxFoundUrlsPerText));
  exports.Set("MAX_FOUND_URL_BYTES", Num(env, kMaxFoundUrlBytes));
}

}  // namespace urlguard::node
