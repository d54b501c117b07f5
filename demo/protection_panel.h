// Copyright urlguard authors.
//
// ProtectionPanel: the side panel (a QDockWidget) that shows what urlguard is doing — the open lists (name,
// version, entries, age), the counters (lookups, hits, warnings, blocked subresources and invalid addresses,
// proceeds), which verifier is in use — refreshed live, and a "Reload lists" button that re-opens the lists
// from disk so a list replaced by another tool (urlguard-publish, the sync daemon) is picked up.
//
// Thread safety: UI thread.
#ifndef URLGUARD_DEMO_PROTECTION_PANEL_H_
#define URLGUARD_DEMO_PROTECTION_PANEL_H_

#include <QDockWidget>
#include <QPointer>

class QFormLayout;
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
    // Re-reads the lists and counters from Protection (also runs every kRefreshIntervalMs).
    void refresh();
    // What the "Reload lists" button does: Protection::reload(), then shows the outcome in the panel.
    void reloadLists();

private:
    QLabel *addCounter(QFormLayout *form, const QString &label, const QString &objectName);

    QPointer<Protection> m_protection;
    QLabel *m_state = nullptr;
    QLabel *m_source = nullptr;
    QTreeWidget *m_lists = nullptr;
    QLabel *m_lookups = nullptr;
    QLabel *m_hits = nullptr;
    QLabel *m_warnings = nullptr;
    QLabel *m_blockedSubresources = nullptr;
    QLabel *m_blockedInvalid = nullptr;
    QLabel *m_proceeds = nullptr;
    QLabel *m_allowedAfterProceed = nullptr;
    QLabel *m_verification = nullptr;
    QLabel *m_reloadMessage = nullptr;
    QPushButton *m_reloadButton = nullptr;
    QTimer *m_timer = nullptr;
};

#endif // URLGUARD_DEMO_PROTECTION_PANEL_H_
