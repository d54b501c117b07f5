// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Generation: one installed state of a data directory — the state files D/current names, mapped, and the filter
// chain over them. Immutable once loaded; the Client swaps whole generations (client/generation_slots.h).
//
// Thread safety: a loaded Generation is read-only and may be shared by any number of threads.
#ifndef URLGUARD_CLIENT_GENERATION_H_
#define URLGUARD_CLIENT_GENERATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "client/filter_chain.h"
#include "platform/env.h"
#include "sync/store.h"
#include "urlguard/status.h"

namespace urlguard {

struct Generation {
  uint64_t number = 0;
  StoreState state;
  std::vector<std::unique_ptr<MappedFile>> files;
  std::vector<InstalledList> lists;  // parallel to chain.lists()
  FilterChain chain;
  // max(D/time-floor, the newest installed created_unix): the client never takes a time before this as now
  // (sync/time_floor.h).
  int64_t time_floor = 0;
  // The lists D/subscriptions names (sync/subscriptions.h), sorted: each one without an installed version makes
  // every verdict stale. Empty when the file is missing or damaged (then only the lists of `state` count).
  std::vector<std::string> subscribed;
};

// The names D/subscriptions lists in `dir`, sorted; empty when it is missing or damaged (the writer repairs it).
std::vector<std::string> ReadSubscribedLists(Env* env, const std::string& dir);

// How often LoadGeneration re-reads D/current when a file it names is already gone (the writer installed a newer
// version and removed the older file between our read of D/current and our mmap).
constexpr int kLoadGenerationAttempts = 8;

// Loads the generation D/current names (and D/subscriptions). A directory without D/current gives an empty generation (nothing
// installed yet). A complete generation or an error, never one with a list silently missing (that would turn
// hits into "safe"): kCorruption when a file is not the state D/current names, the store's read errors, and
// kNotFound when files kept vanishing for kLoadGenerationAttempts reads.
Result<std::shared_ptr<const Generation>> LoadGeneration(Env* env, const std::string& dir);

}  // namespace urlguard

#endif  // URLGUARD_CLIENT_GENERATION_H_
