// Copyright urlguard authors.
#include "sync/data_dir_guard.h"

#include "platform/env.h"

namespace urlguard {

uint32_t DataDirPermissions(DataDirMode mode) { return mode == DataDirMode::kGroupReadable ? 0750 : 0700; }

Status CreateDataDir(Env* env, const std::string& dir, DataDirMode mode) {
  if (env->Stat(dir).ok()) return Status::Ok();
  const std::string parent = DirName(dir);
  if (parent != dir && parent != ".") URLGUARD_RETURN_IF_ERROR(env->CreateDirs(parent));
  // Exactly 0700 whatever the umask; a group-readable directory then gets its r-x bits, and nothing else.
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(dir, /*private_dir=*/true));
  if (mode != DataDirMode::kPrivate)
    URLGUARD_RETURN_IF_ERROR(env->SetPermissions(dir, DataDirPermissions(mode)));
  return Status::Ok();
}

Status CheckDataDir(Env* env, const std::string& dir) {
  Status s = CheckPrivateDir(env, dir);
  if (s.code() == StatusCode::kPermissionDenied) {
    // "data directory D is writable by its group (mode 0775); chmod g-w,o-w D: refusing it (...)"
    return Status::PermissionDenied("data directory " + s.message() +
                                    ": refusing it (whoever can write it decides every verdict)");
  }
  if (s.code() == StatusCode::kFailedPrecondition)
    return Status::FailedPrecondition("data directory " + s.message());
  return s;
}

Status CreatePrivateFileIfMissing(Env* env, const std::string& path) {
  auto file = env->NewExclusiveFile(path, /*private_file=*/true);  // exactly 0600 whatever the umask
  if (!file.ok())
    return file.status().code() == StatusCode::kFailedPrecondition ? Status::Ok() : file.status();
  return (*file)->Close();
}

Status RemoveIfNotRegularFile(Env* env, const std::string& path, bool* removed) {
  if (removed != nullptr) *removed = false;
  auto info = env->Stat(path);  // lstat: a symlink is judged as itself
  if (!info.ok()) return info.status().code() == StatusCode::kNotFound ? Status::Ok() : info.status();
  if (info->is_regular) return Status::Ok();
  URLGUARD_RETURN_IF_ERROR(RemoveTree(env, path));  // a link is removed, never its target
  if (removed != nullptr) *removed = true;
  return Status::Ok();
}

}  // namespace urlguard
