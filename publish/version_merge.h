// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// VersionMerge: the content of a new version as one sorted stream, "previous state - removed + added" (an
// incremental version) or just "added" (a full one, where the added records are the whole input). Inputs are
// sorted streams in the same order, so the merge is one forward pass over each, in bounded memory: a 50 k-change
// version of a 100 M list reads the previous state once instead of re-reading and re-hashing every feed.
// Rules: a removed entry drops the previous state's record of it (not an added one); an entry both in the state
// and added keeps the added record (its threat name).
//
// ClearVersionMerge does the same for the DNS export's names in clear (publish/entry_list.h).
//
// Thread safety: none; one thread drives a merge.
#ifndef URLGUARD_PUBLISH_VERSION_MERGE_H_
#define URLGUARD_PUBLISH_VERSION_MERGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "publish/entry_list.h"
#include "publish/ingest.h"
#include "publish/state_file.h"
#include "urlguard/status.h"

namespace urlguard {

class VersionMerge {
 public:
  // `old_state` may be null (a full version). `old_to_union[i]` is the threat id the merged stream uses for the
  // state's threat i; added records keep theirs. `removed` and `added` must have been Finish()ed.
  VersionMerge(StateFileReader* old_state, std::vector<uint16_t> old_to_union, KeySorter* removed, KeySorter* added)
      : old_(old_state), old_to_union_(std::move(old_to_union)), removed_(removed), added_(added) {}

  // The next record in ByLayerKey order; false at the end. Fails with the inputs' errors.
  Result<bool> Next(KeyRecord* out);

 private:
  Result<bool> AdvanceOld();  // the next state record not removed
  StateFileReader* old_;
  std::vector<uint16_t> old_to_union_;
  KeySorter* removed_;
  KeySorter* added_;
  bool started_ = false;
  bool have_old_ = false, have_removed_ = false, have_added_ = false;
  KeyRecord old_rec_, removed_rec_, added_rec_;
};

class ClearVersionMerge {
 public:
  // `old_list` may be null (a full version).
  ClearVersionMerge(EntryListReader* old_list, ClearSorter* removed, ClearSorter* added)
      : old_(old_list), removed_(removed), added_(added) {}
  Result<bool> Next(ClearRecord* out);

 private:
  Result<bool> NextOldRaw(ClearRecord* out);
  Result<bool> AdvanceOld();
  EntryListReader* old_;
  ClearSorter* removed_;
  ClearSorter* added_;
  bool started_ = false;
  bool have_old_ = false, have_removed_ = false, have_added_ = false;
  ClearRecord old_rec_, removed_rec_, added_rec_;
  std::string scratch_;
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_VERSION_MERGE_H_
