// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "list_source.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <string>

namespace {

QString fromStd(const std::string &s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

// The data directory's record of what is installed (docs/data-dir.md section 1). Only its presence is looked
// at, to tell a data directory from a directory of bare snapshot files.
constexpr char kDataDirCurrentFile[] = "current";

} // namespace

std::shared_ptr<urlguard::Client> openDataDirectoryClient(const urlguard::ClientOptions &options, QString *error)
{
    const QString dir = QFile::decodeName(QByteArray::fromStdString(options.data_dir));
    QString problem;
    if (dir.isEmpty()) {
        problem = QObject::tr("no data directory given");
    } else if (!QFileInfo::exists(dir)) {
        // A fresh client: the first sync fills it.
        if (!QDir().mkpath(dir))
            problem = QObject::tr("%1: cannot create the data directory").arg(dir);
    } else if (!QFileInfo(dir).isDir()) {
        problem = QObject::tr("%1: not a directory").arg(dir);
    } else {
        const QDir d(dir);
        if (!QFileInfo::exists(d.filePath(QLatin1String(kDataDirCurrentFile)))
            && !d.entryList({QStringLiteral("*.ugs")}, QDir::Files).isEmpty()) {
            problem = QObject::tr("%1 holds snapshot files but is not a urlguard data directory (it has no "
                                  "'current' record): open the snapshots with --snapshot %1")
                              .arg(dir);
        }
    }
    if (problem.isEmpty()) {
        urlguard::Result<std::unique_ptr<urlguard::Client>> opened = urlguard::Client::Open(options);
        if (opened.ok())
            return std::shared_ptr<urlguard::Client>(std::move(opened).value());
        problem = fromStd(opened.status().ToString());
    }
    if (error)
        *error = problem;
    return nullptr;
}


QString ListSource::describe() const
{
    switch (kind) {
    case Kind::None:
        return QObject::tr("none");
    case Kind::SnapshotDirectory:
        return QObject::tr("directory %1").arg(directory);
    case Kind::DataDirectory:
        return client.server_url.empty()
                ? QObject::tr("data directory %1 (offline: no server)").arg(fromStd(client.data_dir))
                : QObject::tr("data directory %1, server %2")
                          .arg(fromStd(client.data_dir), fromStd(client.server_url));
    case Kind::SnapshotFiles:
        return snapshots.size() == 1 ? QObject::tr("snapshot %1").arg(snapshots.first())
                                     : QObject::tr("%1 snapshot files").arg(snapshots.size());
    }
    return QString();
}

