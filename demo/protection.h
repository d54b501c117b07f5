// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Protection: the browser's urlguard state and policy, in one object the interceptor, the urlguard: scheme
// handler, the verifier and the side panel share.
//
// It owns where the lists come from — a urlguard::Client on a data directory (--data-dir: it follows new list
// generations by itself, verifies hits, and can sync), or an offline urlguard::Checker on snapshot files
// (--snapshot: local verdicts only) — decides what happens to each request (allow, block, or redirect a main
// frame to the warning page) and counts what it did. What the user accepted despite a warning is kept by a
// SessionExemptions (demo/session_exemptions.h), which decide() consults; "Sync now" runs on a SyncRunner
// (demo/sync_runner.h).
//
// The decision is a local lookup only (Checker::Check or Client::CheckLocal, about a microsecond): no I/O, no
// lock, no waiting, so it can run inside QWebEngineUrlRequestInterceptor::interceptRequest on the UI thread.
// Verification, which needs the network, happens later on the warning page (see Verifier).
//
// Thread safety: UI thread only (Qt 6 calls request interceptors and scheme handlers there). The checker and
// the client are held by shared_ptrs so that off-thread users (the sync worker) keep them alive across a
// source change.
#ifndef URLGUARD_DEMO_PROTECTION_H_
#define URLGUARD_DEMO_PROTECTION_H_

#include <QObject>
#include <QString>
#include <QUrl>
#include <memory>
#include <vector>

#include "list_source.h"
#include "session_exemptions.h"
#include "sync_run.h"
#include "urlguard/checker.h"
#include "urlguard/client.h"

class SyncRunner;

// The scheme of the browser's own protection pages (urlguard:warning, urlguard:proceed).
inline constexpr char kUrlGuardScheme[] = "urlguard";

// Counters since the Protection was created (they survive a list reload).
struct ProtectionCounters
{
    quint64 lookups = 0;                  // local lookups of requests (Checker::Check, Client::CheckLocal)
    quint64 hits = 0;                     // lookups that matched a list (main frames and subresources)
    quint64 warnings = 0;                 // main-frame navigations redirected to the warning page
    quint64 blockedSubresources = 0;      // images, scripts, frames, XHRs... that hit a list and were blocked
    quint64 blockedInvalid = 0;           // requests blocked because the URL has no canonical form
    quint64 proceeds = 0;                 // "Proceed anyway" clicks honoured
    quint64 allowedAfterProceed = 0;      // hits let through because the user had proceeded
    quint64 allowedAfterVerification = 0; // hits let through because a verifier showed a false positive
    quint64 verifiedFalsePositives = 0;   // hits a verifier reported as filter false positives
    quint64 syncs = 0;                    // "Sync now" passes finished (ok or not)
};

class QTimer;

class Protection : public QObject
{
    Q_OBJECT
public:
    // Bounds on the session memory (SessionExemptions).
    static constexpr int kMaxPendingTokens = SessionExemptions::kMaxPendingTokens;
    static constexpr int kMaxExemptUrls = SessionExemptions::kMaxExemptUrls;

    enum class Action {
        Allow,       // let the request go
        Block,       // info.block(true)
        ShowWarning, // main frame: redirect to redirectUrl (a urlguard: page)
    };
    struct Decision
    {
        Action action = Action::Allow;
        QUrl redirectUrl;                                             // Action::ShowWarning
        urlguard::VerdictKind verdict = urlguard::VerdictKind::kSafe; // kSafe also when not checked
        bool checked = false; // false: internal scheme or no lists loaded
        QString summary;      // one line for the status bar (main frames)
    };

    explicit Protection(QObject *parent = nullptr);
    ~Protection() override;

    // How often the data directory's installed generation is looked at (Client::Stats, no I/O), so the panel
    // and the status bar follow a generation that urlguardd or another process installed.
    static constexpr int kClientPollIntervalMs = 1000;

    // Opens the lists of `source` and makes them current. On failure the previous lists stay in use and the
    // error (naming the file) is returned in `error`. Kind::None drops all lists (browsing is unprotected).
    // Kind::DataDirectory creates a missing directory (a first sync fills it) but refuses a directory of bare
    // snapshot files (that is Kind::SnapshotDirectory). Not while a sync runs (returns false).
    bool setSource(const ListSource &source, QString *error);
    // Picks up lists changed on disk: re-opens snapshot files, or swaps in the data directory's current
    // generation (Client::Refresh; the client also does that by itself). Same failure behaviour.
    bool reload(QString *error);

