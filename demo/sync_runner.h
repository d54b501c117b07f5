// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// SyncRunner: "Sync now" off the UI thread. Client::SyncNow downloads and installs lists, which takes
// seconds, so it runs on a QtConcurrent worker; the outcome comes back as a SyncRun on the runner's own
// thread, where the panel can show it. One pass at a time.
//
// Thread safety: use from the thread the runner lives on (the UI thread). The worker touches only the client
// it was given, whose methods may be called from any thread (urlguard/client.h).
#ifndef URLGUARD_DEMO_SYNC_RUNNER_H_
#define URLGUARD_DEMO_SYNC_RUNNER_H_

#include <QObject>
#include <memory>

#include "sync_run.h"
#include "urlguard/client.h"

template<typename T>
class QFutureWatcher;

class SyncRunner : public QObject
{
    Q_OBJECT
public:
    explicit SyncRunner(QObject *parent = nullptr);
    ~SyncRunner() override;

    bool isRunning() const { return m_running; }
    // Runs client->SyncNow() on a worker thread; false (and nothing happens) while a pass runs or without a
    // client. The worker holds its own reference, so the client outlives the pass even if its owner drops it.
    bool start(std::shared_ptr<urlguard::Client> client);
    // The outcome of the last finished pass (SyncRun::finished is invalid before the first one).
    const SyncRun &last() const { return m_last; }
    // Forgets the last outcome (the list source changed). Not while a pass runs.
    void clear();

signals:
    // A pass ended (ok or not): last() holds its outcome and isRunning() is false. Emitted on this thread.
    void finished();

private:
    void collect();

    bool m_running = false;
    QFutureWatcher<SyncRun> *m_watcher = nullptr;
    SyncRun m_last;
};

#endif // URLGUARD_DEMO_SYNC_RUNNER_H_
