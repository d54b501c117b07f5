// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The PostgreSQL state (pg/pg_state.h) wired into the publisher and the public API
// (include/urlguard/publish.h: ListPublishOptions::state, IngestIntoState): a publish run reads its entries out
// of PostgreSQL (the entries live at the next version, streamed in sha256 order) and commits through the
// VersionStore seam. The order of a run, and what a kill at each point leaves, is in docs/runbook-publishers.md.
//
// Thread safety: functions share no state.
#ifndef URLGUARD_PUBLISH_PG_PUBLISH_H_
#define URLGUARD_PUBLISH_PG_PUBLISH_H_

#include <memory>
#include <string>

#include "pg/pg_state.h"
#include "publish/publisher.h"

namespace urlguard {

// Opens the state at `state` ("postgresql://...") into *holder and points `po` at it: po->version_store, and
// po->entry_source streaming `list`'s entries for the next version. `has_inputs`: feeds were given too, which
// PostgreSQL mode refuses (ingest them first). Failures: kInvalidArgument (not a postgresql:// state, inputs
// given), PgState::Open's.
Status AttachPgState(const std::string& state, const std::string& list, bool has_inputs,
                     std::unique_ptr<PgState>* holder, PublishOptions* po);

}  // namespace urlguard

#endif  // URLGUARD_PUBLISH_PG_PUBLISH_H_
