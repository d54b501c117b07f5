// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync/data_dir_guard.h"

#include <unistd.h>

#include <cstdio>
#include <vector>

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

namespace {

std::string Octal(uint32_t mode) {
  char out[8];
  std::snprintf(out, sizeof out, "%04o", static_cast<unsigned>(mode & 07777));
  return out;
}

std::string Uid(uint32_t uid) { return "uid " + std::to_string(uid); }

Status Refuse(const std::string& dir, const std::string& what) {
  // "data directory D: its parent P is writable by every user (mode 0777) without the sticky bit, so another
  // user can rename it away and put their own in its place; chmod g-w,o-w P (or chmod +t P): refusing it (...)".
  // "Parent" is any directory on the way, not only the nearest.
  return Status::PermissionDenied("data directory " + dir + ": " + what +
                                  ": refusing it (whoever can write it decides every verdict)");
}

// The rule for a directory on the way to D (docs/data-dir.md §1.1): owned by this user or root, and writable
// by nobody else unless sticky (then others cannot rename or remove what they do not own).
Status CheckAncestor(const std::string& dir, const std::string& path, const FileInfo& info, uint32_t euid) {
  if (info.uid != euid && info.uid != 0) {
    return Refuse(dir, "its parent " + path + " is owned by " + Uid(info.uid) + ", neither this user (" +
                           Uid(euid) + ") nor root, so that user can rename it away and put their own in its " +
                           "place; chown " + std::to_string(euid) + " " + path + " or move the data directory");
  }
  if ((info.mode & 0022) != 0 && (info.mode & 01000) == 0) {
    const std::string who = (info.mode & 0002) != 0 ? "every user" : "its group";
    return Refuse(dir, "its parent " + path + " is writable by " + who + " (mode " + Octal(info.mode) +
                           ") without the sticky bit, so another user can rename it away and put their own in " +
                           "its place; chmod g-w,o-w " + path + " (or chmod +t " + path + ")");
  }
  return Status::Ok();
}

// Splits `path` into its components ("", "." are dropped; ".." is kept).
void PushComponents(const std::string& path, std::vector<std::string>* stack) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t next = path.find('/', pos);
    if (next == std::string::npos) next = path.size();
    std::string part = path.substr(pos, next - pos);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    pos = next + 1;
  }
  // The stack is consumed from the back: push in reverse so the first component comes out first.
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) stack->push_back(*it);
}

