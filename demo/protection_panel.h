// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// ProtectionPanel: the side panel (a QDockWidget) that shows what urlguard is doing, refreshed live:
//   - the lists: name, version, entries, age and state (fresh / stale / emergency), a warning when a list is
//     past its signed expiry (ListStatus::stale: a "not listed" answer is then not confident), and for a data
//     directory each list's last sync (result, error, consecutive failures) and next scheduled sync;
//   - the session counters (lookups, hits, warnings, blocked subresources and invalid addresses, proceeds,
//     verified false positives);
//   - verification: which verifier is in use and the client's counts (verifications, failures, cache hits);
//   - "Sync now" (Protection::startSync: Client::SyncNow on a worker thread; disabled while a sync runs and
//     when no server or key is configured), with the result per list;
//   - "Reload lists" (Protection::reload), which picks up lists another tool changed on disk.
//
// Thread safety: UI thread.
#ifndef URLGUARD_DEMO_PROTECTION_PANEL_H_
#define URLGUARD_DEMO_PROTECTION_PANEL_H_

#include <QDockWidget>
#include <QPointer>

class QFormLayout;
class QGroupBox;
class QLabel;
class QPushButton;
class QTimer;
class QTreeWidget;
class Protection;
class Verifier;

class ProtectionPanel : public QDockWidget
{
    Q_OBJECT
public:
    static constexpr int kRefreshIntervalMs = 1000;

    // `protection` and `verifier` must outlive the panel.
    ProtectionPanel(Protection *protection, Verifier *verifier, QWidget *parent = nullptr);

    // "42 s", "5 min", "3 h 12 min", "2 d 4 h"; negative ages (clock skew) read "in the future".
    static QString formatAge(qint64 seconds);

public slots:
    // Re-reads the lists, schedule and counters from Protection (also runs every kRefreshIntervalMs).
    void refresh();
    // What the "Reload lists" button does: Protection::reload(), then shows the outcome in the panel.
    void reloadLists();
    // What the "Sync now" button does: Protection::startSync(); the result appears when the sync finishes.
    void syncNow();

private:
    QLabel *addCounter(QFormLayout *form, const QString &label, const QString &objectName);
    void showSyncStarted();
    void showSyncResult();

    QPointer<Protection> m_protection;
    QPointer<Verifier> m_verifier;
    QLabel *m_state = nullptr;
    QLabel *m_source = nullptr;
    QTreeWidget *m_lists = nullptr;
    QLabel *m_staleWarning = nullptr;
    QLabel *m_syncStatus = nullptr;
    QLabel *m_lookups = nullptr;
    QLabel *m_hits = nullptr;
    QLabel *m_warnings = nullptr;
    QLabel *m_blockedSubresources = nullptr;
    QLabel *m_blockedInvalid = nullptr;
    QLabel *m_proceeds = nullptr;
    QLabel *m_allowedAfterProceed = nullptr;
    QLabel *m_allowedAfterVerification = nullptr;
    QLabel *m_verifiedFalsePositives = nullptr;
    QLabel *m_verification = nullptr;
    QGroupBox *m_verificationBox = nullptr;
    QLabel *m_verifications = nullptr;
    QLabel *m_verificationFailures = nullptr;
    QLabel *m_cacheHits = nullptr;
    QPushButton *m_syncButton = nullptr;
    QLabel *m_syncMessage = nullptr;
    QLabel *m_reloadMessage = nullptr;
    QPushButton *m_reloadButton = nullptr;
    QTimer *m_timer = nullptr;
};

#endif // URLGUARD_DEMO_PROTECTION_PANEL_H_
