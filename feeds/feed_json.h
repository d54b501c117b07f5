// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The JSON family of feed formats (docs/feeds.md): PhishTank's JSON dump and Spamhaus DROP JSON, either a
// top-level array (cut into elements by json_array.h) or one object per line; each record is parsed alone
// with nlohmann::json without exceptions.
#ifndef URLGUARD_FEEDS_FEED_JSON_H_
#define URLGUARD_FEEDS_FEED_JSON_H_

#include <string_view>

#include "feeds/feed_sink.h"
#include "urlguard/status.h"

namespace urlguard {

// Which member holds the value: "url" (PhishTank, threat phishing) or "cidr" (DROP, malicious-network;
// its metadata record is skipped).
enum class JsonKind { kPhishtank, kDrop };

// kCorruption for a feed that is neither an array nor objects, an unterminated array or bytes after it.
Status ParseJsonFeed(std::string_view data, JsonKind kind, FeedSink* sink);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_FEED_JSON_H_
