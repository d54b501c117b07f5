// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// SyncRun: the outcome of one "Sync now" (Client::SyncNow) as the panel shows it.
#ifndef URLGUARD_DEMO_SYNC_RUN_H_
#define URLGUARD_DEMO_SYNC_RUN_H_

#include <QDateTime>
#include <QString>
#include <QStringList>
#include <vector>

#include "urlguard/sync.h"

// The outcome of one "Sync now" (Client::SyncNow).
struct SyncRun
{
    bool ok = false;                           // SyncNow returned reports (each may still have failed)
    QString error;                             // !ok: why no sync pass ran (e.g. another process syncs)
    std::vector<urlguard::SyncReport> reports; // ok: one per list
    QDateTime finished;                        // invalid before the first sync finished

    // One line per list for people: "phishing: updated 0 to 1 (snapshot, 948 bytes)", "malware: failed: ..."
    QStringList describe() const;
};

#endif // URLGUARD_DEMO_SYNC_RUN_H_
