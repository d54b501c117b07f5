// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// urlguard::SyncEngine: the public face of the Syncer (sync/syncer.h).
#include "urlguard/sync.h"

#include "platform/env.h"
#include "sync/data_dir_guard.h"
#include "sync/syncer.h"
#include "sync/trusted_keys_access.h"

namespace urlguard {

const char* SyncResultName(SyncResult result) {
  switch (result) {
    case SyncResult::kNone: return "none";
    case SyncResult::kOk: return "ok";
    case SyncResult::kUpdated: return "updated";
    case SyncResult::kUpToDate: return "up_to_date";
    case SyncResult::kNotModified: return "not_modified";
    case SyncResult::kFailed: return "failed";
    case SyncResult::kUnsubscribed: return "unsubscribed";
  }
  return "unknown";
}

struct SyncEngine::Impl {
  Env* env = nullptr;
  std::unique_ptr<Syncer> syncer;
};

SyncEngine::SyncEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SyncEngine::~SyncEngine() = default;

Result<std::unique_ptr<SyncEngine>> SyncEngine::Open(const SyncOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->env = options.env != nullptr ? options.env : Env::Default();
  if (options.data_dir.empty()) return Status::InvalidArgument("no data directory");
  const DataDirMode mode = options.group_readable_data_dir ? DataDirMode::kGroupReadable : DataDirMode::kPrivate;
  // 0700 (or 0750) whatever the umask; Syncer::Open refuses a directory others own or may write.
  if (options.create_data_dir) URLGUARD_RETURN_IF_ERROR(CreateDataDir(impl->env, options.data_dir, mode));
  SyncerOptions so;
  so.data_dir = options.data_dir;
  so.server_url = options.server_url;
  so.trusted_keys = internal::TrustedKeysAccess::Keys(options.trusted_keys);
  so.high_water_resets = internal::TrustedKeysAccess::Resets(options.trusted_keys);
  so.dir_mode = mode;
  so.lists = options.lists;
  so.fetch.ca_bundle = options.ca_bundle;
  so.fetch.proxy = options.proxy;
  auto syncer = Syncer::Open(impl->env, so);
  if (!syncer.ok()) return syncer.status();
  impl->syncer = std::move(syncer).value();
  return std::unique_ptr<SyncEngine>(new SyncEngine(std::move(impl)));
}

std::vector<SyncReport> SyncEngine::RunDue(bool force) {
  return impl_->syncer->RunDue(impl_->env->NowUnixSeconds(), force);
}

std::vector<SyncReport> SyncEngine::RunDueAt(int64_t now_unix, bool force) {
  return impl_->syncer->RunDue(now_unix, force);
}

int64_t SyncEngine::NextDueUnix() const { return impl_->syncer->NextDue(); }

std::vector<std::string> SyncEngine::lists() const {
  std::vector<std::string> out;
  for (const ListSyncState& st : impl_->syncer->schedule()) out.push_back(st.list);
  return out;
}

const std::vector<std::string>& SyncEngine::warnings() const { return impl_->syncer->warnings(); }

}  // namespace urlguard