// D itself (docs/data-dir.md §1.1): writable by neither its group nor others; its owner per `access`.
Status CheckDataDirItself(const std::string& dir, const std::string& at, const FileInfo& info, bool parent_shared,
                          DataDirAccess access, uint32_t euid) {
  const bool owner_ok = access == DataDirAccess::kWrite
                            ? info.uid == euid
                            // A reader of a group-readable D accepts the writer's user as its owner, unless
                            // anyone could have made D: in a shared sticky parent, only this user or root.
                            : info.uid == euid || info.uid == 0 || !parent_shared;
  if (!owner_ok) {
    return Refuse(dir, "it is owned by " + Uid(info.uid) + ", not by this user (" + Uid(euid) + "); chown " +
                           std::to_string(euid) + " " + at);
  }
  if ((info.mode & 0022) != 0) {
    return Refuse(dir, "it is writable by " + std::string((info.mode & 0002) != 0 ? "every user" : "its group") +
                           " (mode " + Octal(info.mode) + "); chmod g-w,o-w " + at);
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Directory>> OpenTrustedDataDir(Env* env, const std::string& dir, DataDirAccess access,
                                                      std::string* resolved) {
  const uint32_t euid = static_cast<uint32_t>(::geteuid());
  std::vector<std::string> todo;  // components still to walk, the next one at the back
  PushComponents(dir, &todo);
  if (dir.empty() || dir[0] != '/') {
    auto cwd = env->RealPath(".");
    if (!cwd.ok()) return cwd.status().WithContext("data directory " + dir);
    std::vector<std::string> cwd_parts;
    PushComponents(*cwd, &cwd_parts);
    todo.insert(todo.end(), cwd_parts.begin(), cwd_parts.end());  // walked first, and checked like the rest
  }
  // The walk holds a descriptor of the directory reached so far (`at`, its path, never contains a symlink) and
  // opens the next component relative to it without following anything: what is judged is what is held, and
  // the walk ends holding D, so no rename after the check can change which directory the caller uses.
  auto cur = env->OpenDirectory("/");
  if (!cur.ok()) return cur.status().WithContext("data directory " + dir);
  std::string at = "/";
  auto root = (*cur)->Stat();
  if (!root.ok()) return root.status();
  URLGUARD_RETURN_IF_ERROR(CheckAncestor(dir, "/", *root, euid));
  int links = 0;
  while (!todo.empty()) {
    const std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == "..") {  // the held directory's own parent (`at` holds no symlink: its lexical parent)
      auto up = (*cur)->OpenDirectoryAt("..");
      if (!up.ok()) return up.status();
      cur = std::move(up);
      at = DirName(at);
      continue;
    }
    const std::string path = JoinPath(at, part);
    auto info = (*cur)->StatAt(part);  // fstatat(AT_SYMLINK_NOFOLLOW): a symlink is judged before it is followed
    if (!info.ok()) return info.status();
    if (info->is_symlink) {
      if (++links > kMaxDataDirSymlinks) {
        return Status::FailedPrecondition("data directory " + dir + ": more than " +
                                          std::to_string(kMaxDataDirSymlinks) + " symbolic links on the way");
      }
      // A link in a directory others may write (a sticky /tmp) is theirs to point anywhere: followed only
      // when this user or root made it (as the kernel's fs.protected_symlinks does for sticky directories).
      if (info->uid != euid && info->uid != 0) {
        return Refuse(dir, path + " is a symbolic link owned by " + Uid(info->uid) +
                               ", neither this user nor root; not following it (rm " + path +
                               " and make the directory or a link of your own)");
      }
      auto target = (*cur)->ReadLinkAt(part);
      if (!target.ok()) return target.status();
      if (!target->empty() && (*target)[0] == '/') {  // absolute: the walk goes on from "/"
        auto top = env->OpenDirectory("/");
        if (!top.ok()) return top.status();
        cur = std::move(top);
        at = "/";
      }
      PushComponents(*target, &todo);  // relative: from the link's directory, still held
      continue;
    }
    if (!info->is_dir) {
      return Status::FailedPrecondition("data directory " + dir + ": " + path + " is not a directory");
    }
    auto next = (*cur)->OpenDirectoryAt(part);  // O_NOFOLLOW: swapped for a link since the fstatat: refused
    if (!next.ok()) return next.status().WithContext("data directory " + dir);
    auto held = (*next)->Stat();  // judge the directory actually held, not the one fstatat saw
    if (!held.ok()) return held.status();
    // Every directory on the way, D's parent included; D itself is judged below by the stricter rule.
    if (!todo.empty()) URLGUARD_RETURN_IF_ERROR(CheckAncestor(dir, path, *held, euid));
    cur = std::move(next);
    at = path;
  }

  // D itself: the held directory, and the parent it sits in.
  std::unique_ptr<Directory> d = std::move(cur).value();
  auto info = d->Stat();
  if (!info.ok()) return info.status();
  auto parent = d->StatAt("..");
  if (!parent.ok()) return parent.status();
  const bool parent_shared = (parent->mode & 0022) != 0;  // then sticky, or CheckAncestor refused it
  URLGUARD_RETURN_IF_ERROR(CheckDataDirItself(dir, at, *info, parent_shared, access, euid));
  if (resolved != nullptr) *resolved = at;
  return d;
}

Status CheckHeldDataDir(Directory* held, const std::string& dir, DataDirAccess access) {
  auto info = held->Stat();
  if (!info.ok()) return info.status().WithContext("data directory " + dir);
  auto parent = held->StatAt("..");
  if (!parent.ok()) return parent.status().WithContext("data directory " + dir);
  return CheckDataDirItself(dir, dir, *info, (parent->mode & 0022) != 0, access,
                            static_cast<uint32_t>(::geteuid()));
}

Status NameHeldDataDir(Status s, const std::string& held_path, const std::string& dir) {
  if (s.ok() || held_path.empty()) return s;
  std::string m = s.message();
  for (size_t at = m.find(held_path); at != std::string::npos; at = m.find(held_path, at + dir.size())) {
    m.replace(at, held_path.size(), dir);
  }
  return Status(s.code(), std::move(m));
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
