// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The JSON feed formats (contracts in feed_json.h; formats in docs/feeds.md).
#include "feeds/feed_json.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "core/ascii.h"
#include "feeds/feed_lines.h"
#include "feeds/feed_values.h"
#include "feeds/json_array.h"

namespace urlguard {
namespace {

void HandleJsonRecord(std::string_view text, uint64_t line, JsonKind kind, std::string_view where,
                      FeedSink* sink) {
  nlohmann::json object =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) {
    sink->Error(line, "malformed JSON" + std::string(where));
    return;
  }
  if (!object.is_object()) {
    sink->Error(line, "expected a JSON object" + std::string(where));
    return;
  }
  if (kind == JsonKind::kDrop) {
    // Spec (Spamhaus DROP JSON): the last line is {"type":"metadata","timestamp":...,...}.
    auto type = object.find("type");
    if (type != object.end() && type->is_string() && type->get_ref<const std::string&>() == "metadata") {
      sink->Skip();
      return;
    }
  }
  const char* key = kind == JsonKind::kDrop ? "cidr" : "url";
  auto member = object.find(key);
  if (member == object.end() || !member->is_string()) {
    sink->Error(line, std::string("object has no string \"") + key + "\" member" + std::string(where));
    return;
  }
  std::string_view value = TrimAsciiSpace(member->get_ref<const std::string&>());
  if (kind == JsonKind::kDrop) {
    if (!IsCidr(value)) {
      sink->Error(line, QuoteBytes(value) + " is not a CIDR range" + std::string(where));
      return;
    }
    sink->Add(value, kThreatMaliciousNetwork, line);
  } else {
    sink->Add(value, kThreatPhishing, line);
  }
}

}  // namespace

Status ParseJsonFeed(std::string_view data, JsonKind kind, FeedSink* sink) {
  size_t first = 0;
  while (first < data.size() && IsJsonSpace(data[first])) ++first;
  if (first == data.size()) return Status::Ok();  // an empty feed
  if (data[first] == '[') {
    return ForEachJsonArrayElement(
        data, first, kMaxFeedLineBytes,
        [&](std::string_view element, uint64_t line, std::string_view where) {
          HandleJsonRecord(element, line, kind, where, sink);
        },
        [&](uint64_t line, std::string message) { sink->Error(line, std::move(message)); });
  }
  if (data[first] != '{') {
    return Status::Corruption("expected a JSON array or one JSON object per line, found " +
                              QuoteBytes(data.substr(first, 1)));
  }
  ForEachFeedLine(data, sink, [&](std::string_view line, uint64_t number) {
    std::string_view text = TrimAsciiSpace(line);
    if (text.empty()) {
      sink->Comment();
      return;
    }
    HandleJsonRecord(text, number, kind, "", sink);
  });
  return Status::Ok();
}

}  // namespace urlguard
