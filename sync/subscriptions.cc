// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// D/subscriptions (sync/subscriptions.h, docs/data-dir.md §8).
#include "sync/subscriptions.h"

#include <algorithm>

namespace urlguard {
namespace {

Status LineError(size_t line, const std::string& problem) {
  return Status::Corruption("subscriptions line " + std::to_string(line) + ": " + problem);
}

}  // namespace

const char* SubscriptionOriginName(SubscriptionOrigin origin) {
  return origin == SubscriptionOrigin::kIndex ? "index" : "list";
}

std::vector<std::string> SubscribedNames(const std::vector<Subscription>& subs) {
  std::vector<std::string> out;
  out.reserve(subs.size());
  for (const Subscription& s : subs) out.push_back(s.list);
  return out;
}

Result<std::string> SerializeSubscriptions(std::vector<Subscription> subs) {
  if (subs.size() > kMaxLists) {
    return Status::InvalidArgument("subscriptions: " + std::to_string(subs.size()) + " lists, more than " +
                                   std::to_string(kMaxLists));
  }
  std::sort(subs.begin(), subs.end(), [](const Subscription& a, const Subscription& b) { return a.list < b.list; });
  std::string out(kSubscriptionsHeader);
  out += '\n';
  for (size_t i = 0; i < subs.size(); ++i) {
    if (!IsValidListName(subs[i].list)) return Status::InvalidArgument("subscriptions: invalid list name");
    if (i > 0 && subs[i].list == subs[i - 1].list) {
      return Status::InvalidArgument("subscriptions: list " + subs[i].list + " given twice");
    }
    out += SubscriptionOriginName(subs[i].origin);
    out += ' ';
    out += subs[i].list;
    out += '\n';
  }
  return out;
}

Result<std::vector<Subscription>> ParseSubscriptions(std::string_view bytes) {
  if (bytes.size() > kMaxSubscriptionsBytes) {
    return Status::ResourceExhausted("subscriptions file of " + std::to_string(bytes.size()) + " bytes (cap " +
                                     std::to_string(kMaxSubscriptionsBytes) + ")");
  }
  std::vector<Subscription> out;
  size_t line_no = 0;
  while (!bytes.empty()) {
    ++line_no;
    const size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) return LineError(line_no, "no final newline");
    const std::string_view line = bytes.substr(0, nl);
    bytes.remove_prefix(nl + 1);
    if (line_no == 1) {
      if (line != kSubscriptionsHeader) return LineError(1, "not \"" + std::string(kSubscriptionsHeader) + "\"");
      continue;
    }
    if (out.size() == kMaxLists) {
      return Status::ResourceExhausted("subscriptions: more than " + std::to_string(kMaxLists) + " lists");
    }
    Subscription s;
    std::string_view name;
    if (line.substr(0, 6) == "index ") {
      s.origin = SubscriptionOrigin::kIndex;
      name = line.substr(6);
    } else if (line.substr(0, 5) == "list ") {
      s.origin = SubscriptionOrigin::kList;
      name = line.substr(5);
    } else {
      return LineError(line_no, "not \"index NAME\" or \"list NAME\"");
    }
    if (!IsValidListName(name)) return LineError(line_no, "not a valid list name");
    if (!out.empty() && !(out.back().list < name)) {
      return LineError(line_no, "list names must be strictly ascending");
    }
    s.list = std::string(name);
    out.push_back(std::move(s));
  }
  if (line_no == 0) return LineError(1, "empty file");
  return out;
}

Result<std::vector<Subscription>> ReadSubscriptions(Env* env, const std::string& data_dir) {
  const std::string path = JoinPath(data_dir, std::string(kSubscriptionsFileName));
  auto bytes = env->ReadFile(path, kMaxSubscriptionsBytes);
  if (!bytes.ok()) return bytes.status().WithContext(path);
  auto parsed = ParseSubscriptions(*bytes);
  if (!parsed.ok()) return parsed.status().WithContext(path);
  return parsed;
}

Status WriteSubscriptions(Env* env, const std::string& data_dir, const std::vector<Subscription>& subs) {
  URLGUARD_ASSIGN_OR_RETURN(std::string bytes, SerializeSubscriptions(subs));
  return WriteFileAtomic(env, JoinPath(data_dir, std::string(kSubscriptionsFileName)), bytes,
                         /*private_file=*/false);
}

}  // namespace urlguard
