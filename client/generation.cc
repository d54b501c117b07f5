// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "client/generation.h"

#include <algorithm>

#include "core/snapshot.h"
#include "sync/subscriptions.h"
#include "sync/time_floor.h"

namespace urlguard {
namespace {

Result<std::shared_ptr<const Generation>> LoadGenerationOnce(Env* env, const std::string& dir) {
  auto g = std::make_shared<Generation>();
  g->time_floor = ReadTimeFloor(env, dir);
  // Read before D/current: the writer records a subscription before it installs the list.
  g->subscribed = ReadSubscribedLists(env, dir);
  auto state = ReadStoreState(env, dir);
  if (!state.ok()) {
    if (state.status().code() == StatusCode::kNotFound) return std::shared_ptr<const Generation>(g);  // nothing yet
    return state.status();
  }
  g->state = *state;
  g->number = state->generation;
  g->time_floor = std::max(g->time_floor, FloorOfState(*state));
  std::vector<SnapshotView> views;
  for (const ListState& l : state->lists) {
    if (!l.installed) continue;
    const InstalledList& inst = *l.installed;
    auto mapped = env->MapReadOnly(JoinPath(dir, inst.file));
    if (!mapped.ok()) return mapped.status();
    // Installed files were verified (full SHA-256) before they became live and are never modified: structure only.
    auto view = SnapshotView::Open((*mapped)->data(), (*mapped)->size(), /*verify_checksum=*/false);
    if (!view.ok()) return view.status().WithContext(inst.file);
    if (view->version() != inst.version || view->checksum() != inst.state_sha256) {
      return Status::Corruption(inst.file + ": not the state D/current names");
    }
    views.push_back(*view);
    g->files.push_back(std::move(mapped).value());
    g->lists.push_back(inst);
  }
  g->chain = FilterChain(std::move(views));
  return std::shared_ptr<const Generation>(g);
}

}  // namespace

std::vector<std::string> ReadSubscribedLists(Env* env, const std::string& dir) {
  auto subs = ReadSubscriptions(env, dir);
  if (!subs.ok()) return {};
  return SubscribedNames(*subs);
}

Result<std::shared_ptr<const Generation>> LoadGeneration(Env* env, const std::string& dir) {
  Status last;
  for (int attempt = 0; attempt < kLoadGenerationAttempts; ++attempt) {
    auto g = LoadGenerationOnce(env, dir);
    if (g.ok()) return g;
    last = g.status();
    if (last.code() != StatusCode::kNotFound) break;  // only a vanished file is worth re-reading D/current for
  }
  return last;
}

}  // namespace urlguard
