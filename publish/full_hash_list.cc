// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/full_hash_list.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "core/list_name.h"
#include "format/full_hash_file.h"

namespace urlguard {

Status WriteFullHashList(Env* env, const std::string& path, const std::string& list, uint64_t version,
                         std::vector<FullHashRecord>* records) {
  std::map<std::string, uint16_t> threat_ids;  // sorted names: ids do not depend on feed order
  for (const FullHashRecord& r : *records) {
    if (r.list != list) return Status::InvalidArgument("full-hash list: a record of another list");
    if (!IsValidThreatName(r.threat)) return Status::InvalidArgument("full-hash list: invalid threat name");
    if (threat_ids.size() < kMaxFullHashThreats + 1) threat_ids.emplace(r.threat, 0);
  }
  if (threat_ids.size() > kMaxFullHashThreats) {
    return Status::InvalidArgument("full-hash list: more than " + std::to_string(kMaxFullHashThreats) +
                                   " threat names");
  }
  std::vector<std::string> names;
  for (auto& [name, id] : threat_ids) {
    id = static_cast<uint16_t>(names.size());
    names.push_back(name);
  }
  // Stable: among equal (sha256, layer) the feed order stays, so the last one is the one kept.
  std::stable_sort(records->begin(), records->end(), [](const FullHashRecord& a, const FullHashRecord& b) {
    const int c = std::memcmp(a.sha256.data(), b.sha256.data(), a.sha256.size());
    return c != 0 ? c < 0 : a.layer < b.layer;
  });
  auto writer = FullHashFileWriter::Create(env, path, list, version, names, records->size());
  if (!writer.ok()) return writer.status();
  for (size_t i = 0; i < records->size(); ++i) {
    const FullHashRecord& r = (*records)[i];
    if (i + 1 < records->size() && (*records)[i + 1].sha256 == r.sha256 && (*records)[i + 1].layer == r.layer) {
      continue;  // a later duplicate wins
    }
    URLGUARD_RETURN_IF_ERROR(writer->Add(r.sha256, r.layer, threat_ids.at(r.threat)));
  }
  return writer->Finish();
}

}  // namespace urlguard
