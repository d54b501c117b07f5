// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/list_index_writer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/list_name.h"
#include "format/manifest.h"
#include "format/repository_files.h"
#include "publish/repo_lock.h"
#include "urlguard/publish.h"

namespace urlguard {

std::string SerializeListIndex(const ListIndex& index) {
  if (Status s = ValidateListIndex(index); !s.ok()) {
    std::fprintf(stderr, "urlguard: SerializeListIndex of an invalid index: %s\n", s.ToString().c_str());
    std::abort();
  }
  // Changes the canonical bytes: update docs/list-index.md §2 and the golden test. Strings are written without
  // escaping: a valid list name is [a-z0-9_-].
  std::string out = "{\n  \"created_unix\": " + std::to_string(index.created_unix) + ",\n  \"format\": " +
                    std::to_string(index.format) + ",\n  \"lists\": [";
  for (size_t i = 0; i < index.lists.size(); ++i) {
    const ListIndexEntry& e = index.lists[i];
    out += i == 0 ? "\n" : ",\n";
    out += "    {\n      \"created_unix\": " + std::to_string(e.created_unix) + ",\n      \"expires_unix\": " +
           std::to_string(e.expires_unix) + ",\n      \"name\": \"" + e.name + "\",\n      \"version\": " +
           std::to_string(e.version) + "\n    }";
  }
  out += index.lists.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string MakeListIndexSignatureFile(const SigningKey& key, std::string_view index_bytes) {
  std::string message(kListIndexSignatureDomain);
  message.append(index_bytes);
  return FormatSignatureLine(key.public_key(), key.Sign(message));
}

Result<ListIndex> BuildListIndex(Env* env, const std::string& repo_dir, int64_t now_unix) {
  const std::string lists_dir = PublicListsDir(repo_dir);
  ListIndex index;
  index.created_unix = now_unix;
  auto names = env->ListDir(lists_dir);
  if (!names.ok()) return names.status();
  std::vector<std::string> sorted = *names;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& name : sorted) {
    if (!IsValidListName(name)) continue;  // index.json, index.sig, anything that is no list directory
    const std::string path = JoinPath(JoinPath(lists_dir, name), kManifestFileName);
    if (!env->FileExists(path)) continue;  // a list whose first publication has not reached its manifest yet
    auto bytes = env->ReadFile(path, kMaxManifestBytes);
    if (!bytes.ok()) return bytes.status();
    auto m = ParseManifest(*bytes);
    if (!m.ok()) return m.status().WithContext(path);
    if (m->list != name) return Status::Corruption(path + ": manifest of list " + m->list);
    if (index.lists.size() == kMaxListIndexLists) {
      return Status::ResourceExhausted("more than " + std::to_string(kMaxListIndexLists) +
                                       " lists: the list index cannot name them all");
    }
    index.lists.push_back({name, m->version, m->created_unix, m->expires_unix});
  }
  return index;
}

Result<ListIndex> WriteListIndex(Env* env, const SigningKey& key, const std::string& repo_dir, int64_t now_unix) {
  URLGUARD_RETURN_IF_ERROR(env->CreateDirs(RepoPrivateDir(repo_dir)));
  URLGUARD_ASSIGN_OR_RETURN(auto lock, LockFileWaiting(env, IndexLockPath(repo_dir), kIndexLockWaitMillis));
  // Built under the lock: every manifest written before the lock was taken is in it.
  URLGUARD_ASSIGN_OR_RETURN(ListIndex index, BuildListIndex(env, repo_dir, now_unix));
  const std::string bytes = SerializeListIndex(index);
  const std::string public_dir = RepoPublicDir(repo_dir);
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, JoinPath(public_dir, ListIndexSignaturePath()),
                                           MakeListIndexSignatureFile(key, bytes)));
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, JoinPath(public_dir, ListIndexPath()), bytes));
  return index;
}

Result<size_t> RewriteListIndex(const std::string& repo_dir, const std::string& private_key_path, Env* env) {
  if (env == nullptr) env = Env::Default();
  auto key = LoadSigningKey(env, private_key_path);
  if (!key.ok()) return key.status();
  URLGUARD_ASSIGN_OR_RETURN(ListIndex index, WriteListIndex(env, *key, repo_dir, env->NowUnixSeconds()));
  return index.lists.size();
}

}  // namespace urlguard
