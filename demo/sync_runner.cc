// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "sync_runner.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <utility>

SyncRunner::SyncRunner(QObject *parent) : QObject(parent) { }

SyncRunner::~SyncRunner() = default;

bool SyncRunner::start(std::shared_ptr<urlguard::Client> client)
{
    if (m_running || !client)
        return false;
    m_running = true;
    if (!m_watcher) {
        m_watcher = new QFutureWatcher<SyncRun>(this);
        connect(m_watcher, &QFutureWatcherBase::finished, this, &SyncRunner::collect);
    }
    m_watcher->setFuture(QtConcurrent::run([client = std::move(client)] {
        SyncRun outcome;
        urlguard::Result<std::vector<urlguard::SyncReport>> reports = client->SyncNow();
        outcome.ok = reports.ok();
        if (reports.ok())
            outcome.reports = std::move(reports).value();
        else
            outcome.error = QString::fromStdString(reports.status().ToString());
        outcome.finished = QDateTime::currentDateTime();
        return outcome;
    }));
    return true;
}

void SyncRunner::clear()
{
    Q_ASSERT(!m_running);
    m_last = SyncRun();
}

void SyncRunner::collect()
{
    m_last = m_watcher->result();
    m_running = false;
    emit finished();
}
