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

namespace version_merge_internal {

// The three-way merge both classes below run, written once: "previous - removed + added" over three streams
// sorted in one order. What differs between them is passed to Next(): `next_old(Record*)` -> Result<bool> reads
// the previous version's next record (false at its end, and always false for a full version), and
// `compare(a, b)` -> int (< 0, 0, > 0) is the order the sorters used. `removed` may be null; `added` may not.
// Defined in version_merge.cc, the only place that instantiates it.
template <typename Record, typename Sorter>
class ThreeWayMerge {
 public:
  ThreeWayMerge(Sorter* removed, Sorter* added) : removed_(removed), added_(added) {}

  // The next record of the merged stream; false at the end. Fails with the inputs' errors.
  template <typename NextOld, typename Compare>
  Result<bool> Next(Record* out, const NextOld& next_old, const Compare& compare);

 private:
  // Moves old_rec_ to the next previous record that `removed` does not name.
  template <typename NextOld, typename Compare>
  Status AdvanceOld(const NextOld& next_old, const Compare& compare);

  Sorter* removed_;
  Sorter* added_;
  bool started_ = false;
  bool have_old_ = false, have_removed_ = false, have_added_ = false;
  Record old_rec_{}, removed_rec_{}, added_rec_{};
};

}  // namespace version_merge_internal

class VersionMerge {
 public:
  // `old_state` may be null (a full version). `old_to_union[i]` is the threat id the merged stream uses for the
  // state's threat i; added records keep theirs. `removed` and `added` must have been Finish()ed.
  VersionMerge(StateFileReader* old_state, std::vector<uint16_t> old_to_union, KeySorter* removed, KeySorter* added)
      : old_(old_state), old_to_union_(std::move(old_to_union)), merge_(removed, added) {}

  // The next record in ByLayerKey order; false at the end. Fails with the inputs' errors.
  Result<bool> Next(KeyRecord* out);

 private:
  Result<bool> NextOld(KeyRecord* out);  // the state's next record, its threat id mapped to the union's
  StateFileReader* old_;
  std::vector<uint16_t> old_to_union_;
  version_merge_internal::ThreeWayMerge<KeyRecord, KeySorter> merge_;
};

class ClearVersionMerge {
 public:
  // `old_list` may be null (a full version).
  ClearVersionMerge(EntryListReader* old_list, ClearSorter* removed, ClearSorter* added)
      : old_(old_list), merge_(removed, added) {}
  Result<bool> Next(ClearRecord* out);

 private:
  Result<bool> NextOld(ClearRecord* out);  // the list's next name as a ClearRecord
  EntryListReader* old_;
  version_merge_internal::ThreeWayMerge<ClearRecord, ClearSorter> merge_;
  std::string scratch_;
};

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_VERSION_MERGE_H_
