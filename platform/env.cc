// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Helpers on top of any Env: they reach the OS only through the Env they are given (CheckPrivateDir also
// asks the process for its effective user).
#include "platform/env.h"

#include <unistd.h>

#include <cstdio>

namespace urlguard {

Result<std::unique_ptr<WritableFile>> CreateTempFile(Env* env, const std::string& tmp_path,
                                                     bool private_file) {
  if (Status s = env->RemoveFile(tmp_path); !s.ok() && s.code() != StatusCode::kNotFound) {
    return s.WithContext("removing a stale temporary file");
  }
  return env->NewExclusiveFile(tmp_path, private_file);
}

Status WriteFileAtomic(Env* env, const std::string& path, std::string_view data, bool private_file) {
  return WriteFileAtomicWith(env, path, [data](WritableFile& f) { return f.Append(data); }, private_file);
}

Status WriteFileAtomicWith(Env* env, const std::string& path, const std::function<Status(WritableFile&)>& write,
                           bool private_file) {
  const std::string tmp = path + ".tmp";
  Status s;
  {
    auto file = CreateTempFile(env, tmp, private_file);
    if (!file.ok()) return file.status();
    s = write(**file);
    if (s.ok()) s = (*file)->Sync();
    if (s.ok()) s = (*file)->Close();
  }
  if (s.ok()) s = env->RenameFile(tmp, path);
  if (!s.ok()) {
    (void)env->RemoveFile(tmp);
    return s;
  }
  return env->SyncDir(DirName(path));
}

Status CheckPrivateDir(Env* env, const std::string& dir) {
  auto real = env->RealPath(dir);
  if (!real.ok()) return real.status();
  auto info = env->Stat(*real);
  if (!info.ok()) return info.status();
  if (!info->is_dir) return Status::FailedPrecondition(dir + " is not a directory");
  const uint32_t euid = static_cast<uint32_t>(::geteuid());
  if (info->uid != euid) {
    return Status::PermissionDenied(dir + " is owned by uid " + std::to_string(info->uid) +
                                    ", not by this user (uid " + std::to_string(euid) + ")");
  }
  if ((info->mode & 0022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info->mode & 07777));
    return Status::PermissionDenied(dir + " is writable by " +
                                    ((info->mode & 0002) != 0 ? "every user" : "its group") + " (mode " + mode +
                                    "); chmod g-w,o-w " + dir);
  }
  return Status::Ok();
}

namespace {

Status RemoveTreeAt(Env* env, const std::string& path, int depth) {
  auto info = env->Stat(path);  // lstat: a symlink is itself, never its target
  if (!info.ok()) return info.status().code() == StatusCode::kNotFound ? Status::Ok() : info.status();
  if (!info->is_dir) {
    Status s = env->RemoveFile(path);
    return s.code() == StatusCode::kNotFound ? Status::Ok() : s;
  }
  if (depth >= kMaxRemoveTreeDepth) {
    return Status::ResourceExhausted(path + ": directories nested deeper than " +
                                     std::to_string(kMaxRemoveTreeDepth) + " levels; not removing");
  }
  auto names = env->ListDir(path);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    URLGUARD_RETURN_IF_ERROR(RemoveTreeAt(env, JoinPath(path, name), depth + 1));
  }
  Status s = env->RemoveDir(path);
  return s.code() == StatusCode::kNotFound ? Status::Ok() : s;
}

}  // namespace

Status RemoveTree(Env* env, const std::string& path) { return RemoveTreeAt(env, path, 0); }

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

}  // namespace urlguard
