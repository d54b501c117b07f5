// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync_run.h"

#include <QLocale>
#include <QObject>
#include <string>

#include "urlguard/render.h"

namespace {

QString fromStd(const std::string &s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

} // namespace

QStringList SyncRun::describe() const
{
    if (!finished.isValid())
        return {};
    if (!ok)
        return {QObject::tr("Sync failed: %1").arg(error)};
    if (reports.empty())
        return {QObject::tr("Nothing to sync: no list is subscribed (--list) or installed")};
    QStringList lines;
    for (const urlguard::SyncReport &r : reports) {
        const QString list = fromStd(r.list);
        if (r.result == urlguard::SyncResult::kUpdated) {
            lines.append(QObject::tr("%1: updated %2 to %3 (%4, %5)")
                                 .arg(list)
                                 .arg(r.from_version)
                                 .arg(r.to_version)
                                 .arg(r.used_diff ? QObject::tr("diff") : QObject::tr("snapshot"),
                                      QLocale().formattedDataSize(static_cast<qint64>(r.bytes))));
        } else if (r.result == urlguard::SyncResult::kNotModified || r.result == urlguard::SyncResult::kUpToDate) {
            lines.append(QObject::tr("%1: up to date (version %2)")
                                 .arg(list)
                                 .arg(r.to_version != 0 ? r.to_version : r.from_version));
        } else if (r.result == urlguard::SyncResult::kFailed) {
            lines.append(QObject::tr("%1: failed: %2").arg(list, fromStd(r.error)));
        } else {
            lines.append(fromStd(urlguard::RenderSyncReportText(r)));
        }
    }
    return lines;
}