    const ListSource &source() const { return m_source; }
    // True when lookups can find anything: snapshot lists are open, or the data directory has installed
    // lists.
    bool isProtecting() const;
    // The open snapshot lists (empty for a data directory and when not protecting), as of the last open.
    const std::vector<urlguard::ListInfo> &lists() const { return m_lists; }
    // Every list with its version, entries, age, expiry and (data directory) sync schedule. For a data
    // directory this reads its small sync-state file (Client::Lists): for the panel, never for the request
    // path.
    std::vector<urlguard::ListStatus> listStatus() const;
    // Lists installed in the data directory as of the last poll, or the open snapshot lists.
    int listCount() const;
    const ProtectionCounters &counters() const { return m_counters; }

    // The client of a data directory source (null otherwise). Shared: a holder keeps it alive after a source
    // change. Never drop the last reference on the client's own worker thread (a CheckAsync callback).
    std::shared_ptr<urlguard::Client> client() const { return m_client; }
    // The client's statistics (all zero without a client).
    urlguard::ClientStats clientStats() const;

    // "Sync now" is possible: a data directory with a server and at least one trusted public key.
    bool canSync() const;
    // Why canSync() is false, for a tooltip ("" when it is true).
    QString syncUnavailableReason() const;
    bool isSyncing() const;
    // Runs Client::SyncNow on a worker thread (SyncRunner); returns false (and does nothing) when !canSync()
    // or a sync is running. Emits syncStarted() now and syncFinished() on this thread when done; lastSync()
    // then holds the outcome and the new generation is in use.
    bool startSync();
    const SyncRun &lastSync() const;

    // Schemes that never reach the network and are the browser's own (data:, blob:, urlguard:, about:,
    // chrome:, qrc:, file:, ...): never looked up, never blocked by the lists.
    static bool isInternalScheme(const QString &scheme);

    // The policy for one request. `mainFrame`: a top-level navigation. `firstPartyUrl`: the top-level page a
    // subresource belongs to (used to honour a "Proceed anyway" for that page's own listed resources).
    Decision decide(const QUrl &url, bool mainFrame, const QUrl &firstPartyUrl);

    // Looks `url` up locally without counting or deciding (for the urlguard: pages and tests): Checker::Check
    // or Client::CheckLocal (no cache, no network), so kSafe, kHit or kInvalid. No lists: kSafe.
    urlguard::Verdict lookup(const QUrl &url) const;

    // The warning page for `url` (urlguard:warning?url=...). The page re-checks the URL itself; the query
    // only says which URL to explain, never what was found.
    static QUrl warningUrl(const QUrl &url);

    // "Proceed anyway": the warning page gets a single-use random token for the URL and the matches it shows;
    // redeeming it exempts that URL (and its page's resources that match the same expressions) for the
    // session.
    QString issueProceedToken(const QUrl &url, const urlguard::Verdict &verdict);
    // Returns the URL the token was issued for and exempts it, or an empty QUrl for an unknown or used token.
    QUrl redeemProceedToken(const QString &token);

    // A verifier reported the local hit as a filter false positive: exempt `url` for the session (its
    // matches).
    void exemptVerifiedFalsePositive(const QUrl &url, const urlguard::Verdict &verdict);

    // True when `url` was exempted by a proceed or a verified false positive.
    bool isExempt(const QUrl &url) const;
    // True when the exemption of page `pageUrl` covers every match of `verdict` (what the user saw and
    // accepted; a new list or expression warns again).
    bool exemptionCovers(const QUrl &pageUrl, const urlguard::Verdict &verdict) const;

    // Key of a URL in the session memory: the URL without its fragment, fully encoded.
    static QString urlKey(const QUrl &url) { return SessionExemptions::urlKey(url); }

signals:
    // The open lists or the installed generation changed.
    void listsChanged();
    void syncStarted();
    void syncFinished();
    // A main-frame decision, for the status bar.
    void mainFrameChecked(const QUrl &url, const QString &summary);

private slots:
    // Follows the client's installed generation (Client::Stats().generation) and refreshes listCount().
    void pollClient();

private:
    QString summarize(const urlguard::Verdict &verdict) const;

    void finishSync();

    ListSource m_source;
    std::shared_ptr<const urlguard::Checker> m_checker;
    std::vector<urlguard::ListInfo> m_lists;
    std::shared_ptr<urlguard::Client> m_client;
    quint64 m_clientGeneration = 0;
    bool m_clientGenerationKnown = false;
    int m_clientListCount = 0; // installed lists of m_client's generation m_clientGeneration
    QTimer *m_pollTimer = nullptr;
    SyncRunner *m_sync = nullptr; // a child of this object
    ProtectionCounters m_counters;
    SessionExemptions m_exemptions;
};

#endif // URLGUARD_DEMO_PROTECTION_H_
