// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// ListSource: where the browser's lists come from (snapshot files, a snapshot directory, or a urlguard data
// directory), and opening a data directory's Client with the checks a user needs explained.
#ifndef URLGUARD_DEMO_LIST_SOURCE_H_
#define URLGUARD_DEMO_LIST_SOURCE_H_

#include <QString>
#include <QStringList>
#include <memory>

#include "urlguard/client.h"

// Where the lists come from.
struct ListSource
{
    enum class Kind {
        None,              // no lists: browsing is unprotected
        SnapshotFiles,     // these snapshot files, offline (Checker::Open)
        SnapshotDirectory, // every *.ugs in a directory, offline (Checker::OpenDirectory)
        DataDirectory,     // a urlguard data directory (Client::Open): verification, sync, new generations
    };
    Kind kind = Kind::None;
    QString directory;              // Kind::SnapshotDirectory
    QStringList snapshots;          // Kind::SnapshotFiles
    urlguard::ClientOptions client; // Kind::DataDirectory (client.data_dir is the directory)

    // "data directory /x (server https://lists.example)", "directory /x", "2 snapshot files", "none".
    QString describe() const;
};

// Opens the Client of a data directory source. Creates a missing directory (a first sync fills it) but refuses a
// directory of bare snapshot files (that is ListSource::Kind::SnapshotDirectory) and a path that is not a
// directory. On failure returns null and sets *error (when not null) to a message naming the directory.
std::shared_ptr<urlguard::Client> openDataDirectoryClient(const urlguard::ClientOptions &options, QString *error);

#endif // URLGUARD_DEMO_LIST_SOURCE_H_
